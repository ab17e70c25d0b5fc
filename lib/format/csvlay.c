/* csvlay.c: featurize's CSV layout. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csvin.h"
#include "csvlay.h"
#include "strtab.h"

#define OPTERR(...) (snprintf(msg, CSVLAY_MSG, __VA_ARGS__), PV_E_OPTION)
#define BADROW(...) (snprintf(msg, CSVLAY_MSG, __VA_ARGS__), PV_E_FORMAT)

const char *
csvlay_shown(const char *s, char *buf, size_t cap)
{
	size_t n = strlen(s);

	if (n <= CSVLAY_SHOWN)
		return s;
	snprintf(buf, cap, "%.*s...", CSVLAY_SHOWN, s);
	return buf;
}

int
csvlay_is_index(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

int
csvlay_index(const char *opt, const char *s, uint64_t *v,
    char msg[CSVLAY_MSG])
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end != '\0' || x >= CSVLAY_MAX_FEATURES)
		return OPTERR("invalid %s '%s': column index out of range",
		    opt, s);
	*v = x;
	return 0;
}

int
csvlay_check_columns(const char *s, char msg[CSVLAY_MSG])
{
	const char *p = s;

	if (*s == '\0')
		return OPTERR("invalid --columns '': empty list");
	for (;;) {
		size_t n = strcspn(p, ",");
		if (n == 0)
			return OPTERR("invalid --columns '%s': empty item", s);
		p += n;
		if (*p == '\0')
			break;
		p++;
		if (*p == '\0')
			return OPTERR("invalid --columns '%s': empty item", s);
	}
	return 0;
}

/* Name of column i for messages: " ('name')" or "". */
static const char *
colname(const struct csvlay *L, size_t i, char *buf, size_t cap)
{
	char tmp[CSVLAY_SHOWN + 8];

	if (L->names == NULL)
		return "";
	snprintf(buf, cap, " ('%s')", csvlay_shown(L->names[i], tmp,
	    sizeof tmp));
	return buf;
}

/* Resolve a column given by name or index into *col. */
static int
resolve_col(const struct csvlay *L, const char *opt, const char *s,
    size_t *col, char *msg)
{
	long long found = -1;

	if (csvlay_is_index(s)) {
		uint64_t v;
		int rc = csvlay_index(opt, s, &v, msg);
		if (rc != 0)
			return rc;
		if (v >= L->ncol)
			return OPTERR("invalid %s '%s': the input has %zu "
			    "columns (numbered from 0)", opt, s, L->ncol);
		*col = (size_t)v;
		return 0;
	}
	if (L->names == NULL)
		return OPTERR("invalid %s '%s': column names need a header "
		    "(--header yes)", opt, s);
	for (size_t i = 0; i < L->ncol; i++) {
		if (strcmp(L->names[i], s) != 0)
			continue;
		if (found >= 0)
			return OPTERR("invalid %s '%s': more than one column "
			    "has this name", opt, s);
		found = (long long)i;
	}
	if (found < 0)
		return OPTERR("invalid %s '%s': no such column", opt, s);
	*col = (size_t)found;
	return 0;
}

/* Does --columns or --label refer to a column by name? */
static int
uses_names(const struct csvlay_params *p)
{
	const char *c;

	if (p->label && !csvlay_is_index(p->label))
		return 1;
	if (p->columns == NULL)
		return 0;
	for (c = p->columns; *c; ) {
		size_t n = strcspn(c, ",");
		for (size_t i = 0; i < n; i++)
			if (!(c[i] >= '0' && c[i] <= '9') && c[i] != '-')
				return 1;
		c += n + (c[n] == ',');
	}
	return 0;
}

static int
layout_items(struct csvlay *L, const struct csvlay_params *p, char *list,
    char *mark, char *msg)
{
	size_t cap = 0;
	char *save = NULL;
	int rc;

	for (char *it = strtok_r(list, ",", &save); it;
	    it = strtok_r(NULL, ",", &save)) {
		uint64_t a, b;
		size_t col;
		char *dash = strchr(it, '-');
		if (dash && dash != it && dash[1] != '\0') {
			*dash = '\0';
			if (csvlay_is_index(it) && csvlay_is_index(dash + 1)) {
				rc = csvlay_index("--columns", it, &a, msg);
				if (rc == 0)
					rc = csvlay_index("--columns", dash + 1,
					    &b, msg);
				if (rc != 0)
					return rc;
			} else {
				*dash = '-';
				if ((rc = resolve_col(L, "--columns", it, &col,
				    msg)) != 0)
					return rc;
				a = b = col;
			}
		} else {
			if ((rc = resolve_col(L, "--columns", it, &col,
			    msg)) != 0)
				return rc;
			a = b = col;
		}
		if (b < a || b >= L->ncol)
			return OPTERR("invalid --columns '%s': range outside "
			    "columns 0-%zu", p->columns, L->ncol - 1);
		for (uint64_t i = a; i <= b; i++) {
			if ((long long)i == L->label)
				return OPTERR("invalid --columns '%s': column "
				    "%llu is the label", p->columns,
				    (unsigned long long)i);
			if (mark[i])
				return OPTERR("invalid --columns '%s': column "
				    "%llu is listed twice", p->columns,
				    (unsigned long long)i);
			mark[i] = 1;
			if (strtab_grow((void **)&L->feat, &cap, L->d + 1,
			    sizeof *L->feat) != 0)
				return PV_E_NOMEM;
			L->feat[L->d++] = (size_t)i;
		}
	}
	return 0;
}

