/*
 * Unit tests of lib/la: la_eig_min on matrices whose smallest eigenvalue
 * is known, at sizes where LAPACK's dsyevr uses its W argument as a
 * d-element array (a one-double W once overflowed into the caller's
 * stack: the guard values around the output must survive).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "la.h"
#include "tap.h"

static int
check(size_t d)
{
	double *a = calloc(d * d, sizeof *a);
	struct { double before[4], w, after[4]; } g;
	int rc, guard = 1;

	if (a == NULL)
		return 0;
	/* D = diag(1, ..., 1, d/2 + 1, ..., d): the smallest eigenvalue 1
	 * with multiplicity d/2 (ties make dsyevr return more than the one
	 * eigenvalue asked for, as on the degenerate covariances of sparse
	 * features), rotated by a Householder reflection H = I - 2 v v^T /
	 * (v^T v), v = (1, ..., 1): H D H has the same eigenvalues and no
	 * zero entries. */
	for (size_t i = 0; i < d; i++)
		for (size_t j = 0; j < d; j++) {
			double s = 0;
			for (size_t k = 0; k < d; k++) {
				double hik = (i == k) - 2.0 / (double)d;
				double hkj = (k == j) - 2.0 / (double)d;
				s += hik * (k < d / 2 ? 1.0 : (double)(k + 1)) * hkj;
			}
			a[i * d + j] = s;
		}
	for (int k = 0; k < 4; k++)
		g.before[k] = g.after[k] = 12345.0;
	g.w = NAN;
	rc = la_eig_min(d, a, &g.w);
	for (int k = 0; k < 4; k++)
		guard &= g.before[k] == 12345.0 && g.after[k] == 12345.0;
	free(a);
	return rc == 0 && fabs(g.w - 1.0) < 1e-8 * (double)d && guard;
}

int
main(void)
{
	ok(check(1), "1 x 1: the eigenvalue itself");
	ok(check(5), "5 x 5: smallest eigenvalue 1, twice");
	ok(check(300), "300 x 300: smallest eigenvalue 1, 150 times, the memory beside the output intact");
	return tap_done();
}
