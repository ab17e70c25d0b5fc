/*
 * coral-align: align source rows with a target domain, per feature
 * subspace, by correlation alignment (CORAL) or subspace alignment.
 */
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ck.h"
#include "cli.h"
#include "coral.h"
#include "la.h"
#include "ledger.h"
#include "opts.h"
#include "tensor.h"
#include "tstream.h"

#define CHUNK_BYTES (32u << 20)		/* doubles of X rows gathered per GEMM */
#define MAX_CHUNK_ROWS 4096
#define SYM_RTOL 1e-12			/* see psdshrink: covariances are mirrored */
#define DEFAULT_REG 1.0			/* CORAL's lambda (Sun, Feng, Saenko 2016) */

enum { M_CORAL, M_SA };
enum { E_CONCAT, E_BLOCKS };
enum {
	OPT_APPLY_TARGET = OPTS_FIRST_TOOL, OPT_DIM, OPT_EMIT, OPT_METHOD,
	OPT_REG, OPT_SOURCE_COV, OPT_TARGET_COV
};

static const char *const methods[] = { "coral", "sa", NULL };
static const char *const emits[] = { "concat", "blocks", NULL };

struct opts {
	struct opts_common c;	/* -f -o -q -v --level */
	const char *source_cov, *target_cov;
	int method, emit, apply_target, reg_set;
	uint64_t dim;
	double reg;
};

/* One subspace block: its features, covariances and map. */
struct blk {
	uint64_t id;		/* the <i> of cov/<i> and subspace/<i> */
	size_t k;		/* features in the block */
	int64_t *idx;		/* their columns in X */
	double *cov;		/* k x k, borrowed from the stream's tensors */
	size_t w;		/* output columns */
	double *map;		/* k x w, or NULL for the identity */
	size_t off;		/* first output column (concat) */
};

/* A covariance stream (covest or psdshrink output). */
struct covs {
	const char *what, *label;	/* "source", "--source-cov FILE" */
	FILE *fp;
	struct tensor *t;
	size_t n;
	struct ts_meta meta;
	uint64_t digest;
	struct blk *b;
	size_t nb;
};

static const struct option longopts[] = {
	{ "force", no_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },
	{ "output", required_argument, NULL, 'o' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "version", no_argument, NULL, 'V' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "level", required_argument, NULL, OPTS_LEVEL },
	{ "apply-target", no_argument, NULL, OPT_APPLY_TARGET },
	{ "dim", required_argument, NULL, OPT_DIM },
	{ "emit", required_argument, NULL, OPT_EMIT },
	{ "method", required_argument, NULL, OPT_METHOD },
	{ "reg", required_argument, NULL, OPT_REG },
	{ "source-cov", required_argument, NULL, OPT_SOURCE_COV },
	{ "target-cov", required_argument, NULL, OPT_TARGET_COV },
	{ NULL, 0, NULL, 0 }
};

__attribute__((noreturn)) static void
usage(int status)
{
	FILE *fp = status ? stderr : stdout;

	fputs("usage: coral-align [-fhqVv] [-o file] [--apply-target] "
	    "[--dim k] [--emit how]\n"
	    "                   [--level n] [--method method] "
	    "[--reg lambda]\n"
	    "                   --source-cov file --target-cov file "
	    "[file]\n", fp);
	if (status == 0)
		fputs("\n"
		    "  -f, --force            write to a terminal\n"
		    "  -h, --help             show this help\n"
		    "  -o, --output FILE      write FILE (through a temporary "
		    "file), not stdout\n"
		    "  -q, --quiet            no warnings, no progress\n"
		    "  -V, --version          show the version\n"
		    "  -v, --verbose          report each block on stderr\n"
		    "      --apply-target     the rows are target rows: map them "
		    "as the target\n"
		    "                         side (coral: select only; sa: by "
		    "Pt)\n"
		    "      --dim K            sa: eigenvectors kept per block "
		    "(required)\n"
		    "      --emit HOW         concat (default: one X) or blocks "
		    "(X/<i>)\n"
		    "      --level N          zstd level of the output (default "
		    "1)\n"
		    "      --method METHOD    coral (default) or sa (subspace "
		    "alignment)\n"
		    "      --reg LAMBDA       coral: added to both covariances' "
		    "diagonal (default 1)\n"
		    "      --source-cov FILE  source covariances: cov/<i>, "
		    "subspace/<i> (required)\n"
		    "      --target-cov FILE  target covariances, same subspaces "
		    "(required)\n", fp);
	exit(status);
}

