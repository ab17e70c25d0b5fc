/*
 * coral.c: CORAL and subspace-alignment maps per block (see coral.h).
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coral.h"
#include "la.h"

/* C + reg I into V (k x k), ready for la_eigh. */
static void
eig_input(size_t k, const double *cov, double reg, double *V)
{
	memcpy(V, cov, k * k * sizeof *V);
	for (size_t i = 0; i < k; i++)
		V[i * k + i] += reg;
}

/* Eigenvalues below 0 are clamped to 0 (a released covariance need not
 * be positive semi-definite); for the inverse square root, eigenvalues
 * at most k eps max|w| are dropped (a pseudo-inverse), as numpy's pinv
 * does.  w becomes the square roots (or inverse square roots). */
static void
clamp(size_t k, double *w, int inverse, struct coral_eig *e)
{
	double big = 0, tau;

	e->lo = k ? w[0] : 0;
	e->hi = k ? w[k - 1] : 0;
	for (size_t j = 0; j < k; j++)
		if (fabs(w[j]) > big)
			big = fabs(w[j]);
	tau = (double)k * DBL_EPSILON * big;
	for (size_t j = 0; j < k; j++) {
		if (w[j] < 0) {
			e->neg++;
			w[j] = 0;
		}
		if (!inverse)
			w[j] = sqrt(w[j]);
		else if (w[j] <= tau) {
			e->dropped++;
			w[j] = 0;
		} else
			w[j] = 1 / sqrt(w[j]);
	}
}

/* n doubles, or NULL (n overflowing included). */
static double *
dalloc(size_t n)
{
	if (n > SIZE_MAX / sizeof(double) - 1)
		return NULL;
	return malloc(n * sizeof(double) + 1);
}

int
coral_map(size_t k, const double *cs, const double *ct, double reg,
    double *map, struct coral_eig *src, struct coral_eig *tgt)
{
	size_t kk = k * k;
	double *V, *U, *R, *T, *w, *wt;
	int rcs, rct, rc = 0;

	memset(src, 0, sizeof *src);
	memset(tgt, 0, sizeof *tgt);
	if (k != 0 && k > SIZE_MAX / k)
		return PV_E_NOMEM;
	V = dalloc(kk);
	U = dalloc(kk);
	R = dalloc(kk);
	T = dalloc(kk);
	w = dalloc(k);
	wt = dalloc(k);
	if (!V || !U || !R || !T || !w || !wt) {
		rc = PV_E_NOMEM;
		goto out;
	}
	eig_input(k, cs, reg, V);
	eig_input(k, ct, reg, U);
	la_eigh2(k, V, w, &rcs, U, wt, &rct);
	if (rcs != 0) {
		rc = src->rc = PV_E_NUMERIC;
		goto out;
	}
	clamp(k, w, 1, src);
	la_sym_from_eig(k, V, w, R, T);		/* R = Cs^(-1/2) */
	if (rct != 0) {
		rc = tgt->rc = PV_E_NUMERIC;
		goto out;
	}
	clamp(k, wt, 0, tgt);
	la_sym_from_eig(k, U, wt, T, map);	/* T = Ct^(1/2) */
	la_gemm(0, 0, k, k, k, 1.0, R, T, 0.0, map);
out:
	free(V);
	free(U);
	free(R);
	free(T);
	free(w);
	free(wt);
	return rc;
}

int
coral_top_vectors(size_t k, const double *cov, size_t dim, double *P,
    struct coral_eig *e)
{
	double *V, *w;
	int rc = 0;

	memset(e, 0, sizeof *e);
	if (k != 0 && k > SIZE_MAX / k)
		return PV_E_NOMEM;
	V = dalloc(k * k);
	w = dalloc(k);
	if (V == NULL || w == NULL) {
		rc = PV_E_NOMEM;
		goto out;
	}
	eig_input(k, cov, 0, V);
	if (la_eigh(k, V, w) != 0) {
		rc = e->rc = PV_E_NUMERIC;
		goto out;
	}
	e->lo = k ? w[0] : 0;
	e->hi = k ? w[k - 1] : 0;
	for (size_t j = 0; j < dim; j++) {
		size_t col = k - 1 - j, arg = 0;
		double sign;

		for (size_t i = 1; i < k; i++)
			if (fabs(V[i * k + col]) > fabs(V[arg * k + col]))
				arg = i;
		sign = V[arg * k + col] < 0 ? -1 : 1;
		for (size_t i = 0; i < k; i++)
			P[i * dim + j] = sign * V[i * k + col];
	}
out:
	free(V);
	free(w);
	return rc;
}

int
coral_sa_map(size_t k, const double *cs, const double *ct, size_t m,
    int target, double *map, struct coral_eig *src, struct coral_eig *tgt)
{
	double *Pt, *Ps = NULL, *M = NULL;
	int rc;

	memset(src, 0, sizeof *src);
	if (k != 0 && m > SIZE_MAX / k)
		return PV_E_NOMEM;
	if ((Pt = dalloc(k * m)) == NULL)
		return PV_E_NOMEM;
	if ((rc = coral_top_vectors(k, ct, m, Pt, tgt)) != 0)
		goto out;
	if (target) {
		memcpy(map, Pt, k * m * sizeof *map);
		goto out;
	}
	Ps = dalloc(k * m);
	M = dalloc(m * m);
	if (Ps == NULL || M == NULL) {
		rc = PV_E_NOMEM;
		goto out;
	}
	if ((rc = coral_top_vectors(k, cs, m, Ps, src)) != 0)
		goto out;
	la_gemm(1, 0, m, m, k, 1.0, Ps, Pt, 0.0, M);
	la_gemm(0, 0, k, m, m, 1.0, Ps, M, 0.0, map);
out:
	free(Pt);
	free(Ps);
	free(M);
	return rc;
}

const double *
coral_apply(size_t m, size_t d, int f32, const void *in, const int64_t *idx,
    size_t k, const double *map, size_t w, double *g, double *y)
{
	for (size_t r = 0; r < m; r++) {
		double *gr = g + r * k;
		if (!f32) {
			const double *x = (const double *)in + r * d;
			for (size_t j = 0; j < k; j++)
				gr[j] = x[idx[j]];
		} else {
			const float *x = (const float *)in + r * d;
			for (size_t j = 0; j < k; j++)
				gr[j] = x[idx[j]];
		}
	}
	if (map == NULL || m == 0)
		return g;
	la_gemm(0, 0, m, w, k, 1.0, g, map, 0.0, y);
	return y;
}
