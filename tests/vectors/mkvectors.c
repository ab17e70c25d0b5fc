/*
 * mkvectors.c: write the tensor-stream test vectors of formats/testdata.
 *
 * Usage: mkvectors DIR   (writes DIR/good/NAME.tns, DIR/bad/NAME.tns and
 * DIR/bad/NAME.err, the latter holding a substring of the expected reader
 * message).  Most vectors are built byte by byte from the layout in
 * formats/tensor-stream.md, not with the library writer, so that a writer
 * bug cannot hide a reader bug; the library writes example.tns only.
 * Output is deterministic for a given libzstd version; the vectors are
 * committed and regenerated only deliberately (tests/vectors/regen).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "tstream.h"

#define MAX64 UINT64_MAX

enum { META = 1, TENSOR = 2, CHUNK = 3, TEND = 4, END = 5, ANC = 0x81 };

static const char *outdir;

/* ---- byte buffers ---- */

struct bb {
	unsigned char *p;
	size_t len, cap;
};

static void
die(const char *what)
{
	fprintf(stderr, "mkvectors: %s\n", what);
	exit(1);
}

static void
put(struct bb *b, const void *src, size_t n)
{
	if (b->len + n > b->cap) {
		size_t nc = b->cap ? b->cap : 64;
		while (nc < b->len + n)
			nc *= 2;
		if ((b->p = realloc(b->p, nc)) == NULL)
			die("out of memory");
		b->cap = nc;
	}
	if (n > 0)
		memcpy(b->p + b->len, src, n);
	b->len += n;
}

static void
le(struct bb *b, uint64_t v, int width)
{
	unsigned char x[8];

	for (int i = 0; i < width; i++)
		x[i] = (unsigned char)(v >> (8 * i));
	put(b, x, (size_t)width);
}

static void u8(struct bb *b, uint64_t v) { le(b, v, 1); }
static void u16(struct bb *b, uint64_t v) { le(b, v, 2); }
static void u32(struct bb *b, uint64_t v) { le(b, v, 4); }
static void u64(struct bb *b, uint64_t v) { le(b, v, 8); }

static void
f32(struct bb *b, float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	u32(b, u);
}

static void
f64(struct bb *b, double d)
{
	uint64_t u;

	memcpy(&u, &d, 8);
	u64(b, u);
}

static void
bbfree(struct bb *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

/* ---- stream pieces ---- */

static void
stream_header(struct bb *b, unsigned major, unsigned minor, unsigned flags)
{
	static const unsigned char magic[8] =
	    { 0x93, 'T', 'N', 'S', 0x0D, 0x0A, 0x1A, 0x0A };

	put(b, magic, 8);
	u8(b, major);
	u8(b, minor);
	u16(b, flags);
}

/* A record with an explicit flags word and declared length. */
static void
rec_raw(struct bb *b, uint32_t type, uint32_t flags, uint64_t len,
    const void *body, size_t n)
{
	u32(b, type);
	u32(b, flags);
	u64(b, len);
	put(b, body, n);
}

/* Metadata block entry: key of kl bytes, value type, value of vl bytes. */
static void
kv_raw(struct bb *m, const char *key, size_t kl, unsigned vtype,
    const char *val, size_t vl)
{
	u16(m, kl);
	put(m, key, kl);
	u8(m, vtype);
	u32(m, vl);
	put(m, val, vl);
}

static void
kv(struct bb *m, const char *key, const char *val)
{
	kv_raw(m, key, strlen(key), 1, val, strlen(val));
}

/* Tensor header body without its metadata block. */
static void
thead(struct bb *t, const char *name, size_t nl, unsigned dtype,
    unsigned ndim, unsigned flags, const uint64_t *dims)
{
	u16(t, nl);
	put(t, name, nl);
	u8(t, dtype);
	u8(t, ndim);
	u16(t, flags);
	for (unsigned i = 0; i < ndim; i++)
		u64(t, dims[i]);
}

/* A stream under construction, counting what the end record reports. */
struct sb {
	struct bb b;
	uint64_t records, tensors, rows, cur;
};

static void
s_start(struct sb *s)
{
	memset(s, 0, sizeof *s);
	stream_header(&s->b, 1, 0, 0);
}

static void
s_rec(struct sb *s, uint32_t type, const struct bb *body)
{
	rec_raw(&s->b, type, 0, body->len, body->p, body->len);
	s->records++;
}

/* Stream metadata record from pairs key, value, ..., NULL. */
static void
s_meta(struct sb *s, ...)
{
	struct bb m = { 0 };
	const char *k;
	va_list ap;
	uint32_t n = 0;

	va_start(ap, s);
	while ((k = va_arg(ap, const char *)) != NULL) {
		(void)va_arg(ap, const char *);
		n++;
	}
	va_end(ap);
	u32(&m, n);
	va_start(ap, s);
	while ((k = va_arg(ap, const char *)) != NULL)
		kv(&m, k, va_arg(ap, const char *));
	va_end(ap);
	s_rec(s, META, &m);
	bbfree(&m);
}

/* Tensor header record with an optional metadata block (NULL: empty). */
static void
s_tensor_m(struct sb *s, const char *name, unsigned dtype, unsigned ndim,
    const uint64_t *dims, const struct bb *meta)
{
	struct bb t = { 0 };
	unsigned flags = ndim > 0 && dims[0] == MAX64 ? 1 : 0;

	thead(&t, name, strlen(name), dtype, ndim, flags, dims);
	if (meta)
		put(&t, meta->p, meta->len);
	else
		u32(&t, 0);
	s_rec(s, TENSOR, &t);
	bbfree(&t);
	s->tensors++;
	s->cur = 0;
}

static void
s_tensor(struct sb *s, const char *name, unsigned dtype, unsigned ndim,
    const uint64_t *dims)
{
	s_tensor_m(s, name, dtype, ndim, dims, NULL);
}

/* Chunk of nrows rows whose bytes are rows->p. */
static void
s_chunk(struct sb *s, uint64_t nrows, const struct bb *rows)
{
	struct bb c = { 0 };

	u64(&c, nrows);
	if (rows)
		put(&c, rows->p, rows->len);
	s_rec(s, CHUNK, &c);
	bbfree(&c);
	s->cur += nrows;
}

static void
s_tend(struct sb *s)
{
	struct bb e = { 0 };

	u64(&e, s->cur);
	s_rec(s, TEND, &e);
	bbfree(&e);
	s->rows += s->cur;
}

static void
s_end(struct sb *s)
{
	rec_raw(&s->b, END, 0, 24, NULL, 0);
	u64(&s->b, s->records);
	u64(&s->b, s->tensors);
	u64(&s->b, s->rows);
}

/* A valid tensor "x": f64 [2, 3], values 0.5, 1.5, ..., in one chunk. */
static void
s_x(struct sb *s, const char *name)
{
	static const uint64_t dims[2] = { 2, 3 };
	struct bb r = { 0 };

	for (int i = 0; i < 6; i++)
		f64(&r, i + 0.5);
	s_tensor(s, name, TS_F64, 2, dims);
	s_chunk(s, 2, &r);
	s_tend(s);
	bbfree(&r);
}

/* ---- compression ---- */

/* One zstd frame with the content checksum (or without, checksum = 0). */
static void
zframe(struct bb *out, const struct bb *in, int checksum)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	size_t cap = ZSTD_compressBound(in->len), n;
	unsigned char *z = malloc(cap);

	if (c == NULL || z == NULL ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 19)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag,
	    checksum)))
		die("zstd setup failed");
	n = ZSTD_compress2(c, z, cap, in->p, in->len);
	if (ZSTD_isError(n))
		die(ZSTD_getErrorName(n));
	put(out, z, n);
	free(z);
	ZSTD_freeCCtx(c);
}

