/*
 * Unit tests of lib/ml/gmmfit: the validator; k = 1 against the closed
 * form (the sample mean, the biased sample covariance plus reg, the
 * log-likelihood of the rows under it computed here in 2 x 2, BIC and
 * AIC from it); two separated clusters found with their weights;
 * restarts never keep a worse start than the first; the rows left
 * centred; the progress hook; too few rows.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gmmfit.h"
#include "rng.h"
#include "tap.h"

#define N 400
#define D 2

static struct rng *
seeded(uint64_t seed, const char *item)
{
	struct rng *r;

	if (rng_new_seeded(&r, seed, item) != 0)
		abort();
	return r;
}

static struct gmmfit_params
base(void)
{
	struct gmmfit_params p = { .k = 2, .cov = GMM_FULL, .reg = 1e-6,
	    .tol = 1e-6, .max_iter = 200, .restarts = 1, .threads = 1 };
	return p;
}

/* Two clusters: 30% around (-4, 0), 70% around (3, 2). */
static void
make_rows(double *X)
{
	struct rng *r = seeded(9, "gmmfit-rows");
	double z[2];

	for (size_t i = 0; i < N; i++) {
		gmm_normals(r, z, 2);
		X[i * D] = (i < N * 3 / 10 ? -4 : 3) + 0.5 * z[0];
		X[i * D + 1] = (i < N * 3 / 10 ? 0 : 2) + 0.8 * z[1] +
		    0.2 * z[0];
	}
	rng_free(r);
}

static void
test_check(void)
{
	struct gmmfit_params p = base();

	ok(gmmfit_check_params(&p) == NULL, "check: the base params pass");
#define BAD(field, value) do { \
	struct gmmfit_params q = base(); \
	q.field = value; \
	ok(gmmfit_check_params(&q) != NULL, "check rejects " #field " = " \
	    #value); \
} while (0)
	BAD(k, 0);
	BAD(k, GMM_MAX_K + 1);
	BAD(cov, 7);
	BAD(reg, -1);
	BAD(reg, NAN);
	BAD(tol, NAN);
	BAD(tol, -1);
	BAD(max_iter, 0);
	BAD(threads, 0);
#undef BAD
}

static size_t ncalls;

static void
count(void *ctx, size_t start, size_t it, double ll)
{
	(void)ctx;
	(void)start;
	(void)it;
	(void)ll;
	ncalls++;
}

static void
test_one(const double *X0)
{
	struct gmmfit_params p = base();
	struct gmmfit_result res;
	struct gmm g;
	struct rng *r = seeded(1, "gmmfit-one");
	double *X = malloc(N * D * sizeof *X), m[2] = { 0, 0 }, S[4] = { 0 };
	double ll = 0, det, cm[2] = { 0, 0 };
	int rc;

	memcpy(X, X0, N * D * sizeof *X);
	p.k = 1;
	p.reg = 0.01;
	p.on_iter = count;
	if (gmm_alloc(&g, 1, D, GMM_FULL) != 0)
		abort();
	rc = gmmfit_run(&p, r, X, N, D, NULL, &g, &res);
	ok(rc == 0 && res.converged, "k = 1: fitted, converged");
	ok(ncalls == res.all_iters && res.all_iters == res.iters,
	    "k = 1: on_iter once per iteration (%zu)", ncalls);
	for (size_t i = 0; i < N; i++)
		for (int a = 0; a < D; a++)
			m[a] += X0[i * D + a] / N;
	for (size_t i = 0; i < N; i++)
		for (int a = 0; a < D; a++)
			for (int b = 0; b < D; b++)
				S[a * D + b] += (X0[i * D + a] - m[a]) *
				    (X0[i * D + b] - m[b]) / N;
	S[0] += p.reg;
	S[3] += p.reg;
	ok(fabs(g.mu[0] - m[0]) < 1e-9 && fabs(g.mu[1] - m[1]) < 1e-9,
	    "k = 1: the mean is the sample mean");
	ok(fabs(g.cov[0] - S[0]) < 1e-9 && fabs(g.cov[1] - S[1]) < 1e-9 &&
	    fabs(g.cov[3] - S[3]) < 1e-9, "k = 1: the covariance is the "
	    "biased sample covariance plus reg");
	det = S[0] * S[3] - S[1] * S[2];
	for (size_t i = 0; i < N; i++) {
		double u = X0[i * D] - m[0], v = X0[i * D + 1] - m[1];
		double q = (S[3] * u * u - 2 * S[1] * u * v + S[0] * v * v) /
		    det;
		ll += -0.5 * (2 * log(2 * M_PI) + log(det) + q);
	}
	ok(fabs(res.ll - ll / N) < 1e-9, "k = 1: the mean log-likelihood "
	    "%.12g (here %.12g)", res.ll, ll / N);
	ok(fabs(res.bic - (-2 * ll + 5 * log((double)N))) < 1e-6 &&
	    fabs(res.aic - (-2 * ll + 10)) < 1e-6, "k = 1: BIC and AIC with "
	    "5 parameters");
	for (size_t i = 0; i < N; i++)
		for (int a = 0; a < D; a++)
			cm[a] += X[i * D + a] / N;
	ok(fabs(cm[0]) < 1e-12 && fabs(cm[1]) < 1e-12, "the rows are left "
	    "centred");
	gmm_free(&g);
	free(X);
	rng_free(r);
}

