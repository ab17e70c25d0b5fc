/*
 * Unit tests of lib/uda: the associative, distillation and information
 * maximisation losses.
 *
 * Values: on fixed inputs (multiples of 1/8, exact in f32) the losses
 * match the constants printed by tests/vectors/uda_ref.py, an
 * independent numpy computation of the formulas of uda.h, to 1e-12
 * relative (both evaluate in double; the difference is summation order).
 *
 * Gradients: against central finite differences of the loss itself in
 * the f32 inputs (the step actually taken, (float)(x + h) - x, divides
 * the difference).  The loss is evaluated in double from floats, so with
 * h about 1e-3 the truncation error is about h^2 |L'''| < 1e-5 and the
 * cancellation 1e-16 / 1e-3; the gradients come back as floats (relative
 * 6e-8).  A tolerance of 1e-4 (1 + |fd|) separates rounding from a wrong
 * formula, which is off by O(|g|).  Inputs are seeded; each weight is
 * also checked alone, so that a wrong term cannot hide behind another.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "tap.h"
#include "uda.h"

/* The inputs of tests/vectors/uda_ref.py. */
static const float A0[5 * 3] = { 1, -2, 3, 0, 4, -1, 2, 2, 2, -3, 1, 0, 5,
	-1, -2 };
static const float B0[4 * 3] = { 2, 0, -1, -1, 3, 1, 4, -2, 2, 0, -3, 5 };
static const int32_t Y0[5] = { 0, 1, 0, 2, 1 };
static const float S0[3 * 4] = { 8, 2, -4, 0, 1, 1, 1, 1, -6, 3, 10, 2 };
static const float Z0[3 * 4] = { 2, -1, 0, 5, 7, -3, 1, 0, 0, 2, 4, -2 };

static int
close_rel(double a, double b, double tol)
{
	return fabs(a - b) <= tol * (1 + fabs(b));
}

static struct rng *
seeded(const char *item)
{
	struct rng *r;

	if (rng_new_seeded(&r, 20261122, item) != 0)
		abort();
	return r;
}

/* Uniform on [-a, a]. */
static float
unif(struct rng *r, double a)
{
	return (float)(a * (2 * ((double)(rng_u64(r) >> 11) * 0x1p-53) - 1));
}

static double
assoc_loss(const float *A, const float *B, size_t na, size_t nb, size_t h,
    const int32_t *y, const double *w, double *work)
{
	double l;

	if (uda_assoc(A, B, na, nb, h, y, w, &l, NULL, NULL, NULL, work) != 0)
		abort();
	return l;
}

static void
test_values(void)
{
	float A[15], B[12], S[12], Z[12];
	double w[3] = { 1, 1, 1 }, l, work[512], ent, div;
	struct uda_assoc_parts p;
	int rc;

	for (size_t i = 0; i < 15; i++)
		A[i] = A0[i] / 8;
	for (size_t i = 0; i < 12; i++)
		B[i] = B0[i] / 8;
	ok(uda_assoc_work(5, 4, 3) <= 512, "work size");
	rc = uda_assoc(A, B, 5, 4, 3, Y0, w, &l, &p, NULL, NULL, work);
	ok(rc == 0 && close_rel(p.walker, 1.6024754934430512, 1e-12),
	    "walker %.17g (numpy 1.6024754934430512)", p.walker);
	ok(close_rel(p.visit, 1.3864926990653927, 1e-12),
	    "visit %.17g (numpy 1.3864926990653927)", p.visit);
	ok(close_rel(p.cover, 1.6121349763238282, 1e-12),
	    "cover %.17g (numpy 1.6121349763238282)", p.cover);
	ok(close_rel(l, p.walker + p.visit + p.cover, 1e-15), "total");
	for (size_t i = 0; i < 15; i++)
		A[i] = A0[i] / 2;
	for (size_t i = 0; i < 12; i++)
		B[i] = B0[i] / 2;
	w[0] = 2;
	w[1] = 0.5;
	w[2] = 0.25;
	rc = uda_assoc(A, B, 5, 4, 3, Y0, w, &l, &p, NULL, NULL, work);
	ok(rc == 0 && close_rel(p.walker, 1.9558260548896125, 1e-12) &&
	    close_rel(p.visit, 1.5399540872088007, 1e-12) &&
	    close_rel(p.cover, 1.8893982522649633, 1e-12),
	    "sharper: %.17g %.17g %.17g (numpy 1.9558260548896125 "
	    "1.5399540872088007 1.8893982522649633)", p.walker, p.visit,
	    p.cover);
	ok(close_rel(l, 2 * p.walker + 0.5 * p.visit + 0.25 * p.cover, 1e-15),
	    "weighted total");
	for (size_t i = 0; i < 12; i++) {
		S[i] = S0[i] / 4;
		Z[i] = Z0[i] / 4;
	}
	l = uda_kd(S, Z, 3, 4, 1, NULL);
	ok(close_rel(l, 4.3469219689827696, 1e-12),
	    "kd T=1 %.17g (numpy 4.3469219689827696)", l);
	l = uda_kd(S, Z, 3, 4, 20, NULL);
	ok(close_rel(l, 1663.6873633461037, 1e-12),
	    "kd T=20 %.17g (numpy 1663.6873633461037)", l);
	l = uda_im(Z, 3, 4, NULL, &ent, &div, work);
	ok(close_rel(l, -0.2004112891188472, 1e-12) &&
	    close_rel(ent, 1.139829873858816, 1e-12) &&
	    close_rel(div, 1.3402411629776632, 1e-12),
	    "im %.17g = %.17g - %.17g (numpy -0.2004112891188472 = "
	    "1.139829873858816 - 1.3402411629776632)", l, ent, div);
}

