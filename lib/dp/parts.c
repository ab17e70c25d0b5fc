/* parts.c: split partitions and their disjointness (see parts.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger.h"
#include "parts.h"
#include "tensor.h"

int
part_parse(const char *s, uint64_t *i, uint64_t *n)
{
	char *end;

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	*i = strtoull(s, &end, 10);
	if (errno || *end != '/' || end[1] < '0' || end[1] > '9')
		return -1;
	*n = strtoull(end + 1, &end, 10);
	if (errno || *end != '\0' || *n == 0 || *i >= *n)
		return -1;
	return 0;
}

int
part_read(struct split_part *p, const struct ts_meta *m)
{
	const char *s = ts_meta_get(m, "split.part"), *parent, *id;

	memset(p, 0, sizeof *p);
	if (s == NULL)
		return PART_NONE;
	if (strcmp(s, PART_MIXED_VALUE) == 0)
		return PART_MIXED;
	if (part_parse(s, &p->i, &p->n) != 0)
		return PART_BAD;
	if ((parent = ts_meta_get(m, "split.parent")) == NULL)
		return PART_NO_PARENT;
	id = ts_meta_get(m, "split.id");
	if ((p->parent = strdup(parent)) == NULL ||
	    (id != NULL && (p->id = strdup(id)) == NULL)) {
		part_free(p);
		return PART_NOMEM;
	}
	return PART_OK;
}

void
part_free(struct split_part *p)
{
	free(p->parent);
	free(p->id);
	memset(p, 0, sizeof *p);
}

/* A part's index and its place in the caller's array: sorted by index
 * without a file-level variable (qsort has no context argument in C11),
 * so that parts_disjoint is reentrant. */
struct ord {
	uint64_t i;
	size_t t;
};

static int
by_index(const void *x, const void *y)
{
	uint64_t a = ((const struct ord *)x)->i, b = ((const struct ord *)y)->i;

	return a < b ? -1 : a > b;
}

int
parts_disjoint(const struct split_part *const *pp, size_t n, size_t *a,
    size_t *b)
{
	struct ord *ord;
	int rc = PARTS_DISJOINT;

	*a = *b = 0;
	for (size_t t = 1; t < n; t++) {
		const struct split_part *p = pp[t], *q = pp[0];
		*b = t;
		if (strcmp(p->parent, q->parent) != 0)
			return PARTS_PARENT;
		if (p->n != q->n)
			return PARTS_COUNT;
		if ((p->id == NULL) != (q->id == NULL) ||
		    (p->id != NULL && strcmp(p->id, q->id) != 0))
			return PARTS_ID;
	}
	*b = 0;
	if (n < 2)
		return PARTS_DISJOINT;
	if ((ord = malloc(n * sizeof *ord)) == NULL)
		return PARTS_NOMEM;
	for (size_t t = 0; t < n; t++) {
		ord[t].i = pp[t]->i;
		ord[t].t = t;
	}
	qsort(ord, n, sizeof *ord, by_index);
	for (size_t t = 1; t < n; t++)
		if (ord[t].i == ord[t - 1].i) {
			size_t u = ord[t - 1].t, v = ord[t].t;
			*a = u < v ? u : v;
			*b = u < v ? v : u;
			rc = PARTS_SAME;
			break;
		}
	free(ord);
	return rc;
}

/* Whether m carries a dp.raw.<d> mark for some dataset d that the split
 * of part partitions: split.raw.<d> = row-local in part, or, in a part
 * with no split.raw.* key (written by hand or before split.raw), any
 * dp.raw.<d> of part. */
static int
partitions_marked(const struct ts_meta *part, const struct ts_meta *m)
{
	char key[TS_MAX_KEY + 1];
	int any = 0;

	for (size_t i = 0; i < part->n; i++) {
		const char *k = part->kv[i].key;
		if (strncmp(k, "split.raw.", 10) != 0)
			continue;
		any = 1;
		if (strcmp(part->kv[i].val, "row-local") != 0)
			continue;
		if ((size_t)snprintf(key, sizeof key, "dp.raw.%s", k + 10) <
		    sizeof key && ts_meta_get(m, key) != NULL)
			return 1;
	}
	if (any)
		return 0;
	for (size_t i = 0; i < part->n; i++)
		if (strncmp(part->kv[i].key, "dp.raw.", 7) == 0 &&
		    ts_meta_get(m, part->kv[i].key) != NULL)
			return 1;
	return 0;
}

/* Whether a and b name the same part of the same split. */
static int
same_part(const struct ts_meta *a, const struct ts_meta *b)
{
	static const char *const ident[] = { "split.part", "split.parent",
	    "split.id" };

	for (size_t i = 0; i < sizeof ident / sizeof *ident; i++) {
		const char *x = ts_meta_get(a, ident[i]);
		const char *y = ts_meta_get(b, ident[i]);
		if ((x == NULL) != (y == NULL) || (x != NULL && strcmp(x, y)))
			return 0;
	}
	return 1;
}

/* Drop every split.* key of m. */
static int
drop_split(struct ts_meta *m)
{
	struct ts_meta tmp = { 0 };

	if (ts_meta_copy_except(&tmp, m, "split.") != 0) {
		ts_meta_free(&tmp);
		return -1;
	}
	ts_meta_free(m);
	*m = tmp;
	return 0;
}

int
part_merge(struct ts_meta *dst, const struct ts_meta *src, const char *by)
{
	const char *sp = ts_meta_get(src, "split.part");
	const char *dp = ts_meta_get(dst, "split.part");
	int dmixed = dp != NULL && strcmp(dp, PART_MIXED_VALUE) == 0;
	int mix = 0, copy;

	if (!ledger_has_raw(src)) {
		/* No record reaches the output through src without privacy:
		 * adaptive composition accounts for it, whatever its part.
		 * Among streams without any raw mark, parts still disagree. */
		copy = dp == NULL;
		mix = dp != NULL && !dmixed && sp != NULL &&
		    !ledger_has_raw(dst) && !same_part(dst, src);
	} else if (sp != NULL && strcmp(sp, PART_MIXED_VALUE) == 0) {
		mix = copy = 1;
	} else if (sp != NULL && partitions_marked(src, src)) {
		copy = 1;
		if (dmixed)
			mix = 0;	/* stays mixed */
		else if (dp != NULL && partitions_marked(dst, dst))
			mix = !same_part(dst, src);
		else if (partitions_marked(src, dst))
			mix = 1;	/* an earlier input had all of d */
		else if (dp != NULL && drop_split(dst) != 0)
			return -1;	/* dst's part bound nothing */
	} else {
		/* Raw rows, or an aggregate, of the whole dataset (or of a
		 * part already aggregated when split). */
		copy = dp == NULL;
		mix = dp != NULL && !dmixed && partitions_marked(dst, src);
	}
	for (size_t i = 0; copy && i < src->n; i++)
		if (strncmp(src->kv[i].key, "split.", 6) == 0 &&
		    ts_meta_get(dst, src->kv[i].key) == NULL &&
		    ts_meta_set(dst, src->kv[i].key, src->kv[i].val) != 0)
			return -1;
	if (mix && (ts_meta_set(dst, "split.part", PART_MIXED_VALUE) != 0 ||
	    (ts_meta_get(dst, PART_MIXED_BY) == NULL &&
	    ts_meta_set(dst, PART_MIXED_BY, by) != 0)))
		return -1;
	return 0;
}
