/* feat.c: featurize's parameters, path conventions and side files (see
 * feat.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "csvlay.h"
#include "feat.h"
#include "labels.h"
#include "text.h"
#include "tstream.h"

static const char *const fmt_names[] = { "", "csv", "idx", "text" };

/* An option given for another format than p's. */
static const char *
only_for(const struct feat_params *p, int given, int format,
    const char *opt, char msg[FEAT_MSG])
{
	if (!given || p->format == format)
		return NULL;
	snprintf(msg, FEAT_MSG, "%s applies to %s input only", opt,
	    fmt_names[format]);
	return msg;
}

const char *
feat_check_params(const struct feat_params *p, char msg[FEAT_MSG])
{
	const char *m;

	if (p->label && p->no_label)
		return "--label and --no-label exclude each other";
	if (p->scale && p->scale_from)
		return "--scale and --scale-from exclude each other";
	if (p->binary && (p->scale || p->scale_from))
		return "--binary excludes --scale and --scale-from (its values "
		    "are 0 and 1)";
	if ((m = only_for(p, p->columns != NULL, FEAT_CSV, "--columns",
	    msg)) != NULL ||
	    (m = only_for(p, p->header_set, FEAT_CSV, "--header", msg)) ||
	    (m = only_for(p, p->scale_from != NULL, FEAT_CSV, "--scale-from",
	    msg)) ||
	    (m = only_for(p, p->no_label, FEAT_CSV, "--no-label", msg)) ||
	    (m = only_for(p, p->labels != NULL, FEAT_IDX, "--labels", msg)) ||
	    (m = only_for(p, p->resize, FEAT_IDX, "--resize", msg)) ||
	    (m = only_for(p, p->crop, FEAT_IDX, "--crop-bbox", msg)) ||
	    (m = only_for(p, p->hash_set, FEAT_TEXT, "--hash-dim", msg)) ||
	    (m = only_for(p, p->vocab != NULL, FEAT_TEXT, "--vocab", msg)))
		return m;
	if (p->format == FEAT_IDX && p->label)
		return "--label does not apply to idx input (use --labels "
		    "FILE)";
	if (p->format == FEAT_CSV && !p->label && !p->no_label)
		return "csv input needs --label COLUMN or --no-label";
	if (p->format == FEAT_TEXT && p->label && !csvlay_is_index(p->label)) {
		snprintf(msg, FEAT_MSG, "invalid --label '%s': text input "
		    "takes the index of a tab-separated field", p->label);
		return msg;
	}
	if (p->crop && !p->resize)
		return "--crop-bbox needs --resize HxW (cropped images differ "
		    "in size)";
	if (p->hash_set && p->vocab)
		return "--hash-dim and --vocab exclude each other";
	if (p->classes > 0 && p->label_map)
		return "--classes and --label-map exclude each other";
	if ((p->classes > 0 || p->label_map) && (p->no_label ||
	    (p->format == FEAT_IDX ? !p->labels : !p->label))) {
		snprintf(msg, FEAT_MSG, "%s declares the label set: it needs "
		    "labels (%s)", p->label_map ? "--label-map" : "--classes",
		    p->format == FEAT_IDX ? "--labels FILE" : "--label");
		return msg;
	}
	if (p->drop_unknown && p->classes == 0 && !p->label_map)
		return "--drop-unknown needs the declared label set "
		    "(--label-map FILE or --classes K)";
	if (p->label_map && strcmp(p->label_map, "-") == 0)
		return "--label-map needs a file, not stdin";
	return NULL;
}

static int
ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && strncmp(s + n - k, suffix, k) == 0;
}

int
feat_format_from_path(const char *path)
{
	size_t n;

	if (path == NULL || strcmp(path, "-") == 0)
		return FEAT_CSV;
	n = strlen(path);
	if (ends_with(path, n, ".gz"))
		n -= 3;
	else if (ends_with(path, n, ".zst"))
		n -= 4;
	if (ends_with(path, n, "ubyte") || ends_with(path, n, ".idx") ||
	    ends_with(path, n, ".idx1") || ends_with(path, n, ".idx3"))
		return FEAT_IDX;
	if (ends_with(path, n, ".txt"))
		return FEAT_TEXT;
	return FEAT_CSV;
}

void
feat_dataset_from_path(const char *path, char *out, size_t cap)
{
	const char *base;
	size_t n = 0;

	if (path == NULL || strcmp(path, "-") == 0) {
		snprintf(out, cap, "stdin");
		return;
	}
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (; *base && *base != '.' && n + 1 < cap; base++) {
		char ch = *base;
		if (ch >= 'A' && ch <= 'Z')
			ch = (char)(ch - 'A' + 'a');
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')))
			ch = '_';
		out[n++] = ch;
	}
	out[n] = '\0';
	if (n == 0)
		snprintf(out, cap, "data");
}

