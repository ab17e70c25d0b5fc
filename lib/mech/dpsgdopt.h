/*
 * dpsgdopt.h: which combinations of dpsgd-train's options the trainer
 * accepts (dpsgd.h), with the privacy reasons in its messages, which
 * name the tool's options.  The tool fills struct dpsgd_params as it
 * parses, then:
 *
 *   if (dpsgd_check_options(&p, &given, err, sizeof err)) usage error;
 *   ... (its own checks) ...
 *   if (dpsgd_check_inputs(&p, &given, err, sizeof err)) usage error;
 *   if (dpsgd_check_params(&p)) usage error;
 *
 * Nothing here prints, exits or reads the environment.
 */
#ifndef PRIVADA_DPSGDOPT_H
#define PRIVADA_DPSGDOPT_H

#include <stddef.h>

#include "dpsgd.h"

#define DPSGD_OPT_ERRLEN 512		/* holds any message here */

/* The options a command line gave that p does not record, for
 * dpsgd_check_options. */
struct dpsgd_given {
	int nodp;			/* train without privacy (--no-dp) */
	int clip;			/* a clip bound (--clip) */
	int grl;			/* a DANN GRL coefficient (--grl-max) */
	int beta;			/* an assoc weight (--beta1..3) */
	int gmm;			/* a gmm-uda setting (--feature-layer,
					 * --kd-temp, --beta-adv, -kd, -im) */
	int domain_hidden;		/* --domain-hidden */
	int target;			/* target rows (--target) */
	int source_features;		/* --source-features (gmm-uda) */
	int val, val_public;		/* --val, --val-public */
	size_t hidden;			/* hidden widths (--hidden) */
};

/*
 * The combinations of dpsgd-train's options, which its messages name:
 * sets p->mode from p (adapt, protect, the has_* flags, sigma, exact,
 * unsafe, audit, batch, init) and g.  Call dpsgd_check_inputs, then
 * dpsgd_check_params, once the rest of p is filled.  @return NULL, or a
 * message in err (errlen bytes; DPSGD_OPT_ERRLEN hold any).
 */
const char *dpsgd_check_options(struct dpsgd_params *p,
    const struct dpsgd_given *g, char *err, size_t errlen);

/*
 * The inputs' declarations and what they need: --val declared public,
 * --patience with --val, no --audit-repeat with --val; each stream
 * DP-SGD protects (p->mode, adapt, protect) has its declared size in
 * p->public_records, and no other; --nesterov with a momentum; a feature
 * extractor (--hidden or --init) for dann and assoc, no --hidden with
 * gmm-uda.  @return NULL or a message in err, as dpsgd_check_options.
 */
const char *dpsgd_check_inputs(const struct dpsgd_params *p,
    const struct dpsgd_given *g, char *err, size_t errlen);

#endif
