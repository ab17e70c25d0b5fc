/* strtab.c: distinct strings with a hash index. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strtab.h"
#include "xxh64.h"

int
strtab_grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t nc = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (nc < need) {
		if (nc > SIZE_MAX / 4 / elem)
			return PV_E_NOMEM;
		nc *= 2;
	}
	if ((q = realloc(*p, nc * elem)) == NULL)
		return PV_E_NOMEM;
	*p = q;
	*cap = nc;
	return 0;
}

static long long
find(const struct strtab *t, const char *s, size_t len, uint64_t hv)
{
	if (t->nslots == 0)
		return -1;
	for (size_t i = (size_t)hv & (t->nslots - 1);; i = (i + 1) &
	    (t->nslots - 1)) {
		size_t k = t->slots[i];
		if (k == 0)
			return -1;
		if (strncmp(t->keys[k - 1], s, len) == 0 &&
		    t->keys[k - 1][len] == '\0')
			return (long long)(k - 1);
	}
}

long long
strtab_find(const struct strtab *t, const char *s, size_t len)
{
	return find(t, s, len, ts_xxh64(s, len, 0));
}

static int
rehash(struct strtab *t, size_t nslots)
{
	size_t *slots = calloc(nslots, sizeof *slots);

	if (slots == NULL)
		return PV_E_NOMEM;
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	for (size_t k = 0; k < t->n; k++) {
		uint64_t hv = ts_xxh64(t->keys[k], strlen(t->keys[k]), 0);
		size_t i = (size_t)hv & (nslots - 1);
		while (t->slots[i] != 0)
			i = (i + 1) & (nslots - 1);
		t->slots[i] = k + 1;
	}
	return 0;
}

int
strtab_add(struct strtab *t, const char *s, size_t len, size_t *idx,
    int *added)
{
	uint64_t hv = ts_xxh64(s, len, 0);
	long long k = find(t, s, len, hv);
	char *copy;

	*added = 0;
	if (k >= 0) {
		*idx = (size_t)k;
		return 0;
	}
	if (strtab_grow((void **)&t->keys, &t->kcap, t->n + 1,
	    sizeof *t->keys) != 0)
		return PV_E_NOMEM;
	/* Keep the load below one half so probes stay short. */
	if ((t->n + 1) * 2 > t->nslots &&
	    rehash(t, t->nslots ? t->nslots * 2 : 64) != 0)
		return PV_E_NOMEM;
	if ((copy = malloc(len + 1)) == NULL)
		return PV_E_NOMEM;
	memcpy(copy, s, len);
	copy[len] = '\0';
	t->keys[t->n++] = copy;
	{
		size_t i = (size_t)hv & (t->nslots - 1);
		while (t->slots[i] != 0)
			i = (i + 1) & (t->nslots - 1);
		t->slots[i] = t->n;
	}
	*added = 1;
	*idx = t->n - 1;
	return 0;
}

void
strtab_free(struct strtab *t)
{
	for (size_t k = 0; k < t->n; k++)
		free(t->keys[k]);
	free(t->keys);
	free(t->slots);
	memset(t, 0, sizeof *t);
}
