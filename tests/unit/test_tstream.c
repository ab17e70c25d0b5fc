/* Unit tests of the tensor stream reader and writer and of XXH64. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "tap.h"
#include "tstream.h"

static char *
write_stream(size_t *len, int streamed, int level)
{
	char *buf = NULL;
	FILE *fp = open_memstream(&buf, len);
	struct ts_writer *w = ts_writer_open(fp, "mem", level, 0);
	struct tensor t;
	uint64_t dims[2] = { streamed ? TS_UNKNOWN_ROWS : 1000, 7 };
	double row[7];
	struct ts_meta m = { 0 };
	int32_t y[1000];

	tensor_init(&t, "X", TS_F64, 2, dims);
	ts_meta_set(&t.meta, "units", "pixels");
	ts_write_begin(w, &t);
	for (int i = 0; i < 1000; i++) {
		for (int j = 0; j < 7; j++)
			row[j] = i * 7 + j + 0.5;
		ts_write_rows(w, row, 1);
		y[i] = i % 3;
	}
	ts_write_end(w);
	tensor_free(&t);
	dims[0] = 1000;
	tensor_init(&t, "y", TS_I32, 1, dims);
	t.data = y;
	ts_write_tensor(w, &t);
	t.data = NULL;
	tensor_free(&t);
	ts_meta_set(&m, "dp.raw.demo", "row-local");
	ts_write_meta(w, &m);
	ts_meta_free(&m);
	int rc = ts_writer_finish(w);
	ts_writer_close(w);
	fclose(fp);
	return rc == 0 ? buf : NULL;
}

static int
read_mode(const char *buf, size_t len, char *err, size_t errlen, int async,
    uint64_t *digest)
{
	FILE *fp = fmemopen((void *)buf, len, "rb");
	struct ts_reader *r = ts_reader_open(fp, "mem");
	struct tensor *v;
	size_t n;
	int rc;

	if (async && ts_reader_set_async(r, 1) != 0)
		return 98;
	rc = ts_read_all(r, &v, &n);
	*digest = ts_reader_digest(r);

	if (rc == 0) {
		int good = n == 2 && v[0].dims[0] == 1000 && v[0].dims[1] == 7 &&
		    ((double *)v[0].data)[6999] == 6999.5 &&
		    ((int32_t *)v[1].data)[999] == 0 &&
		    strcmp(ts_meta_get(&v[0].meta, "units"), "pixels") == 0 &&
		    ts_meta_get(ts_reader_meta(r), "dp.raw.demo") != NULL;
		for (size_t i = 0; i < n; i++)
			tensor_free(&v[i]);
		free(v);
		if (!good)
			rc = 99;
	} else {
		snprintf(err, errlen, "%s", ts_reader_errmsg(r));
	}
	ts_reader_close(r);
	fclose(fp);
	return rc;
}

/* Reads whose result, message or digest differ between the synchronous
 * reader and the read-ahead reader. */
static size_t async_differ;

/* Read buf with the synchronous reader and with the read-ahead reader:
 * both must agree on everything.  @return the synchronous result. */
static int
read_stream(const char *buf, size_t len, char *err, size_t errlen)
{
	char err2[1024] = "";
	uint64_t d1 = 0, d2 = 0;
	int rc;

	err[0] = '\0';
	rc = read_mode(buf, len, err, errlen, 0, &d1);
	if (read_mode(buf, len, err2, sizeof err2, 1, &d2) != rc ||
	    strcmp(err, err2) != 0 || d1 != d2) {
		if (async_differ++ < 3)
			printf("# read-ahead differs: '%s' vs '%s'\n", err,
			    err2);
	}
	return rc;
}

static int
same_content(const char *a, const char *b, size_t len)
{
	size_t cap = 1 << 20;
	char *da = malloc(cap), *db = malloc(cap);
	size_t na = ZSTD_decompress(da, cap, a, len);
	size_t nb = ZSTD_decompress(db, cap, b, len);
	int same = !ZSTD_isError(na) && !ZSTD_isError(nb) && na == nb &&
	    memcmp(da, db, na) == 0;
	free(da);
	free(db);
	return same;
}

