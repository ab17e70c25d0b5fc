/*
 * tstream.c: tensor stream reader and writer (formats/tensor-stream.md).
 *
 * The reader pulls compressed bytes with fread, checks each zstd frame's
 * header itself (content checksum flag, no skippable frames) before zstd
 * sees it, and parses records from the decompressed bytes.  Large row
 * reads decompress straight into the caller's buffer.  Every size read
 * from the input is checked against a limit before anything is allocated,
 * and every product goes through ck.h.
 *
 * Asynchronous mode (ts_writer_set_async, ts_reader_set_async) moves work
 * to one helper thread without changing a byte or a message: the writer's
 * thread makes the ZSTD_compressStream2 calls the caller's thread would
 * have made, in the same order, and writes; the reader's thread only
 * freads compressed input ahead (everything else, frame checks included,
 * stays in the caller's thread, so every error is found where it was).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define ZSTD_STATIC_LINKING_ONLY	/* ZSTD_getFrameHeader: window size */
#include <zstd.h>
#include <zstd_errors.h>

#include "ck.h"
#include "tstream.h"

/* Decompressed layout constants (spec sections 3 and 4). */
static const unsigned char MAGIC[8] = { 0x93, 'T', 'N', 'S', 0x0D, 0x0A, 0x1A, 0x0A };
#define HDR_BYTES 12		/* magic, major, minor, u16 flags */
#define REC_BYTES 16		/* u32 type, u32 flags, u64 body length */
enum rec_type {
	REC_META = 1,
	REC_TENSOR = 2,
	REC_CHUNK = 3,
	REC_TENSOR_END = 4,
	REC_END = 5
};
#define REC_ANCILLARY 0x80	/* types with this bit may be skipped */
#define FLAG_STREAMED 1		/* tensor flag: dims[0] unknown until the end */
#define VAL_UTF8 1		/* metadata value type */

#define ZSTD_MAGIC 0xFD2FB528u
#define IN_CAP (1u << 17)
#define DIRECT_MIN (1u << 14)	/* reads this large bypass the bounce buffer */
#define PEEK_MIN (1u << 20)	/* rows this large are proven present before
				 * ts_read_next hands out their header */

enum rd_state { RS_START, RS_BETWEEN, RS_TENSOR, RS_DONE, RS_ERROR };

struct ts_reader {
	FILE *fp;
	char label[256];
	ZSTD_DCtx *dz;
	unsigned char *in;	/* in_own, or a read-ahead block lent */
	unsigned char *in_own;
	size_t in_pos, in_len;
	int in_eof;
	uint64_t in_off;	/* compressed bytes consumed before in[0] */
	unsigned char *out;	/* decompressed bytes not yet parsed */
	size_t out_cap, out_pos, out_len;
	size_t zret;		/* 0: at a frame boundary */
	uint64_t nframes;
	uint64_t off;		/* decompressed bytes parsed */
	struct ts_xxh64 digest;
	int have_version;	/* the header's version bytes were read */
	unsigned char version[2];

	int state, err;
	uint64_t max_header, max_bytes;
	/* current tensor */
	char cur_name[TS_MAX_NAME + 1];
	uint64_t cur_dims0, cur_rowbytes, cur_rows, chunk_left;
	int cur_streamed;
	int peeked_end;		/* ts_read_next's look-ahead read the end */
	/* counts for the end record */
	uint64_t nrecords, ntensors, total_rows;
	struct ts_meta names;	/* a set: tensor names seen (hashed) */
	struct ts_meta meta;
	struct arq *aq;		/* the read-ahead thread, or NULL */
	char msg[768];
};

const char *
ts_strerror(int code)
{
	switch (code) {
	case TS_OK:
		return "success";
	case TS_E_IO:
		return "I/O error";
	case TS_E_NOMEM:
		return "out of memory";
	case TS_E_ZSTD:
		return "corrupt zstd data";
	case TS_E_TRUNCATED:
		return "truncated input";
	case TS_E_FORMAT:
		return "malformed stream";
	case TS_E_VERSION:
		return "unsupported version";
	case TS_E_LIMIT:
		return "size limit exceeded";
	case TS_E_OVERFLOW:
		return "size overflow";
	case TS_E_CHECKSUM:
		return "checksum error";
	case TS_E_USAGE:
		return "invalid use of the API";
	default:
		return "unknown error";
	}
}