/*
 * A frame written by hand (RFC 8878 section 3.1.1): no content size, the
 * given window log in a Window_Descriptor (or a dictionary ID when dictid
 * is nonzero), the content as one raw block, then the checksum: the low 32
 * bits of XXH64 (seed 0) of the content.
 */
static void
zframe_raw(struct bb *out, const struct bb *in, unsigned wlog, unsigned dictid)
{
	struct ts_xxh64 h;

	if (in->len > (1u << 17) || in->len > (size_t)1 << wlog)
		die("raw frame content too large");
	u32(out, 0xFD2FB528u);
	u8(out, 0x04 | (dictid ? 1 : 0));	/* checksum flag, dict ID flag */
	u8(out, (wlog - 10) << 3);		/* exponent, mantissa 0 */
	if (dictid)
		u8(out, dictid);
	u32(out, 0);				/* placeholder, cut below */
	out->len -= 4;
	le(out, 1 | (uint64_t)in->len << 3, 3);	/* last, raw, size */
	put(out, in->p, in->len);
	ts_xxh64_init(&h, 0);
	ts_xxh64_update(&h, in->p, in->len);
	u32(out, ts_xxh64_final(&h) & 0xFFFFFFFFu);
}

/* ---- output ---- */

static void
save(const char *sub, const char *name, const char *ext, const void *p,
    size_t n)
{
	char path[1024];
	FILE *fp;

	snprintf(path, sizeof path, "%s/%s/%s%s", outdir, sub, name, ext);
	if ((fp = fopen(path, "wb")) == NULL || fwrite(p, 1, n, fp) != n ||
	    fclose(fp) != 0)
		die(path);
}

static void
good_z(const char *name, const struct bb *z)
{
	save("good", name, ".tns", z->p, z->len);
}

static void
good(const char *name, struct sb *s)
{
	struct bb z = { 0 };

	zframe(&z, &s->b, 1);
	good_z(name, &z);
	bbfree(&z);
	bbfree(&s->b);
}

static void
bad_z(const char *name, const char *err, const struct bb *z)
{
	save("bad", name, ".tns", z->p, z->len);
	save("bad", name, ".err", err, strlen(err));
}

/* A bad vector from decompressed bytes, in one well-formed frame. */
static void
bad_raw(const char *name, const char *err, struct bb *raw)
{
	struct bb z = { 0 };

	zframe(&z, raw, 1);
	bad_z(name, err, &z);
	bbfree(&z);
	bbfree(raw);
}

static void
bad(const char *name, const char *err, struct sb *s)
{
	bad_raw(name, err, &s->b);
}

/* ---- the good vectors ---- */

