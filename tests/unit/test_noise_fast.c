/*
 * Unit tests of the fast discrete Gaussian sampler (lib/noise_fast):
 *  - each table's law, read back from the alias table, against the
 *    folded pmf computed here in long double (deterministic, to 1e-12);
 *  - chi-square goodness of fit of the sampler against N_Z(0, s^2) on
 *    equal-probability bins (from the exact pmf in long double for s up to
 *    2^12, from the continuity-corrected normal CDF above, whose error is
 *    about 1/(24 s^2) per bin);
 *  - residues mod K (and K^2) against uniform: what the smoothing
 *    condition of each convolution level promises;
 *  - moments at s = 2^24, the grid, the float variant, the TV bound and
 *    the delta charge;
 *  - deliberately broken samplers (test hook) that these tests catch.
 * Statistical checks use the critical values of stat.h: a false-failure
 * rate of at most 1e-6 each for a random seed.  Seeds are fixed, so every
 * run is the same.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "noise.h"
#include "noise_fast.h"
#include "noise_fast_test.h"
#include "rng.h"
#include "stat.h"
#include "tap.h"

#define N 1000000L		/* draws per distribution check */
#define NB 100			/* equal-probability bins */

static int64_t z[2 * N];

static struct rng *
seeded(const char *item)
{
	struct rng *r;

	if (rng_new_seeded(&r, 20240611, item) != 0)
		abort();
	return r;
}

/* ---- the target law ---- */

/* N_Z(0, s^2): its CDF from a table of the exact pmf (R = 40 s + 40 each
 * side, the rest below 1e-300) or, for large s, the normal CDF at k + 1/2. */
struct law {
	long double s;
	long R;
	long double *cdf;	/* cdf[k + R] = P[X <= k], or NULL */
};

static void
law_init(struct law *L, long double s)
{
	long double acc = 0, tot;

	L->s = s;
	L->R = (long)(40 * s) + 40;
	L->cdf = NULL;
	if (s > 4096)
		return;
	if ((L->cdf = malloc((size_t)(2 * L->R + 1) * sizeof *L->cdf)) == NULL)
		abort();
	for (long k = -L->R; k <= L->R; k++) {
		acc += expl(-(long double)k * k / (2 * s * s));
		L->cdf[k + L->R] = acc;
	}
	tot = acc;
	for (long i = 0; i <= 2 * L->R; i++)
		L->cdf[i] /= tot;
}

static long double
law_cdf(const struct law *L, long k)
{
	if (k < -L->R)
		return 0;
	if (k >= L->R)
		return 1;
	if (L->cdf != NULL)
		return L->cdf[k + L->R];
	return 0.5L * erfcl(-(k + 0.5L) / (L->s * sqrtl(2)));
}

static void
law_free(struct law *L)
{
	free(L->cdf);
}

/*
 * Chi-square test on (up to) NB equal-probability bins: bound[i] is the
 * least k with cdf(k) >= i/NB (duplicates merged, as for small s), bin i
 * is (bound[i], bound[i+1]].  @return 1 if the statistic is below the
 * critical value, 0 if not, -1 for a bin expecting fewer than 5 draws.
 */
static int
chi2_equal(const int64_t *x, long n, const struct law *L, double *stat,
    int *df)
{
	long b[NB + 1], nb = 0;
	static long obs[NB + 1];
	static long double p[NB + 1];

	for (int i = 1; i < NB; i++) {
		long lo = -L->R, hi = L->R;

		while (lo < hi) {
			long mid = lo + (hi - lo) / 2;

			if (law_cdf(L, mid) >= (long double)i / NB)
				hi = mid;
			else
				lo = mid + 1;
		}
		if (nb == 0 || lo > b[nb - 1])
			b[nb++] = lo;
	}
	/* bins: (-inf, b0], (b0, b1], ..., (b_{nb-1}, inf) */
	for (long i = 0; i <= nb; i++) {
		long double c1 = i < nb ? law_cdf(L, b[i]) : 1;
		long double c0 = i > 0 ? law_cdf(L, b[i - 1]) : 0;

		p[i] = c1 - c0;
		obs[i] = 0;
	}
	for (long i = 0; i < n; i++) {
		long lo = 0, hi = nb;	/* first i with x <= b[i], else nb */

		while (lo < hi) {
			long mid = (lo + hi) / 2;

			if (x[i] <= b[mid])
				hi = mid;
			else
				lo = mid + 1;
		}
		obs[lo]++;
	}
	for (long i = 0; i <= nb; i++)
		if (p[i] * n < 5)
			return -1;
	*stat = chi2_stat(obs, p, (int)nb + 1, n);
	*df = (int)nb;
	return *stat < chi2_crit(*df);
}