static uint16_t
get16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t
get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static uint64_t
get64(const unsigned char *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void
put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static void
put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void
put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* ---- reader ---- */

__attribute__((format(printf, 4, 5))) static int
rfail(struct ts_reader *r, int code, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (r->state == RS_ERROR)
		return r->err;
	n = snprintf(r->msg, sizeof r->msg, "%s: offset %llu: ", r->label,
	    (unsigned long long)off);
	if (n < 0)
		n = 0;
	va_start(ap, fmt);
	vsnprintf(r->msg + n, sizeof r->msg - (size_t)n, fmt, ap);
	va_end(ap);
	r->state = RS_ERROR;
	r->err = code;
	return code;
}

struct ts_reader *
ts_reader_open(FILE *fp, const char *label)
{
	struct ts_reader *r = calloc(1, sizeof *r);

	if (r == NULL)
		return NULL;
	r->fp = fp;
	snprintf(r->label, sizeof r->label, "%s", label ? label : "<stdin>");
	r->dz = ZSTD_createDCtx();
	r->in = r->in_own = malloc(IN_CAP);
	r->out_cap = ZSTD_DStreamOutSize();
	r->out = malloc(r->out_cap);
	if (!r->dz || !r->in || !r->out ||
	    ZSTD_isError(ZSTD_DCtx_setParameter(r->dz, ZSTD_d_windowLogMax,
	    TS_WINDOW_LOG_MAX))) {
		ts_reader_close(r);
		return NULL;
	}
	r->max_header = TS_MAX_HEADER;
	r->max_bytes = TS_MAX_BYTES;
	ts_xxh64_init(&r->digest, 0);
	return r;
}

static void ar_stop(struct ts_reader *r);

void
ts_reader_close(struct ts_reader *r)
{
	if (r == NULL)
		return;
	if (r->aq != NULL)
		ar_stop(r);
	ZSTD_freeDCtx(r->dz);
	free(r->in_own);
	free(r->out);
	ts_meta_free(&r->names);
	ts_meta_free(&r->meta);
	free(r);
}

void
ts_reader_set_limits(struct ts_reader *r, uint64_t max_header, uint64_t max_bytes)
{
	if (max_header)
		r->max_header = max_header;
	if (max_bytes)
		r->max_bytes = max_bytes;
}

/*
 * The one helper thread of an asynchronous reader or writer: its lock,
 * the condition its consumer waits on (put) and the one it waits on
 * (get), and the stop flag.
 */
struct helper {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t put, get;
	int stop;
};

/* Initialise h and start fn(arg) on it.  @return 0, or -1 with nothing
 * left to free in h. */
static int
helper_start(struct helper *h, void *(*fn)(void *), void *arg)
{
	if (pthread_mutex_init(&h->mu, NULL) != 0)
		return -1;
	if (pthread_cond_init(&h->put, NULL) != 0)
		goto mu;
	if (pthread_cond_init(&h->get, NULL) != 0)
		goto put;
	if (pthread_create(&h->th, NULL, fn, arg) != 0)
		goto get;
	return 0;
get:
	pthread_cond_destroy(&h->get);
put:
	pthread_cond_destroy(&h->put);
mu:
	pthread_mutex_destroy(&h->mu);
	return -1;
}

/* Set the stop flag, wake the thread (it waits on *wake), join it and
 * release h. */
static void
helper_stop(struct helper *h, pthread_cond_t *wake)
{
	pthread_mutex_lock(&h->mu);
	h->stop = 1;
	pthread_cond_signal(wake);
	pthread_mutex_unlock(&h->mu);
	pthread_join(h->th, NULL);
	pthread_mutex_destroy(&h->mu);
	pthread_cond_destroy(&h->put);
	pthread_cond_destroy(&h->get);
}

/*
 * The read-ahead thread freads the input into AR_NBLK blocks of AR_BLK
 * bytes; in_more copies from them instead of calling fread.  A short
 * fread ends the thread: at the end of the input, or at a read error,
 * whose errno in_more reports once the bytes before it are consumed,
 * where the synchronous reader's fread would have failed.  The thread
 * also hashes each block and keeps the digest before it, from which
 * ts_reader_digest computes the digest of the bytes taken so far.
 */
#define AR_BLK (1u << 20)
#define AR_NBLK 4

struct arq {
	struct helper h;	/* put: a block consumed, or stop; get: a
				 * block filled, or the end */
	unsigned char *blk[AR_NBLK];
	size_t len[AR_NBLK];
	size_t head, filled, pos;	/* first full block, full blocks,
					 * bytes taken from the first */
	struct ts_xxh64 before[AR_NBLK];	/* digest before each block */
	struct ts_xxh64 run;	/* digest of every block read */
	int done, ferr, eno;
};

static void *
ar_main(void *arg)
{
	struct ts_reader *r = arg;
	struct arq *q = r->aq;
	struct ts_xxh64 run, before;

	pthread_mutex_lock(&q->h.mu);
	run = q->run;
	while (!q->h.stop) {
		size_t i, n;
		int ferr, eno;

		if (q->filled == AR_NBLK) {
			pthread_cond_wait(&q->h.put, &q->h.mu);
			continue;
		}
		i = (q->head + q->filled) % AR_NBLK;
		pthread_mutex_unlock(&q->h.mu);
		errno = 0;
		n = fread(q->blk[i], 1, AR_BLK, r->fp);
		eno = errno;
		ferr = n < AR_BLK && ferror(r->fp);
		before = run;
		ts_xxh64_update(&run, q->blk[i], n);
		pthread_mutex_lock(&q->h.mu);
		q->before[i] = before;
		q->run = run;
		q->len[i] = n;
		if (n > 0)
			q->filled++;
		if (n < AR_BLK) {
			q->done = 1;
			q->ferr = ferr;
			q->eno = eno;
		}
		pthread_cond_signal(&q->h.get);
		if (q->done)
			break;
	}
	pthread_mutex_unlock(&q->h.mu);
	return NULL;
}

/* Copy up to cap read-ahead bytes to dst.  @return the bytes copied; 0
 * at the end of the input, with *eno set (nonzero) if a read failed. */
static size_t
ar_take(struct ts_reader *r, unsigned char *dst, size_t cap, int *eno)
{
	struct arq *q = r->aq;
	const unsigned char *p;
	size_t k;

	pthread_mutex_lock(&q->h.mu);
	while (q->filled == 0 && !q->done)
		pthread_cond_wait(&q->h.get, &q->h.mu);
	if (q->filled == 0) {
		*eno = q->ferr ? (q->eno ? q->eno : EIO) : 0;
		pthread_mutex_unlock(&q->h.mu);
		return 0;
	}
	p = q->blk[q->head] + q->pos;
	k = q->len[q->head] - q->pos;
	pthread_mutex_unlock(&q->h.mu);
	if (k > cap)
		k = cap;
	memcpy(dst, p, k);
	pthread_mutex_lock(&q->h.mu);
	q->pos += k;
	if (q->pos == q->len[q->head]) {
		q->head = (q->head + 1) % AR_NBLK;
		q->filled--;
		q->pos = 0;
		pthread_cond_signal(&q->h.put);
	}
	pthread_mutex_unlock(&q->h.mu);
	return k;
}

static void
ar_free(struct arq *q)
{
	for (int i = 0; i < AR_NBLK; i++)
		free(q->blk[i]);
	free(q);
}

static void
ar_stop(struct ts_reader *r)
{
	helper_stop(&r->aq->h, &r->aq->h.put);
	ar_free(r->aq);
	r->aq = NULL;
}

int
ts_reader_set_async(struct ts_reader *r, int on)
{
	struct arq *q;

	if (r->state == RS_ERROR)
		return r->err;
	if (r->aq != NULL || !on)
		return 0;
	if (r->state != RS_START || r->in_len != 0 || r->in_off != 0)
		return rfail(r, TS_E_USAGE, r->off, "read-ahead enabled after "
		    "the first read");
	if ((q = calloc(1, sizeof *q)) == NULL)
		return 0;
	for (int i = 0; i < AR_NBLK; i++)
		if ((q->blk[i] = malloc(AR_BLK)) == NULL) {
			ar_free(q);
			return 0;
		}
	q->run = r->digest;
	r->aq = q;
	if (helper_start(&q->h, ar_main, r) != 0) {
		ar_free(q);
		r->aq = NULL;
	}
	return 0;
}

/* in_more with read-ahead.  When every byte of in was consumed (the
 * usual case), the next block is lent as in, without a copy, until the
 * next call gives it back; otherwise (a frame header split between
 * blocks: fewer than ZSTD_FRAMEHEADERSIZE_MAX bytes left) the bytes left
 * and the next ones are copied to in_own. */
static int
ar_more(struct ts_reader *r)
{
	struct arq *q = r->aq;
	size_t left = r->in_len - r->in_pos, n;
	int eno = 0;

	if (left > IN_CAP / 2)
		return rfail(r, TS_E_USAGE, r->off, "internal error: %zu "
		    "unconsumed input bytes", left);
	r->in_off += r->in_pos;
	memmove(r->in_own, r->in + r->in_pos, left);
	r->in_len = left;
	r->in_pos = 0;
	if (r->in != r->in_own) {
		/* Give the lent block back. */
		r->in = r->in_own;
		pthread_mutex_lock(&q->h.mu);
		q->head = (q->head + 1) % AR_NBLK;
		q->filled--;
		q->pos = 0;
		pthread_cond_signal(&q->h.put);
		pthread_mutex_unlock(&q->h.mu);
	}
	if (left > 0) {
		n = ar_take(r, r->in + left, IN_CAP - left, &eno);
	} else {
		pthread_mutex_lock(&q->h.mu);
		while (q->filled == 0 && !q->done)
			pthread_cond_wait(&q->h.get, &q->h.mu);
		if (q->filled == 0) {
			eno = q->ferr ? (q->eno ? q->eno : EIO) : 0;
			n = 0;
		} else {
			r->in = q->blk[q->head] + q->pos;
			n = q->len[q->head] - q->pos;
			q->pos = q->len[q->head];
		}
		pthread_mutex_unlock(&q->h.mu);
	}
	if (n == 0) {
		if (eno != 0)
			return rfail(r, TS_E_IO, r->off, "read error: %s",
			    strerror(eno));
		r->in_eof = 1;
	}
	r->in_len += n;
	return 0;
}

/* Read more compressed input, keeping unconsumed bytes. */
static int
in_more(struct ts_reader *r)
{
	size_t n;

	if (r->aq != NULL)
		return ar_more(r);
	if (r->in_pos > 0) {
		memmove(r->in, r->in + r->in_pos, r->in_len - r->in_pos);
		r->in_off += r->in_pos;
		r->in_len -= r->in_pos;
		r->in_pos = 0;
	}
	n = fread(r->in + r->in_len, 1, IN_CAP - r->in_len, r->fp);
	if (n == 0) {
		if (ferror(r->fp))
			return rfail(r, TS_E_IO, r->off, "read error: %s",
			    strerror(errno));
		r->in_eof = 1;
	}
	ts_xxh64_update(&r->digest, r->in + r->in_len, n);
	r->in_len += n;
	return 0;
}

/* At a frame boundary: check the next frame's header.
 * @return 1 when a frame starts, 0 at a clean end of input, or an error. */
static int
frame_start(struct ts_reader *r)
{
	uint64_t at;
	uint32_t magic;
	int rc;

	while (r->in_len - r->in_pos < ZSTD_FRAMEHEADERSIZE_MAX && !r->in_eof)
		if ((rc = in_more(r)) != 0)
			return rc;
	at = r->in_off + r->in_pos;
	if (r->in_len == r->in_pos) {
		if (r->nframes == 0)
			return rfail(r, TS_E_TRUNCATED, r->off,
			    "empty input: not a tensor stream");
		return 0;
	}
	if (r->in_len - r->in_pos < 5)
		return rfail(r, TS_E_TRUNCATED, r->off,
		    "input byte %llu: truncated zstd frame header",
		    (unsigned long long)at);
	magic = get32(r->in + r->in_pos);
	if ((magic & 0xFFFFFFF0u) == 0x184D2A50u)
		return rfail(r, TS_E_FORMAT, r->off,
		    "input byte %llu: skippable zstd frame (not allowed in a "
		    "tensor stream)", (unsigned long long)at);
	if (magic != ZSTD_MAGIC)
		return rfail(r, TS_E_FORMAT, r->off, r->nframes == 0 ?
		    "input byte %llu: not zstd-compressed (frame magic 0x%08x); "
		    "is this a tensor stream?" :
		    "input byte %llu: trailing bytes after the last zstd frame "
		    "(magic 0x%08x)", (unsigned long long)at, magic);
	/* Frame header descriptor, bit 2: content checksum flag (RFC 8878 3.1.1.1.1). */
	if (!(r->in[r->in_pos + 4] & 0x04))
		return rfail(r, TS_E_CHECKSUM, r->off,
		    "input byte %llu: zstd frame without content checksum "
		    "(writers must set it)", (unsigned long long)at);
	/* The window is checked here, before zstd allocates it: a
	 * single-segment frame's window is its whole declared content. */
	{
		ZSTD_frameHeader fh;
		size_t z = ZSTD_getFrameHeader(&fh, r->in + r->in_pos,
		    r->in_len - r->in_pos);
		if (ZSTD_isError(z))
			return rfail(r, TS_E_ZSTD, r->off, "input byte %llu: "
			    "bad zstd frame header: %s", (unsigned long long)at,
			    ZSTD_getErrorName(z));
		if (z > 0)
			return rfail(r, TS_E_TRUNCATED, r->off, "input byte "
			    "%llu: truncated zstd frame header",
			    (unsigned long long)at);
		if (fh.windowSize > (UINT64_C(1) << TS_WINDOW_LOG_MAX))
			return rfail(r, TS_E_LIMIT, r->off, "input byte %llu: "
			    "zstd window of %llu bytes exceeds the limit 2^%d",
			    (unsigned long long)at,
			    (unsigned long long)fh.windowSize, TS_WINDOW_LOG_MAX);
	}
	r->nframes++;
	r->zret = 1;
	return 1;
}

/* Decompress into ob until some output is produced.
 * @return 1 with output, 0 at a clean end of input, or an error. */
static int
dz_step(struct ts_reader *r, ZSTD_outBuffer *ob)
{
	size_t before = ob->pos;
	int rc;

	for (;;) {
		if (r->zret == 0) {
			if ((rc = frame_start(r)) <= 0)
				return rc;
		}
		/* Call zstd even without new input: it may hold output that
		 * did not fit the last buffer. */
		ZSTD_inBuffer ib = { r->in, r->in_len, r->in_pos };
		size_t z = ZSTD_decompressStream(r->dz, ob, &ib);
		int progressed = ib.pos != r->in_pos;
		r->in_pos = ib.pos;
		if (ZSTD_isError(z)) {
			ZSTD_ErrorCode ec = ZSTD_getErrorCode(z);
			if (ec == ZSTD_error_checksum_wrong)
				return rfail(r, TS_E_CHECKSUM, r->off,
				    "zstd content checksum mismatch (corrupt "
				    "data)");
			if (ec == ZSTD_error_frameParameter_windowTooLarge)
				return rfail(r, TS_E_LIMIT, r->off,
				    "zstd window larger than 2^%d bytes",
				    TS_WINDOW_LOG_MAX);
			return rfail(r, TS_E_ZSTD, r->off, "zstd: %s",
			    ZSTD_getErrorName(z));
		}
		r->zret = z;
		if (ob->pos > before || ob->pos == ob->size)
			return 1;
		if (z == 0)
			continue;
		if (r->in_pos < r->in_len) {
			if (!progressed)
				return rfail(r, TS_E_ZSTD, r->off,
				    "zstd decoder made no progress");
			continue;
		}
		if (r->in_eof)
			return rfail(r, TS_E_TRUNCATED, r->off,
			    "input ends inside a zstd frame (truncated stream)");
		if ((rc = in_more(r)) != 0)
			return rc;
	}
}

/* Read exactly n decompressed bytes into dst (NULL discards them). */
static int
rd(struct ts_reader *r, void *dst, size_t n, const char *what)
{
	unsigned char *d = dst;
	int rc;

	while (n > 0) {
		if (r->out_pos < r->out_len) {
			size_t k = r->out_len - r->out_pos;
			if (k > n)
				k = n;
			if (d) {
				memcpy(d, r->out + r->out_pos, k);
				d += k;
			}
			r->out_pos += k;
			r->off += k;
			n -= k;
			continue;
		}
		if (d && n >= DIRECT_MIN) {
			ZSTD_outBuffer ob = { d, n, 0 };
			rc = dz_step(r, &ob);
			d += ob.pos;
			n -= ob.pos;
			r->off += ob.pos;
		} else {
			ZSTD_outBuffer ob;
			if (r->out_cap > ZSTD_DStreamOutSize()) {
				/* A look-ahead grew it: give the memory back. */
				unsigned char *p = realloc(r->out,
				    ZSTD_DStreamOutSize());
				if (p != NULL) {
					r->out = p;
					r->out_cap = ZSTD_DStreamOutSize();
				}
			}
			ob = (ZSTD_outBuffer){ r->out, r->out_cap, 0 };
			rc = dz_step(r, &ob);
			r->out_pos = 0;
			r->out_len = ob.pos;
		}
		if (rc < 0)
			return rc;
		if (rc == 0)
			return rfail(r, TS_E_TRUNCATED, r->off,
			    "stream ends inside %s (truncated; the writer may "
			    "have failed)", what);
	}
	return 0;
}

/* Decompress ahead until n bytes wait in out, growing it with the data
 * that arrives (never to n at once): a declared size that the input does
 * not hold fails as truncated, not as out of memory. */
static int
buffer_ahead(struct ts_reader *r, size_t n, const char *what)
{
	int rc;

	if (r->out_pos > 0) {
		memmove(r->out, r->out + r->out_pos, r->out_len - r->out_pos);
		r->out_len -= r->out_pos;
		r->out_pos = 0;
	}
	while (r->out_len < n) {
		if (r->out_len == r->out_cap) {
			size_t nc = r->out_cap > SIZE_MAX / 2 ? SIZE_MAX :
			    r->out_cap * 2;
			unsigned char *p;
			if (nc > n)
				nc = n;
			if ((p = realloc(r->out, nc)) == NULL)
				return rfail(r, TS_E_NOMEM, r->off,
				    "out of memory reading %s", what);
			r->out = p;
			r->out_cap = nc;
		}
		ZSTD_outBuffer ob = { r->out + r->out_len,
		    r->out_cap - r->out_len, 0 };
		rc = dz_step(r, &ob);
		r->out_len += ob.pos;
		if (rc < 0)
			return rc;
		if (rc == 0)
			return rfail(r, TS_E_TRUNCATED, r->off + r->out_len,
			    "stream ends inside %s (truncated; the writer may "
			    "have failed)", what);
	}
	return 0;
}

/* Bounded little-endian cursor over a record body. */
struct cur {
	const unsigned char *p;
	size_t left;
	uint64_t off;
};

static int
take(struct ts_reader *r, struct cur *c, size_t n, const unsigned char **out,
    const char *what)
{
	if (c->left < n)
		return rfail(r, TS_E_FORMAT, c->off,
		    "%s runs past the end of its record", what);
	*out = c->p;
	c->p += n;
	c->left -= n;
	c->off += n;
	return 0;
}

/* Parse a metadata block into m, rejecting keys already in m. */
static int
parse_meta(struct ts_reader *r, struct cur *c, struct ts_meta *m,
    const char *where)
{
	const unsigned char *p = NULL;
	uint32_t count;
	char key[TS_MAX_KEY + 1];
	int rc;

	if ((rc = take(r, c, 4, &p, "metadata count")) != 0)
		return rc;
	count = get32(p);
	if (count > TS_MAX_META)
		return rfail(r, TS_E_LIMIT, c->off - 4,
		    "%s: metadata count %u exceeds the limit %u", where,
		    count, TS_MAX_META);
	for (uint32_t i = 0; i < count; i++) {
		uint64_t koff = c->off;
		uint16_t kl;
		uint32_t vl;
		const char *bad;

		if ((rc = take(r, c, 2, &p, "metadata key length")) != 0)
			return rc;
		kl = get16(p);
		if (kl == 0 || kl > TS_MAX_KEY)
			return rfail(r, TS_E_FORMAT, koff,
			    "%s: metadata key length %u not in 1..%u", where,
			    kl, TS_MAX_KEY);
		if ((rc = take(r, c, kl, &p, "metadata key")) != 0)
			return rc;
		memcpy(key, p, kl);
		key[kl] = '\0';
		if (memchr(key, 0, kl) || (bad = ts_check_key(key)) != NULL)
			return rfail(r, TS_E_FORMAT, koff,
			    "%s: metadata key: %s", where,
			    memchr(key, 0, kl) ? "NUL byte in key" : bad);
		if (ts_meta_get(m, key) != NULL)
			return rfail(r, TS_E_FORMAT, koff,
			    "%s: duplicate metadata key '%s'", where, key);
		if ((rc = take(r, c, 5, &p, "metadata value header")) != 0)
			return rc;
		if (p[0] != VAL_UTF8)
			return rfail(r, TS_E_FORMAT, c->off - 5,
			    "%s: metadata '%s': unknown value type %u", where,
			    key, p[0]);
		vl = get32(p + 1);
		if (vl > TS_MAX_VALUE)
			return rfail(r, TS_E_LIMIT, c->off - 4,
			    "%s: metadata '%s': value length %u exceeds the "
			    "limit %u", where, key, vl, TS_MAX_VALUE);
		if ((rc = take(r, c, vl, &p, "metadata value")) != 0)
			return rc;
		if (!ts_utf8_valid((const char *)p, vl))
			return rfail(r, TS_E_FORMAT, c->off - vl,
			    "%s: metadata '%s': value is not UTF-8 (or has a "
			    "NUL byte)", where, key);
		char *v = malloc((size_t)vl + 1);
		if (v == NULL)
			return rfail(r, TS_E_NOMEM, c->off, "out of memory");
		memcpy(v, p, vl);
		v[vl] = '\0';
		rc = ts_meta_set(m, key, v);
		free(v);
		if (rc != 0)
			return rfail(r, TS_E_NOMEM, c->off, "out of memory");
	}
	return 0;
}

/* Read a record header.  *type, *len set. */
static int
rec_header(struct ts_reader *r, uint32_t *type, uint64_t *len)
{
	unsigned char h[REC_BYTES];
	uint64_t at = r->off;
	int rc;

	if ((rc = rd(r, h, sizeof h, "a record header")) != 0)
		return rc;
	*type = get32(h);
	*len = get64(h + 8);
	if (get32(h + 4) != 0)
		return rfail(r, TS_E_FORMAT, at + 4,
		    "record flags 0x%08x: must be zero", get32(h + 4));
	return 0;
}

/* Read a header-like record body of len bytes into a fresh buffer. */
static int
rec_body(struct ts_reader *r, uint64_t len, unsigned char **body,
    const char *what)
{
	if (len > r->max_header)
		return rfail(r, TS_E_LIMIT, r->off - 8,
		    "%s record length %llu exceeds the limit %llu", what,
		    (unsigned long long)len, (unsigned long long)r->max_header);
	*body = malloc(len ? (size_t)len : 1);
	if (*body == NULL)
		return rfail(r, TS_E_NOMEM, r->off, "out of memory");
	char inside[64];
	snprintf(inside, sizeof inside, "a %s record", what);
	int rc = rd(r, *body, (size_t)len, inside);
	if (rc != 0) {
		free(*body);
		*body = NULL;
	}
	return rc;
}

static int
stream_header(struct ts_reader *r)
{
	unsigned char h[HDR_BYTES];
	int rc;

	if ((rc = rd(r, h, sizeof h, "the stream header")) != 0)
		return rc;
	if (memcmp(h, MAGIC, sizeof MAGIC) != 0)
		return rfail(r, TS_E_FORMAT, 0,
		    "bad magic: zstd data that is not a tensor stream");
	r->version[0] = h[8];
	r->version[1] = h[9];
	r->have_version = 1;
	if (h[8] != TS_VERSION_MAJOR)
		return rfail(r, TS_E_VERSION, 8,
		    "version %u.%u: this reader supports major version %u",
		    h[8], h[9], TS_VERSION_MAJOR);
	/* A higher minor version is readable; its flag bits are ignored. */
	if (h[9] <= TS_VERSION_MINOR && get16(h + 10) != 0)
		return rfail(r, TS_E_FORMAT, 10,
		    "header flags 0x%04x: must be zero", get16(h + 10));
	r->state = RS_BETWEEN;
	return 0;
}

static int
parse_tensor(struct ts_reader *r, unsigned char *body, uint64_t len,
    uint64_t at, struct tensor *hdr)
{
	struct cur c = { body, (size_t)len, at };
	const unsigned char *p = NULL;
	uint16_t nl, flags;
	int rc, dtype, ndim;
	const char *bad;
	char where[TS_MAX_NAME + 16];
	uint64_t el, rb;

	memset(hdr, 0, sizeof *hdr);
	if ((rc = take(r, &c, 2, &p, "tensor name length")) != 0)
		return rc;
	nl = get16(p);
	if (nl == 0 || nl > TS_MAX_NAME)
		return rfail(r, TS_E_FORMAT, at, "tensor name length %u not in "
		    "1..%u", nl, TS_MAX_NAME);
	if ((rc = take(r, &c, nl, &p, "tensor name")) != 0)
		return rc;
	memcpy(hdr->name, p, nl);
	hdr->name[nl] = '\0';
	if (memchr(p, 0, nl) || (bad = ts_check_name(hdr->name)) != NULL)
		return rfail(r, TS_E_FORMAT, at + 2, "tensor name: %s",
		    memchr(p, 0, nl) ? "NUL byte in name" : bad);
	snprintf(where, sizeof where, "tensor '%s'", hdr->name);
	if (ts_meta_get(&r->names, hdr->name) != NULL)
		return rfail(r, TS_E_FORMAT, at + 2,
		    "%s: duplicate tensor name", where);
	if (r->ntensors >= TS_MAX_TENSORS)
		return rfail(r, TS_E_LIMIT, at, "more than %d tensors",
		    TS_MAX_TENSORS);
	if ((rc = take(r, &c, 4, &p, "tensor dtype/ndim/flags")) != 0)
		return rc;
	dtype = p[0];
	ndim = p[1];
	flags = get16(p + 2);
	if (ts_dtype_size(dtype) == 0)
		return rfail(r, TS_E_FORMAT, c.off - 4,
		    "%s: unknown dtype code %d", where, dtype);
	if (ndim > TS_MAX_NDIM)
		return rfail(r, TS_E_FORMAT, c.off - 3,
		    "%s: ndim %d exceeds the maximum %d", where, ndim,
		    TS_MAX_NDIM);
	if (flags & ~FLAG_STREAMED)
		return rfail(r, TS_E_FORMAT, c.off - 2,
		    "%s: unknown tensor flags 0x%04x", where, flags);
	if ((flags & FLAG_STREAMED) && ndim == 0)
		return rfail(r, TS_E_FORMAT, c.off - 2,
		    "%s: a scalar cannot be streamed by rows", where);
	hdr->dtype = dtype;
	hdr->ndim = ndim;
	for (int i = 0; i < ndim; i++) {
		if ((rc = take(r, &c, 8, &p, "tensor dims")) != 0)
			return rc;
		hdr->dims[i] = get64(p);
	}
	if (flags & FLAG_STREAMED) {
		if (hdr->dims[0] != TS_UNKNOWN_ROWS)
			return rfail(r, TS_E_FORMAT, c.off - 8u * (unsigned)ndim,
			    "%s: streamed tensor must have dims[0] = 2^64-1",
			    where);
		if (tensor_row_bytes(hdr, &rb) != 0 || ck_prod_u64(hdr->dims
		    + 1, ndim - 1, &el) != 0)
			return rfail(r, TS_E_OVERFLOW, c.off, "%s: row size "
			    "overflows", where);
	} else {
		if (tensor_elems(hdr, &el) != 0 || tensor_bytes(hdr, &rb) != 0)
			return rfail(r, TS_E_OVERFLOW, c.off,
			    "%s: product of dims overflows", where);
		if (el > TS_MAX_ELEMS)
			return rfail(r, TS_E_LIMIT, c.off,
			    "%s: %llu elements exceed the limit %llu", where,
			    (unsigned long long)el,
			    (unsigned long long)TS_MAX_ELEMS);
		if (tensor_row_bytes(hdr, &rb) != 0)
			return rfail(r, TS_E_OVERFLOW, c.off, "%s: row size "
			    "overflows", where);
	}
	if (el > TS_MAX_ELEMS)
		return rfail(r, TS_E_LIMIT, c.off,
		    "%s: row of %llu elements exceeds the limit", where,
		    (unsigned long long)el);
	if (!(flags & FLAG_STREAMED) && ndim > 0 && hdr->dims[0] > TS_MAX_ELEMS)
		return rfail(r, TS_E_LIMIT, c.off, "%s: %llu rows exceed the "
		    "limit %llu", where, (unsigned long long)hdr->dims[0],
		    (unsigned long long)TS_MAX_ELEMS);
	if ((rc = parse_meta(r, &c, &hdr->meta, where)) != 0)
		return rc;
	if (c.left != 0)
		return rfail(r, TS_E_FORMAT, c.off,
		    "%s: %zu unexpected bytes at the end of the header", where,
		    c.left);
	if (ts_meta_set(&r->names, hdr->name, "") != 0)
		return rfail(r, TS_E_NOMEM, c.off, "out of memory");
	r->ntensors++;
	snprintf(r->cur_name, sizeof r->cur_name, "%s", hdr->name);
	r->cur_streamed = (flags & FLAG_STREAMED) != 0;
	r->cur_dims0 = r->cur_streamed ? TS_UNKNOWN_ROWS : tensor_rows(hdr);
	r->cur_rowbytes = rb;
	r->cur_rows = 0;
	r->chunk_left = 0;
	return 0;
}

static int
skip_ancillary(struct ts_reader *r, uint32_t type, uint64_t len)
{
	if (!(type & REC_ANCILLARY))
		return rfail(r, TS_E_FORMAT, r->off - REC_BYTES,
		    "unknown record type %u", type);
	if (len > r->max_header)
		return rfail(r, TS_E_LIMIT, r->off - 8, "ancillary record "
		    "length %llu exceeds the limit", (unsigned long long)len);
	r->nrecords++;
	return rd(r, NULL, (size_t)len, "an ancillary record");
}

/* After the end record: nothing may follow, in this frame or after it. */
static int
check_trailing(struct ts_reader *r)
{
	unsigned char b[64];
	int rc;

	if (r->out_pos < r->out_len)
		return rfail(r, TS_E_FORMAT, r->off,
		    "trailing bytes after the end record");
	for (;;) {
		ZSTD_outBuffer ob = { b, sizeof b, 0 };
		rc = dz_step(r, &ob);
		if (rc < 0)
			return rc;
		if (ob.pos > 0)
			return rfail(r, TS_E_FORMAT, r->off,
			    "trailing bytes after the end record");
		if (rc == 0)
			return 0;
	}
}

static int
end_record(struct ts_reader *r, uint64_t len)
{
	unsigned char b[24];
	uint64_t at = r->off;
	int rc;

	if (len != sizeof b)
		return rfail(r, TS_E_FORMAT, at - 8,
		    "end record length %llu, expected 24",
		    (unsigned long long)len);
	if ((rc = rd(r, b, sizeof b, "the end record")) != 0)
		return rc;
	if (get64(b) != r->nrecords)
		return rfail(r, TS_E_FORMAT, at, "end record counts %llu "
		    "records, the stream has %llu", (unsigned long long)get64(b),
		    (unsigned long long)r->nrecords);
	if (get64(b + 8) != r->ntensors)
		return rfail(r, TS_E_FORMAT, at + 8, "end record counts %llu "
		    "tensors, the stream has %llu",
		    (unsigned long long)get64(b + 8),
		    (unsigned long long)r->ntensors);
	if (get64(b + 16) != r->total_rows)
		return rfail(r, TS_E_FORMAT, at + 16, "end record counts %llu "
		    "rows, the stream has %llu",
		    (unsigned long long)get64(b + 16),
		    (unsigned long long)r->total_rows);
	if ((rc = check_trailing(r)) != 0)
		return rc;
	r->state = RS_DONE;
	return 0;
}

static int next_chunk(struct ts_reader *r);

/* The first row of the tensor just begun is in the input: a row larger
 * than PEEK_MIN is buffered before a caller allocates one (spec section
 * 11: buffers grow with the data present).  @return 0 or an error. */
static int
first_row_present(struct ts_reader *r)
{
	int rc;

	if (r->cur_rowbytes <= PEEK_MIN)
		return 0;
	if (r->cur_rowbytes > SIZE_MAX)
		return rfail(r, TS_E_LIMIT, r->off, "tensor '%s': a row of %llu "
		    "bytes does not fit in memory", r->cur_name,
		    (unsigned long long)r->cur_rowbytes);
	if ((rc = next_chunk(r)) < 0)
		return rc;
	if (rc == 0) {
		r->peeked_end = 1;
		return 0;
	}
	return buffer_ahead(r, (size_t)r->cur_rowbytes, "the first row");
}

int
ts_read_next(struct ts_reader *r, struct tensor *hdr)
{
	uint32_t type;
	uint64_t len, at;
	unsigned char *body;
	int rc;

	if (r->state == RS_ERROR)
		return r->err;
	if (r->state == RS_DONE)
		return 0;
	if (r->state == RS_START && (rc = stream_header(r)) != 0)
		return rc;
	r->peeked_end = 0;
	while (r->state == RS_TENSOR) {
		int64_t n = ts_read_rows(r, NULL, UINT64_MAX);
		if (n < 0)
			return (int)n;
	}
	for (;;) {
		at = r->off;
		if ((rc = rec_header(r, &type, &len)) != 0)
			return rc;
		switch (type) {
		case REC_META:
			if ((rc = rec_body(r, len, &body, "metadata")) != 0)
				return rc;
			{
				struct cur c = { body, (size_t)len, at + REC_BYTES };
				rc = parse_meta(r, &c, &r->meta, "stream metadata");
				if (rc == 0 && c.left != 0)
					rc = rfail(r, TS_E_FORMAT, c.off, "stream "
					    "metadata: %zu unexpected bytes at "
					    "the end of the record", c.left);
			}
			free(body);
			if (rc != 0)
				return rc;
			r->nrecords++;
			break;
		case REC_TENSOR:
			if ((rc = rec_body(r, len, &body, "tensor header")) != 0)
				return rc;
			rc = parse_tensor(r, body, len, at + REC_BYTES, hdr);
			free(body);
			if (rc != 0) {
				tensor_free(hdr);
				return rc;
			}
			r->nrecords++;
			r->state = RS_TENSOR;
			if ((rc = first_row_present(r)) != 0) {
				tensor_free(hdr);
				return rc;
			}
			return 1;
		case REC_END:
			return end_record(r, len);
		case REC_CHUNK:
		case REC_TENSOR_END:
			return rfail(r, TS_E_FORMAT, at,
			    "record type %u outside a tensor", type);
		default:
			if ((rc = skip_ancillary(r, type, len)) != 0)
				return rc;
		}
	}
}

static int
tensor_end(struct ts_reader *r, uint64_t len, uint64_t at)
{
	unsigned char b[8];
	int rc;

	if (len != 8)
		return rfail(r, TS_E_FORMAT, at + 8, "tensor '%s': end-of-tensor "
		    "record length %llu, expected 8", r->cur_name,
		    (unsigned long long)len);
	if ((rc = rd(r, b, 8, "an end-of-tensor record")) != 0)
		return rc;
	if (get64(b) != r->cur_rows)
		return rfail(r, TS_E_FORMAT, at + REC_BYTES, "tensor '%s': "
		    "end-of-tensor record counts %llu rows, %llu were written",
		    r->cur_name, (unsigned long long)get64(b),
		    (unsigned long long)r->cur_rows);
	if (!r->cur_streamed && r->cur_rows != r->cur_dims0)
		return rfail(r, TS_E_TRUNCATED, at, "tensor '%s': %llu rows "
		    "declared, %llu present", r->cur_name,
		    (unsigned long long)r->cur_dims0,
		    (unsigned long long)r->cur_rows);
	if (ck_add_u64(r->total_rows, r->cur_rows, &r->total_rows) != 0)
		return rfail(r, TS_E_OVERFLOW, at, "total row count overflows");
	r->nrecords++;
	r->state = RS_BETWEEN;
	return 0;
}

static int
chunk_start(struct ts_reader *r, uint64_t len, uint64_t at)
{
	unsigned char b[8];
	uint64_t n, need, rows;
	int rc;

	if (len < 8)
		return rfail(r, TS_E_FORMAT, at + 8, "tensor '%s': chunk "
		    "record length %llu is shorter than its row count",
		    r->cur_name, (unsigned long long)len);
	if ((rc = rd(r, b, 8, "a chunk header")) != 0)
		return rc;
	n = get64(b);
	if (ck_mul_u64(n, r->cur_rowbytes, &need) != 0 ||
	    ck_add_u64(need, 8, &need) != 0)
		return rfail(r, TS_E_OVERFLOW, at + REC_BYTES, "tensor '%s': "
		    "chunk of %llu rows overflows", r->cur_name,
		    (unsigned long long)n);
	if (need != len)
		return rfail(r, TS_E_FORMAT, at + 8, "tensor '%s': chunk record "
		    "length %llu, but %llu rows need %llu", r->cur_name,
		    (unsigned long long)len, (unsigned long long)n,
		    (unsigned long long)need);
	if (ck_add_u64(r->cur_rows, n, &rows) == 0 && rows > TS_MAX_ELEMS)
		return rfail(r, TS_E_LIMIT, at + REC_BYTES, "tensor '%s': more "
		    "than %llu rows", r->cur_name,
		    (unsigned long long)TS_MAX_ELEMS);
	if (ck_add_u64(r->cur_rows, n, &rows) != 0 || rows > r->cur_dims0)
		return rfail(r, TS_E_FORMAT, at + REC_BYTES, "tensor '%s': "
		    "chunks hold more rows than the %llu declared", r->cur_name,
		    (unsigned long long)r->cur_dims0);
	r->chunk_left = n;
	r->nrecords++;
	return 0;
}

/* Move to a chunk with rows left in the current tensor.
 * @return 1 (r->chunk_left > 0), 0 at the tensor's end (checked), or an
 * error. */
static int
next_chunk(struct ts_reader *r)
{
	uint32_t type;
	uint64_t len, at;
	int rc;

	if (r->state == RS_ERROR)
		return r->err;
	if (r->state != RS_TENSOR)
		return 0;
	while (r->chunk_left == 0) {
		at = r->off;
		if ((rc = rec_header(r, &type, &len)) != 0)
			return rc;
		if (type == REC_CHUNK) {
			if ((rc = chunk_start(r, len, at)) != 0)
				return rc;
		} else if (type == REC_TENSOR_END) {
			return tensor_end(r, len, at);
		} else if (type & REC_ANCILLARY) {
			if ((rc = skip_ancillary(r, type, len)) != 0)
				return rc;
		} else {
			return rfail(r, TS_E_FORMAT, at, "tensor '%s': record "
			    "type %u before its end-of-tensor record",
			    r->cur_name, type);
		}
	}
	return 1;
}

int64_t
ts_read_rows(struct ts_reader *r, void *buf, uint64_t maxrows)
{
	uint64_t n, nb;
	int rc;

	if ((rc = next_chunk(r)) <= 0)
		return rc;
	n = r->chunk_left < maxrows ? r->chunk_left : maxrows;
	if (r->cur_rowbytes > 0 && n > SIZE_MAX / r->cur_rowbytes)
		n = SIZE_MAX / r->cur_rowbytes;
	if (n > INT64_MAX)
		n = INT64_MAX;
	nb = n * r->cur_rowbytes;
	if ((rc = rd(r, buf, (size_t)nb, "a chunk of rows")) != 0)
		return rc;
	r->chunk_left -= n;
	r->cur_rows += n;
	return (int64_t)n;
}

uint64_t
ts_reader_row_bytes(const struct ts_reader *r)
{
	return r->cur_rowbytes;
}

int
ts_read_data(struct ts_reader *r, struct tensor *t)
{
	uint64_t rb = r->cur_rowbytes, rows = 0, len = 0, cap = 0, limit_rows;
	unsigned char *data = NULL;
	int rc;

	if (r->state != RS_TENSOR && !r->peeked_end)
		return rfail(r, TS_E_USAGE, r->off, "no tensor to read");
	limit_rows = rb ? r->max_bytes / rb : UINT64_MAX;
	if (!r->cur_streamed && r->cur_dims0 > limit_rows)
		return rfail(r, TS_E_LIMIT, r->off, "tensor '%s': %llu rows of "
		    "%llu bytes exceed the in-memory limit of %llu bytes",
		    r->cur_name, (unsigned long long)r->cur_dims0,
		    (unsigned long long)rb, (unsigned long long)r->max_bytes);
	/* Grow with the data actually present, in bytes, not rows: a
	 * declared size, even of one row, is never trusted for allocation. */
	while ((rc = next_chunk(r)) > 0) {
		uint64_t n = r->chunk_left, nb;
		if (rb && n > (r->max_bytes - len) / rb) {
			free(data);
			if (limit_rows == 0)
				return rfail(r, TS_E_LIMIT, r->off, "tensor "
				    "'%s': a row of %llu bytes exceeds the "
				    "in-memory limit of %llu bytes", r->cur_name,
				    (unsigned long long)rb,
				    (unsigned long long)r->max_bytes);
			return rfail(r, TS_E_LIMIT, r->off, "tensor '%s': "
			    "more than %llu bytes: too large to hold in "
			    "memory", r->cur_name,
			    (unsigned long long)r->max_bytes);
		}
		nb = n * rb;
		while (nb > 0) {
			uint64_t k;
			if (len == cap) {
				uint64_t nc = cap ? cap * 2 : (1u << 16);
				unsigned char *nd;
				if (!r->cur_streamed && nc > r->cur_dims0 * rb)
					nc = r->cur_dims0 * rb;
				if (nc > r->max_bytes)
					nc = r->max_bytes;
				if (nc <= len)
					nc = len + nb;
				nd = nc <= SIZE_MAX ? realloc(data, (size_t)nc)
				    : NULL;
				if (nd == NULL) {
					free(data);
					return rfail(r, TS_E_NOMEM, r->off,
					    "out of memory reading tensor '%s'",
					    r->cur_name);
				}
				data = nd;
				cap = nc;
			}
			k = cap - len < nb ? cap - len : nb;
			if ((rc = rd(r, data + len, (size_t)k,
			    "a chunk of rows")) != 0) {
				free(data);
				return rc;
			}
			len += k;
			nb -= k;
		}
		r->chunk_left = 0;
		r->cur_rows += n;
		rows += n;
	}
	if (rc < 0) {
		free(data);
		return rc;
	}
	r->peeked_end = 0;
	if (data == NULL && (data = malloc(1)) == NULL)
		return rfail(r, TS_E_NOMEM, r->off, "out of memory");
	free(t->data);
	t->data = data;
	if (t->ndim > 0)
		t->dims[0] = rows;
	return 0;
}

int
ts_read_all(struct ts_reader *r, struct tensor **out, size_t *n)
{
	struct tensor *v = NULL, *nv;
	size_t cnt = 0;
	int rc;

	for (;;) {
		nv = realloc(v, (cnt + 1) * sizeof *v);
		if (nv == NULL) {
			rc = rfail(r, TS_E_NOMEM, r->off, "out of memory");
			break;
		}
		v = nv;
		rc = ts_read_next(r, &v[cnt]);
		if (rc <= 0)
			break;
		if ((rc = ts_read_data(r, &v[cnt])) != 0) {
			tensor_free(&v[cnt]);
			break;
		}
		cnt++;
	}
	if (rc < 0) {
		for (size_t i = 0; i < cnt; i++)
			tensor_free(&v[i]);
		free(v);
		*out = NULL;
		*n = 0;
		return rc;
	}
	*out = v;
	*n = cnt;
	return 0;
}

const struct ts_meta *
ts_reader_meta(const struct ts_reader *r)
{
	return &r->meta;
}

uint64_t
ts_reader_offset(const struct ts_reader *r)
{
	return r->off;
}

uint64_t
ts_reader_digest(const struct ts_reader *r)
{
	struct arq *q = r->aq;
	struct ts_xxh64 h;

	if (q == NULL)
		return ts_xxh64_final(&r->digest);
	/* The read-ahead thread hashed the blocks: the digest before the
	 * block being taken, then its bytes taken so far. */
	pthread_mutex_lock(&q->h.mu);
	if (q->filled > 0) {
		h = q->before[q->head];
		ts_xxh64_update(&h, q->blk[q->head], q->pos);
	} else {
		h = q->run;
	}
	pthread_mutex_unlock(&q->h.mu);
	return ts_xxh64_final(&h);
}

/* One-shot XXH64 (the streaming functions are in xxh64.c). */
uint64_t
ts_xxh64(const void *p, size_t n, uint64_t seed)
{
	struct ts_xxh64 h;

	ts_xxh64_init(&h, seed);
	ts_xxh64_update(&h, p, n);
	return ts_xxh64_final(&h);
}

int
ts_reader_version(const struct ts_reader *r, int *major, int *minor)
{
	if (!r->have_version)
		return TS_E_USAGE;
	*major = r->version[0];
	*minor = r->version[1];
	return 0;
}

uint64_t
ts_reader_tensors(const struct ts_reader *r)
{
	return r->ntensors;
}

const char *
ts_reader_errmsg(const struct ts_reader *r)
{
	return r->state == RS_ERROR ? r->msg : "no error";
}

/* ---- writer ---- */

enum wr_state { WS_BETWEEN, WS_TENSOR, WS_DONE, WS_ERROR };
#define CHUNK_CAP (1u << 20)

struct ts_writer {
	FILE *fp;
	char label[256];
	ZSTD_CCtx *cz;
	unsigned char *zout;
	size_t zout_cap;
	int started, state, err;
	/* current tensor */
	char cur_name[TS_MAX_NAME + 1];
	uint64_t cur_dims0, cur_rowbytes, cur_rows;
	int cur_streamed;
	unsigned char *chunk;
	uint64_t chunk_rows;
	size_t chunk_len;
	uint64_t nrecords, ntensors, total_rows;
	struct ts_meta names;	/* a set: tensor names written */
	struct awq *aq;		/* the writer thread's queue, or NULL */
	char msg[512];
};

static void aw_stop(struct ts_writer *w);

__attribute__((format(printf, 3, 4))) static int
wfail(struct ts_writer *w, int code, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (w->state == WS_ERROR)
		return w->err;
	n = snprintf(w->msg, sizeof w->msg, "%s: ", w->label);
	if (n < 0)
		n = 0;
	va_start(ap, fmt);
	vsnprintf(w->msg + n, sizeof w->msg - (size_t)n, fmt, ap);
	va_end(ap);
	w->state = WS_ERROR;
	w->err = code;
	return code;
}

struct ts_writer *
ts_writer_open(FILE *fp, const char *label, int level, int threads)
{
	struct ts_writer *w;

	if (level < ZSTD_minCLevel() || level > ZSTD_maxCLevel() ||
	    threads < 0 || threads > 256)
		return NULL;
	if ((w = calloc(1, sizeof *w)) == NULL)
		return NULL;
	w->fp = fp;
	snprintf(w->label, sizeof w->label, "%s", label ? label : "<stdout>");
	w->cz = ZSTD_createCCtx();
	w->zout_cap = ZSTD_CStreamOutSize();
	w->zout = malloc(w->zout_cap);
	w->chunk = malloc(CHUNK_CAP);
	if (!w->cz || !w->zout || !w->chunk ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cz, ZSTD_c_compressionLevel,
	    level ? level : 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cz, ZSTD_c_checksumFlag, 1))) {
		ts_writer_close(w);
		return NULL;
	}
	/* Worker threads are optional: a libzstd built without them keeps
	 * compressing in this thread. */
	if (threads > 0)
		(void)ZSTD_CCtx_setParameter(w->cz, ZSTD_c_nbWorkers, threads);
	return w;
}

