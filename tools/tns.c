/* tns: verify, inspect, join, select, split and convert tensor streams. */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "ck.h"
#include "cli.h"
#include "csvin.h"
#include "ledger.h"
#include "npy.h"
#include "split.h"
#include "tensor.h"
#include "tstats.h"
#include "tstream.h"
#include "tsvalue.h"

#define MAX_PARTS 1000000
#define MAX_LISTED 20			/* tensor names listed in a message */
#define CSV_MAX_COLS (1u << 24)		/* columns named by to-csv --header */

/* Option bits: which subcommand accepts which option. */
enum {
	O_FORCE = 1 << 0, O_INPUT = 1 << 1, O_OUTPUT = 1 << 2,
	O_SEED = 1 << 3, O_LEVEL = 1 << 4, O_FORMAT = 1 << 5,
	O_STATS = 1 << 6, O_RENAME = 1 << 7, O_PARTS = 1 << 8,
	O_FRACTIONS = 1 << 9, O_PREFIX = 1 << 10, O_TENSORS = 1 << 11,
	O_TENSOR = 1 << 12, O_HEADER = 1 << 13, O_NAME = 1 << 14,
	O_DTYPE = 1 << 15, O_UNSAFE = 1 << 16
};

/* getopt values of the long-only options. */
enum {
	L_DTYPE = 256, L_FORMAT, L_FRACTIONS, L_HEADER, L_LEVEL, L_NAME,
	L_PARTS, L_PREFIX, L_RENAME, L_STATS, L_TENSOR, L_TENSORS, L_UNSAFE
};

static const struct option longopts[] = {
	{ "dtype", required_argument, NULL, L_DTYPE },
	{ "force", no_argument, NULL, 'f' },
	{ "format", required_argument, NULL, L_FORMAT },
	{ "fractions", required_argument, NULL, L_FRACTIONS },
	{ "header", no_argument, NULL, L_HEADER },
	{ "help", no_argument, NULL, 'h' },
	{ "input", required_argument, NULL, 'i' },
	{ "level", required_argument, NULL, L_LEVEL },
	{ "name", required_argument, NULL, L_NAME },
	{ "output", required_argument, NULL, 'o' },
	{ "parts", required_argument, NULL, L_PARTS },
	{ "prefix", required_argument, NULL, L_PREFIX },
	{ "quiet", no_argument, NULL, 'q' },
	{ "rename", required_argument, NULL, L_RENAME },
	{ "seed", required_argument, NULL, 'S' },
	{ "stats", no_argument, NULL, L_STATS },
	{ "tensor", required_argument, NULL, L_TENSOR },
	{ "tensors", required_argument, NULL, L_TENSORS },
	{ "unsafe-ledger", no_argument, NULL, L_UNSAFE },
	{ "verbose", no_argument, NULL, 'v' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

/* Option value, bit and spelling, for "does not apply" messages. */
static const struct {
	int ch;
	unsigned bit;
	const char *name;
} optbits[] = {
	{ 'f', O_FORCE, "--force" }, { 'i', O_INPUT, "--input" },
	{ 'o', O_OUTPUT, "--output" }, { 'S', O_SEED, "--seed" },
	{ L_LEVEL, O_LEVEL, "--level" }, { L_FORMAT, O_FORMAT, "--format" },
	{ L_STATS, O_STATS, "--stats" }, { L_RENAME, O_RENAME, "--rename" },
	{ L_PARTS, O_PARTS, "--parts" },
	{ L_FRACTIONS, O_FRACTIONS, "--fractions" },
	{ L_PREFIX, O_PREFIX, "--prefix" }, { L_TENSORS, O_TENSORS, "--tensors" },
	{ L_TENSOR, O_TENSOR, "--tensor" }, { L_HEADER, O_HEADER, "--header" },
	{ L_NAME, O_NAME, "--name" }, { L_DTYPE, O_DTYPE, "--dtype" },
	{ L_UNSAFE, O_UNSAFE, "--unsafe-ledger" },
};

struct opts {
	const char *input, *output, *level, *prefix, *tensor, *name;
	const char *tensors;
	int force, quiet, verbose, json, stats, header, unsafe_ledger, dtype;
	int have_seed;
	uint64_t parts, seed;
	double *fractions;
	size_t nfractions;
	char **renames;			/* "OLD=NEW" */
	size_t nrenames;
};

struct cmd {
	const char *name;
	int (*run)(struct opts *, int, char **);
	unsigned allowed;
};

static void usage(int) __attribute__((noreturn));

static void
usage(int status)
{
	FILE *fp = status ? stderr : stdout;

	fputs(
"usage: tns verify [-qv] [file ...]\n"
"       tns info [-qv] [--format text|json] [--stats] [file ...]\n"
"       tns cat [-fqv] [--level n] [-o file] [file ...]\n"
"       tns pick [-fqv] [-i file] [--level n] [-o file] [--rename old=new]\n"
"           name ...\n"
"       tns split [-fqv] {--fractions list | --parts n} [--level n]\n"
"           [--prefix prefix] [-S seed] [--tensors list] [file]\n"
"       tns to-csv [-qv] [--header] [-o file] [--tensor name] [file]\n"
"       tns from-csv [-fqv] [--dtype type] [--header] [--level n]\n"
"           [--name name] [-o file] [file]\n"
"       tns to-npy [-fqv] [-o file] [--tensor name] [file]\n"
"       tns from-npy [-fqv] [--level n] [--name name] [-o file] [file]\n"
"       tns meta set [-fqv] [-i file] [--level n] [-o file] [--unsafe-ledger]\n"
"           key=value ...\n", fp);
	if (status == 0)
		fputs(
"\n"
"commands:\n"
"  verify      check every byte of each stream; silent unless -v\n"
"  info        describe streams: tensors, metadata, privacy ledger\n"
"  cat         concatenate the tensors of the streams into one stream\n"
"  pick        keep the tensors whose names match the glob patterns\n"
"  split       partition the rows into disjoint, shuffled parts\n"
"  to-csv      write a 1-D or 2-D tensor as CSV\n"
"  from-csv    read numeric CSV into one 2-D tensor\n"
"  to-npy      write a tensor as a NumPy .npy file\n"
"  from-npy    read a NumPy .npy file into one tensor\n"
"  meta set    set stream metadata (for tests)\n"
"\n"
"options:\n"
"  -f, --force            write binary output to a terminal\n"
"  -h, --help             print this help and exit\n"
"  -i, --input file       the input stream of pick and meta (default stdin)\n"
"  -o, --output file      write to file (via a temporary file and rename)\n"
"  -q, --quiet            no warnings or progress\n"
"  -S, --seed seed        split with this 64-bit seed (default: getrandom)\n"
"  -V, --version          print the version and exit\n"
"  -v, --verbose          say more (verify: 'FILE: ok')\n"
"  --dtype type           from-csv element type: f64 (default), f32, i32,\n"
"                         i64, u8\n"
"  --format text|json     info output format (default text)\n"
"  --fractions list       split sizes as fractions summing to 1, e.g. 0.8,0.2\n"
"  --header               CSV has (from-csv) or gets (to-csv) a header line\n"
"  --level n              zstd level of output streams (default 1)\n"
"  --name name            tensor name for from-csv and from-npy (default x)\n"
"  --parts n              split into n parts of equal size (+-1 row)\n"
"  --prefix prefix        split output names: prefix<i>.tns (default part-)\n"
"  --rename old=new       pick: rename a picked tensor (repeatable)\n"
"  --stats                info: min, max and mean of each tensor\n"
"  --tensor name          to-csv, to-npy: the tensor (default the first)\n"
"  --tensors list         split: the tensors to split (default all)\n"
"  --unsafe-ledger        meta set: allow dp.* keys (tests only)\n", fp);
	exit(status);
}

/* ---- small helpers ---- */

/* Write the stream metadata (inherited keys, then prov.*) as one record
 * at the end, finish the stream and commit the output. */
static void
finish_stream(struct ts_writer *w, struct ts_meta *meta,
    const struct ts_meta *inputs)
{
	int rc;

	cli_prov(meta);
	if (inputs != NULL && ts_meta_merge(meta, inputs, "", NULL) != 0)
		cli_die(EX_OSERR, "out of memory");
	if ((rc = ts_write_meta(w, meta)) != 0 ||
	    (rc = ts_writer_finish(w)) != 0)
		cli_wdie(w, rc);
	ts_writer_close(w);
	ts_meta_free(meta);
	cli_out_commit();
}

/* Done with input idx, read to its end: the output inherits its metadata
 * and records its digest; then close it. */
static void
input_done(struct ts_reader *r, FILE *in, const char *label, int idx,
    struct ts_meta *meta, struct ts_meta *prov)
{
	cli_inherit(meta, ts_reader_meta(r), label);
	cli_prov_input(prov, idx, label, ts_reader_digest(r),
	    ts_reader_meta(r));
	ts_reader_close(r);
	cli_close_in(in);
}

/* Names of the tensors of a stream, for "the stream has ..." messages. */
struct names {
	char **v;
	int *src;
	size_t n;
};

static void
names_add(struct names *s, const char *name, int src)
{
	s->v = cli_reallocarray(s->v, s->n + 1, sizeof *s->v);
	s->src = cli_reallocarray(s->src, s->n + 1, sizeof *s->src);
	s->v[s->n] = cli_strdup(name);
	s->src[s->n++] = src;
}

static long
names_find(const struct names *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], name) == 0)
			return (long)i;
	return -1;
}