static int
layout_columns(struct csvlay *L, const struct csvlay_params *p, char *msg)
{
	char *mark, *list;
	int rc;

	L->d = 0;
	L->feat = NULL;
	if (p->columns == NULL) {
		if ((L->feat = calloc(L->ncol ? L->ncol : 1,
		    sizeof *L->feat)) == NULL)
			return PV_E_NOMEM;
		for (size_t i = 0; i < L->ncol; i++)
			if ((long long)i != L->label)
				L->feat[L->d++] = i;
		return 0;
	}
	mark = calloc(L->ncol ? L->ncol : 1, 1);
	list = strdup(p->columns);
	if (mark == NULL || list == NULL)
		rc = PV_E_NOMEM;
	else
		rc = layout_items(L, p, list, mark, msg);
	free(list);
	free(mark);
	return rc;
}

int
csvlay_setup(struct csvlay *L, const struct csvlay_params *p,
    char *const *f, size_t nf, int *is_data, char msg[CSVLAY_MSG])
{
	int hdr, rc;

	memset(L, 0, sizeof *L);
	L->ncol = nf;
	L->label = -1;
	if (p->label && csvlay_is_index(p->label)) {
		uint64_t v;
		if ((rc = csvlay_index("--label", p->label, &v, msg)) != 0)
			return rc;
		if (v >= L->ncol)
			return OPTERR("invalid --label '%s': the input has %zu "
			    "columns (numbered from 0)", p->label, L->ncol);
		L->label = (long long)v;
	}
	if (p->header == CSVLAY_HDR_AUTO) {
		/* A first record with a field that is not a number (other
		 * than the label) is a header; names in options imply one. */
		hdr = uses_names(p);
		for (size_t i = 0; i < nf && !hdr; i++) {
			double v;
			const char *s = f[i];
			while (*s == ' ' || *s == '\t')
				s++;
			if ((long long)i != L->label && *s != '\0' &&
			    csvin_double(s, &v) != 0)
				hdr = 1;
		}
	} else {
		hdr = p->header == CSVLAY_HDR_YES;
	}
	if (hdr) {
		if ((L->names = calloc(L->ncol ? L->ncol : 1,
		    sizeof *L->names)) == NULL)
			return PV_E_NOMEM;
		for (size_t i = 0; i < L->ncol; i++)
			if ((L->names[i] = strdup(f[i])) == NULL)
				return PV_E_NOMEM;
	}
	if (p->label && !csvlay_is_index(p->label)) {
		size_t col;
		if ((rc = resolve_col(L, "--label", p->label, &col, msg)) != 0)
			return rc;
		L->label = (long long)col;
	}
	if ((rc = layout_columns(L, p, msg)) != 0)
		return rc;
	if (L->d == 0)
		return OPTERR("no feature columns (the input has %zu columns)",
		    L->ncol);
	if (L->d > CSVLAY_MAX_FEATURES) {
		snprintf(msg, CSVLAY_MSG, "%zu columns exceed the limit of "
		    "%llu", L->d, (unsigned long long)CSVLAY_MAX_FEATURES);
		return PV_E_LIMIT;
	}
	*is_data = !hdr;
	return 0;
}

int
csvlay_parse_row(struct csvlay *L, const struct csvlay_params *p,
    char *const *f, size_t nf, double *row, char msg[CSVLAY_MSG])
{
	char nb[CSVLAY_SHOWN + 16], vb[CSVLAY_SHOWN + 8];
	uint64_t replaced = 0;

	if (nf != L->ncol)
		return BADROW("%zu fields, expected %zu", nf, L->ncol);
	if (L->label >= 0 && f[L->label][0] == '\0') {
		if (p->missing == CSVLAY_MISS_DROP) {
			L->dropped++;
			return 1;
		}
		return BADROW("column %lld%s: missing label", L->label,
		    colname(L, (size_t)L->label, nb, sizeof nb));
	}
	for (size_t j = 0; j < L->d; j++) {
		size_t i = L->feat[j];
		const char *why;
		double v;

		if (csvin_double(f[i], &v) == 0 && isfinite(v)) {
			row[j] = v;
			continue;
		}
		if (p->missing == CSVLAY_MISS_DROP) {
			L->dropped++;
			return 1;
		}
		if (p->missing == CSVLAY_MISS_ZERO) {
			row[j] = 0;
			replaced++;
			continue;
		}
		if (f[i][strspn(f[i], " \t")] == '\0')
			return BADROW("column %zu%s: missing value", i,
			    colname(L, i, nb, sizeof nb));
		why = csvin_double(f[i], &v) == 0 ? "is not finite" :
		    "is not a number";
		return BADROW("column %zu%s: '%s' %s", i,
		    colname(L, i, nb, sizeof nb),
		    csvlay_shown(f[i], vb, sizeof vb), why);
	}
	L->replaced += replaced;
	return 0;
}

void
csvlay_free(struct csvlay *L)
{
	if (L->names)
		for (size_t i = 0; i < L->ncol; i++)
			free(L->names[i]);
	free(L->names);
	free(L->feat);
	L->names = NULL;
	L->feat = NULL;
}
