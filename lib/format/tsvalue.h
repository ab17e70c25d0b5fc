/*
 * tsvalue.h: one tensor element as text and back, as tns to-csv,
 * from-csv and info write and read them: f32 with 9 and f64 with 17
 * significant digits (both round-trip exactly), NaN as "nan" (never
 * "-nan"), integers in decimal.
 *
 * The caller owns every buffer.  Nothing here prints, exits or reads the
 * environment.
 */
#ifndef PRIVADA_TSVALUE_H
#define PRIVADA_TSVALUE_H

#include <stddef.h>
#include <stdint.h>

#define TS_VALUE_TEXT 32	/* bytes enough for any element as text */

/* Write the element of dtype at p into buf (len >= TS_VALUE_TEXT).
 * @return buf. */
char *ts_value_format(char *buf, size_t len, int dtype,
    const unsigned char *p);

/*
 * Write a statistic: the integer iv exactly when exact_int and dtype is
 * an integer type; else "nan", or v with 9 significant digits for f32
 * (when exact_int) or 17.
 */
void ts_stat_format(char *buf, size_t len, int dtype, double v, int64_t iv,
    int exact_int);

/*
 * Parse the CSV field s as an element of dtype into p: floats by
 * csvin_double, integers in decimal with surrounding blanks allowed and
 * their range checked.  @return NULL, or what is wrong ("is not a
 * number", "is out of range for i32", ...), static.
 */
const char *ts_value_parse(const char *s, int dtype, unsigned char *p);

#endif
