/* csvin.c: streaming CSV records through libcsv (see csvin.h). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <csv.h>
#include <zstd.h>

#include "csvin.h"

#define IN_CAP (64u * 1024)
/* Limits on what one record may hold, so that a hostile input without
 * line ends or delimiters fails with a message instead of exhausting
 * memory. */
#define CSVIN_MAX_FIELD ((size_t)1 << 28)	/* bytes in one field */
#define CSVIN_MAX_RECORD ((size_t)1 << 30)	/* bytes in one record */
#define CSVIN_MAX_FIELDS ((size_t)1 << 24)	/* fields in one record */
#define ZSTD_WINDOW_LOG_MAX 27

/* libcsv keeps its state in the public struct csv_parser; pstate 0 is its
 * ROW_NOT_BEGUN state, i.e. the parser sits between records. */
#define CSV_BETWEEN_RECORDS 0

struct rec {
	size_t f0, nf;		/* first field index and count */
	uint64_t line;		/* line where the record starts */
};

struct csvin {
	FILE *fp;
	char *label;
	struct csv_parser p;
	int parser_ok;

	unsigned char *in;	/* raw bytes read from fp */
	size_t in_len, in_pos;
	int raw_eof, started, eof, bom_checked;
	ZSTD_DStream *dz;	/* non-NULL for zstd input */
	unsigned char *out;	/* decompressed bytes */
	size_t out_len, out_pos;
	size_t zlast;		/* ZSTD_decompressStream's last hint */

	uint64_t line;		/* line of the next byte fed to libcsv */
	uint64_t cand;		/* where a record beginning now starts */

	char *arena;		/* NUL-terminated fields, back to back */
	size_t alen, acap;
	size_t *foff;		/* offset of each field in arena */
	size_t nf, fcap;
	struct rec *recs;	/* complete records not yet returned */
	size_t nrec, rcap, rhead;
	int in_rec;		/* a record has fields but is not complete */
	size_t cur_f0;
	uint64_t cur_line;

	char **ptrs;
	size_t pcap;
	uint64_t ret_line;

	int err;		/* an error waits behind the queued records */
	int failed;		/* the error was returned */
	char msg[512];
};

__attribute__((format(printf, 2, 3))) static void
fail(struct csvin *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (c->err)
		return;
	n = snprintf(c->msg, sizeof c->msg, "%s:%llu: ", c->label,
	    (unsigned long long)c->line);
	if (n < 0 || (size_t)n >= sizeof c->msg)
		n = 0;
	va_start(ap, fmt);
	vsnprintf(c->msg + n, sizeof c->msg - (size_t)n, fmt, ap);
	va_end(ap);
	c->err = 1;
}

struct csvin *
csvin_open(FILE *fp, const char *label, char delim)
{
	struct csvin *c = calloc(1, sizeof *c);

	if (c == NULL)
		return NULL;
	c->fp = fp;
	c->line = 1;
	c->cand = 1;
	c->label = strdup(label ? label : "<stdin>");
	c->in = malloc(IN_CAP);
	if (c->label == NULL || c->in == NULL ||
	    csv_init(&c->p, CSV_STRICT | CSV_STRICT_FINI) != 0) {
		csvin_close(c);
		return NULL;
	}
	c->parser_ok = 1;
	csv_set_delim(&c->p, (unsigned char)delim);
	return c;
}

void
csvin_close(struct csvin *c)
{
	if (c == NULL)
		return;
	if (c->parser_ok)
		csv_free(&c->p);
	ZSTD_freeDStream(c->dz);
	free(c->label);
	free(c->in);
	free(c->out);
	free(c->arena);
	free(c->foff);
	free(c->recs);
	free(c->ptrs);
	free(c);
}

static int
grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t nc = *cap ? *cap : 16;
	void *np;

	if (need <= *cap)
		return 0;
	while (nc < need) {
		if (nc > SIZE_MAX / 2 / elem)
			return -1;
		nc *= 2;
	}
	if ((np = realloc(*p, nc * elem)) == NULL)
		return -1;
	*p = np;
	*cap = nc;
	return 0;
}