/* ---- ledger ---- */

/* Warn when a covariance stream derives from the raw records of a
 * dataset whose rows X holds: the output then depends on several of
 * its records, which no later DP step can account for. */
static void
check_taint(const struct ts_meta *x, const struct covs *c)
{
	for (size_t i = 0; i < x->n; i++) {
		const char *key = x->kv[i].key, *v;

		if (strncmp(key, "dp.raw.", 7) != 0 ||
		    (v = ts_meta_get(&c->meta, key)) == NULL)
			continue;
		cli_warn("the %s covariance is not differentially private for "
		    "dataset '%s' (%s: %s = %s): the output rows depend on "
		    "several of its records and are marked aggregate, so no "
		    "later DP step can claim privacy for '%s'", c->what,
		    key + 7, c->label, key, v, key + 7);
	}
}

/* ---- covariance streams ---- */

/* The <i> of "prefix<i>": canonical decimal.  @return 0 or -1. */
static int
parse_id(const char *name, const char *prefix, uint64_t *id)
{
	size_t n = strlen(prefix);
	const char *s = name + n;
	uint64_t v = 0;

	if (strncmp(name, prefix, n) != 0 || *s == '\0' ||
	    (s[0] == '0' && s[1] != '\0'))
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || ck_mul_u64(v, 10, &v) != 0 ||
		    ck_add_u64(v, (uint64_t)(*s - '0'), &v) != 0)
			return -1;
	}
	*id = v;
	return 0;
}

static const struct tensor *
find(const struct covs *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->t[i].name, name) == 0)
			return &c->t[i];
	return NULL;
}

