/* ncm.c: dpsgd-train --mode ncm, the DP nearest class mean (dpsgd-train.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dpcli.h"
#include "dpsgd.h"
#include "dpsgdopt.h"
#include "dpsgd-train.h"
#include "fpsum.h"
#include "ledger.h"
#include "model.h"
#include "ncm.h"
#include "nn.h"
#include "opts.h"
#include "tstream.h"
#include "xycli.h"

/* The tool's own options that --mode ncm takes (with the shared ones). */
int
ncm_option(int ch)
{
	static const int ok[] = { OPT_ASSUME_RAW, OPT_AUDIT, OPT_CLASSES,
		OPT_CLIP, OPT_MODE, OPT_NODP, OPT_PUBLIC_RECORDS, OPT_SIGMA,
		OPT_UNSAFE_HALF };

	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		if (ok[i] == ch)
			return 1;
	return 0;
}

/* --mode ncm's options: a budget (-e and -d, or --sigma) or --no-dp. */
static void
ncm_check(const struct opts *o, struct ncm_params *np)
{
	if (o->sgd_opt != NULL)
		cli_usage_error("--%s does not apply with --mode ncm",
		    o->sgd_opt);
	if (o->g.nodp) {
		if (o->c.has_epsilon || o->c.has_delta || o->p.has_sigma ||
		    o->g.clip || o->p.public_records[0] || o->p.audit ||
		    o->unsafe_half)
			cli_usage_error("--no-dp goes with none of --epsilon, "
			    "--delta, --sigma, --clip, --public-records, "
			    "--audit-repeat");
	} else if (o->p.has_sigma) {
		if (o->c.has_epsilon)
			cli_usage_error("--sigma and --epsilon do not go "
			    "together");
	} else if (!o->c.has_epsilon || !o->c.has_delta) {
		cli_usage_error("--mode ncm needs --epsilon and --delta, "
		    "--sigma or --no-dp");
	}
	if (o->unsafe_half)
		opts_unsafe_gate("--unsafe-test-half-sensitivity");
	*np = (struct ncm_params){ .clip = o->g.nodp ? INFINITY : o->p.clip,
	    .noise = !o->g.nodp && !(o->p.has_sigma && o->p.sigma == 0),
	    .calibrate = !o->p.has_sigma, .epsilon = o->c.epsilon,
	    .delta = o->c.delta, .sigma = o->p.sigma,
	    .rows_bound = o->p.public_records[0] ? (double)
	    o->p.public_records[0] : (double)FPSUM_MAX_ROWS,
	    .repeats = o->p.audit, .unsafe_half = o->unsafe_half };
}

/* --mode ncm: the nearest class mean from one Gaussian release of the
 * class sums (lib/mech/ncm.h). */
