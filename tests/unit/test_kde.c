/*
 * Unit tests of lib/kde: the float normal CDF against the double erfc of
 * libm, the vector form against the scalar one, the bits of e^-1 against
 * GMP, the exact Bernoulli(e^-1) and exponential-mechanism samplers
 * against their pmfs (chi-square, stat.h: false-failure rate <= 1e-6 per
 * check for a random seed; seeds are fixed), with permute-and-flip as a
 * deliberately wrong sampler that the same check rejects, the window
 * utilities against a direct double computation within the bound
 * kde_util returns, and the sensitivity on worst-case collections.
 */
#include <gmp.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kde.h"
#include "noise.h"
#include "rng.h"
#include "stat.h"
#include "tap.h"

#define N 400000L

static struct rng *
seeded(const char *item)
{
	struct rng *r;

	if (rng_new_seeded(&r, 20261122, item) != 0)
		abort();
	return r;
}

static double
phi_ref(double z)
{
	return 0.5 * erfc(-z / sqrt(2.0));
}

/* The utility of candidate k in double: sum of kernel masses between the
 * float window ends, at the exact bandwidth 1/kinv. */
static double
util_ref(const struct kde_grid *g, size_t k, const float *x, size_t m,
    float kinv)
{
	double s = 0, lo = g->e[g->im + k], hi = g->e[g->ip + k];

	for (size_t i = 0; i < m; i++)
		s += phi_ref((hi - x[i]) * (double)kinv) -
		    phi_ref((lo - x[i]) * (double)kinv);
	return s;
}

static void
test_phi(void)
{
	double worst = 0;
	uint32_t bits;
	struct rng *r = seeded("phi");
	int same = 1;

	/* Every 61st float with |z| < 13 (beyond, y is clamped at 9), both
	 * signs: the approximation and float rounding stay within
	 * KDE_PHI_ERR less the 3e-8 reserved for the argument's rounding
	 * (an exhaustive sweep of all floats gave 9.85e-7). */
	for (bits = 0; bits < 0x41500000u; bits += 61) {
		float z;
		memcpy(&z, &bits, sizeof z);
		for (int s = 0; s < 2; s++) {
			float zz = s ? -z : z;
			double e = fabs((double)kde_phi(zz) - phi_ref(zz));
			worst = e > worst ? e : worst;
		}
	}
	ok(worst <= KDE_PHI_ERR - 3e-8, "kde_phi within KDE_PHI_ERR of Phi "
	    "(max %.3g on the sweep)", worst);
	ok(worst > 1e-7, "the sweep sees the approximation error (%.3g)",
	    worst);
	ok(fabs((double)kde_phi(40.0f) - 1) < 1e-30 && kde_phi(-40.0f) < 1e-20f
	    && kde_phi(INFINITY) == 1 && kde_phi(-INFINITY) < 1e-20f,
	    "kde_phi is 0 and 1 far out");
	{
		enum { NV = 100003 };
		float *z = malloc(NV * sizeof *z), *o = malloc(NV * sizeof *o);
		for (size_t i = 0; i < NV; i++) {
			z[i] = (float)(((double)rng_u64(r) / 0x1p64 - 0.5) *
			    30);
			if (i % 17 == 0)
				z[i] = 0;
		}
		kde_phi_v(z, o, NV);
		for (size_t i = 0; i < NV; i++)
			same &= memcmp(&o[i], &(float){ kde_phi(z[i]) },
			    sizeof(float)) == 0;
		ok(same, "kde_phi_v equals kde_phi bit for bit");
		free(z);
		free(o);
	}
	rng_free(r);
}

static void
test_einv(void)
{
	mpz_t num, den, t, q;
	const uint64_t *w = kde_einv_bits();
	int good = 1;
	struct rng *r = seeded("einv");
	long hits = 0;
	double p = exp(-1.0), z;

	/* floor(e^-1 2^512) from S = sum_k (-1)^k / k! to k = 150: |e^-1 -
	 * S| < 1/151! < 2^-870, far below the last bit (a tie would need
	 * 358 equal bits). */
	mpz_inits(num, den, t, q, NULL);
	mpz_fac_ui(den, 150);
	for (unsigned long k = 0; k <= 150; k++) {
		mpz_fac_ui(t, k);
		mpz_divexact(t, den, t);	/* 150!/k! */
		if (k % 2)
			mpz_sub(num, num, t);
		else
			mpz_add(num, num, t);
	}
	mpz_mul_2exp(q, num, 512);
	mpz_fdiv_q(q, q, den);
	for (int i = 7; i >= 0; i--) {
		mpz_fdiv_r_2exp(t, q, 64);
		good &= (uint64_t)mpz_get_ui(t) == w[i];
		mpz_fdiv_q_2exp(q, q, 64);
	}
	ok(good, "the 512 bits of e^-1 agree with GMP's series");
	mpz_clears(num, den, t, q, NULL);
	for (long i = 0; i < N; i++)
		hits += kde_bern_einv(r) == 1;
	z = (hits - N * p) / sqrt(N * p * (1 - p));
	ok(fabs(z) <= STAT_Z, "Bernoulli(e^-1): %ld of %ld (z = %.2f)", hits, N,
	    z);
	rng_free(r);
}

