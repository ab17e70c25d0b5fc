/*
 * kde.h: Gaussian kernel density estimates of one-dimensional slices and
 * the exact exponential mechanism over a grid of candidates (kde-publish,
 * paper 002: DP-PG).
 *
 * The utility of a candidate t is the kernel mass of the slice x[0..m-1]
 * in a window [s-(t), s+(t)] around it,
 *   U(t) = sum_i Phi((s+(t) - x_i)/b) - Phi((s-(t) - x_i)/b),
 * i.e. m times the integral of the KDE (paper eq. 5).  The window ends
 * s-, s+ are float points fixed by the grid alone (struct kde_grid), never
 * by the data.  Phi is evaluated in float arithmetic (kde_phi): every
 * value is within KDE_PHI_ERR of the true normal CDF at the exact argument
 * (z - x) / b with b = 1 / kinv, the float reciprocal used, and kde_util
 * returns the bound on |computed U - exact U| with the values so that a
 * mechanism can charge it to the sensitivity.
 *
 * kde_em_sample draws exactly from P[k] proportional to
 * exp(-c (Q - q_k)) for integer scores q_k and a rational c, by rounds
 * over integer levels of the exponent with exact coins (bits of the
 * constants 2^j e^-l and e^-1, and lib/dp/noise.h's Bernoulli(exp(-f))).
 *
 * Nothing here prints, exits or reads the environment.  Functions are
 * thread-safe given distinct scratch buffers and rng handles.
 */
#ifndef PRIVADA_KDE_H
#define PRIVADA_KDE_H

#include <stddef.h>
#include <stdint.h>

#include "rng.h"

/*
 * Bound on |kde_phi(z) - Phi(z)| for every float z, including the
 * rounding of the float argument (e - x) * kinv (see kde.c).  The
 * approximation error itself was measured over every finite float input
 * (tests/unit/test_kde.c checks a sweep of them); this constant has a
 * margin of more than 2x over the measured maximum.
 */
#define KDE_PHI_ERR 2.5e-6
/* Kernels farther than this many bandwidths count as 0 or 1. */
#define KDE_CUT 7.0

/* Bandwidth rules of scipy.stats.gaussian_kde in one dimension: the
 * factor times the sample standard deviation (ddof 1). */
enum kde_rule { KDE_SCOTT = 1, KDE_SILVERMAN = 2 };

/* The factor of a rule for m points: Scott m^(-1/5), Silverman
 * (3m/4)^(-1/5).  NaN for m < 2 or an unknown rule. */
double kde_factor(int rule, size_t m);
/* factor * std (ddof 1) of x[0..m-1], in double.  NaN for m < 2. */
double kde_bandwidth(int rule, const float *x, size_t m);

/* The normal CDF, float arithmetic (Abramowitz and Stegun 7.1.28). */
float kde_phi(float z);
/* out[j] = kde_phi(z[j]) (vectorised; bit-identical to kde_phi). */
void kde_phi_v(const float *z, float *out, size_t n);

/*
 * The candidates t_k = lo + k step (k < n, as floats) and the window ends
 * s-(t_k) = e[im + k], s+(t_k) = e[ip + k] in the increasing float array
 * e[0..ne-1].  When the window is w steps (w integer), e is one array
 * e_j = lo - W/2 + j step (ne = n + w, im = 0, ip = w), else two (ne = 2n,
 * ip = n).  wmax is the widest window, max_k (s+ - s-), exactly.
 */
struct kde_grid {
	size_t n, ne, im, ip;
	double lo, step, window, wmax;
	float *t, *e;
	int split;		/* e is two arrays (s- then s+) */
};

/* @return 0, or -1 (n == 0, step or window not positive, a point not
 * finite or the points not increasing, out of memory). */
int kde_grid_init(struct kde_grid *g, double lo, double step, size_t n,
    double window);
void kde_grid_free(struct kde_grid *g);

/* Scratch for kde_util: at least kde_scratch_floats(g) floats. */
size_t kde_scratch_floats(const struct kde_grid *g);

/*
 * u[k] = U(t_k) for the slice x[0..m-1] (any order) and kinv = 1/b > 0,
 * in double.  Kernels beyond KDE_CUT bandwidths of a window end count as
 * exactly 0 or 1.  @return the bound on |u[k] - exact U(t_k)| (the same
 * for every k): 2 m (KDE_PHI_ERR + Phi(-KDE_CUT + 1e-3)) plus the double
 * sums' rounding.  *k0, *k1 (unless NULL) receive a range outside which
 * every u[k] is exactly 0 (both window ends beyond the cut on one side).
 */
double kde_util(const struct kde_grid *g, const float *x, size_t m,
    float kinv, double *u, float *scratch, size_t *k0, size_t *k1);

/*
 * Draw k in [0, n) with probability proportional to exp(-x_k),
 * x_k = (cn / 2^shift) (qmax - q[k]), qmax = max q, exactly.  With
 * x_k = L_k + f_k (L_k integer, f_k in [0, 1)), a round draws a level l
 * with probability proportional to (candidates at l) 2^-j_l, j_l =
 * floor(l log2 e) (integers: exact), accepts it with probability
 * 2^j_l e^-l (a constant whose bits are known: exact comparison), takes a
 * uniform candidate of the level and accepts it with probability
 * exp(-f_k) (noise.h, CKS 2020 Algorithm 1); levels from 29 up share the
 * last one, with e^-(L_k - 29) more in Bernoulli(e^-1) coins.  A round
 * picks k with probability proportional to 2^-j e^-l 2^j e^-f = e^-x_k.
 * Each round succeeds with probability > e^-1 / 2 (5.5 rounds at most on
 * average, about 2 when the top candidates dominate).
 * @return 0 with *out set, or a negative NOISE_E_* code (n == 0 or more
 * than 2^20, shift 0 or > 62: NOISE_E_RANGE; cn qmax overflowing 64
 * bits, or a probability-2^-512 tie of the bit comparisons:
 * NOISE_E_OVERFLOW).
 */
int kde_em_sample(struct rng *r, const uint64_t *q, size_t n, uint64_t cn,
    unsigned shift, size_t *out);

/* The same when q[k] is 0 outside [k0, k1) (q is read only inside). */
int kde_em_sample_range(struct rng *r, const uint64_t *q, size_t n,
    size_t k0, size_t k1, uint64_t cn, unsigned shift, size_t *out);

/* The bits of the level constant rho_l = 2^j_l e^-l (l <= 29): 8
 * big-endian words (all ones for l = 0, where rho = 1), *j = j_l.  NULL
 * for l > 29.  For tests. */
const uint64_t *kde_rho_bits(unsigned l, unsigned *j);

/* Bernoulli(e^-1), exactly, by comparing uniform bits with the binary
 * expansion of e^-1.  @return 0, 1 or NOISE_E_OVERFLOW (all 512 known
 * bits tied: probability 2^-512; the caller releases nothing). */
int kde_bern_einv(struct rng *r);
/* Those 512 bits, 8 big-endian 64-bit words (for tests). */
const uint64_t *kde_einv_bits(void);

#endif