/* libcsv field callback: copy the field into the arena. */
static void
on_field(void *s, size_t len, void *data)
{
	struct csvin *c = data;

	if (c->err)
		return;
	if (!c->in_rec) {
		c->in_rec = 1;
		c->cur_f0 = c->nf;
		c->cur_line = c->cand;
	}
	if (len > 0 && memchr(s, '\0', len) != NULL) {
		fail(c, "NUL byte in field %zu", c->nf - c->cur_f0);
		return;
	}
	if (c->nf - c->cur_f0 >= CSVIN_MAX_FIELDS) {
		fail(c, "more than %zu fields in a record", CSVIN_MAX_FIELDS);
		return;
	}
	if (c->alen - (c->cur_f0 < c->nf ? c->foff[c->cur_f0] : c->alen) +
	    len + 1 > CSVIN_MAX_RECORD) {
		fail(c, "record longer than %zu bytes", CSVIN_MAX_RECORD);
		return;
	}
	if (grow((void **)&c->arena, &c->acap, c->alen + len + 1, 1) != 0 ||
	    grow((void **)&c->foff, &c->fcap, c->nf + 1, sizeof *c->foff) != 0) {
		fail(c, "out of memory");
		return;
	}
	if (len > 0)
		memcpy(c->arena + c->alen, s, len);
	c->arena[c->alen + len] = '\0';
	c->foff[c->nf++] = c->alen;
	c->alen += len + 1;
}

/* libcsv record callback: queue the record.  A record is always preceded
 * by at least one field callback, except for empty rows, which libcsv
 * reports only with CSV_REPALL_NL (not set). */
static void
on_record(int term, void *data)
{
	struct csvin *c = data;

	(void)term;
	if (c->err || !c->in_rec)
		return;
	if (grow((void **)&c->recs, &c->rcap, c->nrec + 1, sizeof *c->recs)
	    != 0) {
		fail(c, "out of memory");
		return;
	}
	c->recs[c->nrec].f0 = c->cur_f0;
	c->recs[c->nrec].nf = c->nf - c->cur_f0;
	c->recs[c->nrec].line = c->cur_line;
	c->nrec++;
	c->in_rec = 0;
}

/* Refill c->out (or point it at the raw buffer) with more input.
 * @return 1 with bytes available, 0 at end of input, -1 on error. */
static int
fill(struct csvin *c)
{
	static const unsigned char zmagic[4] = { 0x28, 0xb5, 0x2f, 0xfd };

	for (;;) {
		if (c->in_pos == c->in_len && !c->raw_eof) {
			c->in_len = fread(c->in, 1, IN_CAP, c->fp);
			c->in_pos = 0;
			if (c->in_len < IN_CAP) {
				if (ferror(c->fp)) {
					fail(c, "read error: %s", strerror(errno));
					return -1;
				}
				c->raw_eof = 1;
			}
		}
		if (!c->started) {
			c->started = 1;
			if (c->in_len >= 4 && memcmp(c->in, zmagic, 4) == 0) {
				c->dz = ZSTD_createDStream();
				c->out = malloc(ZSTD_DStreamOutSize());
				if (c->dz == NULL || c->out == NULL ||
				    ZSTD_isError(ZSTD_initDStream(c->dz)) ||
				    ZSTD_isError(ZSTD_DCtx_setParameter(c->dz,
				    ZSTD_d_windowLogMax, ZSTD_WINDOW_LOG_MAX))) {
					fail(c, "out of memory");
					return -1;
				}
			}
		}
		if (c->dz == NULL) {
			if (c->in_pos < c->in_len) {
				/* Plain input is fed straight from the raw
				 * buffer. */
				c->out_len = c->in_len;
				c->out_pos = c->in_pos;
				c->in_pos = c->in_len;
				return 1;
			}
			if (c->raw_eof)
				return 0;
			continue;
		}
		ZSTD_inBuffer ib = { c->in, c->in_len, c->in_pos };
		ZSTD_outBuffer ob = { c->out, ZSTD_DStreamOutSize(), 0 };
		size_t z = ZSTD_decompressStream(c->dz, &ob, &ib);
		if (ZSTD_isError(z)) {
			fail(c, "zstd: %s", ZSTD_getErrorName(z));
			return -1;
		}
		/* A call that neither reads nor writes returns the hint for a
		 * frame that may follow, so it does not count. */
		if (ib.pos > c->in_pos || ob.pos > 0)
			c->zlast = z;
		c->in_pos = ib.pos;
		if (ob.pos > 0) {
			c->out_len = ob.pos;
			c->out_pos = 0;
			return 1;
		}
		/* No output and no input left: the last frame must have
		 * ended (a result of 0). */
		if (c->in_pos == c->in_len && c->raw_eof) {
			if (c->zlast != 0) {
				fail(c, "zstd: truncated compressed input");
				return -1;
			}
			return 0;
		}
	}
}

static const unsigned char *
data_ptr(const struct csvin *c)
{
	return c->dz ? c->out : c->in;
}

/* Move the fields of an unfinished record to the front of the arena once
 * every queued record was returned, so memory stays bounded by the
 * longest record. */
