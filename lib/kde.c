/* kde.c: one-dimensional Gaussian KDE utilities and the exact exponential
 * mechanism of kde-publish (see kde.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ck.h"
#include "kde.h"
#include "noise.h"

/* No contraction into fused multiply-adds (GCC does not contract in ISO C
 * mode; clang does unless told): the error bound of kde_phi is for the
 * plain operations, and every ISA path must give the same bits. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/*
 * Phi(z) = (1 + erf(z / sqrt 2)) / 2 with Abramowitz and Stegun 7.1.28:
 *   erf(y) = 1 - (1 + a1 y + ... + a6 y^6)^-16 + e(y), |e(y)| <= 3e-7,
 * for y >= 0, so with h = (1 + a1 y + ...)^-16 / 2,
 *   Phi(z) = 1 - h (z >= 0),  h (z < 0),  y = |z| / sqrt 2.
 * No exp, one division: it vectorises well.  y is clamped at 9 (erf(9)
 * is 1 within 1e-36).  Every operation is a correctly rounded IEEE float
 * operation in a fixed order (C11 mode: no contraction into FMA), so the
 * scalar and vector forms agree bit for bit; the total error including
 * the float rounding was measured over every float input (kde.h).
 */
#define A1 0.0705230784f
#define A2 0.0422820123f
#define A3 0.0092705272f
#define A4 0.0001520143f
#define A5 0.0002765672f
#define A6 0.0000430638f
#define RSQRT2F 0.70710678118654752f
#define YMAX 9.0f

float
kde_phi(float z)
{
	float y = fabsf(z) * RSQRT2F, p, r, h;

	if (y > YMAX)
		y = YMAX;
	p = ((((((A6 * y + A5) * y + A4) * y + A3) * y + A2) * y + A1) * y) +
	    1.0f;
	r = 1.0f / p;
	r = r * r;
	r = r * r;
	r = r * r;
	r = r * r;
	h = 0.5f * r;
	return z >= 0 ? h + (1.0f - 2.0f * h) : h;
}

/* ---- vector forms (GCC vector extensions, one source, three ISAs) ---- */

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__)) && \
    !defined(PRIVADA_NO_SIMD)
#define KDE_SIMD 1
#endif

typedef float v16sf __attribute__((vector_size(64)));
typedef int v16si __attribute__((vector_size(64)));
typedef float v8sf __attribute__((vector_size(32)));
typedef double v8df __attribute__((vector_size(64)));

/* out = Phi(z), in the operations of kde_phi, on 16 lanes. */
#define PHI16(z, out) do {						\
	v16si m_ = (v16si)(z) & 0x7fffffff;				\
	v16sf y_ = (v16sf)m_ * RSQRT2F, p_, r_, h_;			\
	v16si big_ = y_ > YMAX;						\
	y_ = (v16sf)(((v16si)y_ & ~big_) | ((v16si)((v16sf){ 0 } + YMAX) & big_)); \
	p_ = ((((((A6 * y_ + A5) * y_ + A4) * y_ + A3) * y_ + A2) * y_ + \
	    A1) * y_) + 1.0f;						\
	r_ = 1.0f / p_;							\
	r_ = r_ * r_;							\
	r_ = r_ * r_;							\
	r_ = r_ * r_;							\
	r_ = r_ * r_;							\
	h_ = 0.5f * r_;							\
	(out) = h_ + (v16sf)((v16si)(1.0f - 2.0f * h_) & ((z) >= 0));	\
} while (0)

#define STORE16(p, v) do { v16sf s_ = (v); memcpy((p), &s_, sizeof s_); } \
	while (0)

#define PHI_V_BODY							\
	for (size_t j = 0; j + 16 <= n; j += 16) {			\
		v16sf z, o;						\
		memcpy(&z, zin + j, sizeof z);				\
		PHI16(z, o);						\
		STORE16(out + j, o);					\
	}