void
ts_writer_close(struct ts_writer *w)
{
	if (w == NULL)
		return;
	if (w->aq != NULL)
		aw_stop(w);
	ZSTD_freeCCtx(w->cz);
	free(w->zout);
	free(w->chunk);
	ts_meta_free(&w->names);
	free(w);
}

/* The zstd calls of one emit: compress src (n bytes) with mode and write
 * what comes out.  Runs in the caller's thread or in the writer thread.
 * @return 0, or a TS_E* code with the message (without label) in msg. */
static int
zemit(struct ts_writer *w, const void *src, size_t n, ZSTD_EndDirective mode,
    char *msg, size_t msglen)
{
	ZSTD_inBuffer ib = { src, n, 0 };
	size_t z;

	do {
		ZSTD_outBuffer ob = { w->zout, w->zout_cap, 0 };
		z = ZSTD_compressStream2(w->cz, &ob, &ib, mode);
		if (ZSTD_isError(z)) {
			snprintf(msg, msglen, "zstd: %s", ZSTD_getErrorName(z));
			return TS_E_ZSTD;
		}
		if (ob.pos && fwrite(w->zout, 1, ob.pos, w->fp) != ob.pos) {
			snprintf(msg, msglen, "write error: %s", strerror(errno));
			return TS_E_IO;
		}
	} while (mode == ZSTD_e_continue ? ib.pos < ib.size : z != 0);
	return 0;
}

