/*
 * Unit tests of lib/format/csvlay: header detection, --label and
 * --columns by index, range and name, each refusal with its message, and
 * records parsed under each missing-value policy, against layouts and
 * rows written out by hand.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "csvlay.h"
#include "tap.h"

static char msg[CSVLAY_MSG];

static int
setup(struct csvlay *L, const char *columns, const char *label, int header,
    char **f, size_t nf, int *is_data)
{
	struct csvlay_params p = { columns, label, header, CSVLAY_MISS_ERROR };
	int rc;

	msg[0] = '\0';
	rc = csvlay_setup(L, &p, f, nf, is_data, msg);
	return rc;
}

static int
feats(const struct csvlay *L, const size_t *want, size_t d)
{
	if (L->d != d)
		return 0;
	for (size_t j = 0; j < d; j++)
		if (L->feat[j] != want[j])
			return 0;
	return 1;
}

/* The refusal of a layout: code and message. */
static void
refuses(const char *columns, const char *label, int header, char **f,
    size_t nf, const char *want)
{
	struct csvlay L;
	int is_data, rc = setup(&L, columns, label, header, f, nf, &is_data);

	ok(rc == PV_E_OPTION && strcmp(msg, want) == 0, "refuses: %s (got "
	    "%d '%s')", want, rc, msg);
	csvlay_free(&L);
}

