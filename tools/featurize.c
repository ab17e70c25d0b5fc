/*
 * featurize: turn raw data (CSV, IDX images, text) into a tensor stream of
 * features and labels.
 */
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "crop.h"
#include "csvin.h"
#include "csvlay.h"
#include "feat.h"
#include "idx.h"
#include "labcol.h"
#include "labels.h"
#include "scale.h"
#include "strtab.h"
#include "ledger.h"
#include "scatter.h"
#include "opts.h"
#include "tensor.h"
#include "text.h"
#include "tstream.h"

#define MAX_FEATURES (UINT64_C(1) << 24)	/* columns of X */
#define MAX_SIDE 4096				/* --resize height and width */
#define MAX_DATASET LEDGER_MAX_NAME		/* bytes in a dataset name */
#define DEFAULT_HASH_DIM 1024
#define PROGRESS_EVERY 4096
#define FEAT_CLIP_MIN 1e-50	/* --clip range, as covest and gmm-fit */
#define FEAT_CLIP_MAX 1e50
#define SCAT_BATCH 256		/* images transformed together */
#define WHERE 600
#define CROP_MARGIN 0		/* --crop-bbox: pixels around the box */

enum {
	OPT_CLASSES = OPTS_FIRST_TOOL, OPT_CLIP, OPT_CLIP_ROWS, OPT_COLUMNS,
	OPT_BINARY, OPT_CROP_BBOX, OPT_DROP_UNKNOWN, OPT_DTYPE, OPT_FORMAT,
	OPT_HASH_DIM, OPT_HEADER, OPT_GROUP_NORM, OPT_IMAGE, OPT_LABEL,
	OPT_LABEL_MAP, OPT_LABELS, OPT_MISSING, OPT_NO_LABEL, OPT_NORMALIZE,
	OPT_RESIZE, OPT_SCALE, OPT_SCALE_FROM, OPT_SCATTER, OPT_THREADS,
	OPT_VOCAB
};

struct opts {
	struct opts_common c;	/* -f -o -q, --level, --dataset */
	struct feat_params p;	/* what feat_check_params checks */
	const char *clip_arg;
	int dtype, header, missing, normalize;
	double scale_lo, scale_hi, clip;
	uint64_t hash_dim, rh, rw;
	int sj, sl;		/* --scatter J:L, or 0 */
	uint64_t ih, iw;	/* --image HxW, or 0 */
	size_t groups;		/* --group-norm G, or 0 */
	int threads;		/* --threads N, or 0: the online cores */
	unsigned crop_thr;	/* --crop-bbox=T */
};

/* Everything about the output. */
struct out {
	const struct opts *o;
	struct ts_writer *w;
	size_t d;
	double *row;
	float *frow;
	struct scale sc;	/* --scale, --normalize, --clip, --dtype */
	uint64_t rows, total;
	struct labcol lab;
	const char *map_label;	/* the label map's file name */
	int has_y;
	size_t cap;		/* --scatter: images a batch holds */
	/* --scatter: images are scaled by isc, batched, transformed. */
	struct scatter *st;
	struct scale isc;	/* --scale or --scale-from, on pixels */
	size_t hw, nb;		/* pixels of an image; images batched */
	float *img;		/* SCAT_BATCH x hw */
	double *feat;		/* SCAT_BATCH x d */
	char (*where)[WHERE];
};

__attribute__((noreturn)) static void
usage(int status)
{
	FILE *fp = status ? stderr : stdout;

	fputs("usage: featurize [-fhqV] [-o file] [--binary] "
	    "[--classes k | --label-map file]\n"
	    "                 [--clip bound] [--columns list] "
	    "[--crop-bbox[=t]]\n"
	    "                 [--dataset name] [--drop-unknown] "
	    "[--dtype type]\n"
	    "                 [--format format] [--group-norm g] "
	    "[--hash-dim n]\n"
	    "                 [--header when] [--image size] "
	    "[--label column | --no-label]\n"
	    "                 [--labels file] [--level level] "
	    "[--missing policy]\n"
	    "                 [--normalize kind] [--resize size] "
	    "[--scale lo:hi | --scale-from file]\n"
	    "                 [--scatter j[:l]] [--threads n] "
	    "[--vocab file] [file]\n", fp);
	if (status == 0)
		fputs("\n"
		    "  -f, --force            write to a terminal\n"
		    "  -h, --help             show this help\n"
		    "  -o, --output FILE      write FILE (through a temporary "
		    "file), not stdout\n"
		    "  -q, --quiet            no warnings, no progress\n"
		    "  -V, --version          show the version\n"
		    "      --binary           presence: every value other than "
		    "0 becomes 1 (first)\n"
		    "      --classes K        labels are the public classes 0 "
		    ".. K-1\n"
		    "      --clip C           scale rows of L2 norm above C down "
		    "to C (last step)\n"
		    "      --columns LIST     CSV features: indices from 0, "
		    "ranges A-B, names\n"
		    "      --crop-bbox[=T]    idx: crop to pixels > T (default "
		    "0), pad square, resize\n"
		    "      --dataset NAME     protected dataset, [a-z0-9_]+ "
		    "(default: file name)\n"
		    "      --drop-unknown     drop rows whose label is not "
		    "declared (not an error)\n"
		    "      --dtype TYPE       type of X: f32 (default) or f64\n"
		    "      --format FORMAT    csv, idx or text (default: by file "
		    "name, else csv)\n"
		    "      --group-norm G     --scatter: normalise each row's "
		    "channels in G groups\n"
		    "      --hash-dim N       text: hash buckets (default 1024)\n"
		    "      --header WHEN      CSV header: auto (default), yes, "
		    "no\n"
		    "      --image HxW        CSV: each row is an HxW image "
		    "(for --scatter)\n"
		    "      --label COLUMN     CSV label column, name or index; "
		    "text: field index\n"
		    "      --label-map FILE   the PUBLIC label set: line i is "
		    "class i\n"
		    "      --labels FILE      idx: the labels file\n"
		    "      --level N          zstd level of the output (default "
		    "1)\n"
		    "      --missing POLICY   bad or missing values: error "
		    "(default), zero, drop-row\n"
		    "      --no-label         CSV: no label column, X only\n"
		    "      --normalize KIND   divide each row by its l1 or l2 "
		    "norm\n"
		    "      --resize HxW       idx: resize images by area "
		    "averaging\n"
		    "      --scale LO:HI      map features from [LO,HI] to [0,1], "
		    "clamping\n"
		    "      --scale-from FILE  CSV: per-feature bounds from a "
		    "PUBLIC file\n"
		    "      --scatter J[:L]    2-D scattering, order 2, J scales, "
		    "L angles (default 8)\n"
		    "      --threads N        --scatter: threads (default: the "
		    "processors online)\n"
		    "      --vocab FILE       text: one token or bigram a line, "
		    "a column each\n", fp);
	exit(status);
}

