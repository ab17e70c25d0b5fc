/*
 * Unit tests of lib/gmm (and lib/jgauss, its accounting helper): the
 * E-step against densities computed here from their definition, the
 * statistics against plain sums, the M-steps against hand formulas, the
 * pass's independence of the thread count, k-means++, clipping, the
 * samplers, and the joint Gaussian plan.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gmm.h"
#include "jgauss.h"
#include "noise.h"
#include "rdp.h"
#include "rng.h"
#include "tap.h"

#define N 2000
#define D 3
#define K 2

static struct rng *
seeded(const char *item)
{
	struct rng *r;

	if (rng_new_seeded(&r, 5, item) != 0)
		abort();
	return r;
}

/* log N(x; mu, C) for a 3 x 3 C by the adjugate: independent of the
 * Cholesky route of the library. */
static double
logpdf3(const double *x, const double *mu, const double *C)
{
	double a = C[0], b = C[1], c = C[2], e = C[4], f = C[5], i = C[8];
	double det = a * (e * i - f * f) - b * (b * i - f * c) +
	    c * (b * f - e * c);
	double P[9] = {
		e * i - f * f, c * f - b * i, b * f - c * e,
		c * f - b * i, a * i - c * c, b * c - a * f,
		b * f - c * e, b * c - a * f, a * e - b * b
	};
	double v[3], q = 0;

	for (int t = 0; t < 3; t++)
		v[t] = x[t] - mu[t];
	for (int s = 0; s < 3; s++)
		for (int t = 0; t < 3; t++)
			q += v[s] * P[s * 3 + t] * v[t] / det;
	return -0.5 * (3 * log(2 * M_PI) + log(det) + q);
}

static void
make_model(struct gmm *g, int type)
{
	static const double C0[9] = { 2, 0.3, -0.2, 0.3, 1, 0.1, -0.2, 0.1,
	    0.5 };
	static const double C1[9] = { 0.7, 0, 0.2, 0, 1.5, -0.4, 0.2, -0.4,
	    1.2 };
	static const double mu[6] = { 1, -1, 0.5, -2, 3, 1 };

	if (gmm_alloc(g, K, D, type) != 0)
		abort();
	g->w[0] = 0.35;
	g->w[1] = 0.65;
	memcpy(g->mu, mu, sizeof mu);
	if (type == GMM_FULL) {
		memcpy(g->cov, C0, sizeof C0);
		memcpy(g->cov + 9, C1, sizeof C1);
	} else if (type == GMM_DIAG) {
		for (int t = 0; t < 3; t++) {
			g->cov[t] = C0[t * 4];
			g->cov[3 + t] = C1[t * 4];
		}
	} else {
		g->cov[0] = 0.8;
		g->cov[1] = 1.7;
	}
}

/* The full 3 x 3 covariance of component j of any type. */
static void
full_cov(const struct gmm *g, size_t j, double *C)
{
	memset(C, 0, 9 * sizeof *C);
	if (g->type == GMM_FULL)
		memcpy(C, g->cov + j * 9, 9 * sizeof *C);
	else
		for (int t = 0; t < 3; t++)
			C[t * 4] = g->type == GMM_DIAG ? g->cov[j * 3 + t] :
			    g->cov[j];
}