static void
test_two(const double *X0)
{
	struct gmmfit_params p = base();
	struct gmmfit_result r1, r5;
	struct gmm g;
	struct rng *a = seeded(2, "gmmfit-two"), *b = seeded(2, "gmmfit-two");
	double *X = malloc(N * D * sizeof *X);
	size_t lo;

	if (gmm_alloc(&g, 2, D, GMM_FULL) != 0)
		abort();
	memcpy(X, X0, N * D * sizeof *X);
	ok(gmmfit_run(&p, a, X, N, D, NULL, &g, &r1) == 0, "k = 2: fitted");
	memcpy(X, X0, N * D * sizeof *X);
	p.restarts = 5;
	ok(gmmfit_run(&p, b, X, N, D, NULL, &g, &r5) == 0 &&
	    r5.ll >= r1.ll, "restarts: best of 5 (%.9g) >= the first start "
	    "(%.9g)", r5.ll, r1.ll);
	lo = g.mu[0] < g.mu[2] ? 0 : 1;
	ok(fabs(g.mu[lo * D] + 4) < 0.15 && fabs(g.mu[lo * D + 1]) < 0.15 &&
	    fabs(g.mu[(1 - lo) * D] - 3) < 0.15 &&
	    fabs(g.mu[(1 - lo) * D + 1] - 2) < 0.15, "k = 2: the clusters' "
	    "centres");
	ok(fabs(g.w[lo] - 0.3) < 1e-6, "k = 2: the weights 0.3, 0.7 of the "
	    "separated clusters (%.9g)", g.w[lo]);
	memcpy(X, X0, N * D * sizeof *X);
	p.restarts = 1;
	{
		double init[4] = { -4, 0, 3, 2 };
		struct gmmfit_result ri;

		ok(gmmfit_run(&p, NULL, X, N, D, init, &g, &ri) == 0 &&
		    g.mu[0] < -3.8 && g.mu[2] > 2.8, "given means: no rng "
		    "needed, the order kept");
	}
	ok(gmmfit_run(&p, a, X, 1, D, NULL, &g, &r1) == PV_E_RANGE,
	    "fewer rows than components: PV_E_RANGE");
	gmm_free(&g);
	free(X);
	rng_free(a);
	rng_free(b);
}

int
main(void)
{
	double *X = malloc(N * D * sizeof *X);

	make_rows(X);
	test_check();
	test_one(X);
	test_two(X);
	free(X);
	return tap_done();
}