int
feat_same_file(FILE *a, FILE *b)
{
	struct stat sa, sb;

	if (fstat(fileno(a), &sa) != 0 || fstat(fileno(b), &sb) != 0)
		return 0;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int
feat_parse_resize(const char *arg, uint64_t max, uint64_t *h, uint64_t *w)
{
	char *end;
	unsigned long long a, b;

	errno = 0;
	if (arg[0] < '0' || arg[0] > '9')
		return PV_E_RANGE;
	a = strtoull(arg, &end, 10);
	if (errno || (*end != 'x' && *end != 'X') || end[1] < '0' ||
	    end[1] > '9')
		return PV_E_RANGE;
	b = strtoull(end + 1, &end, 10);
	if (errno || *end != '\0' || a < 1 || b < 1 || a > max || b > max)
		return PV_E_RANGE;
	*h = a;
	*w = b;
	return 0;
}

int
feat_parse_crop(const char *arg, unsigned *thr)
{
	char *end;
	unsigned long v;

	*thr = 0;
	if (arg == NULL)
		return 0;
	errno = 0;
	if (arg[0] < '0' || arg[0] > '9')
		return PV_E_RANGE;
	v = strtoul(arg, &end, 10);
	if (errno || *end != '\0' || v > 254)
		return PV_E_RANGE;
	*thr = (unsigned)v;
	return 0;
}

/*
 * The next line of fp into *line without its end: the LF and one CR
 * before it (crlf 1), or every CR and LF at the end (crlf 2).
 * @return its length, or -1 at the end or on an error.
 */
static ssize_t
next_line(FILE *fp, char **line, size_t *cap, int crlf)
{
	ssize_t len = getline(line, cap, fp);

	if (len < 0)
		return len;
	if (crlf == 1) {
		if (len > 0 && (*line)[len - 1] == '\n')
			(*line)[--len] = '\0';
		if (len > 0 && (*line)[len - 1] == '\r')
			(*line)[--len] = '\0';
	} else {
		while (len > 0 && ((*line)[len - 1] == '\n' ||
		    (*line)[len - 1] == '\r'))
			(*line)[--len] = '\0';
	}
	return len;
}

/*
 * Fill msg: "LABEL:LINE: WHAT" (no ":LINE" when ln is 0), or with value
 * "LABEL:LINE: WHAT'VALUE'TAIL", the value shown shortened.  @return rc.
 */
static int
fail(int rc, char msg[FEAT_MSG], const char *label, uint64_t ln,
    const char *what, const char *value, const char *tail)
{
	char vb[CSVLAY_SHOWN + 8], lb[32] = "";

	if (ln > 0)
		snprintf(lb, sizeof lb, ":%llu", (unsigned long long)ln);
	if (value != NULL)
		snprintf(msg, FEAT_MSG, "%s%s: %s'%s'%s", label, lb, what,
		    csvlay_shown(value, vb, sizeof vb), tail);
	else
		snprintf(msg, FEAT_MSG, "%s%s: %s", label, lb, what);
	return rc;
}

int
feat_read_label_map(struct labcol *l, FILE *fp, const char *label,
    char msg[FEAT_MSG])
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	uint64_t ln = 0;
	int rc = 0;

	msg[0] = '\0';
	while (rc == 0 && (len = next_line(fp, &line, &cap, 1)) >= 0) {
		ln++;
		if (len == 0)
			rc = fail(PV_E_FORMAT, msg, label, ln, "empty line: a "
			    "label map has one label a line", NULL, NULL);
		else if (memchr(line, '\0', (size_t)len) != NULL)
			rc = fail(PV_E_FORMAT, msg, label, ln, "NUL byte in "
			    "the line", NULL, NULL);
		else if (!ts_utf8_valid(line, (size_t)len))
			rc = fail(PV_E_FORMAT, msg, label, ln, "the label is "
			    "not valid UTF-8", NULL, NULL);
		else if ((rc = labcol_map_add(l, line, (size_t)len)) ==
		    PV_E_FORMAT)
			rc = fail(rc, msg, label, ln, "label ", line,
			    " is listed twice");
		else if (rc == PV_E_RANGE) {
			snprintf(msg, FEAT_MSG, "%s: more than %zu labels",
			    label, (size_t)LABEL_MAX_CLASSES);
		} else if (rc == PV_E_LIMIT)
			rc = fail(rc, msg, label, ln, "the labels exceed the "
			    "metadata limit of 1 MiB", NULL, NULL);
	}
	free(line);
	if (rc == 0 && ferror(fp))
		rc = PV_E_IO;
	if (rc != 0)
		return rc;
	if (l->map.n == 0)
		return fail(PV_E_FORMAT, msg, label, 0, "empty label map",
		    NULL, NULL);
	if ((rc = labcol_map_end(l)) == PV_E_LIMIT)
		return fail(rc, msg, label, 0, "the labels exceed the metadata "
		    "limit of 1 MiB", NULL, NULL);
	return rc;
}