static void
good_vectors(void)
{
	struct sb s;
	struct bb r = { 0 }, m = { 0 };

	/* No tensors: header and end record. */
	s_start(&s);
	s_end(&s);
	good("empty", &s);

	/* One f64 scalar: ndim 0, one row of one element. */
	s_start(&s);
	s_tensor(&s, "pi", TS_F64, 0, NULL);
	f64(&r, 3.141592653589793);
	s_chunk(&s, 1, &r);
	s_tend(&s);
	s_end(&s);
	good("scalar", &s);
	bbfree(&r);

	/* f32 [?, 3] streamed: 5 rows in chunks of 2, 0 and 3 rows. */
	{
		static const uint64_t d[2] = { MAX64, 3 };
		s_start(&s);
		s_tensor(&s, "features", TS_F32, 2, d);
		for (int i = 0; i < 6; i++)
			f32(&r, (float)i * 0.25f - 1.0f);
		s_chunk(&s, 2, &r);
		bbfree(&r);
		s_chunk(&s, 0, NULL);
		for (int i = 6; i < 15; i++)
			f32(&r, (float)i * 0.25f - 1.0f);
		s_chunk(&s, 3, &r);
		bbfree(&r);
		s_tend(&s);
		s_end(&s);
		good("f32-streamed", &s);
	}

	/* All five dtypes, 1-D, known values at the extremes. */
	{
		uint64_t d[1] = { 3 };
		s_start(&s);
		s_tensor(&s, "a_f32", TS_F32, 1, d);
		f32(&r, 1.0f), f32(&r, -0.0f), f32(&r, 3.4028234663852886e38f);
		s_chunk(&s, 3, &r), bbfree(&r), s_tend(&s);
		s_tensor(&s, "b_f64", TS_F64, 1, d);
		f64(&r, 0.1), f64(&r, -2.5), f64(&r, 4.9406564584124654e-324);
		s_chunk(&s, 3, &r), bbfree(&r), s_tend(&s);
		s_tensor(&s, "c_i32", TS_I32, 1, d);
		u32(&r, 0x80000000u), u32(&r, 0xFFFFFFFFu), u32(&r, 0x7FFFFFFFu);
		s_chunk(&s, 3, &r), bbfree(&r), s_tend(&s);
		s_tensor(&s, "d_i64", TS_I64, 1, d);
		u64(&r, UINT64_C(0x8000000000000000)), u64(&r, MAX64);
		u64(&r, 42);
		s_chunk(&s, 3, &r), bbfree(&r), s_tend(&s);
		d[0] = 4;
		s_tensor(&s, "e_u8", TS_U8, 1, d);
		u8(&r, 0), u8(&r, 1), u8(&r, 128), u8(&r, 255);
		s_chunk(&s, 4, &r), bbfree(&r), s_tend(&s);
		s_end(&s);
		good("dtypes", &s);
	}

	/* NaN and infinities are stored as they are. */
	{
		static const uint64_t d[1] = { 4 };
		s_start(&s);
		s_tensor(&s, "nonfinite", TS_F64, 1, d);
		u64(&r, UINT64_C(0x7FF8000000000000));	/* quiet NaN */
		u64(&r, UINT64_C(0x7FF0000000000000));	/* +Inf */
		u64(&r, UINT64_C(0xFFF0000000000000));	/* -Inf */
		u64(&r, UINT64_C(0x7FF0000000000001));	/* signalling NaN */
		s_chunk(&s, 4, &r), bbfree(&r), s_tend(&s);
		s_end(&s);
		good("nonfinite", &s);
	}

	/* Zero rows; zero columns (rows of zero bytes); a 3-D tensor. */
	{
		static const uint64_t d0[2] = { 0, 4 }, d1[2] = { 3, 0 },
		    d2[3] = { 0, 0, 7 }, d3[3] = { 2, 1, 2 };
		s_start(&s);
		s_tensor(&s, "no_rows", TS_F64, 2, d0);
		s_tend(&s);
		s_tensor(&s, "no_cols", TS_F32, 2, d1);
		s_chunk(&s, 3, NULL);
		s_tend(&s);
		s_tensor(&s, "zeros/3d", TS_I32, 3, d2);
		s_tend(&s);
		s_tensor(&s, "cube", TS_U8, 3, d3);
		u32(&r, 0x04030201u);
		s_chunk(&s, 2, &r), bbfree(&r), s_tend(&s);
		s_end(&s);
		good("zero-rows", &s);
	}

	/* No rows, but rows of 2^43 bytes: readers must not allocate a row
	 * to find out that there is none. */
	{
		static const uint64_t d0[2] = { 0, UINT64_C(1) << 40 },
		    d1[2] = { MAX64, UINT64_C(1) << 40 };
		s_start(&s);
		s_tensor(&s, "wide", TS_F64, 2, d0);
		s_tend(&s);
		s_tensor(&s, "wide_streamed", TS_F64, 2, d1);
		s_tend(&s);
		s_end(&s);
		good("wide-empty", &s);
	}

	/* Split across two zstd frames, inside a chunk. */
	{
		struct bb a = { 0 }, b = { 0 }, z = { 0 };
		s_start(&s);
		s_x(&s, "x");
		s_x(&s, "y");
		s_end(&s);
		put(&a, s.b.p, 40);
		put(&b, s.b.p + 40, s.b.len - 40);
		zframe(&z, &a, 1);
		zframe(&z, &b, 1);
		good_z("multi-frame", &z);
		bbfree(&a), bbfree(&b), bbfree(&z), bbfree(&s.b);
	}

	/* Frames with empty content carry no stream bytes: one before the
	 * stream, one between its two halves, one after the end record. */
	{
		struct bb a = { 0 }, b = { 0 }, e = { 0 }, z = { 0 };
		s_start(&s);
		s_x(&s, "x");
		s_end(&s);
		put(&a, s.b.p, 60);
		put(&b, s.b.p + 60, s.b.len - 60);
		zframe(&z, &e, 1);
		zframe(&z, &a, 1);
		zframe(&z, &e, 1);
		zframe(&z, &b, 1);
		zframe(&z, &e, 1);
		good_z("empty-frames", &z);
		bbfree(&a), bbfree(&b), bbfree(&z), bbfree(&s.b);
	}

	/* Metadata: UTF-8 values (2-, 3- and 4-byte sequences), an empty
	 * value, dotted keys, stream metadata before, between and after the
	 * tensors. */
	{
		static const uint64_t d[1] = { 1 };
		s_start(&s);
		s_meta(&s, "title", "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac "
		    "\xf0\x9f\x93\x88", "note", "", NULL);
		u32(&m, 3);
		kv(&m, "units", "\xc2\xb5m");
		kv(&m, "source.name", "\xce\xb1\xce\xb2\xce\xb3");
		kv(&m, "x_1.y_2.z_3", "line one\nline two\ttab");
		s_tensor_m(&s, "v", TS_U8, 1, d, &m);
		bbfree(&m);
		u8(&r, 7);
		s_chunk(&s, 1, &r), bbfree(&r), s_tend(&s);
		s_meta(&s, "dp.raw.demo", "row-local", NULL);
		s_x(&s, "w");
		s_meta(&s, "prov.tool", "mkvectors", "prov.version", "0.1.0",
		    NULL);
		s_end(&s);
		good("metadata-utf8", &s);
	}

	/* Ancillary records (type 0x81, and 0x1FF80) between tensors and
	 * between chunks: readers skip them but count them in the end record. */
	{
		static const uint64_t d[2] = { 2, 3 };
		struct bb a = { 0 };
		put(&a, "ignore me", 9);
		s_start(&s);
		s_rec(&s, ANC, &a);
		s_tensor(&s, "x", TS_F64, 2, d);
		for (int i = 0; i < 3; i++)
			f64(&r, i);
		s_chunk(&s, 1, &r);
		s_rec(&s, 0x1FF80, &a);
		s_chunk(&s, 1, &r);
		bbfree(&r);
		s_tend(&s);
		bbfree(&a);
		s_rec(&s, ANC, &a);	/* empty body */
		s_end(&s);
		good("ancillary", &s);
	}

	/* A higher minor version (1.7) with header flags set: readable, and
	 * the flags are ignored. */
	{
		struct sb t;
		s_start(&t);
		t.b.len = 0;
		stream_header(&t.b, 1, 7, 0x8001);
		s_x(&t, "x");
		s_end(&t);
		good("minor-version", &t);
	}

	/* The largest window a reader must accept, 2^27, declared in a
	 * hand-written frame with no content size. */
	{
		struct bb z = { 0 };
		s_start(&s);
		s_x(&s, "x");
		s_end(&s);
		zframe_raw(&z, &s.b, 27, 0);
		good_z("window-max", &z);
		bbfree(&z), bbfree(&s.b);
	}
}