/* F[j] += sum_i Phi((e[j] - x_i) kinv) for 16 consecutive points. */
#define FBLOCK_BODY							\
	v16sf ev;							\
	v8df lo = { 0 }, hi = { 0 };					\
	memcpy(&ev, e, sizeof ev);					\
	for (size_t i = 0; i < m; i++) {				\
		v16sf z = (ev - x[i]) * kinv, o;			\
		v8sf a, b;						\
		PHI16(z, o);						\
		a = __builtin_shufflevector(o, o, 0, 1, 2, 3, 4, 5, 6, 7); \
		b = __builtin_shufflevector(o, o, 8, 9, 10, 11, 12, 13, 14, \
		    15);						\
		lo += __builtin_convertvector(a, v8df);			\
		hi += __builtin_convertvector(b, v8df);			\
	}								\
	memcpy(f, &lo, sizeof lo);					\
	memcpy(f + 8, &hi, sizeof hi);

static void
phi_v_generic(const float *zin, float *out, size_t n)
{
	PHI_V_BODY
}

static void
fblock_generic(const float *e, const float *x, size_t m, float kinv,
    double *f)
{
	FBLOCK_BODY
}

#ifdef KDE_SIMD
__attribute__((target("avx2"))) static void
phi_v_avx2(const float *zin, float *out, size_t n)
{
	PHI_V_BODY
}

__attribute__((target("avx2"))) static void
fblock_avx2(const float *e, const float *x, size_t m, float kinv, double *f)
{
	FBLOCK_BODY
}

__attribute__((target("avx512f"))) static void
phi_v_avx512(const float *zin, float *out, size_t n)
{
	PHI_V_BODY
}

__attribute__((target("avx512f"))) static void
fblock_avx512(const float *e, const float *x, size_t m, float kinv,
    double *f)
{
	FBLOCK_BODY
}

static int
isa(void)
{
	static int level = -1;

	if (level < 0) {
		__builtin_cpu_init();
		level = __builtin_cpu_supports("avx512f") ? 2 :
		    __builtin_cpu_supports("avx2") ? 1 : 0;
	}
	return level;
}
#endif

void
kde_phi_v(const float *z, float *out, size_t n)
{
	size_t done = n & ~(size_t)15;

#ifdef KDE_SIMD
	switch (isa()) {
	case 2:
		phi_v_avx512(z, out, n);
		break;
	case 1:
		phi_v_avx2(z, out, n);
		break;
	default:
		phi_v_generic(z, out, n);
	}
#else
	phi_v_generic(z, out, n);
#endif
	for (size_t j = done; j < n; j++)
		out[j] = kde_phi(z[j]);
}

static void
fblock(const float *e, const float *x, size_t m, float kinv, double *f)
{
#ifdef KDE_SIMD
	switch (isa()) {
	case 2:
		fblock_avx512(e, x, m, kinv, f);
		return;
	case 1:
		fblock_avx2(e, x, m, kinv, f);
		return;
	}
#endif
	fblock_generic(e, x, m, kinv, f);
}

/* ---- bandwidths ---- */

double
kde_factor(int rule, size_t m)
{
	if (m < 2)
		return NAN;
	if (rule == KDE_SCOTT)
		return pow((double)m, -0.2);
	if (rule == KDE_SILVERMAN)
		return pow((double)m * 3.0 / 4.0, -0.2);
	return NAN;
}

double
kde_bandwidth(int rule, const float *x, size_t m)
{
	double mean = 0, ss = 0;

	if (m < 2)
		return NAN;
	for (size_t i = 0; i < m; i++)
		mean += x[i];
	mean /= (double)m;
	for (size_t i = 0; i < m; i++)
		ss += ((double)x[i] - mean) * ((double)x[i] - mean);
	return kde_factor(rule, m) * sqrt(ss / (double)(m - 1));
}

/* ---- the grid ---- */

