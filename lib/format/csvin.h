/*
 * csvin.h: streaming CSV records through libcsv (RFC 4180 quoting, CRLF or
 * LF line ends), with line numbers for messages.  Input that starts with
 * the zstd frame magic is decompressed on the fly, so `featurize
 * data.csv.zst` works without zstdcat.
 *
 * Ownership: the reader borrows fp.  Fields returned by csvin_next belong
 * to the reader and stay valid until the next call.  csvin_close accepts
 * NULL.  Nothing here prints or exits.
 */
#ifndef PRIVADA_CSVIN_H
#define PRIVADA_CSVIN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct csvin;

/* Open a CSV reader on fp; label names the input in messages; delim is
 * the field separator (',' usually).  @return NULL when out of memory. */
struct csvin *csvin_open(FILE *fp, const char *label, char delim);
void csvin_close(struct csvin *c);

/* Read the next record.  On 1, *fields[0..*nfields-1] are NUL-terminated
 * field strings.  @return 1 for a record, 0 at end of input, -1 on error
 * (csvin_errmsg says "LABEL:LINE: what is wrong").  Empty lines are
 * skipped. */
int csvin_next(struct csvin *c, char ***fields, size_t *nfields);

/* Line number (1-based) where the record last returned starts. */
uint64_t csvin_line(const struct csvin *c);
const char *csvin_errmsg(const struct csvin *c);

/* Parse a whole field as a finite or non-finite double ("nan", "inf"
 * accepted, surrounding blanks allowed).  @return 0, or -1 if the field is
 * empty or not a number. */
int csvin_double(const char *s, double *out);

#endif
