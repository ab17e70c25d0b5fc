/*
 * noise_fast.h: a fast discrete Gaussian sampler with a proven bound on
 * its distance from the exact law, for high-dimensional noise (DP-SGD).
 *
 * The exact sampler of noise.h (CKS 2020, Algorithm 3) draws about 5 M
 * samples/s; a DP-SGD step adds hundreds of thousands.  This sampler is
 * an approximation, never plain floating point: integer table lookups
 * combined by integer convolutions, whose total variation distance tau
 * from N_Z(0, s^2) is bounded by the theorem below.  Each release made
 * with it must charge its tau to delta (noise_fast_delta_charge).
 *
 * ---- Construction ----
 * Write rho_c(x) = exp(-x^2 / (2 c^2)) and N_Z(0, c^2) for the law with
 * P[x] = rho_c(x) / rho_c(Z) on the integers.  For a target scale s:
 *  - L = 1 (s <= NOISE_FAST_WMAX): X = Z with Z from a table of N_Z(0, s^2).
 *  - L >= 2 (the smallest L that keeps every table width <= WMAX):
 *      X = Z_0 + K (Z_1 + K (Z_2 + ... + K Z_{L-1})),
 *    K >= 2 the largest integer with 3 K^L <= s, Z_0 .. Z_{L-2} ~ N_Z(0,
 *    (3K)^2) from one shared table and Z_{L-1} ~ N_Z(0, b^2) from a second
 *    table, where the exact rational
 *      b^2 = (s^2 - 9 K^2 (1 + K^2 + ... + K^(2(L-2)))) / K^(2(L-1))
 *    makes the variances add up to s^2 exactly (b >= 3, in fact b is
 *    about 3K).
 * The convolution idea is that of Micciancio and Walter, "Gaussian
 * sampling over the integers: efficient, generic, constant-time" (CRYPTO
 * 2017: base samples combined as x1 + k x2 under a smoothing condition)
 * and of Peikert's convolution theorem ("An efficient and parallel
 * Gaussian sampler for lattices", CRYPTO 2010); the statement and proof
 * used here are the following self-contained ones.
 *
 * Lemma (Poisson summation).  For r > 0 and real c,
 *   sum_{y in Z} rho_r(y - c) = r sqrt(2 pi) (1 + theta),
 *   |theta| <= eps(r) := 2 sum_{m >= 1} exp(-2 pi^2 r^2 m^2)
 *                     <= 2 e^(-2 pi^2 r^2) / (1 - e^(-2 pi^2 r^2)),
 * because the Fourier transform of rho_r is r sqrt(2 pi) exp(-2 pi^2 r^2
 * xi^2), so the sum equals r sqrt(2 pi) sum_m exp(-2 pi^2 r^2 m^2)
 * cos(2 pi m c).  (This is the smoothing-parameter fact of Micciancio and
 * Regev, FOCS 2004: rho(Z - c) is within a factor (1 - eps)/(1 + eps) of
 * rho(Z) once the width exceeds the smoothing parameter eta_eps(Z).)
 *
 * Theorem (one convolution step).  Let a, b > 0, K a positive integer,
 * Y ~ N_Z(0, a^2) and Z ~ N_Z(0, b^2) independent, X = Z + K Y,
 *   s^2 = b^2 + K^2 a^2,   1 / r^2 = K^2 / b^2 + 1 / a^2,
 * and eps = eps(r).  Then for every integer x
 *   (1 - eps)/(1 + eps) <= P[X = x] / N_Z(0, s^2)(x) <= (1 + eps)/(1 - eps)
 * and so TV(X, N_Z(0, s^2)) <= eps / (1 - eps).
 * Proof.  Completing the square,
 *   y^2/(2a^2) + (x - Ky)^2/(2b^2) = x^2/(2s^2) + (y - c)^2/(2r^2)
 * with c = K a^2 x / s^2, so
 *   P[X = x] = sum_y rho_a(y) rho_b(x - Ky) / (rho_a(Z) rho_b(Z))
 *            = rho_s(x) r sqrt(2 pi) (1 + theta(x)) / (rho_a(Z) rho_b(Z))
 * with |theta(x)| <= eps by the lemma.  Normalising, P[X = x] =
 * N(x) (1 + theta(x)) / (1 + tbar) where tbar = E_N[theta], |tbar| <= eps,
 * which gives the ratio bounds, and TV = (1/2) sum_x N(x) |theta(x) -
 * tbar| / (1 + tbar) <= eps / (1 - eps).  QED.
 *
 * At level i of the chain (Z_i of width 3K plus K times the rest, of
 * ideal width a >= b >= 3), 1/r^2 = 1/9 + 1/a^2 <= 2/9, so r^2 >= 4.5 and
 * eps <= 2 e^(-88.8) < 2^-127.  Replacing an ideal input by an approximate
 * one costs at most that input's TV (TV of independent pairs is at most
 * the sum, and a function never increases it), so by induction
 *   TV(X, N_Z(0, s^2)) <= sum over the L table draws of tau_table
 *                         + sum over the L-1 levels of eps_i / (1 - eps_i).
 *
 * Base tables (one per width c, c^2 an exact rational): the folded law
 * P[|Z| = x] (x = 0..T, T = ceil(14 c) + 1) with a uniform sign, drawn by
 * Walker's alias method from integer weights W_x summing to exactly
 * 2^127 (a uniform slot, then a uniform threshold compared bit by bit,
 * lazily: every bit used is a fresh stream bit).  rho_c(x) is computed
 * in 192-bit fixed point (exp(-1/(2c^2)) by its Taylor series, then
 * rho(x+1) = rho(x) q_x, q_{x+1} = q_x q_0^2), each value within 3 x^2
 * units of 2^-192, and W_x = floor(2^127 h_x / H) (h_x the computed
 * folded weights 1, 2 rho(x), H their sum >= 1) with the remainder put
 * on W_0.  The alias table is built in exact integer arithmetic, so a
 * draw returns x with probability exactly W_x / 2^127.  Its distance
 * from N_Z(0, c^2) is at most the sum of the quantisation (the W_x are
 * off by less than 2T units in all), the rounding of rho (TV at most
 * sum_x |h_x - exact| / H) and the truncation:
 *   tau_table(c) = tail + T 2^-127 + 6 T^2 (T + 1) 2^-192,
 *   tail = P[|N_Z(0, c^2)| > T] <= 2 (c^2/T) rho_c(T) / rho_c(Z)
 *        <= (c/T) exp(-T^2 / (2 c^2)) < 2^-145
 * (the Mills-ratio bound on the sum, and rho_c(Z) >= 2c for c >= 1).
 * tau(s) is computed in double from these formulas, with the widths
 * nudged to make each term larger and the result scaled by 1 + 2^-20
 * (covering every rounding and libm's exp), so it never falls below the
 * bound.  For the scales of
 * noise_fast_add (2^24..2^25 grid units) it is about 2^-112 per sample,
 * with the AES term of "Random bits" below included.
 *
 * ---- Charging it ----
 * If a mechanism M is (eps, delta)-DP and M' satisfies TV(M'(D), M(D)) <=
 * tau for every dataset D, then for every event E
 *   P[M'(D) in E] <= P[M(D) in E] + tau <= e^eps P[M(D') in E] + delta + tau
 *                 <= e^eps P[M'(D') in E] + delta + (1 + e^eps) tau,
 * so M' is (eps, delta + (1 + e^eps) tau)-DP.  For a whole run (every
 * DP-SGD step, adaptively), couple the noise samples one at a time: the
 * joint output is within tau_total = (number of samples) x tau of the
 * exact run.  Account the exact mechanism (RDP curve of the Gaussian with
 * noise_sens_l2 sensitivity), convert to (eps, delta), then add
 * noise_fast_delta_charge(eps, tau_total) to delta.  This is an (eps,
 * delta) statement: the RDP curve itself is not corrected.
 *
 * ---- Random bits ----
 * The proofs above assume uniform bits.  Each call (noise_fast_sample,
 * _grid_noise, _add, _add_f32) takes the 3 L bytes of each sample's table
 * draws from AES-256-CTR (aesctr.h) under a key of 32 bytes drawn from
 * its struct rng, a new key every AESCTR_REKEY = 4096 blocks (64 KiB);
 * the rare extra bits of a tied draw come from the struct rng itself.
 * AES-CTR is used because it is three times faster than ChaCha20 here
 * (aesctr.h); on a CPU without AES instructions (or a PRIVADA_NO_SIMD
 * build) the bulk bits come from the struct rng's ChaCha20 instead, as
 * before, since portable AES is slower than ChaCha20.  Seeded outputs
 * are therefore the same on every CPU with AES instructions (every
 * x86-64 CPU since about 2011) and different on the others; tau below is
 * the same on both (it includes the AES term either way), so a ledger
 * never depends on the CPU.  Its keystream is computationally indistinguishable from
 * uniform bits under the standard assumption that AES-256 is a
 * pseudo-random permutation (as rng.h assumes ChaCha20 is a pseudo-random
 * function), except for one statistical difference: the blocks under one
 * key never repeat.  By the PRP/PRF switching lemma, q blocks of a truly
 * random permutation are within TV q (q - 1) / 2^129 of q uniform blocks;
 * with q <= 4096 per key that is below 4096 / 2^129 = 2^-117 per block,
 * and a sample uses at most one block (3 L <= 15 bytes; a call's byte
 * requests are rounded up to whole blocks, BLK samples at a time, which
 * never makes more blocks than samples).  So tau(s) above includes
 * 4096 / 2^129 per sample: the whole stream of a call is within n tau of
 * exact independent samples.  The keys are independent of the data, so
 * the coupling argument of "Charging it" is unchanged.
 *
 * ---- Properties ----
 * Levels: L = 1 up to s = 2400, 2 up to about 2^20.5, 3 up to about
 * 2^30.5 (so 3 for the 2^24..2^25 of noise_fast_add), 4 and 5 beyond.
 * Random bits: 24 per table draw, L draws per sample; a draw whose
 * leading threshold bits tie (probability at most 2^-7, 2^-9 at the
 * DP-SGD scales) takes 16 more bits, and 2^-16 of those 128 more.
 * Speed on the development machine (AMD EPYC Zen 5, CPU time, one
 * thread, noise_fast_grid_noise at sigma 0.37, s = 2^24.6, L = 3; bench
 * line "fast grid noise" of tests/helpers/noise-bench.c): 2.8 ns a
 * sample (0.6 ns of it AES-CTR) with the VBMI byte permutes and, for L =
 * 3 when every partial sum fits, Horner's rule in 32-bit integers,
 * against 4.8 ns with ChaCha20 bits and a call per 16 samples before;
 * the three 16-lane table gathers take about half of the rest.  The vector code
 * draws 16 samples at a time from the same stream bytes as the scalar
 * code and gives the same values (a draw that ties is redone by the
 * scalar code, in sample order after the block's other draws, which
 * reads the struct rng in the same order as the scalar code), so the
 * law and the bound do not depend on the CPU, nor do seeded outputs
 * beyond the AES-or-not choice above.
 * Running time depends on the random draws and on s, never on the data;
 * memory access patterns depend on the draws (cache timing is not
 * addressed).  Values fit easily in int64_t.
 * Ownership: a struct noise_fast belongs to its creator (noise_fast_free
 * accepts NULL).  It is read-only after creation, so threads may share one
 * as long as each uses its own struct rng.  Setup computes the tables with
 * GMP (2 to 20 ms; about 2 ms at the DP-SGD scales): create a handle
 * once and reuse it for many calls.  Errors are the NOISE_E_* codes of
 * noise.h.  Nothing here prints, exits or reads the environment.
 */