/* "a, b, c" (at most MAX_LISTED names) in a static buffer. */
static const char *
names_list(const struct names *s)
{
	static char buf[MAX_LISTED * (TS_MAX_NAME + 2) + 64];
	size_t len = 0;

	if (s->n == 0)
		return "no tensors";
	buf[0] = '\0';
	for (size_t i = 0; i < s->n && i < MAX_LISTED; i++)
		len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s",
		    i ? ", " : "", s->v[i]);
	if (s->n > MAX_LISTED)
		snprintf(buf + len, sizeof buf - len, ", ... (%zu in all)", s->n);
	return buf;
}

static void
names_free(struct names *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	free(s->src);
	memset(s, 0, sizeof *s);
}

/* Open each operand (none: stdin) before reading any. */
static FILE **
open_inputs(int argc, char **argv, const char ***labels, int *n)
{
	FILE **fps;

	*n = argc > 0 ? argc : 1;
	fps = cli_reallocarray(NULL, (size_t)*n, sizeof *fps);
	*labels = cli_reallocarray(NULL, (size_t)*n, sizeof **labels);
	for (int i = 0; i < *n; i++)
		fps[i] = cli_open_in(argc > 0 ? argv[i] : NULL, &(*labels)[i]);
	return fps;
}

static void
one_operand(int argc, const char *cmd)
{
	if (argc > 1)
		cli_usage_error("%s takes at most one input file", cmd);
}

static void
print_value(FILE *fp, int dtype, const unsigned char *p)
{
	char buf[TS_VALUE_TEXT];

	fputs(ts_value_format(buf, sizeof buf, dtype, p), fp);
}

/* ---- verify ---- */

static int
cmd_verify(struct opts *o, int argc, char **argv)
{
	const char **labels;
	int n, status = 0;
	FILE **fps = open_inputs(argc, argv, &labels, &n);
	struct tensor hdr;

	for (int i = 0; i < n; i++) {
		struct ts_reader *r = cli_reader(fps[i], labels[i]);
		int rc;

		/* ts_read_next skips unread rows by decompressing them, so
		 * every byte is checked without holding a tensor in memory. */
		while ((rc = ts_read_next(r, &hdr)) == 1)
			tensor_free(&hdr);
		if (rc < 0) {
			if (rc == TS_E_NOMEM || rc == TS_E_USAGE)
				cli_rdie(r, rc);
			fprintf(stderr, "%s: %s\n", cli_prog(),
			    ts_reader_errmsg(r));
			if (status == 0)
				status = rc == TS_E_IO ? EX_IOERR : EX_DATAERR;
		} else if (o->verbose) {
			printf("%s: ok\n", labels[i]);
		}
		ts_reader_close(r);
		cli_close_in(fps[i]);
	}
	free(fps);
	free(labels);
	cli_out_commit();
	return status;
}

/* ---- info ---- */

struct tinfo {
	char name[TS_MAX_NAME + 1];
	int dtype, ndim, streamed;
	uint64_t dims[TS_MAX_NDIM];
	uint64_t bytes;
	struct ts_meta meta;
	struct ts_stats st;
};

struct finfo {
	const char *label;
	char version[16];
	uint64_t digest;
	struct tinfo *t;
	size_t nt;
	struct ts_meta meta;
};

static void
read_info(struct finfo *fi, FILE *fp, const char *label, int want_stats,
    struct cli_rowbuf *b)
{
	struct ts_reader *r = cli_reader(fp, label);
	struct tensor hdr;
	int rc, major, minor;

	memset(fi, 0, sizeof *fi);
	fi->label = label;
	while ((rc = ts_read_next(r, &hdr)) == 1) {
		struct tinfo *ti;
		uint64_t rb = ts_reader_row_bytes(r), rows = 0, n;
		int done = 0;

		fi->t = cli_reallocarray(fi->t, fi->nt + 1, sizeof *fi->t);
		ti = &fi->t[fi->nt++];
		memset(ti, 0, sizeof *ti);
		memcpy(ti->name, hdr.name, sizeof ti->name);
		ti->dtype = hdr.dtype;
		ti->ndim = hdr.ndim;
		memcpy(ti->dims, hdr.dims, sizeof ti->dims);
		ti->streamed = hdr.ndim > 0 && hdr.dims[0] == TS_UNKNOWN_ROWS;
		ti->meta = hdr.meta;
		memset(&hdr.meta, 0, sizeof hdr.meta);
		if (want_stats) {
			uint64_t cap = cli_rowbuf_rows(b, rb, &hdr);
			uint64_t per = rb / ts_dtype_size(ti->dtype);
			while (!done) {
				n = cli_fill_rows(r, b->p, rb, cap, &done);
				ts_stats_update(&ti->st, ti->dtype, b->p, n * per);
				rows += n;
			}
		} else {
			int64_t k;
			while ((k = ts_read_rows(r, NULL, UINT64_MAX)) > 0)
				rows += (uint64_t)k;
			if (k < 0)
				cli_rdie(r, (int)k);
		}
		if (ti->ndim > 0)
			ti->dims[0] = rows;
		/* rows * rb was checked by the reader as rows arrived. */
		ti->bytes = rows * rb;
		tensor_free(&hdr);
	}
	if (rc < 0)
		cli_rdie(r, rc);
	if (ts_reader_version(r, &major, &minor) == 0)
		snprintf(fi->version, sizeof fi->version, "%d.%d", major, minor);
	else
		snprintf(fi->version, sizeof fi->version, "?");
	fi->digest = ts_reader_digest(r);
	if (ts_meta_merge(&fi->meta, ts_reader_meta(r), "", NULL) != 0)
		cli_die(EX_OSERR, "out of memory");
	ts_reader_close(r);
}

static void
finfo_free(struct finfo *fi)
{
	for (size_t i = 0; i < fi->nt; i++)
		ts_meta_free(&fi->t[i].meta);
	free(fi->t);
	ts_meta_free(&fi->meta);
}

static void
fmt_shape(char *buf, size_t len, const struct tinfo *t)
{
	size_t k = 0;

	k += (size_t)snprintf(buf, len, "(");
	for (int i = 0; i < t->ndim; i++)
		k += (size_t)snprintf(buf + k, len - k, "%s%llu", i ? ", " : "",
		    (unsigned long long)t->dims[i]);
	snprintf(buf + k, len - k, t->ndim == 1 ? ",)" : ")");
}

