/*
 * Unit tests of lib/format/tstats and lib/format/tsvalue: statistics of
 * small arrays against sums and extremes written out (the compensated
 * mean of values a plain sum gets wrong, exact int64 extremes beyond
 * 2^53, NaNs counted apart, infinities); elements as text and back, each
 * dtype, with every refusal.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "tensor.h"
#include "tstats.h"
#include "tsvalue.h"

int
main(void)
{
	struct ts_stats s;
	char buf[TS_VALUE_TEXT];
	unsigned char p[8];

	{
		double v[4] = { 3, -1, NAN, 10 };
		memset(&s, 0, sizeof s);
		ts_stats_update(&s, TS_F64, (unsigned char *)v, 4);
		ok(s.count == 3 && s.nans == 1 && s.min == -1 && s.max == 10 &&
		    ts_stats_mean(&s) == 4, "f64 3 -1 nan 10: min -1, max 10, "
		    "mean 4, 1 NaN");
	}
	{
		/* 1, then 1e-16 ten thousand times: a plain sum stays 1. */
		memset(&s, 0, sizeof s);
		ts_stats_add(&s, 1);
		for (int i = 0; i < 10000; i++)
			ts_stats_add(&s, 1e-16);
		ok(fabs(ts_stats_mean(&s) * 10001 - (1 + 1e-12)) < 1e-15,
		    "the compensated sum keeps 10000 x 1e-16 next to 1");
	}
	{
		int64_t v[3] = { INT64_MAX, -5, INT64_MAX - 1 };
		memset(&s, 0, sizeof s);
		ts_stats_update(&s, TS_I64, (unsigned char *)v, 3);
		ok(s.imax == INT64_MAX && s.imin == -5, "i64 extremes exact");
		ts_stat_format(buf, sizeof buf, TS_I64, s.max, s.imax, 1);
		ok(strcmp(buf, "9223372036854775807") == 0,
		    "an integer max is written exactly: %s", buf);
	}
	{
		unsigned char u[3] = { 7, 255, 0 };
		int32_t i[2] = { -7, 12 };
		float f[2] = { INFINITY, 1 };
		memset(&s, 0, sizeof s);
		ts_stats_update(&s, TS_U8, u, 3);
		ok(s.imin == 0 && s.imax == 255 && ts_stats_mean(&s) ==
		    262.0 / 3, "u8 stats");
		memset(&s, 0, sizeof s);
		ts_stats_update(&s, TS_I32, (unsigned char *)i, 2);
		ok(s.imin == -7 && s.imax == 12 && ts_stats_mean(&s) == 2.5,
		    "i32 stats");
		memset(&s, 0, sizeof s);
		ts_stats_update(&s, TS_F32, (unsigned char *)f, 2);
		ok(isinf(ts_stats_mean(&s)) && s.nonfinite && s.max == INFINITY,
		    "an infinity makes the mean infinite");
		memset(&s, 0, sizeof s);
		ok(isnan(ts_stats_mean(&s)), "no values: the mean is NaN");
	}
	ok(ts_dtype_is_int(TS_I32) && ts_dtype_is_int(TS_U8) &&
	    !ts_dtype_is_int(TS_F32), "integer dtypes");
	ts_stat_format(buf, sizeof buf, TS_F32, 0.1f, 0, 1);
	ok(strcmp(buf, "0.100000001") == 0, "f32 statistic: 9 digits");
	ts_stat_format(buf, sizeof buf, TS_F32, 0.1, 0, 0);
	ok(strcmp(buf, "0.10000000000000001") == 0, "a mean: 17 digits");
	ts_stat_format(buf, sizeof buf, TS_F64, NAN, 0, 1);
	ok(strcmp(buf, "nan") == 0, "nan");

	/* Round trips through text, each dtype. */
	{
		double d = -NAN, back;
		float f = 1.0f / 3;
		memcpy(p, &d, 8);
		ok(strcmp(ts_value_format(buf, sizeof buf, TS_F64, p), "nan") ==
		    0, "-nan is written nan");
		d = 0.1;
		memcpy(p, &d, 8);
		ts_value_format(buf, sizeof buf, TS_F64, p);
		ok(ts_value_parse(buf, TS_F64, p) == NULL &&
		    (memcpy(&back, p, 8), back == 0.1), "f64 round trip: %s",
		    buf);
		memcpy(p, &f, 4);
		ts_value_format(buf, sizeof buf, TS_F32, p);
		{
			float fb;
			ok(ts_value_parse(buf, TS_F32, p) == NULL &&
			    (memcpy(&fb, p, 4), fb == f), "f32 round trip: %s",
			    buf);
		}
	}
	{
		int32_t i;
		int64_t l;
		ok(ts_value_parse(" -2147483648\t", TS_I32, p) == NULL &&
		    (memcpy(&i, p, 4), i == INT32_MIN), "i32 min, with blanks");
		ok(strcmp(ts_value_format(buf, sizeof buf, TS_I32, p),
		    "-2147483648") == 0, "i32 written");
		ok(ts_value_parse("-9223372036854775808", TS_I64, p) == NULL &&
		    (memcpy(&l, p, 8), l == INT64_MIN), "i64 min");
		ok(ts_value_parse("255", TS_U8, p) == NULL && p[0] == 255 &&
		    strcmp(ts_value_format(buf, sizeof buf, TS_U8, p), "255") ==
		    0, "u8 255");
	}
	ok(strcmp(ts_value_parse("2147483648", TS_I32, p),
	    "is out of range for i32") == 0, "i32 overflow");
	ok(strcmp(ts_value_parse("9223372036854775808", TS_I64, p),
	    "is out of range for i64") == 0, "i64 overflow");
	ok(strcmp(ts_value_parse("256", TS_U8, p), "is out of range for u8") ==
	    0 && strcmp(ts_value_parse("-1", TS_U8, p),
	    "is out of range for u8") == 0, "u8 range");
	ok(strcmp(ts_value_parse("1.5", TS_I32, p), "is not an integer") ==
	    0 && strcmp(ts_value_parse("", TS_I64, p), "is not an integer") ==
	    0, "not integers");
	ok(strcmp(ts_value_parse("abc", TS_F64, p), "is not a number") == 0,
	    "not a number");
	ok(strcmp(ts_value_parse("1e39", TS_F32, p),
	    "is out of range for f32") == 0 &&
	    ts_value_parse("inf", TS_F32, p) == NULL,
	    "f32: 1e39 out of range, inf allowed");
	return tap_done();
}
