/*
 * gmm.h: Gaussian mixture models: the passes of EM over rows held in
 * memory (E-step and sufficient statistics in one pass), the M-step of
 * maximum likelihood and that of DP-EM (post-processing of noisy
 * statistics), k-means++ seeding, and sampling.
 *
 * A mixture of k components in d dimensions has weights w (k), means mu
 * (k x d, row-major) and covariances of one of three types:
 *   GMM_FULL       k x d x d symmetric matrices,
 *   GMM_DIAG       k x d variances (diagonal matrices),
 *   GMM_SPHERICAL  k variances (multiples of the identity).
 * The log-density of a row x is log sum_k w_k N(x; mu_k, Sigma_k),
 * computed with log-sum-exp.  The Mahalanobis terms of full covariances
 * come from the Cholesky factor Sigma = U^T U: ||x U^-1 - mu U^-1||^2,
 * with x U^-1 for all components from GEMMs on chunks of rows (cut into
 * column pieces that skip most of the zero triangle of U^-1), so the
 * per-iteration cost is BLAS 3.
 *
 * The statistics of a pass, for responsibilities r_ik and centres c_k
 * (zero, or given), are
 *   n_k = sum_i r_ik,  s_k = sum_i r_ik (x_i - c_k),
 *   S_k = sum_i r_ik (x_i - c_k)(x_i - c_k)^T
 * (full: the d x d matrix; diag: its diagonal; spherical: its trace).
 * Maximum likelihood centres them on the current means, which keeps the
 * covariance free of cancellation; DP-EM uses the origin (their
 * sensitivity is that of rows in a ball around it).
 *
 * Determinism: a pass splits the rows into GMM_SLABS fixed ranges, each
 * summed in row order, and adds the slabs in order, whatever the number
 * of threads; BLAS runs one thread inside a pass and inside gmm_mstep_dp
 * (they set OpenBLAS to one thread and restore its count after).  So the
 * results do not depend on the thread count.
 *
 * Ownership: struct gmm and struct gmm_stats own their arrays (free
 * functions accept zeroed structs); the rows are the caller's and are
 * only read.  struct gmm_work is opaque scratch for one mixture shape;
 * one pass at a time per work.  Nothing here prints, exits or reads the
 * environment.  Errors are negative GMM_E_* values (pinned).
 */
#ifndef PRIVADA_GMM_H
#define PRIVADA_GMM_H

#include "pverr.h"

#include <stddef.h>
#include <stdint.h>

#include "rng.h"

#define GMM_MAX_K 4096		/* components */
#define GMM_MAX_D 8192		/* dimensions */
#define GMM_SLABS 4		/* fixed row ranges of a pass (threads) */

enum gmm_cov { GMM_FULL = 0, GMM_DIAG = 1, GMM_SPHERICAL = 2 };

enum gmm_error {
	GMM_OK = PV_OK,
	GMM_E_RANGE = PV_E_RANGE,	/* an argument out of its documented range */
	GMM_E_NOMEM = PV_E_NOMEM,	/* out of memory */
	GMM_E_NOTPD = PV_E_NOTPD,	/* a covariance is not positive definite */
	GMM_E_NUMERIC = PV_E_NUMERIC	/* a log-likelihood is not finite */
};

/* "argument out of range", ... */
const char *gmm_strerror(int code);
/* "full", "diag", "spherical" (NULL for another value). */
const char *gmm_cov_name(int cov);
/* Doubles of one component's covariance: d*d, d or 1. */
size_t gmm_cov_len(int cov, size_t d);
/* Values of one component's second moments as released by DP-EM: the
 * upper triangle d(d+1)/2 (row by row), the diagonal d, or the trace 1. */
size_t gmm_mom_len(int cov, size_t d);

struct gmm {
	size_t k, d;
	int type;			/* enum gmm_cov */
	double *w;			/* k */
	double *mu;			/* k x d */
	double *cov;			/* k x gmm_cov_len */
};

