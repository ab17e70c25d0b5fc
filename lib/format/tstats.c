/* tstats.c: element statistics of tns info --stats. */
#include <math.h>
#include <string.h>

#include "tensor.h"
#include "tstats.h"

void
ts_stats_add(struct ts_stats *s, double x)
{
	double t;

	if (isnan(x)) {
		s->nans++;
		return;
	}
	if (s->count == 0 || x < s->min)
		s->min = x;
	if (s->count == 0 || x > s->max)
		s->max = x;
	s->count++;
	if (!isfinite(x) || s->nonfinite) {
		s->nonfinite = 1;
		s->sum += x;
		return;
	}
	/* Neumaier's compensated summation keeps the mean of long
	 * streams accurate. */
	t = s->sum + x;
	if (fabs(s->sum) >= fabs(x))
		s->comp += (s->sum - t) + x;
	else
		s->comp += (x - t) + s->sum;
	s->sum = t;
}

void
ts_stats_addi(struct ts_stats *s, int64_t v)
{
	if (s->count == 0 || v < s->imin)
		s->imin = v;
	if (s->count == 0 || v > s->imax)
		s->imax = v;
	ts_stats_add(s, (double)v);
}

void
ts_stats_update(struct ts_stats *s, int dtype, const unsigned char *p,
    uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		float f;
		double d;
		int32_t i32;
		int64_t i64;

		switch (dtype) {
		case TS_F32:
			memcpy(&f, p + 4 * i, 4);
			ts_stats_add(s, (double)f);
			break;
		case TS_F64:
			memcpy(&d, p + 8 * i, 8);
			ts_stats_add(s, d);
			break;
		case TS_I32:
			memcpy(&i32, p + 4 * i, 4);
			ts_stats_addi(s, i32);
			break;
		case TS_I64:
			memcpy(&i64, p + 8 * i, 8);
			ts_stats_addi(s, i64);
			break;
		default:
			ts_stats_addi(s, p[i]);
			break;
		}
	}
}

int
ts_dtype_is_int(int dtype)
{
	return dtype == TS_I32 || dtype == TS_I64 || dtype == TS_U8;
}

double
ts_stats_mean(const struct ts_stats *s)
{
	if (s->nonfinite)
		return s->sum / (double)s->count;
	return (s->sum + s->comp) / (double)s->count;
}