/* Write a stream exercising every kind of emit: stream metadata, an empty
 * tensor, a scalar, rows written one at a time (buffered into chunks),
 * writes of 1 MiB (chunks of their own), one write of 5 MiB (larger than
 * the writer thread's queue), a flush in the middle, and the end.  The
 * data is pseudo-random over a small alphabet, so zstd has work to do.
 * @return the first error of any call (0 if none); msg gets its text. */
static int
gen_stream(FILE *fp, int level, int threads, int async, char *msg,
    size_t msglen)
{
	struct ts_writer *w = ts_writer_open(fp, "gen", level, threads);
	struct ts_meta m = { 0 };
	struct tensor t;
	uint64_t dims[2], x = 0x9E3779B97F4A7C15u;
	size_t big = 5u << 20;
	unsigned char *d = malloc(big);
	int rc = 0, r;

#define STEP(call) do { r = (call); if (r != 0 && rc == 0) { rc = r; \
	snprintf(msg, msglen, "%s", ts_writer_errmsg(w)); } } while (0)
	for (size_t i = 0; i < big; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		d[i] = (unsigned char)("abcdefgh"[x & 7] + (i % 4096 < 64));
	}
	if (async)
		STEP(ts_writer_set_async(w, 1));
	ts_meta_set(&m, "dp.raw.demo", "row-local");
	ts_meta_set(&m, "note", "async writer test");
	STEP(ts_write_meta(w, &m));
	dims[0] = 0;
	dims[1] = 5;
	tensor_init(&t, "empty", TS_F32, 2, dims);
	STEP(ts_write_tensor(w, &t));
	tensor_free(&t);
	tensor_init(&t, "scalar", TS_F64, 0, dims);
	t.data = d;
	STEP(ts_write_tensor(w, &t));
	t.data = NULL;
	tensor_free(&t);
	dims[0] = TS_UNKNOWN_ROWS;
	dims[1] = 100;
	tensor_init(&t, "rows", TS_U8, 2, dims);
	ts_meta_set(&t.meta, "units", "bytes");
	STEP(ts_write_begin(w, &t));
	for (size_t i = 0; i < 30000; i++)
		STEP(ts_write_rows(w, d + i * 100, 1));
	STEP(ts_write_flush(w));
	for (size_t i = 0; i < 3; i++)
		STEP(ts_write_rows(w, d + (i << 20), (1u << 20) / 100));
	STEP(ts_write_end(w));
	tensor_free(&t);
	dims[0] = big / 1000;
	dims[1] = 1000;
	tensor_init(&t, "big", TS_U8, 2, dims);
	t.data = d;
	STEP(ts_write_tensor(w, &t));
	t.data = NULL;
	tensor_free(&t);
	ts_meta_free(&m);
	ts_meta_set(&m, "dp.raw.last", "row-local");
	STEP(ts_write_meta(w, &m));
	STEP(ts_writer_finish(w));
#undef STEP
	ts_meta_free(&m);
	ts_writer_close(w);
	free(d);
	return rc;
}

/* The asynchronous writer's bytes equal the synchronous writer's, for
 * several levels and with zstd's worker threads; on /dev/full both fail
 * with the same code and message. */
