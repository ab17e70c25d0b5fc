/*
 * csvlay.h: the layout of a CSV input of featurize: which fields are
 * features and which is the label (--columns, --label, by index from 0,
 * range A-B, or header name), whether the first record is a header, and
 * one record parsed into a row of doubles under a missing-value policy.
 *
 * Ownership: a csvlay owns its feature list and header names
 * (csvlay_free); fields are borrowed.  Nothing here prints, exits or reads
 * the environment.
 *
 * Errors: PV_E_OPTION (the options do not fit the input: msg is a usage
 * error, "invalid --columns '...': ..."), PV_E_FORMAT (a bad record: msg
 * without the file and line), PV_E_LIMIT (too many features), PV_E_NOMEM.
 */
#ifndef PRIVADA_CSVLAY_H
#define PRIVADA_CSVLAY_H

#include "pverr.h"

#include <stddef.h>
#include <stdint.h>

#define CSVLAY_MAX_FEATURES (UINT64_C(1) << 24)	/* columns of X */
#define CSVLAY_SHOWN 48		/* bytes of a bad value quoted */
#define CSVLAY_MSG 512		/* bytes of a message */

enum { CSVLAY_HDR_AUTO, CSVLAY_HDR_YES, CSVLAY_HDR_NO };
enum { CSVLAY_MISS_ERROR, CSVLAY_MISS_ZERO, CSVLAY_MISS_DROP };

struct csvlay_params {
	const char *columns;	/* --columns, or NULL: all but the label */
	const char *label;	/* --label COLUMN, or NULL */
	int header;		/* CSVLAY_HDR_* */
	int missing;		/* CSVLAY_MISS_* */
};

struct csvlay {
	size_t ncol, d;		/* fields per record, features */
	size_t *feat;		/* feat[0..d): the field of each feature */
	long long label;	/* the label's field, or -1 */
	char **names;		/* header names (ncol), or NULL */
	uint64_t replaced, dropped;	/* by the missing-value policy */
};

/* Whether s is a decimal column index (digits only, not empty). */
int csvlay_is_index(const char *s);

/* The column index s (of option opt, for the message).  @return 0, or
 * PV_E_OPTION when it is not below CSVLAY_MAX_FEATURES. */
int csvlay_index(const char *opt, const char *s, uint64_t *v,
    char msg[CSVLAY_MSG]);

/* Check the syntax of a --columns list before any input is read.
 * @return 0 or PV_E_OPTION. */
int csvlay_check_columns(const char *s, char msg[CSVLAY_MSG]);

/*
 * Lay out the columns from the first record f[0..nf): take it as a header
 * (by p->header; with auto, when a field other than the label is not a
 * number, or when the options name columns), resolve the label and the
 * features.  *is_data says whether the first record is data.
 * @return 0 (release with csvlay_free; also after an error), or an error.
 */
int csvlay_setup(struct csvlay *L, const struct csvlay_params *p,
    char *const *f, size_t nf, int *is_data, char msg[CSVLAY_MSG]);

/*
 * Parse the features of record f[0..nf) into row[0..d).
 * @return 0; 1 when the missing-value policy drops it; PV_E_FORMAT with
 * msg ("column 3 ('age'): 'x' is not a number").
 */
int csvlay_parse_row(struct csvlay *L, const struct csvlay_params *p,
    char *const *f, size_t nf, double *row, char msg[CSVLAY_MSG]);

void csvlay_free(struct csvlay *L);

/* s as quoted in a message: at most CSVLAY_SHOWN bytes and "...". */
const char *csvlay_shown(const char *s, char *buf, size_t cap);

#endif
