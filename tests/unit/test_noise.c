/*
 * Unit tests of the exact samplers: each against its pmf, computed here
 * independently in long double from the closed form, by chi-square
 * goodness of fit plus mean and variance z-scores.  Critical values and
 * false-failure rates (<= 1e-6 per check for a random seed) are in
 * stat.h; seeds are fixed, so every run is the same.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "noise.h"
#include "rng.h"
#include "stat.h"
#include "tap.h"

#define N 200000L		/* draws per distribution check */
#define MAXB 4096

static struct rng *
seeded(const char *item)
{
	struct rng *r;

	if (rng_new_seeded(&r, 20240611, item) != 0)
		abort();
	return r;
}

/* |z| of a binomial count against p. */
static double
binom_z(long k, long n, long double p)
{
	long double sd = sqrtl(n * p * (1 - p));

	return sd == 0 ? (k == (long)llroundl(n * p) ? 0 : 1e9) :
	    (double)fabsl((k - n * p) / sd);
}

static void
test_bernoulli(void)
{
	static const uint64_t q[][2] = { { 1, 3 }, { 2, 7 }, { 999, 1000 },
		{ 0, 5 }, { 5, 5 }, { 1, UINT64_C(3) << 40 } };
	struct rng *r = seeded("bernoulli");

	for (size_t c = 0; c < sizeof q / sizeof q[0]; c++) {
		long k = 0;
		int bad = 0;

		for (long i = 0; i < N; i++) {
			int b = noise_bernoulli(r, q[c][0], q[c][1]);

			bad |= b != 0 && b != 1;
			k += b;
		}
		ok(!bad && binom_z(k, N, (long double)q[c][0] / q[c][1]) <= STAT_Z,
		    "bernoulli(%llu/%llu): %ld of %ld", (unsigned long long)q[c][0],
		    (unsigned long long)q[c][1], k, N);
	}
	ok(noise_bernoulli(r, 2, 1) == NOISE_E_RANGE &&
	    noise_bernoulli(r, 0, 0) == NOISE_E_RANGE,
	    "bernoulli rejects p > 1 and a zero denominator");
	rng_free(r);
}

static void
test_bernoulli_exp(void)
{
	static const uint64_t q[][2] = { { 1, 10 }, { 1, 2 }, { 1, 1 },
		{ 3, 2 }, { 7, 3 }, { 5, 1 }, { 123456789, 100000000 },
		{ UINT64_C(1) << 62, UINT64_C(1) << 61 } };
	struct rng *r = seeded("bernoulli_exp");
	long k;

	for (size_t c = 0; c < sizeof q / sizeof q[0]; c++) {
		long double p = expl(-(long double)q[c][0] / q[c][1]);

		k = 0;
		for (long i = 0; i < N; i++)
			k += noise_bernoulli_exp(r, q[c][0], q[c][1]);
		ok(binom_z(k, N, p) <= STAT_Z,
		    "bernoulli_exp(%llu/%llu): %ld of %ld, expected %.1Lf",
		    (unsigned long long)q[c][0], (unsigned long long)q[c][1],
		    k, N, N * p);
	}
	k = 0;
	for (long i = 0; i < N; i++)
		k += noise_bernoulli_exp(r, 0, 7);
	ok(k == N, "bernoulli_exp(0) is always 1");
	/* exp(-20) N = 4e-4 expected; P[count >= 4] < 1e-14. */
	k = 0;
	for (long i = 0; i < N; i++)
		k += noise_bernoulli_exp(r, 20, 1);
	ok(k <= 3, "bernoulli_exp(20): %ld successes", k);
	k = 0;
	for (long i = 0; i < 1000; i++)
		k += noise_bernoulli_exp(r, UINT64_MAX, 1);
	ok(k == 0, "bernoulli_exp(2^64-1) is 0 and returns");
	ok(noise_bernoulli_exp(r, 1, 0) == NOISE_E_RANGE,
	    "bernoulli_exp rejects a zero denominator");
	rng_free(r);
}

/*
 * Chi-square test of integer samples against a pmf given by bin
 * probabilities: the bins are the integers lo..hi (inclusive), one per
 * integer when width is 1, or consecutive runs of `width` integers, plus
 * the two tails (< lo, > hi).  cdf(k) must give P[Z <= k].
 */