int
main(void)
{
	char *hdr[] = { "age", "height", "kind", "w" };
	char *num[] = { "1", " 2.5", "cat", "4" };
	char *nolab[] = { "1", "x", "3" };
	struct csvlay L;
	uint64_t v;
	int is_data;

	ok(setup(&L, NULL, "2", CSVLAY_HDR_AUTO, hdr, 4, &is_data) == 0 &&
	    !is_data && L.names && strcmp(L.names[1], "height") == 0 &&
	    L.label == 2 && feats(&L, (size_t[]){ 0, 1, 3 }, 3),
	    "auto: names are a header; features all but the label");
	csvlay_free(&L);
	ok(setup(&L, NULL, "2", CSVLAY_HDR_AUTO, num, 4, &is_data) == 0 &&
	    is_data && L.names == NULL, "auto: numbers (and a string "
	    "label) are data");
	csvlay_free(&L);
	ok(setup(&L, NULL, NULL, CSVLAY_HDR_AUTO, nolab, 3, &is_data) == 0 &&
	    !is_data && L.label == -1 && L.d == 3,
	    "auto: a non-number field without a label makes a header");
	csvlay_free(&L);
	ok(setup(&L, NULL, NULL, CSVLAY_HDR_NO, nolab, 3, &is_data) == 0 &&
	    is_data, "--header no: data");
	csvlay_free(&L);
	ok(setup(&L, "3,0-1", "kind", CSVLAY_HDR_AUTO, hdr, 4, &is_data) ==
	    0 && L.label == 2 && feats(&L, (size_t[]){ 3, 0, 1 }, 3),
	    "--columns 3,0-1 in that order, label by name");
	csvlay_free(&L);
	ok(setup(&L, "w,age", "2", CSVLAY_HDR_AUTO, num, 4, &is_data) ==
	    PV_E_OPTION, "names without a header line are refused");
	csvlay_free(&L);
	ok(setup(&L, "w,age", "2", CSVLAY_HDR_AUTO, hdr, 4, &is_data) == 0 &&
	    feats(&L, (size_t[]){ 3, 0 }, 2), "--columns by names");
	csvlay_free(&L);
	{
		char *dash[] = { "a-b", "c", "y" };
		ok(setup(&L, "a-b", "y", CSVLAY_HDR_YES, dash, 3, &is_data) ==
		    0 && feats(&L, (size_t[]){ 0 }, 1),
		    "'a-b' is a name when its ends are not indices");
		csvlay_free(&L);
	}

	refuses(NULL, "4", CSVLAY_HDR_AUTO, hdr, 4, "invalid --label '4': "
	    "the input has 4 columns (numbered from 0)");
	refuses(NULL, "size", CSVLAY_HDR_AUTO, hdr, 4, "invalid --label "
	    "'size': no such column");
	refuses("0,2", "2", CSVLAY_HDR_AUTO, hdr, 4, "invalid --columns "
	    "'0,2': column 2 is the label");
	refuses("0,1,0", "2", CSVLAY_HDR_AUTO, hdr, 4, "invalid --columns "
	    "'0,1,0': column 0 is listed twice");
	refuses("1-9", "2", CSVLAY_HDR_AUTO, hdr, 4, "invalid --columns "
	    "'1-9': range outside columns 0-3");
	refuses("3-1", "2", CSVLAY_HDR_AUTO, hdr, 4, "invalid --columns "
	    "'3-1': range outside columns 0-3");
	{
		char *twice[] = { "a", "a", "y" };
		refuses("a", "y", CSVLAY_HDR_YES, twice, 3, "invalid --columns "
		    "'a': more than one column has this name");
	}
	{
		char *one[] = { "5", "6" };
		refuses(NULL, "0", CSVLAY_HDR_AUTO, one, 1, "no feature columns "
		    "(the input has 1 columns)");
	}

	ok(csvlay_check_columns("1,2-3,a", msg) == 0, "--columns syntax ok");
	ok(csvlay_check_columns("", msg) == PV_E_OPTION &&
	    strcmp(msg, "invalid --columns '': empty list") == 0,
	    "empty list");
	ok(csvlay_check_columns("1,,2", msg) == PV_E_OPTION &&
	    csvlay_check_columns("1,", msg) == PV_E_OPTION &&
	    csvlay_check_columns(",1", msg) == PV_E_OPTION, "empty items");
	ok(csvlay_index("--label", "16777215", &v, msg) == 0 &&
	    v == 16777215 && csvlay_index("--label", "16777216", &v, msg) ==
	    PV_E_OPTION, "indices below 2^24");
	ok(csvlay_is_index("012") && !csvlay_is_index("") &&
	    !csvlay_is_index("1a") && !csvlay_is_index("-1"), "is_index");

	/* Rows. */
	{
		struct csvlay_params p = { NULL, "2", CSVLAY_HDR_AUTO,
		    CSVLAY_MISS_ERROR };
		char *r1[] = { "1.5", " -2 ", "cat", "1e3" };
		char *r2[] = { "1", "", "cat", "x" };
		char *r3[] = { "1", "2", "", "3" };
		char *r4[] = { "1", "2", "cat" };
		char *r5[] = { "1", "inf", "cat", "3" };
		double row[3];

		setup(&L, NULL, "2", CSVLAY_HDR_AUTO, hdr, 4, &is_data);
		ok(csvlay_parse_row(&L, &p, r1, 4, row, msg) == 0 &&
		    row[0] == 1.5 && row[1] == -2 && row[2] == 1000,
		    "a row: 1.5 -2 1000");
		ok(csvlay_parse_row(&L, &p, r2, 4, row, msg) == PV_E_FORMAT &&
		    strcmp(msg, "column 1 ('height'): missing value") == 0,
		    "missing value named: %s", msg);
		ok(csvlay_parse_row(&L, &p, r3, 4, row, msg) == PV_E_FORMAT &&
		    strcmp(msg, "column 2 ('kind'): missing label") == 0,
		    "missing label named: %s", msg);
		ok(csvlay_parse_row(&L, &p, r4, 3, row, msg) == PV_E_FORMAT &&
		    strcmp(msg, "3 fields, expected 4") == 0, "field count");
		ok(csvlay_parse_row(&L, &p, r5, 4, row, msg) == PV_E_FORMAT &&
		    strcmp(msg, "column 1 ('height'): 'inf' is not finite") ==
		    0, "inf is not finite: %s", msg);
		p.missing = CSVLAY_MISS_ZERO;
		ok(csvlay_parse_row(&L, &p, r2, 4, row, msg) == 0 &&
		    row[0] == 1 && row[1] == 0 && row[2] == 0 &&
		    L.replaced == 2, "--missing zero: two values replaced");
		p.missing = CSVLAY_MISS_DROP;
		ok(csvlay_parse_row(&L, &p, r2, 4, row, msg) == 1 &&
		    csvlay_parse_row(&L, &p, r3, 4, row, msg) == 1 &&
		    L.dropped == 2, "--missing drop-row: bad value and missing "
		    "label drop rows");
		csvlay_free(&L);
	}
	{
		char buf[64], *lng = "0123456789012345678901234567890123456789"
		    "0123456789ab";
		ok(strcmp(csvlay_shown(lng, buf, sizeof buf),
		    "012345678901234567890123456789012345678901234567...") ==
		    0, "long values are cut at 48 bytes");
		ok(csvlay_shown("short", buf, sizeof buf)[0] == 's',
		    "short values as they are");
	}
	return tap_done();
}