static void
test_estep(const double *X)
{
	for (int type = GMM_FULL; type <= GMM_SPHERICAL; type++) {
		struct gmm g;
		struct gmm_work *w;
		double *resp = malloc(N * K * sizeof *resp);
		double *ll = malloc(N * sizeof *ll), err_ll = 0, err_r = 0;
		double tot = 0, pass_ll;
		size_t bad;

		make_model(&g, type);
		if (gmm_work_new(&w, K, D, type, 1) != 0)
			abort();
		ok(gmm_prepare(w, &g, &bad) == 0, "%s: covariances factor",
		    gmm_cov_name(type));
		gmm_estep_rows(w, &g, X, N, resp, ll);
		for (size_t i = 0; i < N; i++) {
			double C[9], lp[K], m, s = 0;
			for (size_t j = 0; j < K; j++) {
				full_cov(&g, j, C);
				lp[j] = log(g.w[j]) + logpdf3(X + i * D,
				    g.mu + j * D, C);
			}
			m = fmax(lp[0], lp[1]);
			for (size_t j = 0; j < K; j++)
				s += exp(lp[j] - m);
			err_ll = fmax(err_ll, fabs(ll[i] - (m + log(s))));
			for (size_t j = 0; j < K; j++)
				err_r = fmax(err_r, fabs(resp[i * K + j] -
				    exp(lp[j] - m) / s));
			tot += ll[i];
		}
		ok(err_ll < 1e-11, "%s: log-densities equal the definition "
		    "(max error %g)", gmm_cov_name(type), err_ll);
		ok(err_r < 1e-12, "%s: responsibilities equal the definition "
		    "(max error %g)", gmm_cov_name(type), err_r);
		ok(gmm_pass(w, &g, X, N, NULL, &pass_ll, &bad) == 0 &&
		    fabs(pass_ll - tot) < 1e-9 * fabs(tot),
		    "%s: a pass sums the log-densities", gmm_cov_name(type));
		gmm_work_free(w);
		gmm_free(&g);
		free(resp);
		free(ll);
	}
}

/* log N(x; mu, C) in dimension d by a Cholesky factorisation written
 * here (C = L L^T, forward substitution). */
static double
logpdf_d(const double *x, const double *mu, const double *C, size_t d)
{
	double *L = calloc(d * d, sizeof *L), *v = calloc(d, sizeof *v);
	double q = 0, ld = 0;

	for (size_t i = 0; i < d; i++)
		for (size_t j = 0; j <= i; j++) {
			double t = C[i * d + j];
			for (size_t k = 0; k < j; k++)
				t -= L[i * d + k] * L[j * d + k];
			L[i * d + j] = i == j ? sqrt(t) : t / L[j * d + j];
		}
	for (size_t i = 0; i < d; i++) {
		double t = x[i] - mu[i];
		for (size_t k = 0; k < i; k++)
			t -= L[i * d + k] * v[k];
		v[i] = t / L[i * d + i];
		q += v[i] * v[i];
		ld += 2 * log(L[i * d + i]);
	}
	free(L);
	free(v);
	return -0.5 * ((double)d * log(2 * M_PI) + ld + q);
}

/* Full covariances in dimensions that cut the whitening into 1 to 4
 * pieces: the log-densities still equal the definition. */
static void
test_pieces(void)
{
	const size_t dims[] = { 7, 17, 40, 61 };
	struct rng *r = seeded("pieces");

	for (size_t t = 0; t < sizeof dims / sizeof dims[0]; t++) {
		size_t d = dims[t], k = 3, n = 300, bad;
		struct gmm g;
		struct gmm_work *w;
		double *X = malloc(n * d * sizeof *X), *A = malloc(d * d *
		    sizeof *A), *resp = malloc(n * k * sizeof *resp);
		double *ll = malloc(n * sizeof *ll), err = 0;

		if (gmm_alloc(&g, k, d, GMM_FULL) != 0 ||
		    gmm_work_new(&w, k, d, GMM_FULL, 1) != 0)
			abort();
		gmm_normals(r, X, n * d);
		gmm_normals(r, g.mu, k * d);
		for (size_t j = 0; j < k; j++) {
			double *C = g.cov + j * d * d;
			g.w[j] = (double)(j + 1) / 6;
			/* C = A A^T / d + I: well conditioned, dense. */
			gmm_normals(r, A, d * d);
			for (size_t a = 0; a < d; a++)
				for (size_t b = 0; b < d; b++) {
					double v = a == b ? 1 : 0;
					for (size_t c = 0; c < d; c++)
						v += A[a * d + c] * A[b * d + c] /
						    (double)d;
					C[a * d + b] = v;
				}
		}
		ok(gmm_prepare(w, &g, &bad) == 0, "d = %zu: factors", d);
		gmm_estep_rows(w, &g, X, n, resp, ll);
		for (size_t i = 0; i < n; i++) {
			double lp[3], m = -INFINITY, s = 0;
			for (size_t j = 0; j < k; j++) {
				lp[j] = log(g.w[j]) + logpdf_d(X + i * d,
				    g.mu + j * d, g.cov + j * d * d, d);
				m = fmax(m, lp[j]);
			}
			for (size_t j = 0; j < k; j++)
				s += exp(lp[j] - m);
			err = fmax(err, fabs(ll[i] - m - log(s)) /
			    fabs(m + log(s)));
		}
		ok(err < 1e-12, "d = %zu: log-densities equal the definition "
		    "(relative error %g)", d, err);
		gmm_work_free(w);
		gmm_free(&g);
		free(X);
		free(A);
		free(resp);
		free(ll);
	}
	rng_free(r);
}

