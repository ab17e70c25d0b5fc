/*
 * dpem.h: DP-EM, differentially private Gaussian mixtures (Park et al.
 * 2017): each of T iterations releases the counts, sums and second
 * moments of the E-step's responsibilities of rows clipped to norm B,
 * with discrete Gaussian noise whose scales share one budget (jgauss.h),
 * and an M-step that only post-processes the released values
 * (gmm_mstep_dp).  With classes (labels) each has its own mixture; a row
 * enters its class's statistics only, so one release covers all classes.
 * The start is data-independent (points in the ball, or public means),
 * or itself a release of the same sensitivities (the DP start).
 *
 * Use (libsvm's shape): fill a struct dpem_params, dpem_check_params,
 * dpem_plan for the noise, dpem_new, then dpem_run once per release
 * (read the mixtures with dpem_model), and dpem_ledger for the entry.
 *
 * Ownership: struct dpem owns its mixtures, statistics and scratch
 * (dpem_free accepts NULL); the rows, the start means and the rng are the
 * caller's and only read (the rng drawn from).  Nothing here prints,
 * exits or reads the environment.  Errors are PV_E_* values (pverr.h).
 */
#ifndef PRIVADA_DPEM_H
#define PRIVADA_DPEM_H

#include "pverr.h"

#include <stddef.h>
#include <stdint.h>

#include "gmm.h"
#include "jgauss.h"
#include "ledger.h"
#include "rng.h"

/* The three parts of each iteration's release. */
enum dpem_part { DPEM_CNT = 0, DPEM_SUM = 1, DPEM_MOM = 2, DPEM_NPARTS = 3 };

/* "counts", "sums", "second moments" (NULL for another value). */
const char *dpem_part_name(int part);

struct dpem_params {
	size_t k;		/* components, 1..GMM_MAX_K */
	int cov;		/* enum gmm_cov */
	double clip;		/* B > 0: every row has L2 norm <= B (the
				 * caller clips them: gmm_clip_rows) */
	double reg;		/* > 0, added to the covariances' diagonal */
	size_t iters;		/* T >= 1 iterations */
	int init_dp;		/* start from a release (one more release) */
	int calibrate;		/* 1: the multiplier from epsilon, delta;
				 * 0: sigma is the joint multiplier */
	double epsilon;		/* > 0 with calibrate */
	double delta;		/* in (0, 1) with calibrate */
	double sigma;		/* > 0 without calibrate */
	double split[DPEM_NPARTS];	/* budget weights > 0 of counts,
					 * sums, second moments */
	uint64_t repeats;	/* 0: one release; n: an audit of n
				 * independent releases in one entry */
	int unsafe_moments_b;	/* TESTS ONLY: calibrate the second moments
				 * as if their sensitivity were B, not B^2:
				 * NOT private */
	int stats;		/* keep the released statistics (dpem_trace,
				 * dpem_init_stats) */
	/* Called after each iteration of dpem_run with the iterations done
	 * and T; NULL for none. */
	void (*progress)(void *ctx, double done, double total);
	void *ctx;
};

/* NULL if p is usable, else a message naming the bad field. */
const char *dpem_check_params(const struct dpem_params *p);

/* The releases of one run: T, plus one for the DP start. */
size_t dpem_releases(const struct dpem_params *p);

/* The noise plan: one Gaussian mechanism per release. */
struct dpem_plan {
	double z;			/* joint multiplier asked for */
	double mu;			/* per release */
	struct jgauss_part p[DPEM_NPARTS];
	double delta2_true[DPEM_NPARTS];	/* the sensitivities that hold
						 * (float margin included) */
	double fp_margin;		/* relative float margin (fpsum.h) */
	size_t bad;			/* the part of a PV_E_RANGE */
};

/*
 * Plan the noise of mixtures of p's shape over nclass classes in d
 * dimensions.  @return 0; PV_E_OVERFLOW when there is no float margin for
 * k + d + 8 roundings; PV_E_NOROOT when epsilon, delta cannot be met over
 * the releases (pl->z is then the largest multiplier tried); PV_E_RANGE
 * with pl->bad the part whose noise or grid is out of range; PV_E_NUMERIC
 * when the RDP curve cannot be converted.
 */
int dpem_plan(struct dpem_plan *pl, const struct dpem_params *p,
    size_t nclass, size_t d);

struct dpem;

/* State for runs of p (copied) with plan pl (copied) over nclass
 * classes in d dimensions, passes on up to threads threads.
 * @return 0, PV_E_RANGE (shape) or PV_E_NOMEM. */
int dpem_new(struct dpem **out, const struct dpem_params *p,
    const struct dpem_plan *pl, size_t nclass, size_t d, int threads);
void dpem_free(struct dpem *e);

/*
 * One DP-EM release: the start (the DP start, else weights 1/k, means
 * init (k x d, public) or uniform in the ball of radius B, covariances
 * B^2/d I), then T iterations.  X holds the rows grouped by class: class
 * c is rows start[c] .. start[c+1]-1 (start has nclass + 1 entries), each
 * of norm at most B; at most FPSUM_MAX_ROWS rows in all.  Draws from rng
 * in a fixed order (start, then per iteration the counts, sums, moments).
 * @return 0; PV_E_LIMIT (too many rows); PV_E_NOMEM; PV_E_NOISE (a
 * sampler failed: nothing may be released); PV_E_NUMERIC (an eigensolver
 * failed); PV_E_NOTPD (a released covariance did not factor: a bug).
 */
int dpem_run(struct dpem *e, struct rng *rng, const double *X,
    const size_t *start, const double *init);

/* The detail of dpem_run's last error ("noise of the sums: ...",
 * "DP-EM: class 2: ..."), or "no error". */
const char *dpem_errmsg(const struct dpem *e);

/* After dpem_run: the mixture of class c. */
const struct gmm *dpem_model(const struct dpem *e, size_t c);
/* The class priors from the last released counts, floored at 1 as in
 * the M-step (nclass values summing to 1). */
void dpem_priors(const struct dpem *e, double *priors);
/* With stats: class c's released statistics, T x k x (1 + d +
 * gmm_mom_len) (count, sums, second moments of each component per
 * iteration); NULL without. */
const double *dpem_trace(const struct dpem *e, size_t c);
/* With stats and init_dp: class c's released start statistics into v:
 * the count, the d sums and the d sums of squares (1 + 2d values). */
void dpem_init_stats(const struct dpem *e, size_t c, double *v);

/*
 * Fill the entry's cost and parameters (e as started by the caller with
 * a fresh id, dataset and mechanism "gaussian"): the RDP curve of
 * releases x repeats Gaussian mechanisms of plan pl at the default orders,
 * and the noise, sensitivity, grid and weight of each part, clip, the
 * multiplier, the float margin, the rows bound, steps, init releases,
 * components (audit_releases, unsafe_test_moments_b when set).
 * @return 0 or PV_E_NOMEM.
 */
int dpem_ledger(struct ledger_entry *le, const struct dpem_params *p,
    const struct dpem_plan *pl);

#endif
