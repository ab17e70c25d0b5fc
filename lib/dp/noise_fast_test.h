/*
 * noise_fast_test.h: the test hooks of noise_fast.c, for tests/unit only:
 * deliberately broken samplers (to show that the tests can fail), the
 * switch between the SIMD and scalar draws, and the law read back from a
 * table.  Not part of the library's interface: nothing outside tests/ and
 * noise_fast.c includes it.
 */
#ifndef PRIVADA_NOISE_FAST_TEST_H
#define PRIVADA_NOISE_FAST_TEST_H

#include <stddef.h>

#include "noise_fast.h"

/* Deliberately broken samplers, to show that the tests can fail:
 * FACTOR multiplies by K + 1 instead of K; TRUNCATE cuts every table at
 * 1.5 times its width; SMOOTHING gives Z_0 .. Z_{L-2} width K/3 instead of
 * 3K (too narrow to smooth K Z: the output's residues mod K are far from
 * uniform), with b still chosen to keep the variance s^2.  Never use
 * outside tests. */
enum noise_fast_defect {
	NOISE_FAST_DEFECT_NONE = 0,
	NOISE_FAST_DEFECT_FACTOR = 1,
	NOISE_FAST_DEFECT_TRUNCATE = 2,
	NOISE_FAST_DEFECT_SMOOTHING = 3
};
int noise_fast_new_defective(struct noise_fast **out, double s, int defect);

/* Take the bulk random bits from AES-CTR (on = 1, refused with -1 on a
 * CPU without AES instructions) or from the struct rng's ChaCha20 (on =
 * 0).  @return the previous setting or -1. */
int noise_fast_test_aes(struct noise_fast *h, int on);

/* The AES keys this thread has taken since the last call (each call's
 * stream re-keys every AESCTR_REKEY blocks, the bound in tau relies on
 * it); resets the count. */
size_t noise_fast_test_keys(void);

/* Use the 16-lane AVX-512F draws (on = 1) or the scalar code (on = 0)
 * from now on; both give the same values from the same stream, which the
 * tests check with this.  @return the previous setting, or -1 (nothing
 * changed) when on = 1 and this build or CPU has no AVX-512F. */
int noise_fast_test_simd(struct noise_fast *h, int on);

/* The law a table draw produces, read back from the alias table: p[x] =
 * P[|Z| = x] for x = 0 .. np-1 (0 beyond the table), from the outer table
 * (outer != 0) or the inner one.  For checking the table computation and
 * the alias construction against an independent pmf.
 * @return the table's support size T + 1, or NOISE_E_RANGE (no inner
 * table when L = 1). */
int noise_fast_table_law(const struct noise_fast *h, int outer,
    long double *p, size_t np);

#endif
