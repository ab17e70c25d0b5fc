/*
 * Unit tests of lib/parts: parsing split.part, reading the split.* keys,
 * and the disjointness test on hand-made collections (each failure kind,
 * and the pair it names).
 */
#include <stdint.h>
#include <string.h>

#include "parts.h"
#include "tap.h"

/* A stream's metadata as tns split would write it (NULL: key absent). */
static int
mk(struct split_part *p, const char *part, const char *parent, const char *id)
{
	struct ts_meta m = { 0 };
	int rc;

	if (part)
		ts_meta_set(&m, "split.part", part);
	if (parent)
		ts_meta_set(&m, "split.parent", parent);
	if (id)
		ts_meta_set(&m, "split.id", id);
	rc = part_read(p, &m);
	ts_meta_free(&m);
	return rc;
}

int
main(void)
{
	struct split_part p[5], q;
	const struct split_part *pp[5];
	uint64_t i, n;
	size_t a, b;

	ok(part_parse("3/7", &i, &n) == 0 && i == 3 && n == 7, "3/7 parses");
	ok(part_parse("7/7", &i, &n) != 0, "7/7: index not below the count");
	ok(part_parse("0/0", &i, &n) != 0, "0/0: no parts");
	ok(part_parse("1/2x", &i, &n) != 0 && part_parse("-1/2", &i, &n) != 0 &&
	    part_parse("1/", &i, &n) != 0 && part_parse("", &i, &n) != 0 &&
	    part_parse("18446744073709551616/2", &i, &n) != 0,
	    "garbage, signs, a missing count and overflow are refused");

	ok(mk(&q, NULL, "ab", NULL) == PART_NONE, "no split.part: PART_NONE");
	ok(mk(&q, "mixed", "ab", NULL) == PART_MIXED, "mixed: PART_MIXED");
	ok(mk(&q, "2/1", "ab", NULL) == PART_BAD, "2/1: PART_BAD");
	ok(mk(&q, "0/2", NULL, NULL) == PART_NO_PARENT, "no parent: PART_NO_PARENT");
	ok(mk(&q, "1/2", "ab", "cd") == PART_OK && q.i == 1 && q.n == 2 &&
	    strcmp(q.parent, "ab") == 0 && strcmp(q.id, "cd") == 0,
	    "a full part is read");
	part_free(&q);

	for (int t = 0; t < 5; t++) {
		char s[8];
		snprintf(s, sizeof s, "%d/5", 4 - t);
		mk(&p[t], s, "ab", "cd");
		pp[t] = &p[t];
	}
	ok(parts_disjoint(pp, 5, &a, &b) == PARTS_DISJOINT,
	    "five distinct parts of one split are disjoint");
	ok(parts_disjoint(pp, 1, &a, &b) == PARTS_DISJOINT, "one part alone");
	p[3].i = p[1].i;	/* 3/5 twice, at positions 1 and 3 */
	ok(parts_disjoint(pp, 5, &a, &b) == PARTS_SAME && a == 1 && b == 3,
	    "the same part twice is found and named (1, 3)");
	p[3].i = 1;
	p[2].n = 6;
	ok(parts_disjoint(pp, 5, &a, &b) == PARTS_COUNT && a == 0 && b == 2,
	    "a split into another number of parts");
	p[2].n = 5;
	part_free(&p[4]);
	mk(&p[4], "0/5", "ab", NULL);
	ok(parts_disjoint(pp, 5, &a, &b) == PARTS_ID && b == 4,
	    "a part without the others' split.id");
	part_free(&p[4]);
	mk(&p[4], "0/5", "ab", "ce");
	ok(parts_disjoint(pp, 5, &a, &b) == PARTS_ID && b == 4,
	    "a part of another split (split.id)");
	part_free(&p[4]);
	mk(&p[4], "0/5", "xy", "cd");
	ok(parts_disjoint(pp, 5, &a, &b) == PARTS_PARENT && b == 4,
	    "a part of other data (split.parent)");
	for (int t = 0; t < 5; t++)
		part_free(&p[t]);
	return tap_done();
}