/* The level constants rho_l = 2^j_l e^-l of kde_em_sample: j_l is
 * floor(l log2 e) (rho_l in [1/2, 1)) and the 512 bits are right, from
 * the series of e^-l to k = 400 scaled by 400! (GMP). */
static void
test_rho(void)
{
	mpz_t f, num, t, v;
	int good = 1;

	mpz_inits(f, num, t, v, NULL);
	mpz_fac_ui(f, 400);
	for (unsigned l = 1; l <= 29; l++) {
		unsigned j;
		const uint64_t *w = kde_rho_bits(l, &j);

		mpz_set_ui(num, 0);
		for (unsigned long k = 0; k <= 400; k++) {
			mpz_fac_ui(t, k);
			mpz_divexact(t, f, t);		/* 400!/k! */
			mpz_ui_pow_ui(v, l, k);
			mpz_mul(t, t, v);
			if (k % 2)
				mpz_sub(num, num, t);
			else
				mpz_add(num, num, t);
		}
		mpz_mul_2exp(v, num, 512 + j);
		mpz_fdiv_q(v, v, f);
		good &= mpz_sizeinbase(v, 2) == 512;	/* in [1/2, 1) */
		for (int i = 7; i >= 0; i--) {
			mpz_fdiv_r_2exp(t, v, 64);
			good &= (uint64_t)mpz_get_ui(t) == w[i];
			mpz_fdiv_q_2exp(v, v, 64);
		}
	}
	ok(good, "the level constants 2^j e^-l (l = 1..29) agree with GMP");
	{
		unsigned j;
		ok(kde_rho_bits(30, &j) == NULL && kde_rho_bits(0, &j)[7] ==
		    UINT64_MAX && j == 0, "level 0 is rho = 1; no level 30");
	}
	mpz_clears(f, num, t, v, NULL);
}

/* Chi-square of kde_em_sample (or permute-and-flip, broken) against
 * exp(-c (qmax - q)) / Z.  @return the statistic over its critical
 * value. */
static double
em_fit(const uint64_t *q, int n, uint64_t cn, unsigned shift, int broken,
    const char *item)
{
	long obs[64] = { 0 };
	long double p[64], s = 0, c = ldexpl((long double)cn, -(int)shift);
	uint64_t qmax = 0;
	double score[64];
	struct rng *r = seeded(item);

	for (int k = 0; k < n; k++)
		qmax = q[k] > qmax ? q[k] : qmax;
	for (int k = 0; k < n; k++) {
		p[k] = expl(-c * (long double)(qmax - q[k]));
		s += p[k];
		score[k] = (double)q[k];
	}
	for (int k = 0; k < n; k++)
		p[k] /= s;
	for (long i = 0; i < N; i++) {
		size_t k;
		int rc = broken == 1 ? noise_pf_select(r, score, (size_t)n,
		    (double)(2 * c), 1.0, &k) : broken == 2 ?
		    kde_em_sample_range(r, q, (size_t)n, 3, 6, cn, shift, &k) :
		    kde_em_sample(r, q, (size_t)n, cn, shift, &k);
		if (rc != 0)
			abort();
		obs[k]++;
	}
	rng_free(r);
	/* Bins of expected count < 5 merged into the last kept bin. */
	{
		long o2[64];
		long double p2[64];
		int nb = 0;
		for (int k = 0; k < n; k++) {
			if (nb > 0 && p[k] * N < 5) {
				o2[nb - 1] += obs[k];
				p2[nb - 1] += p[k];
				continue;
			}
			o2[nb] = obs[k];
			p2[nb] = p[k];
			nb++;
		}
		return chi2_stat(o2, p2, nb, N) / chi2_crit(nb - 1);
	}
}

