/*
 * Unit tests of lib/labels: counting label.names, reading the label.*
 * keys, and the rule that decides K (label_classes) in every case: public
 * set, set learnt from the data, undeclared names, nothing declared, with
 * and without privacy and --classes.
 */
#include <string.h>

#include "labels.h"
#include "tap.h"

/* Read a label set from keys (NULL: absent); return label_get's code. */
static int
mk(struct ts_meta *m, struct label_set *ls, const char *src,
    const char *classes, const char *names)
{
	char err[256];

	ts_meta_free(m);
	if (src)
		ts_meta_set(m, "label.source", src);
	if (classes)
		ts_meta_set(m, "label.classes", classes);
	if (names)
		ts_meta_set(m, "label.names", names);
	return label_get(m, ls, err, sizeof err);
}

int
main(void)
{
	struct ts_meta m = { 0 };
	struct label_set ls;
	size_t K;
	int names_ok;
	char err[256];

	ok(label_names_count("[\"a\",\"b\",\"c\"]") == 3, "three names");
	ok(label_names_count(" [ \"a\\\"\" , \"\\\\\" ] ") == 2,
	    "escapes and spaces");
	ok(label_names_count("[\"a,b\"]") == 1, "a comma inside a name");
	ok(label_names_count("[]") == 0, "empty array is not a label set");
	ok(label_names_count("[\"a\",]") == 0, "trailing comma");
	ok(label_names_count("[\"a\"] x") == 0, "trailing garbage");
	ok(label_names_count("[\"a\"") == 0, "unterminated array");
	ok(label_names_count("[\"a]") == 0, "unterminated string");
	ok(label_names_count("[1,2]") == 0, "numbers are not names");
	ok(label_names_count("[\"a\\") == 0, "escape at the end");

	ok(mk(&m, &ls, NULL, NULL, NULL) == LABEL_OK &&
	    ls.source == LABEL_UNDECLARED && ls.names == NULL, "nothing");
	ok(mk(&m, &ls, "public", "3", "[\"x\",\"y\",\"z\"]") == LABEL_OK &&
	    ls.source == LABEL_PUBLIC && ls.classes == 3 && ls.nnames == 3,
	    "a public map");
	ok(mk(&m, &ls, "data", NULL, "[\"x\"]") == LABEL_OK &&
	    ls.source == LABEL_DATA && ls.nnames == 1, "a learnt set");
	ok(mk(&m, &ls, "maybe", NULL, NULL) == LABEL_E_BAD,
	    "unknown label.source");
	ok(mk(&m, &ls, "public", NULL, NULL) == LABEL_E_BAD,
	    "public without label.classes");
	ok(mk(&m, &ls, "public", "0", NULL) == LABEL_E_BAD, "0 classes");
	ok(mk(&m, &ls, "public", "-2", NULL) == LABEL_E_BAD,
	    "negative classes");
	ok(mk(&m, &ls, "public", "2x", NULL) == LABEL_E_BAD,
	    "label.classes not a number");
	ok(mk(&m, &ls, "public", "99999999999", NULL) == LABEL_E_BAD,
	    "label.classes above the limit");
	ok(mk(&m, &ls, "public", "2", "[\"x\",\"y\",\"z\"]") == LABEL_E_BAD,
	    "names and classes disagree");
	ok(mk(&m, &ls, "data", NULL, "[\"x\",") == LABEL_E_BAD,
	    "names not a JSON array");

	/* A public set: K from it, under privacy or not. */
	mk(&m, &ls, "public", "3", "[\"x\",\"y\",\"z\"]");
	ok(label_classes(&ls, 1, 0, &K, &names_ok, err, sizeof err) ==
	    LABEL_OK && K == 3 && names_ok, "public set under DP: K 3, names");
	ok(label_classes(&ls, 1, 3, &K, &names_ok, err, sizeof err) ==
	    LABEL_OK && K == 3 && names_ok, "--classes agreeing");
	ok(label_classes(&ls, 1, 4, &K, &names_ok, err, sizeof err) ==
	    LABEL_E_USAGE && strstr(err, "public label set of 3") != NULL,
	    "--classes disagreeing: %s", err);
	mk(&m, &ls, "public", "10", NULL);
	ok(label_classes(&ls, 1, 0, &K, &names_ok, err, sizeof err) ==
	    LABEL_OK && K == 10 && !names_ok, "featurize --classes 10");

	/* A learnt set: refused under DP unless --classes. */
	mk(&m, &ls, "data", NULL, "[\"x\",\"y\"]");
	ok(label_classes(&ls, 1, 0, &K, &names_ok, err, sizeof err) ==
	    LABEL_E_PRIVATE && strstr(err, "--label-map") != NULL &&
	    strstr(err, "label.source=data") != NULL, "learnt, DP: %s", err);
	ok(label_classes(&ls, 1, 2, &K, &names_ok, err, sizeof err) ==
	    LABEL_OK && K == 2 && !names_ok,
	    "learnt, DP, --classes 2: names not published");
	ok(label_classes(&ls, 0, 0, &K, &names_ok, err, sizeof err) ==
	    LABEL_OK && K == 2 && names_ok, "learnt, no DP: K from names");
	ok(label_classes(&ls, 0, 2, &K, &names_ok, err, sizeof err) ==
	    LABEL_OK && K == 2 && names_ok, "learnt, no DP, --classes 2");
	ok(label_classes(&ls, 0, 5, &K, &names_ok, err, sizeof err) ==
	    LABEL_OK && K == 5 && !names_ok, "learnt, no DP, --classes 5");
	mk(&m, &ls, "data", NULL, NULL);
	ok(label_classes(&ls, 1, 0, &K, &names_ok, err, sizeof err) ==
	    LABEL_E_PRIVATE, "learnt integer labels, DP");
	ok(label_classes(&ls, 0, 0, &K, &names_ok, err, sizeof err) ==
	    LABEL_OK && K == 0, "learnt integer labels, no DP: caller's K");

	/* Names with no label.source (older featurize): learnt. */
	mk(&m, &ls, NULL, NULL, "[\"x\",\"y\"]");
	ok(label_classes(&ls, 1, 0, &K, &names_ok, err, sizeof err) ==
	    LABEL_E_PRIVATE && strstr(err, "label.source=absent") != NULL,
	    "undeclared names, DP: %s", err);
	ok(label_classes(&ls, 1, 2, &K, &names_ok, err, sizeof err) ==
	    LABEL_OK && K == 2 && !names_ok, "undeclared names, --classes");

	/* Nothing declared: --classes is required under DP. */
	mk(&m, &ls, NULL, NULL, NULL);
	ok(label_classes(&ls, 1, 0, &K, &names_ok, err, sizeof err) ==
	    LABEL_E_USAGE && strncmp(err, "--classes is required", 21) == 0,
	    "nothing declared, DP: %s", err);
	ok(label_classes(&ls, 1, 7, &K, &names_ok, err, sizeof err) ==
	    LABEL_OK && K == 7 && !names_ok, "nothing declared, --classes 7");

	/* label_put writes what label_get reads. */
	ts_meta_free(&m);
	ok(label_put(&m, LABEL_PUBLIC, 2, "[\"a\",\"b\"]") == 0 &&
	    label_get(&m, &ls, err, sizeof err) == LABEL_OK &&
	    ls.source == LABEL_PUBLIC && ls.classes == 2 && ls.nnames == 2,
	    "label_put then label_get: public");
	ts_meta_free(&m);
	ok(label_put(&m, LABEL_DATA, 0, NULL) == 0 &&
	    strcmp(ts_meta_get(&m, "label.source"), "data") == 0 &&
	    ts_meta_get(&m, "label.classes") == NULL,
	    "label_put: data, no classes");
	ts_meta_free(&m);
	return tap_done();
}