int
kde_grid_init(struct kde_grid *g, double lo, double step, size_t n,
    double window)
{
	double w, half = window / 2;
	size_t wi = 0;

	memset(g, 0, sizeof *g);
	if (n == 0 || n > ((size_t)1 << 24) || !(step > 0) || !(window > 0) ||
	    !isfinite(lo) || !isfinite(step) || !isfinite(window))
		return -1;
	w = window / step;
	if (w == floor(w) && w <= (double)((size_t)1 << 24)) {
		wi = (size_t)w;
		g->ne = n + wi;
		g->ip = wi;
	} else {
		g->split = 1;
		g->ne = 2 * n;
		g->ip = n;
	}
	g->n = n;
	g->lo = lo;
	g->step = step;
	g->window = window;
	/* 16 floats of padding: fblock reads whole blocks. */
	g->t = calloc(n, sizeof *g->t);
	g->e = calloc(g->ne + 16, sizeof *g->e);
	if (g->t == NULL || g->e == NULL) {
		kde_grid_free(g);
		return -1;
	}
	for (size_t k = 0; k < n; k++)
		g->t[k] = (float)(lo + (double)k * step);
	if (!g->split) {
		for (size_t j = 0; j < g->ne; j++)
			g->e[j] = (float)(lo - half + (double)j * step);
	} else {
		for (size_t k = 0; k < n; k++) {
			g->e[k] = (float)(lo + (double)k * step - half);
			g->e[n + k] = (float)(lo + (double)k * step + half);
		}
	}
	for (size_t j = g->ne; j < g->ne + 16; j++)
		g->e[j] = g->e[g->ne - 1];
	for (size_t j = 0; j < g->ne; j++) {
		if (!isfinite(g->e[j]) || (j > 0 && !(g->split && j == n) &&
		    !(g->e[j] > g->e[j - 1]))) {
			kde_grid_free(g);
			return -1;
		}
	}
	for (size_t k = 0; k < n; k++) {
		if (!isfinite(g->t[k])) {
			kde_grid_free(g);
			return -1;
		}
		w = (double)g->e[g->ip + k] - (double)g->e[g->im + k];
		if (!(w > 0)) {
			kde_grid_free(g);
			return -1;
		}
		if (w > g->wmax)
			g->wmax = w;
	}
	return 0;
}

void
kde_grid_free(struct kde_grid *g)
{
	free(g->t);
	free(g->e);
	memset(g, 0, sizeof *g);
}

size_t
kde_scratch_floats(const struct kde_grid *g)
{
	/* F in double (2 floats each) plus a block of padding. */
	return 2 * (g->ne + 32);
}