static void
test_stats(const double *X)
{
	for (int type = GMM_FULL; type <= GMM_SPHERICAL; type++) {
		struct gmm g;
		struct gmm_work *w1, *w4;
		struct gmm_stats st, st4;
		double *resp = malloc(N * K * sizeof *resp);
		double *ll = malloc(N * sizeof *ll), L = 0, L4 = 1;
		double n[K] = { 0 }, s[K * D] = { 0 }, S[K * 9] = { 0 };
		double es = 0, eS = 0, en = 0;
		const double c[K * D] = { 0.5, 0, -1, 1, 1, 1 };
		size_t bad, cl = gmm_cov_len(type, D);
		int same;

		make_model(&g, type);
		if (gmm_work_new(&w1, K, D, type, 1) != 0 ||
		    gmm_work_new(&w4, K, D, type, 4) != 0 ||
		    gmm_stats_alloc(&st, K, D, type, 1) != 0 ||
		    gmm_stats_alloc(&st4, K, D, type, 1) != 0)
			abort();
		memcpy(st.c, c, sizeof c);
		memcpy(st4.c, c, sizeof c);
		ok(gmm_pass(w1, &g, X, N, &st, &L, &bad) == 0 &&
		    gmm_pass(w4, &g, X, N, &st4, &L4, &bad) == 0,
		    "%s: passes with 1 and 4 threads", gmm_cov_name(type));
		same = L == L4 && memcmp(st.n, st4.n, K * sizeof *st.n) == 0 &&
		    memcmp(st.s, st4.s, K * D * sizeof *st.s) == 0 &&
		    memcmp(st.S, st4.S, K * cl * sizeof *st.S) == 0;
		ok(same, "%s: the statistics do not depend on the threads",
		    gmm_cov_name(type));
		gmm_estep_rows(w1, &g, X, N, resp, ll);
		for (size_t i = 0; i < N; i++)
			for (size_t j = 0; j < K; j++) {
				double r = resp[i * K + j], v[D];
				n[j] += r;
				for (size_t a = 0; a < D; a++) {
					v[a] = X[i * D + a] - c[j * D + a];
					s[j * D + a] += r * v[a];
				}
				for (size_t a = 0; a < D; a++)
					for (size_t b = 0; b < D; b++)
						S[j * 9 + a * D + b] += r * v[a] *
						    v[b];
			}
		for (size_t j = 0; j < K; j++) {
			en = fmax(en, fabs(st.n[j] - n[j]) / n[j]);
			for (size_t a = 0; a < D; a++)
				es = fmax(es, fabs(st.s[j * D + a] -
				    s[j * D + a]) / N);
			for (size_t a = 0; a < D; a++)
				for (size_t b = a; b < D; b++) {
					double want = S[j * 9 + a * D + b];
					double got;
					if (type == GMM_FULL)
						got = st.S[j * 9 + a * D + b];
					else if (type == GMM_DIAG)
						got = a == b ? st.S[j * D + a] :
						    want;
					else
						got = a == b && a == 0 ?
						    st.S[j] - S[j * 9 + 4] -
						    S[j * 9 + 8] : want;
					eS = fmax(eS, fabs(got - want) / N);
				}
		}
		ok(en < 1e-12 && es < 1e-12 && eS < 1e-12,
		    "%s: counts, sums and second moments about the centres "
		    "equal plain sums (%g %g %g)", gmm_cov_name(type), en, es,
		    eS);
		gmm_stats_free(&st);
		gmm_stats_free(&st4);
		gmm_work_free(w1);
		gmm_work_free(w4);
		gmm_free(&g);
		free(resp);
		free(ll);
	}
}

