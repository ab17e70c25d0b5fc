/* fit.c: gmm-fit's EM fits and DP-EM releases, written (gmm-fit.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dpcli.h"
#include "dpem.h"
#include "gmm.h"
#include "gmm-fit.h"
#include "gmmfit.h"
#include "gmmio.h"
#include "ledger.h"
#include "tensor.h"
#include "tstream.h"

static void
meta_setf(struct ts_meta *m, const char *key, const char *fmt, double v)
{
	if (ts_meta_setf(m, key, fmt, v) != 0)
		cli_die(EX_OSERR, "out of memory");
}

/* Write a tensor (gmmio_put_tensor), exit on failure. */
static void
put_tensor(struct out *ot, const char *base, uint64_t rep, int ndim,
    const uint64_t *dims, const double *data, const struct ts_meta *meta)
{
	int rc = gmmio_put_tensor(ot->w, base, ot->audit != 0, rep, ndim,
	    dims, data, meta);

	if (rc == PV_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	if (rc != 0)
		cli_wdie(ot->w, rc);
}

/* Write the mixture of class label c (gmmio_put_model). */
static void
put_model(struct out *ot, int c, uint64_t rep, const struct gmm *g,
    const struct ts_meta *wmeta)
{
	int rc = gmmio_put_model(ot->w, c, ot->audit != 0, rep, g, wmeta);

	if (rc == PV_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	if (rc != 0)
		cli_wdie(ot->w, rc);
}

/* Write release rep of class c: the mixture, and with --stats the
 * released statistics (and those of the DP start). */
static void
put_release(struct out *ot, const struct dpem *e, size_t c, uint64_t rep,
    const struct opts *o, size_t d)
{
	char base[64];
	size_t ml = gmm_mom_len(o->cov, d);

	put_model(ot, (int)c, rep, dpem_model(e, c), NULL);
	if (o->stats) {
		uint64_t dims[3] = { o->iters, o->k, 1 + d + ml };

		snprintf(base, sizeof base, "gmm/%zu/stats", c);
		put_tensor(ot, base, rep, 3, dims, dpem_trace(e, c), NULL);
	}
	if (o->stats && o->init_dp) {
		uint64_t dims[1] = { 1 + 2 * d };
		double *v = cli_reallocarray(NULL, dims[0], sizeof *v);

		dpem_init_stats(e, c, v);
		snprintf(base, sizeof base, "gmm/%zu/init_stats", c);
		put_tensor(ot, base, rep, 1, dims, v, NULL);
		free(v);
	}
}

/* ---- maximum likelihood (--sigma 0) ---- */

struct vctx {
	size_t cls, starts, max_iter;
	int verbose;
};

/* Each iteration: a line with -v, else the progress display (the
 * log-likelihood in it: this EM is not private). */
static void
on_iter(void *arg, size_t start, size_t it, double ll)
{
	const struct vctx *v = arg;
	char what[96];

	if (!v->verbose) {
		if (v->starts > 1)
			snprintf(what, sizeof what, "class %zu: start %zu/%zu: "
			    "EM iterations", v->cls, start, v->starts);
		else
			snprintf(what, sizeof what, "class %zu: EM iterations",
			    v->cls);
		cli_progress_stat(what, it, v->max_iter, "log-likelihood",
		    ll);
	} else if (v->starts > 1)
		fprintf(stderr, "%s: class %zu: start %zu: iteration %zu: "
		    "log-likelihood %.17g\n", cli_prog(), v->cls, start, it,
		    ll);
	else
		fprintf(stderr, "%s: class %zu: iteration %zu: log-likelihood "
		    "%.17g\n", cli_prog(), v->cls, it, ll);
}

/* Fit class c's mixture by EM with restarts (gmmfit); g receives the
 * best. */
static void
fit_ml(const struct opts *o, struct rng *rng, const struct data *dt,
    size_t c, const double *init, struct gmm *g, struct fit *f,
    int threads)
{
	size_t n = dt->start[c + 1] - dt->start[c];
	struct gmmfit_params p = { .k = o->k, .cov = o->cov, .reg = o->reg,
	    .tol = o->tol, .max_iter = o->has_iters ? o->iters : o->max_iter,
	    .fixed = o->has_iters, .restarts = o->restarts,
	    .threads = threads };
	struct vctx v = { c, o->restarts ? o->restarts : 1, p.max_iter,
	    o->c.verbose };
	const char *msg;
	double t0;
	int rc;

	if (n < o->k)
		cli_die(EX_DATAERR, "%s: class %zu has %zu rows, fewer than the "
		    "%zu components", dt->label, c, n, o->k);
	if ((msg = gmmfit_check_params(&p)) != NULL)
		cli_die(EX_SOFTWARE, "EM: %s", msg);
	p.on_iter = on_iter;
	p.ctx = &v;
	t0 = cli_now();
	rc = gmmfit_run(&p, rng, dt->X + dt->start[c] * dt->d, n, dt->d,
	    init, g, &f->r);
	cli_progress_done();
	f->secs = cli_now() - t0;
	if ((rc == 0 || f->r.final) && !f->r.converged && !o->has_iters)
		cli_warn("class %zu: EM did not converge in %zu iterations "
		    "(raise --max-iter or --tol)", c, o->max_iter);
	if (rc == PV_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	if (rc == PV_E_NOTPD)
		cli_die(EX_DATAERR, "%s: class %zu: component %zu: the "
		    "covariance is not positive definite (try a larger --reg)",
		    dt->label, c, f->r.bad);
	if (rc != 0)
		cli_die(EX_DATAERR, "%s: class %zu: %s%s", dt->label, c,
		    f->r.final ? "" : "EM: ", gmm_strerror(rc));
}

/* ---- DP-EM (lib/mech/dpem) ---- */

/* Each DP-EM iteration: the progress display, no statistic (the
 * released ones are noisy but the display is no release). */
static void
on_dp_iter(void *ctx, double done, double total)
{
	(void)ctx;
	cli_progress("DP-EM iterations", (uint64_t)done, (uint64_t)total);
}

static void
dp_setup(struct dpem_params *p, struct dpem_plan *pl, const struct opts *o,
    size_t nclass, size_t d)
{
	const char *msg;

	memset(p, 0, sizeof *p);
	p->k = o->k;
	p->cov = o->cov;
	p->clip = o->clip;
	p->reg = o->reg;
	p->iters = o->iters;
	p->init_dp = o->init_dp;
	p->calibrate = !o->has_sigma;
	p->epsilon = o->c.epsilon;
	p->delta = o->c.delta;
	p->sigma = o->sigma;
	for (int i = 0; i < DPEM_NPARTS; i++)
		p->split[i] = o->has_split ? o->split[i] : 1;
	p->repeats = o->audit;
	p->unsafe_moments_b = o->unsafe;
	p->stats = o->stats;
	/* --audit-repeat: the releases are the progress (below). */
	if (!o->audit)
		p->progress = on_dp_iter;
	if ((msg = dpem_check_params(p)) != NULL)
		cli_die(EX_SOFTWARE, "DP-EM: %s", msg);
	switch (dpem_plan(pl, p, nclass, d)) {
	case 0:
		break;
	case PV_E_OVERFLOW:
		cli_die(EX_SOFTWARE, "no floating-point margin for %zu "
		    "components in %zu dimensions", o->k, d);
	case PV_E_NOROOT:
		cli_usage_error("--epsilon %g --delta %g over %zu releases "
		    "needs a noise multiplier above %g", o->c.epsilon,
		    o->c.delta, dpem_releases(p), pl->z);
	case PV_E_RANGE:
		cli_usage_error("the noise of the %s is out of range (check "
		    "--clip and --sigma)", dpem_part_name((int)pl->bad));
	default:
		cli_die(EX_SOFTWARE, "cannot convert the RDP curve");
	}
}

void
record_release(struct ts_meta *m, struct rng *rng, const char *dataset,
    const struct dpem_params *p, const struct dpem_plan *pl)
{
	struct ledger_entry e;

	dpcli_entry(&e, rng, dataset, "gaussian");
	if (dpem_ledger(&e, p, pl) != 0)
		cli_die(EX_OSERR, "out of memory");
	dpcli_release(m, &e);
	ts_meta_free(&e.params);
}

/* ---- per class ---- */

/* Fit every class's mixture (no privacy) and write it with its criteria;
 * the priors are the classes' shares of the rows. */
void
fit_classes(struct out *ot, const struct opts *o, struct rng *rng,
    struct data *dt, const double *init, int threads, struct fit *f,
    double *priors)
{
	struct gmm g;

	for (size_t c = 0; c < dt->nclass; c++) {
		struct ts_meta wm = { 0 };

		if (gmm_alloc(&g, o->k, dt->d, o->cov) != 0)
			cli_die(EX_OSERR, "out of memory");
		fit_ml(o, rng, dt, c, init, &g, &f[c], threads);
		priors[c] = (double)(dt->start[c + 1] - dt->start[c]) /
		    (double)dt->n;
		meta_setf(&wm, "gmm.log_likelihood", "%.17g", f[c].r.ll);
		meta_setf(&wm, "gmm.bic", "%.17g", f[c].r.bic);
		meta_setf(&wm, "gmm.aic", "%.17g", f[c].r.aic);
		meta_setf(&wm, "gmm.iterations", "%.0f", (double)f[c].r.iters);
		cli_meta_set(&wm, "gmm.converged", f[c].r.converged ?
		    "true" : "false");
		meta_setf(&wm, "gmm.rows", "%.0f",
		    (double)(dt->start[c + 1] - dt->start[c]));
		put_model(ot, (int)c, 0, &g, &wm);
		ts_meta_free(&wm);
		if (o->c.verbose)
			fprintf(stderr, "%s: class %zu: %zu rows, %zu "
			    "iterations (%s), log-likelihood %.17g, BIC "
			    "%.17g, AIC %.17g, %.4f s per iteration\n",
			    cli_prog(), c, dt->start[c + 1] -
			    dt->start[c], f[c].r.iters,
			    f[c].r.converged ? "converged" :
			    o->has_iters ? "fixed" : "not converged",
			    f[c].r.ll, f[c].r.bic, f[c].r.aic,
			    f[c].secs / (double)f[c].r.all_iters);
		gmm_free(&g);
	}
}

/* DP-EM: plan the noise, then each release (--audit-repeat: several,
 * each from its own seeded stream with --seed) written as it is made;
 * the priors from the last release's counts. */
void
release_classes(struct out *ot, const struct opts *o, struct rng *rng,
    const struct data *dt, const double *init, int threads,
    struct dpem_params *dp, struct dpem_plan *pl, double *priors)
{
	struct dpem *e;
	double secs = 0;

	dp_setup(dp, pl, o, dt->nclass, dt->d);
	if (dpem_new(&e, dp, pl, dt->nclass, dt->d, threads) != 0)
		cli_die(EX_OSERR, "out of memory");
	if (o->c.verbose)
		fprintf(stderr, "%s: DP-EM: %zu iterations, noise "
		    "multiplier %.6g per iteration; sd %.6g (counts), "
		    "%.6g (sums), %.6g (second moments)\n", cli_prog(),
		    o->iters, 1 / pl->mu, pl->p[DPEM_CNT].sigma,
		    pl->p[DPEM_SUM].sigma, pl->p[DPEM_MOM].sigma);
	for (uint64_t rep = 0; rep < (o->audit ? o->audit : 1); rep++) {
		struct rng *rr = o->audit ? dpcli_rng_audit(o->c.seed,
		    WORK_ITEM, rep, rng) : rng;
		double t0 = cli_now();
		int rc;

		rc = dpem_run(e, rr, dt->X, dt->start, init);
		secs += cli_now() - t0;
		if (!o->audit)
			cli_progress_done();
		if (rc == PV_E_NOMEM)
			cli_die(EX_OSERR, "out of memory");
		if (rc == PV_E_NOTPD)
			/* Floored at reg, a released covariance factors
			 * unless the noise (scale clip^2) swamps the floor. */
			cli_usage_error("%s: the noise at --clip %g swamps "
			    "--reg %g; lower --clip or raise --reg (nothing "
			    "was released)", dpem_errmsg(e), o->clip, o->reg);
		if (rc != 0)
			cli_die(EX_SOFTWARE, "%s", dpem_errmsg(e));
		if (rr != rng)
			rng_free(rr);
		dpem_priors(e, priors);
		for (size_t c = 0; c < dt->nclass; c++)
			put_release(ot, e, c, rep, o, dt->d);
		if (o->audit)
			cli_progress("releases", rep + 1, o->audit);
	}
	cli_progress_done();
	if (o->c.verbose)
		fprintf(stderr, "%s: DP-EM: %.4f s per iteration\n",
		    cli_prog(), secs / (double)(o->iters *
		    (o->audit ? o->audit : 1)));
	dpem_free(e);
}
