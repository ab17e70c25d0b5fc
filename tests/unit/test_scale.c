/*
 * Unit tests of lib/format/scale: bounds against the formula
 * (x - lo) / (hi - lo) clamped, the step of a constant feature, l1 and l2
 * normalization against sums written out, the overflow-safe L2 norm, the
 * clip promise (the stored norm never exceeds the bound, in f64 and f32,
 * over many random rows), the f32 range error, learnt bounds, and binary
 * presence before every other step.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "scale.h"
#include "tap.h"
#include "tensor.h"

static double
norm2(const double *x, size_t d)
{
	long double s = 0;

	for (size_t j = 0; j < d; j++)
		s += (long double)x[j] * x[j];
	return (double)sqrtl(s);
}

int
main(void)
{
	struct scale s = { .on = 1, .lo = -1, .hi = 3, .dtype = TS_F64 };
	double x[6] = { -1, 0, 1, 3, -5, 10 };
	double want[6] = { 0, 0.25, 0.5, 1, 0, 1 };
	float f[64];
	size_t bad = 0;
	int same = 1;

	scale_bounds(&s, x, 6);
	for (int j = 0; j < 6; j++)
		same &= x[j] == want[j];
	ok(same, "bounds [-1, 3]: (x + 1) / 4, clamped to [0, 1]");

	{
		double lo[2] = { 2, 0 }, hi[2] = { 2, 10 };
		double y[2] = { 2.5, 5 };
		struct scale p = { .on = 1, .flo = lo, .fhi = hi };
		scale_bounds(&p, y, 2);
		ok(y[0] == 1 && y[1] == 0.5, "per-feature bounds; a constant "
		    "feature is a step (2.5 > 2: 1)");
		y[0] = 2;
		scale_bounds(&p, y, 1);
		ok(y[0] == 0, "the step is 0 at lo");
	}
	{
		double y[5] = { 0, 3, -0.5, 0, 1e300 };
		struct scale b = { .binary = 1, .normalize = SCALE_NORM_L1,
		    .dtype = TS_F64 };
		ok(scale_row(&b, y, NULL, 5, &bad) == 0 && y[0] == 0 &&
		    y[1] == 1.0 / 3 && y[2] == 1.0 / 3 && y[3] == 0 &&
		    y[4] == 1.0 / 3, "binary: x != 0 -> 1, then l1: 1/3 each");
	}
	{
		double y[3] = { 5, -7, 9 };
		struct scale off = { 0 };
		scale_bounds(&off, y, 3);
		ok(y[0] == 5 && y[1] == -7 && y[2] == 9, "off: unchanged");
	}

	{
		double y[4] = { 1, -2, 3, -4 };
		scale_normalize(SCALE_NORM_L1, y, 4);
		ok(y[0] == 0.1 && y[1] == -0.2 && fabs(y[2] - 0.3) < 1e-16 &&
		    y[3] == -0.4, "l1: divided by |1|+|-2|+|3|+|-4| = 10");
		double z[2] = { 3, -4 };
		scale_normalize(SCALE_NORM_L2, z, 2);
		ok(z[0] == 0.6 && z[1] == -0.8, "l2: (3, -4) / 5");
		double zero[3] = { 0, 0, 0 };
		scale_normalize(SCALE_NORM_L2, zero, 3);
		scale_normalize(SCALE_NORM_L1, zero, 3);
		ok(zero[0] == 0 && zero[1] == 0 && zero[2] == 0,
		    "a zero row stays zero");
		double big[2] = { DBL_MAX, DBL_MAX };
		scale_normalize(SCALE_NORM_L1, big, 2);
		ok(big[0] == 0.5 && big[1] == 0.5, "l1 of huge values: "
		    "no overflow (0.5, 0.5)");
	}
	{
		double y[2] = { 3e200, 4e200 }, t[2] = { 3e-200, 4e-200 };
		ok(fabs(scale_l2norm(y, 2) / 5e200 - 1) < 1e-15,
		    "l2 norm of (3e200, 4e200) is 5e200, no overflow");
		ok(fabs(scale_l2norm(t, 2) / 5e-200 - 1) < 1e-15,
		    "l2 norm of (3e-200, 4e-200) is 5e-200, no underflow");
		ok(scale_l2norm(t, 0) == 0, "the norm of nothing is 0");
	}

	/* The clip promise over random rows, in both dtypes. */
	{
		uint64_t r = 88172645463325252u;
		int held64 = 1, held32 = 1, scaled = 1;
		for (int it = 0; it < 2000; it++) {
			double y[37], y0[37], c = 0.1 + (it % 17) * 0.37;
			struct scale p = { .clip = c, .dtype = TS_F64 };
			size_t d = 1 + (size_t)(it % 37);
			for (size_t j = 0; j < d; j++) {
				r ^= r << 13;
				r ^= r >> 7;
				r ^= r << 17;
				y[j] = ((double)(r >> 11) / 9007199254740992.0
				    - 0.5) * (it % 5 + 1);
			}
			memcpy(y0, y, sizeof y);
			scale_row(&p, y, NULL, d, &bad);
			held64 &= scale_l2norm(y, d) <= c;
			if (norm2(y0, d) <= c * (1 - 1e-12))
				scaled &= memcmp(y, y0, d * sizeof *y) == 0;
			else
				scaled &= fabs(norm2(y, d) - c) < 1e-12 * c;
			memcpy(y, y0, sizeof y);
			p.dtype = TS_F32;
			scale_row(&p, y, f, d, &bad);
			{
				double sf = 0;
				for (size_t j = 0; j < d; j++)
					sf += (double)f[j] * f[j];
				held32 &= sqrt(sf) <= c;
			}
		}
		ok(held64, "clip: 2000 f64 rows, none above the bound");
		ok(held32, "clip: 2000 f32 rows, none above the bound");
		ok(scaled, "clip: rows inside the bound untouched, others "
		    "scaled to it");
	}

	{
		double y[3] = { 1, 1e39, 2 };
		struct scale p = { .dtype = TS_F32 };
		ok(scale_row(&p, y, f, 3, &bad) == PV_E_RANGE && bad == 1,
		    "1e39 does not fit in f32: feature 1 named");
		y[1] = 3;
		ok(scale_row(&p, y, f, 3, &bad) == 0 && f[1] == 3.0f,
		    "f32 conversion");
	}

	{
		struct scale p = { 0 };
		double r1[2] = { 1, -3 }, r2[2] = { -2, 5 }, r3[2] = { 0, 0 };
		ok(scale_learn_begin(&p, 2) == 0, "learn: begin");
		scale_learn_row(&p, r1, 2);
		scale_learn_row(&p, r2, 2);
		scale_learn_row(&p, r3, 2);
		ok(p.flo[0] == -2 && p.fhi[0] == 1 && p.flo[1] == -3 &&
		    p.fhi[1] == 5, "learnt bounds are the column min and max");
		scale_free(&p);
		ok(p.flo == NULL && p.fhi == NULL, "scale_free clears them");
	}
	return tap_done();
}