/* Residues of x mod m (m <= 20000) against uniform. */
static int
chi2_mod(const int64_t *x, long n, long m, double *stat)
{
	static long obs[20000];
	static long double p[20000];

	for (long i = 0; i < m; i++) {
		obs[i] = 0;
		p[i] = 1.0L / m;
	}
	for (long i = 0; i < n; i++) {
		long r = (long)(x[i] % m);

		obs[r < 0 ? r + m : r]++;
	}
	*stat = chi2_stat(obs, p, (int)m, n);
	return *stat < chi2_crit((int)m - 1);
}

static int
moments_ok(const int64_t *x, long n, long double s, double *zm, double *zv)
{
	long double a = 0, a2 = 0, var = s * s;

	for (long i = 0; i < n; i++) {
		long double v = (long double)x[i];

		a += v;
		a2 += v * v;
	}
	/* Var of the sample second moment: E X^4 - s^4 = 2 s^4 (to within
	 * e^(-2 pi^2 s^2) for the discrete law). */
	*zm = (double)fabsl(a / n / sqrtl(var / n));
	*zv = (double)fabsl((a2 / n - var) / sqrtl(2 * var * var / n));
	return *zm <= STAT_Z && *zv <= STAT_Z;
}

static int
draw(struct noise_fast *h, struct rng *r, long n)
{
	double tv = 0;

	return noise_fast_sample(h, r, z, (size_t)n, &tv) == 0 && tv > 0;
}

/* ---- parameters and bounds ---- */

/* tau includes the AES-CTR term (noise_fast.h, "Random bits"): at s = 1
 * the table alone is about 2^-123, so the term shows. */
static void
test_aes_term(void)
{
	struct noise_fast *h;
	double t1 = noise_fast_tv_per_sample(1), t2 = noise_fast_tv_per_sample(
	    0x1p24 * 1.4);

	ok(t1 >= 0x1p-117 && t1 < 0x1p-116 && t2 >= 0x1p-117,
	    "tau(1) = 2^%.2f and tau(2^24.5) = 2^%.2f include 4096 / 2^129 = "
	    "2^-117 a sample for the AES-CTR bits", log2(t1), log2(t2));
	/* A key every 4096 blocks: 200 full chunks of 256 samples at L = 1
	 * take 48 blocks each, 9600 blocks, so 3 keys (2 if the stream were
	 * keyed every 8192 blocks, 1 if never re-keyed). */
	if (noise_fast_new(&h, 0x1p10) == 0) {
		struct rng *r = seeded("keys");
		int64_t *k = malloc(51200 * sizeof *k);
		double tv = 0;
		size_t nk;

		(void)noise_fast_test_keys();
		if (k != NULL && noise_fast_test_aes(h, 1) == 1) {
			noise_fast_sample(h, r, k, 51200, &tv);
			nk = noise_fast_test_keys();
			ok(nk == 3, "the AES stream is re-keyed every 4096 "
			    "blocks (3 keys for 9600 blocks, got %zu)", nk);
		} else
			ok(1, "# SKIP re-keying: no AES instructions here");
		free(k);
		rng_free(r);
		noise_fast_free(h);
	} else
		ok(0, "noise_fast_new(2^10)");
	if (noise_fast_new(&h, 1) == 0) {
		int prev = noise_fast_test_aes(h, 0);

		ok(noise_fast_tv(h) == t1 && (prev == 1 || prev == 0),
		    "the charge is the same with ChaCha20 bits (AES %s here)",
		    prev == 1 ? "in use" : "unavailable");
		noise_fast_free(h);
	} else
		ok(0, "noise_fast_new(1)");
}

