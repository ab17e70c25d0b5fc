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
 * PV_E_IO (a read error: the caller reports its stream's), PV_E_NOMEM.
 */
#ifndef PRIVADA_FEAT_H
#define PRIVADA_FEAT_H

#include "pverr.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "labcol.h"
#include "strtab.h"

#define FEAT_MSG 4096		/* bytes of a message */

enum { FEAT_NONE, FEAT_CSV, FEAT_IDX, FEAT_TEXT };

/* What the command line asks for, as far as the checks need it. */
struct feat_params {
	int format;		/* FEAT_CSV, FEAT_IDX or FEAT_TEXT */
	const char *columns, *label, *labels, *scale_from, *vocab;
	const char *label_map;
	int no_label, header_set, scale, resize, hash_set, drop_unknown;
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

/*
 * Parse --resize HxW, sides in [1, max].  @return 0, or PV_E_RANGE.
 */
int feat_parse_resize(const char *arg, uint64_t max, uint64_t *h,
    uint64_t *w);

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

#endif