typedef long double (*cdf_fn)(long k, const void *arg);

static int
chi2_check(const int64_t *z, long n, long lo, long hi, long width,
    cdf_fn cdf, const void *arg, double *stat, int *df)
{
	static long obs[MAXB];
	static long double p[MAXB];
	int nb = 0;
	long double prev = cdf(lo - 1, arg);

	hi = lo + (hi - lo + width) / width * width - 1;	/* whole bins */
	p[nb++] = prev;
	for (long a = lo; a <= hi; a += width) {
		long b = a + width - 1 > hi ? hi : a + width - 1;
		long double c = cdf(b, arg);

		p[nb++] = c - prev;
		prev = c;
	}
	p[nb++] = 1 - prev;
	memset(obs, 0, sizeof obs);
	for (long i = 0; i < n; i++) {
		long v = (long)z[i];

		if (v < lo)
			obs[0]++;
		else if (v > hi)
			obs[nb - 1]++;
		else
			obs[1 + (v - lo) / width]++;
	}
	for (int i = 0; i < nb; i++)
		if (p[i] * n < 5)
			return -1;	/* a badly chosen binning: fail loudly */
	*stat = chi2_stat(obs, p, nb, n);
	*df = nb - 1;
	return *stat < chi2_crit(*df);
}

/* Mean and variance z-scores given the true variance and fourth moment
 * (mean 0 for all the symmetric laws here). */
static int
moments_ok(const int64_t *z, long n, long double var, long double m4,
    double *zm, double *zv)
{
	long double s = 0, s2 = 0;

	for (long i = 0; i < n; i++) {
		long double v = (long double)z[i];

		s += v;
		s2 += v * v;
	}
	*zm = (double)fabsl(s / n / sqrtl(var / n));
	*zv = (double)fabsl((s2 / n - var) / sqrtl((m4 - var * var) / n));
	return *zm <= STAT_Z && *zv <= STAT_Z;
}

/* ---- discrete Laplace ---- */

struct lap {
	long double b;
};

/* P[Z >= k] = e^(-k/b) / (1 + e^(-1/b)) for k >= 1, symmetric. */
static long double
lap_cdf(long k, const void *arg)
{
	long double b = ((const struct lap *)arg)->b, q = expl(-1 / b);

	if (k < 0)
		return expl(-(long double)(-k) / b) / (1 + q);
	return 1 - expl(-(long double)(k + 1) / b) / (1 + q);
}

static void
test_dlaplace(void)
{
	static const uint64_t sc[][2] = { { 1, 1 }, { 3, 2 }, { 1, 3 },
		{ 10, 1 }, { 1u << 20, 1 }, { 1000001, 7 } };
	static int64_t z[N];
	struct rng *r = seeded("dlaplace");

	for (size_t c = 0; c < sizeof sc / sizeof sc[0]; c++) {
		struct lap L = { (long double)sc[c][0] / sc[c][1] };
		long double q = expl(-1 / L.b), var, m4;
		long span, width;
		double st, zm, zv;
		int df, rc = 0, good;

		for (long i = 0; i < N && rc == 0; i++)
			rc = noise_dlaplace(r, sc[c][0], sc[c][1], &z[i]);
		/* Var = 2q/(1-q)^2, E Z^4 = 2q(1 + 10q + q^2)/(1-q)^4. */
		var = 2 * q / ((1 - q) * (1 - q));
		m4 = 2 * q * (1 + 10 * q + q * q) / powl(1 - q, 4);
		span = (long)ceill(4 * L.b);
		width = span / 40 + 1;
		good = chi2_check(z, N, -span, span, width, lap_cdf, &L, &st, &df);
		ok(rc == 0 && good == 1,
		    "dlaplace(scale %llu/%llu): chi2 %.1f < %.1f (%d df)",
		    (unsigned long long)sc[c][0], (unsigned long long)sc[c][1],
		    st, chi2_crit(df), df);
		ok(moments_ok(z, N, var, m4, &zm, &zv),
		    "dlaplace(scale %llu/%llu): mean z %.2f, variance z %.2f",
		    (unsigned long long)sc[c][0], (unsigned long long)sc[c][1], zm, zv);
	}
	ok(noise_dlaplace(r, 0, 1, &z[0]) == NOISE_E_RANGE &&
	    noise_dlaplace(r, 1, 0, &z[0]) == NOISE_E_RANGE,
	    "dlaplace rejects a zero scale or denominator");
	{
		int over = 0, bad = 0;

		for (int i = 0; i < 200; i++) {
			int64_t v = 12345;
			int rc = noise_dlaplace(r, UINT64_MAX, 1, &v);

			over += rc == NOISE_E_OVERFLOW;
			bad |= rc != 0 && rc != NOISE_E_OVERFLOW;
		}
		ok(over > 0 && !bad,
		    "dlaplace fails closed when a draw exceeds 64 bits (%d of 200)", over);
	}
	rng_free(r);
}