/* Text: control characters escaped, so metadata cannot drive a
 * terminal.  The result is malloc'd. */
static char *
text_escape(const char *s)
{
	size_t n = strlen(s), k = 0;
	char *out = cli_reallocarray(NULL, n + 1, 4);

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '\n')
			k += (size_t)sprintf(out + k, "\\n");
		else if (c == '\t')
			k += (size_t)sprintf(out + k, "\\t");
		else if (c < 0x20 || c == 0x7f)
			k += (size_t)sprintf(out + k, "\\x%02x", c);
		else
			out[k++] = (char)c;
	}
	out[k] = '\0';
	return out;
}

/* Display width of UTF-8 text: code points (continuation bytes skipped). */
static size_t
text_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			w++;
	return w;
}

/* A table printed with columns aligned, two spaces apart. */
struct table {
	char **cell;
	size_t ncols, nrows;
};

static void
table_add(struct table *t, char **row)
{
	t->cell = cli_reallocarray(t->cell, (t->nrows + 1) * t->ncols, sizeof *t->cell);
	for (size_t j = 0; j < t->ncols; j++)
		t->cell[t->nrows * t->ncols + j] = text_escape(row[j] ? row[j] :
		    "");
	t->nrows++;
}

static void
table_print(FILE *fp, struct table *t, const char *indent)
{
	size_t w[16] = { 0 };

	for (size_t i = 0; i < t->nrows; i++)
		for (size_t j = 0; j < t->ncols; j++) {
			size_t x = text_width(t->cell[i * t->ncols + j]);
			if (x > w[j])
				w[j] = x;
		}
	for (size_t i = 0; i < t->nrows; i++) {
		size_t last = t->ncols;
		while (last > 1 && t->cell[i * t->ncols + last - 1][0] == '\0')
			last--;
		fputs(indent, fp);
		for (size_t j = 0; j < last; j++) {
			const char *c = t->cell[i * t->ncols + j];
			fputs(c, fp);
			if (j + 1 < last)
				fprintf(fp, "%*s", (int)(w[j] - text_width(c) + 2),
				    "");
		}
		fputc('\n', fp);
	}
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cell[i]);
	free(t->cell);
	t->cell = NULL;
	t->nrows = 0;
}

/* Text output shortens long values (a ledger RDP curve, feature names)
 * unless -v; JSON always has them whole. */
static int show_full;
#define SHOW_MAX 72

static void
table_add_kv(struct table *t, const struct ts_kv *kv)
{
	char *row[2] = { kv->key, kv->val }, *cut = NULL;
	size_t n = strlen(kv->val);

	if (!show_full && n > SHOW_MAX) {
		int k = SHOW_MAX - 12;
		while (k > 0 && ((unsigned char)kv->val[k] & 0xC0) == 0x80)
			k--;	/* cut between UTF-8 sequences */
		cut = cli_malloc(SHOW_MAX + 48);
		snprintf(cut, SHOW_MAX + 48, "%.*s... (%zu bytes; -v shows all)",
		    k, kv->val, n);
		row[1] = cut;
	}
	table_add(t, row);
	free(cut);
}

static void
meta_table(FILE *fp, const struct ts_meta *m, const char *indent)
{
	struct table t = { NULL, 2, 0 };

	for (size_t i = 0; i < m->n; i++)
		table_add_kv(&t, &m->kv[i]);
	table_print(fp, &t, indent);
}

/* The ledger groups of dp.* keys other than dp.raw.*: "dp.A.B" from the
 * second and third dotted segments (or "dp.A" for a two-segment key), in
 * order of first appearance.  The ledger's semantics belong to the DP
 * tools; info only shows what is there. */
static size_t
ledger_group(const char *key, char *grp, size_t len)
{
	const char *p = key + 3, *dot = strchr(p, '.');
	size_t n;

	if (dot != NULL && (dot = strchr(dot + 1, '.')) != NULL)
		n = (size_t)(dot - key);
	else
		n = strlen(key);
	if (n >= len)
		n = len - 1;
	memcpy(grp, key, n);
	grp[n] = '\0';
	return n;
}

static int
is_raw_key(const char *key)
{
	return strncmp(key, "dp.raw.", 7) == 0 && key[7] != '\0';
}

/* Is key a ledger entry (dp.*, not dp.raw.*) of group grp? */
static int
in_group(const char *key, const char *grp)
{
	char g[TS_MAX_KEY + 1];

	if (strncmp(key, "dp.", 3) != 0 || is_raw_key(key))
		return 0;
	ledger_group(key, g, sizeof g);
	return strcmp(g, grp) == 0;
}

/* Does the i-th key of m open a ledger group (its first entry)?  Then
 * grp is set to the group. */
static int
group_first(const struct ts_meta *m, size_t i, char *grp, size_t len)
{
	const char *k = m->kv[i].key;

	if (strncmp(k, "dp.", 3) != 0 || is_raw_key(k))
		return 0;
	ledger_group(k, grp, len);
	for (size_t j = 0; j < i; j++)
		if (in_group(m->kv[j].key, grp))
			return 0;
	return 1;
}

static void
info_text(FILE *fp, const struct finfo *fi, int want_stats)
{
	struct table t = { NULL, want_stats ? 9u : 5u, 0 };
	char shape[TS_MAX_NDIM * 22 + 4], bytes[24], mn[32], mx[32], mean[32],
	    nans[24];
	char *head[9] = { "name", "dtype", "shape", "bytes", "rows", "min",
	    "max", "mean", "nan" };
	const struct ts_meta *m = &fi->meta;
	int any = 0;

	fprintf(fp, "%s\n", fi->label);
	fprintf(fp, "  version  %s\n", fi->version);
	fprintf(fp, "  xxh64    %016llx\n", (unsigned long long)fi->digest);
	fprintf(fp, "  tensors  %zu\n", fi->nt);
	if (fi->nt > 0) {
		fputc('\n', fp);
		table_add(&t, head);
	}
	for (size_t i = 0; i < fi->nt; i++) {
		const struct tinfo *ti = &fi->t[i];
		const struct ts_stats *s = &ti->st;
		char *row[9] = { (char *)ti->name,
		    (char *)ts_dtype_name(ti->dtype), shape, bytes,
		    ti->streamed ? "streamed" : "declared", mn, mx, mean, nans };

		fmt_shape(shape, sizeof shape, ti);
		snprintf(bytes, sizeof bytes, "%llu",
		    (unsigned long long)ti->bytes);
		if (s->count > 0) {
			ts_stat_format(mn, sizeof mn, ti->dtype, s->min,
			    s->imin, 1);
			ts_stat_format(mx, sizeof mx, ti->dtype, s->max,
			    s->imax, 1);
			ts_stat_format(mean, sizeof mean, ti->dtype,
			    ts_stats_mean(s), 0, 0);
		} else {
			strcpy(mn, "-");
			strcpy(mx, "-");
			strcpy(mean, "-");
		}
		snprintf(nans, sizeof nans, "%llu", (unsigned long long)s->nans);
		table_add(&t, row);
	}
	table_print(fp, &t, "  ");
	for (size_t i = 0; i < fi->nt; i++) {
		if (fi->t[i].meta.n == 0)
			continue;
		fprintf(fp, "\n  tensor %s metadata\n", fi->t[i].name);
		meta_table(fp, &fi->t[i].meta, "    ");
	}
	fprintf(fp, "\n  stream metadata\n");
	if (m->n == 0)
		fprintf(fp, "    (none)\n");
	meta_table(fp, m, "    ");
	fprintf(fp, "\n  ledger\n");
	for (size_t i = 0; i < m->n; i++) {
		if (!is_raw_key(m->kv[i].key))
			continue;
		char *ds = text_escape(m->kv[i].key + 7),
		    *kind = text_escape(m->kv[i].val);
		fprintf(fp, "    raw-derived from dataset %s (%s): NOT private\n",
		    ds, kind);
		free(ds);
		free(kind);
		any = 1;
	}
	for (size_t i = 0; i < m->n; i++) {
		char grp[TS_MAX_KEY + 1];
		struct table gt = { NULL, 2, 0 };

		if (!group_first(m, i, grp, sizeof grp))
			continue;
		fprintf(fp, "    %s%s\n", grp, strcmp(grp, m->kv[i].key) ?
		    ".*" : "");
		for (size_t j = i; j < m->n; j++)
			if (in_group(m->kv[j].key, grp))
				table_add_kv(&gt, &m->kv[j]);
		table_print(fp, &gt, "      ");
		any = 1;
	}
	if (!any)
		fprintf(fp, "    (no dp.* entries)\n");
}