static void
test_params(void)
{
	struct noise_fast *h;
	struct noise_fast_info in;
	double worst = 0, s;
	int maxl = 0, bad = 0, ident = 1;

	/* 2^10 .. 2^30 in steps of 2^(1/16): at most 3 levels, tiny tau,
	 * the smoothing condition (outer width >= 3, inner = 3K). */
	for (int i = 160; i <= 480; i++) {
		double t;

		s = ldexp(pow(2, (i % 16) / 16.0), i / 16);
		t = noise_fast_tv_per_sample(s);
		if (!(t < 0x1p-100))
			bad++;
		if (t > worst)
			worst = t;
	}
	ok(bad == 0, "tau(s) < 2^-100 for s = 2^10 .. 2^30 (worst 2^%.2f)",
	    log2(worst));
	for (int i = 160; i <= 480; i += 8) {
		long double ls, k2, acc = 0, b2;

		s = ldexp(pow(2, (i % 16) / 16.0), i / 16);
		if (noise_fast_new(&h, s) != 0) {
			bad++;
			continue;
		}
		noise_fast_get_info(h, &in);
		if (in.levels > maxl)
			maxl = in.levels;
		if (noise_fast_tv(h) != noise_fast_tv_per_sample(s))
			bad++;
		if (in.levels > 1) {
			/* s^2 = 9K^2 (1 + .. + K^(2(L-2))) + K^(2(L-1)) b^2,
			 * recomputed here in long double. */
			ls = s;
			k2 = (long double)in.factor * in.factor;
			for (int l = 0; l < in.levels - 1; l++)
				acc = acc * k2 + 9 * k2;
			b2 = ls * ls - acc;
			for (int l = 0; l < in.levels - 1; l++)
				b2 /= k2;
			ident &= fabsl(b2 - (long double)in.outer_width *
			    in.outer_width) <= 1e-12L * b2 &&
			    in.outer_width >= 3 &&
			    in.inner_width == 3.0 * (double)in.factor;
		}
		noise_fast_free(h);
	}
	ok(bad == 0 && maxl <= 3, "handles for 2^10 .. 2^30: tau as predicted, "
	    "at most %d levels", maxl);
	ok(ident, "widths add up to s^2 and satisfy the smoothing condition");

	/* DP-SGD scales: S = ceil(sigma / gamma) in [2^24, 2^25]. */
	bad = 0;
	worst = 0;
	for (int i = 0; i <= 1000; i++) {
		double S = ceil(0x1p24 * (1 + i / 1000.0));
		double t = noise_fast_tv_per_sample(S);

		bad += !(t < 0x1p-100);
		if (t > worst)
			worst = t;
	}
	ok(bad == 0 && worst < 0x1p-60,
	    "tau < 2^-100 (and 2^-60) for every grid scale 2^24..2^25 "
	    "(worst 2^%.2f)", log2(worst));
	{
		static const double sig[] = { 0.37, 1.0, 1.1, 4.0, 1e-3,
			123.456 };

		bad = 0;
		for (size_t c = 0; c < sizeof sig / sizeof sig[0]; c++) {
			if (noise_fast_new_grid(&h, sig[c]) != 0) {
				bad++;
				continue;
			}
			noise_fast_get_info(h, &in);
			bad += !(in.tv < 0x1p-100) ||
			    in.gamma != noise_grid(sig[c]) || in.levels != 3;
			noise_fast_free(h);
		}
		ok(bad == 0, "grid handles: gamma as noise_grid, 3 levels, "
		    "tau < 2^-100");
	}
	ok(isnan(noise_fast_tv_per_sample(0.5)) &&
	    isnan(noise_fast_tv_per_sample(0x1p41)) &&
	    isnan(noise_fast_tv_per_sample(NAN)) &&
	    isnan(noise_fast_tv_per_sample(INFINITY)) &&
	    noise_fast_new(&h, 0.5) == NOISE_E_RANGE && h == NULL &&
	    noise_fast_new(&h, NAN) == NOISE_E_RANGE &&
	    noise_fast_new(&h, 0x1p41) == NOISE_E_RANGE &&
	    noise_fast_new_grid(&h, 0) == NOISE_E_RANGE &&
	    noise_fast_new_grid(&h, -1) == NOISE_E_RANGE &&
	    noise_fast_new_defective(&h, 4096, 99) == NOISE_E_RANGE,
	    "unsupported scales are refused");
	/* (eps, delta) -> (eps, delta + (1 + e^eps) tau). */
	{
		double c1 = noise_fast_delta_charge(1.0, 1e-30);
		double e1 = (1 + exp(1.0)) * 1e-30;
		double c0 = noise_fast_delta_charge(0, 0x1p-100);

		ok(c1 >= e1 && c1 <= e1 * (1 + 1e-14) && c0 >= 0x1p-99 &&
		    c0 <= 0x1p-99 * (1 + 1e-14) &&
		    noise_fast_delta_charge(3, 0) == 0 &&
		    isnan(noise_fast_delta_charge(-1, 1)) &&
		    isnan(noise_fast_delta_charge(1, -1)) &&
		    isnan(noise_fast_delta_charge(NAN, 1)) &&
		    isinf(noise_fast_delta_charge(1000, 1e-300)),
		    "delta charge (1 + e^eps) tau, rounded up: %.17g", c1);
	}
}

