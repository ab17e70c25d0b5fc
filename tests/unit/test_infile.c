/* Unit tests of the hashing, gunzipping input wrapper (lib/format/infile.c). */
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "infile.h"
#include "tap.h"
#include "tstream.h"

#define BIG 200000		/* more than the wrapper's 64 KiB buffer */

/* A source FILE holding the n bytes at p, positioned at the start. */
static FILE *
source(const void *p, size_t n)
{
	FILE *fp = tmpfile();

	if (fp == NULL || fwrite(p, 1, n, fp) != n || fseek(fp, 0, SEEK_SET))
		abort();
	return fp;
}

/* gzip (one member) of in[0..n) into out; @return its length. */
static size_t
gzip(const void *in, size_t n, unsigned char *out, size_t cap)
{
	z_stream z;
	size_t len;

	memset(&z, 0, sizeof z);
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY)
	    != Z_OK)
		abort();
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END)
		abort();
	len = cap - z.avail_out;
	deflateEnd(&z);
	return len;
}

/* Everything infile_fp gives (at most cap bytes); *err its ferror. */
static size_t
slurp(struct infile *f, unsigned char *out, size_t cap, int *err)
{
	FILE *fp = infile_fp(f);
	size_t n = 0, k;

	/* Odd read sizes, so that reads straddle the wrapper's buffer. */
	while (n < cap && (k = fread(out + n, 1, cap - n < 1000 ? cap - n :
	    1000, fp)) > 0)
		n += k;
	*err = ferror(fp) != 0;
	return n;
}

/* A text of many short distinct lines: compressible, not trivial. */
static void
fill_text(unsigned char *p, size_t n)
{
	size_t k = 0;

	for (unsigned i = 0; k < n; i++) {
		char line[32];
		int len = snprintf(line, sizeof line, "%u,%u\n", i, i * 7919u %
		    1000u);
		for (int j = 0; j < len && k < n; j++)
			p[k++] = (unsigned char)line[j];
	}
}

