/*
 * parts.h: the partition identity that `tns split` writes into each part
 * (split.part "i/n", split.parent, split.id) and the test that several
 * streams -- PATE teachers, the models of a DP-PG collection -- come from
 * disjoint parts of one split, so that one record of the dataset reaches
 * at most one of them.  The meaning of the keys is in
 * formats/tensor-stream.md, section 10.
 *
 * Nothing here prints or exits; the tools word their own messages.
 */
#ifndef PRIVADA_PARTS_H
#define PRIVADA_PARTS_H

#include <stddef.h>
#include <stdint.h>

#include "tstream.h"

/* The value of split.part for a stream derived from several parts. */
#define PART_MIXED_VALUE "mixed"
/* The key naming what made a stream mixed ("tool: input"). */
#define PART_MIXED_BY "split.mixed_by"

struct split_part {
	uint64_t i, n;		/* split.part "i/n", i < n */
	char *parent;		/* split.parent (owned) */
	char *id;		/* split.id (owned), NULL when absent */
};

/* part_read's results. */
enum part_status {
	PART_OK = 0,
	PART_NONE,		/* no split.part */
	PART_MIXED,		/* split.part = mixed */
	PART_BAD,		/* split.part is not "i/n" with i < n */
	PART_NO_PARENT,		/* split.part without split.parent */
	PART_NOMEM
};

/* parts_disjoint's results. */
enum parts_status {
	PARTS_DISJOINT = 0,
	PARTS_PARENT,		/* different split.parent */
	PARTS_COUNT,		/* splits into different numbers of parts */
	PARTS_ID,		/* different split.id (or one without) */
	PARTS_SAME,		/* the same part twice */
	PARTS_NOMEM
};

/* Parse "i/n" (decimal, n > 0, i < n).  @return 0 or -1. */
int part_parse(const char *s, uint64_t *i, uint64_t *n);

/* Read the split.* keys of m into p (zeroed first).  @return a
 * part_status; p owns its strings only with PART_OK (part_free). */
int part_read(struct split_part *p, const struct ts_meta *m);
void part_free(struct split_part *p);

/*
 * Whether the n parts pp[0..n-1] are distinct parts of one split: the same
 * parent, number of parts and id (or none), and distinct indices.  Parts
 * of different splits, or of splits into different numbers of parts, may
 * overlap.  On failure *a and *b (a < b unless PARTS_NOMEM) index the
 * offending pair of pp.  @return a parts_status.
 */
int parts_disjoint(const struct split_part *const *pp, size_t n, size_t *a,
    size_t *b);

/*
 * Merge the partition of an input, src (its stream metadata, whole: its
 * split.* keys and dp.raw.* marks), into dst, the metadata of an output
 * being built from several inputs, before src's raw marks are merged into
 * dst.  The rules (formats/tensor-stream.md, section 10.1.2):
 *
 * - an input carrying no dp.raw.* mark (a DP release, public data) binds
 *   nothing: its split.* keys are copied only when dst has no split.part,
 *   and it mixes only a dst that has no raw mark either and names
 *   another part;
 * - a part (split.part i/n, and a dp.raw.<d> mark for a dataset d its
 *   split partitions: split.raw.<d> = row-local, or with no split.raw.*
 *   key at all, any of its dp.raw marks) makes dst that part, unless dst
 *   is another part (different split.part, split.parent or split.id) or
 *   already carries a dp.raw.<d> mark without being a part of d: mixed;
 * - an input marked split.part = mixed and carrying a raw mark: mixed;
 * - any other input with a raw mark of a dataset that dst's split
 *   partitions derives from the whole dataset: mixed.
 *
 * Mixed means split.part = PART_MIXED_VALUE and, unless dst or src names
 * one already, PART_MIXED_BY = by.  Other split.* keys of src are copied
 * when dst lacks them.  @return 0, or -1 when out of memory (dst may then
 * be partly merged).
 */
int part_merge(struct ts_meta *dst, const struct ts_meta *src, const char *by);

#endif