/* ---- tables ---- */

/* Sum over x of |table law - folded pmf of N_Z(0, w2)|.  The true value
 * is below 2^-110; what is seen is the rounding of the long double
 * computation here, about 1e-18 (1e-14 under valgrind, which computes
 * long double in double precision), hence the tolerance. */
#define L1_TOL 1e-12L

static long double
table_l1(struct noise_fast *h, int outer, long double w2, int *support)
{
	static long double p[70000];
	long double norm = 0, d = 0;
	long R = (long)(40 * sqrtl(w2)) + 40;
	int T = noise_fast_table_law(h, outer, p, 70000);

	*support = T;
	if (T <= 0)
		return 1;
	for (long x = -R; x <= R; x++)
		norm += expl(-(long double)x * x / (2 * w2));
	for (long x = 0; x < 70000; x++) {
		long double q = x > R ? 0 : (x == 0 ? 1 : 2) *
		    expl(-(long double)x * x / (2 * w2)) / norm;

		d += fabsl(p[x] - q);
	}
	return d;
}

static void
test_tables(void)
{
	static const double ss[] = { 1, 3, 1000.5, 2400, 4096, 0x1p24 };
	struct noise_fast *h;
	struct noise_fast_info in;
	int T;

	for (size_t c = 0; c < sizeof ss / sizeof ss[0]; c++) {
		long double s = ss[c], w2o, d;

		if (noise_fast_new(&h, ss[c]) != 0) {
			ok(0, "noise_fast_new(%g)", ss[c]);
			continue;
		}
		noise_fast_get_info(h, &in);
		w2o = s * s;
		if (in.levels > 1) {
			long double k2 = (long double)in.factor * in.factor;
			long double acc = 0;

			for (int l = 0; l < in.levels - 1; l++)
				acc = acc * k2 + 9 * k2;
			w2o = s * s - acc;
			for (int l = 0; l < in.levels - 1; l++)
				w2o /= k2;
			d = table_l1(h, 0, 9 * k2, &T);
			ok(d < L1_TOL, "s = %g: inner table (width %g, %d "
			    "values) has the exact law: L1 distance %.2Lg",
			    ss[c], in.inner_width, T, d);
		}
		d = table_l1(h, 1, w2o, &T);
		ok(d < L1_TOL, "s = %g: outer table (width %.6g, %d values) "
		    "has the exact law: L1 distance %.2Lg", ss[c],
		    in.outer_width, T, d);
		noise_fast_free(h);
	}
	/* The same check sees a truncated table. */
	if (noise_fast_new_defective(&h, 4096,
	    NOISE_FAST_DEFECT_TRUNCATE) == 0) {
		long double d;

		noise_fast_get_info(h, &in);
		d = table_l1(h, 0, 9.0L * in.factor * in.factor, &T);
		ok(d > 0.01L, "broken: a table cut at 1.5 widths is caught "
		    "(L1 distance %.3Lg)", d);
		noise_fast_free(h);
	} else
		ok(0, "defective handle");
}

/* ---- the sampler's law ---- */

static void
check_law(struct noise_fast *h, struct rng *r, double s, const char *what,
    int expect)
{
	struct law L;
	double st = 0;
	int df = 0, good;

	law_init(&L, s);
	good = draw(h, r, N) ? chi2_equal(z, N, &L, &st, &df) : -2;
	ok(good == expect, "%s s = %.10g: chi2 %.1f %s %.1f (%d df)%s", what, s,
	    st, good == 1 ? "<" : ">=", chi2_crit(df), df,
	    expect ? "" : ": caught");
	law_free(&L);
}

