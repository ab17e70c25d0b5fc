/*
 * tstats.h: running statistics of a tensor's elements for tns info
 * --stats: count, NaNs, min, max (exact for integer dtypes) and mean
 * (Neumaier's compensated sum while every value is finite).
 *
 * Plain data: a zeroed struct ts_stats is empty.  Nothing here prints,
 * exits or reads the environment, allocates or fails.
 */
#ifndef PRIVADA_TSTATS_H
#define PRIVADA_TSTATS_H

#include <stdint.h>

struct ts_stats {
	uint64_t count, nans;	/* values other than NaN, and NaNs */
	double min, max, sum, comp;
	int64_t imin, imax;	/* integer dtypes: exact min and max */
	int nonfinite;		/* an infinity was seen: plain sum */
};

/* Add one value (NaNs are counted apart). */
void ts_stats_add(struct ts_stats *s, double x);
/* Add one integer value (exact min and max as well). */
void ts_stats_addi(struct ts_stats *s, int64_t v);
/* Add n elements of dtype at p (little-endian, as in a tensor). */
void ts_stats_update(struct ts_stats *s, int dtype, const unsigned char *p,
    uint64_t n);
/* The mean of the values added (NaN when there are none). */
double ts_stats_mean(const struct ts_stats *s);
/* Whether dtype is an integer type (i32, i64, u8). */
int ts_dtype_is_int(int dtype);

#endif