int
main(void)
{
	static unsigned char plain[BIG], gz[2 * BIG], got[4 * BIG],
	    two[4 * BIG];
	size_t gzlen, n, twolen;
	struct infile *f;
	FILE *src;
	int err;

	fill_text(plain, sizeof plain);
	gzlen = gzip(plain, sizeof plain, gz, sizeof gz);
	ok(gzlen > 2 && gz[0] == 0x1f && gz[1] == 0x8b && gzlen < BIG,
	    "the fixture compresses to a gzip member (%zu bytes)", gzlen);

	/* Plain bytes pass through, hashed, with or without the flag. */
	for (unsigned flags = 0; flags <= INFILE_GZIP; flags++) {
		src = source(plain, sizeof plain);
		f = infile_open(src, "t.csv", flags);
		n = slurp(f, got, sizeof got, &err);
		ok(n == sizeof plain && memcmp(got, plain, n) == 0 && !err,
		    "flags %u: plain input passes through unchanged", flags);
		ok(infile_digest(f) == ts_xxh64(plain, sizeof plain, 0),
		    "flags %u: the digest is XXH64 of the bytes", flags);
		ok(infile_error(f) == 0 && strcmp(infile_errmsg(f), "") == 0,
		    "flags %u: no error after a clean read", flags);
		ok(strcmp(infile_label(f), "t.csv") == 0 &&
		    infile_source(f) == src, "flags %u: label and source are "
		    "kept", flags);
		infile_close(f);
		ok(fgetc(src) == EOF && fseek(src, 0, SEEK_SET) == 0 &&
		    fgetc(src) == plain[0], "flags %u: infile_close leaves "
		    "the source open", flags);
		fclose(src);
	}

	/* gzip is decompressed with the flag; the digest is of the file. */
	src = source(gz, gzlen);
	f = infile_open(src, "t.csv.gz", INFILE_GZIP);
	n = slurp(f, got, sizeof got, &err);
	ok(n == sizeof plain && memcmp(got, plain, n) == 0 && !err,
	    "gzip input is decompressed transparently");
	ok(infile_digest(f) == ts_xxh64(gz, gzlen, 0) &&
	    infile_digest(f) != ts_xxh64(plain, sizeof plain, 0),
	    "the digest of gzip input is that of the compressed bytes");
	ok(infile_error(f) == 0, "no error after a gzip input");
	infile_close(f);
	fclose(src);

	/* Without the flag, gzip bytes are data like any other. */
	src = source(gz, gzlen);
	f = infile_open(src, "t.gz", 0);
	n = slurp(f, got, sizeof got, &err);
	ok(n == gzlen && memcmp(got, gz, n) == 0 && !err,
	    "without INFILE_GZIP, gzip bytes pass through");
	ok(infile_digest(f) == ts_xxh64(gz, gzlen, 0), "and are hashed");
	infile_close(f);
	fclose(src);

	/* Two members back to back read as their concatenation. */
	twolen = gzip("hello, ", 7, two, sizeof two);
	twolen += gzip("world\n", 6, two + twolen, sizeof two - twolen);
	src = source(two, twolen);
	f = infile_open(src, "two.gz", INFILE_GZIP);
	n = slurp(f, got, sizeof got, &err);
	ok(n == 13 && memcmp(got, "hello, world\n", 13) == 0 && !err,
	    "gzip members are concatenated");
	ok(infile_digest(f) == ts_xxh64(two, twolen, 0),
	    "the digest covers both members");
	infile_close(f);
	fclose(src);

	/* A gzip file cut short is an error, not a short file. */
	src = source(gz, gzlen - 10);
	f = infile_open(src, "cut.gz", INFILE_GZIP);
	n = slurp(f, got, sizeof got, &err);
	ok(err && n < sizeof plain, "a truncated gzip input fails the read");
	ok(infile_error(f) == TS_E_TRUNCATED, "with TS_E_TRUNCATED (%d)",
	    infile_error(f));
	ok(strcmp(infile_errmsg(f), "cut.gz: gzip: truncated compressed "
	    "data") == 0, "naming the input: '%s'", infile_errmsg(f));
	clearerr(infile_fp(f));
	ok(fgetc(infile_fp(f)) == EOF && ferror(infile_fp(f)) &&
	    infile_error(f) == TS_E_TRUNCATED, "the error sticks");
	infile_close(f);
	fclose(src);

	/* Bytes after a member that start no other member are refused. */
	memcpy(two, gz, gzlen);
	memcpy(two + gzlen, "junk", 4);
	src = source(two, gzlen + 4);
	f = infile_open(src, "junk.gz", INFILE_GZIP);
	n = slurp(f, got, sizeof got, &err);
	ok(err && infile_error(f) == TS_E_FORMAT &&
	    strstr(infile_errmsg(f), "trailing bytes") != NULL,
	    "trailing bytes after gzip data are an error: '%s'",
	    infile_errmsg(f));
	infile_close(f);
	fclose(src);

	/* Damage inside the compressed data (or its CRC) is detected. */
	memcpy(two, gz, gzlen);
	for (size_t i = gzlen / 2; i < gzlen / 2 + 8; i++)
		two[i] ^= 0x5a;
	src = source(two, gzlen);
	f = infile_open(src, "bad.gz", INFILE_GZIP);
	n = slurp(f, got, sizeof got, &err);
	ok(err && infile_error(f) == TS_E_FORMAT &&
	    strncmp(infile_errmsg(f), "bad.gz: gzip: ", 14) == 0,
	    "corrupt gzip data is an error: '%s'", infile_errmsg(f));
	infile_close(f);
	fclose(src);

	/* Empty input: no bytes, no error, the digest of nothing. */
	for (unsigned flags = 0; flags <= INFILE_GZIP; flags++) {
		src = source("", 0);
		f = infile_open(src, "empty", flags);
		n = slurp(f, got, sizeof got, &err);
		ok(n == 0 && !err && feof(infile_fp(f)) &&
		    infile_error(f) == 0, "flags %u: empty input reads as "
		    "empty", flags);
		/* XXH64 of no bytes, seed 0, from the reference suite. */
		ok(infile_digest(f) == UINT64_C(0xef46db3751d8e999) &&
		    ts_xxh64("", 0, 0) == UINT64_C(0xef46db3751d8e999),
		    "flags %u: its digest is XXH64 of nothing", flags);
		infile_close(f);
		fclose(src);
	}

	/* A lone 0x1f is too short to be gzip: it is data. */
	src = source("\x1f", 1);
	f = infile_open(src, "one", INFILE_GZIP);
	n = slurp(f, got, sizeof got, &err);
	ok(n == 1 && got[0] == 0x1f && !err, "one byte 1f passes through");
	infile_close(f);
	fclose(src);

	/* A source that cannot be read: TS_E_IO with the errno text. */
	if ((src = fopen("/dev/null", "w")) == NULL)
		abort();
	f = infile_open(src, "wo", 0);
	n = slurp(f, got, sizeof got, &err);
	ok(n == 0 && err && infile_error(f) == TS_E_IO &&
	    strncmp(infile_errmsg(f), "wo: read error: ", 16) == 0,
	    "a read error is TS_E_IO: '%s'", infile_errmsg(f));
	infile_close(f);
	fclose(src);

	ok(infile_open(stdin, "x", 2u) == NULL, "unknown flags are refused");
	ok(infile_open(NULL, "x", 0) == NULL, "a NULL source is refused");
	infile_close(NULL);
	ok(1, "infile_close accepts NULL");
	return tap_done();
}
