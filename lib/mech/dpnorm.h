/*
 * dpnorm.h: DP input normalisation (dpsgd-train --normalize dp:SIGMA[:C]),
 * the DP statistics of Tramer and Boneh (ICLR 2021, "Differentially
 * private learning needs better features"): per-feature means and
 * variances from one Gaussian release, then training on standardised
 * rows, and the affine map folded into the first layer of the model.
 *
 * The release.  Each row x (the zero row if not finite) is clipped to
 * x min(1, C / ||x||); the sums s = sum_i x_i (d values) and the sums of
 * squares q = sum_i x_i^2 coordinate-wise (d values) are noised with the
 * exact discrete Gaussian as the two parts of one Gaussian mechanism
 * (jgauss.h).  Adding or removing one row moves s by ||x|| <= C and q by
 * sqrt(sum_j x_j^4) <= ||x||^2 <= C^2 (replace-one: 2 C and 2 C^2); the
 * floating-point margin of fpsum.h is charged (rows_bound terms of 2 d +
 * 9 roundings each).  The parts share mu^2 equally: sigma_s = sqrt(2) z C
 * and sigma_q = sqrt(2) z C^2 for the joint multiplier z = SIGMA, so the
 * ledger records one Gaussian mechanism of multiplier z under add/remove,
 * its own entry, composed with the training's by the accountant.  The
 * count is not released: the divisor is N, the size declared public
 * (--public-records).
 *
 * Post-processing: mean m_j = s_j / N, variance v_j = q_j / N - m_j^2
 * floored at DPNORM_VAR_FLOOR C^2 (noise can make it negative), sd_j =
 * sqrt(v_j).  Training reads (x - m) / sd; the first layer (W, b) of the
 * model is then replaced by W'_jk = W_jk / sd_j, b'_k = b_k - sum_j m_j
 * W'_jk, so the output model applies to raw rows.
 *
 * Ownership: the caller's arrays only.  Nothing here prints, exits or
 * reads the environment.  Functions return 0 or a PV_E_* code.
 */
#ifndef PRIVADA_DPNORM_H
#define PRIVADA_DPNORM_H

#include <stddef.h>
#include <stdint.h>

#include "jgauss.h"
#include "ledger.h"
#include "model.h"
#include "rng.h"

#define DPNORM_VAR_FLOOR 1e-6	/* times C^2 */

struct dpnorm {
	double sigma;		/* the joint multiplier z (> 0) */
	double clip;		/* C */
	double npub;		/* N, the declared size */
	double fp_margin;
	double mu;		/* of the plan, grids included: <= 1 / z */
	struct jgauss_part part[2];	/* 0: sums, 1: sums of squares */
};

/* Plan the noise for d features.  unsafe_sq_c (tests only: the mutation
 * control of the audit) calibrates the sums of squares to C instead of
 * C^2.  @return 0 or PV_E_OPTION (msg). */
int dpnorm_plan(struct dpnorm *p, double sigma, double clip, double npub,
    size_t d, int unsafe_sq_c, char *msg, size_t len);

/* The noisy release: stats[0..d-1] the sums, stats[d..2d-1] the sums of
 * squares of the clipped rows X (n x d), noised.  @return 0,
 * PV_E_NOMEM or PV_E_NOISE (msg; nothing may be released). */
int dpnorm_release(const struct dpnorm *p, struct rng *r, const float *X,
    size_t n, size_t d, double *stats, char *msg, size_t len);

/* Means and standard deviations (d each) from the released stats. */
void dpnorm_finish(const struct dpnorm *p, const double *stats, size_t d,
    double *mean, double *sd);

/* x <- (x - mean) / sd, row by row (n x d). */
void dpnorm_apply(float *X, size_t n, size_t d, const double *mean,
    const double *sd);

/* Fold the map into the first layer of m (its input width d). */
void dpnorm_fold(struct nn_model *m, const double *mean, const double *sd);

/* The release's RDP curve and parameters into e (dpcli_entry started
 * it).  @return 0 or PV_E_NOMEM. */
int dpnorm_ledger_entry(const struct dpnorm *p, size_t d,
    struct ledger_entry *e);

#endif