/*
 * The writer thread's queue: emits (a copy of their bytes and their mode)
 * in order, at most AW_CAP bytes.  An emit larger than AW_CAP / 2, a flush
 * or the end of the frame waits until the queue is empty and the thread
 * idle, then runs in the caller's thread: no large copy, and the fflush
 * that follows sees every byte.  The thread's first error is kept (later
 * emits are dropped, as the synchronous writer stops at its first error)
 * and handed to the caller at its next emit, drain or finish.
 */
#define AW_CAP (4u << 20)

struct aw_item {
	struct aw_item *next;
	ZSTD_EndDirective mode;
	size_t len;
	unsigned char data[];
};

struct awq {
	struct helper h;	/* put: an item done, space or idle; get: an
				 * item queued, or stop */
	struct aw_item *head, *tail;
	size_t queued;		/* bytes held by queued items */
	int busy, err;
	char msg[256];
};

static void *
aw_main(void *arg)
{
	struct ts_writer *w = arg;
	struct awq *q = w->aq;
	struct aw_item *it;
	char msg[256];
	int rc;

	pthread_mutex_lock(&q->h.mu);
	for (;;) {
		while (q->head == NULL && !q->h.stop)
			pthread_cond_wait(&q->h.get, &q->h.mu);
		if ((it = q->head) == NULL)
			break;
		if ((q->head = it->next) == NULL)
			q->tail = NULL;
		q->busy = 1;
		rc = q->err;
		pthread_mutex_unlock(&q->h.mu);
		if (rc == 0)
			rc = zemit(w, it->data, it->len, it->mode, msg,
			    sizeof msg);
		pthread_mutex_lock(&q->h.mu);
		if (rc != 0 && q->err == 0) {
			q->err = rc;
			memcpy(q->msg, msg, sizeof q->msg);
		}
		q->queued -= sizeof *it + it->len;
		q->busy = 0;
		free(it);
		pthread_cond_broadcast(&q->h.put);
	}
	pthread_mutex_unlock(&q->h.mu);
	return NULL;
}

