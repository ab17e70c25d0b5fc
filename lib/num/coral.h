/*
 * coral.h: the per-block linear maps of coral-align, computed from two
 * released covariance blocks (post-processing: no data is read).
 *
 * CORAL (Sun, Feng and Saenko 2016) maps source rows x to x Cs^(-1/2)
 * Ct^(1/2), with Cs and Ct the source and target covariances plus
 * lambda I.  Subspace alignment (Fernando et al. 2013) maps source rows
 * by Ps Ps^T Pt and target rows by Pt, with P the top eigenvectors of
 * each covariance.  A row times the map (k x w, row-major) is the
 * aligned row.  Matrices are k x k, row-major, symmetric (both triangles).
 *
 * Ownership: every array is the caller's.  Nothing here prints, exits or
 * reads the environment: what a tool may warn about comes back in struct
 * coral_eig.  Functions return 0, PV_E_NOMEM, or PV_E_NUMERIC (the
 * eigensolver failed; the struct coral_eig of that side has rc set).
 */
#ifndef PRIVADA_CORAL_H
#define PRIVADA_CORAL_H

#include "pverr.h"

#include <stddef.h>
#include <stdint.h>

/* What the eigen-decomposition of one side found. */
struct coral_eig {
	int rc;			/* 0, or PV_E_NUMERIC: the solver failed */
	double lo, hi;		/* smallest and largest eigenvalue */
	size_t neg;		/* negative eigenvalues, clamped to 0 (a
				 * released covariance need not be PSD) */
	size_t dropped;		/* eigenvalues at most k eps max|w| left out
				 * of an inverse square root (a
				 * pseudo-inverse, as numpy's pinv) */
};

/* The CORAL map (cs + reg I)^(-1/2) (ct + reg I)^(1/2) into map (k x k),
 * from one eigen-decomposition of each side (both at once when the BLAS
 * has two or more threads).  On a failure of the source side, tgt is
 * not filled. */
int coral_map(size_t k, const double *cs, const double *ct, double reg,
    double *map, struct coral_eig *src, struct coral_eig *tgt);

/* The top dim eigenvectors of cov (k x k) by decreasing eigenvalue into P
 * (k x dim, dim <= k), each signed so that its entry of largest magnitude
 * (the first of equals) is positive: eigenvectors are defined up to sign,
 * and a fixed rule makes the output reproducible. */
int coral_top_vectors(size_t k, const double *cov, size_t dim, double *P,
    struct coral_eig *e);

/* The subspace-alignment map of dim directions (dim <= k) into map
 * (k x dim): Pt for target rows (target set; src is not filled), else
 * Ps Ps^T Pt.  The target side is decomposed first. */
int coral_sa_map(size_t k, const double *cs, const double *ct, size_t dim,
    int target, double *map, struct coral_eig *src, struct coral_eig *tgt);

/* Rows 0..m-1 of the chunk in (d columns, f32 when f32 is set, else
 * f64) restricted to the columns idx[0..k-1], as doubles into g (m x k),
 * times map (k x w; NULL: the identity, w = k) into y (m x w).
 * @return the aligned rows: y, or g when map is NULL. */
const double *coral_apply(size_t m, size_t d, int f32, const void *in,
    const int64_t *idx, size_t k, const double *map, size_t w, double *g,
    double *y);

#endif
