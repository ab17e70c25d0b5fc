/* split.c: the row partition of tns split. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "split.h"
#include "tstream.h"

void
split_sizes(uint64_t rows, size_t nparts, const double *fractions,
    uint64_t *size)
{
	uint64_t used = 0;

	if (nparts == 0)
		return;
	if (fractions == NULL) {
		for (size_t i = 0; i < nparts; i++)
			size[i] = rows / nparts + (i < rows % nparts);
		return;
	}
	for (size_t i = 0; i + 1 < nparts; i++) {
		double f = floor(fractions[i] * (double)rows);
		size[i] = f >= (double)(rows - used) ? rows - used :
		    (uint64_t)f;
		used += size[i];
	}
	size[nparts - 1] = rows - used;
}

struct pkey {
	uint64_t key, idx;
};

static int
pkey_cmp(const void *a, const void *b)
{
	const struct pkey *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int
split_permutation(uint64_t n, uint64_t seed, uint64_t **perm)
{
	struct pkey *k;
	uint64_t *p;
	unsigned char b[8];

	*perm = NULL;
	if (n > SIZE_MAX / sizeof *k)
		return PV_E_NOMEM;
	if ((k = malloc(n ? (size_t)n * sizeof *k : 1)) == NULL)
		return PV_E_NOMEM;
	if ((p = malloc(n ? (size_t)n * sizeof *p : 1)) == NULL) {
		free(k);
		return PV_E_NOMEM;
	}
	for (uint64_t i = 0; i < n; i++) {
		for (int j = 0; j < 8; j++)
			b[j] = (unsigned char)(i >> (8 * j));
		k[i].key = ts_xxh64(b, sizeof b, seed);
		k[i].idx = i;
	}
	qsort(k, (size_t)n, sizeof *k, pkey_cmp);
	for (uint64_t i = 0; i < n; i++)
		p[i] = k[i].idx;
	free(k);
	*perm = p;
	return 0;
}

int
split_new_ids(uint64_t *parent, uint64_t *id)
{
	unsigned char b[16];

	if (rng_entropy(b, sizeof b) != 0)
		return PV_E_ENTROPY;
	*parent = *id = 0;
	for (int k = 0; k < 8; k++) {
		*parent |= (uint64_t)b[k] << (8 * k);
		*id |= (uint64_t)b[8 + k] << (8 * k);
	}
	return 0;
}

int
split_mark(struct ts_meta *meta, size_t i, size_t n,
    const char *seed_source, uint64_t parent, uint64_t id,
    const char **bad)
{
	*bad = NULL;
	/* The raw marks as they were when split: a teacher trained on a
	 * part is an aggregate of it, but a part that was already an
	 * aggregate of the whole dataset (say, scaled by its mean) ties the
	 * teachers together (teacher-vote).  Keys added here do not start
	 * with dp.raw., so the loop never visits them. */
	for (size_t k = 0; k < meta->n; k++) {
		char sk[TS_MAX_KEY + 8];
		if (strncmp(meta->kv[k].key, "dp.raw.", 7) != 0)
			continue;
		if ((size_t)snprintf(sk, sizeof sk, "split.raw.%s",
		    meta->kv[k].key + 7) > TS_MAX_KEY) {
			*bad = meta->kv[k].key;
			return PV_E_LIMIT;
		}
		if (ts_meta_set(meta, sk, meta->kv[k].val) != 0)
			return PV_E_NOMEM;
	}
	if (ts_meta_setf(meta, "split.part", "%zu/%zu", i, n) ||
	    ts_meta_set(meta, "split.seed_source", seed_source) ||
	    ts_meta_setf(meta, "split.parent", "%016llx",
	    (unsigned long long)parent) ||
	    ts_meta_setf(meta, "split.id", "%016llx",
	    (unsigned long long)id))
		return PV_E_NOMEM;
	return 0;
}
