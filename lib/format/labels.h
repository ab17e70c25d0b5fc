/*
 * labels.h: the label set of a tensor 'y' -- the label.* metadata that
 * featurize writes (label.source, label.classes, label.names; meaning in
 * formats/tensor-stream.md, section 10.3) -- and the one rule by which a
 * tool decides its number of classes K from it.
 *
 * The rule: under differential privacy the label set is public input.  A
 * label set learnt from the rows (label.source=data, or label.names with
 * no label.source) is as private as the rows: one added row with a new
 * label would change K, the model's shape and any published names.  A DP
 * run takes K from --classes or from a set declared public
 * (label.source=public), never from the data.
 *
 * Nothing here prints, exits or reads the environment.  struct label_set
 * borrows its strings from the metadata it was read from.
 */
#ifndef PRIVADA_LABELS_H
#define PRIVADA_LABELS_H

#include "pverr.h"

#include <stddef.h>

#include "tensor.h"

#define LABEL_MAX_CLASSES ((size_t)1 << 24)	/* label.classes */

enum label_source {
	LABEL_UNDECLARED = 0,	/* no label.source (older writers, tns) */
	LABEL_DATA,		/* label.source=data: learnt from the rows */
	LABEL_PUBLIC		/* label.source=public: declared */
};

struct label_set {
	enum label_source source;
	size_t classes;		/* label.classes; 0 when absent */
	const char *names;	/* label.names (borrowed), or NULL */
	size_t nnames;		/* strings in names */
};

/* label_get's and label_classes' results. */
enum {
	LABEL_OK = PV_OK,
	LABEL_E_BAD = PV_E_FORMAT,	/* malformed label.* metadata (data error) */
	LABEL_E_PRIVATE = PV_E_PRIVATE,	/* DP run on a label set learnt from data */
	LABEL_E_USAGE = PV_E_OPTION	/* --classes missing or in conflict */
};

/*
 * The number of strings of a JSON array of strings (label.names),
 * e.g. 3 for ["a","b\"c","d"]; 0 when s is not one (or is empty).
 */
size_t label_names_count(const char *s);

/*
 * Read the label.* keys of a tensor's metadata into ls.  A public set
 * MUST carry label.classes >= 1; label.names, when present, MUST be a
 * JSON array of strings, of label.classes strings if both are present.
 * @return LABEL_OK, or LABEL_E_BAD with a message in err (errlen bytes).
 */
int label_get(const struct ts_meta *m, struct label_set *ls, char *err,
    size_t errlen);

/*
 * Write a label set: label.source (public or data), label.classes when
 * classes > 0, label.names when names is not NULL.
 * @return 0, or -1 out of memory.
 */
int label_put(struct ts_meta *m, enum label_source source, size_t classes,
    const char *names);

/*
 * The number of classes of a run.  classes is --classes K (0: not given);
 * dp says whether the labels are private in this run.
 *  - --classes K: K.  A public set of another size is a LABEL_E_USAGE.
 *  - else a public set: its label.classes.
 *  - else, under privacy: LABEL_E_PRIVATE when the set was learnt from
 *    the data (label.source=data or undeclared label.names), LABEL_E_USAGE
 *    when nothing is declared (--classes is required).
 *  - else (no privacy): the count of label.names, or 0, meaning the
 *    caller takes the largest label plus one, as before.
 * *names_ok says whether ls->names may be published with the output: the
 * set is public, or the run is not private, and it has K names.
 * @return LABEL_OK or an error with a message in err: a sentence that
 * says what to do, without the tool's name.
 */
int label_classes(const struct label_set *ls, int dp, size_t classes,
    size_t *K, int *names_ok, char *err, size_t errlen);

#endif