static void
async_writer(void)
{
	static const int levels[] = { 1, 3, -5, 9 };
	char msg[512], msg2[512];

	for (size_t k = 0; k < sizeof levels / sizeof levels[0]; k++) {
		for (int threads = 0; threads <= 2; threads += 2) {
			char *a = NULL, *b = NULL;
			size_t na = 0, nb = 0;
			FILE *fa = open_memstream(&a, &na);
			FILE *fb = open_memstream(&b, &nb);
			int ra = gen_stream(fa, levels[k], threads, 0, msg,
			    sizeof msg);
			int rb = gen_stream(fb, levels[k], threads, 1, msg2,
			    sizeof msg2);
			fclose(fa);
			fclose(fb);
			ok(ra == 0 && rb == 0 && na == nb && na > 1000 &&
			    memcmp(a, b, na) == 0, "async writer: same %zu "
			    "bytes as the synchronous writer (level %d, %d "
			    "zstd threads)", na, levels[k], threads);
			if (ra == 0 && threads == 0) {
				FILE *fp = fmemopen(a, na, "rb");
				struct ts_reader *r = ts_reader_open(fp, "mem");
				struct tensor *v;
				size_t n;
				int rc = ts_read_all(r, &v, &n);
				ok(rc == 0 && n == 4 && v[3].dims[0] == 5242,
				    "async writer's stream reads back (%s)",
				    rc ? ts_reader_errmsg(r) : "ok");
				for (size_t i = 0; rc == 0 && i < n; i++)
					tensor_free(&v[i]);
				if (rc == 0)
					free(v);
				ts_reader_close(r);
				fclose(fp);
			}
			free(a);
			free(b);
		}
	}
	FILE *fa = fopen("/dev/full", "wb"), *fb = fopen("/dev/full", "wb");
	if (fa == NULL || fb == NULL) {
		ok(1, "# SKIP no /dev/full");
	} else {
		int ra = gen_stream(fa, 1, 0, 0, msg, sizeof msg);
		int rb = gen_stream(fb, 1, 0, 1, msg2, sizeof msg2);
		ok(ra == TS_E_IO && rb == ra && strcmp(msg, msg2) == 0,
		    "async writer on /dev/full: %d '%s', synchronous: %d '%s'",
		    rb, rb ? msg2 : "", ra, ra ? msg : "");
	}
	if (fa != NULL)
		fclose(fa);
	if (fb != NULL)
		fclose(fb);
}

/* A FILE over a buffer whose reads fail with EIO after fail_at bytes. */
struct failing {
	const char *p;
	size_t len, pos, fail_at;
};

static ssize_t
failing_read(void *c, char *buf, size_t n)
{
	struct failing *f = c;

	if (f->pos >= f->fail_at) {
		errno = EIO;
		return -1;
	}
	if (n > f->fail_at - f->pos)
		n = f->fail_at - f->pos;
	if (n > f->len - f->pos)
		n = f->len - f->pos;
	memcpy(buf, f->p + f->pos, n);
	f->pos += n;
	return (ssize_t)n;
}

/* A read error at several points of a stream: the read-ahead reader
 * reports it with the synchronous reader's code, message and offset. */
static void
async_read_error(const char *s, size_t len)
{
	size_t differ = 0, io = 0;

	for (size_t at = 0; at < len; at += len / 37 + 1) {
		char m[2][1024];
		int rc[2];

		for (int async = 0; async < 2; async++) {
			struct failing f = { s, len, 0, at };
			cookie_io_functions_t io_fn = { failing_read, NULL,
			    NULL, NULL };
			FILE *fp = fopencookie(&f, "rb", io_fn);
			struct ts_reader *r = ts_reader_open(fp, "failing");
			struct tensor *v;
			size_t n;

			if (async)
				ts_reader_set_async(r, 1);
			rc[async] = ts_read_all(r, &v, &n);
			snprintf(m[async], sizeof m[async], "%s",
			    ts_reader_errmsg(r));
			ts_reader_close(r);
			fclose(fp);
		}
		if (rc[0] == TS_E_IO)
			io++;
		if (rc[0] != rc[1] || strcmp(m[0], m[1]) != 0) {
			if (differ++ < 3)
				printf("# '%s' vs '%s'\n", m[0], m[1]);
		}
	}
	ok(io > 30 && differ == 0, "read-ahead reader: %zu read errors reported "
	    "as the synchronous reader reports them (%zu differ)", io, differ);
}

/*
 * XXH64 of long inputs (the 32-byte stripes) against an independent
 * implementation: a zstd frame's content checksum is the low 32 bits of
 * XXH64(content, seed 0) (RFC 8878, section 3.1.1), computed by libzstd.
 * Each input is hashed in one call and in pieces of 1, 7, 31, 32 and 33
 * bytes, which must agree.
 */