static int
blk_cmp(const void *a, const void *b)
{
	const struct blk *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int
i64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Read a covariance stream whole and find its blocks. */
static void
covs_load(struct covs *c)
{
	struct ts_reader *r = cli_reader(c->fp, c->label);
	size_t nsub = 0, total = 0;
	int64_t *all;
	int rc;

	if ((rc = ts_read_all(r, &c->t, &c->n)) != 0)
		cli_rdie(r, rc);
	if (ts_meta_copy_except(&c->meta, ts_reader_meta(r), "") != 0)
		cli_die(EX_OSERR, "out of memory");
	c->digest = ts_reader_digest(r);
	ts_reader_close(r);
	cli_close_in(c->fp);
	c->b = cli_reallocarray(NULL, c->n, sizeof *c->b);
	for (size_t i = 0; i < c->n; i++) {
		const struct tensor *t = &c->t[i];
		struct blk *b;
		double asym;
		uint64_t id;

		if (strncmp(t->name, "subspace/", 9) == 0)
			nsub++;
		if (strncmp(t->name, "cov/", 4) != 0)
			continue;
		if (parse_id(t->name, "cov/", &id) != 0)
			cli_die(EX_DATAERR, "%s: tensor '%s': expected cov/<i> with "
			    "a decimal <i>", c->label, t->name);
		if (t->dtype != TS_F64 || t->ndim != 2 ||
		    t->dims[0] != t->dims[1])
			cli_die(EX_DATAERR, "%s: tensor '%s': expected an f64 "
			    "[k, k] covariance", c->label, t->name);
		b = &c->b[c->nb++];
		memset(b, 0, sizeof *b);
		b->id = id;
		b->k = (size_t)t->dims[0];
		b->cov = t->data;
		if (b->k == 0)
			cli_die(EX_DATAERR, "%s: tensor '%s' is empty", c->label,
			    t->name);
		asym = la_asymmetry(b->k, b->cov);
		if (asym < 0)
			cli_die(EX_DATAERR, "%s: tensor '%s': an entry is not "
			    "finite", c->label, t->name);
		if (asym > SYM_RTOL)
			cli_die(EX_DATAERR, "%s: tensor '%s' is not symmetric "
			    "(relative asymmetry %.3g)", c->label, t->name, asym);
	}
	if (c->nb == 0)
		cli_die(EX_DATAERR, "%s: no cov/<i> tensor (expected a covest "
		    "or psdshrink stream)", c->label);
	qsort(c->b, c->nb, sizeof *c->b, blk_cmp);
	for (size_t i = 0; i < c->nb; i++) {
		struct blk *b = &c->b[i];
		const struct tensor *s;
		char name[64];

		snprintf(name, sizeof name, "subspace/%llu",
		    (unsigned long long)b->id);
		b->idx = cli_reallocarray(NULL, b->k, sizeof *b->idx);
		if ((s = find(c, name)) == NULL) {
			/* One block and no subspaces: all features, in order. */
			if (c->nb != 1 || nsub != 0)
				cli_die(EX_DATAERR, "%s: no tensor '%s' for "
				    "cov/%llu", c->label, name,
				    (unsigned long long)b->id);
			for (size_t j = 0; j < b->k; j++)
				b->idx[j] = (int64_t)j;
			continue;
		}
		if (s->dtype != TS_I64 || s->ndim != 1 || s->dims[0] != b->k)
			cli_die(EX_DATAERR, "%s: tensor '%s': expected i64 [%zu] "
			    "like cov/%llu", c->label, name, b->k,
			    (unsigned long long)b->id);
		memcpy(b->idx, s->data, b->k * sizeof *b->idx);
		for (size_t j = 0; j < b->k; j++)
			if (b->idx[j] < 0)
				cli_die(EX_DATAERR, "%s: tensor '%s': negative "
				    "feature index %lld", c->label, name,
				    (long long)b->idx[j]);
		total += b->k;
	}
	/* Blocks are disjoint: a feature in two blocks would be counted
	 * twice by every downstream sensitivity bound. */
	if (c->nb == 1 && nsub == 0)
		return;
	all = cli_reallocarray(NULL, total, sizeof *all);
	total = 0;
	for (size_t i = 0; i < c->nb; i++) {
		memcpy(all + total, c->b[i].idx, c->b[i].k * sizeof *all);
		total += c->b[i].k;
	}
	qsort(all, total, sizeof *all, i64_cmp);
	for (size_t j = 1; j < total; j++)
		if (all[j] == all[j - 1]) {
			long long f = (long long)all[j];
			free(all);
			cli_die(EX_DATAERR, "%s: feature %lld is in two subspaces",
			    c->label, f);
		}
	free(all);
}

/* Both streams must describe the same blocks of the same features. */
static void
covs_match(const struct covs *s, const struct covs *t)
{
	if (s->nb != t->nb)
		cli_die(EX_DATAERR, "%s has %zu covariance blocks, %s has %zu: "
		    "the two must use the same subspaces", s->label, s->nb,
		    t->label, t->nb);
	for (size_t i = 0; i < s->nb; i++) {
		const struct blk *a = &s->b[i], *b = &t->b[i];

		if (a->id != b->id || a->k != b->k ||
		    memcmp(a->idx, b->idx, a->k * sizeof *a->idx) != 0)
			cli_die(EX_DATAERR, "%s and %s have different subspaces "
			    "(block %llu of %s: %zu features; block %llu of %s: "
			    "%zu features%s)", s->label, t->label,
			    (unsigned long long)a->id, s->label, a->k,
			    (unsigned long long)b->id, t->label, b->k,
			    a->id == b->id && a->k == b->k ? ", other indices" :
			    "");
	}
}

static void
covs_free(struct covs *c)
{
	for (size_t i = 0; i < c->n; i++)
		tensor_free(&c->t[i]);
	free(c->t);
	for (size_t i = 0; i < c->nb; i++)
		free(c->b[i].idx);
	free(c->b);
	ts_meta_free(&c->meta);
}

/* ---- the maps (coral.h) ---- */

static void
eig_check(const struct blk *b, const struct coral_eig *e, const char *what)
{
	if (e->rc != 0)
		cli_die(EX_SOFTWARE, "block %llu: the eigensolver failed on the "
		    "%s covariance", (unsigned long long)b->id, what);
}

/* The warnings of one side's clamped eigenvalues. */
static void
clamp_warn(const struct blk *b, const struct coral_eig *e, const char *what)
{
	if (e->neg > 0)
		cli_warn("block %llu: %zu negative eigenvalues of the %s "
		    "covariance plus --reg (smallest %.6g) clamped to 0 (run "
		    "psdshrink first, or raise --reg)", (unsigned long long)b->id,
		    e->neg, what, e->lo);
	if (e->dropped > 0)
		cli_warn("block %llu: the %s covariance plus --reg is singular: "
		    "%zu directions dropped (pseudo-inverse square root)",
		    (unsigned long long)b->id, what, e->dropped);
}

static void
map_check(int rc)
{
	if (rc == PV_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
}

/* The CORAL map of block s (t: the same block of the target stream). */
static void
coral_block(struct blk *s, const struct blk *t, double reg, int verbose)
{
	size_t k = s->k;
	struct coral_eig es, et;
	int rc;

	s->map = cli_reallocarray(NULL, k * k, sizeof *s->map);
	rc = coral_map(k, s->cov, t->cov, reg, s->map, &es, &et);
	map_check(rc);
	eig_check(s, &es, "source");
	if (verbose && k > 0)
		fprintf(stderr, "%s: block %llu: %zu features; source "
		    "eigenvalues (with --reg) %.6g to %.6g", cli_prog(),
		    (unsigned long long)s->id, k, es.lo, es.hi);
	clamp_warn(s, &es, "source");
	eig_check(t, &et, "target");
	if (verbose && k > 0)
		fprintf(stderr, ", target %.6g to %.6g\n", et.lo, et.hi);
	clamp_warn(t, &et, "target");
	s->w = k;
}

static void
top_verbose(const struct blk *b, const struct coral_eig *e, size_t dim,
    const char *what, int verbose)
{
	eig_check(b, e, what);
	if (verbose && b->k > 0)
		fprintf(stderr, "%s: block %llu: %s eigenvalues %.6g to %.6g, "
		    "%zu kept\n", cli_prog(), (unsigned long long)b->id, what,
		    e->lo, e->hi, dim);
}

/* The subspace-alignment map of block s. */
static void
sa_block(struct blk *s, const struct blk *t, uint64_t dim, int target,
    int verbose)
{
	size_t k = s->k, m = dim < k ? (size_t)dim : k;
	struct coral_eig es, et;
	int rc;

	s->map = cli_reallocarray(NULL, k * m, sizeof *s->map);
	rc = coral_sa_map(k, s->cov, t->cov, m, target, s->map, &es, &et);
	map_check(rc);
	top_verbose(t, &et, m, "target", verbose);
	if (!target)
		top_verbose(s, &es, m, "source", verbose);
	s->w = m;
}

/* ---- rows ---- */

/* Rows of X waiting for the blocks after the first (--emit blocks):
 * chunk c holds, for blocks 1.., its rows of each block in turn. */
struct spool {
	FILE *fp;
	int fd;
	uint64_t chunks, rows;
	size_t last;		/* rows in the last chunk */
};

static void
spool_open(struct spool *sp)
{
	const char *dir = getenv("TMPDIR");
	char *path;

	if (dir == NULL || *dir == '\0')
		dir = "/tmp";
	if (asprintf(&path, "%s/coral-align.XXXXXX", dir) < 0)
		cli_die(EX_OSERR, "out of memory");
	if ((sp->fd = mkstemp(path)) < 0)
		cli_die(EX_CANTCREAT, "%s: cannot create a temporary file: %s",
		    path, strerror(errno));
	unlink(path);		/* gone at exit, whatever happens */
	free(path);
	if ((sp->fp = fdopen(sp->fd, "w+b")) == NULL)
		cli_die(EX_OSERR, "fdopen: %s", strerror(errno));
}

struct run {
	const struct opts *o;
	struct blk *b;
	size_t nb;
	int dtype;
	size_t es, d, wtot, kmax, wmax, chunk;
	unsigned char *in, *out;
	double *g, *y;
	struct spool sp;
};

/* Block b of m rows, in the output dtype, into dst with row stride
 * stride (elements) from column off. */
static void
transform(const struct run *ru, const struct blk *b, size_t m,
    unsigned char *dst, size_t stride, size_t off)
{
	size_t w = b->w;
	const double *y = coral_apply(m, ru->d, ru->dtype != TS_F64, ru->in,
	    b->idx, b->k, b->map, w, ru->g, ru->y);

	for (size_t r = 0; r < m; r++) {
		if (ru->dtype == TS_F64)
			memcpy((double *)dst + r * stride + off, y + r * w,
			    w * sizeof(double));
		else {
			float *f = (float *)dst + r * stride + off;
			for (size_t j = 0; j < w; j++)
				f[j] = (float)y[r * w + j];
		}
	}
}

static void
out_header(struct tensor *t, const char *name, const struct run *ru,
    uint64_t rows, size_t w)
{
	uint64_t dims[2] = { rows, w };
	const struct opts *o = ru->o;

	if (tensor_init(t, name, ru->dtype, 2, dims) != 0)
		cli_die(EX_SOFTWARE, "bad output header '%s'", name);
	cli_meta_set(&t->meta, "align.method", methods[o->method]);
	cli_meta_set(&t->meta, "align.side", o->apply_target ? "target" :
	    "source");
	if (o->method == M_CORAL) {
		if (ts_meta_setf(&t->meta, "align.reg", "%.17g", o->reg) != 0)
			cli_die(EX_OSERR, "out of memory");
	} else if (ts_meta_setf(&t->meta, "align.dim", "%llu",
	    (unsigned long long)o->dim) != 0)
		cli_die(EX_OSERR, "out of memory");
}

/* Write the spooled rows of block i (i >= 1) as tensor X/<id>. */
static void
unspool(struct run *ru, struct ts_writer *w, size_t i)
{
	const struct blk *b = &ru->b[i];
	size_t rest = ru->wtot - ru->b[0].w, before = b->off - ru->b[0].w;
	struct tensor t;
	char name[64];
	int rc;

	snprintf(name, sizeof name, "X/%llu", (unsigned long long)b->id);
	out_header(&t, name, ru, ru->sp.rows, b->w);
	if (ts_meta_setf(&t.meta, "align.block", "%llu",
	    (unsigned long long)b->id) != 0)
		cli_die(EX_OSERR, "out of memory");
	if ((rc = ts_write_begin(w, &t)) != 0)
		cli_wdie(w, rc);
	for (uint64_t c = 0; c < ru->sp.chunks; c++) {
		size_t m = c + 1 == ru->sp.chunks ? ru->sp.last : ru->chunk;
		size_t len = m * b->w * ru->es, got = 0;
		off_t at = (off_t)((c * ru->chunk * rest + m * before) *
		    ru->es);

		while (got < len) {
			ssize_t n = pread(ru->sp.fd, ru->out + got, len - got,
			    at + (off_t)got);
			if (n <= 0)
				cli_die(EX_IOERR, "temporary file: read error: %s",
				    n < 0 ? strerror(errno) : "short file");
			got += (size_t)n;
		}
		if ((rc = ts_write_rows(w, ru->out, m)) != 0)
			cli_wdie(w, rc);
	}
	if ((rc = ts_write_end(w)) != 0)
		cli_wdie(w, rc);
	tensor_free(&t);
}

/* Transform tensor X (header read) into X, or X/<i> for each block. */
static void
align_x(struct run *ru, struct ts_reader *r, struct ts_writer *w,
    const struct tensor *hdr, const char *label)
{
	const struct opts *o = ru->o;
	struct tensor t;
	uint64_t rows = 0, n;
	size_t rb;
	int rc, done = 0;

	if ((hdr->dtype != TS_F32 && hdr->dtype != TS_F64) || hdr->ndim != 2)
		cli_die(EX_DATAERR, "%s: tensor 'X': expected f32 or f64 rows "
		    "[n, d]", label);
	ru->dtype = hdr->dtype;
	ru->es = ts_dtype_size(hdr->dtype);
	if (hdr->dims[1] > SIZE_MAX / 8 / ru->es)
		cli_die(EX_DATAERR, "%s: tensor 'X': %llu columns is too many",
		    label, (unsigned long long)hdr->dims[1]);
	ru->d = (size_t)hdr->dims[1];
	for (size_t i = 0; i < ru->nb; i++)
		for (size_t j = 0; j < ru->b[i].k; j++)
			if ((uint64_t)ru->b[i].idx[j] >= ru->d)
				cli_die(EX_DATAERR, "%s: subspace/%llu names "
				    "feature %lld, but X has %zu columns",
				    o->source_cov, (unsigned long long)ru->b[i].id,
				    (long long)ru->b[i].idx[j], ru->d);
	rb = ru->d * ru->es;
	ru->chunk = ru->d ? CHUNK_BYTES / 8 / ru->d : MAX_CHUNK_ROWS;
	if (ru->chunk > MAX_CHUNK_ROWS)
		ru->chunk = MAX_CHUNK_ROWS;
	if (ru->chunk == 0)
		ru->chunk = 1;
	ru->in = cli_reallocarray(NULL, ru->chunk, rb ? rb : 1);
	ru->g = cli_reallocarray(NULL, ru->chunk * ru->kmax, sizeof *ru->g);
	ru->y = cli_reallocarray(NULL, ru->chunk * ru->wmax, sizeof *ru->y);
	ru->out = cli_reallocarray(NULL, ru->chunk * (o->emit == E_CONCAT ?
	    ru->wtot : ru->wmax), ru->es);
	if (o->emit == E_CONCAT) {
		char *widths = cli_malloc(ru->nb * 21 + 1);
		size_t len = 0;

		out_header(&t, "X", ru, hdr->dims[0], ru->wtot);
		widths[0] = '\0';
		for (size_t i = 0; i < ru->nb; i++)
			len += (size_t)sprintf(widths + len, "%s%zu", i ? "," :
			    "", ru->b[i].w);
		cli_meta_set(&t.meta, "align.widths", widths);
		free(widths);
	} else {
		char name[64];

		snprintf(name, sizeof name, "X/%llu",
		    (unsigned long long)ru->b[0].id);
		out_header(&t, name, ru, hdr->dims[0], ru->b[0].w);
		if (ts_meta_setf(&t.meta, "align.block", "%llu",
		    (unsigned long long)ru->b[0].id) != 0)
			cli_die(EX_OSERR, "out of memory");
		if (ru->nb > 1)
			spool_open(&ru->sp);
	}
	if ((rc = ts_write_begin(w, &t)) != 0)
		cli_wdie(w, rc);
	tensor_free(&t);
	while (!done) {
		size_t m = (size_t)(n = cli_fill_rows(r, ru->in, rb, ru->chunk, &done));

		if (m == 0)
			break;

		if (o->emit == E_CONCAT) {
			for (size_t i = 0; i < ru->nb; i++)
				transform(ru, &ru->b[i], m, ru->out, ru->wtot,
				    ru->b[i].off);
			if ((rc = ts_write_rows(w, ru->out, m)) != 0)
				cli_wdie(w, rc);
		} else {
			transform(ru, &ru->b[0], m, ru->out, ru->b[0].w, 0);
			if ((rc = ts_write_rows(w, ru->out, m)) != 0)
				cli_wdie(w, rc);
			for (size_t i = 1; i < ru->nb; i++) {
				transform(ru, &ru->b[i], m, ru->out, ru->b[i].w,
				    0);
				if (fwrite(ru->out, ru->es * ru->b[i].w, m,
				    ru->sp.fp) != m)
					cli_die(EX_IOERR, "temporary file: write "
					    "error: %s", strerror(errno));
			}
			ru->sp.chunks++;
			ru->sp.last = m;
		}
		rows += n;
		cli_progress("rows", rows, 0);
	}
	if ((rc = ts_write_end(w)) != 0)
		cli_wdie(w, rc);
	ru->sp.rows = rows;
	if (o->emit == E_BLOCKS && ru->nb > 1) {
		if (fflush(ru->sp.fp) != 0)
			cli_die(EX_IOERR, "temporary file: write error: %s",
			    strerror(errno));
		for (size_t i = 1; i < ru->nb; i++)
			unspool(ru, w, i);
		fclose(ru->sp.fp);
	}
	cli_progress_done();
	if (o->c.verbose)
		fprintf(stderr, "%s: %llu rows of %zu features to %zu columns in "
		    "%zu blocks\n", cli_prog(), (unsigned long long)rows, ru->d,
		    ru->wtot, ru->nb);
}

int
main(int argc, char **argv)
{
	struct opts o = { .c = OPTS_COMMON_INIT, .method = M_CORAL,
	    .emit = E_CONCAT, .reg = DEFAULT_REG };
	struct covs cs = { .what = "source" }, ct = { .what = "target" };
	struct ts_meta meta = { 0 }, prov = { 0 };
	struct run ru = { 0 };
	struct ts_reader *r;
	struct ts_writer *w;
	struct tensor hdr;
	struct cli_rowbuf pb = { NULL, 0 };
	const char *label;
	FILE *in;
	int ch, rc, seen_x = 0;

	cli_init("coral-align", argc, argv);
	while ((ch = getopt_long(argc, argv, "fho:qVv", longopts, NULL)) != -1) {
		if (opts_common(&o.c, ch, optarg, usage))
			continue;
		switch (ch) {
		case OPT_APPLY_TARGET:
			o.apply_target = 1;
			break;
		case OPT_DIM:
			o.dim = (uint64_t)cli_ll("--dim", optarg, 1, LLONG_MAX);
			break;
		case OPT_EMIT:
			o.emit = cli_choice("--emit", optarg, emits);
			break;
		case OPT_METHOD:
			o.method = cli_choice("--method", optarg, methods);
			break;
		case OPT_REG:
			o.reg = cli_double("--reg", optarg, 0, DBL_MAX);
			o.reg_set = 1;
			break;
		case OPT_SOURCE_COV:
			o.source_cov = optarg;
			break;
		case OPT_TARGET_COV:
			o.target_cov = optarg;
			break;
		default:
			usage(EX_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc > 1)
		cli_usage_error("at most one input file");
	if (o.source_cov == NULL || o.target_cov == NULL)
		cli_usage_error("--source-cov and --target-cov are required");
	if (o.method == M_SA && o.dim == 0)
		cli_usage_error("--method sa needs --dim K");
	if (o.method != M_SA && o.dim != 0)
		cli_usage_error("--dim applies to --method sa only");
	if (o.method != M_CORAL && o.reg_set)
		cli_usage_error("--reg applies to --method coral only");
	if (strcmp(o.source_cov, "-") == 0 || strcmp(o.target_cov, "-") == 0)
		cli_usage_error("--source-cov and --target-cov must be files "
		    "(the rows come on stdin)");

	cs.fp = cli_open_in(o.source_cov, &cs.label);
	ct.fp = cli_open_in(o.target_cov, &ct.label);
	in = cli_open_in(argc ? argv[0] : NULL, &label);
	w = cli_writer(cli_out_open(o.c.output, o.c.force), o.c.level);
	covs_load(&cs);
	cli_prov_input(&prov, 0, cs.label, cs.digest, &cs.meta);
	covs_load(&ct);
	cli_prov_input(&prov, 1, ct.label, ct.digest, &ct.meta);
	covs_match(&cs, &ct);

	/* The maps, formed once; then the covariances are not needed. */
	ru.o = &o;
	ru.b = cs.b;
	ru.nb = cs.nb;
	for (size_t i = 0; i < ru.nb; i++) {
		struct blk *b = &ru.b[i];

		if (o.method == M_SA)
			sa_block(b, &ct.b[i], o.dim, o.apply_target, o.c.verbose);
		else if (!o.apply_target)
			coral_block(b, &ct.b[i], o.reg, o.c.verbose);
		else
			b->w = b->k;	/* CORAL leaves target rows alone */
		b->off = ru.wtot;
		ru.wtot += b->w;
		if (b->k > ru.kmax)
			ru.kmax = b->k;
		if (b->w > ru.wmax)
			ru.wmax = b->w;
	}

	r = cli_reader(in, label);
	while ((rc = ts_read_next(r, &hdr)) == 1) {
		if (strcmp(hdr.name, "X") == 0) {
			if (seen_x)
				cli_die(EX_DATAERR, "%s: two tensors 'X'", label);
			align_x(&ru, r, w, &hdr, label);
			seen_x = 1;
		} else {
			if (o.emit == E_BLOCKS && strncmp(hdr.name, "X/", 2) == 0)
				cli_die(EX_DATAERR, "%s: tensor '%s' would clash "
				    "with the output blocks", label, hdr.name);
			cli_pass_tensor(r, w, &hdr, &pb);
		}
		tensor_free(&hdr);
	}
	if (rc < 0)
		cli_rdie(r, rc);
	if (!seen_x)
		cli_die(EX_DATAERR, "%s: no tensor 'X'", label);

	cli_inherit(&meta, ts_reader_meta(r), label);
	cli_inherit(&meta, &cs.meta, cs.label);
	cli_inherit(&meta, &ct.meta, ct.label);
	check_taint(ts_reader_meta(r), &cs);
	check_taint(ts_reader_meta(r), &ct);
	cli_prov_input(&prov, 2, label, ts_reader_digest(r),
	    ts_reader_meta(r));
	cli_out_finish(w, &meta, &prov);
	ts_reader_close(r);
	cli_close_in(in);
	cli_out_commit();
	for (size_t i = 0; i < ru.nb; i++)
		free(ru.b[i].map);
	covs_free(&cs);
	covs_free(&ct);
	ts_meta_free(&meta);
	ts_meta_free(&prov);
	free(ru.in);
	free(ru.out);
	free(ru.g);
	free(ru.y);
	cli_rowbuf_free(&pb);
	return 0;
}