#ifndef PRIVADA_NOISE_FAST_H
#define PRIVADA_NOISE_FAST_H

#include <stddef.h>
#include <stdint.h>

#include "noise.h"
#include "rng.h"

/* Supported scales, in integer units. */
#define NOISE_FAST_S_MIN 1.0
#define NOISE_FAST_S_MAX 0x1p40
/* Largest table width (a table holds about 14 times its width). */
#define NOISE_FAST_WMAX 2400
/* Most levels: enough for NOISE_FAST_S_MAX. */
#define NOISE_FAST_LMAX 5

struct noise_fast;

/* A sampler for N_Z(0, s^2), s an exact double (so s^2 = s * s is an
 * exact dyadic rational), NOISE_FAST_S_MIN <= s <= NOISE_FAST_S_MAX.
 * @return 0 and *out set, or NOISE_E_RANGE or NOISE_E_NOMEM with *out
 * NULL. */
int noise_fast_new(struct noise_fast **out, double s);

/* A sampler for grid noise of scale sigma, as noise_add_dgauss uses with
 * default flags: gamma = noise_grid(sigma) and s = S = ceil(sigma/gamma)
 * (an integer in [2^24, 2^25]).  Such a handle also serves noise_fast_add
 * and noise_fast_add_f32.  @return as noise_fast_new (NOISE_E_RANGE for
 * a sigma that noise_grid refuses). */