/* The thread's error as the writer's (wfail keeps the first). */
static int
aw_fail(struct ts_writer *w)
{
	return wfail(w, w->aq->err, "%s", w->aq->msg);
}

/* Wait until every queued emit is done.  @return 0 or the thread's error. */
static int
aw_drain(struct ts_writer *w)
{
	struct awq *q = w->aq;
	int err;

	pthread_mutex_lock(&q->h.mu);
	while ((q->head != NULL || q->busy) && q->err == 0)
		pthread_cond_wait(&q->h.put, &q->h.mu);
	err = q->err;
	pthread_mutex_unlock(&q->h.mu);
	return err ? aw_fail(w) : 0;
}

/* Stop the thread after it has done every queued emit; free the queue. */
static void
aw_stop(struct ts_writer *w)
{
	helper_stop(&w->aq->h, &w->aq->h.get);
	free(w->aq);
	w->aq = NULL;
}

int
ts_writer_set_async(struct ts_writer *w, int on)
{
	struct awq *q;
	int rc = 0;

	if (w->state == WS_ERROR)
		return w->err;
	if (!on) {
		if (w->aq != NULL) {
			rc = aw_drain(w);
			aw_stop(w);
		}
		return rc;
	}
	if (w->aq != NULL || (q = calloc(1, sizeof *q)) == NULL)
		return 0;
	w->aq = q;
	if (helper_start(&q->h, aw_main, w) != 0) {
		free(q);
		w->aq = NULL;
	}
	return 0;
}