static void
test_em(void)
{
	static const uint64_t q1[] = { 0, 3, 7, 7, 12, 2, 0, 5 };
	static const uint64_t q2[] = { 100, 90, 95, 0, 0, 0, 0, 0, 0, 0, 99,
	    40 };
	static const uint64_t q3[] = { 5, 5, 5, 5, 5 };
	static const uint64_t q4[] = { 1000000, 999000, 998500, 990000, 0 };
	double f;

	/* rate 0.25 per unit: exponents up to 3 */
	f = em_fit(q1, 8, 1ull << 38, 40, 0, "em/1");
	ok(f <= 1, "EM on 8 candidates, rate 1/4: chi2/crit %.3f", f);
	/* rate 0.15: candidates 15 nats below the top (L coins) */
	f = em_fit(q2, 12, (uint64_t)(0.15 * 0x1p40), 40, 0, "em/2");
	ok(f <= 1, "EM on 12 candidates, rate 0.15: chi2/crit %.3f", f);
	f = em_fit(q3, 5, 123456789, 40, 0, "em/3");
	ok(f <= 1, "EM on 5 equal scores is uniform: chi2/crit %.3f", f);
	/* fine scores as kde-publish makes them: rate 2^-10 per unit */
	f = em_fit(q4, 5, 1ull << 30, 40, 0, "em/4");
	ok(f <= 1, "EM on grid-rounded scores, rate 2^-10: chi2/crit %.3f", f);
	{
		/* zeros outside [3, 6) given implicitly */
		static const uint64_t q5[] = { 0, 0, 0, 5, 9, 7, 0, 0, 0, 0 };
		f = em_fit(q5, 10, 1ull << 40, 40, 2, "em/5");
		ok(f <= 1, "EM with the zeros outside a range: chi2/crit %.3f",
		    f);
	}
	/* the same checks reject permute-and-flip, which is not the
	 * exponential mechanism's distribution */
	f = em_fit(q1, 8, 1ull << 38, 40, 1, "pf/1");
	ok(f > 1, "permute-and-flip fails the EM check: chi2/crit %.1f", f);
	f = em_fit(q2, 12, (uint64_t)(0.15 * 0x1p40), 40, 1, "pf/2");
	ok(f > 1, "permute-and-flip fails the EM check (12): chi2/crit %.1f",
	    f);
	{
		struct rng *r = seeded("em/err");
		size_t k;
		uint64_t big[2] = { UINT64_MAX / 2, 0 };
		ok(kde_em_sample(r, q1, 0, 1, 40, &k) == NOISE_E_RANGE &&
		    kde_em_sample(r, q1, 8, 1, 0, &k) == NOISE_E_RANGE &&
		    kde_em_sample(r, big, 2, 4, 40, &k) == NOISE_E_OVERFLOW,
		    "kde_em_sample refuses empty grids, bad shifts, overflow");
		rng_free(r);
	}
}

static void
test_util(void)
{
	struct kde_grid g, g2;
	struct rng *r = seeded("util");
	float x[50], *scratch;
	double u[401], u2[401], eta, worst = 0, worst2 = 0;
	int fine = 1, zeros = 1;
	size_t k0, k1;

	ok(kde_grid_init(&g, -1, 0.005, 401, 0.015) == 0 && !g.split &&
	    g.ne == 404, "a window of 3 steps shares one array of ends");
	ok(kde_grid_init(&g2, -1, 0.005, 401, 0.0123) == 0 && g2.split,
	    "a window of 2.46 steps takes two arrays");
	scratch = malloc(kde_scratch_floats(&g2) * sizeof *scratch);
	for (int rep = 0; rep < 40; rep++) {
		size_t m = 2 + (size_t)rep;
		float kinv = (float)(1 / (0.002 + 0.05 * (double)(rep % 7)));
		for (size_t i = 0; i < m; i++)
			x[i] = (float)(((double)rng_u64(r) / 0x1p64 - 0.5) *
			    (rep % 2 ? 0.2 : 2.2));
		eta = kde_util(&g, x, m, kinv, u, scratch, &k0, &k1);
		for (size_t k = 0; k < g.n; k++)
			zeros &= (k >= k0 && k < k1) || u[k] == 0;
		for (size_t k = 0; k < g.n; k++) {
			double d = fabs(u[k] - util_ref(&g, k, x, m, kinv));
			fine &= d <= eta;
			worst = d / eta > worst ? d / eta : worst;
		}
		eta = kde_util(&g2, x, m, kinv, u2, scratch, &k0, &k1);
		for (size_t k = 0; k < g2.n; k++)
			zeros &= (k >= k0 && k < k1) || u2[k] == 0;
		for (size_t k = 0; k < g2.n; k++) {
			double d = fabs(u2[k] - util_ref(&g2, k, x, m, kinv));
			fine &= d <= eta;
			worst2 = d / eta > worst2 ? d / eta : worst2;
		}
	}
	ok(zeros, "the masses outside the range kde_util gives are 0");
	ok(fine, "window masses within the bound kde_util returns (worst "
	    "%.3f and %.3f of it)", worst, worst2);
	free(scratch);
	kde_grid_free(&g);
	kde_grid_free(&g2);
	rng_free(r);
}

/*
 * The sensitivity (kde-publish(1), SENSITIVITY): with a fixed bandwidth,
 * removing one model from D moves U(t) = sum of window masses by that
 * model's mass g(t) in [0, p], p = erf(wmax / (2 sqrt 2 b)); the worst
 * case puts the removed model at the centre of a window.  With
 * data-dependent bandwidths the normalised U lies in [0, p(b_min)] and a
 * single outlier moves the bandwidth of every kernel: the difference
 * reaches most of p(b_min), far beyond p/M.
 */
