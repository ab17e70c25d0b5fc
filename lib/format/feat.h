/*
 * feat.h: featurize's parameters and their check (a validator that
 * returns a message, as libsvm's svm_check_parameter), the input format
 * and dataset name a path implies, and the two public side files it
 * reads one entry a line: a label map (line i is class i) and a
 * vocabulary (a token, or two joined by a space).
 *
 * Ownership: the readers fill the caller's labcol or strtab.  Nothing
 * here prints, exits or reads the environment.  Errors: PV_E_FORMAT,
 * PV_E_RANGE, PV_E_LIMIT (msg says why, starting with the file's label),
 * PV_E_IO (a read error: msg empty when the caller's stream says why),
 * PV_E_NOMEM.
 */
#ifndef PRIVADA_FEAT_H
#define PRIVADA_FEAT_H

#include "pverr.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "csvin.h"
#include "csvlay.h"
#include "labcol.h"
#include "scale.h"
#include "strtab.h"

#define FEAT_MSG 4096		/* bytes of a message */

enum { FEAT_NONE, FEAT_CSV, FEAT_IDX, FEAT_TEXT };

/* What the command line asks for, as far as the checks need it. */
struct feat_params {
	int format;		/* FEAT_CSV, FEAT_IDX or FEAT_TEXT */
	const char *columns, *label, *labels, *scale_from, *vocab;
	const char *label_map;
	int no_label, header_set, scale, resize, hash_set, drop_unknown;
	int crop, binary;	/* --crop-bbox, --binary */
	size_t classes;		/* --classes K, or 0 */
};

/*
 * Options that exclude each other or do not fit the format are mistakes,
 * not no-ops.  @return NULL, or msg holding the usage error.
 */
const char *feat_check_params(const struct feat_params *p,
    char msg[FEAT_MSG]);

/* The format of path (NULL or "-": stdin) by its name, ignoring a .gz or
 * .zst suffix: idx for *ubyte, .idx, .idx1, .idx3; text for .txt; else
 * csv. */
int feat_format_from_path(const char *path);

/* The dataset name of path into out (cap bytes, at most cap - 1 kept):
 * the base name up to its first dot, lowercased, other bytes outside
 * [a-z0-9_] as '_'; "stdin" for NULL or "-", "data" when empty. */
void feat_dataset_from_path(const char *path, char *out, size_t cap);

/* Whether a and b are the same file (a side file that is the input
 * itself would make private data public). */
int feat_same_file(FILE *a, FILE *b);

/*
 * Parse --resize HxW, sides in [1, max].  @return 0, or PV_E_RANGE.
 */
int feat_parse_resize(const char *arg, uint64_t max, uint64_t *h,
    uint64_t *w);

/*
 * Parse the threshold of --crop-bbox=T, a pixel value in [0, 254] (NULL:
 * the default, 0).  @return 0, or PV_E_RANGE.
 */
int feat_parse_crop(const char *arg, unsigned *thr);

/*
 * Read the public label map of fp (label names it in messages) into l's
 * map and end it.  A line ends at LF (a CR before it is dropped); no
 * empty line, no NUL, no label twice, valid UTF-8, at least one label.
 */
int feat_read_label_map(struct labcol *l, FILE *fp, const char *label,
    char msg[FEAT_MSG]);

/*
 * Read a vocabulary of fp into v: one entry a line (CRs and LFs at the
 * end dropped), each text_vocab_entry_ok, none twice, at most max, at
 * least one.
 */
int feat_read_vocab(struct strtab *v, FILE *fp, const char *label,
    size_t max, char msg[FEAT_MSG]);

/*
 * A CSV input laid out by csvlay: its records parsed into rows.  After
 * feat_csv_next returns 1, f[0..nf) are the fields of the row's record
 * and csvin_line(c) its line.  Errors: PV_E_IO (the reader's: msg is
 * csvin's, unless the stream says more), PV_E_OPTION (msg is a usage
 * error), PV_E_FORMAT and PV_E_LIMIT (msg names the file), PV_E_NOMEM.
 */
struct feat_csv {
	struct csvin *c;
	struct csvlay L;
	struct csvlay_params p;
	const char *label;
	char **f;
	size_t nf;
	int pending;		/* the first record is data not yet taken */
};

/* Read the first record of fp (label names it) and lay out the columns;
 * on an error nothing is left to close. */
int feat_csv_open(struct feat_csv *fc, FILE *fp, const char *label,
    const struct csvlay_params *p, char msg[FEAT_MSG]);
/* The next row into row[0..L.d) (rows that --missing drop-row drops are
 * skipped).  @return 1, 0 at the end, or an error. */
int feat_csv_next(struct feat_csv *fc, double *row, char msg[FEAT_MSG]);
void feat_csv_close(struct feat_csv *fc);

/*
 * Learn sc's per-feature bounds (scale_learn_row) from the CSV of fp,
 * which must have d features and at least one row, and turn sc on.
 * @return 0 or an error as feat_csv's.
 */
int feat_learn_bounds(struct scale *sc, FILE *fp, const char *label,
    const struct csvlay_params *p, size_t d, char msg[FEAT_MSG]);

#endif