static int
emit(struct ts_writer *w, const void *src, size_t n, ZSTD_EndDirective mode)
{
	struct awq *q = w->aq;
	struct aw_item *it = NULL;
	char msg[256];
	int rc;

	if (q != NULL && mode == ZSTD_e_continue && n <= AW_CAP / 2)
		it = malloc(sizeof *it + n);
	if (it == NULL) {
		/* Synchronous: no thread, a large emit, a flush, the end
		 * of the frame, or no memory for a copy. */
		if (q != NULL && (rc = aw_drain(w)) != 0)
			return rc;
		if ((rc = zemit(w, src, n, mode, msg, sizeof msg)) != 0)
			return wfail(w, rc, "%s", msg);
		return 0;
	}
	it->next = NULL;
	it->mode = mode;
	it->len = n;
	if (n > 0)
		memcpy(it->data, src, n);
	pthread_mutex_lock(&q->h.mu);
	while (q->queued > 0 && q->queued + sizeof *it + n > AW_CAP &&
	    q->err == 0)
		pthread_cond_wait(&q->h.put, &q->h.mu);
	if (q->err != 0) {
		pthread_mutex_unlock(&q->h.mu);
		free(it);
		return aw_fail(w);
	}
	if (q->tail != NULL)
		q->tail->next = it;
	else
		q->head = it;
	q->tail = it;
	q->queued += sizeof *it + n;
	pthread_cond_signal(&q->h.get);
	pthread_mutex_unlock(&q->h.mu);
	return 0;
}

