/*
 * ck.h: checked integer arithmetic.
 *
 * Every size computed from input (dims, byte counts, offsets) goes through
 * these helpers.  Each returns 0 on success and -1 on overflow, in which
 * case *out is left unspecified and must not be used.
 */
#ifndef PRIVADA_CK_H
#define PRIVADA_CK_H

#include <stddef.h>
#include <stdint.h>

static inline int
ck_add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	return __builtin_add_overflow(a, b, out) ? -1 : 0;
}

static inline int
ck_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	return __builtin_mul_overflow(a, b, out) ? -1 : 0;
}

static inline int
ck_mul_size(size_t a, size_t b, size_t *out)
{
	return __builtin_mul_overflow(a, b, out) ? -1 : 0;
}

static inline int
ck_add_size(size_t a, size_t b, size_t *out)
{
	return __builtin_add_overflow(a, b, out) ? -1 : 0;
}

/* Product of n u64 factors; -1 on overflow.  The product of zero factors is 1. */
static inline int
ck_prod_u64(const uint64_t *v, int n, uint64_t *out)
{
	uint64_t p = 1;
	for (int i = 0; i < n; i++)
		if (ck_mul_u64(p, v[i], &p) != 0)
			return -1;
	*out = p;
	return 0;
}

#endif
