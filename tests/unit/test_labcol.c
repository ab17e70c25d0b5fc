/*
 * Unit tests of lib/format/labcol: learnt labels numbered by first
 * appearance (and kept as integers when all are), their label.names; a
 * declared map and --classes K: classes by the map's lines, a label
 * outside the set an error or a dropped row, never a new class; the
 * map's checks; and json_str_array's escapes, against strings written
 * out by hand.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labcol.h"
#include "labels.h"
#include "tap.h"

static int
put(struct labcol *l, const char *s)
{
	return labcol_put(l, s, strlen(s));
}

static int
yis(const struct labcol *l, const int32_t *want, size_t n)
{
	if (l->n != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (l->y[i] != want[i])
			return 0;
	return 1;
}

static const char *
get(const struct ts_meta *m, const char *k)
{
	const char *v = ts_meta_get(m, k);

	return v ? v : "(absent)";
}

int
main(void)
{
	struct labcol l;
	struct ts_meta m = { 0 };
	char *j;
	size_t len;

	/* Learnt strings: 0.. in order of first appearance. */
	labcol_init(&l, 0, 0);
	put(&l, "dog");
	put(&l, "cat");
	put(&l, "dog");
	put(&l, "emu");
	ok(yis(&l, (int32_t[]){ 0, 1, 0, 2 }, 4), "strings: dog cat dog emu "
	    "-> 0 1 0 2");
	ok(labcol_finish(&l, &m) == 0, "finish");
	ok(strcmp(get(&m, "label.names"), "[\"dog\",\"cat\",\"emu\"]") == 0,
	    "label.names in order: %s", get(&m, "label.names"));
	ok(strcmp(get(&m, "label.source"), "data") == 0,
	    "a learnt set says label.source=data");
	ts_meta_free(&m);
	labcol_free(&l);

	/* Learnt integers stay as they are. */
	labcol_init(&l, 0, 0);
	put(&l, "7");
	put(&l, "-3");
	put(&l, "7");
	ok(labcol_finish(&l, &m) == 0 && yis(&l, (int32_t[]){ 7, -3, 7 },
	    3), "integers 7 -3 7 are kept as they are");
	ok(ts_meta_get(&m, "label.names") == NULL,
	    "no label.names for integer labels");
	ts_meta_free(&m);
	labcol_free(&l);

	/* IDX labels, no declared set: as they are. */
	labcol_init(&l, 0, 0);
	ok(labcol_put_int(&l, 9) == 1 && labcol_put_int(&l, 0) == 1 &&
	    labcol_finish(&l, &m) == 0 && yis(&l, (int32_t[]){ 9, 0 }, 2),
	    "integer labels of IDX kept as they are");
	ts_meta_free(&m);
	labcol_free(&l);

	/* One non-integer makes them all names. */
	labcol_init(&l, 0, 0);
	put(&l, "1");
	put(&l, "x");
	put(&l, "99999999999");		/* beyond int32 */
	ok(labcol_finish(&l, &m) == 0 && yis(&l, (int32_t[]){ 0, 1, 2 }, 3) &&
	    strcmp(get(&m, "label.names"), "[\"1\",\"x\",\"99999999999\"]") ==
	    0, "mixed labels: indices, with names");
	ts_meta_free(&m);
	labcol_free(&l);

	/* --classes 3. */
	labcol_init(&l, 3, 0);
	ok(put(&l, "2") == 1 && put(&l, "0") == 1 &&
	    yis(&l, (int32_t[]){ 2, 0 }, 2), "--classes 3: 2 and 0 kept");
	ok(put(&l, "3") == PV_E_RANGE && put(&l, "-1") == PV_E_RANGE &&
	    put(&l, "1x") == PV_E_RANGE && put(&l, "") == PV_E_RANGE &&
	    l.n == 2, "--classes 3: 3, -1, 1x and '' are refused, no class "
	    "added");
	ok(labcol_put_int(&l, 1) == 1 && labcol_put_int(&l, 5) == PV_E_RANGE,
	    "put_int: 1 kept, 5 refused");
	ok(labcol_finish(&l, &m) == 0 &&
	    strcmp(get(&m, "label.source"), "public") == 0 &&
	    strcmp(get(&m, "label.classes"), "3") == 0,
	    "--classes: public, 3 classes");
	ts_meta_free(&m);
	labcol_free(&l);

	/* A label map, with drop_unknown. */
	labcol_init(&l, 0, 1);
	ok(labcol_map_add(&l, "neg", 3) == 0 && labcol_map_add(&l, "pos", 3) ==
	    0 && labcol_map_add(&l, "say \"hi\"", 8) == 0, "map of 3 lines");
	ok(labcol_map_add(&l, "pos", 3) == PV_E_FORMAT, "a label twice is "
	    "refused");
	ok(labcol_map_end(&l) == 0 && strcmp(l.map_names,
	    "[\"neg\",\"pos\",\"say \\\"hi\\\"\"]") == 0, "map JSON: %s",
	    l.map_names);
	ok(put(&l, "pos") == 1 && put(&l, "other") == 0 && put(&l, "neg") ==
	    1 && yis(&l, (int32_t[]){ 1, 0 }, 2) && l.unknown == 1,
	    "map: pos -> 1, neg -> 0, other dropped and counted");
	ok(labcol_finish(&l, &m) == 0 &&
	    strcmp(get(&m, "label.classes"), "3") == 0 &&
	    strcmp(get(&m, "label.names"), l.map_names) == 0,
	    "map: public, its names");
	ts_meta_free(&m);
	labcol_free(&l);

	/* The map's size limits. */
	labcol_init(&l, 0, 0);
	{
		char *big = malloc(TS_MAX_VALUE);
		memset(big, 'a', TS_MAX_VALUE - 1);
		big[TS_MAX_VALUE - 1] = '\0';
		ok(labcol_map_add(&l, big, TS_MAX_VALUE - 1) == PV_E_LIMIT,
		    "a map whose JSON passes 1 MiB is refused");
		free(big);
	}
	labcol_free(&l);

	j = json_str_array((char *[]){ "a\\b", "\x01\n", "\xc3\xa9" }, NULL,
	    3, SIZE_MAX, &len);
	ok(strcmp(j, "[\"a\\\\b\",\"\\u0001\\u000a\",\"\xc3\xa9\"]") == 0 &&
	    len == strlen(j), "JSON escapes: backslash, control characters; "
	    "UTF-8 as is: %s", j);
	free(j);
	j = json_str_array((char *[]){ "x", "y", "z" }, (size_t[]){ 2, 0 }, 2,
	    SIZE_MAX, &len);
	ok(strcmp(j, "[\"z\",\"x\"]") == 0, "by index");
	free(j);
	j = json_str_array((char *[]){ "aaaa", "bbbb", "cccc" }, NULL, 3, 3,
	    &len);
	ok(strcmp(j, "[\"aaaa\"]") == 0, "stops growing past stop bytes");
	free(j);
	j = json_str_array(NULL, NULL, 0, 10, &len);
	ok(strcmp(j, "[]") == 0 && len == 2, "empty array");
	free(j);
	return tap_done();
}