static int
emit_header(struct ts_writer *w)
{
	unsigned char h[HDR_BYTES];

	if (w->started)
		return 0;
	memcpy(h, MAGIC, sizeof MAGIC);
	h[8] = TS_VERSION_MAJOR;
	h[9] = TS_VERSION_MINOR;
	put16(h + 10, 0);
	w->started = 1;
	return emit(w, h, sizeof h, ZSTD_e_continue);
}

static int
emit_record(struct ts_writer *w, uint32_t type, const void *body, size_t len)
{
	unsigned char h[REC_BYTES];
	int rc;

	put32(h, type);
	put32(h + 4, 0);
	put64(h + 8, len);
	if ((rc = emit(w, h, sizeof h, ZSTD_e_continue)) != 0)
		return rc;
	w->nrecords++;
	return emit(w, body, len, ZSTD_e_continue);
}

/* A growable byte buffer for encoding header bodies. */
struct buf {
	unsigned char *p;
	size_t len, cap;
	int oom;
};

static unsigned char *
buf_grow(struct buf *b, size_t n)
{
	if (b->oom)
		return NULL;
	if (b->len + n > b->cap) {
		size_t nc = (b->cap ? b->cap : 256);
		while (nc < b->len + n)
			nc *= 2;
		unsigned char *np = realloc(b->p, nc);
		if (np == NULL) {
			b->oom = 1;
			return NULL;
		}
		b->p = np;
		b->cap = nc;
	}
	b->len += n;
	return b->p + b->len - n;
}

static int
encode_meta(struct ts_writer *w, struct buf *b, const struct ts_meta *m)
{
	unsigned char *p;
	const char *bad;

	if (m->n > TS_MAX_META)
		return wfail(w, TS_E_LIMIT, "more than %u metadata entries",
		    TS_MAX_META);
	if ((p = buf_grow(b, 4)) != NULL)
		put32(p, (uint32_t)m->n);
	for (size_t i = 0; i < m->n; i++) {
		size_t kl = strlen(m->kv[i].key), vl = strlen(m->kv[i].val);
		if ((bad = ts_check_key(m->kv[i].key)) != NULL)
			return wfail(w, TS_E_USAGE, "metadata key '%s': %s",
			    m->kv[i].key, bad);
		if (vl > TS_MAX_VALUE || !ts_utf8_valid(m->kv[i].val, vl))
			return wfail(w, TS_E_USAGE, "metadata '%s': value too "
			    "long or not UTF-8", m->kv[i].key);
		if ((p = buf_grow(b, 2 + kl + 5 + vl)) == NULL)
			break;
		put16(p, (uint16_t)kl);
		memcpy(p + 2, m->kv[i].key, kl);
		p[2 + kl] = VAL_UTF8;
		put32(p + 3 + kl, (uint32_t)vl);
		memcpy(p + 7 + kl, m->kv[i].val, vl);
	}
	return b->oom ? wfail(w, TS_E_NOMEM, "out of memory") : 0;
}