static void
test_law(void)
{
	static const double ss[] = { 1, 3, 0x1p10, 2400, 0x1p12, 3000.7,
		0x1p16, 1234567.890123, 0x1p22, 0x1p24 + 1, 0x1p30 };
	struct rng *r = seeded("fast law");
	struct noise_fast *h;
	struct noise_fast_info in;

	for (size_t c = 0; c < sizeof ss / sizeof ss[0]; c++) {
		char what[32];

		if (noise_fast_new(&h, ss[c]) != 0) {
			ok(0, "noise_fast_new(%g)", ss[c]);
			continue;
		}
		noise_fast_get_info(h, &in);
		snprintf(what, sizeof what, "fast (L=%d)", in.levels);
		check_law(h, r, ss[c], what, 1);
		noise_fast_free(h);
	}
	/* The bulk bits from ChaCha20 (CPUs without AES instructions) give
	 * the same law. */
	for (size_t c = 8; c < 10; c++) {
		if (noise_fast_new(&h, ss[c]) != 0) {
			ok(0, "noise_fast_new(%g)", ss[c]);
			continue;
		}
		noise_fast_test_aes(h, 0);
		check_law(h, r, ss[c], "fast, ChaCha20 bits (L=3)", 1);
		noise_fast_free(h);
	}
	/* Residues: X mod K is uniform if level 0 smooths K Z (Z_0 of width
	 * 3K), X mod K^2 if level 1 smooths K^2 Z too. */
	{
		double st = 0;
		int good;

		noise_fast_new(&h, 0x1p12);
		noise_fast_get_info(h, &in);
		good = draw(h, r, N) && chi2_mod(z, N, (long)in.factor, &st);
		ok(good && in.levels == 2, "s = 2^12: X mod K=%llu is uniform "
		    "(chi2 %.1f < %.1f)", (unsigned long long)in.factor, st,
		    chi2_crit((int)in.factor - 1));
		noise_fast_free(h);
		noise_fast_new(&h, 0x1p22);
		noise_fast_get_info(h, &in);
		good = draw(h, r, N) && chi2_mod(z, N,
		    (long)(in.factor * in.factor), &st);
		ok(good && in.levels == 3, "s = 2^22: X mod K^2=%llu is "
		    "uniform (chi2 %.1f < %.1f)",
		    (unsigned long long)(in.factor * in.factor), st,
		    chi2_crit((int)(in.factor * in.factor) - 1));
		noise_fast_free(h);
	}
	/* Moments at the DP-SGD scale. */
	{
		double zm = 0, zv = 0;
		int good;

		noise_fast_new(&h, 0x1p24);
		good = draw(h, r, 2 * N);
		ok(good && moments_ok(z, 2 * N, 0x1p24L, &zm, &zv),
		    "s = 2^24: mean z %.2f, variance z %.2f (|z| <= 5; the "
		    "variance to 0.4%%)", zm, zv);
		noise_fast_free(h);
	}
	rng_free(r);
}

/* Deliberately broken samplers fail the same tests. */
static void
test_defects(void)
{
	struct rng *r = seeded("fast defects");
	struct noise_fast *h;
	struct noise_fast_info in;
	double st = 0;
	int good;

	if (noise_fast_new_defective(&h, 0x1p12,
	    NOISE_FAST_DEFECT_FACTOR) == 0) {
		check_law(h, r, 0x1p12, "broken (factor K + 1)", 0);
		noise_fast_free(h);
	}
	if (noise_fast_new_defective(&h, 0x1p12,
	    NOISE_FAST_DEFECT_TRUNCATE) == 0) {
		check_law(h, r, 0x1p12, "broken (tables cut at 1.5 widths)", 0);
		noise_fast_free(h);
	}
	if (noise_fast_new_defective(&h, 0x1p12,
	    NOISE_FAST_DEFECT_SMOOTHING) == 0) {
		noise_fast_get_info(h, &in);
		good = draw(h, r, N) && chi2_mod(z, N, (long)in.factor, &st);
		ok(!good, "broken (inner width K/3): X mod K is not uniform, "
		    "caught (chi2 %.1f >= %.1f); its TV bound says so: %.3g",
		    st, chi2_crit((int)in.factor - 1), in.tv);
		noise_fast_free(h);
	}
	rng_free(r);
}

