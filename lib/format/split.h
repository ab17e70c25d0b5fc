/*
 * split.h: the row partition of `tns split` (man/tns.1): how many rows
 * each part gets, the keyed permutation that deals them out, and the
 * split.* keys each part carries (formats/tensor-stream.md, section 10;
 * lib/dp/parts.h reads them back).
 *
 * Ownership: split_permutation returns an array the caller frees; the
 * other functions fill what the caller gives them.  Nothing here prints,
 * exits or reads the environment.  Errors: PV_E_NOMEM, PV_E_LIMIT (a key
 * too long), PV_E_ENTROPY (no secure randomness, errno says why).
 */
#ifndef PRIVADA_SPLIT_H
#define PRIVADA_SPLIT_H

#include "pverr.h"

#include <stddef.h>
#include <stdint.h>

#include "tensor.h"

/*
 * Sizes of nparts parts of rows rows into size[0..nparts).  With
 * fractions NULL the parts are as equal as can be, the first rows %
 * nparts one row larger; else part i < nparts-1 gets floor(fractions[i] *
 * rows) rows (never more than remain) and the last part the rest.  The
 * sizes always sum to rows.
 */
void split_sizes(uint64_t rows, size_t nparts, const double *fractions,
    uint64_t *size);

/*
 * The keyed permutation of rows 0..n-1: row i gets the key XXH64(i as 8
 * little-endian bytes, seed), rows are ordered by key, ties by index.
 * Without the seed the order is unpredictable; with it, reproducible.  It
 * is not a cryptographic shuffle (XXH64 is not a PRF); parts only need to
 * be disjoint and unrelated to the row order.
 * @return 0 with *perm (n entries, the caller's), or PV_E_NOMEM.
 */
int split_permutation(uint64_t n, uint64_t seed, uint64_t **perm);

/* Fresh random split.parent and split.id values (rng_entropy).
 * @return 0 or PV_E_ENTROPY. */
int split_new_ids(uint64_t *parent, uint64_t *id);

/*
 * Record in meta, the metadata of part i of n: each dp.raw.X mark as
 * split.raw.X (the marks as they were when split), then split.part "i/n",
 * split.seed_source, split.parent and split.id (16 hex digits).
 * @return 0, PV_E_NOMEM, or PV_E_LIMIT with *bad the dp.raw key whose
 * split.raw name would exceed TS_MAX_KEY.
 */
int split_mark(struct ts_meta *meta, size_t i, size_t n,
    const char *seed_source, uint64_t parent, uint64_t id,
    const char **bad);

#endif