static void
test_sensitivity(void)
{
	struct kde_grid g;
	float x[40], *scratch;
	double ud[201], ud2[201], eta, p, worst = 0, b = 0.02;
	float kinv = (float)(1 / b);
	size_t m = 40;

	kde_grid_init(&g, -1, 0.01, 201, 0.01);
	scratch = malloc(kde_scratch_floats(&g) * sizeof *scratch);
	p = erf(g.wmax * (double)kinv / (2 * sqrt(2.0)));
	/* Worst case: 39 models far from candidate 120 (t = 0.2), one at it;
	 * and every other collection of a random search. */
	for (size_t i = 0; i < m; i++)
		x[i] = -0.8f + 0.001f * (float)i;
	x[m - 1] = g.t[120];
	eta = kde_util(&g, x, m, kinv, ud, scratch, NULL, NULL);
	(void)kde_util(&g, x, m - 1, kinv, ud2, scratch, NULL, NULL);
	for (size_t k = 0; k < g.n; k++)
		worst = fmax(worst, fabs(ud[k] - ud2[k]));
	ok(worst <= p + 2 * eta && worst >= p * 0.99, "fixed bandwidth: the "
	    "worst case moves U by %.6f, p = %.6f", worst, p);
	{
		struct rng *r = seeded("sens");
		int fine = 1;
		for (int rep = 0; rep < 300; rep++) {
			double w = 0;
			for (size_t i = 0; i < m; i++)
				x[i] = (float)(((double)rng_u64(r) / 0x1p64 -
				    0.5) * (rep % 3 ? 0.1 : 1.5));
			(void)kde_util(&g, x, m, kinv, ud, scratch, NULL, NULL);
			(void)kde_util(&g, x + 1, m - 1, kinv, ud2, scratch, NULL, NULL);
			for (size_t k = 0; k < g.n; k++)
				w = fmax(w, fabs(ud[k] - ud2[k]));
			fine &= w <= p + 2 * eta;
		}
		ok(fine, "fixed bandwidth: 300 random neighbours within p");
		rng_free(r);
	}
	{
		/* Silverman with floor b_min = 0.01: 39 models at 0 (std 0,
		 * b = b_min) against the same plus an outlier at 0.9. */
		double bmin = 0.01, pm, bw, du = 0;
		float kd, kd2;
		for (size_t i = 0; i < m - 1; i++)
			x[i] = 0;
		x[m - 1] = 0.9f;
		pm = erf(g.wmax / (2 * sqrt(2.0) * bmin));
		bw = fmax(kde_bandwidth(KDE_SILVERMAN, x, m - 1), bmin);
		kd2 = (float)(1 / (isnan(bw) ? bmin : bw));
		bw = fmax(kde_bandwidth(KDE_SILVERMAN, x, m), bmin);
		kd = (float)(1 / bw);
		(void)kde_util(&g, x, m - 1, kd2, ud2, scratch, NULL, NULL);
		(void)kde_util(&g, x, m, kd, ud, scratch, NULL, NULL);
		for (size_t k = 0; k < g.n; k++)
			du = fmax(du, fabs(ud[k] / (double)m - ud2[k] /
			    (double)(m - 1)));
		ok(du <= pm && du > 0.3 * pm && du > 10 * p / (double)m,
		    "silverman: one outlier moves the normalised U by %.4f "
		    "(p(b_min) = %.4f, fixed-bandwidth p/M = %.4f)", du, pm,
		    p / (double)m);
	}
	free(scratch);
	kde_grid_free(&g);
}

static void
test_bandwidth(void)
{
	float x[5] = { 1, 2, 4, 8, 16 };
	double mean = 6.2, var = 0, f;

	for (int i = 0; i < 5; i++)
		var += (x[i] - mean) * (x[i] - mean);
	var /= 4;
	f = pow(5, -0.2);
	ok(fabs(kde_bandwidth(KDE_SCOTT, x, 5) - f * sqrt(var)) < 1e-12,
	    "Scott: n^(-1/5) std");
	f = pow(5 * 0.75, -0.2);
	ok(fabs(kde_bandwidth(KDE_SILVERMAN, x, 5) - f * sqrt(var)) < 1e-12,
	    "Silverman: (3n/4)^(-1/5) std");
	ok(isnan(kde_bandwidth(KDE_SCOTT, x, 1)), "one point has no "
	    "bandwidth");
}

int
main(void)
{
	test_phi();
	test_einv();
	test_rho();
	test_em();
	test_util();
	test_sensitivity();
	test_bandwidth();
	return tap_done();
}
