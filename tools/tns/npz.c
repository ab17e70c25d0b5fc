/* npz.c: tns to-npz: every tensor of a stream as a member NAME.npy of a
 * NumPy .npz (a zip archive of stored, uncompressed members, what
 * numpy.savez writes), and a member privada.json holding what tns info
 * --format json says of the stream: tensors, metadata and ledger. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "cli.h"
#include "npy.h"
#include "tensor.h"
#include "tns.h"
#include "tstream.h"

#define NPZ_JSON "privada.json"
#define ZIP_MAX 0xffffffffu	/* sizes and offsets without ZIP64 */
#define ZIP_MAX_MEMBERS 0xffffu
#define ZIP_DATE 0x0021		/* 1980-01-01, 00:00: reproducible output */

struct member {
	char *name;
	uint32_t crc, size, offset;
};

struct zipw {
	FILE *fp;
	const char *label;
	uint64_t off;
	struct member *m;
	size_t n;
};

static void
put16(unsigned char *p, unsigned v)
{
	p[0] = (unsigned char)(v & 0xff);
	p[1] = (unsigned char)((v >> 8) & 0xff);
}

static void
put32(unsigned char *p, uint32_t v)
{
	put16(p, v & 0xffff);
	put16(p + 2, v >> 16);
}

static void
zwrite(struct zipw *z, const void *p, size_t n)
{
	if (n > 0 && fwrite(p, 1, n, z->fp) != n)
		cli_die(EX_IOERR, "write error: %s", strerror(errno));
	z->off += n;
}

static uint32_t
crc(uint32_t c, const unsigned char *p, uint64_t n)
{
	/* zlib counts in uInt. */
	while (n > 0) {
		uInt k = n > 0x40000000u ? 0x40000000u : (uInt)n;
		c = (uint32_t)crc32(c, p, k);
		p += k;
		n -= k;
	}
	return c;
}

/* A stored member of head and data (either may be empty). */
static void
zip_member(struct zipw *z, const char *name, const void *head, size_t hn,
    const void *data, uint64_t dn)
{
	unsigned char h[30];
	size_t nl = strlen(name);
	uint64_t size = hn + dn;
	struct member *m;
	uint32_t c;

	if (size > ZIP_MAX || z->off > ZIP_MAX)
		cli_die(EX_DATAERR, "%s: member '%s': the .npz would exceed "
		    "4 GiB, which needs ZIP64 (not written by to-npz; use "
		    "to-npy per tensor)", z->label, name);
	if (z->n >= ZIP_MAX_MEMBERS)
		cli_die(EX_DATAERR, "%s: more than %u members", z->label,
		    ZIP_MAX_MEMBERS);
	c = crc((uint32_t)crc32(0, Z_NULL, 0), head, hn);
	c = crc(c, data, dn);
	z->m = cli_reallocarray(z->m, z->n + 1, sizeof *z->m);
	m = &z->m[z->n++];
	if ((m->name = strdup(name)) == NULL)
		cli_die(EX_OSERR, "out of memory");
	m->crc = c;
	m->size = (uint32_t)size;
	m->offset = (uint32_t)z->off;
	memset(h, 0, sizeof h);
	put32(h, 0x04034b50);
	put16(h + 4, 20);		/* version needed: 2.0 */
	put16(h + 12, ZIP_DATE);
	put32(h + 14, c);
	put32(h + 18, m->size);		/* compressed: stored */
	put32(h + 22, m->size);
	put16(h + 26, (unsigned)nl);
	zwrite(z, h, sizeof h);
	zwrite(z, name, nl);
	zwrite(z, head, hn);
	zwrite(z, data, (size_t)dn);
}

