/*
 * labels.c: the label set of a tensor 'y' and the rule that decides the
 * number of classes of a run from it (see labels.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labels.h"

static int
fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

size_t
label_names_count(const char *s)
{
	size_t n = 0;

	while (*s == ' ')
		s++;
	if (*s++ != '[')
		return 0;
	for (;;) {
		while (*s == ' ')
			s++;
		if (*s++ != '"')
			return 0;
		while (*s != '"') {
			if (*s == '\0' || (unsigned char)*s < 0x20)
				return 0;
			if (*s == '\\' && *++s == '\0')
				return 0;
			s++;
		}
		s++;
		n++;
		while (*s == ' ')
			s++;
		if (*s == ']') {
			s++;
			while (*s == ' ')
				s++;
			return *s == '\0' ? n : 0;
		}
		if (*s++ != ',')
			return 0;
	}
}

int
label_get(const struct ts_meta *m, struct label_set *ls, char *err,
    size_t errlen)
{
	const char *src = ts_meta_get(m, "label.source");
	const char *cl = ts_meta_get(m, "label.classes");

	memset(ls, 0, sizeof *ls);
	if (src == NULL)
		ls->source = LABEL_UNDECLARED;
	else if (strcmp(src, "public") == 0)
		ls->source = LABEL_PUBLIC;
	else if (strcmp(src, "data") == 0)
		ls->source = LABEL_DATA;
	else
		return fail(err, errlen, LABEL_E_BAD, "label.source '%.40s' is "
		    "neither 'public' nor 'data'", src);
	if (cl != NULL) {
		char *end;
		unsigned long long v;

		errno = 0;
		v = strtoull(cl, &end, 10);
		if (errno || end == cl || *end != '\0' || *cl < '0' ||
		    *cl > '9' || v < 1 || v > LABEL_MAX_CLASSES)
			return fail(err, errlen, LABEL_E_BAD, "label.classes "
			    "'%.40s' is not a number of classes 1 .. %zu", cl,
			    LABEL_MAX_CLASSES);
		ls->classes = (size_t)v;
	}
	if ((ls->names = ts_meta_get(m, "label.names")) != NULL &&
	    (ls->nnames = label_names_count(ls->names)) == 0)
		return fail(err, errlen, LABEL_E_BAD, "label.names is not a "
		    "JSON array of strings");
	if (ls->source == LABEL_PUBLIC && ls->classes == 0)
		return fail(err, errlen, LABEL_E_BAD, "label.source=public "
		    "without label.classes");
	if (ls->names != NULL && ls->classes != 0 &&
	    ls->nnames != ls->classes)
		return fail(err, errlen, LABEL_E_BAD, "label.names has %zu "
		    "names, label.classes says %zu", ls->nnames, ls->classes);
	return LABEL_OK;
}

int
label_put(struct ts_meta *m, enum label_source source, size_t classes,
    const char *names)
{
	if (ts_meta_set(m, "label.source", source == LABEL_PUBLIC ?
	    "public" : "data") != 0)
		return -1;
	if (classes > 0 && ts_meta_setf(m, "label.classes", "%zu",
	    classes) != 0)
		return -1;
	if (names != NULL && ts_meta_set(m, "label.names", names) != 0)
		return -1;
	return 0;
}

int
label_classes(const struct label_set *ls, int dp, size_t classes,
    size_t *K, int *names_ok, char *err, size_t errlen)
{
	*K = 0;
	*names_ok = 0;
	if (classes > 0) {
		if (ls->source == LABEL_PUBLIC && ls->classes != classes)
			return fail(err, errlen, LABEL_E_USAGE, "--classes "
			    "%zu: 'y' declares a public label set of %zu "
			    "classes", classes, ls->classes);
		*K = classes;
		*names_ok = ls->names != NULL && ls->nnames == classes &&
		    (ls->source == LABEL_PUBLIC || !dp);
		return LABEL_OK;
	}
	if (ls->source == LABEL_PUBLIC) {
		*K = ls->classes;
		*names_ok = ls->names != NULL;
		return LABEL_OK;
	}
	if (dp && (ls->source == LABEL_DATA || ls->names != NULL))
		return fail(err, errlen, LABEL_E_PRIVATE, "the label set of "
		    "'y' was learnt from the rows (label.source=%s), so it is "
		    "private: give --classes K, or declare the labels public "
		    "with featurize --label-map FILE or featurize --classes K",
		    ls->source == LABEL_DATA ? "data" : "absent");
	if (dp)
		return fail(err, errlen, LABEL_E_USAGE, "--classes is "
		    "required: 'y' declares no public label set, and the "
		    "classes must not be learnt from private labels (or "
		    "declare them with featurize --label-map FILE or "
		    "featurize --classes K)");
	/* Without privacy the data may say how many classes there are. */
	*K = ls->names != NULL ? ls->nnames : 0;
	*names_ok = ls->names != NULL;
	return LABEL_OK;
}