static void
test_mstep(void)
{
	struct gmm g;
	struct gmm_stats st;
	double cnt[2], sum[6], mom[12], back[12];

	/* Component 0: 4 rows about centre (1, 1): n = 4, s = (2, -2),
	 * S = [[6, 1], [1, 3]].  Mean (1.5, 0.5), covariance
	 * S / n - (s/n)(s/n)^T = [[1.25, 0.5], [0.5, 0.5]]. */
	if (gmm_alloc(&g, 2, 2, GMM_FULL) != 0 ||
	    gmm_stats_alloc(&st, 2, 2, GMM_FULL, 1) != 0)
		abort();
	st.c[0] = st.c[1] = 1;
	st.n[0] = 4;
	st.s[0] = 2;
	st.s[1] = -2;
	st.S[0] = 6;
	st.S[1] = st.S[2] = 1;
	st.S[3] = 3;
	st.n[1] = 0;			/* an empty component */
	gmm_mstep(&g, &st, 0.01);
	ok(fabs(g.mu[0] - 1.5) < 1e-14 && fabs(g.mu[1] - 0.5) < 1e-14,
	    "mstep: mean = centre + s / n");
	ok(fabs(g.cov[0] - 1.26) < 1e-14 && fabs(g.cov[1] - 0.5) < 1e-14 &&
	    g.cov[2] == g.cov[1] && fabs(g.cov[3] - 0.51) < 1e-14,
	    "mstep: covariance S / n - dd^T plus reg on the diagonal");
	ok(fabs(g.w[0] - 1) < 1e-14 && g.w[1] > 0 && g.w[1] < 1e-15 &&
	    g.cov[4] == 0.01 && g.cov[7] == 0.01,
	    "mstep: an empty component keeps a tiny weight and reg * I "
	    "(scikit-learn's 10 eps)");

	/* DP: a noisy negative count is floored at 1, a mean outside the
	 * ball pulled back, eigenvalues clamped to [0, B^2] plus reg. */
	st.n[0] = 4;
	st.n[1] = -3;
	st.s[2] = 30;
	st.s[3] = 40;
	st.S[4] = -5;
	st.S[5] = st.S[6] = 0;
	st.S[7] = 1000;
	ok(gmm_mstep_dp(&g, &st, 0.01, 2) == 0, "mstep_dp runs");
	ok(fabs(g.w[0] - 0.8) < 1e-14 && fabs(g.w[1] - 0.2) < 1e-14,
	    "mstep_dp: counts floored at 1 (weights 4/5, 1/5)");
	ok(fabs(hypot(g.mu[2], g.mu[3]) - 2) < 1e-12 &&
	    fabs(g.mu[2] / g.mu[3] - 0.75) < 1e-12,
	    "mstep_dp: a mean outside the ball is pulled back onto it");
	/* Component 1: S / 1 - mu mu^T = [[-5 - 1.44, -1.92], [-1.92,
	 * 1000 - 2.56]]: eigenvalues about -6.9 and 997.4, clamped to 0
	 * and 4. */
	{
		double a = g.cov[4], b = g.cov[5], d = g.cov[7];
		double tr = a + d, det = a * d - b * b;
		double l1 = tr / 2 - sqrt(tr * tr / 4 - det);
		double l2 = tr / 2 + sqrt(tr * tr / 4 - det);
		ok(fabs(l1 - 0.01) < 1e-9 && fabs(l2 - 4.01) < 1e-9 &&
		    g.cov[5] == g.cov[6],
		    "mstep_dp: eigenvalues clamped to [0, B^2] plus reg "
		    "(%g, %g)", l1, l2);
	}
	/* pack and unpack: the upper triangle row by row. */
	gmm_stats_pack(&st, cnt, sum, mom);
	ok(mom[0] == 6 && mom[1] == 1 && mom[2] == 3 && mom[3] == -5 &&
	    mom[5] == 1000 && cnt[1] == -3 && sum[3] == 40,
	    "pack: counts, sums, upper triangles");
	mom[1] = 7;
	gmm_stats_unpack(&st, cnt, sum, mom);
	gmm_stats_pack(&st, cnt, sum, back);
	ok(st.S[1] == 7 && st.S[2] == 7 && memcmp(mom, back, 6 *
	    sizeof *mom) == 0, "unpack mirrors the upper triangle");
	gmm_stats_free(&st);
	gmm_free(&g);
	ok(gmm_mom_len(GMM_FULL, 5) == 15 && gmm_mom_len(GMM_DIAG, 5) == 5 &&
	    gmm_mom_len(GMM_SPHERICAL, 5) == 1 &&
	    gmm_cov_len(GMM_FULL, 5) == 25, "lengths of moments and covs");
	if (gmm_alloc(&g, 3, 4, GMM_FULL) != 0)
		abort();
	ok(gmm_nparams(&g) == 2 + 12 + 30, "parameters of 3 full "
	    "components in 4 dimensions: 44");
	gmm_free(&g);
	ok(gmm_alloc(&g, 0, 4, GMM_FULL) == GMM_E_RANGE &&
	    gmm_alloc(&g, 2, 4, 7) == GMM_E_RANGE, "bad shapes are refused");
}

