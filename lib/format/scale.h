/*
 * scale.h: the row transforms of featurize, in the order it applies
 * them: binary presence (every value other than 0 becomes 1), map features from [lo, hi] to [0, 1] with clamping (the same
 * bounds for all features, or per-feature bounds learnt from a PUBLIC
 * file), divide by the l1 or l2 norm, scale rows of L2 norm above a bound
 * down to it, and convert to the output dtype with the bound still kept.
 *
 * Ownership: struct scale is plain; flo and fhi, when set, are owned by
 * it (scale_free).  Nothing here prints, exits or reads the environment.
 * Errors: PV_E_NOMEM, PV_E_RANGE (a value does not fit in f32).
 */
#ifndef PRIVADA_SCALE_H
#define PRIVADA_SCALE_H

#include "pverr.h"

#include <stddef.h>

enum { SCALE_NORM_NONE, SCALE_NORM_L1, SCALE_NORM_L2 };

struct scale {
	int binary;		/* x != 0 -> 1, first */
	int on;			/* map to [0, 1] */
	double lo, hi;		/* the same bounds for every feature */
	double *flo, *fhi;	/* per-feature bounds, or NULL (owned) */
	int normalize;		/* SCALE_NORM_* */
	double clip;		/* L2 bound of a row; 0: none */
	int dtype;		/* TS_F32 or TS_F64: what rows become */
};

/* Map x[0..d) to [0, 1] by the bounds (nothing unless on).  A feature
 * whose bounds are equal maps to a step: 1 above lo, else 0. */
void scale_bounds(const struct scale *s, double *x, size_t d);

/* L2 norm, summing squares in index order; rescaled by the largest
 * magnitude when the sum would overflow or underflow. */
double scale_l2norm(const double *x, size_t d);

/* Divide x by its l1 or l2 norm (kind SCALE_NORM_*); a zero row stays. */
void scale_normalize(int kind, double *x, size_t d);

/*
 * The whole transform of one row: presence (binary), bounds, normalization, clipping, and
 * for dtype TS_F32 the conversion into f[0..d).  With a clip bound the
 * stored row's norm (in the output dtype) never exceeds it.
 * @return 0, or PV_E_RANGE with *bad the feature too large for f32.
 */
int scale_row(const struct scale *s, double *x, float *f, size_t d,
    size_t *bad);

/* Start learning per-feature bounds of d features (flo = +inf, fhi =
 * -inf).  @return 0 or PV_E_NOMEM. */
int scale_learn_begin(struct scale *s, size_t d);
/* Widen the bounds by one row. */
void scale_learn_row(struct scale *s, const double *x, size_t d);
/* Free the per-feature bounds. */
void scale_free(struct scale *s);

#endif