/* ---- option values ---- */

static void
parse_scale(struct opts *o, const char *arg)
{
	const char *colon = strchr(arg, ':');
	char lo[64];

	if (colon == NULL || (size_t)(colon - arg) >= sizeof lo)
		cli_usage_error("invalid --scale '%s': expected LO:HI", arg);
	memcpy(lo, arg, (size_t)(colon - arg));
	lo[colon - arg] = '\0';
	o->scale_lo = cli_double("--scale", lo, -DBL_MAX, DBL_MAX);
	o->scale_hi = cli_double("--scale", colon + 1, -DBL_MAX, DBL_MAX);
	if (!(o->scale_hi > o->scale_lo) ||
	    !isfinite(o->scale_hi - o->scale_lo))
		cli_usage_error("invalid --scale '%s': needs LO < HI", arg);
	o->p.scale = 1;
}

/* --scatter J[:L] */
static void
parse_scatter(struct opts *o, const char *arg)
{
	const char *colon = strchr(arg, ':');
	char j[32];

	if (colon && (size_t)(colon - arg) >= sizeof j)
		cli_usage_error("invalid --scatter '%s': expected J[:L]", arg);
	if (colon) {
		memcpy(j, arg, (size_t)(colon - arg));
		j[colon - arg] = '\0';
	} else
		snprintf(j, sizeof j, "%s", arg);
	o->sj = (int)cli_ll("--scatter", j, 1, SCATTER_MAX_J);
	o->sl = colon ? (int)cli_ll("--scatter", colon + 1, 1,
	    SCATTER_MAX_L) : 8;
}

/* ---- rows ---- */

/* An error of a feat reader on s: a usage error, a read error of s, or
 * bad data. */
