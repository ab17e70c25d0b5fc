/* labcol.c: featurize's label column. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labcol.h"
#include "labels.h"

/* A growable string. */
struct sbuf {
	char *p;
	size_t len, cap;
	int err;
};

static void
sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->err || strtab_grow((void **)&b->p, &b->cap, b->len + n + 1,
	    1) != 0) {
		b->err = 1;
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

/* Append s as a JSON string. */
static void
sb_json(struct sbuf *b, const char *s)
{
	char esc[8];

	sb_add(b, "\"", 1);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\') {
			esc[0] = '\\';
			esc[1] = (char)ch;
			sb_add(b, esc, 2);
		} else if (ch < 0x20) {
			snprintf(esc, sizeof esc, "\\u%04x", ch);
			sb_add(b, esc, 6);
		} else {
			sb_add(b, s, 1);
		}
	}
	sb_add(b, "\"", 1);
}

char *
json_str_array(char *const *v, const size_t *idx, size_t n, size_t stop,
    size_t *len)
{
	struct sbuf b = { 0 };

	sb_add(&b, "[", 1);
	for (size_t j = 0; j < n && b.len <= stop; j++) {
		if (j)
			sb_add(&b, ",", 1);
		sb_json(&b, idx ? v[idx[j]] : v[j]);
	}
	sb_add(&b, "]", 1);
	if (b.err) {
		free(b.p);
		return NULL;
	}
	*len = b.len;
	return b.p;
}

void
labcol_init(struct labcol *l, size_t classes, int drop_unknown)
{
	memset(l, 0, sizeof *l);
	l->classes = classes;
	l->drop_unknown = drop_unknown;
	l->all_int = 1;
}

int
labcol_declared(const struct labcol *l)
{
	return l->map_names != NULL || l->classes > 0;
}

int
labcol_map_add(struct labcol *l, const char *s, size_t len)
{
	struct sbuf b = { l->mj, l->mjlen, l->mjcap, 0 };
	size_t k;
	int added;

	if (strtab_add(&l->map, s, len, &k, &added) != 0)
		return PV_E_NOMEM;
	if (!added)
		return PV_E_FORMAT;
	if (l->map.n > LABEL_MAX_CLASSES)
		return PV_E_RANGE;
	sb_add(&b, l->map.n > 1 ? "," : "[", 1);
	sb_json(&b, l->map.keys[k]);
	l->mj = b.p;
	l->mjlen = b.len;
	l->mjcap = b.cap;
	if (b.err)
		return PV_E_NOMEM;
	return b.len > TS_MAX_VALUE ? PV_E_LIMIT : 0;
}

int
labcol_map_end(struct labcol *l)
{
	struct sbuf b = { l->mj, l->mjlen, l->mjcap, 0 };

	sb_add(&b, l->map.n == 0 ? "[]" : "]", l->map.n == 0 ? 2 : 1);
	l->mj = NULL;
	l->mjlen = l->mjcap = 0;
	if (b.err) {
		free(b.p);
		return PV_E_NOMEM;
	}
	if (b.len > TS_MAX_VALUE) {
		free(b.p);
		return PV_E_LIMIT;
	}
	l->map_names = b.p;
	return 0;
}

static int
push(struct labcol *l, int32_t v)
{
	if (strtab_grow((void **)&l->y, &l->cap, l->n + 1,
	    sizeof *l->y) != 0)
		return PV_E_NOMEM;
	l->y[l->n++] = v;
	return 1;
}

/* A label of a declared set: its class in the map, or the integer 0 ..
 * K-1 of --classes K. */
static int
put_declared(struct labcol *l, const char *s, size_t len)
{
	long long k;

	if (l->map_names != NULL) {
		k = strtab_find(&l->map, s, len);
	} else {
		char *copy = malloc(len + 1), *end;
		if (copy == NULL)
			return PV_E_NOMEM;
		memcpy(copy, s, len);
		copy[len] = '\0';
		errno = 0;
		k = strtoll(copy, &end, 10);
		if (errno || end == copy || *end != '\0' || k < 0 ||
		    (unsigned long long)k >= l->classes)
			k = -1;
		free(copy);
	}
	if (k >= 0)
		return push(l, (int32_t)k);
	if (l->drop_unknown) {
		l->unknown++;
		return 0;
	}
	return PV_E_RANGE;
}

int
labcol_put(struct labcol *l, const char *s, size_t len)
{
	size_t k;
	int added;

	if (labcol_declared(l))
		return put_declared(l, s, len);
	if (strtab_add(&l->tab, s, len, &k, &added) != 0)
		return PV_E_NOMEM;
	if (added) {
		char *end;
		long long v;
		if (strtab_grow((void **)&l->ival, &l->icap, l->tab.n,
		    sizeof *l->ival) != 0)
			return PV_E_NOMEM;
		errno = 0;
		v = strtoll(l->tab.keys[k], &end, 10);
		if (errno || end == l->tab.keys[k] || *end != '\0' ||
		    v < INT32_MIN || v > INT32_MAX)
			l->all_int = 0;
		else
			l->ival[k] = (int32_t)v;
		if (l->tab.n > (size_t)INT32_MAX)
			return PV_E_LIMIT;
	}
	return push(l, (int32_t)k);
}

int
labcol_put_int(struct labcol *l, int32_t v)
{
	if (labcol_declared(l)) {
		char b[16];
		int n = snprintf(b, sizeof b, "%d", (int)v);
		return put_declared(l, b, (size_t)n);
	}
	return push(l, v);
}

int
labcol_finish(struct labcol *l, struct ts_meta *m)
{
	char *names;
	size_t len;
	int rc;

	/* A declared set is public; any other was learnt from the rows and
	 * says so, for DP tools refuse it (labels.h). */
	if (l->map_names != NULL)
		rc = label_put(m, LABEL_PUBLIC, l->map.n, l->map_names);
	else if (l->classes > 0)
		rc = label_put(m, LABEL_PUBLIC, l->classes, NULL);
	else
		rc = label_put(m, LABEL_DATA, 0, NULL);
	if (rc != 0)
		return PV_E_NOMEM;
	if (labcol_declared(l) || l->tab.n == 0)
		return 0;	/* y holds the classes already */
	if (l->all_int) {
		for (size_t i = 0; i < l->n; i++)
			l->y[i] = l->ival[l->y[i]];
		return 0;
	}
	if ((names = json_str_array(l->tab.keys, NULL, l->tab.n, SIZE_MAX,
	    &len)) == NULL)
		return PV_E_NOMEM;
	if (len > TS_MAX_VALUE)
		rc = PV_E_LIMIT;
	else if (!ts_utf8_valid(names, len))
		rc = PV_E_FORMAT;
	else if (ts_meta_set(m, "label.names", names) != 0)
		rc = PV_E_NOMEM;
	free(names);
	return rc;
}

void
labcol_free(struct labcol *l)
{
	strtab_free(&l->tab);
	strtab_free(&l->map);
	free(l->map_names);
	free(l->ival);
	free(l->y);
	free(l->mj);
	memset(l, 0, sizeof *l);
}
