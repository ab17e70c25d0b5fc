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
    double lo_cut, double hi_cut, double *f, size_t *plo, size_t *phi)
{
	size_t jlo = first_ge(e, n, lo_cut), jhi = first_gt(e, n, hi_cut);

	*plo = jlo;
	*phi = jhi;

	for (size_t j = 0; j < jlo; j++)
		f[j] = 0;
	for (size_t j = jlo; j < jhi; j += 16)
		fblock(e + j, x, m, kinv, f + j);	/* may write past jhi */
	for (size_t j = jhi; j < n; j++)
		f[j] = (double)m;
}

double
kde_util(const struct kde_grid *g, const float *x, size_t m, float kinv,
    double *u, float *scratch, size_t *k0, size_t *k1)
{
	double *f = (double *)(void *)scratch, bw = 1.0 / (double)kinv;
	float xmin = x[0], xmax = x[0];
	double lo_cut, hi_cut, dm = (double)m;
	size_t a, b, a2, b2, lo, hi;

	for (size_t i = 1; i < m; i++) {
		xmin = x[i] < xmin ? x[i] : xmin;
		xmax = x[i] > xmax ? x[i] : xmax;
	}
	lo_cut = (double)xmin - KDE_CUT * bw;
	hi_cut = (double)xmax + KDE_CUT * bw;
	if (!g->split) {
		cdf_run(g->e, g->ne, x, m, kinv, lo_cut, hi_cut, f, &a, &b);
		/* u_k = F[k + w] - F[k] is 0 when both ends are below the
		 * cut (k + w < a) or both beyond (k >= b). */
		lo = a > g->ip ? a - g->ip : 0;
		hi = b;
	} else {
		cdf_run(g->e, g->n, x, m, kinv, lo_cut, hi_cut, f, &a, &b);
		cdf_run(g->e + g->n, g->n, x, m, kinv, lo_cut, hi_cut,
		    f + g->n, &a2, &b2);
		lo = a < a2 ? a : a2;
		hi = b > b2 ? b : b2;
	}
	hi = hi < g->n ? hi : g->n;
	lo = lo < hi ? lo : hi;
	for (size_t k = 0; k < g->n; k++)
		u[k] = f[g->ip + k] - f[g->im + k];
	if (k0 != NULL)
		*k0 = lo;
	if (k1 != NULL)
		*k1 = hi;
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

/*
 * The level coins.  Candidate k has x_k = c (qmax - q_k) = L_k + f_k, L_k
 * an integer, 0 <= f_k < 1.  Level l < LCAP has the envelope weight
 * 2^-j_l per candidate, j_l = floor(l log2 e), so 2^-j_l >= e^-l, and the
 * level coin Bernoulli(rho_l), rho_l = 2^j_l e^-l in (1/2, 1], is drawn
 * by comparing uniform bits with its binary expansion, like e^-1 (the
 * first 512 bits of each, from exact rational bounds of the series of
 * e^-l; tests/unit/test_kde.c recomputes them with GMP).  Candidates with
 * L_k >= LCAP share the last level.
 */
#define LCAP 29
static const unsigned char RHO_J[LCAP + 1] = { 0, 1, 2, 4, 5, 7, 8, 10, 11, 12, 14, 15, 17, 18, 20, 21, 23, 24, 25, 27, 28, 30, 31, 33, 34, 36, 37, 38, 40, 41 };
static const uint64_t RHO[LCAP + 1][8] = {
	{ UINT64_C(0xffffffffffffffff), UINT64_C(0xffffffffffffffff), UINT64_C(0xffffffffffffffff), UINT64_C(0xffffffffffffffff), UINT64_C(0xffffffffffffffff), UINT64_C(0xffffffffffffffff), UINT64_C(0xffffffffffffffff), UINT64_C(0xffffffffffffffff) },
	{ UINT64_C(0xbc5ab1b16779be35), UINT64_C(0x75bd8f0520a9f21b), UINT64_C(0xb5300b556ad8ee66), UINT64_C(0x604973a14a0fb5db), UINT64_C(0x62c8017e8e56842b), UINT64_C(0x7048b6cd3b21a4f4), UINT64_C(0xb5d4aaa12d1b8724), UINT64_C(0x53e078c4edb954b1) },
	{ UINT64_C(0x8a95551dfc0e5cfe), UINT64_C(0xdbb757096814ab8f), UINT64_C(0xc37658768a2b2656), UINT64_C(0x784ca736f2c87025), UINT64_C(0x35ef2980954086a8), UINT64_C(0xd6569734244a2630), UINT64_C(0xd391c65ecbdb86b9), UINT64_C(0x3ac248844fef089f) },
	{ UINT64_C(0xcbed86667585764a), UINT64_C(0x4130191c84086803), UINT64_C(0xa08ae39cdc318c61), UINT64_C(0x477227b8fee43f12), UINT64_C(0x3adf23662f350c1b), UINT64_C(0x9d3bc9fd3f08e58a), UINT64_C(0x2829e349229f8207), UINT64_C(0xbe35dfb8daabe834) },
	{ UINT64_C(0x960aadc109e7a3bf), UINT64_C(0x4578099615711ea5), UINT64_C(0x1f286a70f8fba66f), UINT64_C(0x26ac34966857369a), UINT64_C(0x152e5b1af9e30b16), UINT64_C(0xacae3f9dfeb6ab45), UINT64_C(0x5e48012fc0b28562), UINT64_C(0x2066208d00bc9052) },
	{ UINT64_C(0xdcc9ff006a9bb0e2), UINT64_C(0x2e1248a4d2dcaee3), UINT64_C(0x0c206c07c05138a1), UINT64_C(0x7123975bf4271929), UINT64_C(0x89799e8f22ae3640), UINT64_C(0x8cff7b85cf9ad724), UINT64_C(0xd011bcb87457f2c8), UINT64_C(0x6bb320883ddbf548) },
	{ UINT64_C(0xa2728f889ea6aec0), UINT64_C(0x5d023e000435e608), UINT64_C(0x9ac958e6ec137b49), UINT64_C(0xe9642d82cd4b0b02), UINT64_C(0x8b9f3cb99f0ad71a), UINT64_C(0x23ac892d275481cc), UINT64_C(0x05bb832ba373b6f8), UINT64_C(0x88750d10c645a9b2) },
	{ UINT64_C(0xef0b5ce1254c755c), UINT64_C(0xccbbf55fbd28ae28), UINT64_C(0xe4b366a4a6857de6), UINT64_C(0x997fa02fc8195dbc), UINT64_C(0x0599c96f900a6abb), UINT64_C(0x8c2f78f234b1a37a), UINT64_C(0x59f2d4b7896077b6), UINT64_C(0x9ec00ecbcb798a87) },
	{ UINT64_C(0xafe10820813d65df), UINT64_C(0xe6a33c07f738f569), UINT64_C(0x1fde5bfa540f2c3b), UINT64_C(0x3f7c00d19617795a), UINT64_C(0x2be110824f623dc4), UINT64_C(0x469ad6a50921f42b), UINT64_C(0xbe8eeb7de0d0f37f), UINT64_C(0xe9dfa89e2d87f19f) },
	{ UINT64_C(0x8167912932a2cc8a), UINT64_C(0xb6d9e082ec1b6425), UINT64_C(0xd25498fb1c77e9d0), UINT64_C(0x7095552994807e81), UINT64_C(0x3f716ded7b4c1463), UINT64_C(0xbe586920e7527682), UINT64_C(0x888808c3fb05d896), UINT64_C(0xcb0f43d49208e73b) },
	{ UINT64_C(0xbe6bcdab23e4d4e2), UINT64_C(0xd923aa84c4397caf), UINT64_C(0x7c74a72ca099a2e6), UINT64_C(0x9c51f3137226b4cb), UINT64_C(0xfb306b6fe51ec842), UINT64_C(0xeb3adedc662a34ab), UINT64_C(0x449550f0053ada20), UINT64_C(0x8f9efdc3212c29f5) },
	{ UINT64_C(0x8c1aa11c7b3b201e), UINT64_C(0x4f7e77977d56e66c), UINT64_C(0x9ed2e4528ad40a8e), UINT64_C(0x033b0e81861524da), UINT64_C(0x9388e767b629f35b), UINT64_C(0x0eb1b1a0de2d6b89), UINT64_C(0x75f380903bc9d23d), UINT64_C(0xf887bb0d45796f87) },
	{ UINT64_C(0xce2a61da1de4578c), UINT64_C(0x8760d9fe391e9c8f), UINT64_C(0x24f4b524d319395c), UINT64_C(0x3efc982f6f532c41), UINT64_C(0x5316a6352477edd4), UINT64_C(0xc8f127e94e8b7c86), UINT64_C(0x1f0a60ef7e34ac81), UINT64_C(0x69d2c6110c9df9c1) },
	{ UINT64_C(0x97b029dcc0ecc1a1), UINT64_C(0x0a92959636a2c5cb), UINT64_C(0x4975e7c505d129b5), UINT64_C(0xfc9060f1fb3f5e92), UINT64_C(0x272aaa59ba00fab9), UINT64_C(0x72bf87396fa33d59), UINT64_C(0x19df319966e5f0b9), UINT64_C(0x99b57bdbe00bc28e) },
	{ UINT64_C(0xdf3637ed80b09086), UINT64_C(0xe670bd598c44323e), UINT64_C(0x07de349c8f8e1d28), UINT64_C(0x5dc8f15a6a0720cc), UINT64_C(0xe3c40ff6b875b933), UINT64_C(0x32e494f2f62420fe), UINT64_C(0xbfdddb6c84ff434b), UINT64_C(0xbb43262a0e53e984) },
	{ UINT64_C(0xa43ae5113f61c05f), UINT64_C(0xc716c7dd7997f802), UINT64_C(0xc6a5783911bfc8c6), UINT64_C(0x27e752987f24e26a), UINT64_C(0x71d4e9602b035932), UINT64_C(0x6ccda786cdb10d1d), UINT64_C(0xab65d24c83216ea1), UINT64_C(0xf0027dcc2269e2a4) },
	{ UINT64_C(0xf1aaddd7742e56d3), UINT64_C(0x2fb9f997447d9e63), UINT64_C(0x14db84884fabab26), UINT64_C(0xbf059af9bc20b608), UINT64_C(0x6a05d12043305724), UINT64_C(0x88f112a1f4eb6d2a), UINT64_C(0x4a2e2ee30f7bc6a7), UINT64_C(0x2dce49e1d6beda1a) },
	{ UINT64_C(0xb1cf18bad344e5ec), UINT64_C(0xce1dd4e867f102f8), UINT64_C(0x3afa076aeeac5cd5), UINT64_C(0x6b62cc220b819142), UINT64_C(0x1e2b66c51d6ed5b0), UINT64_C(0x3e5dd8d5bb273947), UINT64_C(0x2ba8aec3b6765cc0), UINT64_C(0x90cf141691a61ba7) },
	{ UINT64_C(0x82d314634cfd0644), UINT64_C(0x238abd2b5fab70cf), UINT64_C(0x13c05d0b4dc6a139), UINT64_C(0x38e2cd01c3d3f287), UINT64_C(0xdcd4b80315b9cedc), UINT64_C(0x2d6d8068355c4d22), UINT64_C(0x9ccaac5e3b8a2176), UINT64_C(0x28787677865b9ea0) },
	{ UINT64_C(0xc082b7f962bb8d3b), UINT64_C(0xf87c8edfdaeec54f), UINT64_C(0x9080103b7c7b1955), UINT64_C(0x3d4aebf225f3dbb0), UINT64_C(0x6157fdc66d77193b), UINT64_C(0xdcc6dc9f76474a91), UINT64_C(0x36b321de7635f652), UINT64_C(0x30b5368930a1e4b7) },
	{ UINT64_C(0x8da432af9b933730), UINT64_C(0x25a28a80bf7ad594), UINT64_C(0x25a48361fc73351a), UINT64_C(0xeb79f629814fbe54), UINT64_C(0xc85f1a05357fdfc6), UINT64_C(0x6184062f886d2836), UINT64_C(0x50b4ac2399ecfbac), UINT64_C(0x712f606f0546b686) },
	{ UINT64_C(0xd06d8686ed9f6104), UINT64_C(0x55b91e979d68d9a3), UINT64_C(0xbff0f4bbd322bc3a), UINT64_C(0x2f970ba677104a04), UINT64_C(0x656cb912f3bc3bff), UINT64_C(0xb1bc0095cfd72c7c), UINT64_C(0xddc49dd5b2b71699), UINT64_C(0x7e808c7aabcc028c) },
	{ UINT64_C(0x995a45f88bed129e), UINT64_C(0x7782fb42c8adf24a), UINT64_C(0xbe38dd6795e039fd), UINT64_C(0x9e1abf829d009952), UINT64_C(0xe48e08c99093dac4), UINT64_C(0xcda1c2b733664085), UINT64_C(0xa9adec8e28a99fbc), UINT64_C(0x9b87c260b67ecb03) },
	{ UINT64_C(0xe1a93f219fd588bf), UINT64_C(0x5a61dbd599c594e4), UINT64_C(0x662c5e4cbe60f500), UINT64_C(0xb6647f0d25d1f74c), UINT64_C(0x27d5bc348de63b54), UINT64_C(0x157a06ff4de586f7), UINT64_C(0x06545e9a1c06c7bf), UINT64_C(0xd57412715c50a396) },
	{ UINT64_C(0xa6083c7f49145050), UINT64_C(0xdab76c0c886bd554), UINT64_C(0x4cb0430e03a42d43), UINT64_C(0x5b7f78fdc61d9940), UINT64_C(0x0ecffb634ea03ae7), UINT64_C(0xdf426576a42d19d6), UINT64_C(0xbee2bde55d237637), UINT64_C(0x07e7b672c2e1352f) },
	{ UINT64_C(0xf451bd22fe196e81), UINT64_C(0x8e4ee1e7635035a9), UINT64_C(0xe14476ae4759b3bf), UINT64_C(0xc40bfcd83bcc82ac), UINT64_C(0x74c2bf3c89d125ef), UINT64_C(0x361cb562e85d6134), UINT64_C(0xe57833dd9e5ec34e), UINT64_C(0xd0c22facbfe2bdf3) },
	{ UINT64_C(0xb3c2953803f20c3c), UINT64_C(0x6c7bab324c2be570), UINT64_C(0x8924fc6b334a1b52), UINT64_C(0x3a1e4d4aeddd32ce), UINT64_C(0x857b2a04fddeb78c), UINT64_C(0x53231948fd5622b9), UINT64_C(0xfc725b943c708806), UINT64_C(0xb7134606f6b0c339) },
	{ UINT64_C(0x844294c3b3f4d11b), UINT64_C(0xc77ef31e4023f76d), UINT64_C(0x8f61b93c4b11c4c2), UINT64_C(0x11183f0bdcd53cc6), UINT64_C(0xe56b788cf302ea12), UINT64_C(0xd1dfface2d5040e7), UINT64_C(0x1faee6bffc2995b0), UINT64_C(0x8df2f12a2388f401) },
	{ UINT64_C(0xc29f80eb6a9dcfeb), UINT64_C(0x64183c8af3c6b113), UINT64_C(0x119aed14cfb4dca3), UINT64_C(0x8f970917740af1cc), UINT64_C(0x3116fd65a559b055), UINT64_C(0x0ef52dd3b9569394), UINT64_C(0x85e46c10545089c4), UINT64_C(0xb509693c8f55c93f) },
	{ UINT64_C(0x8f3215d75c250285), UINT64_C(0x7783ce763d805b83), UINT64_C(0x1d157a50712f364f), UINT64_C(0x5e862ae9fb47e4eb), UINT64_C(0x5609b7e174ebc736), UINT64_C(0xb1ddc0fe58fe6ba0), UINT64_C(0xc0fd19d33d4ff788), UINT64_C(0x48baa76a1465578e) },
};

const uint64_t *
kde_rho_bits(unsigned l, unsigned *j)
{
	if (l > LCAP)
		return NULL;
	*j = RHO_J[l];
	return RHO[l];
}

/* Bernoulli(0.w0 w1 ... w7 ...) by lazy comparison (see kde_bern_einv). */
static int
bern_bits(struct rng *r, const uint64_t *w)
{
	uint64_t hi = rng_bits(r, 32), lo;

	if (hi != w[0] >> 32)
		return hi < w[0] >> 32;
	lo = rng_bits(r, 32);
	if (lo != (w[0] & 0xffffffffu))
		return lo < (w[0] & 0xffffffffu);
	for (size_t i = 1; i < 8; i++) {
		uint64_t u = rng_u64(r);
		if (u != w[i])
			return u < w[i];
	}
	return NOISE_E_OVERFLOW;
}

int
kde_em_sample_range(struct rng *r, const uint64_t *q, size_t n, size_t k0,
    size_t k1, uint64_t cn, unsigned shift, size_t *out)
{
	uint64_t qmax = 0, cnt[LCAP + 1] = { 0 }, total = 0, L0, nz;
	uint64_t mask = ((uint64_t)1 << shift) - 1;
	const unsigned jmax = RHO_J[LCAP];

	if (n == 0 || shift == 0 || shift > 62 || n > ((size_t)1 << 20) ||
	    k0 > k1 || k1 > n)
		return NOISE_E_RANGE;
	for (size_t k = k0; k < k1; k++)
		qmax = q[k] > qmax ? q[k] : qmax;
	{
		uint64_t x;	/* q >= 0: every cn (qmax - q[k]) <= cn qmax */
		if (__builtin_mul_overflow(cn, qmax, &x))
			return NOISE_E_OVERFLOW;
	}
	/* The nz candidates outside [k0, k1) score 0: level L0. */
	nz = (uint64_t)(n - (k1 - k0));
	L0 = (cn * qmax) >> shift;
	cnt[L0 < LCAP ? L0 : LCAP] += nz;
	for (size_t k = k0; k < k1; k++) {
		uint64_t L = (cn * (qmax - q[k])) >> shift;
		cnt[L < LCAP ? L : LCAP]++;
	}
	/* Level weights cnt_l 2^(jmax - j_l): n <= 2^20 and jmax = 41 keep
	 * the total below 2^61. */
	for (unsigned l = 0; l <= LCAP; l++)
		total += cnt[l] << (jmax - RHO_J[l]);
	for (;;) {
		uint64_t R = rng_uniform_below(r, total), rank, x, L, f;
		unsigned l = 0;
		size_t k;
		int b;

		for (;; l++) {
			uint64_t g = cnt[l] << (jmax - RHO_J[l]);
			if (R < g)
				break;
			R -= g;
		}
		/* R is uniform on [0, cnt_l 2^s): its top part is a uniform
		 * rank within the level. */
		rank = R >> (jmax - RHO_J[l]);
		if (l > 0 && (b = bern_bits(r, RHO[l])) != 1)
			goto reject;
		/* The rank-th candidate of the level: the zeros outside the
		 * range first (if this is their level), then in order. */
		if ((L0 < LCAP ? L0 : LCAP) == l && rank < nz) {
			k = rank < k0 ? (size_t)rank : k1 + (size_t)(rank - k0);
		} else {
			if ((L0 < LCAP ? L0 : LCAP) == l)
				rank -= nz;
			for (k = k0;; k++) {
				uint64_t Lk = (cn * (qmax - q[k])) >> shift;
				if ((Lk < LCAP ? Lk : LCAP) == l && rank-- == 0)
					break;
			}
		}
		x = cn * (qmax - (k >= k0 && k < k1 ? q[k] : 0));
		L = x >> shift;
		f = x & mask;
		/* The last level: e^-(L - LCAP) more, by e^-1 coins. */
		for (uint64_t i = LCAP; i < L; i++)
			if ((b = kde_bern_einv(r)) != 1)
				goto reject;
		b = f == 0 ? 1 : noise_bernoulli_exp(r, f, (uint64_t)1 << shift);
		if (b == 1) {
			*out = k;
			return 0;
		}
reject:
		if (b < 0)
			return b;
	}
}

int
kde_em_sample(struct rng *r, const uint64_t *q, size_t n, uint64_t cn,
    unsigned shift, size_t *out)
{
	return kde_em_sample_range(r, q, n, 0, n, cn, shift, out);
}
