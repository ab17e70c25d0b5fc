/* scale.c: featurize's row transforms. */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "scale.h"
#include "tensor.h"

void
scale_bounds(const struct scale *s, double *x, size_t d)
{
	if (!s->on)
		return;
	for (size_t j = 0; j < d; j++) {
		double lo = s->flo ? s->flo[j] : s->lo;
		double hi = s->fhi ? s->fhi[j] : s->hi;
		double v;
		/* A feature constant in the public file maps to a step. */
		if (!(hi > lo))
			v = x[j] > lo ? 1 : 0;
		else
			v = (x[j] - lo) / (hi - lo);
		x[j] = v < 0 ? 0 : v > 1 ? 1 : v;
	}
}

double
scale_l2norm(const double *x, size_t d)
{
	double s = 0, m = 0;

	for (size_t j = 0; j < d; j++)
		s += x[j] * x[j];
	if (isfinite(s) && s >= DBL_MIN)
		return sqrt(s);
	for (size_t j = 0; j < d; j++)
		if (fabs(x[j]) > m)
			m = fabs(x[j]);
	if (m == 0)
		return 0;
	s = 0;
	for (size_t j = 0; j < d; j++)
		s += (x[j] / m) * (x[j] / m);
	return m * sqrt(s);
}

static double
l2norm_f(const float *x, size_t d)
{
	double s = 0;

	for (size_t j = 0; j < d; j++)
		s += (double)x[j] * (double)x[j];
	return sqrt(s);
}

void
scale_normalize(int kind, double *x, size_t d)
{
	double n = 0;

	if (kind == SCALE_NORM_NONE)
		return;
	if (kind == SCALE_NORM_L1) {
		for (size_t j = 0; j < d; j++)
			n += fabs(x[j]);
		if (!isfinite(n)) {
			double m = 0;
			for (size_t j = 0; j < d; j++)
				if (fabs(x[j]) > m)
					m = fabs(x[j]);
			n = 0;
			for (size_t j = 0; j < d; j++)
				n += fabs(x[j] / m);
			for (size_t j = 0; j < d; j++)
				x[j] = x[j] / m / n;
			return;
		}
	} else {
		n = scale_l2norm(x, d);
	}
	if (n > 0)
		for (size_t j = 0; j < d; j++)
			x[j] /= n;
}

int
scale_row(const struct scale *s, double *x, float *f, size_t d,
    size_t *bad)
{
	if (s->binary)
		for (size_t j = 0; j < d; j++)
			x[j] = x[j] != 0;
	scale_bounds(s, x, d);
	scale_normalize(s->normalize, x, d);
	if (s->clip > 0) {
		double n = scale_l2norm(x, d);
		if (n > s->clip)
			for (size_t j = 0; j < d; j++)
				x[j] *= s->clip / n;
		/* Rounding can leave the norm an ulp above the bound; the
		 * bound is a promise, so shrink until it holds. */
		for (int k = 0; k < 64 && s->dtype == TS_F64 &&
		    scale_l2norm(x, d) > s->clip; k++)
			for (size_t j = 0; j < d; j++)
				x[j] = nextafter(x[j], 0);
	}
	if (s->dtype != TS_F32)
		return 0;
	for (size_t j = 0; j < d; j++) {
		if (fabs(x[j]) > FLT_MAX) {
			*bad = j;
			return PV_E_RANGE;
		}
		f[j] = (float)x[j];
	}
	for (int k = 0; k < 64 && s->clip > 0 && l2norm_f(f, d) > s->clip; k++)
		for (size_t j = 0; j < d; j++)
			f[j] = nextafterf(f[j], 0);
	return 0;
}

int
scale_learn_begin(struct scale *s, size_t d)
{
	free(s->flo);
	free(s->fhi);
	s->flo = calloc(d ? d : 1, sizeof *s->flo);
	s->fhi = calloc(d ? d : 1, sizeof *s->fhi);
	if (s->flo == NULL || s->fhi == NULL) {
		scale_free(s);
		return PV_E_NOMEM;
	}
	for (size_t j = 0; j < d; j++) {
		s->flo[j] = INFINITY;
		s->fhi[j] = -INFINITY;
	}
	return 0;
}

void
scale_learn_row(struct scale *s, const double *x, size_t d)
{
	for (size_t j = 0; j < d; j++) {
		if (x[j] < s->flo[j])
			s->flo[j] = x[j];
		if (x[j] > s->fhi[j])
			s->fhi[j] = x[j];
	}
}

void
scale_free(struct scale *s)
{
	free(s->flo);
	free(s->fhi);
	s->flo = s->fhi = NULL;
}