int
feat_read_vocab(struct strtab *v, FILE *fp, const char *label, size_t max,
    char msg[FEAT_MSG])
{
	char *line = NULL;
	size_t cap = 0, k;
	ssize_t len;
	uint64_t ln = 0;
	int added, rc = 0;

	msg[0] = '\0';
	while (rc == 0 && (len = next_line(fp, &line, &cap, 2)) >= 0) {
		ln++;
		if (len == 0 || memchr(line, '\0', (size_t)len) ||
		    !text_vocab_entry_ok(line))
			rc = fail(PV_E_FORMAT, msg, label, ln, "", line,
			    " is not a token of [a-z0-9'] or two joined by a "
			    "space");
		else if (strtab_add(v, line, (size_t)len, &k, &added) != 0)
			rc = PV_E_NOMEM;
		else if (!added)
			rc = fail(PV_E_FORMAT, msg, label, ln, "", line,
			    " is listed twice");
		else if (v->n > max) {
			snprintf(msg, FEAT_MSG, "%s: more than %llu entries",
			    label, (unsigned long long)max);
			rc = PV_E_LIMIT;
		}
	}
	free(line);
	if (rc == 0 && ferror(fp))
		rc = PV_E_IO;
	if (rc != 0)
		return rc;
	if (v->n == 0)
		return fail(PV_E_FORMAT, msg, label, 0, "empty vocabulary",
		    NULL, NULL);
	return 0;
}

/* The next record of fc: 1, 0 at the end, or PV_E_IO with msg. */
static int
next_record(struct feat_csv *fc, char msg[FEAT_MSG])
{
	int rc = csvin_next(fc->c, &fc->f, &fc->nf);

	if (rc < 0) {
		snprintf(msg, FEAT_MSG, "%s", csvin_errmsg(fc->c));
		return PV_E_IO;
	}
	return rc;
}

int
feat_csv_open(struct feat_csv *fc, FILE *fp, const char *label,
    const struct csvlay_params *p, char msg[FEAT_MSG])
{
	char m[CSVLAY_MSG];
	int rc;

	memset(fc, 0, sizeof *fc);
	fc->p = *p;
	fc->label = label;
	if ((fc->c = csvin_open(fp, label, ',')) == NULL)
		return PV_E_NOMEM;
	if ((rc = next_record(fc, msg)) == 0) {
		snprintf(msg, FEAT_MSG, "%s: empty input: no header or "
		    "records", label);
		rc = PV_E_FORMAT;
	} else if (rc == 1) {
		rc = csvlay_setup(&fc->L, p, fc->f, fc->nf, &fc->pending, m);
		if (rc == PV_E_OPTION)
			snprintf(msg, FEAT_MSG, "%s", m);
		else if (rc == PV_E_LIMIT)
			snprintf(msg, FEAT_MSG, "%s: %s", label, m);
		else if (rc != 0)
			rc = PV_E_NOMEM;
		if (rc != 0)
			csvlay_free(&fc->L);
	}
	if (rc != 0) {
		csvin_close(fc->c);
		fc->c = NULL;
	}
	return rc;
}

int
feat_csv_next(struct feat_csv *fc, double *row, char msg[FEAT_MSG])
{
	char m[CSVLAY_MSG];
	int rc;

	for (;;) {
		if (fc->pending)
			fc->pending = 0;
		else if ((rc = next_record(fc, msg)) != 1)
			return rc;
		rc = csvlay_parse_row(&fc->L, &fc->p, fc->f, fc->nf, row, m);
		if (rc < 0) {
			snprintf(msg, FEAT_MSG, "%s:%llu: %s", fc->label,
			    (unsigned long long)csvin_line(fc->c), m);
			return rc;
		}
		if (rc == 0)
			return 1;
	}
}

void
feat_csv_close(struct feat_csv *fc)
{
	if (fc->c == NULL)
		return;
	csvlay_free(&fc->L);
	csvin_close(fc->c);
	fc->c = NULL;
}

int
feat_learn_bounds(struct scale *sc, FILE *fp, const char *label,
    const struct csvlay_params *p, size_t d, char msg[FEAT_MSG])
{
	struct feat_csv fc;
	uint64_t n = 0;
	double *row = NULL;
	int rc;

	if ((rc = feat_csv_open(&fc, fp, label, p, msg)) != 0)
		return rc;
	if (fc.L.d != d) {
		snprintf(msg, FEAT_MSG, "%s: %zu features, but the input has "
		    "%zu", label, fc.L.d, d);
		rc = PV_E_FORMAT;
	} else if ((row = calloc(d ? d : 1, sizeof *row)) == NULL ||
	    scale_learn_begin(sc, d) != 0)
		rc = PV_E_NOMEM;
	while (rc == 0 && (rc = feat_csv_next(&fc, row, msg)) == 1) {
		scale_learn_row(sc, row, d);
		n++;
		rc = 0;
	}
	if (rc == 0 && n == 0) {
		snprintf(msg, FEAT_MSG, "%s: no rows to learn bounds from",
		    label);
		rc = PV_E_FORMAT;
	}
	if (rc == 0)
		sc->on = 1;
	free(row);
	feat_csv_close(&fc);
	return rc;
}
