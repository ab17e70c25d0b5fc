/*
 * gmmfit.c: maximum-likelihood EM with restarts (gmmfit.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gmmfit.h"

const char *
gmmfit_check_params(const struct gmmfit_params *p)
{
	if (p->k < 1 || p->k > GMM_MAX_K)
		return "k: components must be 1 .. GMM_MAX_K";
	if (gmm_cov_name(p->cov) == NULL)
		return "cov: not a covariance type";
	if (!(p->reg >= 0) || !isfinite(p->reg))
		return "reg: must be non-negative and finite";
	if (!(p->tol >= 0) || !isfinite(p->tol))
		return "tol: must be non-negative and finite";
	if (p->max_iter < 1)
		return "max_iter: at least one iteration";
	if (p->threads < 1)
		return "threads: at least 1";
	return NULL;
}

struct ictx {
	const struct gmmfit_params *p;
	size_t start;
};

static void
on_iter(void *arg, size_t it, double ll)
{
	const struct ictx *v = arg;

	v->p->on_iter(v->p->ctx, v->start, it, ll);
}

int
gmmfit_run(const struct gmmfit_params *p, struct rng *rng, double *X,
    size_t n, size_t d, const double *init, struct gmm *g,
    struct gmmfit_result *res)
{
	size_t k = p->k, starts = p->restarts ? p->restarts : 1;
	double *ctr = NULL, *cen = NULL, best = -INFINITY, ll;
	struct gmm cur = { 0 };
	struct gmm_work *w = NULL;
	struct gmm_em_opts eo = { .tol = p->tol, .max_iter = p->max_iter,
	    .fixed = p->fixed, .reg = p->reg };
	struct gmm_em_result er;
	struct ictx v = { p, 0 };
	int rc;

	memset(res, 0, sizeof *res);
	if (gmmfit_check_params(p) != NULL || n < k || d < 1 ||
	    g->k != k || g->d != d || g->type != p->cov)
		return PV_E_RANGE;
	if ((rc = gmm_alloc(&cur, k, d, p->cov)) != 0 ||
	    (rc = gmm_work_new(&w, k, d, p->cov, p->threads)) != 0)
		goto out;
	rc = PV_E_NOMEM;
	if ((ctr = calloc(d, sizeof *ctr)) == NULL ||
	    (cen = calloc(k * d, sizeof *cen)) == NULL)
		goto out;
	/* EM on rows centred on their mean, moved back at the end. */
	for (size_t i = 0; i < n; i++)
		for (size_t a = 0; a < d; a++)
			ctr[a] += X[i * d + a];
	for (size_t a = 0; a < d; a++)
		ctr[a] /= (double)n;
	for (size_t i = 0; i < n; i++)
		for (size_t a = 0; a < d; a++)
			X[i * d + a] -= ctr[a];
	if (p->on_iter) {
		eo.on_iter = on_iter;
		eo.arg = &v;
	}
	for (size_t s = 0; s < starts; s++) {
		v.start = s + 1;
		if (init) {
			for (size_t j = 0; j < k; j++)
				for (size_t a = 0; a < d; a++)
					cen[j * d + a] = init[j * d + a] -
					    ctr[a];
		} else {
			gmm_kmeanspp(rng, X, n, d, k, cen);
		}
		if ((rc = gmm_init_centers(&cur, X, n, cen, p->reg)) != 0)
			goto out;
		rc = gmm_em(&cur, w, X, n, &eo, &er);
		res->all_iters += er.iters;
		if (rc != 0) {
			res->bad = er.bad;
			goto out;
		}
		if (s == 0 || er.ll > best) {
			best = er.ll;
			gmm_copy(g, &cur);
			res->iters = er.iters;
			res->converged = er.converged;
		}
	}
	/* The log-likelihood of the model kept (after its M-step). */
	res->final = 1;
	if ((rc = gmm_pass(w, g, X, n, NULL, &ll, &res->bad)) != 0)
		goto out;
	res->ll = ll / (double)n;
	/* As scikit-learn: -2 log L + p log n, and -2 log L + 2 p. */
	res->bic = -2 * ll + gmm_nparams(g) * log((double)n);
	res->aic = -2 * ll + 2 * gmm_nparams(g);
	for (size_t j = 0; j < k; j++)
		for (size_t a = 0; a < d; a++)
			g->mu[j * d + a] += ctr[a];
out:
	free(ctr);
	free(cen);
	gmm_free(&cur);
	gmm_work_free(w);
	return rc;
}