static void
test_notpd(const double *X)
{
	struct gmm g;
	struct gmm_work *w;
	double ll;
	size_t bad = 99;

	make_model(&g, GMM_FULL);
	g.cov[9 + 4] = -1;		/* component 1 indefinite */
	if (gmm_work_new(&w, K, D, GMM_FULL, 2) != 0)
		abort();
	ok(gmm_pass(w, &g, X, N, NULL, &ll, &bad) == GMM_E_NOTPD && bad == 1,
	    "an indefinite covariance is reported with its component");
	gmm_free(&g);
	gmm_work_free(w);
}

static void
test_em(const double *X)
{
	/* EM from the true model on its own sample: the log-likelihood
	 * never decreases (reg 0: exact EM). */
	struct gmm g;
	struct gmm_work *w;
	struct gmm_em_result res;
	double prev = -INFINITY, lls[40];
	size_t nll = 0;
	int mono = 1;

	make_model(&g, GMM_FULL);
	g.mu[0] += 1;			/* start off the optimum */
	if (gmm_work_new(&w, K, D, GMM_FULL, 2) != 0)
		abort();
	{
		struct gmm_em_opts o = { .max_iter = 40, .fixed = 1 };
		ok(gmm_em(&g, w, X, N, &o, &res) == 0 && res.iters == 40,
		    "fixed EM runs 40 iterations");
	}
	/* again, recording */
	make_model(&g, GMM_FULL);
	g.mu[0] += 1;
	for (int it = 0; it < 40; it++) {
		struct gmm_stats st;
		double ll;
		size_t bad;

		if (gmm_stats_alloc(&st, K, D, GMM_FULL, 1) != 0)
			abort();
		memcpy(st.c, g.mu, sizeof(double) * K * D);
		if (gmm_pass(w, &g, X, N, &st, &ll, &bad) != 0)
			abort();
		lls[nll++] = ll;
		if (ll < prev - 1e-9 * fabs(prev))
			mono = 0;
		prev = ll;
		gmm_mstep(&g, &st, 0);
		gmm_stats_free(&st);
	}
	ok(mono && lls[39] > lls[0], "EM's log-likelihood never decreases "
	    "(%.6f to %.6f)", lls[0], lls[39]);
	gmm_work_free(w);
	gmm_free(&g);
}