/* JSON strings: UTF-8 passes through (the reader checked it), control
 * characters are escaped; bytes of a file name that are not UTF-8 become
 * '?'. */
static void
json_str(FILE *fp, const char *s)
{
	int utf8 = ts_utf8_valid(s, strlen(s));

	fputc('"', fp);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(fp, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", fp);
		else if (c == '\t')
			fputs("\\t", fp);
		else if (c < 0x20 || c == 0x7f)
			fprintf(fp, "\\u%04x", c);
		else if (c >= 0x80 && !utf8)
			fputc('?', fp);
		else
			fputc(c, fp);
	}
	fputc('"', fp);
}

/* A JSON number; NaN and infinities (not JSON numbers) as strings. */
static void
json_num(FILE *fp, int dtype, double v, int64_t iv, int exact_int)
{
	char buf[32];

	if (isnan(v) && !(exact_int && ts_dtype_is_int(dtype)))
		fputs("\"nan\"", fp);
	else if (isinf(v) && !(exact_int && ts_dtype_is_int(dtype)))
		fputs(v > 0 ? "\"inf\"" : "\"-inf\"", fp);
	else {
		ts_stat_format(buf, sizeof buf, dtype, v, iv, exact_int);
		fputs(buf, fp);
	}
}

static void
json_meta(FILE *fp, const struct ts_meta *m)
{
	fputc('{', fp);
	for (size_t i = 0; i < m->n; i++) {
		if (i)
			fputc(',', fp);
		json_str(fp, m->kv[i].key);
		fputc(':', fp);
		json_str(fp, m->kv[i].val);
	}
	fputc('}', fp);
}

static void
info_json(FILE *fp, const struct finfo *fi, int want_stats)
{
	const struct ts_meta *m = &fi->meta;
	int first = 1;

	fputs("{\"file\":", fp);
	json_str(fp, fi->label);
	fprintf(fp, ",\"version\":\"%s\",\"xxh64\":\"%016llx\",\"tensors\":[",
	    fi->version, (unsigned long long)fi->digest);
	for (size_t i = 0; i < fi->nt; i++) {
		const struct tinfo *ti = &fi->t[i];
		const struct ts_stats *s = &ti->st;

		fprintf(fp, "%s{\"name\":", i ? "," : "");
		json_str(fp, ti->name);
		fprintf(fp, ",\"dtype\":\"%s\",\"shape\":[",
		    ts_dtype_name(ti->dtype));
		for (int d = 0; d < ti->ndim; d++)
			fprintf(fp, "%s%llu", d ? "," : "",
			    (unsigned long long)ti->dims[d]);
		fprintf(fp, "],\"streamed\":%s,\"bytes\":%llu,\"metadata\":",
		    ti->streamed ? "true" : "false",
		    (unsigned long long)ti->bytes);
		json_meta(fp, &ti->meta);
		if (want_stats) {
			fprintf(fp, ",\"stats\":{\"count\":%llu,\"nan\":%llu",
			    (unsigned long long)s->count,
			    (unsigned long long)s->nans);
			if (s->count > 0) {
				fputs(",\"min\":", fp);
				json_num(fp, ti->dtype, s->min, s->imin, 1);
				fputs(",\"max\":", fp);
				json_num(fp, ti->dtype, s->max, s->imax, 1);
				fputs(",\"mean\":", fp);
				json_num(fp, ti->dtype, ts_stats_mean(s), 0, 0);
			} else {
				fputs(",\"min\":null,\"max\":null,\"mean\":null",
				    fp);
			}
			fputc('}', fp);
		}
		fputc('}', fp);
	}
	fputs("],\"metadata\":", fp);
	json_meta(fp, m);
	fputs(",\"ledger\":{\"raw\":[", fp);
	for (size_t i = 0; i < m->n; i++) {
		if (!is_raw_key(m->kv[i].key))
			continue;
		fprintf(fp, "%s{\"dataset\":", first ? "" : ",");
		json_str(fp, m->kv[i].key + 7);
		fputs(",\"kind\":", fp);
		json_str(fp, m->kv[i].val);
		fputs(",\"private\":false}", fp);
		first = 0;
	}
	fputs("],\"groups\":[", fp);
	first = 1;
	for (size_t i = 0; i < m->n; i++) {
		char grp[TS_MAX_KEY + 1];
		int f2 = 1;

		if (!group_first(m, i, grp, sizeof grp))
			continue;
		fprintf(fp, "%s{\"group\":", first ? "" : ",");
		json_str(fp, grp);
		fputs(",\"entries\":{", fp);
		for (size_t j = i; j < m->n; j++) {
			const char *kj = m->kv[j].key;
			if (!in_group(kj, grp))
				continue;
			if (!f2)
				fputc(',', fp);
			json_str(fp, kj);
			fputc(':', fp);
			json_str(fp, m->kv[j].val);
			f2 = 0;
		}
		fputs("}}", fp);
		first = 0;
	}
	fputs("]}}\n", fp);
}

