/* Unit tests of the streaming CSV reader (lib/format/csvin.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "csvin.h"
#include "tap.h"

/* Read every record of buf; join them as "line|f1|f2\n" lines into out.
 * @return the last csvin_next result (0 at a clean end, -1 on error). */
static int
slurp(const void *buf, size_t len, char *out, size_t cap, char *err,
    size_t errcap)
{
	FILE *fp = fmemopen((void *)buf, len, "rb");
	struct csvin *c = csvin_open(fp, "t.csv", ',');
	char **f;
	size_t nf, used = 0;
	int rc;

	out[0] = '\0';
	err[0] = '\0';
	while ((rc = csvin_next(c, &f, &nf)) == 1) {
		used += (size_t)snprintf(out + used, cap - used, "%llu",
		    (unsigned long long)csvin_line(c));
		for (size_t i = 0; i < nf; i++)
			used += (size_t)snprintf(out + used, cap - used, "|%s",
			    f[i]);
		used += (size_t)snprintf(out + used, cap - used, "\n");
	}
	if (rc < 0)
		snprintf(err, errcap, "%s", csvin_errmsg(c));
	csvin_close(c);
	fclose(fp);
	return rc;
}

static int
check(const char *in, const char *want, const char *name)
{
	char out[4096], err[512];
	int rc = slurp(in, strlen(in), out, sizeof out, err, sizeof err);

	ok(rc == 0 && strcmp(out, want) == 0, "%s", name);
	if (rc != 0 || strcmp(out, want) != 0)
		printf("#   got rc %d out [%s] err [%s]\n", rc, out, err);
	return rc;
}

static void
check_err(const char *in, size_t len, const char *want_out,
    const char *want_err, const char *name)
{
	char out[4096], err[512];
	int rc = slurp(in, len, out, sizeof out, err, sizeof err);

	ok(rc == -1 && strcmp(out, want_out) == 0 &&
	    strcmp(err, want_err) == 0, "%s", name);
	if (rc != -1 || strcmp(out, want_out) != 0 || strcmp(err, want_err))
		printf("#   got rc %d out [%s] err [%s]\n", rc, out, err);
}

static void
test_big(void)
{
	/* 100000 records cross many 64 KiB buffers; each must carry its own
	 * line number, and a quoted field with an LF spans a boundary. */
	size_t cap = 4u << 20, len = 0;
	char *buf = malloc(cap);
	FILE *fp;
	struct csvin *c;
	char **f;
	size_t nf;
	int good = 1, rc;
	uint64_t want_line = 1, recs = 0;

	for (int i = 0; i < 100000; i++) {
		if (i % 1000 == 999)
			len += (size_t)snprintf(buf + len, cap - len,
			    "%d,\"two\nlines\"\r\n", i);
		else
			len += (size_t)snprintf(buf + len, cap - len,
			    "%d,%d.5\n", i, i);
	}
	fp = fmemopen(buf, len, "rb");
	c = csvin_open(fp, "big", ',');
	while ((rc = csvin_next(c, &f, &nf)) == 1) {
		char want[32];
		snprintf(want, sizeof want, "%llu", (unsigned long long)recs);
		if (nf != 2 || strcmp(f[0], want) != 0 ||
		    csvin_line(c) != want_line) {
			good = 0;
			break;
		}
		want_line += recs % 1000 == 999 ? 2 : 1;
		recs++;
	}
	ok(good && rc == 0 && recs == 100000, "100000 records keep their "
	    "line numbers across buffers");
	csvin_close(c);
	fclose(fp);

	/* The same text zstd-compressed, in two frames. */
	size_t half = len / 2, zcap = ZSTD_compressBound(len) + 64;
	char *z = malloc(zcap);
	size_t z1 = ZSTD_compress(z, zcap, buf, half, 3);
	size_t z2 = ZSTD_compress(z + z1, zcap - z1, buf + half, len - half, 3);
	fp = fmemopen(z, z1 + z2, "rb");
	c = csvin_open(fp, "big.zst", ',');
	recs = 0;
	while ((rc = csvin_next(c, &f, &nf)) == 1)
		recs++;
	ok(rc == 0 && recs == 100000, "zstd input in two frames is read "
	    "whole (%llu records)", (unsigned long long)recs);
	csvin_close(c);
	fclose(fp);

	/* Truncated compressed input is an error, not a short file. */
	fp = fmemopen(z, z1 + z2 - 10, "rb");
	c = csvin_open(fp, "cut.zst", ',');
	while ((rc = csvin_next(c, &f, &nf)) == 1)
		;
	ok(rc == -1 && strstr(csvin_errmsg(c), "cut.zst:") == csvin_errmsg(c) &&
	    strstr(csvin_errmsg(c), "zstd") != NULL,
	    "truncated zstd input is an error: %s", csvin_errmsg(c));
	csvin_close(c);
	fclose(fp);
	free(z);
	free(buf);
}