static void
test_init(void)
{
	/* 300 rows at 3 distinct points: k-means++ with k = 3 picks each
	 * point once (a chosen point has distance 0). */
	static double X[300 * 2];
	static const double P[6] = { 0, 0, 10, 0, 0, 10 };
	double c[6];
	int seen[3] = { 0 }, fine = 1;
	struct rng *r = seeded("kmeanspp");

	for (int i = 0; i < 300; i++)
		memcpy(X + i * 2, P + (i % 3) * 2, 2 * sizeof *X);
	for (int rep = 0; rep < 20; rep++) {
		memset(seen, 0, sizeof seen);
		gmm_kmeanspp(r, X, 300, 2, 3, c);
		for (int j = 0; j < 3; j++)
			for (int p = 0; p < 3; p++)
				if (c[j * 2] == P[p * 2] &&
				    c[j * 2 + 1] == P[p * 2 + 1])
					seen[p]++;
		fine &= seen[0] == 1 && seen[1] == 1 && seen[2] == 1;
	}
	ok(fine, "k-means++ picks each of 3 distinct points once");
	{
		struct gmm g;
		if (gmm_alloc(&g, 3, 2, GMM_DIAG) != 0)
			abort();
		ok(gmm_init_centers(&g, X, 300, P, 0.5) == 0 &&
		    g.cov[0] == 0.5 && fabs(g.w[1] - 1.0 / 3) < 1e-12 &&
		    g.mu[2] == 10, "init from centres: hard assignment, "
		    "means at the centres, reg on the variances");
		gmm_free(&g);
	}
	rng_free(r);
}

static void
test_clip_and_samplers(void)
{
	static double X[1000 * 7];
	struct rng *r = seeded("clip");
	double mx = 0, z[20000], m = 0, v = 0;
	size_t nc;
	int inball = 1;

	gmm_normals(r, X, 7000);
	for (size_t i = 0; i < 7000; i++)
		X[i] *= 3;
	nc = gmm_clip_rows(X, 1000, 7, 5);
	for (size_t i = 0; i < 1000; i++) {
		double s = 0;
		for (size_t a = 0; a < 7; a++)
			s += X[i * 7 + a] * X[i * 7 + a];
		mx = fmax(mx, sqrt(s));
	}
	ok(nc > 100 && mx <= 5 && mx > 4.99, "clipped rows stay in the ball "
	    "(%zu clipped, max norm %.17g)", nc, mx);
	/* Mean 0 and variance 1 within 6 standard errors (each check
	 * fails with probability about 2e-9 for a correct sampler). */
	gmm_normals(r, z, 20000);
	for (size_t i = 0; i < 20000; i++)
		m += z[i] / 20000;
	for (size_t i = 0; i < 20000; i++)
		v += (z[i] - m) * (z[i] - m) / 19999;
	ok(fabs(m) < 6 / sqrt(20000.0) && fabs(v - 1) < 6 * sqrt(2 / 20000.0),
	    "normals: mean %.4f, variance %.4f", m, v);
	for (int i = 0; i < 1000; i++) {
		double x[4], s = 0;
		gmm_ball(r, 4, 2.5, x);
		for (int a = 0; a < 4; a++)
			s += x[a] * x[a];
		inball &= sqrt(s) <= 2.5;
	}
	ok(inball, "points of gmm_ball lie in the ball");
	{
		const double w[3] = { 0.2, 0, 0.8 };
		size_t cnt[3] = { 0 };
		for (int i = 0; i < 10000; i++)
			cnt[gmm_draw_index(r, w, 3)]++;
		/* binomial sd 40: 6 sd */
		ok(cnt[1] == 0 && fabs((double)cnt[0] - 2000) < 240,
		    "draw_index follows the weights (%zu, %zu, %zu)", cnt[0],
		    cnt[1], cnt[2]);
	}
	rng_free(r);
}

