/* tsvalue.c: elements as text. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csvin.h"
#include "tensor.h"
#include "tstats.h"
#include "tsvalue.h"

char *
ts_value_format(char *buf, size_t len, int dtype, const unsigned char *p)
{
	float f;
	double d;
	int32_t i32;
	int64_t i64;

	switch (dtype) {
	case TS_F32:
		memcpy(&f, p, sizeof f);
		if (isnan(f))
			snprintf(buf, len, "nan");	/* no payloads */
		else
			snprintf(buf, len, "%.9g", (double)f);
		break;
	case TS_F64:
		memcpy(&d, p, sizeof d);
		if (isnan(d))
			snprintf(buf, len, "nan");
		else
			snprintf(buf, len, "%.17g", d);
		break;
	case TS_I32:
		memcpy(&i32, p, sizeof i32);
		snprintf(buf, len, "%ld", (long)i32);
		break;
	case TS_I64:
		memcpy(&i64, p, sizeof i64);
		snprintf(buf, len, "%lld", (long long)i64);
		break;
	default:
		snprintf(buf, len, "%u", (unsigned)*p);
		break;
	}
	return buf;
}

void
ts_stat_format(char *buf, size_t len, int dtype, double v, int64_t iv,
    int exact_int)
{
	if (isnan(v) && !(exact_int && ts_dtype_is_int(dtype)))
		snprintf(buf, len, "nan");
	else if (exact_int && ts_dtype_is_int(dtype))
		snprintf(buf, len, "%lld", (long long)iv);
	else if (dtype == TS_F32 && exact_int)
		snprintf(buf, len, "%.9g", v);
	else
		snprintf(buf, len, "%.17g", v);
}

/* @return 0, -1 when s is not an integer, -2 when it is out of range. */
static int
parse_int(const char *s, long long lo, long long hi, long long *out)
{
	char *end;
	long long v;

	while (*s == ' ' || *s == '\t')
		s++;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (end == s)
		return -1;
	while (*end == ' ' || *end == '\t')
		end++;
	if (*end != '\0')
		return -1;
	if (errno == ERANGE || v < lo || v > hi)
		return -2;
	*out = v;
	return 0;
}

const char *
ts_value_parse(const char *s, int dtype, unsigned char *p)
{
	double d;
	float f;
	long long v;
	int32_t i32;
	int64_t i64;
	int rc;

	switch (dtype) {
	case TS_F64:
		if (csvin_double(s, &d) != 0)
			return "is not a number";
		memcpy(p, &d, 8);
		return NULL;
	case TS_F32:
		if (csvin_double(s, &d) != 0)
			return "is not a number";
		if (isfinite(d) && fabs(d) > 3.4028234663852886e38)
			return "is out of range for f32";
		f = (float)d;
		memcpy(p, &f, 4);
		return NULL;
	case TS_I32:
		if ((rc = parse_int(s, INT32_MIN, INT32_MAX, &v)) != 0)
			return rc == -1 ? "is not an integer" :
			    "is out of range for i32";
		i32 = (int32_t)v;
		memcpy(p, &i32, 4);
		return NULL;
	case TS_I64:
		if ((rc = parse_int(s, INT64_MIN, INT64_MAX, &v)) != 0)
			return rc == -1 ? "is not an integer" :
			    "is out of range for i64";
		i64 = (int64_t)v;
		memcpy(p, &i64, 8);
		return NULL;
	default:
		if ((rc = parse_int(s, 0, 255, &v)) != 0)
			return rc == -1 ? "is not an integer" :
			    "is out of range for u8";
		*p = (unsigned char)v;
		return NULL;
	}
}
