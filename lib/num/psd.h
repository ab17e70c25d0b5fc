/*
 * psd.h: make a symmetric matrix positive semi-definite, as psdshrink
 * does to released covariance blocks (post-processing: no data is read).
 *
 * Shrinking (Higham, Strabic and Sego 2016) takes the smallest alpha in
 * [0, 1] with alpha * Sigma + (1 - alpha) * C positive semi-definite, for
 * a positive definite target Sigma: a full matrix, or a diagonal one
 * (the identity, or C's own diagonal clamped up by psd_target_diag).
 * Eigenvalue clipping replaces the eigenvalues of C below a floor by the
 * floor (Higham 1988: with floor 0, the nearest PSD matrix in the
 * Frobenius norm).  Matrices are k x k, row-major, full (both triangles).
 *
 * Ownership: every array is the caller's; out never aliases c.  Nothing
 * here prints, exits or reads the environment.  Functions return 0 or
 * PV_E_NOMEM, PV_E_NOTPD (the target is not positive definite) or
 * PV_E_NUMERIC (the eigensolver failed).
 */
#ifndef PRIVADA_PSD_H
#define PRIVADA_PSD_H

#include "pverr.h"

#include <stddef.h>

/* The diag target clamps diagonal entries up to this fraction of their
 * mean absolute value, so that the target is positive definite. */
#define PSD_DIAG_REL 1e-6

/* The Frobenius norm of the n values a[0..n-1]. */
double psd_fnorm(size_t n, const double *a);

/* The diagonal target of the k x k matrix c into sdiag[0..k-1]: all 1
 * (identity), or c's diagonal with each entry at least PSD_DIAG_REL times
 * the mean absolute diagonal (1 when that is 0). */
void psd_target_diag(size_t k, const double *c, int identity, double *sdiag);

/*
 * Shrink c towards the target sfull (k x k), or the diagonal sdiag when
 * sfull is NULL: *alpha the smallest shrinkage, to within tol, whose
 * Cholesky factorisation succeeds (0 when c factors, or when c's smallest
 * eigenvalue *lmin is negative only by rounding, k eps ||c||_F; *lmin is
 * NaN unless computed), out = alpha * target + (1 - alpha) * c (c itself
 * when alpha is 0), *tries the factorisations attempted.
 */
int psd_shrink(size_t k, const double *c, const double *sfull,
    const double *sdiag, double tol, double *out, double *alpha, int *tries,
    double *lmin);

/* Clip the eigenvalues of c below floor to floor into out (c itself when
 * none is); *clipped their number, *lmin the smallest before. */
int psd_eigclip(size_t k, const double *c, double floor, double *out,
    size_t *clipped, double *lmin);

#endif