static int
cmd_info(struct opts *o, int argc, char **argv)
{
	const char **labels;
	int n;
	FILE **fps = open_inputs(argc, argv, &labels, &n);
	struct cli_rowbuf b = { NULL, 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *mem;

	show_full = o->verbose;

	/* Everything is read before anything is printed: a bad stream
	 * leaves stdout empty. */
	if ((mem = open_memstream(&text, &len)) == NULL)
		cli_die(EX_OSERR, "out of memory");
	for (int i = 0; i < n; i++) {
		struct finfo fi;

		read_info(&fi, fps[i], labels[i], o->stats, &b);
		cli_close_in(fps[i]);
		if (o->json) {
			info_json(mem, &fi, o->stats);
		} else {
			if (i > 0)
				fputc('\n', mem);
			info_text(mem, &fi, o->stats);
		}
		finfo_free(&fi);
	}
	if (fclose(mem) != 0)
		cli_die(EX_OSERR, "out of memory");
	fwrite(text, 1, len, stdout);
	free(text);
	cli_rowbuf_free(&b);
	free(fps);
	free(labels);
	cli_out_commit();
	return 0;
}

/* ---- cat ---- */

static int
cmd_cat(struct opts *o, int argc, char **argv)
{
	const char **labels;
	int n;
	FILE **fps = open_inputs(argc, argv, &labels, &n);
	struct ts_writer *w = cli_writer(cli_out_open(o->output, o->force),
	    o->level);
	struct ts_meta meta = { 0 }, prov = { 0 };
	struct names seen = { 0 };
	struct cli_rowbuf b = { NULL, 0 };
	struct tensor hdr;

	for (int i = 0; i < n; i++) {
		struct ts_reader *r = cli_reader(fps[i], labels[i]);
		int rc;

		while ((rc = ts_read_next(r, &hdr)) == 1) {
			long j = names_find(&seen, hdr.name);
			if (j >= 0)
				cli_die(EX_DATAERR, "%s: tensor '%s' is also in "
				    "%s (names must be unique; rename with "
				    "'tns pick --rename')", labels[i], hdr.name,
				    labels[seen.src[j]]);
			names_add(&seen, hdr.name, i);
			cli_pass_tensor(r, w, &hdr, &b);
			tensor_free(&hdr);
		}
		if (rc < 0)
			cli_rdie(r, rc);
		input_done(r, fps[i], labels[i], i, &meta, &prov);
	}
	cli_progress_done();
	if (o->verbose)
		fprintf(stderr, "%s: %zu tensors from %d streams\n", cli_prog(),
		    seen.n, n);
	finish_stream(w, &meta, &prov);
	ts_meta_free(&prov);
	names_free(&seen);
	cli_rowbuf_free(&b);
	free(fps);
	free(labels);
	return 0;
}

/* ---- pick ---- */

static int
cmd_pick(struct opts *o, int argc, char **argv)
{
	const char *label;
	FILE *in;
	struct ts_reader *r;
	struct ts_writer *w;
	struct ts_meta meta = { 0 }, prov = { 0 };
	struct names all = { 0 }, out = { 0 };
	struct cli_rowbuf b = { NULL, 0 };
	struct tensor hdr;
	char *matched, *renamed;
	int rc;

	if (argc < 1)
		cli_usage_error("pick needs at least one tensor name (the "
		    "input is -i FILE or stdin)");
	for (size_t k = 0; k < o->nrenames; k++) {
		char *eq = strchr(o->renames[k], '=');
		const char *bad;
		if (eq == NULL || eq == o->renames[k])
			cli_usage_error("invalid --rename '%s': expected "
			    "OLD=NEW", o->renames[k]);
		if ((bad = ts_check_name(eq + 1)) != NULL)
			cli_usage_error("invalid --rename '%s': %s",
			    o->renames[k], bad);
	}
	matched = cli_malloc((size_t)argc);
	memset(matched, 0, (size_t)argc);
	renamed = cli_malloc(o->nrenames);
	memset(renamed, 0, o->nrenames);
	in = cli_open_in(o->input, &label);
	w = cli_writer(cli_out_open(o->output, o->force), o->level);
	r = cli_reader(in, label);
	while ((rc = ts_read_next(r, &hdr)) == 1) {
		int hit = 0;

		names_add(&all, hdr.name, 0);
		for (int k = 0; k < argc; k++)
			if (fnmatch(argv[k], hdr.name, 0) == 0)
				hit = matched[k] = 1;
		if (hit) {
			for (size_t k = 0; k < o->nrenames; k++) {
				char *eq = strchr(o->renames[k], '=');
				if ((size_t)(eq - o->renames[k]) ==
				    strlen(hdr.name) && strncmp(o->renames[k],
				    hdr.name, strlen(hdr.name)) == 0) {
					snprintf(hdr.name, sizeof hdr.name,
					    "%s", eq + 1);
					renamed[k] = 1;
					break;
				}
			}
			if (names_find(&out, hdr.name) >= 0)
				cli_usage_error("tensor name '%s' would appear "
				    "twice in the output (check --rename)",
				    hdr.name);
			names_add(&out, hdr.name, 0);
			cli_pass_tensor(r, w, &hdr, &b);
		}
		tensor_free(&hdr);
	}
	if (rc < 0)
		cli_rdie(r, rc);
	for (int k = 0; k < argc; k++)
		if (!matched[k])
			cli_die(EX_DATAERR, "%s: no tensor matches '%s'; the "
			    "stream has: %s", label, argv[k], names_list(&all));
	for (size_t k = 0; k < o->nrenames; k++)
		if (!renamed[k])
			cli_die(EX_DATAERR, "%s: --rename '%s': no picked tensor "
			    "has that name; the stream has: %s", label,
			    o->renames[k], names_list(&all));
	cli_progress_done();
	input_done(r, in, label, 0, &meta, &prov);
	if (o->verbose)
		fprintf(stderr, "%s: picked %zu of %zu tensors\n", cli_prog(),
		    out.n, all.n);
	finish_stream(w, &meta, &prov);
	ts_meta_free(&prov);
	names_free(&all);
	names_free(&out);
	free(matched);
	free(renamed);
	cli_rowbuf_free(&b);
	return 0;
}

/* ---- meta set ---- */

static int
cmd_meta(struct opts *o, int argc, char **argv)
{
	const char *label;
	FILE *in;
	struct ts_reader *r;
	struct ts_writer *w;
	struct ts_meta meta = { 0 }, prov = { 0 }, set = { 0 };
	struct cli_rowbuf b = { NULL, 0 };
	struct tensor hdr;
	int rc;

	if (argc < 1 || strcmp(argv[0], "set") != 0)
		cli_usage_error(argc < 1 ? "meta needs a command: set" :
		    "unknown meta command '%s' (known: set)", argv[0]);
	if (argc < 2)
		cli_usage_error("meta set needs at least one KEY=VALUE");
	for (int k = 1; k < argc; k++) {
		/* A copy: argv stays as typed for prov.args. */
		char *key = cli_strdup(argv[k]), *eq = strchr(key, '=');
		const char *bad;

		if (eq == NULL)
			cli_usage_error("invalid metadata '%s': expected "
			    "KEY=VALUE", argv[k]);
		*eq = '\0';
		if ((bad = ts_check_key(key)) != NULL)
			cli_usage_error("invalid metadata key '%s': %s", key,
			    bad);
		if (strncmp(key, "prov.", 5) == 0)
			cli_usage_error("metadata key '%s': prov.* keys are "
			    "written by the tools", key);
		if (strncmp(key, "dp.", 3) == 0 && !o->unsafe_ledger)
			cli_usage_error("refusing to set ledger key '%s': dp.* "
			    "keys are written by the DP tools "
			    "(--unsafe-ledger is for tests)", key);
		if (!ts_utf8_valid(eq + 1, strlen(eq + 1)))
			cli_usage_error("metadata '%s': value is not UTF-8",
			    key);
		cli_meta_set(&set, key, eq + 1);
		free(key);
	}
	in = cli_open_in(o->input, &label);
	w = cli_writer(cli_out_open(o->output, o->force), o->level);
	r = cli_reader(in, label);
	while ((rc = ts_read_next(r, &hdr)) == 1) {
		cli_pass_tensor(r, w, &hdr, &b);
		tensor_free(&hdr);
	}
	if (rc < 0)
		cli_rdie(r, rc);
	cli_progress_done();
	input_done(r, in, label, 0, &meta, &prov);
	/* A test that forges a ledger forges all of it: the mark of rows
	 * imported without one goes (unless set again). */
	if (o->unsafe_ledger)
		ts_meta_del(&meta, LEDGER_PROVENANCE_KEY);
	for (size_t k = 0; k < set.n; k++) {
		const char *old = ts_meta_get(&meta, set.kv[k].key);
		/* tns adds ledger entries on request but never changes or
		 * removes one. */
		if (old != NULL && strncmp(set.kv[k].key, "dp.", 3) == 0 &&
		    strcmp(old, set.kv[k].val) != 0)
			cli_die(EX_DATAERR, "%s: ledger entry '%s' exists with "
			    "another value; tns never changes ledger entries",
			    label, set.kv[k].key);
		cli_meta_set(&meta, set.kv[k].key, set.kv[k].val);
	}
	finish_stream(w, &meta, &prov);
	ts_meta_free(&prov);
	ts_meta_free(&set);
	cli_rowbuf_free(&b);
	return 0;
}

/* ---- split ---- */

static int
cmd_split(struct opts *o, int argc, char **argv)
{
	const char *label;
	FILE *in;
	struct ts_reader *r;
	struct tensor *t = NULL, hdr;
	size_t nt = 0, nparts;
	struct names all = { 0 }, want = { 0 };
	uint64_t rows = 0, seed, *perm, *size, start = 0, digest;
	const char *seed_source;
	uint64_t parent, split_id;
	const char *bad;
	int width = 1, rc;

	one_operand(argc, "split");
	if ((o->parts != 0) == (o->nfractions != 0))
		cli_usage_error("split needs exactly one of --parts and "
		    "--fractions");
	nparts = o->parts ? (size_t)o->parts : o->nfractions;
	if (o->tensors != NULL) {
		char *list = cli_strdup(o->tensors);
		for (char *s = list, *tok; (tok = strsep(&s, ",")) != NULL;) {
			if (*tok == '\0' || ts_check_name(tok) != NULL)
				cli_usage_error("invalid --tensors: '%s' is not "
				    "a tensor name", tok);
			if (names_find(&want, tok) < 0)
				names_add(&want, tok, 0);
		}
		free(list);
	}
	if (o->have_seed) {
		seed = o->seed;
		seed_source = "seed";
	} else {
		unsigned char b[8];
		ssize_t got = getrandom(b, sizeof b, 0);
		if (got != (ssize_t)sizeof b)
			cli_die(EX_OSERR, "no secure randomness: getrandom: %s",
			    got < 0 ? strerror(errno) : "short read");
		seed = 0;
		for (int i = 0; i < 8; i++)
			seed |= (uint64_t)b[i] << (8 * i);
		seed_source = "getrandom";
	}
	in = cli_open_in(argc ? argv[0] : NULL, &label);
	r = cli_reader(in, label);
	/* The rows are held in memory: a part's rows come from anywhere in
	 * the input. */
	while ((rc = ts_read_next(r, &hdr)) == 1) {
		names_add(&all, hdr.name, 0);
		if (want.n > 0 && names_find(&want, hdr.name) < 0) {
			tensor_free(&hdr);
			continue;
		}
		if (hdr.ndim == 0)
			cli_die(EX_DATAERR, "%s: tensor '%s' is a scalar: it has "
			    "no rows to split (select others with --tensors)",
			    label, hdr.name);
		if ((rc = ts_read_data(r, &hdr)) != 0)
			cli_rdie(r, rc);
		if (nt > 0 && hdr.dims[0] != rows)
			cli_die(EX_DATAERR, "%s: tensor '%s' has %llu rows, '%s' "
			    "has %llu: split needs equal row counts (select "
			    "tensors with --tensors)", label, hdr.name,
			    (unsigned long long)hdr.dims[0], t[0].name,
			    (unsigned long long)rows);
		rows = hdr.dims[0];
		t = cli_reallocarray(t, nt + 1, sizeof *t);
		t[nt++] = hdr;
	}
	if (rc < 0)
		cli_rdie(r, rc);
	for (size_t k = 0; k < want.n; k++)
		if (names_find(&all, want.v[k]) < 0)
			cli_die(EX_DATAERR, "%s: --tensors: no tensor '%s'; the "
			    "stream has: %s", label, want.v[k], names_list(&all));
	if (nt == 0)
		cli_die(EX_DATAERR, "%s: no tensor to split", label);
	digest = ts_reader_digest(r);

	size = cli_reallocarray(NULL, nparts, sizeof *size);
	split_sizes(rows, nparts, o->parts ? NULL : o->fractions, size);
	if (split_permutation(rows, seed, &perm) != 0)
		cli_die(EX_OSERR, "out of memory");
	/* The split's identity, the same in every part and fresh on every
	 * run, seeded or not: parts of two runs may overlap (teacher-vote
	 * and kde-publish check).  Random, never a digest of the input: an
	 * unkeyed digest of the rows would let anyone who knows the other
	 * records test whether one was in them (tensor-stream.md, 10.2). */
	if (split_new_ids(&parent, &split_id) != 0)
		cli_die(EX_OSERR, "no secure randomness: %s", strerror(errno));
	for (size_t x = nparts - 1; x >= 10; x /= 10)
		width++;
	for (size_t i = 0; i < nparts; i++) {
		struct ts_meta meta = { 0 }, prov = { 0 };
		struct ts_writer *w;
		char *path;
		FILE *fp;

		if (asprintf(&path, "%s%0*zu.tns", o->prefix, width, i) < 0)
			cli_die(EX_OSERR, "out of memory");
		fp = cli_out_open_path(path);
		w = cli_writer_label(fp, path, o->level);
		for (size_t j = 0; j < nt; j++) {
			struct tensor h = t[j];
			uint64_t rb;
			const unsigned char *d = t[j].data;

			tensor_row_bytes(&t[j], &rb);
			h.dims[0] = size[i];
			if ((rc = ts_write_begin(w, &h)) != 0)
				cli_wdie(w, rc);
			for (uint64_t k = start; k < start + size[i]; k++)
				if ((rc = ts_write_rows(w, d + perm[k] * rb, 1))
				    != 0)
					cli_wdie(w, rc);
			if ((rc = ts_write_end(w)) != 0)
				cli_wdie(w, rc);
		}
		cli_inherit(&meta, ts_reader_meta(r), label);
		rc = split_mark(&meta, i, nparts, seed_source, parent, split_id,
		    &bad);
		if (rc == PV_E_LIMIT)
			cli_die(EX_DATAERR, "%s: ledger key '%s' is too long to "
			    "record in split.raw", label, bad);
		if (rc != 0)
			cli_die(EX_OSERR, "out of memory");
		cli_prov(&meta);
		cli_prov_input(&prov, 0, label, digest, ts_reader_meta(r));
		if (ts_meta_merge(&meta, &prov, "", NULL) != 0)
			cli_die(EX_OSERR, "out of memory");
		if ((rc = ts_write_meta(w, &meta)) != 0 ||
		    (rc = ts_writer_finish(w)) != 0)
			cli_wdie(w, rc);
		ts_writer_close(w);
		/* Closed now, to bound the open files; renamed into place
		 * by cli_out_commit, so parts appear only when all were
		 * written. */
		cli_out_close(fp);
		ts_meta_free(&meta);
		ts_meta_free(&prov);
		if (o->verbose)
			fprintf(stderr, "%s: %s: %llu rows\n", cli_prog(),
			    path, (unsigned long long)size[i]);
		free(path);
		start += size[i];
	}
	ts_reader_close(r);
	cli_close_in(in);
	for (size_t j = 0; j < nt; j++)
		tensor_free(&t[j]);
	free(t);
	free(perm);
	free(size);
	names_free(&all);
	names_free(&want);
	cli_out_commit();
	return 0;
}

/* ---- imports ---- */

/* CSV and NPY carry no ledger: whether the rows are raw records, models
 * fitted without privacy or outputs of DP releases is unknown, so the
 * output says so (formats/tensor-stream.md 10.1, rule 5) and DP tools
 * refuse it unless the user declares it (--assume-raw). */
static void
unknown_provenance(struct ts_meta *meta)
{
	cli_meta_set(meta, LEDGER_PROVENANCE_KEY, LEDGER_PROVENANCE_UNKNOWN);
}

/* ---- to-csv ---- */

/* Find the tensor --tensor names (or the first) and leave r on it.
 * Exits 65 naming what the stream has when it is absent. */
static void
seek_tensor(struct ts_reader *r, const char *label, const char *want,
    struct tensor *hdr)
{
	struct names all = { 0 };
	int rc;

	while ((rc = ts_read_next(r, hdr)) == 1) {
		if (want == NULL || strcmp(hdr->name, want) == 0) {
			names_free(&all);
			return;
		}
		names_add(&all, hdr->name, 0);
		tensor_free(hdr);
	}
	if (rc < 0)
		cli_rdie(r, rc);
	if (want == NULL)
		cli_die(EX_DATAERR, "%s: the stream has no tensor", label);
	cli_die(EX_DATAERR, "%s: no tensor '%s'; the stream has: %s", label,
	    want, names_list(&all));
}

/* Read the rest of the stream, so that a damaged end is still noticed. */
static void
drain(struct ts_reader *r)
{
	struct tensor hdr;
	int rc;

	while ((rc = ts_read_next(r, &hdr)) == 1)
		tensor_free(&hdr);
	if (rc < 0)
		cli_rdie(r, rc);
}

static int
cmd_to_csv(struct opts *o, int argc, char **argv)
{
	const char *label;
	FILE *in, *out;
	struct ts_reader *r;
	struct tensor hdr;
	struct cli_rowbuf b = { NULL, 0 };
	uint64_t rb, cap, cols, n, esz;
	int done = 0;

	one_operand(argc, "to-csv");
	in = cli_open_in(argc ? argv[0] : NULL, &label);
	/* CSV is text: a terminal is fine. */
	out = cli_out_open(o->output, 1);
	r = cli_reader(in, label);
	seek_tensor(r, label, o->tensor, &hdr);
	if (hdr.ndim > 2)
		cli_die(EX_DATAERR, "%s: tensor '%s' has %d dimensions: to-csv "
		    "writes 1-D and 2-D tensors", label, hdr.name, hdr.ndim);
	esz = ts_dtype_size(hdr.dtype);
	rb = ts_reader_row_bytes(r);
	cols = hdr.ndim == 2 ? hdr.dims[1] : 1;
	if (o->header) {
		/* The header's size follows a declared dimension, not the
		 * data, so it is bounded. */
		if (cols > CSV_MAX_COLS)
			cli_die(EX_DATAERR, "%s: tensor '%s' has %llu columns: "
			    "too many for a CSV header", label, hdr.name,
			    (unsigned long long)cols);
		if (hdr.ndim < 2)
			fprintf(out, "%s\n", hdr.name);
		else {
			for (uint64_t j = 0; j < cols; j++)
				fprintf(out, "%s%s_%llu", j ? "," : "", hdr.name,
				    (unsigned long long)j);
			fputc('\n', out);
		}
	}
	cap = cli_rowbuf_rows(&b, rb, &hdr);
	while (!done) {
		n = cli_fill_rows(r, b.p, rb, cap, &done);
		for (uint64_t i = 0; i < n; i++) {
			for (uint64_t j = 0; j < cols; j++) {
				if (j)
					putc(',', out);
				print_value(out, hdr.dtype, b.p + i * rb + j * esz);
			}
			putc('\n', out);
		}
		if (ferror(out))
			cli_die(EX_IOERR, "write error: %s", strerror(errno));
	}
	tensor_free(&hdr);
	drain(r);
	ts_reader_close(r);
	cli_close_in(in);
	cli_rowbuf_free(&b);
	cli_out_commit();
	return 0;
}

/* ---- from-csv ---- */

static int
cmd_from_csv(struct opts *o, int argc, char **argv)
{
	const char *label, *name = o->name ? o->name : "x", *bad;
	struct infile *in;
	struct csvin *c;
	struct ts_writer *w;
	struct ts_meta meta = { 0 }, prov = { 0 };
	struct tensor t;
	unsigned char *row = NULL;
	char **f;
	size_t nf, ncols = 0, esz = ts_dtype_size(o->dtype);
	uint64_t dims[2] = { TS_UNKNOWN_ROWS, 0 }, nrows = 0;
	int rc, begun = 0, have_cols = 0;

	one_operand(argc, "from-csv");
	if ((bad = ts_check_name(name)) != NULL)
		cli_usage_error("invalid --name '%s': %s", name, bad);
	in = cli_infile_open(argc ? argv[0] : NULL, 0);
	label = infile_label(in);
	w = cli_writer(cli_out_open(o->output, o->force), o->level);
	if ((c = csvin_open(infile_fp(in), label, ',')) == NULL)
		cli_die(EX_OSERR, "out of memory");
	while ((rc = csvin_next(c, &f, &nf)) == 1) {
		if (!have_cols) {
			ncols = nf;
			have_cols = 1;
			row = cli_reallocarray(NULL, ncols, esz);
			if (o->header)
				continue;
		} else if (nf != ncols) {
			free(row);
			cli_die(EX_DATAERR, "%s:%llu: %zu fields, expected %zu "
			    "like the first line", label,
			    (unsigned long long)csvin_line(c), nf, ncols);
		}
		for (size_t j = 0; j < nf; j++) {
			if ((bad = ts_value_parse(f[j], o->dtype, row + j * esz))
			    == NULL)
				continue;
			free(row);
			cli_die(EX_DATAERR, "%s:%llu: field %zu '%s' %s", label,
			    (unsigned long long)csvin_line(c), j + 1, f[j],
			    bad);
		}
		if (!begun) {
			dims[1] = ncols;
			if (tensor_init(&t, name, o->dtype, 2, dims) != 0)
				cli_die(EX_SOFTWARE, "bad tensor header");
			if ((rc = ts_write_begin(w, &t)) != 0)
				cli_wdie(w, rc);
			begun = 1;
		}
		if ((rc = ts_write_rows(w, row, 1)) != 0)
			cli_wdie(w, rc);
		nrows++;
	}
	if (rc < 0 && infile_error(in) != 0)
		cli_infile_die(in);
	if (rc < 0)
		cli_die(EX_DATAERR, "%s", csvin_errmsg(c));
	if (!begun) {
		/* No data rows: an empty tensor, as wide as the header. */
		dims[0] = 0;
		dims[1] = ncols;
		if (tensor_init(&t, name, o->dtype, 2, dims) != 0)
			cli_die(EX_SOFTWARE, "bad tensor header");
		if ((rc = ts_write_begin(w, &t)) != 0)
			cli_wdie(w, rc);
	}
	if ((rc = ts_write_end(w)) != 0)
		cli_wdie(w, rc);
	tensor_free(&t);
	csvin_close(c);
	cli_prov_input(&prov, 0, label, infile_digest(in), NULL);
	unknown_provenance(&meta);
	if (o->verbose)
		fprintf(stderr, "%s: %s: %llu rows of %zu columns\n", cli_prog(),
		    label, (unsigned long long)nrows, ncols);
	cli_infile_close(in);
	finish_stream(w, &meta, &prov);
	ts_meta_free(&prov);
	free(row);
	return 0;
}

/* ---- NumPy .npy ---- */

static int
cmd_from_npy(struct opts *o, int argc, char **argv)
{
	const char *label, *name = o->name ? o->name : "x", *bad;
	struct infile *in;
	FILE *fp;
	struct ts_writer *w;
	struct ts_meta meta = { 0 }, prov = { 0 };
	struct tensor t;
	struct cli_rowbuf b = { NULL, 0 };
	char msg[NPY_MSG];
	uint64_t rb, rows, cap;
	int rc;

	one_operand(argc, "from-npy");
	if ((bad = ts_check_name(name)) != NULL)
		cli_usage_error("invalid --name '%s': %s", name, bad);
	in = cli_infile_open(argc ? argv[0] : NULL, 0);
	label = infile_label(in);
	fp = infile_fp(in);
	w = cli_writer(cli_out_open(o->output, o->force), o->level);
	if ((rc = npy_read_header(fp, name, &t, msg)) != 0) {
		if (rc == PV_E_IO)
			cli_infile_die(in);
		if (rc == PV_E_USAGE)
			cli_die(EX_SOFTWARE, "%s", msg);
		if (rc == PV_E_NOMEM)
			cli_die(EX_OSERR, "out of memory");
		cli_die(EX_DATAERR, "%s: %s", label, msg);
	}
	tensor_row_bytes(&t, &rb);
	rows = tensor_rows(&t);
	if ((rc = ts_write_begin(w, &t)) != 0)
		cli_wdie(w, rc);
	cap = cli_rowbuf_rows(&b, rb, &t);
	for (uint64_t done = 0; done < rows;) {
		uint64_t k = rows - done < cap ? rows - done : cap;
		size_t got = fread(b.p, 1, (size_t)(k * rb), fp);
		if (got != k * rb) {
			if (ferror(fp))
				cli_infile_die(in);
			cli_die(EX_DATAERR, "%s: truncated: array data ends "
			    "inside row %llu of %llu", label,
			    (unsigned long long)(done + got / (rb ? rb : 1)),
			    (unsigned long long)rows);
		}
		if ((rc = ts_write_rows(w, b.p, k)) != 0)
			cli_wdie(w, rc);
		done += k;
	}
	if (fgetc(fp) != EOF)
		cli_die(EX_DATAERR, "%s: trailing bytes after the array data",
		    label);
	if (ferror(fp))
		cli_infile_die(in);
	if ((rc = ts_write_end(w)) != 0)
		cli_wdie(w, rc);
	tensor_free(&t);
	cli_prov_input(&prov, 0, label, infile_digest(in), NULL);
	unknown_provenance(&meta);
	cli_infile_close(in);
	finish_stream(w, &meta, &prov);
	ts_meta_free(&prov);
	cli_rowbuf_free(&b);
	return 0;
}

static int
cmd_to_npy(struct opts *o, int argc, char **argv)
{
	const char *label;
	FILE *in, *out;
	struct ts_reader *r;
	struct tensor hdr;
	char head[NPY_HEADER_BUF];
	size_t hn;
	uint64_t nb;
	int rc;

	one_operand(argc, "to-npy");
	if ((o->output == NULL || strcmp(o->output, "-") == 0) && !o->force &&
	    isatty(STDOUT_FILENO))
		cli_usage_error("refusing to write .npy data to a terminal "
		    "(redirect stdout, use --output, or --force)");
	in = cli_open_in(argc ? argv[0] : NULL, &label);
	out = cli_out_open(o->output, 1);
	r = cli_reader(in, label);
	seek_tensor(r, label, o->tensor, &hdr);
	/* The header states the row count, so a streamed tensor is read
	 * into memory first. */
	if ((rc = ts_read_data(r, &hdr)) != 0)
		cli_rdie(r, rc);
	drain(r);
	if ((hn = npy_header(head, sizeof head, &hdr)) == 0)
		cli_die(EX_SOFTWARE, "%s: dtype %d has no .npy type", label,
		    hdr.dtype);
	tensor_bytes(&hdr, &nb);
	if (fwrite(head, 1, hn, out) != hn ||
	    fwrite(hdr.data, 1, (size_t)nb, out) != (size_t)nb)
		cli_die(EX_IOERR, "write error: %s", strerror(errno));
	tensor_free(&hdr);
	ts_reader_close(r);
	cli_close_in(in);
	cli_out_commit();
	return 0;
}

/* ---- main ---- */

static const struct cmd cmds[] = {
	{ "verify", cmd_verify, 0 },
	{ "info", cmd_info, O_FORMAT | O_STATS },
	{ "cat", cmd_cat, O_FORCE | O_OUTPUT | O_LEVEL },
	{ "pick", cmd_pick, O_FORCE | O_INPUT | O_OUTPUT | O_LEVEL | O_RENAME,
	    },
	{ "split", cmd_split, O_FORCE | O_LEVEL | O_SEED | O_PARTS |
	    O_FRACTIONS | O_PREFIX | O_TENSORS },
	{ "to-csv", cmd_to_csv, O_OUTPUT | O_TENSOR | O_HEADER },
	{ "from-csv", cmd_from_csv, O_FORCE | O_OUTPUT | O_LEVEL | O_NAME |
	    O_DTYPE | O_HEADER },
	{ "to-npy", cmd_to_npy, O_FORCE | O_OUTPUT | O_TENSOR },
	{ "from-npy", cmd_from_npy, O_FORCE | O_OUTPUT | O_LEVEL | O_NAME,
	    },
	{ "meta", cmd_meta, O_FORCE | O_INPUT | O_OUTPUT | O_LEVEL | O_UNSAFE,
	    },
};

static void
parse_fractions(struct opts *o, const char *arg)
{
	char *s = cli_strdup(arg), *p = s, *tok;
	double sum = 0;

	o->nfractions = 0;	/* the last --fractions counts */

	while ((tok = strsep(&p, ",")) != NULL) {
		char *end;
		double f;

		errno = 0;
		f = strtod(tok, &end);
		if (end == tok || *end != '\0')
			cli_usage_error("invalid --fractions '%s': '%s' is not "
			    "a number", arg, tok);
		if (errno == ERANGE || !isfinite(f) || !(f > 0 && f <= 1))
			cli_usage_error("invalid --fractions '%s': '%s' is not "
			    "in (0, 1]", arg, tok);
		if (o->nfractions >= MAX_PARTS)
			cli_usage_error("invalid --fractions '%s': more than %d "
			    "parts", arg, MAX_PARTS);
		o->fractions = cli_reallocarray(o->fractions, o->nfractions + 1,
		    sizeof *o->fractions);
		o->fractions[o->nfractions++] = f;
		sum += f;
	}
	if (fabs(sum - 1) > 1e-6)
		cli_usage_error("invalid --fractions '%s': the fractions sum "
		    "to %.17g, not 1", arg, sum);
	free(s);
}

int
main(int argc, char **argv)
{
	static const char *const formats[] = { "text", "json", NULL };
	struct opts o = { .prefix = "part-", .dtype = TS_F64 };
	const struct cmd *cmd = NULL;
	char **av;
	int ac, ch, rc;

	cli_init(argv[0], argc, argv);
	if (argc < 2)
		usage(EX_USAGE);
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)
		usage(0);
	if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0)
		cli_version();
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		if (strcmp(argv[1], cmds[i].name) == 0)
			cmd = &cmds[i];
	if (cmd == NULL) {
		if (argv[1][0] == '-')
			cli_usage_error("the command comes first: tns COMMAND "
			    "[options] [file ...]");
		cli_usage_error("unknown command '%s'", argv[1]);
	}
	/* getopt permutes its argv: give it a copy, so prov.args keeps the
	 * command line as typed. */
	ac = argc - 1;
	av = cli_reallocarray(NULL, (size_t)argc, sizeof *av);
	av[0] = argv[0];
	for (int i = 2; i < argc; i++)
		av[i - 1] = argv[i];
	av[ac] = NULL;
	while ((ch = getopt_long(ac, av, "fhi:o:qS:vV", longopts, NULL)) != -1) {
		for (size_t i = 0; i < sizeof optbits / sizeof optbits[0]; i++)
			if (optbits[i].ch == ch && !(cmd->allowed & optbits[i].bit))
				cli_usage_error("option %s does not apply to "
				    "'tns %s'", optbits[i].name, cmd->name);
		switch (ch) {
		case 'f':
			o.force = 1;
			break;
		case 'h':
			usage(0);
		case 'i':
			o.input = optarg;
			break;
		case 'o':
			o.output = optarg;
			break;
		case 'q':
			o.quiet = 1;
			cli_set_quiet(1);
			break;
		case 'S':
			o.seed = cli_u64("--seed", optarg);
			o.have_seed = 1;
			break;
		case 'v':
			o.verbose = 1;
			break;
		case 'V':
			cli_version();
		case L_DTYPE:
			if ((o.dtype = ts_dtype_from_name(optarg)) == 0)
				cli_usage_error("invalid --dtype '%s': expected "
				    "f64, f32, i32, i64 or u8", optarg);
			break;
		case L_FORMAT:
			o.json = cli_choice("--format", optarg, formats);
			break;
		case L_FRACTIONS:
			parse_fractions(&o, optarg);
			break;
		case L_HEADER:
			o.header = 1;
			break;
		case L_LEVEL:
			o.level = cli_level_arg(optarg);
			break;
		case L_NAME:
			o.name = optarg;
			break;
		case L_PARTS:
			o.parts = (uint64_t)cli_ll("--parts", optarg, 1,
			    MAX_PARTS);
			break;
		case L_PREFIX:
			o.prefix = optarg;
			break;
		case L_RENAME:
			o.renames = cli_reallocarray(o.renames, o.nrenames + 1,
			    sizeof *o.renames);
			o.renames[o.nrenames++] = optarg;
			break;
		case L_STATS:
			o.stats = 1;
			break;
		case L_TENSOR:
			o.tensor = optarg;
			break;
		case L_TENSORS:
			o.tensors = optarg;
			break;
		case L_UNSAFE:
			o.unsafe_ledger = 1;
			break;
		default:
			usage(EX_USAGE);
		}
	}
	rc = cmd->run(&o, ac - optind, av + optind);
	free(av);
	free(o.fractions);
	free(o.renames);
	return rc;
}