static void
test_errors(void)
{
	float A[6] = { 0 }, B[6] = { 0 }, gA[6], gB[6];
	int32_t y[2] = { 0, -1 };
	double w[3] = { 1, 1, 1 }, l, work[64];

	ok(uda_assoc_work(0, 3, 1) == 0 && uda_assoc_work(3, 0, 1) == 0 &&
	    uda_assoc_work(3, 3, 0) == 0,
	    "empty batches have no work size");
	ok(uda_assoc(A, B, 2, 2, 3, y, w, &l, NULL, gA, gB, work) ==
	    UDA_E_RANGE, "a negative label is refused");
	y[1] = 1;
	w[1] = -1;
	ok(uda_assoc(A, B, 2, 2, 3, y, w, &l, NULL, gA, gB, work) ==
	    UDA_E_RANGE, "a negative weight is refused");
	w[1] = 1;
	ok(uda_assoc(A, B, 2, 2, 3, y, w, &l, NULL, gA, gB, work) == 0 &&
	    isfinite(l), "equal embeddings: finite loss");
	/* All embeddings 0: every softmax is uniform, P^aba_il = 1/2, and
	 * the walker loss of two singleton classes is -log(1/2 + eps). */
	ok(close_rel(l, -log(0.5 + UDA_LOG_EPS) * 3, 1e-12),
	    "uniform walks: 3 log 2 (%.17g)", l);
}

/* Central differences of the associative loss in every input value. */
static void
fd_assoc(const double *w, const char *what, struct rng *r, size_t na,
    size_t nb, size_t h, double scale)
{
	size_t nA = na * h, nB = nb * h, bad = 0;
	float *A = calloc(nA, sizeof *A), *B = calloc(nB, sizeof *B);
	float *gA = calloc(nA, sizeof *gA), *gB = calloc(nB, sizeof *gB);
	int32_t *y = calloc(na, sizeof *y);
	double *work = calloc(uda_assoc_work(na, nb, h), sizeof *work), l;
	double worst = 0;

	if (!A || !B || !gA || !gB || !y || !work)
		abort();
	for (size_t i = 0; i < nA; i++)
		A[i] = unif(r, scale);
	for (size_t i = 0; i < nB; i++)
		B[i] = unif(r, scale);
	for (size_t i = 0; i < na; i++)
		y[i] = (int32_t)rng_uniform_below(r, 3);
	if (uda_assoc(A, B, na, nb, h, y, w, &l, NULL, gA, gB, work) != 0)
		abort();
	for (int side = 0; side < 2; side++) {
		float *x = side ? B : A, *g = side ? gB : gA;
		size_t n = side ? nB : nA;

		for (size_t i = 0; i < n; i++) {
			float x0 = x[i], xp, xm;
			double lp, lm, fd;

			x[i] = xp = x0 + 1e-3f;
			lp = assoc_loss(A, B, na, nb, h, y, w, work);
			x[i] = xm = x0 - 1e-3f;
			lm = assoc_loss(A, B, na, nb, h, y, w, work);
			x[i] = x0;
			fd = (lp - lm) / ((double)xp - (double)xm);
			if (!close_rel(g[i], fd, 1e-4))
				bad++;
			if (fabs(g[i] - fd) > worst)
				worst = fabs(g[i] - fd);
		}
	}
	ok(bad == 0, "assoc %s: %zu x %zu x %zu, gradients match finite "
	    "differences (%zu off, worst %.3g)", what, na, nb, h, bad, worst);
	free(A);
	free(B);
	free(gA);
	free(gB);
	free(y);
	free(work);
}