/* ---- discrete Gaussian ---- */

struct gauss {
	long double s2;		/* sigma^2 */
	long double norm;	/* sum over Z of exp(-k^2/(2 s2)), 0 if large */
	long K;
};

static long double
dg_cdf(long k, const void *arg)
{
	const struct gauss *g = arg;
	long double s = 0;

	if (g->norm == 0)	/* sigma >= 1000: continuity-corrected normal
				 * CDF; Euler-Maclaurin puts the error near
				 * 1/(24 sigma^2) < 1e-7 per bin */
		return 0.5L * erfcl(-(k + 0.5L) / sqrtl(2 * g->s2));
	for (long j = -g->K; j <= k; j++)
		s += expl(-(long double)j * j / (2 * g->s2));
	return s / g->norm;
}

static void
gauss_init(struct gauss *g, long double s2)
{
	long double sd = sqrtl(s2);

	g->s2 = s2;
	g->norm = 0;
	g->K = (long)(40 * sd) + 40;
	if (sd < 1000)
		for (long j = -g->K; j <= g->K; j++)
			g->norm += expl(-(long double)j * j / (2 * s2));
}

/* Exact variance and fourth moment from the pmf (or the normal ones). */
static void
gauss_moments(const struct gauss *g, long double *var, long double *m4)
{
	long double v = 0, f = 0;

	if (g->norm == 0) {
		*var = g->s2;
		*m4 = 3 * g->s2 * g->s2;
		return;
	}
	for (long j = -g->K; j <= g->K; j++) {
		long double p = expl(-(long double)j * j / (2 * g->s2)) / g->norm;

		v += p * j * j;
		f += p * j * j * (long double)j * j;
	}
	*var = v;
	*m4 = f;
}

static void
check_dg(struct noise_dg *g, struct rng *r, long double s2, const char *what)
{
	static int64_t z[N];
	struct gauss G;
	long double var, m4, sd = sqrtl(s2);
	long span, width;
	double st, zm, zv;
	int df, rc = 0, good;

	for (long i = 0; i < N && rc == 0; i++)
		rc = noise_dg_sample(g, r, &z[i]);
	gauss_init(&G, s2);
	gauss_moments(&G, &var, &m4);
	/* Inner bins up to 3.5 sigma, fewer if the tail bins would
	 * expect fewer than 10 draws. */
	span = (long)floorl(3.5L * sd);
	while (span > 0 && N * (1 - dg_cdf(span, &G)) < 10)
		span--;
	width = span / 40 + 1;
	good = chi2_check(z, N, -span, span, width, dg_cdf, &G, &st, &df);
	ok(rc == 0 && good == 1, "dgauss(%s): chi2 %.1f < %.1f (%d df)", what,
	    st, chi2_crit(df), df);
	ok(moments_ok(z, N, var, m4, &zm, &zv),
	    "dgauss(%s): mean z %.2f, variance z %.2f", what, zm, zv);
}

