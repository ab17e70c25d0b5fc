/*
 * noise.h: exact samplers for differential privacy, on integers.
 *
 * No floating-point noise anywhere: textbook b*log(U) Laplace and
 * Box-Muller Gaussians leak their input through the low bits of the
 * result (Mironov 2012).  Every sampler here draws exactly from its
 * stated distribution using integer arithmetic on the uniform bits of a
 * struct rng: the algorithms of Canonne, Kamath and Steinke, "The Discrete
 * Gaussian for Differential Privacy" (NeurIPS 2020), Algorithms 1-3, with
 * GMP for rationals that do not fit in machine words.  Parameters are
 * exact rationals; a double is itself an exact dyadic rational, so a
 * double sigma gives the exact rational sigma^2 = sigma * sigma.
 *
 * Real-valued outputs (noise_add_*) are placed on a power-of-two grid
 * chosen from the noise scale only (noise_grid): each value is rounded to
 * the grid and integer noise in grid units is added.  The rounding widens
 * the sensitivity, and the ledger must charge noise_sens_l2/noise_sens_l1
 * instead of the raw sensitivity.
 *
 * Errors: functions return 0 (or a 0/1 sample) or a negative NOISE_E_*
 * code.  Arithmetic that could overflow fails closed with
 * NOISE_E_OVERFLOW instead of wrapping; such failures depend only on the
 * random draws, never on the data, but the caller must then release
 * nothing (on error an array being noised is left partly modified).
 * Running time depends on the random draws (rejection loops), not on the
 * data; timing side channels are otherwise not addressed.
 *
 * Ownership: the caller owns every array; a struct noise_dg belongs to its
 * creator (free with noise_dg_free, which accepts NULL).  It holds GMP
 * scratch space, so it is not thread-safe: give each thread its own, as
 * with struct rng.  GMP aborts on allocation failure; the numbers here
 * are a few hundred bits, so no input can cause that.
 * Nothing here prints, exits or reads the environment.
 */
#ifndef PRIVADA_NOISE_H
#define PRIVADA_NOISE_H

#include "pverr.h"

#include <stddef.h>
#include <stdint.h>

#include "rng.h"

enum noise_error {
	NOISE_OK = PV_OK,
	NOISE_E_RANGE = PV_E_RANGE,	/* a parameter or input value outside its domain */
	NOISE_E_OVERFLOW = PV_E_OVERFLOW,	/* a result would not fit: nothing may be released */
	NOISE_E_NOMEM = PV_E_NOMEM	/* out of memory */
};

/* Name of a NOISE_E_* code ("parameter out of range", ...). */
const char *noise_strerror(int code);

/* ---- exact samplers on rational parameters ---- */

/* Bernoulli(num/den), 0 <= num <= den, den > 0.
 * @return 0 or 1, or NOISE_E_RANGE. */
int noise_bernoulli(struct rng *r, uint64_t num, uint64_t den);

/* Bernoulli(exp(-num/den)), num >= 0, den > 0 (CKS Algorithm 1).
 * @return 0 or 1, or NOISE_E_RANGE. */
int noise_bernoulli_exp(struct rng *r, uint64_t num, uint64_t den);

/* Discrete Laplace with scale b = num/den > 0:
 *   P[Z = z] = tanh(1/(2b)) exp(-|z|/b),  z in Z
 * (CKS Algorithm 2 with s = den, t = num).  Var Z = 2e^(-1/b)/(1-e^(-1/b))^2.
 * @return 0 with *out set, NOISE_E_RANGE, or NOISE_E_OVERFLOW when a draw
 * exceeds 64 bits (only for scales near 2^64). */
int noise_dlaplace(struct rng *r, uint64_t num, uint64_t den, int64_t *out);

/* A discrete Gaussian sampler for a fixed sigma^2 (CKS Algorithm 3):
 *   P[Z = z] = exp(-z^2 / (2 sigma^2)) / sum_k exp(-k^2 / (2 sigma^2)).
 * Its proposal is a discrete Laplace of integer scale t (t = sigma when
 * sigma is an integer <= 2^31, which keeps everything in machine words;
 * else t = floor(sigma) + 1 with GMP), accepted with probability
 * exp(-(|y| - sigma^2/t)^2 / (2 sigma^2)); about 1.3 proposals per sample. */
struct noise_dg;

/* sigma^2 = num/den > 0.  @return 0 and *out set, NOISE_E_RANGE (zero,
 * or sigma >= 2^62), or NOISE_E_NOMEM. */
int noise_dg_new(struct noise_dg **out, uint64_t num, uint64_t den);
/* sigma^2 = sigma * sigma exactly (sigma finite, 0 < sigma < 2^62). */
int noise_dg_new_sigma(struct noise_dg **out, double sigma);
/* One sample.  @return 0 with *out set, or NOISE_E_OVERFLOW. */
int noise_dg_sample(struct noise_dg *g, struct rng *r, int64_t *out);
void noise_dg_free(struct noise_dg *g);

