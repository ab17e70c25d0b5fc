/*
 * labcol.h: the label column of featurize, as rows arrive.  Labels are
 * either declared public (a label map: line i is class i; or --classes
 * K: the integers 0 .. K-1), and a label outside the set is an error or
 * drops its row, never a new class; or learnt from the rows, numbered in
 * order of first appearance (kept as they are when all are integers), and
 * then published as label.source=data, which DP tools refuse (labels.h).
 *
 * Also the JSON array of strings that label.names and features.names
 * hold.
 *
 * Ownership: a labcol owns its tables, y and the map's JSON (labcol_free);
 * json_str_array returns a string the caller frees.  Nothing here prints,
 * exits or reads the environment.  Errors: PV_E_NOMEM, and those listed
 * with each function.
 */
#ifndef PRIVADA_LABCOL_H
#define PRIVADA_LABCOL_H

#include "pverr.h"

#include <stddef.h>
#include <stdint.h>

#include "strtab.h"
#include "tensor.h"

struct labcol {
	size_t classes;		/* --classes K, or 0 */
	int drop_unknown;	/* drop rows outside the declared set */
	struct strtab map;	/* the declared map: key i is class i */
	char *map_names;	/* the map as a JSON array, once ended */
	struct strtab tab;	/* learnt: the distinct labels */
	int32_t *ival;		/* learnt: the integer value of each */
	size_t icap;
	int all_int;		/* learnt: every label an int32 */
	int32_t *y;		/* y[0..n): classes, or indices into tab */
	size_t n, cap;
	uint64_t unknown;	/* rows dropped by drop_unknown */
	/* the map's JSON while it is built */
	char *mj;
	size_t mjlen, mjcap;
};

/* Start a label column (classes 0: no --classes). */
void labcol_init(struct labcol *l, size_t classes, int drop_unknown);

/* Whether the label set is declared (a map, or classes). */
int labcol_declared(const struct labcol *l);

/*
 * Add a line of the label map (len bytes, no NUL, valid UTF-8: the
 * caller checks).  @return 0; PV_E_FORMAT when it is listed already;
 * PV_E_RANGE past LABEL_MAX_CLASSES labels; PV_E_LIMIT when the JSON of
 * the labels so far exceeds TS_MAX_VALUE.
 */
int labcol_map_add(struct labcol *l, const char *s, size_t len);
/* End the map: map_names is set.  @return 0 or PV_E_LIMIT (as above). */
int labcol_map_end(struct labcol *l);

/*
 * Put the label (len bytes of s) of the next row.
 * @return 1 when the row is kept, 0 when it is dropped (a declared set
 * and drop_unknown); PV_E_RANGE when it is not in the declared set;
 * PV_E_LIMIT past INT32_MAX distinct learnt labels; PV_E_NOMEM.
 */
int labcol_put(struct labcol *l, const char *s, size_t len);
/* The same for a label given as an integer (IDX). */
int labcol_put_int(struct labcol *l, int32_t v);

/*
 * Write the label set into m (label.source, label.classes, label.names:
 * labels.h), and turn y into classes: learnt integer labels into their
 * values.  @return 0; PV_E_LIMIT when learnt names exceed TS_MAX_VALUE;
 * PV_E_FORMAT when one is not valid UTF-8; PV_E_NOMEM.
 */
int labcol_finish(struct labcol *l, struct ts_meta *m);

void labcol_free(struct labcol *l);

/*
 * The JSON array of the strings v[idx[j]] (or v[j] when idx is NULL), j <
 * n, each escaped (quote, backslash, control characters as \u00XX); the
 * array stops growing once it passes stop bytes, so a caller can test the
 * length against its limit.  @return the string (the caller's) with *len,
 * or NULL out of memory.
 */
char *json_str_array(char *const *v, const size_t *idx, size_t n,
    size_t stop, size_t *len);

#endif