static void
xxh64_vs_zstd(void)
{
	static const size_t lens[] = { 31, 32, 33, 63, 64, 65, 100, 1000,
	    4099, 65536 + 17 };
	static const size_t pieces[] = { 1, 7, 31, 32, 33 };
	unsigned char *buf = malloc(65536 + 17), *z;
	size_t zcap = ZSTD_compressBound(65536 + 17), bad = 0, badp = 0;
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	uint64_t x = 88172645463325252u;

	z = malloc(zcap);
	for (size_t i = 0; i < 65536 + 17; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (unsigned char)(x >> 32);
	}
	ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
	for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
		size_t n = lens[k], zn = ZSTD_compress2(cc, z, zcap, buf, n);
		struct ts_xxh64 h;
		uint64_t whole;
		uint32_t want;

		if (ZSTD_isError(zn) || zn < 4) {
			bad++;
			continue;
		}
		want = (uint32_t)z[zn - 4] | (uint32_t)z[zn - 3] << 8 |
		    (uint32_t)z[zn - 2] << 16 | (uint32_t)z[zn - 1] << 24;
		ts_xxh64_init(&h, 0);
		ts_xxh64_update(&h, buf, n);
		whole = ts_xxh64_final(&h);
		if ((uint32_t)whole != want)
			bad++;
		for (size_t j = 0; j < sizeof pieces / sizeof pieces[0]; j++) {
			ts_xxh64_init(&h, 0);
			for (size_t o = 0; o < n; o += pieces[j])
				ts_xxh64_update(&h, buf + o, n - o < pieces[j] ?
				    n - o : pieces[j]);
			if (ts_xxh64_final(&h) != whole)
				badp++;
		}
	}
	ok(bad == 0, "xxh64 of 10 long inputs matches zstd's frame checksums "
	    "(%zu differ)", bad);
	ok(badp == 0, "xxh64 in pieces equals xxh64 in one call (%zu differ)",
	    badp);
	ZSTD_freeCCtx(cc);
	free(z);
	free(buf);
}

int
main(void)
{
	char err[1024];
	size_t len;
	char *s;

	/* XXH64 published values (xxHash test suite / reference). */
	struct ts_xxh64 h;
	ts_xxh64_init(&h, 0);
	ok(ts_xxh64_final(&h) == UINT64_C(0xEF46DB3751D8E999), "xxh64 of empty input");
	ts_xxh64_init(&h, 0);
	ts_xxh64_update(&h, "abc", 3);
	ok(ts_xxh64_final(&h) == UINT64_C(0x44BC2CF5AD770999), "xxh64 of 'abc'");

	xxh64_vs_zstd();
	async_writer();

	for (int streamed = 0; streamed < 2; streamed++) {
		s = write_stream(&len, streamed, 1);
		ok(s != NULL, "writer succeeds (streamed=%d)", streamed);
		ok(read_stream(s, len, err, sizeof err) == 0,
		    "round trip is exact (streamed=%d)", streamed);
		/* Every strict prefix must be rejected. */
		int accepted = 0;
		for (size_t cut = 0; cut < len; cut++)
			if (read_stream(s, cut, err, sizeof err) == 0)
				accepted++;
		ok(accepted == 0, "all %zu truncations rejected (streamed=%d)",
		    len, streamed);
		/* Any single flipped byte must be rejected. */
		int flips = 0;
		char *orig = malloc(len);
		memcpy(orig, s, len);
		for (size_t i = 0; i < len; i += 3) {
			s[i] ^= 0x20;
			/* A flip zstd ignores (slack bits of an entropy
			 * table) leaves the content intact; any other must be
			 * caught by the checksum or the parser. */
			if (read_stream(s, len, err, sizeof err) == 0 &&
			    !same_content(s, orig, len))
				flips++;
			s[i] ^= 0x20;
		}
		free(orig);
		ok(flips == 0, "every flipped byte rejected (streamed=%d)", streamed);
		free(s);
	}
	s = write_stream(&len, 0, 1);
	async_read_error(s, len);
	free(s);
	s = write_stream(&len, 0, -5);
	ok(s && read_stream(s, len, err, sizeof err) == 0, "negative level works");
	free(s);
	ok(async_differ == 0, "read-ahead reader: every read above (round trips, "
	    "truncations, flipped bytes) has the synchronous reader's result, "
	    "message and digest (%zu differ)", async_differ);
	return tap_done();
}