/* Zeroed arrays for k components (1..GMM_MAX_K) in d (1..GMM_MAX_D)
 * dimensions.  @return 0, GMM_E_RANGE or GMM_E_NOMEM (g zeroed). */
int gmm_alloc(struct gmm *g, size_t k, size_t d, int cov);
void gmm_free(struct gmm *g);
/* dst (allocated with the same shape) <- src. */
void gmm_copy(struct gmm *dst, const struct gmm *src);
/* Free parameters, as for BIC: (k - 1) + k d + k times the covariance's
 * d(d+1)/2, d or 1. */
double gmm_nparams(const struct gmm *g);

struct gmm_stats {
	size_t k, d;
	int type;			/* enum gmm_cov */
	double *n;			/* k */
	double *s;			/* k x d */
	double *S;			/* k x gmm_cov_len (full: upper
					 * triangle filled by a pass) */
	double *c;			/* k x d centres, or NULL: origin */
};

/* Zeroed statistics; with centred, room for centres (c), else c NULL.
 * @return 0, GMM_E_RANGE or GMM_E_NOMEM. */
int gmm_stats_alloc(struct gmm_stats *st, size_t k, size_t d, int cov,
    int centred);
void gmm_stats_free(struct gmm_stats *st);

struct gmm_work;

/* Scratch for passes over rows of mixtures of this shape, with up to
 * threads (1..GMM_SLABS) threads.  @return 0, GMM_E_RANGE, GMM_E_NOMEM. */
int gmm_work_new(struct gmm_work **out, size_t k, size_t d, int cov,
    int threads);
void gmm_work_free(struct gmm_work *w);

/*
 * One pass over the n rows X (n x d): the E-step for g (its covariances
 * factored first) and, when st is not NULL, the statistics of the
 * responsibilities into st (zeroed first; centres st->c as set by the
 * caller).  *ll receives the sum of the rows' log-densities.
 * @return 0; GMM_E_NOTPD with *bad the first component whose covariance
 * is not positive definite; GMM_E_NUMERIC when the log-likelihood is not
 * finite; GMM_E_RANGE (shapes differ) or GMM_E_NOMEM (threads).
 */
int gmm_pass(struct gmm_work *w, const struct gmm *g, const double *X,
    size_t n, struct gmm_stats *st, double *ll, size_t *bad);

/* Log-densities (ll, m values) and responsibilities (resp, m x k) of m
 * rows, after a gmm_pass or gmm_prepare on g.  For tests and tools that
 * label rows. */
int gmm_prepare(struct gmm_work *w, const struct gmm *g, size_t *bad);
void gmm_estep_rows(struct gmm_work *w, const struct gmm *g,
    const double *X, size_t m, double *resp, double *ll);

/*
 * The M-step of maximum likelihood, as scikit-learn's GaussianMixture:
 * n'_k = n_k + 10 DBL_EPSILON, w_k = n'_k / sum n', mu_k = c_k + s_k /
 * n'_k, Sigma_k = S_k / n'_k - (mu_k - c_k)(mu_k - c_k)^T plus reg on
 * the diagonal (diag: each variance; spherical: the mean variance).
 */
void gmm_mstep(struct gmm *g, const struct gmm_stats *st, double reg);

/*
 * The M-step of DP-EM on noisy statistics with centres at the origin of
 * rows clipped to norm bound: only post-processing of released values.
 * n'_k = max(n_k, 1); w_k = n'_k / sum n'; mu_k = s_k / n'_k pulled back
 * into the ball of radius bound; Sigma_k = S_k / n'_k - mu_k mu_k^T (full:
 * the upper triangle mirrored) with its eigenvalues (diag, spherical: its
 * values) clamped to [0, bound^2], since rows in the ball have no larger
 * variance in any direction, plus reg on the diagonal.
 * @return 0, or GMM_E_NOMEM / GMM_E_NUMERIC (an eigensolver failure).
 */