static void
test_zstd_small(void)
{
	const char *text = "a,b\n\"x,y\",2\n";
	char z[256], out[256], err[256];
	size_t zl = ZSTD_compress(z, sizeof z, text, strlen(text), 1);
	int rc = slurp(z, zl, out, sizeof out, err, sizeof err);

	ok(rc == 0 && strcmp(out, "1|a|b\n2|x,y|2\n") == 0,
	    "zstd input is detected by its magic and decompressed");
	/* Garbage after the magic. */
	memcpy(z + 4, "garbagegarbage", 14);
	rc = slurp(z, 18, out, sizeof out, err, sizeof err);
	ok(rc == -1 && strncmp(err, "t.csv:1: zstd: ", 15) == 0,
	    "corrupt zstd input is an error: %s", err);
}

static void
test_double(void)
{
	double v = 0;

	ok(csvin_double("1.5", &v) == 0 && v == 1.5, "1.5 parses");
	ok(csvin_double("  -2e3\t", &v) == 0 && v == -2000, "blanks around");
	ok(csvin_double("nan", &v) == 0 && isnan(v), "nan parses");
	ok(csvin_double("-inf", &v) == 0 && isinf(v) && v < 0, "-inf parses");
	ok(csvin_double("1e-400", &v) == 0 && v == 0, "underflow rounds");
	ok(csvin_double("1e400", &v) == -1, "overflow is not a number");
	ok(csvin_double("", &v) == -1, "empty is not a number");
	ok(csvin_double("   ", &v) == -1, "blank is not a number");
	ok(csvin_double("abc", &v) == -1, "abc is not a number");
	ok(csvin_double("1.5x", &v) == -1, "trailing junk is not a number");
	ok(csvin_double("1 2", &v) == -1, "two numbers are not a number");
	ok(csvin_double("0x10", &v) == -1, "hex is not a number");
	ok(csvin_double("\n5", &v) == -1, "a newline is not a blank");
	ok(csvin_double("1,5", &v) == -1, "decimal comma is not a number");
}

int
main(void)
{
	check("a,b,c\n1,2,3\n", "1|a|b|c\n2|1|2|3\n", "plain records");
	check("a,b\r\n1,2\r\n", "1|a|b\n2|1|2\n", "CRLF line ends");
	check("a,b\n1,2", "1|a|b\n2|1|2\n", "no final line end");
	check("a,b\n\n\r\n1,2\n\n", "1|a|b\n4|1|2\n",
	    "empty lines are skipped and counted");
	check("\"x,y\",\"say \"\"hi\"\"\"\n", "1|x,y|say \"hi\"\n",
	    "quoted commas and doubled quotes");
	check("h\n\"one\ntwo\",3\n4,5\n", "1|h\n2|one\ntwo|3\n4|4|5\n",
	    "a field with a line end: the record starts where it begins");
	check("1,\"a\r\nb\"\r\n2,x\r\n", "1|1|a\r\nb\n3|2|x\n",
	    "CRLF inside a quoted field is kept");
	check("a,,\n,,\n", "1|a||\n2|||\n", "empty fields");
	check("\xef\xbb\xbf" "a,b\n", "1|a|b\n", "a UTF-8 BOM is dropped");
	check(" a , b \n", "1|a|b\n", "blanks around fields are trimmed");
	check("", "", "empty input has no records");

	check_err("a,b\n1,x\"y\n3,4\n", 13, "1|a|b\n",
	    "t.csv:2: misplaced quote (quote a whole field, and double quotes "
	    "inside it)", "a quote inside an unquoted field is an error");
	check_err("a\n\"ab\"c,d\n", 10, "1|a\n",
	    "t.csv:2: misplaced quote (quote a whole field, and double quotes "
	    "inside it)", "text after a closing quote is an error");
	check_err("a\nb\n\"open\nstill\n", 17, "1|a\n2|b\n",
	    "t.csv:3: quoted field not closed at the end of the input",
	    "an unclosed quote names the line where it opened");
	check_err("a,b\n1,x\0y\n", 10, "1|a|b\n", "t.csv:2: NUL byte in field 1",
	    "a NUL byte is an error");

	/* Tab as the delimiter: tabs separate, they are not trimmed. */
	{
		FILE *fp = fmemopen((void *)"a\t\tb\n", 5, "rb");
		struct csvin *c = csvin_open(fp, "t.tsv", '\t');
		char **f;
		size_t nf;
		int rc = csvin_next(c, &f, &nf);
		ok(rc == 1 && nf == 3 && strcmp(f[1], "") == 0 &&
		    strcmp(f[2], "b") == 0, "tab delimiter keeps empty fields");
		csvin_close(c);
		fclose(fp);
	}
	test_zstd_small();
	test_big();
	test_double();
	csvin_close(NULL);
	return tap_done();
}