/* ---- grid noise ---- */

/* round(x / gamma), ties to even, computed independently. */
static long double
ref_round(double x, double g)
{
	long double v = (long double)x / g, f = floorl(v), d = v - f;

	if (d > 0.5L || (d == 0.5L && fmodl(f, 2) != 0))
		f += 1;
	return f;
}

static void
test_grid(void)
{
	static double x[N], y[N];
	static float xf[N];
	struct rng *r = seeded("fast grid"), *r1, *r2;
	struct noise_fast *h;
	struct noise_fast_info in;
	double sigma = 0.37, g = noise_grid(sigma), tv = 0, tau, st = 0;
	int df = 1, good, integral = 1;
	struct law L;

	if (noise_fast_new_grid(&h, sigma) != 0) {
		ok(0, "noise_fast_new_grid");
		return;
	}
	noise_fast_get_info(h, &in);
	tau = in.tv;
	/* Noise on zeros, in grid units, against N_Z(0, S^2). */
	memset(x, 0, sizeof x);
	good = noise_fast_add(h, r, x, N, &tv) == 0;
	for (long i = 0; i < N; i++) {
		z[i] = (int64_t)(x[i] / g);
		integral &= (double)z[i] * g == x[i];
	}
	law_init(&L, ceil(sigma / g));
	good = good && integral && chi2_equal(z, N, &L, &st, &df) == 1;
	ok(good, "noise_fast_add: grid multiples, N_Z(0, S^2) with S = "
	    "ceil(sigma/gamma) = %.0f: chi2 %.1f < %.1f", ceil(sigma / g), st,
	    chi2_crit(df));
	law_free(&L);
	ok(tv >= N * tau && tv <= N * tau * (1 + 1e-12),
	    "tv_out accumulates n * tau (%.4g)", tv);

	/* The grid point of each value is round(x / gamma), ties to even:
	 * noised(x) - noised(0) under the same stream, in grid units. */
	{
		static const double v[] = { 0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5,
			0.49999999999, 0.5000000001, -7.25, 123456.5, -123456.5,
			0x1p52, -0x1p52 - 2, 0x1p52 + 1.5, 1e-310, -1e-310,
			3.75 };
		size_t nv = sizeof v / sizeof v[0];
		double a[32], b[32];
		int same = 1;

		r1 = seeded("ties");
		r2 = seeded("ties");
		for (size_t i = 0; i < nv; i++) {
			a[i] = v[i] * g;
			b[i] = 0;
		}
		noise_fast_add(h, r1, a, nv, &tv);
		noise_fast_add(h, r2, b, nv, &tv);
		for (size_t i = 0; i < nv; i++)
			same &= (long double)a[i] / g - (long double)b[i] / g ==
			    ref_round(v[i] * g, g);
		ok(same, "values go to the nearest grid point, ties to even");
		rng_free(r1);
		rng_free(r2);
		/* and noise_add_dgauss places them at the same points */
		for (size_t i = 0; i < nv; i++) {
			double u[1] = { v[i] * g }, w[1] = { 0 };
			struct rng *q1 = seeded("one"), *q2 = seeded("one");

			noise_add_dgauss(q1, u, 1, sigma, 0);
			noise_add_dgauss(q2, w, 1, sigma, 0);
			same &= (long double)u[0] / g - (long double)w[0] / g ==
			    ref_round(v[i] * g, g);
			rng_free(q1);
			rng_free(q2);
		}
		ok(same, "noise_add_dgauss rounds them the same way");
	}

	/* float variant: the float of exactly the double result. */
	{
		struct rng *q = seeded("floats");
		int eq = 1;

		for (long i = 0; i < 10000; i++) {
			xf[i] = (float)((double)(rng_u64(q) >> 11) * 0x1p-50 -
			    4);
			y[i] = (double)xf[i];
		}
		rng_free(q);
		r1 = seeded("f32");
		r2 = seeded("f32");
		good = noise_fast_add_f32(h, r1, xf, 10000, &tv) == 0 &&
		    noise_fast_add(h, r2, y, 10000, &tv) == 0;
		for (long i = 0; i < 10000; i++)
			eq &= xf[i] == (float)y[i];
		ok(good && eq, "noise_fast_add_f32 gives (float) of the double "
		    "result");
		rng_free(r1);
		rng_free(r2);
	}
	/* one-shot forms equal the handle */
	{
		double a[1000] = { 0 }, b[1000] = { 0 }, t1 = 0, t2 = 0;
		float fa[1000] = { 0 }, fb[1000] = { 0 };

		r1 = seeded("oneshot");
		r2 = seeded("oneshot");
		good = noise_fast_add_dgauss(r1, a, 1000, sigma, &t1) == 0 &&
		    noise_fast_add(h, r2, b, 1000, &t2) == 0 &&
		    noise_fast_add_dgauss_f32(r1, fa, 1000, sigma, &t1) == 0 &&
		    noise_fast_add_f32(h, r2, fb, 1000, &t2) == 0;
		ok(good && memcmp(a, b, sizeof a) == 0 &&
		    memcmp(fa, fb, sizeof fa) == 0 && t1 == t2,
		    "the one-shot forms equal the handle (reproducibly)");
		rng_free(r1);
		rng_free(r2);
	}
	/* errors */
	{
		double a[3] = { 1, NAN, 2 }, b[2] = { 0, 1e300 };
		float fbig[100];
		struct noise_fast *plain;
		int64_t k;

		ok(noise_fast_add(h, r, a, 3, &tv) == NOISE_E_RANGE &&
		    noise_fast_add(h, r, b, 2, &tv) == NOISE_E_OVERFLOW,
		    "a NaN is refused; beyond 2^62 grid steps fails closed");
		a[1] = INFINITY;
		ok(noise_fast_add(h, r, a, 3, &tv) == NOISE_E_RANGE &&
		    noise_fast_add(h, r, a, 3, NULL) == NOISE_E_RANGE &&
		    noise_fast_sample(h, r, &k, 1, NULL) == NOISE_E_RANGE &&
		    noise_fast_add_dgauss(r, b, 1, sigma, NULL) ==
		    NOISE_E_RANGE &&
		    noise_fast_add_dgauss(r, b, 1, 0, &tv) == NOISE_E_RANGE,
		    "infinity, a missing tv_out and a bad sigma are refused");
		{
			double big[2] = { 0, 1e308 }, big2[2] = { 0, 1e308 };
			struct noise_fast *tiny;

			noise_fast_new_grid(&tiny, 1e-3);
			ok(noise_fast_add(tiny, r, big, 2, &tv) ==
			    NOISE_E_OVERFLOW && noise_add_dgauss(r, big2, 2,
			    1e-3, 0) == NOISE_E_OVERFLOW, "a finite value "
			    "whose x / gamma overflows is an overflow (as "
			    "exact)");
			noise_fast_free(tiny);
		}
		{
			double t0 = tv;

			ok(noise_fast_add(h, r, b, 0, &tv) == 0 && tv == t0,
			    "adding to no values charges nothing");
		}
		noise_fast_new(&plain, 100);
		ok(noise_fast_add(plain, r, b, 1, &tv) == NOISE_E_RANGE &&
		    noise_fast_table_law(plain, 0, NULL, 0) == NOISE_E_RANGE,
		    "a handle without a grid cannot add grid noise");
		noise_fast_free(plain);
		noise_fast_free(NULL);
		for (int i = 0; i < 100; i++)
			fbig[i] = FLT_MAX;
		ok(noise_fast_add_dgauss_f32(r, fbig, 100, 1e37, &tv) ==
		    NOISE_E_OVERFLOW, "a float beyond FLT_MAX fails closed");
	}
	noise_fast_free(h);
	rng_free(r);
}

