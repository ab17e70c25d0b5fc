/* subspace.c: random feature partitions and forward selection (see
 * subspace.h). */
#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "subspace.h"

void
subspace_permute(struct rng *r, size_t d, size_t *perm)
{
	for (size_t i = 0; i < d; i++)
		perm[i] = i;
	for (size_t i = d; i > 1; i--) {
		size_t j = (size_t)rng_uniform_below(r, (uint64_t)i), t;

		t = perm[i - 1];
		perm[i - 1] = perm[j];
		perm[j] = t;
	}
}

int
subspace_equal_sizes(size_t d, size_t m, size_t *sizes)
{
	if (m == 0 || m > d)
		return SUBSPACE_E_RANGE;
	for (size_t i = 0; i < m; i++)
		sizes[i] = d / m + (i < d % m);
	return 0;
}

static int
cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (x > y) - (x < y);
}

void
subspace_sort_blocks(size_t *idx, const size_t *sizes, size_t nb)
{
	size_t o = 0;

	for (size_t i = 0; i < nb; i++) {
		qsort(idx + o, sizes[i], sizeof *idx, cmp_size);
		o += sizes[i];
	}
}

int
subspace_forward_select(size_t d, const double *cov, const size_t *order,
    double tau, double floor, size_t maxk, size_t *sizes, size_t *nb)
{
	double *wt = NULL, *r = NULL, *x = NULL, maxdiag = 0, thr;
	size_t cap = 0, t = 0, k = 0, pos = 0, n = 0;
	int rc = 0;

	if (d == 0 || d > SIZE_MAX / d / sizeof *cov || !(tau >= 0) ||
	    !isfinite(tau) || !(floor >= 0) || !isfinite(floor))
		return SUBSPACE_E_RANGE;
	for (size_t i = 0; i < d * d; i++)
		if (!isfinite(cov[i]))
			return SUBSPACE_E_RANGE;
	for (size_t i = 0; i < d; i++)
		if (cov[i * d + i] > maxdiag)
			maxdiag = cov[i * d + i];
	thr = fmax(floor, 1e-12 * maxdiag);
	r = malloc(d * sizeof *r);
	x = malloc(d * sizeof *x);
	if (r == NULL || x == NULL) {
		rc = SUBSPACE_E_NOMEM;
		goto out;
	}
	/*
	 * wt holds the rows of W^T, W the partial Cholesky factor of the
	 * block (cov[B,B] = W[B,:] W[B,:]^T over the accepted pivots), so
	 * that cov - W W^T is the residual covariance after projecting
	 * every feature on the span of the block's features.
	 */
	while (pos < d) {
		size_t f = order[pos];
		double rff, gain = 0;

		if (maxk != 0 && k == maxk) {
			sizes[n++] = k;
			k = t = 0;
			continue;
		}
		memcpy(r, cov + f * d, d * sizeof *r);
		if (t > 0) {
			for (size_t j = 0; j < t; j++)
				x[j] = wt[j * d + f];
			cblas_dgemv(CblasRowMajor, CblasTrans, (int)t, (int)d,
			    -1.0, wt, (int)d, x, 1, 1.0, r, 1);
		}
		rff = r[f];
		if (rff > thr)
			gain = cblas_ddot((int)d, r, 1, r, 1) / rff;
		if (k > 0 && gain < tau) {
			/* E would grow: the block ends before f, which
			 * opens the next one. */
			sizes[n++] = k;
			k = t = 0;
			continue;
		}
		if (rff > thr) {
			double s = 1 / sqrt(rff);

			if (t == cap) {
				size_t nc = cap ? 2 * cap : 16;
				double *nw;

				if (nc > d)
					nc = d;
				nw = realloc(wt, nc * d * sizeof *wt);
				if (nw == NULL) {
					rc = SUBSPACE_E_NOMEM;
					goto out;
				}
				wt = nw;
				cap = nc;
			}
			for (size_t j = 0; j < d; j++)
				wt[t * d + j] = r[j] * s;
			t++;
		}
		k++;
		pos++;
	}
	if (k > 0)
		sizes[n++] = k;
	*nb = n;
out:
	free(wt);
	free(r);
	free(x);
	return rc;
}