int noise_fast_new_grid(struct noise_fast **out, double sigma);

void noise_fast_free(struct noise_fast *h);

/* Fill out[0..n-1] with independent samples.  *tv_out (required) is
 * increased by n * noise_fast_tv(h), rounded up, on success.
 * @return 0, or NOISE_E_RANGE (tv_out NULL). */
int noise_fast_sample(const struct noise_fast *h, struct rng *r,
    int64_t *out, size_t n, double *tv_out);

/* The TV bound tau per sample of this handle (see above). */
double noise_fast_tv(const struct noise_fast *h);

/* The TV bound tau(s) per sample of noise_fast_new(.., s), computed
 * without building tables.  @return tau, or NaN for an unsupported s. */
double noise_fast_tv_per_sample(double s);

/* Add noise to x[0..n-1] in place exactly as noise_add_dgauss(r, x, n,
 * sigma, 0) does (same grid gamma, same rounding of x_i / gamma to the
 * nearest integer with ties to even, the same scale S = ceil(sigma /
 * gamma) in grid units, the same errors), but with this sampler:
 *   x_i <- (round(x_i / gamma) + k_i) gamma,  k_i ~ N_Z(0, S^2) within tau.
 * The ledger charges the Gaussian mechanism with noise sigma and L2
 * sensitivity noise_sens_l2(delta2, gamma, n), as for noise_add_dgauss,
 * plus noise_fast_delta_charge(eps, tau_total) on delta.  *tv_out
 * (required) is increased by n * tau on success.
 * The handle must come from noise_fast_new_grid.
 * @return 0, NOISE_E_RANGE (a non-finite x_i, a handle without a grid,
 * tv_out NULL) or NOISE_E_OVERFLOW (|x_i / gamma| >= 2^62, a result not
 * finite); on error the array is partly modified and must not be
 * released. */
