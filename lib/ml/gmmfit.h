/*
 * gmmfit.h: the maximum-likelihood fit of a Gaussian mixture to rows held
 * in memory (no privacy): EM (gmm_em) from k-means++ starts or from given
 * means, restarted, the start of the best log-likelihood kept, and the
 * criteria of the model kept (log-likelihood, BIC, AIC as scikit-learn).
 *
 * Use: fill a struct gmmfit_params, gmmfit_check_params, gmmfit_run.
 *
 * Ownership: the rows are the caller's and are modified (centred on
 * their mean, see gmmfit_run); the mixture is the caller's (allocated
 * with the shape of the params).  Nothing here prints, exits or reads the
 * environment.  Errors are PV_E_* values (pverr.h).
 */
#ifndef PRIVADA_GMMFIT_H
#define PRIVADA_GMMFIT_H

#include "pverr.h"

#include <stddef.h>

#include "gmm.h"
#include "rng.h"

struct gmmfit_params {
	size_t k;		/* components, 1..GMM_MAX_K */
	int cov;		/* enum gmm_cov */
	double reg;		/* >= 0, added to the covariances' diagonal */
	double tol;		/* >= 0: stop when the mean log-likelihood
				 * changes by less */
	size_t max_iter;	/* iterations at most (exactly, if fixed) */
	int fixed;		/* no convergence test */
	size_t restarts;	/* starts, the best kept (0 means 1); one
				 * with given means */
	int threads;		/* of a pass, >= 1 (GMM_SLABS at most used) */
	/* Called after each E-step with the start (from 1), the iteration
	 * (from 1) and the mean log-likelihood; NULL for none. */
	void (*on_iter)(void *ctx, size_t start, size_t iter, double ll);
	void *ctx;
};

struct gmmfit_result {
	double ll;		/* mean log-likelihood of the model */
	double bic, aic;	/* -2 log L + p log n, -2 log L + 2 p */
	size_t iters;		/* of the start kept */
	size_t all_iters;	/* of all starts */
	int converged;		/* the start kept converged */
	size_t bad;		/* the component of a PV_E_NOTPD */
	int final;		/* the error came from the last pass */
};

/* NULL if p is usable, else a message naming the bad field. */
const char *gmmfit_check_params(const struct gmmfit_params *p);

/*
 * Fit g (allocated: p->k components, d dimensions, p->cov) to the n >=
 * p->k rows X (n x d).  EM runs on the rows centred on their mean (the
 * fit does not change, and x U^-1 - mu U^-1 stays free of cancellation),
 * and the means move back at the end; X is left centred.  Each start is
 * init (k x d means, or NULL: k-means++ from rng), then gmm_init_centers.
 * @return 0; PV_E_RANGE (bad params or shapes); PV_E_NOMEM; PV_E_NOTPD
 * with res->bad the component; PV_E_NUMERIC (a non-finite
 * log-likelihood).  res->final says whether the error came from the
 * last pass over the model kept (res->converged is then set), not EM.
 */
int gmmfit_run(const struct gmmfit_params *p, struct rng *rng, double *X,
    size_t n, size_t d, const double *init, struct gmm *g,
    struct gmmfit_result *res);

#endif
