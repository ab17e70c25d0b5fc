/*
 * Unit tests of lib/num/psd: shrinking and eigenvalue clipping on 2 x 2
 * matrices whose answers are known in closed form.
 */
#include <math.h>
#include <string.h>

#include "psd.h"
#include "tap.h"

/* 1 if the symmetric 2 x 2 matrix a is PSD (to a relative tol). */
static int
psd2(const double *a, double tol)
{
	return a[0] >= -tol && a[3] >= -tol &&
	    a[0] * a[3] - a[1] * a[2] >= -tol;
}

static double
maxdiff(const double *a, const double *b, size_t n)
{
	double m = 0;

	for (size_t i = 0; i < n; i++)
		m = fmax(m, fabs(a[i] - b[i]));
	return m;
}

int
main(void)
{
	double v[2] = { 3, 4 }, d[3], out[4], alpha, lmin;
	double c[4] = { 1, 2, 2, 1 };		/* eigenvalues 3 and -1 */
	double pd[4] = { 2, 1, 1, 2 }, sing[4] = { 1, 1, 1, 1 };
	double c3[9] = { 2, 0, 0, 0, -1, 0, 0, 0, 0 }, bad[4] = { 1, 0, 0, -1 };
	double one[2] = { 1, 1 };
	size_t clipped;
	int tries;

	ok(psd_fnorm(2, v) == 5, "Frobenius norm of (3, 4) is 5");
	psd_target_diag(3, c3, 1, d);
	ok(d[0] == 1 && d[1] == 1 && d[2] == 1, "identity target");
	psd_target_diag(3, c3, 0, d);
	ok(d[0] == 2 && d[1] == PSD_DIAG_REL && d[2] == PSD_DIAG_REL,
	    "diag target: entries below 1e-6 of the mean |diagonal| raised");

	ok(psd_shrink(2, pd, NULL, one, 1e-9, out, &alpha, &tries, &lmin) ==
	    0 && alpha == 0 && tries == 1 && memcmp(out, pd, sizeof pd) == 0,
	    "a positive definite matrix is left alone");
	ok(psd_shrink(2, c, NULL, one, 1e-9, out, &alpha, &tries, &lmin) == 0,
	    "shrink [[1,2],[2,1]] towards I");
	/* alpha I + (1 - alpha) C has eigenvalues 3 - 2 alpha and
	 * 2 alpha - 1: alpha* = 1/2. */
	ok(alpha >= 0.5 && alpha <= 0.5 + 2e-9, "alpha %.17g is 1/2 within "
	    "the tolerance", alpha);
	{
		double want[4] = { 1, 2 * (1 - alpha), 2 * (1 - alpha), 1 };
		ok(maxdiff(out, want, 4) < 1e-15 && psd2(out, 0),
		    "the result is alpha I + (1 - alpha) C, and PSD");
	}
	ok(psd_shrink(2, c, pd, NULL, 1e-9, out, &alpha, &tries, &lmin) == 0 &&
	    psd2(out, 0) && alpha > 0 && alpha < 1,
	    "shrink towards a full target");
	ok(psd_shrink(2, c, bad, NULL, 1e-9, out, &alpha, &tries, &lmin) ==
	    PV_E_NOTPD, "a target that is not positive definite is refused");
	ok(psd_shrink(2, sing, NULL, one, 1e-9, out, &alpha, &tries, &lmin) ==
	    0 && alpha == 0 && fabs(lmin) < 1e-12,
	    "a singular PSD matrix (Cholesky fails) is left alone");

	ok(psd_eigclip(2, c, 0, out, &clipped, &lmin) == 0 && clipped == 1 &&
	    fabs(lmin + 1) < 1e-12, "eigclip: one eigenvalue (-1) clipped");
	{
		double want[4] = { 1.5, 1.5, 1.5, 1.5 };
		ok(maxdiff(out, want, 4) < 1e-12 && out[1] == out[2],
		    "floor 0: the nearest PSD matrix 3 v v^T, symmetric");
	}
	ok(psd_eigclip(2, c, 0.5, out, &clipped, &lmin) == 0 && clipped == 1,
	    "floor 0.5");
	{
		double want[4] = { 1.75, 1.25, 1.25, 1.75 };
		ok(maxdiff(out, want, 4) < 1e-12, "floor 0.5: 3 v v^T + "
		    "0.5 u u^T");
	}
	ok(psd_eigclip(2, pd, 0, out, &clipped, &lmin) == 0 && clipped == 0 &&
	    memcmp(out, pd, sizeof pd) == 0 && fabs(lmin - 1) < 1e-12,
	    "eigclip leaves a PD matrix alone");
	return tap_done();
}