static void
test_sampling(void)
{
	/* Sample moments of 40000 rows of one full component: the
	 * covariance U^T U (each entry within 0.05 for entries of order 1,
	 * about 7 standard errors). */
	struct gmm g;
	struct gmm_work *w;
	struct rng *r = seeded("sample");
	double x[3], m[3] = { 0 }, C[9] = { 0 }, e = 0;
	size_t bad;
	static double rows[40000 * 3];

	make_model(&g, GMM_FULL);
	if (gmm_work_new(&w, K, D, GMM_FULL, 1) != 0 ||
	    gmm_sample_prepare(w, &g, &bad) != 0)
		abort();
	for (int i = 0; i < 40000; i++) {
		gmm_sample_row(w, &g, r, 1, x);
		memcpy(rows + i * 3, x, sizeof x);
		for (int a = 0; a < 3; a++)
			m[a] += x[a] / 40000;
	}
	for (int i = 0; i < 40000; i++)
		for (int a = 0; a < 3; a++)
			for (int b = 0; b < 3; b++)
				C[a * 3 + b] += (rows[i * 3 + a] - m[a]) *
				    (rows[i * 3 + b] - m[b]) / 40000;
	for (int a = 0; a < 9; a++)
		e = fmax(e, fabs(C[a] - g.cov[9 + a]));
	ok(e < 0.05 && fabs(m[0] + 2) < 0.05 && fabs(m[1] - 3) < 0.05,
	    "sampled rows have the component's mean and covariance "
	    "(max error %.4f)", e);
	gmm_work_free(w);
	gmm_free(&g);
	rng_free(r);
}

static void
test_jgauss(void)
{
	struct jgauss_part p[3] = {
		{ .w = 0.5, .delta2 = 1, .nent = 1 },
		{ .w = 0.25, .delta2 = 3, .nent = 10 },
		{ .w = 0.25, .delta2 = 9, .nent = 100 }
	};
	double mu, z, mu2 = 0, rdp[RDP_DEFAULT_NORDERS];
	size_t bad, no;
	const double *ord = rdp_default_orders(&no);

	ok(jgauss_plan(p, 3, 2, JGAUSS_MU, 0, 0, 1, &mu, &bad) == 0 &&
	    mu * 2 <= 1 && mu * 2 > 1 - 1e-8, "plan: mu = 1 / z (%.17g)", mu);
	for (int i = 0; i < 3; i++) {
		double share = (p[i].sens / p[i].sigma) * (p[i].sens /
		    p[i].sigma);
		mu2 += share;
		ok(fabs(share / (p[i].w * mu * mu) - 1) < 1e-8 &&
		    p[i].grid == noise_grid(p[i].sigma) && p[i].sens ==
		    noise_sens_l2(p[i].delta2, p[i].grid, p[i].nent) &&
		    p[i].sens <= p[i].delta2 * (1 + 1e-5),
		    "plan: part %d gets its share of mu^2", i);
	}
	ok(fabs(mu2 / (mu * mu) - 1) < 1e-12, "plan: the shares add up to "
	    "mu^2");
	ok(jgauss_calibrate_rdp(1, 1e-5, 10, &z) == 0 &&
	    jgauss_rdp_eps(1 / z, 1e-5, 10) <= 1 &&
	    jgauss_rdp_eps(1 / (z * (1 - 1e-9)), 1e-5, 10) > 1 - 1e-6,
	    "calibrate: the smallest multiplier for eps 1 over 10 releases "
	    "(%.6f)", z);
	jgauss_rdp_curve(0.5, 10, rdp);
	ok(rdp[0] == 10 * (ord[0] * 0.25 / 2) && rdp[no - 1] == 10 *
	    (ord[no - 1] * 0.25 / 2), "curve: count * alpha mu^2 / 2");
	ok(jgauss_plan(p, 3, 2, JGAUSS_RDP, 1, 2, 1, &mu, &bad) ==
	    JGAUSS_E_RANGE && bad == 3, "plan: a curve that cannot be "
	    "converted is an error");
}

int
main(void)
{
	static double X[N * D];
	struct rng *r = seeded("data");

	/* Rows of a mixture-like cloud: two blobs. */
	gmm_normals(r, X, N * D);
	for (size_t i = 0; i < N; i++)
		for (size_t a = 0; a < D; a++)
			X[i * D + a] = X[i * D + a] * (1 + 0.3 * (double)a) +
			    (i % 3 ? (a == 0 ? 1 : -1) : 2.5);
	test_estep(X);
	test_pieces();
	test_stats(X);
	test_mstep();
	test_notpd(X);
	test_em(X);
	test_init();
	test_clip_and_samplers();
	test_sampling();
	test_jgauss();
	rng_free(r);
	return tap_done();
}