/*
 * The vector draws (AVX-512F gathers, and VBMI byte permutes for L <= 4)
 * against the scalar code: the same stream must give the same values and
 * leave the stream at the same place, at every level count, for lengths
 * that are not multiples of 16 or of the block.  About 3 in 1000 samples
 * at these scales have a tied draw (which the vector code redoes in
 * scalar, reading on from the stream), so each comparison covers
 * hundreds of ties.
 */
static void
test_simd(void)
{
	static const double ss[] = { 100, 2400, 0x1p12, 0x1p16, 0x1p20,
		0x1p24, 0x1.6p24, 0x1p25, 0x1p30, 0x1p34, 0x1p38, 0x1p40 };
	const long n = 100003;
	int64_t *a = z, *b = z + N;
	int levels_seen = 0;

	for (int mode = 1; mode <= 2; mode++) {
		int same = 1, ran = 0;

		for (size_t c = 0; c < sizeof ss / sizeof ss[0]; c++) {
			struct noise_fast *h;
			struct noise_fast_info in;
			struct rng *r1, *r2;
			double t1 = 0, t2 = 0;

			if (noise_fast_new(&h, ss[c]) != 0) {
				ok(0, "noise_fast_new(%g)", ss[c]);
				continue;
			}
			if (noise_fast_test_simd(h, mode) < 0) {
				noise_fast_free(h);
				break;
			}
			noise_fast_get_info(h, &in);
			levels_seen |= 1 << in.levels;
			r1 = seeded("simd");
			r2 = seeded("simd");
			noise_fast_test_simd(h, 0);
			same &= noise_fast_sample(h, r1, a, (size_t)n, &t1) == 0;
			noise_fast_test_simd(h, mode);
			same &= noise_fast_sample(h, r2, b, (size_t)n, &t2) == 0;
			same &= memcmp(a, b, (size_t)n * sizeof *a) == 0 &&
			    t1 == t2 && rng_u64(r1) == rng_u64(r2);
			/* short calls: the tail and a single group */
			for (size_t k = 1; k <= 40; k += 13) {
				noise_fast_test_simd(h, 0);
				noise_fast_sample(h, r1, a, k, &t1);
				noise_fast_test_simd(h, mode);
				noise_fast_sample(h, r2, b, k, &t2);
				same &= memcmp(a, b, k * sizeof *a) == 0;
			}
			same &= rng_u64(r1) == rng_u64(r2);
			rng_free(r1);
			rng_free(r2);
			noise_fast_free(h);
			ran = 1;
		}
		if (!ran) {
			ok(1, "# SKIP %s draws: not supported on this CPU",
			    mode == 1 ? "AVX-512F" : "AVX-512 VBMI");
			continue;
		}
		ok(same && levels_seen == 0x1e, "%s draws equal the scalar code "
		    "and leave the stream at the same place (L = 1..4)",
		    mode == 1 ? "AVX-512F gather" : "AVX-512 VBMI permute");
	}
}