/* The central directory and its end record. */
static void
zip_finish(struct zipw *z)
{
	uint64_t start = z->off;
	unsigned char h[46], e[22];

	for (size_t i = 0; i < z->n; i++) {
		const struct member *m = &z->m[i];
		size_t nl = strlen(m->name);

		memset(h, 0, sizeof h);
		put32(h, 0x02014b50);
		put16(h + 4, 20);	/* made by: MS-DOS, 2.0 */
		put16(h + 6, 20);
		put16(h + 14, ZIP_DATE);
		put32(h + 16, m->crc);
		put32(h + 20, m->size);
		put32(h + 24, m->size);
		put16(h + 28, (unsigned)nl);
		put32(h + 42, m->offset);
		zwrite(z, h, sizeof h);
		zwrite(z, m->name, nl);
		free(m->name);
	}
	if (z->off > ZIP_MAX)
		cli_die(EX_DATAERR, "%s: the .npz would exceed 4 GiB, which "
		    "needs ZIP64 (not written by to-npz)", z->label);
	memset(e, 0, sizeof e);
	put32(e, 0x06054b50);
	put16(e + 8, (unsigned)z->n);
	put16(e + 10, (unsigned)z->n);
	put32(e + 12, (uint32_t)(z->off - start));
	put32(e + 16, (uint32_t)start);
	zwrite(z, e, sizeof e);
	free(z->m);
}

int
cmd_to_npz(struct opts *o, int argc, char **argv)
{
	const char *label;
	FILE *in, *mem;
	struct ts_reader *r;
	struct tensor hdr;
	struct zipw z = { 0 };
	struct finfo fi;
	char head[NPY_HEADER_BUF], mname[TS_MAX_NAME + 8];
	char *json = NULL;
	size_t hn, jlen = 0;
	uint64_t nb;
	int rc, major, minor;

	one_operand(argc, "to-npz");
	if ((o->c.output == NULL || strcmp(o->c.output, "-") == 0) &&
	    !o->c.force && isatty(STDOUT_FILENO))
		cli_usage_error("refusing to write .npz data to a terminal "
		    "(redirect stdout, use --output, or --force)");
	in = cli_open_in(argc ? argv[0] : NULL, &label);
	z.fp = cli_out_open(o->c.output, 1);
	z.label = label;
	r = cli_reader(in, label);
	memset(&fi, 0, sizeof fi);
	fi.label = label;
	/* One tensor in memory at a time: a streamed tensor's row count is
	 * known only at its end, and the .npy header states it. */
	while ((rc = ts_read_next(r, &hdr)) == 1) {
		struct tinfo *ti;
		int streamed = hdr.ndim > 0 && hdr.dims[0] == TS_UNKNOWN_ROWS;

		if ((rc = ts_read_data(r, &hdr)) != 0)
			cli_rdie(r, rc);
		if ((hn = npy_header(head, sizeof head, &hdr)) == 0)
			cli_die(EX_SOFTWARE, "%s: dtype %d has no .npy type",
			    label, hdr.dtype);
		tensor_bytes(&hdr, &nb);
		snprintf(mname, sizeof mname, "%s.npy", hdr.name);
		zip_member(&z, mname, head, hn, hdr.data, nb);
		fi.t = cli_reallocarray(fi.t, fi.nt + 1, sizeof *fi.t);
		ti = &fi.t[fi.nt++];
		memset(ti, 0, sizeof *ti);
		memcpy(ti->name, hdr.name, sizeof ti->name);
		ti->dtype = hdr.dtype;
		ti->ndim = hdr.ndim;
		memcpy(ti->dims, hdr.dims, sizeof ti->dims);
		ti->streamed = streamed;
		ti->bytes = nb;
		ti->meta = hdr.meta;
		memset(&hdr.meta, 0, sizeof hdr.meta);
		tensor_free(&hdr);
	}
	if (rc < 0)
		cli_rdie(r, rc);
	if (ts_reader_version(r, &major, &minor) == 0)
		snprintf(fi.version, sizeof fi.version, "%d.%d", major, minor);
	fi.digest = ts_reader_digest(r);
	if (ts_meta_merge(&fi.meta, ts_reader_meta(r), "", NULL) != 0)
		cli_die(EX_OSERR, "out of memory");
	if ((mem = open_memstream(&json, &jlen)) == NULL)
		cli_die(EX_OSERR, "out of memory");
	info_json(mem, &fi, 0);
	if (fclose(mem) != 0)
		cli_die(EX_OSERR, "out of memory");
	zip_member(&z, NPZ_JSON, json, jlen, NULL, 0);
	zip_finish(&z);
	free(json);
	finfo_free(&fi);
	ts_reader_close(r);
	cli_close_in(in);
	cli_out_commit();
	return 0;
}
