/* parts.c: split partitions and their disjointness (see parts.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "parts.h"

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

static const struct split_part *const *sort_base;

static int
by_index(const void *x, const void *y)
{
	uint64_t a = sort_base[*(const size_t *)x]->i;
	uint64_t b = sort_base[*(const size_t *)y]->i;

	return a < b ? -1 : a > b;
}

int
parts_disjoint(const struct split_part *const *pp, size_t n, size_t *a,
    size_t *b)
{
	size_t *ord;
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
	for (size_t t = 0; t < n; t++)
		ord[t] = t;
	sort_base = pp;		/* qsort has no context argument in C11 */
	qsort(ord, n, sizeof *ord, by_index);
	for (size_t t = 1; t < n; t++)
		if (pp[ord[t]]->i == pp[ord[t - 1]]->i) {
			*a = ord[t - 1] < ord[t] ? ord[t - 1] : ord[t];
			*b = ord[t - 1] < ord[t] ? ord[t] : ord[t - 1];
			rc = PARTS_SAME;
			break;
		}
	free(ord);
	return rc;
}
