/*
 * psd.c: shrinking and eigenvalue clipping to a PSD matrix (see psd.h).
 */
#include <float.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "la.h"
#include "psd.h"

struct block {
	size_t k;
	const double *c;	/* the input, k x k */
	const double *sfull;	/* target, k x k, or NULL ... */
	const double *sdiag;	/* ... its diagonal */
	double *work;		/* k x k */
};

double
psd_fnorm(size_t n, const double *a)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += a[i] * a[i];
	return sqrt(s);
}

void
psd_target_diag(size_t k, const double *c, int identity, double *sdiag)
{
	double m = 0;

	for (size_t i = 0; i < k; i++)
		m += fabs(c[i * k + i]) / (double)k;
	for (size_t i = 0; i < k; i++) {
		double ci = c[i * k + i], lo = m > 0 ? PSD_DIAG_REL * m : 1;
		sdiag[i] = identity ? 1 : ci > lo ? ci : lo;
	}
}

/* out = a * Sigma + (1 - a) * C, full. */
static void
combine(const struct block *b, double a, double *out)
{
	size_t k = b->k;

	for (size_t i = 0; i < k * k; i++)
		out[i] = (1 - a) * b->c[i] + (b->sfull ? a * b->sfull[i] : 0);
	if (b->sfull == NULL)
		for (size_t i = 0; i < k; i++)
			out[i * k + i] += a * b->sdiag[i];
}

/* Cholesky attempt: does a * Sigma + (1 - a) * C factor? */
static int
factors(const struct block *b, double a)
{
	combine(b, a, b->work);
	return la_chol(b->k, b->work) == 0;
}

/*
 * The smallest alpha in [0, 1] with alpha * Sigma + (1 - alpha) * C
 * positive semi-definite (Higham, Strabic and Sego 2016, section 3):
 * f(alpha) = lambda_min of that matrix is concave, f(1) > 0 since Sigma
 * is positive definite, so {alpha : f(alpha) >= 0} is an interval
 * [alpha*, 1] and bisection on "Cholesky succeeds" brackets alpha*.
 * The returned alpha is the upper end of the final bracket: the matrix
 * formed with it has been factored, so it is positive definite.
 */
static int
shrink_alpha(const struct block *b, double tol, int *tries, double *lmin,
    double *alpha)
{
	double lo = 0, hi = 1, tau;

	*tries = 1;
	*lmin = NAN;
	*alpha = 0;
	if (factors(b, 0))
		return 0;
	(*tries)++;
	if (!factors(b, 1))
		return PV_E_NOTPD;
	while (hi - lo > tol) {
		double mid = lo + (hi - lo) / 2;

		(*tries)++;
		if (factors(b, mid))
			hi = mid;
		else
			lo = mid;
	}
	*alpha = hi;
	if (lo > 0)
		return 0;
	/* Every attempt but the first succeeded: alpha* may be 0.  Cholesky
	 * also fails on a singular positive semi-definite matrix, so an
	 * input whose smallest eigenvalue is negative only by rounding
	 * (k eps ||C||_F, the backward error of the eigensolver) is left
	 * alone.  Only here is an eigensolver needed. */
	memcpy(b->work, b->c, b->k * b->k * sizeof *b->work);
	if (la_eig_min(b->k, b->work, lmin) != 0)
		return PV_E_NUMERIC;
	tau = (double)b->k * DBL_EPSILON * psd_fnorm(b->k * b->k, b->c);
	*alpha = *lmin >= -tau ? 0 : hi;
	return 0;
}

int
psd_shrink(size_t k, const double *c, const double *sfull,
    const double *sdiag, double tol, double *out, double *alpha, int *tries,
    double *lmin)
{
	struct block b = { .k = k, .c = c, .sfull = sfull, .sdiag = sdiag };
	int rc;

	if (k != 0 && k > SIZE_MAX / sizeof(double) / k)
		return PV_E_NOMEM;
	if ((b.work = malloc(k * k * sizeof *b.work + 1)) == NULL)
		return PV_E_NOMEM;
	rc = shrink_alpha(&b, tol, tries, lmin, alpha);
	if (rc == 0) {
		if (*alpha == 0)
			memcpy(out, c, k * k * sizeof *out);
		else
			combine(&b, *alpha, out);
	}
	free(b.work);
	return rc;
}

int
psd_eigclip(size_t k, const double *c, double floor, double *out,
    size_t *clipped, double *lmin)
{
	double *w, *work, *scratch = NULL;
	int rc = 0;

	*clipped = 0;
	if (k != 0 && k > SIZE_MAX / sizeof(double) / k)
		return PV_E_NOMEM;
	w = malloc(k * sizeof *w + 1);
	work = malloc(k * k * sizeof *work + 1);
	if (w == NULL || work == NULL) {
		rc = PV_E_NOMEM;
		goto out;
	}
	memcpy(work, c, k * k * sizeof *work);
	if (la_eigh(k, work, w) != 0) {
		rc = PV_E_NUMERIC;
		goto out;
	}
	*lmin = k ? w[0] : NAN;
	for (size_t j = 0; j < k; j++)
		if (w[j] < floor) {
			w[j] = floor;
			(*clipped)++;
		}
	if (*clipped == 0)
		memcpy(out, c, k * k * sizeof *out);
	else if ((scratch = malloc(k * k * sizeof *scratch)) == NULL)
		rc = PV_E_NOMEM;
	else
		la_sym_from_eig(k, work, w, out, scratch);
out:
	free(scratch);
	free(w);
	free(work);
	return rc;
}
