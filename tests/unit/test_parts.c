/*
 * Unit tests of lib/parts: parsing split.part, reading the split.* keys,
 * and the disjointness test on hand-made collections (each failure kind,
 * and the pair it names), and how inputs' partitions merge (part_merge,
 * the rules of formats/tensor-stream.md 10.1.2).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
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

/* Metadata from "key=value" strings, NULL-terminated. */
static void
kv(struct ts_meta *m, ...)
{
	va_list ap;
	const char *s;

	va_start(ap, m);
	while ((s = va_arg(ap, const char *)) != NULL) {
		char k[128];
		const char *eq = strchr(s, '=');
		snprintf(k, sizeof k, "%.*s", (int)(eq - s), s);
		ts_meta_set(m, k, eq + 1);
	}
	va_end(ap);
}

#define PART(i) "split.part=" i "/3", "split.parent=aa", "split.id=bb", \
	"split.raw.d=row-local"

/* Merge the inputs a, b (and c) in order as a tool does (partition, then
 * raw marks); @return 1 when the output is mixed by `by` "x: <label>". */
static int
merged_mixed(const struct ts_meta *a, const struct ts_meta *b,
    const struct ts_meta *c, const char *by, const char **part)
{
	static char out[64];
	const struct ts_meta *in[3] = { a, b, c };
	struct ts_meta d = { 0 };
	const char *s;
	int mixed;

	for (int t = 0; t < 3 && in[t] != NULL; t++) {
		char lab[16];
		snprintf(lab, sizeof lab, "x: in%d", t);
		part_merge(&d, in[t], lab);
		for (size_t i = 0; i < in[t]->n; i++)
			if (strncmp(in[t]->kv[i].key, "dp.raw.", 7) == 0)
				ts_meta_set(&d, in[t]->kv[i].key, in[t]->kv[i].val);
	}
	s = ts_meta_get(&d, "split.part");
	snprintf(out, sizeof out, "%s", s ? s : "-");
	*part = out;
	mixed = s != NULL && strcmp(s, PART_MIXED_VALUE) == 0 &&
	    (s = ts_meta_get(&d, PART_MIXED_BY)) != NULL && strcmp(s, by) == 0;
	ts_meta_free(&d);
	return mixed;
}

static void
merge_tests(void)
{
	struct ts_meta p0 = { 0 }, p1 = { 0 }, whole = { 0 }, agg = { 0 },
	    dpcov = { 0 }, dppart = { 0 }, other = { 0 }, mixed = { 0 },
	    oldagg = { 0 }, alt = { 0 }, pub0 = { 0 }, pub1 = { 0 };
	const char *part;

	kv(&p0, PART("0"), "dp.raw.d=row-local", (char *)NULL);
	kv(&p1, PART("1"), "dp.raw.d=aggregate", (char *)NULL);
	kv(&alt, "split.part=0/3", "split.parent=cc", "split.id=dd",
	    "split.raw.d=row-local", "dp.raw.d=aggregate", (char *)NULL);
	kv(&pub0, "split.part=0/2", "split.parent=ee", (char *)NULL);
	kv(&pub1, "split.part=1/2", "split.parent=ee", (char *)NULL);
	kv(&whole, "dp.raw.d=row-local", (char *)NULL);
	kv(&agg, "dp.raw.d=aggregate", "data.name=d", (char *)NULL);
	kv(&dpcov, "dp.release.00.dataset=d", (char *)NULL);
	kv(&dppart, PART("2"), "dp.release.01.dataset=d", (char *)NULL);
	kv(&other, "dp.raw.e=aggregate", (char *)NULL);
	kv(&mixed, "split.part=mixed", "split.mixed_by=y: z",
	    "dp.raw.d=aggregate", (char *)NULL);
	kv(&oldagg, "split.part=1/3", "split.parent=aa", "split.id=bb",
	    "split.raw.d=aggregate", "dp.raw.d=aggregate", (char *)NULL);

	ok(!merged_mixed(&p0, NULL, NULL, "", &part) &&
	    strcmp(part, "0/3") == 0, "one part stays that part");
	ok(!merged_mixed(&p0, &p0, NULL, "", &part) &&
	    strcmp(part, "0/3") == 0, "the same part twice stays that part");
	ok(merged_mixed(&p0, &p1, NULL, "x: in1", &part),
	    "another part of the split mixes, named by the second input");
	ok(merged_mixed(&p0, &alt, NULL, "x: in1", &part),
	    "a part of another split mixes");
	ok(merged_mixed(&p0, &agg, NULL, "x: in1", &part),
	    "a non-private aggregate of the whole dataset mixes (--init base)");
	ok(merged_mixed(&agg, &p0, NULL, "x: in1", &part),
	    "in either order");
	ok(merged_mixed(&p0, &whole, NULL, "x: in1", &part),
	    "raw rows of the whole dataset mix");
	ok(!merged_mixed(&p0, &dpcov, NULL, "", &part) &&
	    strcmp(part, "0/3") == 0, "a DP release of the whole dataset does not");
	ok(!merged_mixed(&p0, &dppart, NULL, "", &part) &&
	    strcmp(part, "0/3") == 0, "nor a DP release of another part");
	ok(!merged_mixed(&dppart, &p0, NULL, "", &part) &&
	    strcmp(part, "0/3") == 0, "in either order: the raw part wins");
	ok(merged_mixed(&pub0, &pub1, NULL, "x: in1", &part),
	    "parts without any raw mark mix as before");
	ok(!merged_mixed(&pub1, &p0, NULL, "", &part) &&
	    strcmp(part, "0/3") == 0, "unless a raw part decides");
	ok(!merged_mixed(&p0, &other, NULL, "", &part) &&
	    strcmp(part, "0/3") == 0, "nor an aggregate of another dataset");
	ok(merged_mixed(&p0, &mixed, NULL, "y: z", &part),
	    "a mixed input mixes, naming what mixed it first");
	ok(merged_mixed(&p0, &dpcov, &agg, "x: in2", &part),
	    "a whole-dataset input after a DP release mixes");
	ok(!merged_mixed(&oldagg, NULL, NULL, "", &part) &&
	    strcmp(part, "1/3") == 0,
	    "a part aggregated before its split keeps its keys (teacher-vote "
	    "refuses it by split.raw)");
	ok(merged_mixed(&oldagg, &p0, NULL, "x: in1", &part),
	    "and mixes with a true part");
	ts_meta_free(&p0);
	ts_meta_free(&p1);
	ts_meta_free(&alt);
	ts_meta_free(&whole);
	ts_meta_free(&agg);
	ts_meta_free(&dpcov);
	ts_meta_free(&dppart);
	ts_meta_free(&other);
	ts_meta_free(&mixed);
	ts_meta_free(&oldagg);
	ts_meta_free(&pub0);
	ts_meta_free(&pub1);
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
	merge_tests();
	return tap_done();
}