/* The worked example of the spec, written by the library. */
static void
example(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	struct ts_writer *w;
	struct tensor t;
	struct ts_meta sm = { 0 };
	uint64_t d[2] = { TS_UNKNOWN_ROWS, 2 };
	float x[4] = { 1.0f, 2.0f, 3.0f, -0.5f };
	unsigned char y[2] = { 0, 1 };

	if (fp == NULL || (w = ts_writer_open(fp, "example", 19, 0)) == NULL)
		die("cannot open the writer");
	tensor_init(&t, "x", TS_F32, 2, d);
	if (ts_write_begin(w, &t) || ts_write_rows(w, x, 2) || ts_write_end(w))
		die(ts_writer_errmsg(w));
	tensor_free(&t);
	d[0] = 2;
	tensor_init(&t, "y", TS_U8, 1, d);
	ts_meta_set(&t.meta, "classes", "2");
	t.data = y;
	if (ts_write_tensor(w, &t))
		die(ts_writer_errmsg(w));
	t.data = NULL;
	tensor_free(&t);
	ts_meta_set(&sm, "dp.raw.demo", "row-local");
	if (ts_write_meta(w, &sm) || ts_writer_finish(w))
		die(ts_writer_errmsg(w));
	ts_meta_free(&sm);
	ts_writer_close(w);
	fclose(fp);
	save("good", "example", ".tns", buf, len);
	free(buf);
}

/* ---- the bad vectors ---- */