/* First index in e[0..n) with e[j] >= v (e increasing). */
static size_t
first_ge(const float *e, size_t n, double v)
{
	size_t a = 0, b = n;

	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if ((double)e[mid] < v)
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

/* First index with e[j] > v. */
static size_t
first_gt(const float *e, size_t n, double v)
{
	size_t a = 0, b = n;

	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if ((double)e[mid] <= v)
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

/* F[j] for the increasing points e[0..n): 0 below the cut, m above. */
static void
cdf_run(const float *e, size_t n, const float *x, size_t m, float kinv,
    double lo_cut, double hi_cut, double *f)
{
	size_t jlo = first_ge(e, n, lo_cut), jhi = first_gt(e, n, hi_cut);

	for (size_t j = 0; j < jlo; j++)
		f[j] = 0;
	for (size_t j = jlo; j < jhi; j += 16)
		fblock(e + j, x, m, kinv, f + j);	/* may write past jhi */
	for (size_t j = jhi; j < n; j++)
		f[j] = (double)m;
}

double
kde_util(const struct kde_grid *g, const float *x, size_t m, float kinv,
    double *u, float *scratch)
{
	double *f = (double *)(void *)scratch, bw = 1.0 / (double)kinv;
	float xmin = x[0], xmax = x[0];
	double lo_cut, hi_cut, dm = (double)m;

	for (size_t i = 1; i < m; i++) {
		xmin = x[i] < xmin ? x[i] : xmin;
		xmax = x[i] > xmax ? x[i] : xmax;
	}
	lo_cut = (double)xmin - KDE_CUT * bw;
	hi_cut = (double)xmax + KDE_CUT * bw;
	if (!g->split) {
		cdf_run(g->e, g->ne, x, m, kinv, lo_cut, hi_cut, f);
	} else {
		cdf_run(g->e, g->n, x, m, kinv, lo_cut, hi_cut, f);
		cdf_run(g->e + g->n, g->n, x, m, kinv, lo_cut, hi_cut,
		    f + g->n);
	}
	for (size_t k = 0; k < g->n; k++)
		u[k] = f[g->ip + k] - f[g->im + k];
	/* Each F: m values within KDE_PHI_ERR (beyond the cut, within
	 * Phi(-7) < 1.3e-12 of 0 or 1), summed in double (m roundings of
	 * partial sums <= m); one subtraction. */
	return 2 * dm * KDE_PHI_ERR + (2 * dm * dm + dm) * 0x1p-52;
}

/* ---- the exponential mechanism ---- */

/* The first 512 bits of e^-1 = 0.5e2d58d8..., big-endian words, from the
 * alternating series sum (-1)^k / k! to k = 140 (both partial-sum bounds
 * agree on these bits; tests/unit/test_kde.c recomputes them with GMP). */
static const uint64_t EINV[8] = {
	UINT64_C(0x5e2d58d8b3bcdf1a), UINT64_C(0xbadec7829054f90d),
	UINT64_C(0xda9805aab56c7733), UINT64_C(0x3024b9d0a507daed),
	UINT64_C(0xb16400bf472b4215), UINT64_C(0xb8245b669d90d27a),
	UINT64_C(0x5aea5550968dc392), UINT64_C(0x29f03c6276dcaa58)
};

const uint64_t *
kde_einv_bits(void)
{
	return EINV;
}

/*
 * Bernoulli(e^-1): compare a uniform real U = 0.u0 u1 ... (64 random bits
 * at a time) with the binary expansion of e^-1, word by word.  The first
 * differing word decides, exactly: P[U < e^-1] = e^-1.  All 512 bits equal
 * (probability 2^-512) is an error that depends on the draws only.
 */
int
kde_bern_einv(struct rng *r)
{
	/* The first word in two halves: one draw of 32 bits decides all but
	 * 2^-32 of the time (rng_bits shares 64-bit draws). */
	uint64_t hi = rng_bits(r, 32), lo;

	if (hi != EINV[0] >> 32)
		return hi < EINV[0] >> 32;
	lo = rng_bits(r, 32);
	if (lo != (EINV[0] & 0xffffffffu))
		return lo < (EINV[0] & 0xffffffffu);
	for (size_t i = 1; i < 8; i++) {
		uint64_t u = rng_u64(r);
		if (u != EINV[i])
			return u < EINV[i];
	}
	return NOISE_E_OVERFLOW;
}

/* Bernoulli(exp(-x / 2^shift)): exp(-x/2^s) = (e^-1)^L exp(-f / 2^s) with
 * L = x >> s and f = x mod 2^s; L coins Bernoulli(e^-1) and, when all
 * succeed, one Bernoulli(exp(-f/2^s)) (CKS Algorithm 1, noise.h). */
static int
bern_exp_shift(struct rng *r, uint64_t x, unsigned shift)
{
	uint64_t L = x >> shift, f = x & (((uint64_t)1 << shift) - 1);

	for (uint64_t i = 0; i < L; i++) {
		int b = kde_bern_einv(r);
		if (b != 1)
			return b;
	}
	return f == 0 ? 1 : noise_bernoulli_exp(r, f, (uint64_t)1 << shift);
}

int
kde_em_sample(struct rng *r, const uint64_t *q, size_t n, uint64_t cn,
    unsigned shift, size_t *out)
{
	uint64_t qmax = 0;

	if (n == 0 || shift == 0 || shift > 62)
		return NOISE_E_RANGE;
	for (size_t k = 0; k < n; k++)
		qmax = q[k] > qmax ? q[k] : qmax;
	{
		uint64_t x;	/* q >= 0: every cn (qmax - q[k]) <= cn qmax */
		if (__builtin_mul_overflow(cn, qmax, &x))
			return NOISE_E_OVERFLOW;
	}
	for (;;) {
		size_t k = (size_t)rng_uniform_below(r, n);
		int b = bern_exp_shift(r, cn * (qmax - q[k]), shift);

		if (b < 0)
			return b;
		if (b) {
			*out = k;
			return 0;
		}
	}
}