int
run_ncm(struct opts *o, int argc, char **argv)
{
	struct ncm_params np;
	struct ncm_plan pl;
	struct xyset tr;
	struct nn_model m;
	struct dpsgd_setup su;
	struct ledger_entry e;
	struct ts_meta meta = { 0 }, prov = { 0 };
	struct ts_writer *w;
	struct rng *rng;
	FILE *in, *ofp;
	const char *label, *dataset;
	char err[4096];
	size_t K, nparam, len;
	uint64_t runs;
	double *stats, *all;
	int rc, dp;

	ncm_check(o, &np);
	if (argc > 1)
		cli_usage_error("at most one input file");
	dp = !o->g.nodp;
	in = cli_open_in(argc ? argv[0] : NULL, &label);
	ofp = cli_out_open(o->c.output, o->c.force);
	rng = dp ? dpcli_rng(o->c.seed, "ncm") :
	    dpcli_rng_quiet(o->c.seed, "ncm");
	if (dp && !np.noise)
		cli_warn("--sigma 0: no noise: the model is NOT private");
	if (o->unsafe_half)
		cli_warn("--unsafe-test-half-sensitivity: the noise is for "
		    "half the sensitivity: the model is NOT private");
	xy_read(&tr, in, label, 1);
	cli_close_in(in);
	su = (struct dpsgd_setup){ .dp = dp, .classes = o->classes,
	    .lset = &tr.lset, .y = tr.y, .n = tr.n, .d = tr.d,
	    .mode = "ncm", .label = label };
	if ((rc = dpsgd_setup_model(&m, NULL, &o->p, &su, &K, &nparam, err,
	    sizeof err)) != 0)
		setup_die(rc, err);
	if (!dp)
		xy_check_labels(&tr, K);
	warn_dropped(o, &tr, dp);
	xy_zero_rows(&tr, dp);
	dataset = dpcli_dataset(&tr.meta, o->c.dataset, label);
	if (np.noise && (double)tr.n > np.rows_bound)
		cli_die(EX_DATAERR, "%s: more rows than %s %.0f", label,
		    o->p.public_records[0] ? "--public-records" :
		    "the bound of the floating-point error,", np.rows_bound);
	if ((rc = ncm_plan(&pl, &np, K, tr.d, err, sizeof err)) != 0) {
		if (rc == PV_E_OPTION)
			cli_usage_error("%s", err);
		cli_die(EX_SOFTWARE, "%s", err);
	}
	if (np.noise && o->c.verbose)
		fprintf(stderr, "%s: ncm: %zu classes, clip %g, noise "
		    "multiplier %.6g, noise sd of the class sums %.6g\n",
		    cli_prog(), K, np.clip, 1 / pl.mu, pl.part.sigma);

	/* One release, or --audit-repeat of them from the same rows. */
	len = K * tr.d;
	runs = o->p.audit ? o->p.audit : 1;
	stats = cli_reallocarray(NULL, len, sizeof *stats);
	all = cli_reallocarray(NULL, runs, len * sizeof *all);
	ncm_stats(tr.X, tr.y, tr.n, tr.d, K, np.clip, stats);
	for (uint64_t r = 0; r < runs; r++) {
		struct rng *ri = o->p.audit ? dpcli_rng_audit(o->c.seed, "ncm",
		    r, rng) : rng;

		memcpy(all + r * len, stats, len * sizeof *stats);
		if (np.noise && (rc = ncm_noise(&pl, ri, all + r * len, K,
		    tr.d, err, sizeof err)) != 0)
			cli_die(rc == PV_E_NOMEM ? EX_OSERR : EX_SOFTWARE, "%s",
			    rc == PV_E_NOMEM ? "out of memory" : err);
		if (ri != rng)
			rng_free(ri);
	}
	ncm_model(all, K, tr.d, m.param, m.param + tr.d * K);

	w = cli_writer(ofp, o->c.level);
	if (o->p.audit)
		write_f64(w, "ncm/sums", all, runs, len);
	else if ((rc = model_write(w, &m)) != 0)
		cli_wdie(w, rc);
	cli_inherit(&meta, &tr.meta, label);
	cli_prov_input(&prov, 0, label, tr.digest, &tr.meta);
	if (np.noise) {
		dpcli_entry(&e, rng, dataset, NCM_MECHANISM);
		if (ncm_ledger_entry(&pl, &np, K, &e) != 0)
			cli_die(EX_OSERR, "out of memory");
		dpcli_release(&meta, &e);
		ts_meta_free(&e.params);
	}
	if (!np.noise || o->unsafe_half)
		dpcli_not_private(&meta, dataset, label);
	dpcli_audit_mark(&meta, o->p.audit);
	if (model_put_meta(&m, &meta) != 0 ||
	    ts_meta_set(&meta, "train.mode", !dp ? "no_dp" : np.noise ?
	    "dp_ncm" : "clip_only") != 0 ||
	    ts_meta_set(&meta, "train.adapt", "ncm") != 0 ||
	    (dp && ts_meta_setf(&meta, "train.clip", "%.17g", np.clip) != 0))
		cli_die(EX_OSERR, "out of memory");
	cli_out_finish(w, &meta, &prov);
	cli_out_commit();
	free(stats);
	free(all);
	model_free(&m);
	xy_free(&tr);
	ts_meta_free(&meta);
	ts_meta_free(&prov);
	rng_free(rng);
	return 0;
}
