/*
 * ncm.h: DP nearest class mean (dpsgd-train --mode ncm): one Gaussian
 * release of the per-class sums of rows clipped to L2 norm C,
 * post-processed into a linear model.
 *
 * The release.  Each row x (the zero row if not finite) is clipped to
 * x min(1, C / ||x||); for each class k in 0..K-1 the sum S_k of its
 * clipped rows (K d values) is computed and noised with the exact
 * discrete Gaussian (covnoise.h, its grid charged as jgauss.h does).
 * Rows labelled outside 0..K-1 are dropped uncounted.  No count is
 * released, nor used: the rule below needs none.  L2 sensitivity of the
 * exact sums:
 *   add/remove:  C (one row, in one class);
 *   replace-one: 2 C (same class; sqrt(2) C when the class changes).
 * The ledger uses add/remove, under which the number of rows and the
 * class counts are private, with the floating-point margin of fpsum.h
 * charged (rows_bound terms of 2 d + 8 roundings each: the norm, the
 * scale and the product): one Gaussian mechanism of noise multiplier
 * sigma / sensitivity.
 *
 * The model (post-processing): the direction of each noisy class sum,
 * u_k = S~_k / ||S~_k|| (0 if S~_k = 0), and the scores s_k(x) = u_k . x:
 * the nearest class mean on the sphere (for rows of norm 1 it is the
 * nearest u_k in L2, and the mean's direction is that of the sum, so the
 * counts are not needed).  Measured on Office-Caltech SURF it beats the
 * Euclidean rule 2 m_k . x - ||m_k||^2 with noisy counts at every
 * epsilon: the counts cost budget, and noise inflates ||m_k||^2.  A
 * linear model W[j][k] = u_k[j], b = 0 (model.h: x W + b).
 *
 * Ownership: the caller's arrays only.  Nothing here prints, exits or
 * reads the environment.  Functions return 0 or a PV_E_* code.
 */
#ifndef PRIVADA_NCM_H
#define PRIVADA_NCM_H

#include <stddef.h>
#include <stdint.h>

#include "jgauss.h"
#include "ledger.h"
#include "rng.h"

#define NCM_MECHANISM "gaussian"

struct ncm_params {
	double clip;		/* row bound C; INFINITY: no clipping */
	int noise;		/* 0: no noise (--sigma 0, --no-dp) */
	int calibrate;		/* solve z from epsilon and delta */
	double epsilon, delta;	/* with calibrate */
	double sigma;		/* the joint noise multiplier z otherwise */
	double rows_bound;	/* public bound on the rows (fp margin) */
	uint64_t repeats;	/* releases composed (--audit-repeat), 0: 1 */
	int unsafe_half;	/* test only: the sensitivity charged halved */
};

struct ncm_plan {
	double z;		/* the joint noise multiplier */
	double mu;		/* of the plan, grid included: <= 1 / z */
	double fp_margin;	/* relative margin of the sums */
	struct jgauss_part part;	/* the sums' sigma, grid, sens */
};

/* Plan the noise for K classes of d features.  @return 0, PV_E_OPTION
 * (no multiplier meets epsilon, or a noise out of range: msg says), or
 * PV_E_NUMERIC. */
int ncm_plan(struct ncm_plan *pl, const struct ncm_params *p, size_t K,
    size_t d, char *msg, size_t len);

/* The exact class sums of the n rows X (n x d) with labels y into
 * stats[0 .. K d - 1] (K x d), rows clipped to clip (INFINITY: not
 * clipped). */
void ncm_stats(const float *X, const int32_t *y, size_t n, size_t d,
    size_t K, double clip, double *stats);

/* Noise stats in place as planned.  @return 0, PV_E_NOMEM or
 * PV_E_NOISE (nothing may be released; msg says). */
int ncm_noise(const struct ncm_plan *pl, struct rng *r, double *stats,
    size_t K, size_t d, char *msg, size_t len);

/* The model's parameters from (noised) sums: W (d x K, row-major) and
 * b (K). */
void ncm_model(const double *stats, size_t K, size_t d, float *W, float *b);

/* The release's RDP curve (repeats compositions) and parameters into e
 * (dpcli_entry started it).  @return 0 or PV_E_NOMEM. */
int ncm_ledger_entry(const struct ncm_plan *pl, const struct ncm_params *p,
    size_t K, struct ledger_entry *e);

#endif