int gmm_mstep_dp(struct gmm *g, const struct gmm_stats *st, double reg,
    double bound);

/* The statistics as the three released parts: cnt (k), sum (k x d), mom
 * (k x gmm_mom_len), and back (unpack mirrors a full upper triangle). */
void gmm_stats_pack(const struct gmm_stats *st, double *cnt, double *sum,
    double *mom);
void gmm_stats_unpack(struct gmm_stats *st, const double *cnt,
    const double *sum, const double *mom);

/* Scale each of the n rows of X (n x d) whose L2 norm exceeds bound down
 * to norm at most bound (a non-finite row is left as it is).  The norm
 * is computed with a scaling that cannot overflow and is within a
 * relative (d + 8) 2^-53 of the true one, so rows are scaled to bound
 * times 1 less twice that: no row leaves the ball, rounding included.
 * @return the number of rows scaled. */
size_t gmm_clip_rows(double *X, size_t n, size_t d, double bound);

/* ---- initialisation ---- */

/* k-means++ (Arthur and Vassilvitskii 2007): the first centre a uniform
 * row, each next one a row drawn with probability proportional to its
 * squared distance to the nearest centre chosen (uniform when all are 0).
 * centers: k x d.  n >= 1. */
void gmm_kmeanspp(struct rng *r, const double *X, size_t n, size_t d,
    size_t k, double *centers);

/* Parameters from centres: each row assigned to its nearest centre (the
 * first on ties), then gmm_mstep on that hard assignment centred on the
 * centres, and the means set to the centres (scikit-learn's means_init
 * with weights and covariances from the assignment).
 * @return 0 or GMM_E_NOMEM. */
int gmm_init_centers(struct gmm *g, const double *X, size_t n,
    const double *centers, double reg);

/* Standard normal values (Box-Muller on 53-bit uniforms of r): floating
 * point, for sampling and random starts, never for privacy noise. */
void gmm_normals(struct rng *r, double *z, size_t n);
/* A point uniform in the ball of radius rad around the origin. */
void gmm_ball(struct rng *r, size_t d, double rad, double *x);

/* ---- maximum likelihood EM ---- */

struct gmm_em_opts {
	double tol;		/* stop when the mean log-likelihood changes by
				 * less (scikit-learn's tol) */
	size_t max_iter;	/* iterations at most (exactly, if fixed) */
	int fixed;		/* no convergence test */
	double reg;		/* added to the covariances' diagonal */
	/* Called after each E-step with the iteration (from 1) and the mean
	 * log-likelihood of the parameters it used; NULL for none. */
	void (*on_iter)(void *arg, size_t iter, double ll);
	void *arg;
};

struct gmm_em_result {
	size_t iters;		/* iterations run */
	int converged;
	double ll;		/* mean log-likelihood of the last E-step */
	size_t bad;		/* the component of a GMM_E_NOTPD */
};

/* EM from g's parameters over the n rows X until convergence: each
 * iteration an E-step (gmm_pass, statistics centred on the current means)
 * and gmm_mstep.  @return 0 or an error of gmm_pass (*res set so far). */
int gmm_em(struct gmm *g, struct gmm_work *w, const double *X, size_t n,
    const struct gmm_em_opts *o, struct gmm_em_result *res);

/* ---- sampling ---- */

/* Factor g for sampling (the Cholesky factors in w).  @return 0 or
 * GMM_E_NOTPD with *bad set. */
int gmm_sample_prepare(struct gmm_work *w, const struct gmm *g, size_t *bad);
/* One row x (d values) from component j: mu_j + z U_j with z standard
 * normal (gmm_normals), U_j the Cholesky factor, so Cov = U^T U. */
void gmm_sample_row(struct gmm_work *w, const struct gmm *g, struct rng *r,
    size_t j, double *x);
/* A component index drawn with probabilities w (k values summing to
 * about 1; the last index takes any remainder), from a 53-bit uniform. */
size_t gmm_draw_index(struct rng *r, const double *w, size_t k);

#endif