/* Bad vectors about the compressed layer. */
static void
bad_frames(void)
{
	struct sb s;
	struct bb z = { 0 }, raw = { 0 };
	uint64_t st = UINT64_C(0x9E3779B97F4A7C15);

	bad_z("empty-file", "empty input", &z);

	put(&z, "x,y\n1,2\n", 8);
	bad_z("not-zstd", "not zstd-compressed", &z);
	bbfree(&z);

	/* zstd around pseudo-random bytes (splitmix64). */
	for (int i = 0; i < 8; i++) {
		uint64_t v = (st += UINT64_C(0x9E3779B97F4A7C15));
		v = (v ^ (v >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
		v = (v ^ (v >> 27)) * UINT64_C(0x94D049BB133111EB);
		u64(&raw, v ^ (v >> 31));
	}
	bad_raw("bad-magic", "bad magic", &raw);

	/* A skippable frame before a valid stream. */
	s_start(&s);
	s_x(&s, "x");
	s_end(&s);
	u32(&z, 0x184D2A50u);
	u32(&z, 4);
	u32(&z, 0);
	zframe(&z, &s.b, 1);
	bad_z("skippable-frame", "skippable zstd frame", &z);
	bbfree(&z);

	zframe(&z, &s.b, 0);
	bad_z("no-checksum", "without content checksum", &z);
	bbfree(&z);

	zframe(&z, &s.b, 1);
	z.p[z.len - 1] ^= 0x01;
	bad_z("bad-checksum", "checksum mismatch", &z);
	z.p[z.len - 1] ^= 0x01;

	z.len -= 3;
	bad_z("truncated-frame", "input ends inside a zstd frame", &z);
	z.len += 3;

	put(&z, "GARBAGE!", 8);
	bad_z("trailing-garbage", "trailing bytes after the last zstd frame", &z);
	z.len -= 8;

	put(&z, "\n", 1);
	bad_z("trailing-byte", "truncated zstd frame header", &z);
	z.len -= 1;

	/* A second whole stream after the first, in its own frame. */
	zframe(&z, &s.b, 1);
	bad_z("second-stream", "trailing bytes after the end record", &z);
	bbfree(&z);

	/* Bytes after the end record inside the frame. */
	put(&raw, s.b.p, s.b.len);
	u32(&raw, 0);
	bad_raw("trailing-bytes", "trailing bytes after the end record", &raw);

	/* The stream ends at a frame boundary before its end record. */
	put(&raw, s.b.p, s.b.len - 40);
	bad_raw("end-missing", "stream ends inside a record header", &raw);
	put(&raw, s.b.p, 12 + 16 + 27 + 16 + 8 + 10);
	bad_raw("truncated-chunk", "stream ends inside a chunk of rows", &raw);
	put(&raw, s.b.p, 7);
	bad_raw("short-header", "stream ends inside the stream header", &raw);

	/* A frame declaring a 2^28-byte window. */
	zframe_raw(&z, &s.b, 28, 0);
	bad_z("window-too-large", "zstd window of 268435456 bytes exceeds the limit 2^27", &z);
	bbfree(&z);

	/* A frame that needs a dictionary. */
	zframe_raw(&z, &s.b, 20, 7);
	bad_z("dictionary", "zstd: Dictionary mismatch", &z);
	bbfree(&z);

	/* A reserved block type (3). */
	u32(&z, 0xFD2FB528u);
	u8(&z, 0x04);
	u8(&z, 0x50);
	le(&z, 1 | 3 << 1 | 16 << 3, 3);
	put(&z, s.b.p, 16);
	u32(&z, 0);
	bad_z("corrupt-block", "zstd: ", &z);
	bbfree(&z);
	bbfree(&s.b);
}

/* Bad vectors about the stream header and record framing. */
static void
bad_records(void)
{
	struct sb s;
	struct bb b = { 0 };

	s_start(&s);
	s.b.len = 0;
	stream_header(&s.b, 2, 0, 0);
	s_x(&s, "x");
	s_end(&s);
	bad("version-2", "version 2.0: this reader supports major version 1", &s);

	s_start(&s);
	s.b.len = 0;
	stream_header(&s.b, 0, 9, 0);
	s_end(&s);
	bad("version-0", "version 0.9: this reader supports major version 1", &s);

	s_start(&s);
	s.b.len = 0;
	stream_header(&s.b, 1, 0, 1);
	s_end(&s);
	bad("header-flags", "header flags 0x0001: must be zero", &s);

	s_start(&s);
	s.b.p[1] = 't';
	s_end(&s);
	bad("magic-case", "bad magic", &s);

	s_start(&s);
	u32(&b, 0);
	rec_raw(&s.b, META, 1, 4, b.p, 4);
	s.records++;
	s_end(&s);
	bad("record-flags", "record flags 0x00000001: must be zero", &s);

	s_start(&s);
	s_rec(&s, 6, &b);
	s_end(&s);
	bad("record-type-6", "unknown record type 6", &s);

	s_start(&s);
	s_rec(&s, 0x100, &b);
	s_end(&s);
	bad("record-type-256", "unknown record type 256", &s);

	s_start(&s);
	s_rec(&s, 0, &b);
	s_end(&s);
	bad("record-type-0", "unknown record type 0", &s);

	{
		static const uint64_t d[1] = { 1 };
		struct bb r = { 0 };
		s_start(&s);
		s_tensor(&s, "x", TS_U8, 1, d);
		s_rec(&s, 7, &b);
		u8(&r, 1);
		s_chunk(&s, 1, &r);
		s_tend(&s);
		s_end(&s);
		bad("record-type-7-in-tensor",
		    "record type 7 before its end-of-tensor record", &s);
		bbfree(&r);
	}

	s_start(&s);
	rec_raw(&s.b, META, 0, UINT64_C(1) << 40, b.p, 4);
	bad("record-huge", "record length 1099511627776 exceeds the limit", &s);

	s_start(&s);
	rec_raw(&s.b, TENSOR, 0, (16u << 20) + 1, b.p, 4);
	bad("tensor-header-huge", "record length 16777217 exceeds the limit "
	    "16777216", &s);

	s_start(&s);
	rec_raw(&s.b, ANC, 0, UINT64_C(1) << 33, b.p, 4);
	bad("ancillary-huge", "ancillary record length 8589934592 exceeds "
	    "the limit", &s);

	s_start(&s);
	s_x(&s, "x");
	s_rec(&s, CHUNK, &b);
	s_end(&s);
	bad("chunk-outside", "record type 3 outside a tensor", &s);

	s_start(&s);
	bbfree(&b);
	u64(&b, 0);
	s_rec(&s, TEND, &b);
	s_end(&s);
	bad("tensor-end-outside", "record type 4 outside a tensor", &s);

	/* End record. */
	s_start(&s);
	s_x(&s, "x");
	s.records += 4;
	s_end(&s);
	bad("end-records", "end record counts 7 records, the stream has 3", &s);

	s_start(&s);
	s_x(&s, "x");
	s.tensors = 2;
	s_end(&s);
	bad("end-tensors", "end record counts 2 tensors, the stream has 1", &s);

	s_start(&s);
	s_x(&s, "x");
	s.rows = 9;
	s_end(&s);
	bad("end-rows", "end record counts 9 rows, the stream has 2", &s);

	s_start(&s);
	rec_raw(&s.b, END, 0, 16, NULL, 0);
	u64(&s.b, 0);
	u64(&s.b, 0);
	bad("end-length", "end record length 16, expected 24", &s);
	bbfree(&b);
}

/* A tensor header record from a hand-built body; the stream then holds an
 * end record only, as the reader stops at the header. */
static void
bad_thead(const char *name, const char *err, const struct bb *body)
{
	struct sb s;

	s_start(&s);
	s_rec(&s, TENSOR, body);
	s.tensors++;
	s_tend(&s);
	s_end(&s);
	bad(name, err, &s);
}

static void
bad_tensors(void)
{
	struct bb t = { 0 };
	char longname[257];
	uint64_t d[9] = { 2, 3, 1, 1, 1, 1, 1, 1, 1 };
	struct sb s;

	thead(&t, "x", 1, TS_F64, 2, 0, d);
	u32(&t, 0);
	u8(&t, 0), u8(&t, 0), u8(&t, 0);
	bad_thead("tensor-header-long", "tensor 'x': 3 unexpected bytes at the "
	    "end of the header", &t);
	bbfree(&t);

	thead(&t, "x", 1, TS_F64, 2, 0, d);
	t.len -= 4;
	bad_thead("tensor-header-short", "tensor dims runs past the end of its "
	    "record", &t);
	bbfree(&t);

	thead(&t, "x", 1, TS_F64, 2, 0, d);
	bad_thead("tensor-header-no-meta", "metadata count runs past the end",
	    &t);
	bbfree(&t);

	thead(&t, "", 0, TS_F64, 2, 0, d);
	u32(&t, 0);
	bad_thead("name-empty", "tensor name length 0 not in 1..255", &t);
	bbfree(&t);

	memset(longname, 'a', 256);
	longname[256] = '\0';
	thead(&t, longname, 256, TS_F64, 2, 0, d);
	u32(&t, 0);
	bad_thead("name-too-long", "tensor name length 256 not in 1..255", &t);
	bbfree(&t);

	thead(&t, "a b", 3, TS_F64, 2, 0, d);
	u32(&t, 0);
	bad_thead("name-bad-char", "name has a character outside", &t);
	bbfree(&t);

	thead(&t, "caf\xc3\xa9", 5, TS_F64, 2, 0, d);
	u32(&t, 0);
	bad_thead("name-non-ascii", "name has a character outside", &t);
	bbfree(&t);

	thead(&t, ".x", 2, TS_F64, 2, 0, d);
	u32(&t, 0);
	bad_thead("name-leading-dot", "name starts with '/' or '.'", &t);
	bbfree(&t);

	thead(&t, "/x", 2, TS_F64, 2, 0, d);
	u32(&t, 0);
	bad_thead("name-leading-slash", "name starts with '/' or '.'", &t);
	bbfree(&t);

	thead(&t, "a\0b", 3, TS_F64, 2, 0, d);
	u32(&t, 0);
	bad_thead("name-nul", "NUL byte in name", &t);
	bbfree(&t);

	s_start(&s);
	s_x(&s, "x");
	s_x(&s, "x");
	s_end(&s);
	bad("name-duplicate", "tensor 'x': duplicate tensor name", &s);

	thead(&t, "x", 1, 6, 2, 0, d);
	u32(&t, 0);
	bad_thead("dtype-6", "tensor 'x': unknown dtype code 6", &t);
	bbfree(&t);

	thead(&t, "x", 1, 0, 2, 0, d);
	u32(&t, 0);
	bad_thead("dtype-0", "tensor 'x': unknown dtype code 0", &t);
	bbfree(&t);

	thead(&t, "x", 1, TS_F64, 9, 0, d);
	u32(&t, 0);
	bad_thead("ndim-9", "tensor 'x': ndim 9 exceeds the maximum 8", &t);
	bbfree(&t);

	thead(&t, "x", 1, TS_F64, 2, 2, d);
	u32(&t, 0);
	bad_thead("tensor-flags", "tensor 'x': unknown tensor flags 0x0002", &t);
	bbfree(&t);

	{
		uint64_t o[3] = { UINT64_C(1) << 32, UINT64_C(1) << 32, 8 };
		thead(&t, "x", 1, TS_U8, 3, 0, o);
		u32(&t, 0);
		bad_thead("dims-overflow", "tensor 'x': product of dims "
		    "overflows", &t);
		bbfree(&t);

		/* 2^61 elements fit in u64, 2^64 bytes do not. */
		o[1] = UINT64_C(1) << 29;
		thead(&t, "x", 1, TS_F64, 2, 0, o);
		u32(&t, 0);
		bad_thead("bytes-overflow", "tensor 'x': product of dims "
		    "overflows", &t);
		bbfree(&t);

		o[0] = UINT64_C(1) << 21;
		o[1] = UINT64_C(1) << 20;
		thead(&t, "x", 1, TS_U8, 2, 0, o);
		u32(&t, 0);
		bad_thead("elements-limit", "tensor 'x': 2199023255552 "
		    "elements exceed the limit 1099511627776", &t);
		bbfree(&t);

		o[0] = MAX64;
		o[1] = UINT64_C(1) << 21;
		o[2] = UINT64_C(1) << 20;
		thead(&t, "x", 1, TS_U8, 3, 1, o);
		u32(&t, 0);
		bad_thead("row-elements-limit", "tensor 'x': row of "
		    "2199023255552 elements exceeds the limit", &t);
		bbfree(&t);

		o[1] = UINT64_C(1) << 32;
		o[2] = UINT64_C(1) << 32;
		thead(&t, "x", 1, TS_U8, 3, 1, o);
		u32(&t, 0);
		bad_thead("row-overflow", "tensor 'x': row size overflows", &t);
		bbfree(&t);

		/* Zero-width rows still count against the row limit. */
		o[0] = (UINT64_C(1) << 40) + 1;
		o[1] = 0;
		thead(&t, "x", 1, TS_F64, 2, 0, o);
		u32(&t, 0);
		bad_thead("rows-limit", "tensor 'x': 1099511627777 rows "
		    "exceed the limit 1099511627776", &t);
		bbfree(&t);

		/* Not streamed, yet dims[0] = 2^64-1. */
		o[0] = MAX64;
		thead(&t, "x", 1, TS_U8, 1, 0, o);
		u32(&t, 0);
		bad_thead("unknown-rows-not-streamed", "tensor 'x': "
		    "18446744073709551615 elements exceed the limit", &t);
		bbfree(&t);
	}

	thead(&t, "x", 1, TS_F64, 2, 1, d);
	u32(&t, 0);
	bad_thead("streamed-dims0", "tensor 'x': streamed tensor must have "
	    "dims[0] = 2^64-1", &t);
	bbfree(&t);

	thead(&t, "x", 1, TS_F64, 0, 1, d);
	u32(&t, 0);
	bad_thead("streamed-scalar", "tensor 'x': a scalar cannot be streamed",
	    &t);
	bbfree(&t);
}

/* Bad vectors about chunks and row counts. */
static void
bad_rows(void)
{
	static const uint64_t d[2] = { 2, 3 }, ds[2] = { MAX64, 3 };
	struct sb s;
	struct bb r = { 0 }, c = { 0 };

	for (int i = 0; i < 6; i++)
		f64(&r, i);

	/* 2 rows of 24 bytes need 56 bytes; the record says 55. */
	s_start(&s);
	s_tensor(&s, "x", TS_F64, 2, d);
	u64(&c, 2);
	put(&c, r.p, r.len - 1);
	s_rec(&s, CHUNK, &c);
	bbfree(&c);
	s.cur = 2;
	s_tend(&s);
	s_end(&s);
	bad("chunk-length", "tensor 'x': chunk record length 55, but 2 rows "
	    "need 56", &s);

	s_start(&s);
	s_tensor(&s, "x", TS_F64, 2, d);
	u32(&c, 0);
	s_rec(&s, CHUNK, &c);
	bbfree(&c);
	s_tend(&s);
	s_end(&s);
	bad("chunk-short", "chunk record length 4 is shorter than its row count",
	    &s);

	/* 2^60 rows of 24 bytes overflow u64. */
	s_start(&s);
	s_tensor(&s, "x", TS_F64, 2, ds);
	u64(&c, UINT64_C(1) << 60);
	s_rec(&s, CHUNK, &c);
	bbfree(&c);
	s_tend(&s);
	s_end(&s);
	bad("chunk-overflow", "tensor 'x': chunk of 1152921504606846976 rows "
	    "overflows", &s);

	s_start(&s);
	s_tensor(&s, "x", TS_F64, 2, d);
	s_chunk(&s, 2, &r);
	s_chunk(&s, 1, &(struct bb){ r.p, 24, 24 });
	s_tend(&s);
	s_end(&s);
	bad("rows-too-many", "tensor 'x': chunks hold more rows than the 2 "
	    "declared", &s);

	s_start(&s);
	s_tensor(&s, "x", TS_F64, 2, d);
	s_chunk(&s, 1, &(struct bb){ r.p, 24, 24 });
	s_tend(&s);
	s_end(&s);
	bad("rows-too-few", "tensor 'x': 2 rows declared, 1 present", &s);

	s_start(&s);
	s_tensor(&s, "x", TS_F64, 2, ds);
	s_chunk(&s, 2, &r);
	s.cur = 5;
	s_tend(&s);
	s.rows = 2;
	s_end(&s);
	bad("tensor-end-count", "tensor 'x': end-of-tensor record counts 5 "
	    "rows, 2 were written", &s);

	s_start(&s);
	s_tensor(&s, "x", TS_F64, 2, d);
	s_chunk(&s, 2, &r);
	u64(&c, 2);
	u64(&c, 0);
	s_rec(&s, TEND, &c);
	bbfree(&c);
	s.rows = 2;
	s_end(&s);
	bad("tensor-end-length", "tensor 'x': end-of-tensor record length 16, "
	    "expected 8", &s);

	s_start(&s);
	s_tensor(&s, "x", TS_F64, 2, d);
	s_chunk(&s, 2, &r);
	s.rows = 2;
	s_end(&s);
	bad("tensor-end-missing", "tensor 'x': record type 5 before its "
	    "end-of-tensor record", &s);

	s_start(&s);
	s_tensor(&s, "x", TS_F64, 2, d);
	s_chunk(&s, 2, &r);
	s_x(&s, "y");
	s_end(&s);
	bad("tensor-end-missing-next", "tensor 'x': record type 2 before its "
	    "end-of-tensor record", &s);

	s_start(&s);
	s_tensor(&s, "x", TS_F64, 2, d);
	s_meta(&s, "a", "b", NULL);
	s_chunk(&s, 2, &r);
	s_tend(&s);
	s_end(&s);
	bad("meta-inside-tensor", "tensor 'x': record type 1 before its "
	    "end-of-tensor record", &s);
	bbfree(&r);
}

/* A stream metadata record from a hand-built body. */
static void
bad_meta(const char *name, const char *err, struct bb *m)
{
	struct sb s;

	s_start(&s);
	s_rec(&s, META, m);
	s_end(&s);
	bad(name, err, &s);
	bbfree(m);
}

static void
bad_metas(void)
{
	struct bb m = { 0 };
	char big[300];
	struct sb s;

	u32(&m, 65537);
	bad_meta("meta-count-limit", "stream metadata: metadata count 65537 "
	    "exceeds the limit 65536", &m);

	/* Count says 2, one entry present. */
	u32(&m, 2);
	kv(&m, "a", "b");
	bad_meta("meta-count-short", "metadata key length runs past the end",
	    &m);

	u32(&m, 1);
	kv(&m, "a", "b");
	u8(&m, 0);
	bad_meta("meta-record-long", "stream metadata: 1 unexpected bytes at "
	    "the end of the record", &m);

	u32(&m, 1);
	kv(&m, "Units", "m");
	bad_meta("key-uppercase", "key has a character outside [a-z0-9_.]", &m);

	u32(&m, 1);
	kv(&m, "a-b", "m");
	bad_meta("key-hyphen", "key has a character outside [a-z0-9_.]", &m);

	u32(&m, 1);
	kv_raw(&m, "", 0, 1, "m", 1);
	bad_meta("key-empty", "metadata key length 0 not in 1..255", &m);

	memset(big, 'k', sizeof big);
	u32(&m, 1);
	kv_raw(&m, big, 256, 1, "m", 1);
	bad_meta("key-too-long", "metadata key length 256 not in 1..255", &m);

	u32(&m, 1);
	kv_raw(&m, "a\0b", 3, 1, "m", 1);
	bad_meta("key-nul", "NUL byte in key", &m);

	u32(&m, 1);
	kv(&m, "a..b", "m");
	bad_meta("key-empty-segment", "key has an empty dotted segment", &m);

	u32(&m, 1);
	kv(&m, ".a", "m");
	bad_meta("key-leading-dot", "key has an empty dotted segment", &m);

	u32(&m, 1);
	kv(&m, "a.", "m");
	bad_meta("key-trailing-dot", "key ends with '.'", &m);

	u32(&m, 2);
	kv(&m, "units", "m");
	kv(&m, "units", "m");
	bad_meta("key-duplicate", "stream metadata: duplicate metadata key "
	    "'units'", &m);

	/* The same key in two stream metadata records, even with the same
	 * value. */
	s_start(&s);
	s_meta(&s, "dp.raw.demo", "row-local", NULL);
	s_x(&s, "x");
	s_meta(&s, "dp.raw.demo", "row-local", NULL);
	s_end(&s);
	bad("key-duplicate-records", "stream metadata: duplicate metadata key "
	    "'dp.raw.demo'", &s);

	{
		static const uint64_t d[1] = { 0 };
		u32(&m, 2);
		kv(&m, "units", "m");
		kv(&m, "units", "s");
		s_start(&s);
		s_tensor_m(&s, "x", TS_U8, 1, d, &m);
		s_tend(&s);
		s_end(&s);
		bad("key-duplicate-tensor", "tensor 'x': duplicate metadata key "
		    "'units'", &s);
		bbfree(&m);
	}

	u32(&m, 1);
	kv(&m, "a", "\xff");
	bad_meta("value-not-utf8", "metadata 'a': value is not UTF-8", &m);

	u32(&m, 1);
	kv(&m, "a", "\xc0\xaf");
	bad_meta("value-overlong", "metadata 'a': value is not UTF-8", &m);

	u32(&m, 1);
	kv(&m, "a", "\xed\xa0\x80");
	bad_meta("value-surrogate", "metadata 'a': value is not UTF-8", &m);

	u32(&m, 1);
	kv(&m, "a", "\xf4\x90\x80\x80");
	bad_meta("value-above-10ffff", "metadata 'a': value is not UTF-8", &m);

	u32(&m, 1);
	kv(&m, "a", "caf\xc3");
	bad_meta("value-truncated-utf8", "metadata 'a': value is not UTF-8", &m);

	u32(&m, 1);
	kv_raw(&m, "a", 1, 1, "x\0y", 3);
	bad_meta("value-nul", "metadata 'a': value is not UTF-8 (or has a NUL "
	    "byte)", &m);

	u32(&m, 1);
	kv_raw(&m, "a", 1, 2, "1234", 4);
	bad_meta("value-type-2", "metadata 'a': unknown value type 2", &m);

	u32(&m, 1);
	kv_raw(&m, "a", 1, 0, "1234", 4);
	bad_meta("value-type-0", "metadata 'a': unknown value type 0", &m);

	u32(&m, 1);
	u16(&m, 1);
	put(&m, "a", 1);
	u8(&m, 1);
	u32(&m, (1u << 20) + 1);
	put(&m, "xyz", 3);
	bad_meta("value-length-limit", "metadata 'a': value length 1048577 "
	    "exceeds the limit 1048576", &m);

	u32(&m, 1);
	u16(&m, 1);
	put(&m, "a", 1);
	u8(&m, 1);
	u32(&m, 10);
	put(&m, "xyz", 3);
	bad_meta("value-runs-past", "metadata value runs past the end of its "
	    "record", &m);
}

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mkvectors dir\n");
		return 64;
	}
	outdir = argv[1];
	good_vectors();
	example();
	bad_frames();
	bad_records();
	bad_tensors();
	bad_rows();
	bad_metas();
	return 0;
}