int noise_fast_add(const struct noise_fast *h, struct rng *r, double *x,
    size_t n, double *tv_out);

/* The same for f32 arrays.  Each value is widened to double (exactly),
 * rounded to the grid and noised as above, and the noised double is then
 * rounded to the nearest float.  That last rounding is post-processing: a
 * deterministic function of the noised grid value, applied after the
 * mechanism, so the guarantee (and the charge) is that of noise_fast_add.
 * The same stream gives the float of exactly the double result.  A result
 * beyond the float range is NOISE_E_OVERFLOW (a function of the noised
 * value too). */
int noise_fast_add_f32(const struct noise_fast *h, struct rng *r, float *x,
    size_t n, double *tv_out);

/* The noise alone: z[0..n-1] = k_i gamma, bit for bit what noise_fast_add
 * leaves in an array of n zeros with the same stream (round(0 / gamma) =
 * 0), and the same charge on *tv_out (required).  For callers that draw
 * the noise ahead of the values it is added to (lib/ml/nn.c): adding z_i to
 * round(x_i / gamma) gamma there is the release of noise_fast_add.  The
 * handle must come from noise_fast_new_grid.
 * @return 0, or NOISE_E_RANGE (no grid, tv_out NULL). */
int noise_fast_grid_noise(const struct noise_fast *h, struct rng *r,
    double *z, size_t n, double *tv_out);

/* One-shot forms: build a grid handle for sigma, add, free.  Setup costs
 * about 2 ms; reuse a handle (noise_fast_new_grid) when calling
 * repeatedly. */
int noise_fast_add_dgauss(struct rng *r, double *x, size_t n, double sigma,
    double *tv_out);
int noise_fast_add_dgauss_f32(struct rng *r, float *x, size_t n,
    double sigma, double *tv_out);

/* The epsilon at which a release charges its TV: its own epsilon, or
 * NOISE_FAST_EPS_REF when that is smaller, so that the charge still
 * covers compositions up to that epsilon (the ledger re-charges beyond,
 * formats/tensor-stream.md 10.1.2 rule 5). */
#define NOISE_FAST_EPS_REF 32.0

/* max(eps, NOISE_FAST_EPS_REF). */
double noise_fast_tv_epsilon(double eps);

/* The delta to add for releases whose noise is within total variation
 * tau_total of the exact noise, for a release that is (eps, delta)-DP
 * under exact noise: (1 + e^eps) tau_total, rounded up.
 * @return the charge, or NaN for a negative or non-finite argument. */
double noise_fast_delta_charge(double eps, double tau_total);

/* The parameters of a handle, for reports and tests. */
struct noise_fast_info {
	int levels;		/* L */
	uint64_t factor;	/* K (0 when L = 1) */
	double inner_width;	/* 3K: width of Z_0 .. Z_{L-2} (0 when L = 1) */
	double outer_width;	/* b: width of Z_{L-1} (s when L = 1) */
	size_t table_entries;	/* table slots, both tables together */
	double tv;		/* tau per sample */
	double gamma;		/* grid step, 0 for a handle without a grid */
};
void noise_fast_get_info(const struct noise_fast *h,
    struct noise_fast_info *info);

#endif