__attribute__((noreturn)) static void
feat_die(struct infile *s, int rc, const char *msg)
{
	if (rc == PV_E_OPTION)
		cli_usage_error("%s", msg);
	if (rc == PV_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	if (rc == PV_E_IO && (infile_error(s) || msg[0] == '\0'))
		cli_infile_die(s);
	cli_die(EX_DATAERR, "%s", msg);
}

/* Scale, normalize, clip, convert and write one row. */
static void
put_row(struct out *ou, const char *where)
{
	size_t bad;
	int rc;

	if (scale_row(&ou->sc, ou->row, ou->frow, ou->d, &bad) != 0)
		cli_die(EX_DATAERR, "%s: feature %zu: %g does not fit in f32 "
		    "(use --dtype f64)", where, bad, ou->row[bad]);
	if (ou->sc.dtype == TS_F32)
		rc = ts_write_rows(ou->w, ou->frow, 1);
	else
		rc = ts_write_rows(ou->w, ou->row, 1);
	if (rc != 0)
		cli_wdie(ou->w, rc);
	if (++ou->rows % PROGRESS_EVERY == 0)
		cli_progress("rows", ou->rows, ou->total);
}

/* ---- --scatter ---- */

/* Set up the transform of h x w images (of the input named what) and
 * its metadata in xm.  @return the features of a row. */
static size_t
scat_begin(struct out *ou, size_t h, size_t w, const char *what,
    struct ts_meta *xm)
{
	const struct opts *o = ou->o;
	size_t c, d, cap;
	int rc = scatter_new(&ou->st, h, w, o->sj, o->sl, o->threads);

	if (rc == PV_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	if (rc != 0)
		cli_usage_error("--scatter %d:%d: 2^%d is too large for the "
		    "%zux%zu images of %s (the reflection padding must stay "
		    "below each side)", o->sj, o->sl, o->sj, h, w, what);
	c = scatter_channels(ou->st);
	if (o->groups && c % o->groups != 0)
		cli_usage_error("--group-norm %zu does not divide the %zu "
		    "channels of --scatter %d:%d", o->groups, c, o->sj, o->sl);
	d = scatter_size(ou->st);
	if (d > MAX_FEATURES)
		cli_die(EX_DATAERR, "%s: --scatter %d:%d on %zux%zu images "
		    "gives %zu features, more than %llu", what, o->sj, o->sl,
		    h, w, d, (unsigned long long)MAX_FEATURES);
	ou->hw = h * w;
	/* A batch of at most 64 MiB, at least one image a thread. */
	cap = ((size_t)64 << 20) / (ou->hw * sizeof *ou->img +
	    d * sizeof *ou->feat);
	if (cap > SCAT_BATCH)
		cap = SCAT_BATCH;
	if (cap < (size_t)o->threads)
		cap = (size_t)o->threads;
	ou->cap = cap;
	ou->img = cli_calloc(cap * ou->hw, sizeof *ou->img);
	ou->feat = cli_calloc(cap * d, sizeof *ou->feat);
	ou->where = cli_calloc(cap, sizeof *ou->where);
	if (ts_meta_set(xm, "features.kind", "scattering") != 0 ||
	    ts_meta_setf(xm, "features.scatter", "J=%d L=%d order=2",
	    o->sj, o->sl) != 0 ||
	    ts_meta_setf(xm, "features.shape", "%zu,%zu,%zu", c,
	    scatter_out_h(ou->st), scatter_out_w(ou->st)) != 0 ||
	    (o->groups ? ts_meta_setf(xm, "features.group_norm", "%zu",
	    o->groups) : ts_meta_set(xm, "features.group_norm", "none")) ||
	    (ts_meta_get(xm, "image.height") == NULL &&
	    (ts_meta_setf(xm, "image.height", "%zu", h) != 0 ||
	    ts_meta_setf(xm, "image.width", "%zu", w) != 0)))
		cli_die(EX_OSERR, "out of memory");
	if (ts_meta_get(xm, "scale") == NULL && (ou->isc.on ?
	    ts_meta_setf(xm, "scale", "%.17g:%.17g", ou->isc.lo,
	    ou->isc.hi) : ts_meta_set(xm, "scale", "none")) != 0)
		cli_die(EX_OSERR, "out of memory");
	return d;
}

/* After begin_x: a row holds an image's pixels, then its features. */
static void
scat_rows(struct out *ou)
{
	if (ou->hw > ou->d) {
		free(ou->row);
		ou->row = cli_calloc(ou->hw, sizeof *ou->row);
	}
}

/* Transform, GroupNorm and write the batched images. */
static void
scat_flush(struct out *ou)
{
	size_t c, per;

	if (ou->nb == 0)
		return;
	if (scatter_run(ou->st, ou->img, ou->nb, ou->feat) != 0)
		cli_die(EX_OSERR, "cannot start a thread");
	c = scatter_channels(ou->st);
	per = scatter_out_h(ou->st) * scatter_out_w(ou->st);
	for (size_t i = 0; i < ou->nb; i++) {
		double *f = ou->feat + i * ou->d;
		if (ou->o->groups)
			scatter_group_norm(f, c, per, ou->o->groups);
		memcpy(ou->row, f, ou->d * sizeof *f);
		put_row(ou, ou->where[i]);
	}
	ou->nb = 0;
}

/* Scale the image in ou->row (hw pixels) and batch it. */
static void
scat_push(struct out *ou, const char *where)
{
	float *dst = ou->img + ou->nb * ou->hw;

	scale_bounds(&ou->isc, ou->row, ou->hw);
	for (size_t j = 0; j < ou->hw; j++) {
		if (!(fabs(ou->row[j]) <= FLT_MAX))
			cli_die(EX_DATAERR, "%s: pixel %zu: %g is not a finite "
			    "f32 (use --scale)", where, j, ou->row[j]);
		dst[j] = (float)ou->row[j];
	}
	snprintf(ou->where[ou->nb], WHERE, "%s", where);
	if (++ou->nb == ou->cap)
		scat_flush(ou);
}

/* A row of the input: an image to batch, or a row to write. */
static void
take_row(struct out *ou, const char *where)
{
	if (ou->st)
		scat_push(ou, where);
	else
		put_row(ou, where);
}

/* Put the label of the current row: a string (len bytes of s), or with s
 * NULL the integer v (idx); where names the row for messages.
 * @return 1 when the row is kept, 0 when it is dropped. */
static int
put_label(struct out *ou, const char *s, size_t len, int32_t v,
    const char *where)
{
	struct labcol *l = &ou->lab;
	char vb[CSVLAY_SHOWN + 8], *copy, ib[16];
	int rc = s ? labcol_put(l, s, len) : labcol_put_int(l, v);

	if (rc >= 0)
		return rc;
	if (rc == PV_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	if (rc == PV_E_LIMIT)
		cli_die(EX_DATAERR, "more than %d distinct labels", INT32_MAX);
	if (s == NULL) {
		len = (size_t)snprintf(ib, sizeof ib, "%d", (int)v);
		s = ib;
	}
	copy = cli_malloc(len + 1);
	memcpy(copy, s, len);
	copy[len] = '\0';
	if (l->map_names != NULL)
		cli_die(EX_DATAERR, "%s: label '%s' is not in the label map "
		    "%s (or give --drop-unknown)", where,
		    csvlay_shown(copy, vb, sizeof vb), ou->map_label);
	cli_die(EX_DATAERR, "%s: label '%s' is not a class 0 .. %zu "
	    "(--classes %zu; or give --drop-unknown)", where,
	    csvlay_shown(copy, vb, sizeof vb), l->classes - 1, l->classes);
}

/* Begin X with d features; meta are X's tensor metadata (moved). */
static void
begin_x(struct out *ou, size_t d, struct ts_meta *meta)
{
	const struct opts *o = ou->o;
	uint64_t dims[2] = { TS_UNKNOWN_ROWS, d };
	struct tensor t;
	int rc;

	ou->d = d;
	ou->row = cli_calloc(d, sizeof *ou->row);
	ou->frow = cli_calloc(d, sizeof *ou->frow);
	if (tensor_init(&t, "X", o->dtype, 2, dims) != 0)
		cli_die(EX_SOFTWARE, "bad tensor header");
	t.meta = *meta;
	memset(meta, 0, sizeof *meta);
	cli_meta_set(&t.meta, "normalize", o->normalize == SCALE_NORM_L1 ? "l1" :
	    o->normalize == SCALE_NORM_L2 ? "l2" : "none");
	cli_meta_set(&t.meta, "clip_rows", o->clip_arg ? o->clip_arg : "none");
	if (o->p.binary)
		cli_meta_set(&t.meta, "binary", "values other than 0 set to 1");
	if (ts_meta_get(&t.meta, "scale") == NULL) {
		rc = ou->sc.on ? ts_meta_setf(&t.meta, "scale", "%.17g:%.17g",
		    ou->sc.lo, ou->sc.hi) : ts_meta_set(&t.meta, "scale", "none");
		if (rc != 0)
			cli_die(EX_OSERR, "out of memory");
	}
	if ((rc = ts_write_begin(ou->w, &t)) != 0)
		cli_wdie(ou->w, rc);
	tensor_free(&t);
}

/* End X, write y (when there are labels) and the closing metadata. */
static void
finish(struct out *ou, struct infile **inputs, int ninputs, const char *what)
{
	struct labcol *l = &ou->lab;
	struct ts_meta m = { 0 };
	struct tensor t;
	uint64_t dims[1];
	int rc;

	if (ou->st)
		scat_flush(ou);
	if ((rc = ts_write_end(ou->w)) != 0)
		cli_wdie(ou->w, rc);
	if (ou->has_y) {
		dims[0] = l->n;
		if (tensor_init(&t, "y", TS_I32, 1, dims) != 0)
			cli_die(EX_SOFTWARE, "bad tensor header");
		if (l->unknown)
			cli_warn("%llu rows with a label outside the declared "
			    "label set dropped", (unsigned long long)l->unknown);
		rc = labcol_finish(l, &t.meta);
		if (rc == PV_E_LIMIT)
			cli_die(EX_DATAERR, "%s: %zu distinct labels: their names "
			    "exceed the metadata limit of 1 MiB", what, l->tab.n);
		if (rc == PV_E_FORMAT)
			cli_die(EX_DATAERR, "%s: a label is not valid UTF-8", what);
		if (rc != 0)
			cli_die(EX_OSERR, "out of memory");
		t.data = l->y;
		if ((rc = ts_write_tensor(ou->w, &t)) != 0)
			cli_wdie(ou->w, rc);
		t.data = NULL;
		tensor_free(&t);
	}
	for (int i = 0; i < ninputs; i++)
		cli_prov_input(&m, i, infile_label(inputs[i]),
		    infile_digest(inputs[i]), NULL);
	if ((rc = ts_write_meta(ou->w, &m)) != 0 ||
	    (rc = ts_writer_finish(ou->w)) != 0)
		cli_wdie(ou->w, rc);
	ts_meta_free(&m);
	cli_progress_done();
	labcol_free(l);
	free(ou->row);
	free(ou->frow);
	scale_free(&ou->sc);
	scale_free(&ou->isc);
	scatter_free(ou->st);
	free(ou->img);
	free(ou->feat);
	free(ou->where);
}

static void
set_names_meta(struct ts_meta *m, char **names, const size_t *idx, size_t d)
{
	size_t len;
	char *b = json_str_array(names, idx, d, TS_MAX_VALUE, &len);

	if (b == NULL)
		cli_die(EX_OSERR, "out of memory");
	/* Names longer than a metadata value allows are left out: they
	 * label columns, nothing downstream needs them. */
	if (len <= TS_MAX_VALUE && ts_utf8_valid(b, len) &&
	    ts_meta_set(m, "features.names", b) != 0)
		cli_die(EX_OSERR, "out of memory");
	free(b);
}

/* ---- CSV ---- */

/* A column index option value; a bad one is a usage error. */
static uint64_t
index_arg(const char *opt, const char *s)
{
	char msg[CSVLAY_MSG];
	uint64_t v;

	if (csvlay_index(opt, s, &v, msg) != 0)
		cli_usage_error("%s", msg);
	return v;
}

static void
csv_params(const struct opts *o, struct csvlay_params *p)
{
	p->columns = o->p.columns;
	p->label = o->p.label;
	p->header = o->header;
	p->missing = o->missing;
}

static void
run_csv(struct out *ou, const struct opts *o, struct infile *in,
    struct infile *pub, struct infile **inputs, int ninputs)
{
	struct ts_meta xm = { 0 };
	struct csvlay_params p;
	struct feat_csv fc;
	char where[600], msg[FEAT_MSG];
	int rc;

	csv_params(o, &p);
	if ((rc = feat_csv_open(&fc, infile_fp(in), infile_label(in), &p,
	    msg)) != 0)
		feat_die(in, rc, msg);
	if (pub) {
		cli_warn("--scale-from: learning feature bounds from '%s', "
		    "which you declare public; never pass private data here",
		    infile_label(pub));
		if ((rc = feat_learn_bounds(o->sj ? &ou->isc : &ou->sc,
		    infile_fp(pub),
		    infile_label(pub), &p, fc.L.d, msg)) != 0)
			feat_die(pub, rc, msg);
		cli_meta_set(&xm, "scale", "per-feature bounds of a public "
		    "file");
		cli_meta_set(&xm, "scale.public", infile_label(pub));
	}
	if (fc.L.names)
		set_names_meta(&xm, fc.L.names, fc.L.feat, fc.L.d);
	ou->has_y = fc.L.label >= 0;
	if (o->sj) {
		size_t d;
		if (fc.L.d != o->ih * o->iw)
			cli_die(EX_DATAERR, "%s: %zu feature columns, but "
			    "--image %llux%llu needs %llu", infile_label(in),
			    fc.L.d, (unsigned long long)o->ih,
			    (unsigned long long)o->iw,
			    (unsigned long long)(o->ih * o->iw));
		d = scat_begin(ou, (size_t)o->ih, (size_t)o->iw,
		    infile_label(in), &xm);
		begin_x(ou, d, &xm);
		scat_rows(ou);
	} else
		begin_x(ou, fc.L.d, &xm);
	while ((rc = feat_csv_next(&fc, ou->row, msg)) == 1) {
		const char *lab = ou->has_y ? fc.f[fc.L.label] : NULL;
		snprintf(where, sizeof where, "%s:%llu", infile_label(in),
		    (unsigned long long)csvin_line(fc.c));
		if (lab && !put_label(ou, lab, strlen(lab), 0, where))
			continue;
		take_row(ou, where);
	}
	if (rc < 0)
		feat_die(in, rc, msg);
	if (fc.L.replaced)
		cli_warn("%llu bad or missing values replaced by 0",
		    (unsigned long long)fc.L.replaced);
	if (fc.L.dropped)
		cli_warn("%llu rows with bad or missing values dropped",
		    (unsigned long long)fc.L.dropped);
	feat_csv_close(&fc);
	finish(ou, inputs, ninputs, infile_label(in));
}

/* ---- IDX ---- */

static void
idx_header(struct infile *s, struct idx_header *x)
{
	char msg[IDX_MSG];
	int rc = idx_read_header(infile_fp(s), x, msg);

	if (rc == 0)
		return;
	if (rc == PV_E_IO || (rc == PV_E_TRUNCATED && infile_error(s)))
		cli_infile_die(s);
	cli_die(EX_DATAERR, "%s: %s", infile_label(s), msg);
}

static void
run_idx(struct out *ou, const struct opts *o, struct infile *in,
    struct infile *lab, struct infile **inputs, int ninputs)
{
	struct idx_header x, y;
	struct ts_meta xm = { 0 };
	unsigned char *pix;
	uint64_t h = 0, w = 0, th, tw;
	struct idx_resize *rs = NULL;
	struct crop *cr = NULL;
	char where[600];

	idx_header(in, &x);
	if (x.ndim < 2)
		cli_die(EX_DATAERR, "%s: offset 3: IDX with 1 dimension holds "
		    "labels, not images (give it to --labels)", infile_label(in));
	if (lab) {
		idx_header(lab, &y);
		if (y.ndim != 1)
			cli_die(EX_DATAERR, "%s: offset 3: a labels file has 1 "
			    "dimension, not %d", infile_label(lab), y.ndim);
		if (y.n != x.n)
			cli_die(EX_DATAERR, "%s: %llu labels for %llu images in "
			    "%s", infile_label(lab), (unsigned long long)y.n,
			    (unsigned long long)x.n, infile_label(in));
	}
	if (o->p.resize && x.ndim != 3)
		cli_usage_error("--resize needs images of 3 dimensions (N, H, "
		    "W); %s has %d", infile_label(in), x.ndim);
	th = tw = 0;
	if (x.ndim == 3) {
		h = x.dims[1];
		w = x.dims[2];
		th = o->p.resize ? o->rh : h;
		tw = o->p.resize ? o->rw : w;
		if (ts_meta_setf(&xm, "image.height", "%llu",
		    (unsigned long long)th) != 0 ||
		    ts_meta_setf(&xm, "image.width", "%llu",
		    (unsigned long long)tw) != 0)
			cli_die(EX_OSERR, "out of memory");
	}
	if (x.elems == 0)
		cli_die(EX_DATAERR, "%s: images of 0 pixels", infile_label(in));
	if (o->p.resize && th * w > 4 * MAX_FEATURES)
		cli_die(EX_DATAERR, "%s: images of %llux%llu pixels are too "
		    "large to resize", infile_label(in), (unsigned long long)h,
		    (unsigned long long)w);
	if (o->p.crop) {
		int rc = crop_new(&cr, h, w, o->crop_thr, CROP_MARGIN, th, tw);
		if (rc == PV_E_NOMEM)
			cli_die(EX_OSERR, "out of memory");
		if (rc != 0)
			cli_die(EX_DATAERR, "%s: images of %llux%llu pixels "
			    "are too large to crop", infile_label(in),
			    (unsigned long long)h, (unsigned long long)w);
		cli_meta_set(&xm, "image.crop", "bbox");
		if (ts_meta_setf(&xm, "image.crop_threshold", "%u",
		    o->crop_thr) != 0 ||
		    ts_meta_setf(&xm, "image.crop_margin", "%d",
		    CROP_MARGIN) != 0)
			cli_die(EX_OSERR, "out of memory");
	} else if (o->p.resize && idx_resize_new(&rs, h, w, th, tw) != 0)
		cli_die(EX_OSERR, "out of memory");
	if (o->sj && x.ndim != 3)
		cli_die(EX_DATAERR, "%s: offset 3: --scatter needs images of 3 "
		    "dimensions (N, H, W), not %d", infile_label(in), x.ndim);
	ou->total = x.n;
	pix = cli_malloc((size_t)x.elems);
	ou->has_y = lab != NULL;
	if (o->sj) {
		begin_x(ou, scat_begin(ou, (size_t)th, (size_t)tw,
		    infile_label(in), &xm), &xm);
		scat_rows(ou);
	} else
		begin_x(ou, (size_t)(o->p.resize ? th * tw : x.elems), &xm);
	for (uint64_t i = 0; i < x.n; i++) {
		char what[64];
		snprintf(what, sizeof what, "image %llu of %llu",
		    (unsigned long long)i, (unsigned long long)x.n);
		cli_infile_read(in, pix, (size_t)x.elems, what);
		if (lab) {
			unsigned char lb;
			snprintf(what, sizeof what, "label %llu of %llu",
			    (unsigned long long)i, (unsigned long long)x.n);
			cli_infile_read(lab, &lb, 1, what);
			snprintf(where, sizeof where, "%s: %s",
			    infile_label(lab), what);
			if (!put_label(ou, NULL, 0, lb, where))
				continue;
		}
		if (cr) {
			if (crop_apply(cr, pix, ou->row) != 0)
				cli_die(EX_OSERR, "out of memory");
		} else if (!o->p.resize) {
			for (size_t j = 0; j < x.elems; j++)
				ou->row[j] = pix[j];
		} else {
			idx_resize_apply(rs, pix, ou->row);
		}
		snprintf(where, sizeof where, "%s: image %llu", infile_label(in),
		    (unsigned long long)i);
		take_row(ou, where);
	}
	cli_infile_end(in, x.n, "images");
	if (lab)
		cli_infile_end(lab, x.n, "labels");
	free(pix);
	idx_resize_free(rs);
	crop_free(cr);
	finish(ou, inputs, ninputs, infile_label(in));
}

/* ---- text ---- */

static void
run_text(struct out *ou, const struct opts *o, struct infile *in,
    struct infile *vsrc, struct infile **inputs, int ninputs)
{
	struct strtab vocab = { 0 };
	struct text_counter tc = { 0 };
	struct ts_meta xm = { 0 };
	char *line = NULL, where[600], msg[FEAT_MSG], tmsg[TEXT_MSG];
	size_t cap = 0, ulen;
	uint64_t ln = 0, lfield = 0;
	size_t d;
	int rc;

	if (o->p.label)
		lfield = index_arg("--label", o->p.label);
	if (vsrc) {
		if ((rc = feat_read_vocab(&vocab, infile_fp(vsrc),
		    infile_label(vsrc), MAX_FEATURES, msg)) != 0)
			feat_die(vsrc, rc, msg);
		d = vocab.n;
		set_names_meta(&xm, vocab.keys, NULL, d);
		cli_meta_set(&xm, "features.kind", "vocabulary counts");
	} else {
		d = (size_t)o->hash_dim;
		if (ts_meta_set(&xm, "features.kind", "hashed counts") != 0 ||
		    ts_meta_set(&xm, "features.hash", "xxh64") != 0 ||
		    ts_meta_setf(&xm, "features.hash_seed", "%d",
		    TEXT_HASH_SEED) != 0)
			cli_die(EX_OSERR, "out of memory");
	}
	cli_meta_set(&xm, "features.ngrams", "1,2");
	tc.vocab = vsrc ? &vocab : NULL;
	tc.d = d;
	ou->has_y = o->p.label != NULL;
	begin_x(ou, d, &xm);
	while ((rc = text_read_line(infile_fp(in), &line, &cap, &ulen,
	    TEXT_MAX_LINE)) > 0) {
		char *doc = line;
		size_t dn;
		ssize_t len = (ssize_t)ulen;
		ln++;
		while (len > 0 && (line[len - 1] == '\n' ||
		    line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len == 0)
			continue;
		if (memchr(line, '\0', (size_t)len) != NULL)
			cli_die(EX_DATAERR, "%s:%llu: NUL byte in the line",
			    infile_label(in), (unsigned long long)ln);
		dn = (size_t)len;
		snprintf(where, sizeof where, "%s:%llu", infile_label(in),
		    (unsigned long long)ln);
		if (o->p.label) {
			/* Cut field lfield out of the line: it is the label,
			 * the rest is the document. */
			char *p, *e;
			rc = text_label(line, (size_t)len, lfield, &p, &e, tmsg);
			if (rc > 0 && o->missing == CSVLAY_MISS_DROP)
				continue;
			if (rc != 0)
				cli_die(EX_DATAERR, "%s: %s", where, tmsg);
			if (!put_label(ou, p, (size_t)(e - p), 0, where))
				continue;
			/* Blank out the label so it is not a token. */
			memset(p, '\t', (size_t)(e - p));
		}
		if (text_count(&tc, doc, dn, ou->row) != 0)
			cli_die(EX_OSERR, "out of memory");
		put_row(ou, where);
		/* put_row transformed the row in place: clear it all when
		 * it was scaled (every entry may have moved), else only the
		 * touched entries. */
		if (ou->sc.on)
			memset(ou->row, 0, d * sizeof *ou->row);
		else
			text_clear(&tc, ou->row);
	}
	if (infile_error(in) || ferror(infile_fp(in)))
		cli_infile_die(in);
	if (rc == PV_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	if (rc == PV_E_LIMIT)
		cli_die(EX_DATAERR, "%s:%llu: line longer than %zu bytes (256 "
		    "MiB, the limit of a CSV field)", infile_label(in),
		    (unsigned long long)ln + 1, TEXT_MAX_LINE);
	free(line);
	text_counter_free(&tc);
	strtab_free(&vocab);
	finish(ou, inputs, ninputs, infile_label(in));
}

/* ---- main ---- */

int
main(int argc, char **argv)
{
	static const char *const dtypes[] = { "f32", "f64", NULL };
	static const char *const formats[] = { "csv", "idx", "text", NULL };
	static const char *const headers[] = { "auto", "yes", "no", NULL };
	static const char *const missings[] = { "error", "zero", "drop-row",
	    NULL };
	static const char *const norms[] = { "l1", "l2", NULL };
	static const struct option longopts[] = {
		{ "binary", no_argument, NULL, OPT_BINARY },
		{ "classes", required_argument, NULL, OPT_CLASSES },
		{ "clip", required_argument, NULL, OPT_CLIP },
		{ "clip-rows", required_argument, NULL, OPT_CLIP_ROWS },
		{ "columns", required_argument, NULL, OPT_COLUMNS },
		{ "crop-bbox", optional_argument, NULL, OPT_CROP_BBOX },
		{ "dataset", required_argument, NULL, OPTS_DATASET },
		{ "drop-unknown", no_argument, NULL, OPT_DROP_UNKNOWN },
		{ "dtype", required_argument, NULL, OPT_DTYPE },
		{ "force", no_argument, NULL, 'f' },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "group-norm", required_argument, NULL, OPT_GROUP_NORM },
		{ "hash-dim", required_argument, NULL, OPT_HASH_DIM },
		{ "header", required_argument, NULL, OPT_HEADER },
		{ "help", no_argument, NULL, 'h' },
		{ "image", required_argument, NULL, OPT_IMAGE },
		{ "label", required_argument, NULL, OPT_LABEL },
		{ "label-map", required_argument, NULL, OPT_LABEL_MAP },
		{ "labels", required_argument, NULL, OPT_LABELS },
		{ "level", required_argument, NULL, OPTS_LEVEL },
		{ "missing", required_argument, NULL, OPT_MISSING },
		{ "no-label", no_argument, NULL, OPT_NO_LABEL },
		{ "normalize", required_argument, NULL, OPT_NORMALIZE },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "resize", required_argument, NULL, OPT_RESIZE },
		{ "scale", required_argument, NULL, OPT_SCALE },
		{ "scale-from", required_argument, NULL, OPT_SCALE_FROM },
		{ "scatter", required_argument, NULL, OPT_SCATTER },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "version", no_argument, NULL, 'V' },
		{ "vocab", required_argument, NULL, OPT_VOCAB },
		{ NULL, 0, NULL, 0 }
	};
	struct opts o = { .c = OPTS_COMMON_INIT, .dtype = TS_F32,
	    .hash_dim = DEFAULT_HASH_DIM };
	struct out ou = { 0 };
	struct infile *in, *side = NULL, *lmap = NULL, *inputs[3];
	struct ts_meta sm = { 0 };
	const char *path, *bad;
	char name[MAX_DATASET + 1], err[256], msg[FEAT_MSG];
	FILE *ofp;
	int ch, rc, ninputs = 1;

	cli_init(argv[0], argc, argv);
	/* getopt names the program by argv[0]; messages use the short name. */
	argv[0] = (char *)(uintptr_t)cli_prog();
	while ((ch = getopt_long(argc, argv, "fho:qV", longopts, NULL)) != -1) {
		if (opts_common(&o.c, ch, optarg, usage))
			continue;
		switch (ch) {
		case OPT_BINARY:
			o.p.binary = 1;
			break;
		case OPT_CLASSES:
			o.p.classes = (size_t)cli_ll("--classes", optarg, 1,
			    (long long)LABEL_MAX_CLASSES);
			break;
		case OPT_CLIP:
		case OPT_CLIP_ROWS:
			/* --clip as in covest and gmm-fit (privada(7),
			 * "Conventions"): same range, same message;
			 * --clip-rows is its old spelling. */
			o.clip = cli_double(ch == OPT_CLIP ? "--clip" :
			    "--clip-rows", optarg, FEAT_CLIP_MIN, FEAT_CLIP_MAX);
			o.clip_arg = optarg;
			break;
		case OPT_COLUMNS:
			if (csvlay_check_columns(optarg, msg) != 0)
				cli_usage_error("%s", msg);
			o.p.columns = optarg;
			break;
		case OPT_CROP_BBOX:
			if (feat_parse_crop(optarg, &o.crop_thr) != 0)
				cli_usage_error("invalid --crop-bbox '%s': "
				    "expected a pixel threshold in [0, 254]",
				    optarg);
			o.p.crop = 1;
			break;
		case OPT_DROP_UNKNOWN:
			o.p.drop_unknown = 1;
			break;
		case OPT_DTYPE:
			o.dtype = cli_choice("--dtype", optarg, dtypes) == 0 ?
			    TS_F32 : TS_F64;
			break;
		case OPT_FORMAT:
			o.p.format = FEAT_CSV + cli_choice("--format", optarg,
			    formats);
			break;
		case OPT_GROUP_NORM:
			o.groups = (size_t)cli_ll("--group-norm", optarg, 1,
			    1 << 20);
			break;
		case OPT_IMAGE:
			if (feat_parse_resize(optarg, MAX_SIDE, &o.ih, &o.iw))
				cli_usage_error("invalid --image '%s': "
				    "expected HxW with sides in [1, %d]", optarg,
				    MAX_SIDE);
			break;
		case OPT_SCATTER:
			parse_scatter(&o, optarg);
			break;
		case OPT_THREADS:
			o.threads = (int)cli_ll("--threads", optarg, 1,
			    SCATTER_MAX_THREADS);
			break;
		case OPT_HASH_DIM:
			o.hash_dim = (uint64_t)cli_ll("--hash-dim", optarg, 1,
			    (long long)MAX_FEATURES);
			o.p.hash_set = 1;
			break;
		case OPT_HEADER:
			o.header = cli_choice("--header", optarg, headers);
			o.p.header_set = 1;
			break;
		case OPT_LABEL:
			if (*optarg == '\0')
				cli_usage_error("invalid --label '': empty");
			o.p.label = optarg;
			break;
		case OPT_LABEL_MAP:
			o.p.label_map = optarg;
			break;
		case OPT_LABELS:
			o.p.labels = optarg;
			break;
		case OPT_MISSING:
			o.missing = cli_choice("--missing", optarg, missings);
			break;
		case OPT_NO_LABEL:
			o.p.no_label = 1;
			break;
		case OPT_NORMALIZE:
			o.normalize = SCALE_NORM_L1 + cli_choice("--normalize",
			    optarg, norms);
			break;
		case OPT_RESIZE:
			if (feat_parse_resize(optarg, MAX_SIDE, &o.rh, &o.rw))
				cli_usage_error("invalid --resize '%s': "
				    "expected HxW with sides in [1, %d]", optarg,
				    MAX_SIDE);
			o.p.resize = 1;
			break;
		case OPT_SCALE:
			parse_scale(&o, optarg);
			break;
		case OPT_SCALE_FROM:
			o.p.scale_from = optarg;
			break;
		case OPT_VOCAB:
			o.p.vocab = optarg;
			break;
		default:
			usage(EX_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc > 1)
		usage(EX_USAGE);
	path = argc == 1 ? argv[0] : NULL;
	if (o.p.format == FEAT_NONE)
		o.p.format = feat_format_from_path(path);

	if ((bad = feat_check_params(&o.p, msg)) != NULL)
		cli_usage_error("%s", bad);
	if (o.sj && o.p.format == FEAT_TEXT)
		cli_usage_error("--scatter applies to images: idx input, or "
		    "csv with --image HxW");
	if (o.sj && o.p.format == FEAT_CSV && o.ih == 0)
		cli_usage_error("--scatter on csv input needs --image HxW "
		    "(each row an image of H x W columns)");
	if (o.ih && o.p.format != FEAT_CSV)
		cli_usage_error("--image applies to csv input only");
	if (!o.sj && (o.ih || o.groups || o.threads))
		cli_usage_error("%s applies to --scatter only", o.ih ?
		    "--image" : o.groups ? "--group-norm" : "--threads");
	if (o.sj && o.threads == 0) {
		long np = sysconf(_SC_NPROCESSORS_ONLN);
		o.threads = np < 1 ? 1 : np > SCATTER_MAX_THREADS ?
		    SCATTER_MAX_THREADS : (int)np;
	}

	if (o.c.dataset)
		snprintf(name, sizeof name, "%s", o.c.dataset);
	else
		feat_dataset_from_path(path, name, sizeof name);

	/* Open everything before computing. */
	in = cli_infile_open(path, INFILE_GZIP);
	inputs[0] = in;
	{
		const char *sp = o.p.labels ? o.p.labels : o.p.scale_from ?
		    o.p.scale_from : o.p.vocab;
		if (sp) {
			int stdin_in = path == NULL || strcmp(path, "-") == 0;
			if (strcmp(sp, "-") == 0 && stdin_in)
				cli_usage_error("the input and %s cannot both be "
				    "stdin", o.p.labels ? "--labels" : o.p.scale_from ?
				    "--scale-from" : "--vocab");
			if (o.p.scale_from && strcmp(sp, "-") == 0)
				cli_usage_error("--scale-from needs a file, not "
				    "stdin");
			side = cli_infile_open(sp, INFILE_GZIP);
			inputs[ninputs++] = side;
			if (o.p.scale_from && feat_same_file(infile_source(in),
			    infile_source(side)))
				cli_usage_error("--scale-from '%s' is the input "
				    "itself: bounds learnt from private data are "
				    "not private (use --scale LO:HI or a public "
				    "file)", sp);
		}
	}
	labcol_init(&ou.lab, o.p.classes, o.p.drop_unknown);
	if (o.p.label_map) {
		lmap = cli_infile_open(o.p.label_map, INFILE_GZIP);
		inputs[ninputs++] = lmap;
		if (feat_same_file(infile_source(in), infile_source(lmap)))
			cli_usage_error("--label-map '%s' is the input itself: a "
			    "label set learnt from private data is not public",
			    o.p.label_map);
		ou.map_label = infile_label(lmap);
		if ((rc = feat_read_label_map(&ou.lab, infile_fp(lmap),
		    infile_label(lmap), msg)) != 0)
			feat_die(lmap, rc, msg);
	}
	ofp = cli_out_open(o.c.output, o.c.force);
	ou.o = &o;
	ou.w = cli_writer(ofp, o.c.level);
	ou.sc.binary = o.p.binary;
	ou.sc.normalize = o.normalize;
	ou.sc.clip = o.clip_arg ? o.clip : 0;
	ou.sc.dtype = o.dtype;
	if (o.p.scale) {
		ou.sc.on = 1;
		ou.sc.lo = o.scale_lo;
		ou.sc.hi = o.scale_hi;
	} else if (o.p.format == FEAT_IDX && !o.p.binary) {
		/* Pixels are scaled to [0,1] unless --scale says otherwise. */
		ou.sc.on = 1;
		ou.sc.lo = 0;
		ou.sc.hi = 255;
	}
	if (o.sj) {
		/* --scatter: the bounds apply to pixels, before it. */
		ou.isc.on = ou.sc.on;
		ou.isc.lo = ou.sc.lo;
		ou.isc.hi = ou.sc.hi;
		ou.sc.on = 0;
	}

	/* The taint comes first, so a reader sees it before any row. */
	if (ledger_mark_raw(&sm, name, LEDGER_ROW_LOCAL, err, sizeof err) != 0)
		cli_die(EX_SOFTWARE, "%s", err);
	cli_meta_set(&sm, "data.name", name);
	cli_prov(&sm);
	if ((rc = ts_write_meta(ou.w, &sm)) != 0)
		cli_wdie(ou.w, rc);
	ts_meta_free(&sm);

	if (o.p.format == FEAT_CSV)
		run_csv(&ou, &o, in, o.p.scale_from ? side : NULL, inputs,
		    ninputs);
	else if (o.p.format == FEAT_IDX)
		run_idx(&ou, &o, in, side, inputs, ninputs);
	else
		run_text(&ou, &o, in, side, inputs, ninputs);
	ts_writer_close(ou.w);
	cli_infile_close(in);
	cli_infile_close(side);
	cli_infile_close(lmap);
	cli_out_commit();
	return 0;
}