/* One-shot discrete Gaussian with sigma^2 = num/den. */
int noise_dgauss(struct rng *r, uint64_t num, uint64_t den, int64_t *out);

/* ---- noise on a grid, for real-valued releases ---- */

/* Grid resolution: the grid step is 2^-NOISE_GRID_BITS of the noise scale
 * (to within a factor 2), so the scale is about 2^24 grid units. */
#define NOISE_GRID_BITS 24

/* Flags of noise_add_*. */
#define NOISE_EXACT_SCALE 1u	/* see noise_add_dgauss */

/* The grid step for noise scale s (a Gaussian sigma or a Laplace b):
 *   gamma = 2^(floor(log2 s) - NOISE_GRID_BITS),
 * so s/gamma lies in [2^24, 2^25).  It depends on the scale only, never on
 * the data.  @return gamma, or 0 when s is not finite and positive or
 * gamma would underflow. */
double noise_grid(double s);

/* Add discrete Gaussian noise of scale sigma to x[0..n-1] in place:
 *   gamma = noise_grid(sigma),  r_i = round(x_i / gamma) (nearest, ties to
 *   even),  x_i <- (r_i + k_i) * gamma,  k_i ~ N_Z(0, S^2) independent,
 * where S = ceil(sigma / gamma) by default (an integer, so the fast
 * machine-word path of CKS Algorithm 3 applies), or S = sigma / gamma
 * exactly with NOISE_EXACT_SCALE (GMP, several times slower).
 * Rounding S up adds at most a factor 1 + 2^-24 of noise and never
 * weakens privacy: the Renyi divergence of order alpha between N_Z(v,
 * S^2) and N_Z(v', S^2) for integer v, v' is at most alpha (v - v')^2 /
 * (2 S^2) (CKS, section 2), independent coordinates adding up to
 * alpha ||v - v'||^2 / (2 S^2), which decreases in S.  So the release is
 * accounted as the Gaussian mechanism with noise sigma and L2 sensitivity
 * noise_sens_l2(delta2, gamma, n), exactly as with an exact S.
 * The final product is an exact double unless |r_i + k_i| > 2^53, where it
 * is rounded (post-processing).  Clip before calling: an overflow of
 * x_i / gamma is an error that depends on the data.
 * @return 0, NOISE_E_RANGE (bad sigma, a non-finite x_i), or
 * NOISE_E_OVERFLOW (|x_i / gamma| >= 2^62 or a result not finite). */
int noise_add_dgauss(struct rng *r, double *x, size_t n, double sigma,
    unsigned flags);

/* The same with discrete Laplace noise of scale b (P ∝ exp(-|k|/B) in grid
 * units, B = ceil(b / gamma), or b / gamma with NOISE_EXACT_SCALE): the
 * release is b-Laplace noise with L1 sensitivity noise_sens_l1(delta1,
 * gamma, n), i.e. epsilon = noise_sens_l1(...) / b (B >= b / gamma). */
int noise_add_dlaplace(struct rng *r, double *x, size_t n, double b,
    unsigned flags);

/* Sensitivity to charge after rounding d values to the grid gamma.
 * Rounding moves each coordinate by at most gamma/2, so the rounded
 * images of two neighbouring inputs differ by at most
 *   L2:  delta2 + gamma sqrt(d)        L1:  delta1 + d gamma.
 * The results are rounded upwards (never below the exact bound).
 * @return the bound, or NaN for negative or non-finite arguments. */
double noise_sens_l2(double delta2, double gamma, uint64_t d);
double noise_sens_l1(double delta1, double gamma, uint64_t d);

/* Total variation distance between n samples of the fast sampler used by
 * noise_add_dgauss (default flags) and n exact samples at its scale S.
 * The fast path IS exact (the speed comes from the integer scale, not
 * from an approximation), so this is 0; it exists so that the ledger has
 * one place to ask.  Should an approximate sampler ever be added, a TV
 * distance tau turns an (eps, delta) guarantee into (eps, delta + (1 +
 * e^eps) tau), not merely delta + tau.  @return 0, or NaN for a bad sigma. */
double noise_fast_tv_bound(double sigma, uint64_t n);

/* ---- exponential mechanism ---- */

/* Permute-and-flip (McKenna and Sheldon, NeurIPS 2020): visit the n
 * candidates in a uniformly random order and stop at candidate i with
 * probability exp(-eps (qmax - score[i]) / (2 sens)), computed exactly
 * from the dyadic rationals score[i], eps and sens (CKS Algorithm 1 on
 * GMP rationals).  eps-DP for scores of sensitivity sens; never worse
 * than the exponential mechanism in expected score.
 * @return 0 with *out the chosen index, NOISE_E_RANGE (n == 0, a
 * non-finite score, eps or sens not finite and positive) or
 * NOISE_E_NOMEM. */
int noise_pf_select(struct rng *r, const double *score, size_t n,
    double eps, double sens, size_t *out);

#endif