static void
compact(struct csvin *c)
{
	size_t first, base;

	c->nrec = c->rhead = 0;
	if (!c->in_rec) {
		c->nf = c->alen = 0;
		return;
	}
	first = c->cur_f0;
	base = first < c->nf ? c->foff[first] : c->alen;
	memmove(c->arena, c->arena + base, c->alen - base);
	c->alen -= base;
	for (size_t i = first; i < c->nf; i++)
		c->foff[i - first] = c->foff[i] - base;
	c->nf -= first;
	c->cur_f0 = 0;
}

/* Feed input to libcsv one line at a time (up to and including each LF)
 * until a record is queued, an error occurs or the input ends.  Feeding
 * by lines is what lets records carry the number of the line they start
 * on: when the parser sits between records at the start of a line, a
 * record that begins in it starts on that line. */
static void
parse_more(struct csvin *c)
{
	int rc;

	while (c->nrec == 0 && !c->err && !c->eof) {
		if (c->out_pos == c->out_len) {
			if ((rc = fill(c)) < 0)
				return;
			if (rc == 0) {
				c->eof = 1;
				if (csv_fini(&c->p, on_field, on_record, c) != 0 &&
				    !c->err) {
					c->line = c->cand;
					fail(c, "quoted field not closed at the "
					    "end of the input");
				}
				return;
			}
		}
		const unsigned char *d = data_ptr(c) + c->out_pos;
		size_t avail = c->out_len - c->out_pos, n;
		const unsigned char *lf = memchr(d, '\n', avail);

		if (!c->bom_checked) {
			/* A UTF-8 byte order mark is not part of the first
			 * field. */
			c->bom_checked = 1;
			if (avail >= 3 && memcmp(d, "\xef\xbb\xbf", 3) == 0) {
				c->out_pos += 3;
				continue;
			}
		}
		n = lf ? (size_t)(lf - d) + 1 : avail;
		if (c->p.pstate == CSV_BETWEEN_RECORDS)
			c->cand = c->line;
		if (csv_parse(&c->p, d, n, on_field, on_record, c) != n &&
		    !c->err) {
			if (csv_error(&c->p) == CSV_EPARSE)
				fail(c, "misplaced quote (quote a whole field, "
				    "and double quotes inside it)");
			else
				fail(c, "%s", csv_strerror(csv_error(&c->p)));
		}
		c->out_pos += n;
		if (!c->err && csv_get_buffer_size(&c->p) > CSVIN_MAX_FIELD)
			fail(c, "field longer than %zu bytes", CSVIN_MAX_FIELD);
		if (lf)
			c->line++;
	}
}

int
csvin_next(struct csvin *c, char ***fields, size_t *nfields)
{
	struct rec *r;

	if (c->failed)
		return -1;
	if (c->rhead == c->nrec) {
		compact(c);
		parse_more(c);
	}
	if (c->rhead == c->nrec) {
		if (c->err) {
			c->failed = 1;
			return -1;
		}
		return 0;
	}
	r = &c->recs[c->rhead++];
	if (grow((void **)&c->ptrs, &c->pcap, r->nf + 1, sizeof *c->ptrs) != 0) {
		c->line = r->line;
		c->err = 0;
		fail(c, "out of memory");
		c->failed = 1;
		return -1;
	}
	for (size_t i = 0; i < r->nf; i++)
		c->ptrs[i] = c->arena + c->foff[r->f0 + i];
	c->ptrs[r->nf] = NULL;
	*fields = c->ptrs;
	*nfields = r->nf;
	c->ret_line = r->line;
	return 1;
}

uint64_t
csvin_line(const struct csvin *c)
{
	return c->ret_line;
}

const char *
csvin_errmsg(const struct csvin *c)
{
	return c->err ? c->msg : "no error";
}

static int
is_blank(int ch)
{
	return ch == ' ' || ch == '\t';
}

int
csvin_double(const char *s, double *out)
{
	const char *p;
	char *end;
	double v;

	while (is_blank((unsigned char)*s))
		s++;
	if (*s == '\0' || isspace((unsigned char)*s))
		return -1;
	/* strtod also reads C99 hexadecimal floats; a CSV number is
	 * decimal, so "0x10" is not sixteen. */
	p = s + (*s == '+' || *s == '-');
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (end == s)
		return -1;
	while (is_blank((unsigned char)*end))
		end++;
	if (*end != '\0')
		return -1;
	/* Overflow is not a number we can represent; underflow rounds to a
	 * subnormal or zero, which is the nearest double. */
	if (errno == ERANGE && isinf(v))
		return -1;
	*out = v;
	return 0;
}