int
ts_write_meta(struct ts_writer *w, const struct ts_meta *m)
{
	struct buf b = { 0 };
	int rc;

	if (w->state == WS_ERROR)
		return w->err;
	if (w->state != WS_BETWEEN)
		return wfail(w, TS_E_USAGE, "metadata written inside a tensor");
	if ((rc = emit_header(w)) != 0)
		return rc;
	if ((rc = encode_meta(w, &b, m)) == 0)
		rc = emit_record(w, REC_META, b.p, b.len);
	free(b.p);
	return rc;
}

int
ts_write_begin(struct ts_writer *w, const struct tensor *t)
{
	struct buf b = { 0 };
	unsigned char *p;
	size_t nl = strlen(t->name);
	const char *bad;
	uint64_t rb, el;
	int rc, streamed;

	if (w->state == WS_ERROR)
		return w->err;
	if (w->state != WS_BETWEEN)
		return wfail(w, TS_E_USAGE, "tensor '%s' begun inside another",
		    t->name);
	if ((bad = ts_check_name(t->name)) != NULL)
		return wfail(w, TS_E_USAGE, "tensor '%s': %s", t->name, bad);
	if (ts_dtype_size(t->dtype) == 0 || t->ndim < 0 || t->ndim > TS_MAX_NDIM)
		return wfail(w, TS_E_USAGE, "tensor '%s': bad dtype or ndim",
		    t->name);
	if (ts_meta_get(&w->names, t->name) != NULL)
		return wfail(w, TS_E_USAGE, "duplicate tensor name '%s'",
		    t->name);
	if (w->ntensors >= TS_MAX_TENSORS)
		return wfail(w, TS_E_LIMIT, "more than %d tensors",
		    TS_MAX_TENSORS);
	streamed = t->ndim > 0 && t->dims[0] == TS_UNKNOWN_ROWS;
	if (tensor_row_bytes(t, &rb) != 0 || (!streamed && tensor_elems(t, &el)
	    != 0) || (!streamed && tensor_bytes(t, &el) != 0))
		return wfail(w, TS_E_OVERFLOW, "tensor '%s': size overflows",
		    t->name);
	if (!streamed && t->ndim > 0 && t->dims[0] > TS_MAX_ELEMS)
		return wfail(w, TS_E_LIMIT, "tensor '%s': %llu rows exceed the "
		    "limit %llu", t->name, (unsigned long long)t->dims[0],
		    (unsigned long long)TS_MAX_ELEMS);
	if ((rc = emit_header(w)) != 0)
		return rc;
	if ((p = buf_grow(&b, 2 + nl + 4 + 8 * (size_t)t->ndim)) != NULL) {
		put16(p, (uint16_t)nl);
		memcpy(p + 2, t->name, nl);
		p += 2 + nl;
		p[0] = (unsigned char)t->dtype;
		p[1] = (unsigned char)t->ndim;
		put16(p + 2, streamed ? FLAG_STREAMED : 0);
		for (int i = 0; i < t->ndim; i++)
			put64(p + 4 + 8 * i, t->dims[i]);
	}
	rc = encode_meta(w, &b, &t->meta);
	if (rc == 0)
		rc = emit_record(w, REC_TENSOR, b.p, b.len);
	free(b.p);
	if (rc != 0)
		return rc;
	if (ts_meta_set(&w->names, t->name, "") != 0)
		return wfail(w, TS_E_NOMEM, "out of memory");
	w->ntensors++;
	snprintf(w->cur_name, sizeof w->cur_name, "%s", t->name);
	w->cur_streamed = streamed;
	w->cur_dims0 = streamed ? TS_UNKNOWN_ROWS : tensor_rows(t);
	w->cur_rowbytes = rb;
	w->cur_rows = 0;
	w->chunk_rows = 0;
	w->chunk_len = 0;
	w->state = WS_TENSOR;
	return 0;
}

static int
emit_chunk(struct ts_writer *w, const void *data, uint64_t nrows)
{
	unsigned char h[REC_BYTES + 8];
	uint64_t nb = nrows * w->cur_rowbytes;	/* checked by the caller */
	int rc;

	put32(h, REC_CHUNK);
	put32(h + 4, 0);
	put64(h + 8, nb + 8);
	put64(h + 16, nrows);
	if ((rc = emit(w, h, sizeof h, ZSTD_e_continue)) != 0)
		return rc;
	w->nrecords++;
	return emit(w, data, (size_t)nb, ZSTD_e_continue);
}

static int
flush_chunk(struct ts_writer *w)
{
	int rc = 0;

	if (w->chunk_rows > 0)
		rc = emit_chunk(w, w->chunk, w->chunk_rows);
	w->chunk_rows = 0;
	w->chunk_len = 0;
	return rc;
}

int
ts_write_rows(struct ts_writer *w, const void *buf, uint64_t nrows)
{
	uint64_t nb, total;
	int rc;

	if (w->state == WS_ERROR)
		return w->err;
	if (w->state != WS_TENSOR)
		return wfail(w, TS_E_USAGE, "rows written outside a tensor");
	if (ck_add_u64(w->cur_rows, nrows, &total) == 0 && total > TS_MAX_ELEMS)
		return wfail(w, TS_E_LIMIT, "tensor '%s': more than %llu rows",
		    w->cur_name, (unsigned long long)TS_MAX_ELEMS);
	if (ck_add_u64(w->cur_rows, nrows, &total) != 0 ||
	    total > w->cur_dims0 ||
	    ck_mul_u64(nrows, w->cur_rowbytes, &nb) != 0 || nb > SIZE_MAX / 2)
		return wfail(w, TS_E_USAGE, "tensor '%s': more rows than "
		    "declared, or too many at once", w->cur_name);
	w->cur_rows = total;
	if (nb >= CHUNK_CAP / 2) {
		if ((rc = flush_chunk(w)) != 0)
			return rc;
		return emit_chunk(w, buf, nrows);
	}
	if (w->chunk_len + nb > CHUNK_CAP && (rc = flush_chunk(w)) != 0)
		return rc;
	memcpy(w->chunk + w->chunk_len, buf, (size_t)nb);
	w->chunk_len += (size_t)nb;
	w->chunk_rows += nrows;
	return 0;
}

int
ts_write_end(struct ts_writer *w)
{
	unsigned char b[8];
	int rc;

	if (w->state == WS_ERROR)
		return w->err;
	if (w->state != WS_TENSOR)
		return wfail(w, TS_E_USAGE, "no tensor to end");
	if (!w->cur_streamed && w->cur_rows != w->cur_dims0)
		return wfail(w, TS_E_USAGE, "tensor '%s': %llu rows declared, "
		    "%llu written", w->cur_name,
		    (unsigned long long)w->cur_dims0,
		    (unsigned long long)w->cur_rows);
	if ((rc = flush_chunk(w)) != 0)
		return rc;
	put64(b, w->cur_rows);
	if ((rc = emit_record(w, REC_TENSOR_END, b, 8)) != 0)
		return rc;
	w->total_rows += w->cur_rows;
	w->state = WS_BETWEEN;
	return 0;
}

int
ts_write_tensor(struct ts_writer *w, const struct tensor *t)
{
	int rc;

	if ((rc = ts_write_begin(w, t)) != 0)
		return rc;
	if (tensor_rows(t) > 0 && (rc = ts_write_rows(w, t->data,
	    tensor_rows(t))) != 0)
		return rc;
	return ts_write_end(w);
}

int
ts_write_flush(struct ts_writer *w)
{
	int rc;

	if (w->state == WS_ERROR)
		return w->err;
	if ((rc = emit_header(w)) != 0)
		return rc;
	if (w->state == WS_TENSOR && (rc = flush_chunk(w)) != 0)
		return rc;
	if ((rc = emit(w, NULL, 0, ZSTD_e_flush)) != 0)
		return rc;
	if (fflush(w->fp) != 0)
		return wfail(w, TS_E_IO, "write error: %s", strerror(errno));
	return 0;
}

int
ts_writer_finish(struct ts_writer *w)
{
	unsigned char b[24];
	int rc;

	if (w->state == WS_ERROR)
		return w->err;
	if (w->state != WS_BETWEEN)
		return wfail(w, TS_E_USAGE, "tensor '%s' not ended", w->cur_name);
	if ((rc = emit_header(w)) != 0)
		return rc;
	put64(b, w->nrecords);
	put64(b + 8, w->ntensors);
	put64(b + 16, w->total_rows);
	if ((rc = emit_record(w, REC_END, b, sizeof b)) != 0)
		return rc;
	if ((rc = emit(w, NULL, 0, ZSTD_e_end)) != 0)
		return rc;
	if (fflush(w->fp) != 0)
		return wfail(w, TS_E_IO, "write error: %s", strerror(errno));
	w->state = WS_DONE;
	return 0;
}

const char *
ts_writer_errmsg(const struct ts_writer *w)
{
	return w->state == WS_ERROR ? w->msg : "no error";
}
