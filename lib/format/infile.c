/* infile.c: an input read through a digest, gzip optional (see infile.h). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "infile.h"
#include "tstream.h"

struct infile {
	FILE *src, *fp;
	char *label;
	unsigned flags;
	struct ts_xxh64 h;
	z_stream z;
	int started;		/* the first read happened (gzip sniffed) */
	int gz, zinit, member_end, src_eof;
	size_t in_len, in_pos;	/* source bytes in in[] not yet used */
	int err;
	char msg[768];
	unsigned char in[1 << 16];
};

__attribute__((format(printf, 3, 4))) static ssize_t
fail(struct infile *f, int code, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (f->err == 0) {
		n = snprintf(f->msg, sizeof f->msg, "%s: ", f->label);
		if (n < 0 || (size_t)n >= sizeof f->msg)
			n = 0;
		va_start(ap, fmt);
		vsnprintf(f->msg + n, sizeof f->msg - (size_t)n, fmt, ap);
		va_end(ap);
		f->err = code;
	}
	errno = EIO;
	return -1;
}

/* Refill in[] from the source, hashing what arrives. */
static int
fill(struct infile *f)
{
	size_t k = fread(f->in, 1, sizeof f->in, f->src);

	if (k < sizeof f->in) {
		if (ferror(f->src))
			return (int)fail(f, TS_E_IO, "read error: %s",
			    strerror(errno));
		f->src_eof = 1;
	}
	ts_xxh64_update(&f->h, f->in, k);
	f->in_len = k;
	f->in_pos = 0;
	return 0;
}

static ssize_t
plain_read(struct infile *f, char *buf, size_t n)
{
	size_t k;

	/* Bytes taken to look for the gzip magic go out first; then the
	 * source is read straight into the caller's buffer. */
	if (f->in_pos < f->in_len) {
		k = f->in_len - f->in_pos < n ? f->in_len - f->in_pos : n;
		memcpy(buf, f->in + f->in_pos, k);
		f->in_pos += k;
		return (ssize_t)k;
	}
	k = fread(buf, 1, n, f->src);
	if (k < n && ferror(f->src))
		return fail(f, TS_E_IO, "read error: %s", strerror(errno));
	ts_xxh64_update(&f->h, buf, k);
	return (ssize_t)k;
}

static ssize_t
gz_read(struct infile *f, char *buf, size_t n)
{
	int zr;
	size_t got;

	for (;;) {
		if (f->in_pos == f->in_len && !f->src_eof && fill(f) != 0)
			return -1;
		if (f->member_end) {
			/* gzip allows several members back to back; anything
			 * else after one is an error, not ignored data. */
			if (f->in_pos == f->in_len) {
				if (f->src_eof)
					return 0;
				continue;
			}
			if (f->in[f->in_pos] != 0x1f)
				return fail(f, TS_E_FORMAT, "gzip: trailing "
				    "bytes after the compressed data");
			if (inflateReset(&f->z) != Z_OK)
				return fail(f, TS_E_FORMAT, "gzip: cannot "
				    "restart the decompressor");
			f->member_end = 0;
		}
		f->z.next_in = f->in + f->in_pos;
		f->z.avail_in = (uInt)(f->in_len - f->in_pos);
		f->z.next_out = (unsigned char *)buf;
		f->z.avail_out = (uInt)n;
		zr = inflate(&f->z, Z_NO_FLUSH);
		got = n - f->z.avail_out;
		f->in_pos = f->in_len - f->z.avail_in;
		if (zr == Z_STREAM_END)
			f->member_end = 1;
		else if (zr == Z_MEM_ERROR)
			return fail(f, TS_E_NOMEM, "out of memory");
		else if (zr != Z_OK && zr != Z_BUF_ERROR)
			return fail(f, TS_E_FORMAT, "gzip: %s", f->z.msg ?
			    f->z.msg : "corrupt data");
		if (got > 0)
			return (ssize_t)got;
		if (!f->member_end && f->in_pos == f->in_len && f->src_eof)
			return fail(f, TS_E_TRUNCATED, "gzip: truncated "
			    "compressed data");
	}
}

static ssize_t
infile_read(void *cookie, char *buf, size_t n)
{
	struct infile *f = cookie;

	if (f->err) {
		errno = EIO;
		return -1;
	}
	/* zlib counts in uInt; a short read is always allowed. */
	if (n > UINT_MAX)
		n = UINT_MAX;
	if (!f->started) {
		f->started = 1;
		if (f->flags & INFILE_GZIP) {
			if (fill(f) != 0)
				return -1;
			if (f->in_len >= 2 && f->in[0] == 0x1f &&
			    f->in[1] == 0x8b) {
				if (inflateInit2(&f->z, 15 + 16) != Z_OK)
					return fail(f, TS_E_NOMEM,
					    "out of memory");
				f->gz = f->zinit = 1;
			}
		}
	}
	return f->gz ? gz_read(f, buf, n) : plain_read(f, buf, n);
}

struct infile *
infile_open(FILE *src, const char *label, unsigned flags)
{
	cookie_io_functions_t io = { .read = infile_read };
	struct infile *f;

	if ((flags & ~INFILE_GZIP) != 0 || src == NULL)
		return NULL;
	if ((f = calloc(1, sizeof *f)) == NULL)
		return NULL;
	f->src = src;
	f->flags = flags;
	ts_xxh64_init(&f->h, 0);
	if ((f->label = strdup(label ? label : "<input>")) == NULL ||
	    (f->fp = fopencookie(f, "r", io)) == NULL) {
		free(f->label);
		free(f);
		return NULL;
	}
	return f;
}

void
infile_close(struct infile *f)
{
	if (f == NULL)
		return;
	fclose(f->fp);
	if (f->zinit)
		inflateEnd(&f->z);
	free(f->label);
	free(f);
}

FILE *
infile_fp(const struct infile *f)
{
	return f->fp;
}

FILE *
infile_source(const struct infile *f)
{
	return f->src;
}

const char *
infile_label(const struct infile *f)
{
	return f->label;
}

uint64_t
infile_digest(const struct infile *f)
{
	return ts_xxh64_final(&f->h);
}

int
infile_error(const struct infile *f)
{
	return f->err;
}

const char *
infile_errmsg(const struct infile *f)
{
	return f->err ? f->msg : "";
}
