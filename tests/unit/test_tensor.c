/* Unit tests of lib/format/tensor.c: metadata map, names, keys, UTF-8, sizes. */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "tensor.h"

int
main(void)
{
	struct ts_meta m = { 0 }, d = { 0 };
	char k[32], v[32];
	int bad = 0;
	const char *ck = NULL;

	/* Large maps: every key found with its value, after deletions too. */
	for (int i = 0; i < 100000; i++) {
		snprintf(k, sizeof k, "k.%d", i);
		snprintf(v, sizeof v, "%d", i * 7);
		if (ts_meta_set(&m, k, v) != 0)
			bad++;
	}
	for (int i = 0; i < 100000; i += 3) {
		snprintf(k, sizeof k, "k.%d", i);
		snprintf(v, sizeof v, "%d", i * 7);
		const char *g = ts_meta_get(&m, k);
		if (g == NULL || strcmp(g, v) != 0)
			bad++;
	}
	ok(bad == 0 && m.n == 100000, "100000 keys set and found");
	ts_meta_set(&m, "k.5", "replaced");
	ok(m.n == 100000 && strcmp(ts_meta_get(&m, "k.5"), "replaced") == 0,
	    "set replaces an existing value");
	ok(ts_meta_del(&m, "k.10") == 0 && ts_meta_get(&m, "k.10") == NULL &&
	    strcmp(ts_meta_get(&m, "k.11"), "77") == 0 && m.n == 99999,
	    "delete keeps the others reachable");
	ok(ts_meta_get(&m, "absent") == NULL, "absent key is NULL");
	ts_meta_free(&m);

	ts_meta_set(&m, "dp.raw.a", "row-local");
	ts_meta_set(&m, "x", "1");
	ts_meta_set(&d, "dp.raw.a", "aggregate");
	ok(ts_meta_merge(&d, &m, "dp.", &ck) == -2 && strcmp(ck, "dp.raw.a") == 0,
	    "merge reports a conflicting key");
	ok(ts_meta_merge(&d, &m, "x", &ck) == 0 && strcmp(ts_meta_get(&d, "x"), "1") == 0,
	    "merge by prefix");
	ts_meta_free(&m);
	ts_meta_free(&d);

	ok(ts_check_key("dp.release.ab12.rdp") == NULL, "dotted key ok");
	ok(ts_check_key("Dp.x") && ts_check_key("a..b") && ts_check_key(".a") &&
	    ts_check_key("a.") && ts_check_key("") && ts_check_key("a-b"),
	    "bad keys refused");
	ok(ts_check_name("model/fc1/W") == NULL && ts_check_name("cov/0") == NULL,
	    "tensor names with slashes");
	ok(ts_check_name("/x") && ts_check_name("") && ts_check_name("a b"),
	    "bad names refused");
	ok(ts_utf8_valid("h\xc3\xa9llo", 6) && !ts_utf8_valid("\xc0\xaf", 2) &&
	    !ts_utf8_valid("\xed\xa0\x80", 3) && !ts_utf8_valid("a\0b", 3) &&
	    !ts_utf8_valid("\xf4\x90\x80\x80", 4) && !ts_utf8_valid("\xe2\x82", 2),
	    "UTF-8: valid, overlong, surrogate, NUL, > U+10FFFF, truncated");

	struct tensor t;
	uint64_t dims[3] = { UINT64_C(1) << 32, UINT64_C(1) << 32, 8 }, b;
	tensor_init(&t, "X", TS_F64, 3, dims);
	ok(tensor_bytes(&t, &b) != 0, "dims product overflow detected");
	ok(tensor_row_bytes(&t, &b) == 0 && b == (UINT64_C(1) << 35) * 8,
	    "row bytes of a wide tensor");
	return tap_done();
}