static void
test_dgauss(void)
{
	static const uint64_t q[][2] = { { 1, 1 }, { 25, 1 }, { 2, 1 },
		{ 9, 4 }, { 1, 4 }, { 1000, 3 }, { UINT64_C(1) << 40, 1 } };
	struct rng *r = seeded("dgauss");
	struct noise_dg *g;
	char what[64];
	int64_t v;

	for (size_t c = 0; c < sizeof q / sizeof q[0]; c++) {
		if (noise_dg_new(&g, q[c][0], q[c][1]) != 0) {
			ok(0, "noise_dg_new");
			continue;
		}
		snprintf(what, sizeof what, "sigma^2 %llu/%llu",
		    (unsigned long long)q[c][0], (unsigned long long)q[c][1]);
		check_dg(g, r, (long double)q[c][0] / q[c][1], what);
		noise_dg_free(g);
	}
	{
		static const double sig[] = { 1.3, 0.7, 1234567.890123 };

		for (size_t c = 0; c < sizeof sig / sizeof sig[0]; c++) {
			noise_dg_new_sigma(&g, sig[c]);
			snprintf(what, sizeof what, "sigma %.17g exact", sig[c]);
			check_dg(g, r, (long double)sig[c] * sig[c], what);
			noise_dg_free(g);
		}
	}
	ok(noise_dg_new(&g, 0, 1) == NOISE_E_RANGE && g == NULL &&
	    noise_dg_new(&g, 1, 0) == NOISE_E_RANGE &&
	    noise_dg_new_sigma(&g, 0) == NOISE_E_RANGE &&
	    noise_dg_new_sigma(&g, -1) == NOISE_E_RANGE &&
	    noise_dg_new_sigma(&g, NAN) == NOISE_E_RANGE &&
	    noise_dg_new_sigma(&g, INFINITY) == NOISE_E_RANGE &&
	    noise_dg_new_sigma(&g, 0x1p62) == NOISE_E_RANGE,
	    "discrete Gaussian rejects zero, negative, non-finite and huge sigma");
	ok(noise_dgauss(r, 4, 1, &v) == 0 && noise_dgauss(r, 0, 1, &v) ==
	    NOISE_E_RANGE, "noise_dgauss one-shot");
	rng_free(r);
}

/* ---- grid noise ---- */

static void
test_grid_basics(void)
{
	struct rng *r = seeded("grid");
	double g = 0x1p-24, a[6], b[6], x[1];
	int same;

	ok(noise_grid(1.0) == 0x1p-24 && noise_grid(1.5) == 0x1p-24 &&
	    noise_grid(0.37) == 0x1p-26 && noise_grid(3.0) == 0x1p-23 &&
	    noise_grid(1e6) == 0x1p-5,
	    "noise_grid is 2^(floor(log2 s) - 24)");
	ok(noise_grid(0) == 0 && noise_grid(-1) == 0 && noise_grid(NAN) == 0 &&
	    noise_grid(INFINITY) == 0 && noise_grid(1e-305) == 0,
	    "noise_grid refuses bad scales");

	/* Rounding is the only thing that depends on x: inputs with the
	 * same nearest grid point (ties to even) give identical outputs
	 * under identical streams. */
	{
		double in1[6] = { 2.5 * g, 3.5 * g, -2.5 * g, 2.5 * g + 0x1p-60,
			0.49 * g, 1e-310 };
		double in2[6] = { 2 * g, 4 * g, -2 * g, 3 * g, 0, 0 };
		struct rng *r1 = seeded("ties"), *r2 = seeded("ties");

		memcpy(a, in1, sizeof a);
		memcpy(b, in2, sizeof b);
		noise_add_dgauss(r1, a, 6, 1.0, 0);
		noise_add_dgauss(r2, b, 6, 1.0, 0);
		same = memcmp(a, b, sizeof a) == 0;
		rng_free(r1);
		rng_free(r2);
		r1 = seeded("ties");
		r2 = seeded("ties");
		memcpy(a, in1, sizeof a);
		memcpy(b, in2, sizeof b);
		b[0] = 3 * g;		/* a different grid point */
		noise_add_dgauss(r1, a, 6, 1.0, 0);
		noise_add_dgauss(r2, b, 6, 1.0, 0);
		ok(same && a[0] != b[0] && memcmp(a + 1, b + 1, 5 * sizeof *a) == 0,
		    "values are rounded to the nearest grid point, ties to even");
		rng_free(r1);
		rng_free(r2);
	}
	x[0] = 1e300;
	ok(noise_add_dgauss(r, x, 1, 1.0, 0) == NOISE_E_OVERFLOW,
	    "a value beyond 2^62 grid steps fails closed");
	x[0] = NAN;
	ok(noise_add_dgauss(r, x, 1, 1.0, 0) == NOISE_E_RANGE &&
	    noise_add_dlaplace(r, x, 1, 1.0, 0) == NOISE_E_RANGE,
	    "a NaN value is refused");
	x[0] = 0;
	ok(noise_add_dgauss(r, x, 1, 0, 0) == NOISE_E_RANGE &&
	    noise_add_dgauss(r, x, 1, NAN, 0) == NOISE_E_RANGE &&
	    noise_add_dlaplace(r, x, 1, -1, 0) == NOISE_E_RANGE,
	    "grid noise refuses bad scales");
	x[0] = DBL_MAX / 2;
	ok(noise_add_dgauss(r, x, 1, 1e300, 0) == 0 && isfinite(x[0]),
	    "a huge scale works when the result is finite");

	/* Sensitivity inflation: L2 1 + 2^-24 * 1000 for d = 10^6. */
	{
		double l2 = noise_sens_l2(1, g, 1000000), l1 = noise_sens_l1(2, g, 1000);
		double e2 = 1 + g * 1000, e1 = 2 + g * 1000;

		ok(l2 >= e2 && l2 - e2 < 1e-14 && l1 >= e1 && l1 - e1 < 1e-14,
		    "effective sensitivities: L2 %.17g, L1 %.17g", l2, l1);
		ok(isnan(noise_sens_l2(-1, g, 3)) && isnan(noise_sens_l1(1, NAN, 3)),
		    "effective sensitivity rejects bad arguments");
	}
	ok(noise_fast_tv_bound(1.0, 1000000) == 0 &&
	    isnan(noise_fast_tv_bound(0, 1)),
	    "the fast path is exact: TV bound 0");
	rng_free(r);
}

