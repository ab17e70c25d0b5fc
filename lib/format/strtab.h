/*
 * strtab.h: a table of distinct strings in insertion order with an
 * open-addressing index (XXH64, seed 0): featurize's label sets, label
 * maps and vocabularies.
 *
 * Ownership: the table owns copies of its keys; keys[i] lives until
 * strtab_free.  A zeroed struct is an empty table.  Nothing here prints,
 * exits or reads the environment.  Errors: PV_E_NOMEM.
 */
#ifndef PRIVADA_STRTAB_H
#define PRIVADA_STRTAB_H

#include "pverr.h"

#include <stddef.h>

struct strtab {
	char **keys;		/* keys[0..n), NUL-terminated */
	size_t n, kcap;
	size_t *slots;		/* key index + 1; 0 is empty */
	size_t nslots;		/* a power of two */
};

/* Index of s (len bytes, no NUL among them), or -1 when absent. */
long long strtab_find(const struct strtab *t, const char *s, size_t len);

/* Add s (len bytes) unless present; *idx is its index, *added says
 * whether it is new.  @return 0 or PV_E_NOMEM (t unchanged). */
int strtab_add(struct strtab *t, const char *s, size_t len, size_t *idx,
    int *added);

/* Free the keys and the index; t becomes empty. */
void strtab_free(struct strtab *t);

/*
 * Grow the array *p (capacity *cap elements of elem bytes; 0 with *p
 * NULL to start) to hold need elements, doubling from 16: the growth of
 * the tables here and of their users (text, labcol).  On failure *p and
 * *cap are unchanged.  @return 0 or PV_E_NOMEM.
 */
int strtab_grow(void **p, size_t *cap, size_t need, size_t elem);

#endif