static void
test_assoc_grad(void)
{
	struct rng *r = seeded("assoc");
	static const double ws[4][3] = { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 },
		{ 1, 0.7, 0.3 } };
	static const char *const names[4] = { "walker", "visit", "cover",
		"weighted" };

	for (int k = 0; k < 4; k++)
		fd_assoc(ws[k], names[k], r, 6, 5, 4, 1);
	/* Unequal batches, sharper softmaxes. */
	fd_assoc(ws[3], "weighted, scale 2", r, 4, 9, 3, 2);
	fd_assoc(ws[3], "weighted, one row each", r, 1, 1, 2, 1);
	rng_free(r);
}

/* Central differences of kd (in z) and im. */
static void
test_kd_im_grad(void)
{
	struct rng *r = seeded("kdim");
	enum { N = 7, K = 5 };
	float s[N * K], z[N * K], g[N * K];
	double work[K], worst = 0;
	size_t bad = 0;

	for (size_t i = 0; i < N * K; i++) {
		s[i] = unif(r, 6);
		z[i] = unif(r, 6);
	}
	for (int t = 0; t < 2; t++) {
		double temp = t ? 20 : 1;

		bad = 0;
		worst = 0;
		(void)uda_kd(s, z, N, K, temp, g);
		for (size_t i = 0; i < N * K; i++) {
			float z0 = z[i], zp = z0 + 1e-2f, zm = z0 - 1e-2f;
			double lp, lm, fd;

			z[i] = zp;
			lp = uda_kd(s, z, N, K, temp, NULL);
			z[i] = zm;
			lm = uda_kd(s, z, N, K, temp, NULL);
			z[i] = z0;
			fd = (lp - lm) / ((double)zp - (double)zm);
			if (!close_rel(g[i], fd, 1e-4))
				bad++;
			if (fabs(g[i] - fd) > worst)
				worst = fabs(g[i] - fd);
		}
		ok(bad == 0, "kd T=%g: gradients match finite differences (%zu "
		    "off, worst %.3g)", temp, bad, worst);
	}
	{
		/* The teacher's own logits are a minimum: zero gradient. */
		(void)uda_kd(s, s, N, K, 20, g);
		worst = 0;
		for (size_t i = 0; i < N * K; i++)
			if (fabs(g[i]) > worst)
				worst = fabs(g[i]);
		ok(worst < 1e-6, "kd of the teacher against itself: zero "
		    "gradient (%.3g)", worst);
	}
	bad = 0;
	worst = 0;
	(void)uda_im(z, N, K, g, NULL, NULL, work);
	for (size_t i = 0; i < N * K; i++) {
		float z0 = z[i], zp = z0 + 1e-3f, zm = z0 - 1e-3f;
		double lp, lm, fd;

		z[i] = zp;
		lp = uda_im(z, N, K, NULL, NULL, NULL, work);
		z[i] = zm;
		lm = uda_im(z, N, K, NULL, NULL, NULL, work);
		z[i] = z0;
		fd = (lp - lm) / ((double)zp - (double)zm);
		if (!close_rel(g[i], fd, 1e-4))
			bad++;
		if (fabs(g[i] - fd) > worst)
			worst = fabs(g[i] - fd);
	}
	ok(bad == 0, "im: gradients match finite differences (%zu off, "
	    "worst %.3g)", bad, worst);
	/* A non-finite row is left out: its gradient is 0 and the others
	 * are those of the batch without it. */
	{
		float z2[N * K], g2[N * K];
		double a, b;

		memcpy(z2, z, sizeof z2);
		z2[2 * K + 1] = NAN;
		a = uda_im(z2, N, K, g2, NULL, NULL, work);
		memmove(z2 + 2 * K, z2 + 3 * K, (N - 3) * K * sizeof *z2);
		memcpy(z2, z, 2 * K * sizeof *z2);
		memcpy(z2 + 2 * K, z + 3 * K, (N - 3) * K * sizeof *z2);
		b = uda_im(z2, N - 1, K, g, NULL, NULL, work);
		ok(close_rel(a, b, 1e-12) && g2[2 * K] == 0 &&
		    close_rel(g2[3 * K], g[2 * K], 1e-6),
		    "im skips a non-finite row");
	}
	rng_free(r);
}

int
main(void)
{
	test_values();
	test_errors();
	test_assoc_grad();
	test_kd_im_grad();
	return tap_done();
}