/* Noise added to zeros, in grid units, against its law. */
static void
test_grid_laws(void)
{
	static double x[N];
	static int64_t z[N];
	struct rng *r = seeded("grid laws");
	double sigma = 0.37, g = noise_grid(sigma), st, zm, zv;
	struct gauss G;
	struct lap L;
	long double var, m4, s;
	int df, rc, integral = 1;

	for (int exact = 0; exact < 2; exact++) {
		memset(x, 0, sizeof x);
		rc = noise_add_dgauss(r, x, N, sigma, exact ? NOISE_EXACT_SCALE : 0);
		for (long i = 0; i < N; i++) {
			z[i] = (int64_t)(x[i] / g);
			integral &= (double)z[i] * g == x[i];
		}
		s = exact ? (long double)sigma / g : ceill((long double)sigma / g);
		gauss_init(&G, s * s);
		gauss_moments(&G, &var, &m4);
		ok(rc == 0 && integral && chi2_check(z, N, (long)(-3.5 * s),
		    (long)(3.5 * s), (long)(s / 6), dg_cdf, &G, &st, &df) == 1 &&
		    moments_ok(z, N, var, m4, &zm, &zv),
		    "noise_add_dgauss(%s): N_Z(0, S^2) in grid units, chi2 %.1f < %.1f",
		    exact ? "exact scale" : "scale rounded up", st, chi2_crit(df));
	}
	for (int exact = 0; exact < 2; exact++) {
		memset(x, 0, sizeof x);
		rc = noise_add_dlaplace(r, x, N, sigma, exact ? NOISE_EXACT_SCALE : 0);
		for (long i = 0; i < N; i++) {
			z[i] = (int64_t)(x[i] / g);
			integral &= (double)z[i] * g == x[i];
		}
		L.b = exact ? (long double)sigma / g : ceill((long double)sigma / g);
		s = expl(-1 / L.b);
		var = 2 * s / ((1 - s) * (1 - s));
		m4 = 2 * s * (1 + 10 * s + s * s) / powl(1 - s, 4);
		ok(rc == 0 && integral && chi2_check(z, N, (long)(-4 * L.b),
		    (long)(4 * L.b), (long)(L.b / 5), lap_cdf, &L, &st, &df) == 1 &&
		    moments_ok(z, N, var, m4, &zm, &zv),
		    "noise_add_dlaplace(%s): discrete Laplace in grid units, chi2 %.1f < %.1f",
		    exact ? "exact scale" : "scale rounded up", st, chi2_crit(df));
	}
	rng_free(r);
}

/* ---- permute-and-flip ---- */