/* noise_fast_grid_noise is noise_fast_add on zeros, scalar or not. */
static void
test_grid_noise(void)
{
	static double x[N], y[N];
	const long n = 70001;
	struct noise_fast *h, *plain;
	double t1 = 0, t2 = 0;
	int same = 1;

	if (noise_fast_new_grid(&h, 0.37) != 0) {
		ok(0, "noise_fast_new_grid");
		return;
	}
	for (int mode = 0; mode <= 2; mode++) {
		struct rng *r1 = seeded("grid noise"), *r2 = seeded("grid noise");

		if (noise_fast_test_simd(h, mode) < 0) {
			rng_free(r1);
			rng_free(r2);
			break;
		}
		memset(x, 0, (size_t)n * sizeof *x);
		same &= noise_fast_add(h, r1, x, (size_t)n, &t1) == 0 &&
		    noise_fast_grid_noise(h, r2, y, (size_t)n, &t2) == 0 &&
		    memcmp(x, y, (size_t)n * sizeof *x) == 0 && t1 == t2 &&
		    rng_u64(r1) == rng_u64(r2);
		rng_free(r1);
		rng_free(r2);
	}
	ok(same, "noise_fast_grid_noise gives noise_fast_add's values on "
	    "zeros, bit for bit, with the same charge");
	noise_fast_new(&plain, 100);
	ok(noise_fast_grid_noise(plain, NULL, y, 1, &t1) == NOISE_E_RANGE &&
	    noise_fast_grid_noise(h, NULL, y, 1, NULL) == NOISE_E_RANGE,
	    "noise_fast_grid_noise needs a grid handle and tv_out");
	noise_fast_free(plain);
	noise_fast_free(h);
}

int
main(void)
{
	test_params();
	test_aes_term();
	test_tables();
	test_law();
	test_defects();
	test_grid();
	test_simd();
	test_grid_noise();
	return tap_done();
}
