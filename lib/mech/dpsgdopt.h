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
#include "labels.h"
#include "model.h"

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

/* dpsgd-train's model: the options that shape it and the inputs it must
 * fit, for dpsgd_setup_model.  The labels name the inputs in messages. */
struct dpsgd_setup {
	int init;			/* m was read from --init */
	int dp;				/* the labelled stream is protected */
	size_t classes;			/* --classes; 0: not given */
	const size_t *hidden;		/* --hidden widths */
	size_t nhidden;
	size_t freeze;			/* --freeze: the leading frozen layers */
	size_t feature_layer;		/* gmm-uda: 0 = the last hidden */
	const size_t *dh;		/* --domain-hidden widths */
	size_t ndh;
	const struct label_set *lset;	/* the training rows' label set */
	const int32_t *y;		/* their labels (-1: none) */
	size_t n, d;			/* their count and width */
	size_t src_d;			/* gmm-uda: the source samples' width */
	const char *mode;		/* --mode as named */
	const char *label, *ilabel, *slabel; /* input, --init, --source-features */
	const char *iarch;		/* --init's model.arch */
	const struct nn_spec *arch;	/* --arch layers (the classes' dense
					 * layer is added), or NULL */
	size_t narch;			/* fewer than NN_MAX_LAYERS */
	size_t shape[3];		/* --arch: the rows as H x W x C */
	int act;			/* --arch: the hidden activation */
	float ts[3];			/* NN_ACT_TSIG: its s, T, o */
};

/*
 * Set up the model m dpsgd-train trains.  With s->init, m (read from
 * --init) is checked against --hidden, --classes, --mode and the input's
 * width; otherwise K classes are decided (under privacy from --classes
 * or a label set declared public, never learnt from the rows; else the
 * largest label + 1) and m is built with the hidden widths.  Then the
 * first s->freeze layers are frozen; gmm-uda freezes the classifier
 * after --feature-layer and appends its domain classifier to nets, dann
 * appends its own (dpsgd_add_domain).  Sets *K and *np (the parameters,
 * with the domain classifier's).
 * @return 0, or with a message in err (errlen bytes): PV_E_OPTION (a
 * usage error), PV_E_FORMAT (the data do not fit), PV_E_NOMEM, or
 * PV_E_RANGE (widths the model cannot take).
 */
int dpsgd_setup_model(struct nn_model *m, struct nn_dann *nets,
    const struct dpsgd_params *p, const struct dpsgd_setup *s, size_t *K,
    size_t *np, char *err, size_t errlen);

#endif