/* Exact PF law by enumerating the n! visiting orders (n <= 5). */
static void
pf_exact(const double *q, int n, double eps, double sens, long double *p)
{
	int perm[5], used[5] = { 0 }, depth = 0;
	long double acc[5] = { 0 }, pr[5], qmax = q[0], nf = 1;

	for (int i = 1; i < n; i++)
		if (q[i] > qmax)
			qmax = q[i];
	for (int i = 0; i < n; i++) {
		pr[i] = expl(-(long double)eps * (qmax - q[i]) / (2 * (long double)sens));
		nf *= i + 1;
	}
	/* iterative enumeration of permutations by backtracking */
	perm[0] = -1;
	while (depth >= 0) {
		int next = perm[depth] + 1;

		if (perm[depth] >= 0)
			used[perm[depth]] = 0;
		while (next < n && used[next])
			next++;
		if (next >= n) {
			depth--;
			continue;
		}
		perm[depth] = next;
		used[next] = 1;
		if (depth == n - 1) {
			long double stay = 1;

			for (int k = 0; k < n; k++) {
				acc[perm[k]] += stay * pr[perm[k]] / nf;
				stay *= 1 - pr[perm[k]];
			}
			continue;
		}
		perm[++depth] = -1;
	}
	memcpy(p, acc, (size_t)n * sizeof *p);
}

static void
test_pf(void)
{
	static const struct {
		double q[5];
		int n;
		double eps, sens;
	} cs[] = {
		{ { 0, 1, 2.5 }, 3, 1.0, 1.0 },
		{ { 1, 1, 0.5, -2 }, 4, 0.7, 0.25 },
		{ { 0.1, 0.3, 0.2, 0.05, 0.25 }, 5, 3.0, 0.1 },
	};
	struct rng *r = seeded("pf");
	long obs[5];
	long double p[5];
	size_t pick = 99;

	for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
		long M = N / 2;
		int rc = 0;
		double st;

		memset(obs, 0, sizeof obs);
		pf_exact(cs[c].q, cs[c].n, cs[c].eps, cs[c].sens, p);
		for (long i = 0; i < M && rc == 0; i++) {
			rc = noise_pf_select(r, cs[c].q, (size_t)cs[c].n, cs[c].eps,
			    cs[c].sens, &pick);
			if (pick < 5)
				obs[pick]++;
		}
		st = chi2_stat(obs, p, cs[c].n, M);
		ok(rc == 0 && st < chi2_crit(cs[c].n - 1),
		    "permute-and-flip case %zu matches the enumerated law (chi2 %.2f < %.2f)",
		    c + 1, st, chi2_crit(cs[c].n - 1));
	}
	{
		double q1[1] = { 4 }, qn[2] = { 1, NAN };

		ok(noise_pf_select(r, q1, 1, 1, 1, &pick) == 0 && pick == 0,
		    "permute-and-flip with one candidate picks it");
		ok(noise_pf_select(r, q1, 0, 1, 1, &pick) == NOISE_E_RANGE &&
		    noise_pf_select(r, qn, 2, 1, 1, &pick) == NOISE_E_RANGE &&
		    noise_pf_select(r, q1, 1, 0, 1, &pick) == NOISE_E_RANGE &&
		    noise_pf_select(r, q1, 1, 1, INFINITY, &pick) == NOISE_E_RANGE,
		    "permute-and-flip rejects bad arguments");
	}
	rng_free(r);
}

static void
test_reproducible(void)
{
	struct rng *a = seeded("repro"), *b = seeded("repro");
	double x[100] = { 0 }, y[100] = { 0 };

	noise_add_dgauss(a, x, 100, 2.0, 0);
	noise_add_dgauss(b, y, 100, 2.0, 0);
	ok(memcmp(x, y, sizeof x) == 0, "the same seed gives the same noise");
	rng_free(a);
	rng_free(b);
	ok(strcmp(noise_strerror(NOISE_E_OVERFLOW), "noise sample overflows") == 0,
	    "noise_strerror names the errors");
}

int
main(void)
{
	test_bernoulli();
	test_bernoulli_exp();
	test_dlaplace();
	test_dgauss();
	test_grid_basics();
	test_grid_laws();
	test_pf();
	test_reproducible();
	return tap_done();
}
