/*
 * covest: estimate covariance matrices with differential privacy.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "covnoise.h"
#include "dpcli.h"
#include "la.h"
#include "ledger.h"
#include "noise.h"
#include "rdp.h"
#include "subspace.h"
#include "tensor.h"
#include "tstream.h"

#define MAX_FEATURES 16384		/* columns of X: S is d x d doubles */
#define MAX_AUDIT 1000000		/* --audit-repeat */
#define CHUNK_ELEMS (1u << 23)		/* doubles of rows per SYRK call */
#define CHUNK_MIN 256			/* ... but at least this many rows */
#define CHUNK_MAX 4096			/* ... and at most */
#define NOISE_CHUNK (1u << 18)		/* values noised with one rng */
#define MAX_THREADS 8			/* noise workers */
#define CLIP_MIN 1e-50			/* --clip range: C^2 stays normal */
#define CLIP_MAX 1e50
#define SIGMA_MIN 1e-6			/* --sigma range (besides 0) */
#define SIGMA_MAX 1e6
#define EPS_MAX 100
#define WORK_ITEM "covest"
#define UNSAFE_ENV "PRIVADA_TEST_UNSAFE"

/* The parts of a release, each with its own Gaussian noise. */
enum { P_COV, P_SUM, P_CNT, NPARTS };
static const char *const part_name[NPARTS] = { "cov", "sum", "count" };
/* Default budget split of the parts released (renormalised over them). */
static const double default_split[NPARTS] = { 0.8, 0.1, 0.1 };

enum { SUB_NONE, SUB_RANDOM, SUB_SELECT };
enum { MEAN_RELEASED, MEAN_ZERO, MEAN_FILE };
enum { CAL_RDP, CAL_AGM };

enum {
	OPT_AUDIT = 256, OPT_CALIBRATION, OPT_CLIP, OPT_COUNT_PUBLIC,
	OPT_DATASET, OPT_LEVEL, OPT_MEAN, OPT_NEIGHBOURS, OPT_SELECT_ON,
	OPT_SIGMA, OPT_SPLIT, OPT_SUBSPACES, OPT_TENSOR, OPT_UNSAFE
};

struct opts {
	const char *output, *level, *seed, *tensor, *dataset, *select_on;
	const char *mean_file, *subspaces_arg;
	int force, quiet, verbose, relation, mean, subspaces, calibration;
	int has_eps, has_delta, has_sigma, has_clip, has_split, has_cal;
	int has_count, unsafe;
	double epsilon, delta, sigma, clip, split[NPARTS];
	uint64_t count_public, audit;
	size_t m, maxk;
};

/* The noise of every release: one Gaussian mechanism over the parts. */
struct plan {
	int noisy;			/* 0 with --sigma 0 */
	double z;			/* joint noise multiplier asked for */
	double w[NPARTS];		/* budget weights; 0: part not released */
	double delta2[NPARTS];		/* L2 sensitivity before the grid */
	uint64_t nent[NPARTS];		/* values noised (for the grid) */
	double sigma[NPARTS];		/* noise standard deviation */
	double grid[NPARTS];		/* rounding grid of the sampler */
	double sens[NPARTS];		/* sensitivity charged: delta2 + grid */
	double mu;			/* joint mu = 1 / noise multiplier */
};

/* What one pass over the rows accumulates. */
struct acc {
	size_t d;
	double *S;			/* d x d, upper triangle: sum x x^T */
	double *s;			/* sum of x, or NULL */
	uint64_t n, nonfinite;
	double syrk_secs;
};

/* How each row is prepared before it is accumulated. */
struct prep {
	double clip;			/* 0: no clipping */
	double shrink;			/* 1 - a bound on the norm's error */
	const double *m0;		/* public mean subtracted first */
	const size_t *block_of;		/* per-block clipping (unsafe test) */
	size_t nb;
	double *bscale, *bss;		/* nb values of scratch (per thread) */
};

struct draws;

/* Everything a release reads. */
struct ctx {
	const struct opts *o;
	size_t d;
	const struct acc *a;
	const struct plan *pl;
	const double *m0;		/* --mean FILE */
	const double *cov_pub;		/* --select-on: its covariance */
	const size_t *perm;		/* visiting order or partition */
	const size_t *sizes;		/* fixed partition (none, random) */
	size_t nb;
	int centred;
	struct ts_writer *w;
	double *full;			/* d x d scratch (select) */
	double *blk;			/* largest block, k x k scratch */
	double *mean;			/* d */
	size_t *idx, *bsz;		/* per-release partition (select) */
	const size_t *ident;		/* 0..d-1 */
	struct draws *dr;		/* the noise of the current release */
	const char *seed;		/* --seed, or NULL */
	uint64_t seed_value;
	char item[64];			/* work item of the current release */
	int threads;			/* noise workers */
};

__attribute__((noreturn)) static void
usage(int status)
{
	FILE *fp = status ? stderr : stdout;

	fputs("usage: covest [-fqVv] [-d delta] [-e epsilon] [-o file] "
	    "[-S seed]\n"
	    "              [--audit-repeat n] [--calibration method] "
	    "[--clip bound]\n"
	    "              [--count-public n] [--dataset name] [--level level]\n"
	    "              [--mean how] [--neighbours relation] "
	    "[--select-on file]\n"
	    "              [--sigma multiplier] [--split weights] "
	    "[--subspaces how]\n"
	    "              [--tensor name] [file]\n", fp);
	if (status == 0)
		fputs("\n"
		    "  -d, --delta D          delta of (epsilon, delta)-DP\n"
		    "  -e, --epsilon E        epsilon of (epsilon, delta)-DP "
		    "(or --sigma)\n"
		    "  -f, --force            write to a terminal\n"
		    "  -h, --help             show this help\n"
		    "  -o, --output FILE      write FILE (through a temporary "
		    "file), not stdout\n"
		    "  -q, --quiet            no warnings, no progress\n"
		    "  -S, --seed N           reproducible noise: the output is "
		    "NOT private\n"
		    "  -V, --version          show the version\n"
		    "  -v, --verbose          report the noise and the time of "
		    "each step\n"
		    "      --audit-repeat N   N independent releases (tests "
		    "only)\n"
		    "      --calibration M    rdp (default) or agm: how "
		    "--epsilon sets the noise\n"
		    "      --clip C           scale rows of L2 norm above C "
		    "down to C (required)\n"
		    "      --count-public N   the row count is public and is N\n"
		    "      --dataset NAME     the protected dataset (default: "
		    "from the input)\n"
		    "      --level N          zstd level of the output (default "
		    "1)\n"
		    "      --mean HOW         released (default), zero "
		    "(uncentred) or a public FILE\n"
		    "      --neighbours REL   add-remove (default) or "
		    "replace-one\n"
		    "      --select-on FILE   forward selection on PUBLIC data\n"
		    "      --sigma Z          joint noise multiplier; 0: no noise, "
		    "NOT private\n"
		    "      --split A,B,C      budget weights of the second "
		    "moments, sum, count\n"
		    "      --subspaces HOW    none (default), random:M, "
		    "select[:K]\n"
		    "      --tensor NAME      the rows (default X)\n", fp);
	exit(status);
}

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- options ---- */

static void
parse_subspaces(struct opts *o, const char *arg)
{
	const char *colon = strchr(arg, ':');

	o->subspaces_arg = arg;
	if (strcmp(arg, "none") == 0) {
		o->subspaces = SUB_NONE;
	} else if (strncmp(arg, "random:", 7) == 0) {
		o->subspaces = SUB_RANDOM;
		o->m = (size_t)cli_ll("--subspaces random:M", arg + 7, 1,
		    MAX_FEATURES);
	} else if (strcmp(arg, "select") == 0 ||
	    (colon && colon - arg == 6 && strncmp(arg, "select", 6) == 0)) {
		o->subspaces = SUB_SELECT;
		o->maxk = colon ? (size_t)cli_ll("--subspaces select:K",
		    colon + 1, 1, MAX_FEATURES) : 0;
	} else {
		cli_usage_error("invalid --subspaces '%s': expected none, "
		    "random:M or select[:K]", arg);
	}
}

static void
parse_split(struct opts *o, const char *arg)
{
	const char *p = arg;
	char *end;

	for (int i = 0; i < NPARTS; i++) {
		errno = 0;
		o->split[i] = strtod(p, &end);
		if (end == p || errno == ERANGE || !isfinite(o->split[i]) ||
		    o->split[i] < 0)
			cli_usage_error("invalid --split '%s': expected three "
			    "non-negative weights A,B,C", arg);
		p = end;
		if (i < NPARTS - 1 && *p++ != ',')
			cli_usage_error("invalid --split '%s': expected three "
			    "weights A,B,C", arg);
	}
	if (*p != '\0')
		cli_usage_error("invalid --split '%s': expected three weights "
		    "A,B,C", arg);
	o->has_split = 1;
}

/* Which parts this run releases with noise. */
static void
parts_released(const struct opts *o, int rel[NPARTS])
{
	rel[P_COV] = 1;
	rel[P_SUM] = o->mean == MEAN_RELEASED;
	/* Under replace-one the neighbours have the same size: the count
	 * is public by the relation itself. */
	rel[P_CNT] = !o->has_count && o->relation == LEDGER_ADD_REMOVE;
}

static void
check_options(struct opts *o)
{
	int rel[NPARTS];

	if (o->has_eps != o->has_delta)
		cli_usage_error("--epsilon and --delta go together");
	if (o->has_eps && o->has_sigma)
		cli_usage_error("--epsilon and --sigma exclude each other");
	if (!o->has_eps && !o->has_sigma)
		cli_usage_error("no privacy parameters: give --epsilon and "
		    "--delta, or --sigma");
	if (o->has_cal && !o->has_eps)
		cli_usage_error("--calibration applies to --epsilon only");
	if (!o->has_clip && !(o->has_sigma && o->sigma == 0))
		cli_usage_error("--clip is required: without a bound on the "
		    "rows there is no sensitivity");
	if (o->select_on && o->subspaces != SUB_SELECT)
		cli_usage_error("--select-on needs --subspaces select");
	if (o->unsafe) {
		const char *e = getenv(UNSAFE_ENV);
		if (e == NULL || strcmp(e, "1") != 0)
			cli_usage_error("--unsafe-test-miscalibrate is refused "
			    "unless %s=1: it breaks the privacy guarantee "
			    "(tests only)", UNSAFE_ENV);
		if (o->subspaces != SUB_RANDOM || !o->has_clip)
			cli_usage_error("--unsafe-test-miscalibrate needs "
			    "--subspaces random:M and --clip");
	}
	if (o->audit && o->has_sigma && o->sigma == 0)
		cli_usage_error("--audit-repeat needs noise");
	parts_released(o, rel);
	if (o->has_split)
		for (int i = 0; i < NPARTS; i++) {
			if (rel[i] && o->split[i] == 0)
				cli_usage_error("invalid --split: the %s is "
				    "released and needs a positive weight",
				    part_name[i]);
			if (!rel[i] && o->split[i] != 0)
				cli_usage_error("invalid --split: the %s is not "
				    "released (%s): give it weight 0",
				    part_name[i], i == P_SUM ? "--mean is not "
				    "released" : "the count is public");
		}
}

/* ---- reading ---- */

/* Prepare one row in place: a non-finite row becomes the zero row
 * (@return 1), else it is centred on the public mean and clipped. */
static int
prep_row(double *x, size_t d, const struct prep *p)
{
	for (size_t j = 0; j < d; j++) {
		if (p->m0)
			x[j] -= p->m0[j];
		if (!isfinite(x[j])) {
			memset(x, 0, d * sizeof *x);
			return 1;
		}
	}
	if (p->clip == 0)
		return 0;
	if (p->block_of == NULL) {
		double sc = 0, ss = 0, norm;

		for (size_t j = 0; j < d; j++)
			sc = fmax(sc, fabs(x[j]));
		if (sc == 0)
			return 0;
		/* Scaled, so the sum of squares cannot overflow. */
		for (size_t j = 0; j < d; j++)
			ss += (x[j] / sc) * (x[j] / sc);
		norm = sc * sqrt(ss);
		/* The computed norm is within a relative (d + 8) 2^-53 of
		 * the true one (the summation of d squares, the scaling and
		 * the root): rows are clipped to C times 1 less twice that,
		 * so that no clipped row, nor any row left as it is, can
		 * exceed C. */
		if (norm > p->clip * p->shrink) {
			double f = p->clip * p->shrink / norm;
			for (size_t j = 0; j < d; j++)
				x[j] *= f;
		}
		return 0;
	}
	/* The unsafe test variant: each block clipped on its own, as a
	 * per-subspace mechanism with parallel composition would. */
	for (size_t b = 0; b < p->nb; b++)
		p->bscale[b] = p->bss[b] = 0;
	for (size_t j = 0; j < d; j++)
		p->bscale[p->block_of[j]] = fmax(p->bscale[p->block_of[j]],
		    fabs(x[j]));
	for (size_t j = 0; j < d; j++) {
		double sc = p->bscale[p->block_of[j]];
		if (sc > 0)
			p->bss[p->block_of[j]] += (x[j] / sc) * (x[j] / sc);
	}
	for (size_t b = 0; b < p->nb; b++) {
		double norm = p->bscale[b] * sqrt(p->bss[b]);
		p->bss[b] = norm > p->clip * p->shrink ? p->clip * p->shrink /
		    norm : 1;
	}
	for (size_t j = 0; j < d; j++)
		x[j] *= p->bss[p->block_of[j]];
	return 0;
}

/* Find the tensor named name and check it is a 2-D float matrix.
 * @return its number of columns. */
static size_t
find_rows(struct ts_reader *r, const char *label, const char *name,
    struct tensor *hdr)
{
	int rc;

	while ((rc = ts_read_next(r, hdr)) == 1) {
		if (strcmp(hdr->name, name) == 0)
			break;
		tensor_free(hdr);
	}
	if (rc < 0)
		cli_rdie(r, rc);
	if (rc == 0)
		cli_die(EX_DATAERR, "%s: no tensor '%s' (name the rows with "
		    "--tensor)", label, name);
	if (hdr->ndim != 2)
		cli_die(EX_DATAERR, "%s: tensor '%s' has %d dimensions: rows "
		    "need 2", label, name, hdr->ndim);
	if (hdr->dtype != TS_F32 && hdr->dtype != TS_F64)
		cli_die(EX_DATAERR, "%s: tensor '%s' is %s: covest reads f32 "
		    "or f64", label, name, ts_dtype_name(hdr->dtype));
	if (hdr->dims[1] == 0 || hdr->dims[1] > MAX_FEATURES)
		cli_die(EX_DATAERR, "%s: tensor '%s' has %llu columns: covest "
		    "takes 1 to %d", label, name,
		    (unsigned long long)hdr->dims[1], MAX_FEATURES);
	return (size_t)hdr->dims[1];
}

/* A chunk of rows, read and prepared by one thread while the previous
 * chunk is accumulated by another. */
struct chunk {
	struct ts_reader *r;
	const struct prep *p;
	int dtype;
	size_t d, rows;
	void *raw;
	double *x;
	int64_t got;
	uint64_t nonfinite;
	double *bscale, *bss;		/* this chunk's per-block scratch */
};

static void *
read_chunk(void *arg)
{
	struct chunk *ch = arg;
	struct prep p = *ch->p;
	size_t d = ch->d;

	p.bscale = ch->bscale;
	p.bss = ch->bss;
	/* A call returns the rows of one record at most: fill the chunk,
	 * so that SYRK gets many rows at once. */
	ch->got = 0;
	while ((size_t)ch->got < ch->rows) {
		int64_t k = ts_read_rows(ch->r, (char *)ch->raw + (size_t)ch->got *
		    d * ts_dtype_size(ch->dtype), ch->rows - (size_t)ch->got);
		if (k < 0) {
			ch->got = k;
			return NULL;
		}
		if (k == 0)
			break;
		ch->got += k;
	}
	if (ch->got == 0)
		return NULL;
	if (ch->dtype == TS_F32)
		for (size_t i = (size_t)ch->got * d; i-- > 0;)
			ch->x[i] = ((float *)ch->raw)[i];
	for (size_t i = 0; i < (size_t)ch->got; i++)
		ch->nonfinite += (uint64_t)prep_row(ch->x + i * d, d, &p);
	return NULL;
}

/* Stream the rows of the current tensor into a: each chunk is read
 * (decompressed, converted, clipped) in a second thread while SYRK
 * accumulates the previous one. */
static void
accumulate(struct ts_reader *r, const struct tensor *hdr, const struct prep *p,
    struct acc *a, const char *what)
{
	size_t d = a->d, rows = CHUNK_ELEMS / d;
	uint64_t total = hdr->dims[0] == TS_UNKNOWN_ROWS ? 0 : hdr->dims[0];
	struct chunk ch[2];
	int cur = 0;

	if (rows < CHUNK_MIN)
		rows = CHUNK_MIN;
	if (rows > CHUNK_MAX)
		rows = CHUNK_MAX;
	for (int i = 0; i < 2; i++) {
		ch[i] = (struct chunk){ .r = r, .p = p, .dtype = hdr->dtype,
		    .d = d, .rows = rows };
		/* f32 rows are converted in place, from the back: the
		 * doubles buffer holds the floats in its first half. */
		ch[i].x = cli_reallocarray(NULL, rows * d, sizeof *ch[i].x);
		ch[i].raw = ch[i].x;
		if (p->block_of) {
			ch[i].bscale = cli_reallocarray(NULL, p->nb,
			    sizeof *ch[i].bscale);
			ch[i].bss = cli_reallocarray(NULL, p->nb,
			    sizeof *ch[i].bss);
		}
	}
	read_chunk(&ch[cur]);
	while (ch[cur].got > 0) {
		struct chunk *c = &ch[cur];
		size_t k = (size_t)c->got;
		pthread_t th;
		int async;
		double t0;

		async = pthread_create(&th, NULL, read_chunk, &ch[1 - cur]) == 0;
		t0 = now();
		la_syrk_acc(k, d, c->x, a->S);
		a->syrk_secs += now() - t0;
		if (a->s)
			for (size_t i = 0; i < k; i++)
				for (size_t j = 0; j < d; j++)
					a->s[j] += c->x[i * d + j];
		a->n += k;
		cli_progress(what, a->n, total);
		if (async)
			pthread_join(th, NULL);
		else
			read_chunk(&ch[1 - cur]);
		cur = 1 - cur;
	}
	if (ch[cur].got < 0)
		cli_rdie(r, (int)ch[cur].got);
	for (int i = 0; i < 2; i++) {
		a->nonfinite += ch[i].nonfinite;
		free(ch[i].x);
		free(ch[i].bscale);
		free(ch[i].bss);
	}
}

/* Read the rest of a stream, so its metadata and digest are complete. */
static void
drain(struct ts_reader *r)
{
	struct tensor h;
	int rc;

	while ((rc = ts_read_next(r, &h)) == 1)
		tensor_free(&h);
	if (rc < 0)
		cli_rdie(r, rc);
}

/* The public mean of --mean FILE: the first tensor, with d values. */
static double *
read_mean(struct ts_reader *r, const char *label, size_t d)
{
	struct tensor t;
	uint64_t ne;
	double *m;
	int rc;

	if ((rc = ts_read_next(r, &t)) < 0)
		cli_rdie(r, rc);
	if (rc == 0)
		cli_die(EX_DATAERR, "%s: --mean: the stream holds no tensor",
		    label);
	if (t.dtype != TS_F32 && t.dtype != TS_F64)
		cli_die(EX_DATAERR, "%s: --mean: tensor '%s' is %s: expected "
		    "f32 or f64", label, t.name, ts_dtype_name(t.dtype));
	if (t.ndim == 0 || (t.dims[0] != TS_UNKNOWN_ROWS &&
	    (tensor_elems(&t, &ne) != 0 || ne != d)))
		cli_die(EX_DATAERR, "%s: --mean: tensor '%s' must hold the %zu "
		    "values of the mean", label, t.name, d);
	if ((rc = ts_read_data(r, &t)) != 0)
		cli_rdie(r, rc);
	if (tensor_elems(&t, &ne) != 0 || ne != d)
		cli_die(EX_DATAERR, "%s: --mean: tensor '%s' must hold the %zu "
		    "values of the mean", label, t.name, d);
	m = cli_reallocarray(NULL, d, sizeof *m);
	for (size_t j = 0; j < d; j++) {
		m[j] = t.dtype == TS_F64 ? ((double *)t.data)[j] :
		    ((float *)t.data)[j];
		if (!isfinite(m[j]))
			cli_die(EX_DATAERR, "%s: --mean: value %zu is not "
			    "finite", label, j);
	}
	tensor_free(&t);
	drain(r);
	return m;
}

/* The covariance of the public rows of --select-on, prepared as the
 * private rows are and centred as the output is. */
static double *
public_cov(struct ts_reader *r, const char *label, const struct opts *o,
    size_t d, const double *m0, double *secs)
{
	struct tensor hdr;
	struct prep p = { .clip = o->has_clip ? o->clip : 0, .m0 = m0,
	    .shrink = 1 - (double)(d + 8) * 0x1p-52 };
	struct acc a = { .d = d };
	size_t dp;
	double n;

	dp = find_rows(r, label, o->tensor, &hdr);
	if (dp != d)
		cli_die(EX_DATAERR, "%s: --select-on: tensor '%s' has %zu "
		    "columns, the input %zu", label, o->tensor, dp, d);
	a.S = cli_calloc(d * d, sizeof *a.S);
	a.s = cli_calloc(d, sizeof *a.s);
	accumulate(r, &hdr, &p, &a, "public rows");
	tensor_free(&hdr);
	drain(r);
	if (a.n == 0)
		cli_die(EX_DATAERR, "%s: --select-on: tensor '%s' has no rows",
		    label, o->tensor);
	la_sym_fill(d, a.S);
	n = (double)a.n;
	for (size_t i = 0; i < d; i++)
		for (size_t j = 0; j < d; j++) {
			a.S[i * d + j] /= n;
			if (o->mean == MEAN_RELEASED)
				a.S[i * d + j] -= a.s[i] / n * (a.s[j] / n);
		}
	*secs += a.syrk_secs;
	free(a.s);
	return a.S;
}

/* Refuse a side input that is the main input itself. */
static void
not_the_input(FILE *in, FILE *side, const char *opt, const char *path)
{
	struct stat a, b;

	if (fstat(fileno(in), &a) == 0 && fstat(fileno(side), &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino && S_ISREG(a.st_mode))
		cli_usage_error("%s '%s' is the input itself: the private rows "
		    "cannot be declared public", opt, path);
}

/* ---- calibration ---- */

static double
rdp_eps(double mu, double delta)
{
	double rdp[RDP_DEFAULT_NORDERS], eps;
	size_t no;
	const double *ord = rdp_default_orders(&no);

	for (size_t i = 0; i < no; i++)
		rdp[i] = ord[i] * mu * mu / 2;
	if (rdp_to_epsilon(ord, rdp, no, delta, RDP_CONV_IMPROVED, &eps,
	    NULL) != 0)
		cli_die(EX_SOFTWARE, "cannot convert the RDP curve");
	return eps;
}

/* The smallest noise multiplier whose Gaussian RDP curve at the default
 * orders converts to at most eps at delta (what rdp-account reports). */
static double
calibrate_rdp(double eps, double delta)
{
	double lo = 1e-3, hi = 1e6;

	if (rdp_eps(1 / hi, delta) > eps)
		cli_usage_error("--epsilon %g --delta %g needs a noise "
		    "multiplier above %g", eps, delta, hi);
	if (rdp_eps(1 / lo, delta) <= eps)
		return lo;
	while (hi / lo - 1 > 1e-12) {
		double mid = sqrt(lo * hi);
		if (mid <= lo || mid >= hi)
			break;
		if (rdp_eps(1 / mid, delta) > eps)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

/*
 * Subspaces do not divide the cost.  PRIMA (Wang et al. 2021, Theorem 3)
 * gives every feature block the whole budget and invokes parallel
 * composition over the disjoint subspaces; but parallel composition is
 * about disjoint sets of rows, and one row touches every block: with each
 * block clipped to C on its own, one row moves the M blocks by C^2 each,
 * a joint sensitivity of sqrt(M) C^2, so that argument is unsound.  Here
 * whole rows are clipped (prep_row), so the parts x_i of a row satisfy
 * sum ||x_i||^2 <= C^2 and the block-diagonal second moments move by
 * sqrt(sum ||x_i||^4) <= C^2 in all: one noise scale, calibrated to that
 * joint sensitivity, covers all blocks, and they are one ledger entry.
 * (The upper triangle of x x^T, the values noised, has the squared norm
 * (||x||^4 + sum x_j^4) / 2 <= ||x||^4.)
 *
 * Noise of each part.  The parts are released together as one Gaussian
 * mechanism: a row changes the second moments by at most delta2[cov],
 * the sum by delta2[sum] and the count by 1, all at once, so the privacy
 * loss is that of a Gaussian with mu^2 = sum_p (sens_p / sigma_p)^2
 * (equivalently, the RDP curves of the parts add up).  Part p gets the
 * share w_p of mu^2.  Each sigma_p is the fixed point of
 * sigma = z_p * noise_sens_l2(delta2_p, noise_grid(sigma), nent_p), since
 * the grid widens the sensitivity and depends on sigma; the iteration
 * only grows and the grid term is 2^-24 of sigma times sqrt(nent).
 */
static void
plan_noise(struct plan *pl, const struct opts *o, size_t d, uint64_t ncov)
{
	int rel[NPARTS];
	double wsum = 0, c2 = o->clip * o->clip;

	memset(pl, 0, sizeof *pl);
	if (o->has_sigma && o->sigma == 0)
		return;
	pl->noisy = 1;
	parts_released(o, rel);
	for (int i = 0; i < NPARTS; i++) {
		pl->w[i] = rel[i] ? (o->has_split ? o->split[i] :
		    default_split[i]) : 0;
		wsum += pl->w[i];
	}
	for (int i = 0; i < NPARTS; i++)
		pl->w[i] /= wsum;
	if (o->relation == LEDGER_REPLACE_ONE) {
		pl->delta2[P_COV] = sqrt(2.0) * c2 * (1 + 0x1p-50);
		pl->delta2[P_SUM] = 2 * o->clip;
	} else {
		pl->delta2[P_COV] = c2;
		pl->delta2[P_SUM] = o->clip;
	}
	pl->delta2[P_CNT] = 1;
	pl->nent[P_COV] = ncov;
	pl->nent[P_SUM] = d;
	pl->nent[P_CNT] = 1;
	if (o->has_sigma) {
		pl->z = o->sigma;
	} else if (o->calibration == CAL_AGM) {
		int rc = rdp_agm_sigma(o->epsilon, o->delta, &pl->z);
		if (rc != 0)
			cli_usage_error("--epsilon %g --delta %g: no noise "
			    "multiplier: %s", o->epsilon, o->delta,
			    rdp_strerror(rc));
	} else {
		pl->z = calibrate_rdp(o->epsilon, o->delta);
	}
	for (double inflate = 1;; inflate *= 1 + 1e-9) {
		double mu2 = 0;

		for (int i = 0; i < NPARTS; i++) {
			double zp, s;

			if (pl->w[i] == 0)
				continue;
			zp = pl->z * inflate / sqrt(pl->w[i]);
			s = zp * pl->delta2[i];
			for (;;) {
				double need = zp * noise_sens_l2(pl->delta2[i],
				    noise_grid(s), pl->nent[i]);
				if (!(need > s))
					break;
				s = need;
			}
			pl->sigma[i] = s;
			pl->grid[i] = noise_grid(s);
			pl->sens[i] = noise_sens_l2(pl->delta2[i], pl->grid[i],
			    pl->nent[i]);
			if (pl->grid[i] == 0 || !isfinite(pl->sens[i]))
				cli_usage_error("the noise of the %s is out of "
				    "range (check --clip and --sigma)",
				    part_name[i]);
			mu2 += (pl->sens[i] / s) * (pl->sens[i] / s);
		}
		pl->mu = sqrt(mu2);
		/* The recorded curve must not exceed what was asked for,
		 * rounding included. */
		if (o->has_sigma ? pl->mu * pl->z <= 1 :
		    o->calibration == CAL_AGM ? pl->mu * pl->z <= 1 :
		    rdp_eps(pl->mu, o->delta) <= o->epsilon)
			break;
	}
}

/* ---- releases ---- */

/* The integer noise of one release (covnoise.h), in the order it is
 * drawn: count, sum, then the upper triangle of each block row by row. */
struct draws {
	int64_t cnt[1];
	int64_t *sum;			/* d */
	int64_t *cov;			/* the blocks' upper triangles */
	size_t cap;			/* entries of cov */
	int rc, part;			/* the first failure: NOISE_E_* */
	int rng_rc;			/* ... or an RNG_E_* one */
};

/* Rows a0..a1-1 of a block's upper triangle, drawn with their own
 * generator into dst. */
struct njob {
	double sigma;
	int64_t *dst;
	size_t n;
	struct rng *rng;
	int rc;
};

struct nwork {
	struct njob *jobs;
	size_t njobs, first, step;
};

static void *
noise_worker(void *arg)
{
	struct nwork *w = arg;

	for (size_t j = w->first; j < w->njobs; j += w->step) {
		struct njob *jb = &w->jobs[j];
		jb->rc = covnoise_draw(jb->rng, jb->sigma, jb->dst, jb->n);
	}
	return NULL;
}

static void
fail(struct draws *dr, int part, int rc)
{
	if (dr->rc == 0 && dr->rng_rc == 0) {
		dr->rc = rc;
		dr->part = part;
	}
}

/* Draw the noise of the count and the sum. */
static void
draw_head(const struct ctx *c, struct rng *rng, struct draws *dr)
{
	const struct plan *pl = c->pl;
	int rc;

	if (pl->w[P_CNT] > 0 && (rc = covnoise_draw(rng, pl->sigma[P_CNT],
	    dr->cnt, 1)) != 0)
		fail(dr, P_CNT, rc);
	if (pl->w[P_SUM] > 0 && (rc = covnoise_draw(rng, pl->sigma[P_SUM],
	    dr->sum, c->d)) != 0)
		fail(dr, P_SUM, rc);
}

/*
 * Draw the noise of the blocks' upper triangles (sizes[0..nb-1]) into
 * dr->cov.  A small block takes it from the release's generator.  A large
 * one is cut into runs of rows of about NOISE_CHUNK values, each drawn
 * with its own generator (seeded: the work item "<release item>/cov/
 * <block>/<run>"; else fresh from the system), so that up to `workers`
 * threads share the work and a seeded output does not depend on their
 * number.  Touches no data: it may run while the rows are being read.
 */
static void
draw_cov(const struct ctx *c, struct rng *rng, const size_t *sizes,
    size_t nb, struct draws *dr, int workers)
{
	double sigma = c->pl->sigma[P_COV];
	size_t off = 0;
	int rc;

	for (size_t i = 0; i < nb && dr->rc == 0 && dr->rng_rc == 0; i++) {
		size_t k = sizes[i], ne = k * (k + 1) / 2, nj = 0, a = 0, nt;
		struct njob *jobs;
		struct nwork w[MAX_THREADS];
		pthread_t th[MAX_THREADS];
		int started[MAX_THREADS] = { 0 };

		if (ne <= NOISE_CHUNK) {
			if ((rc = covnoise_draw(rng, sigma, dr->cov + off,
			    ne)) != 0)
				fail(dr, P_COV, rc);
			off += ne;
			continue;
		}
		jobs = calloc(ne / NOISE_CHUNK + 2, sizeof *jobs);
		if (jobs == NULL) {
			fail(dr, P_COV, NOISE_E_NOMEM);
			return;
		}
		while (a < k) {
			struct njob *jb = &jobs[nj];
			size_t got = 0;

			jb->sigma = sigma;
			jb->dst = dr->cov + off;
			while (a < k && got < NOISE_CHUNK)
				got += k - a++;
			jb->n = got;
			off += got;
			if (c->seed) {
				char item[128];
				snprintf(item, sizeof item, "%s/cov/%zu/%zu",
				    c->item, i, nj);
				rc = rng_new_seeded(&jb->rng, c->seed_value,
				    item);
			} else {
				rc = rng_new(&jb->rng);
			}
			nj++;
			if (rc != 0) {
				if (dr->rc == 0 && dr->rng_rc == 0)
					dr->rng_rc = rc;
				break;
			}
		}
		nt = (size_t)workers < nj ? (size_t)workers : nj;
		if (dr->rng_rc != 0)
			nt = 0;
		for (size_t t = 0; t < nt; t++) {
			w[t] = (struct nwork){ jobs, nj, t, nt };
			if (t > 0)
				started[t] = pthread_create(&th[t], NULL,
				    noise_worker, &w[t]) == 0;
		}
		if (nt > 0)
			noise_worker(&w[0]);
		for (size_t t = 1; t < nt; t++) {
			if (started[t])
				pthread_join(th[t], NULL);
			else
				noise_worker(&w[t]);
		}
		for (size_t j = 0; j < nj; j++) {
			if (jobs[j].rc != 0)
				fail(dr, P_COV, jobs[j].rc);
			rng_free(jobs[j].rng);
		}
		free(jobs);
	}
}

/* Stop on a failed draw: nothing has been released. */
static void
check_draws(const struct draws *dr)
{
	if (dr->rng_rc == RNG_E_NOMEM || dr->rc == NOISE_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	if (dr->rng_rc != 0)
		cli_die(EX_OSERR, "no secure randomness: %s",
		    rng_strerror(dr->rng_rc));
	if (dr->rc != 0)
		cli_die(EX_SOFTWARE, "noise of the %s: %s: nothing was "
		    "released", part_name[dr->part], noise_strerror(dr->rc));
}

/* Room in dr->cov for the blocks' upper triangles. */
static void
draws_reserve(struct draws *dr, const size_t *sizes, size_t nb)
{
	size_t need = 0;

	for (size_t i = 0; i < nb; i++)
		need += sizes[i] * (sizes[i] + 1) / 2;
	if (need > dr->cap) {
		free(dr->cov);
		dr->cov = cli_reallocarray(NULL, need, sizeof *dr->cov);
		dr->cap = need;
	}
}

/* What the reading thread's neighbour does: draw the noise of the first
 * release while the rows are being accumulated. */
struct early {
	const struct ctx *c;
	struct rng *rng;
	struct draws *dr;
	const size_t *sizes;
	size_t nb;			/* 0: the blocks are not known yet */
};

static void *
draw_early(void *arg)
{
	struct early *e = arg;

	draw_head(e->c, e->rng, e->dr);
	if (e->nb > 0 && e->dr->rc == 0)
		draw_cov(e->c, e->rng, e->sizes, e->nb, e->dr, 1);
	return NULL;
}

static void
apply(const struct plan *pl, int part, double *x, size_t n, const int64_t *k)
{
	int rc = covnoise_apply(x, n, pl->sigma[part], k);

	if (rc != 0)
		cli_die(EX_SOFTWARE, "noise of the %s: %s: nothing was "
		    "released", part_name[part], noise_strerror(rc));
}

/* Add the drawn noise to the upper triangle of the k x k block b, whose
 * draws start at *off, and mirror it. */
static void
apply_sym(const struct ctx *c, double *b, size_t k, size_t *off)
{
	if (c->pl->noisy)
		for (size_t a = 0; a < k; a++) {
			apply(c->pl, P_COV, b + a * k + a, k - a,
			    c->dr->cov + *off);
			*off += k - a;
		}
	la_sym_fill(k, b);
}

static void
put_tensor(struct ctx *c, const char *base, uint64_t rep, int dtype, int ndim,
    const uint64_t *dims, void *data, const struct ts_meta *meta)
{
	struct tensor t;
	char name[TS_MAX_NAME + 1];
	int rc;

	if (c->o->audit)
		snprintf(name, sizeof name, "%s/%llu", base,
		    (unsigned long long)rep);
	else
		snprintf(name, sizeof name, "%s", base);
	if (tensor_init(&t, name, dtype, ndim, dims) != 0)
		cli_die(EX_SOFTWARE, "bad tensor header for '%s'", name);
	if (meta && ts_meta_merge(&t.meta, meta, "", NULL) != 0)
		cli_die(EX_OSERR, "out of memory");
	t.data = data;
	if ((rc = ts_write_tensor(c->w, &t)) != 0)
		cli_wdie(c->w, rc);
	t.data = NULL;
	tensor_free(&t);
}

/* Second moments to covariance, with released values only:
 * C = S / n - m m^T (ix: the block's features). */
static void
finish_cov(const struct ctx *c, double *b, const size_t *ix, size_t k,
    double n)
{
	int centre = c->o->mean == MEAN_RELEASED;

	for (size_t i = 0; i < k; i++)
		for (size_t j = 0; j < k; j++) {
			b[i * k + j] /= n;
			if (centre)
				b[i * k + j] -= c->mean[ix[i]] * c->mean[ix[j]];
		}
}

/* Write the blocks: from the accumulated second moments src (noise and
 * centring still to come), or from a released covariance (src_is_cov). */
static void
write_blocks(struct ctx *c, uint64_t rep, const size_t *idx,
    const size_t *sizes, size_t nb, const double *src, int src_is_cov,
    double n)
{
	struct ts_meta cm = { 0 };
	size_t o = 0, d = c->d, off = 0;
	uint64_t dims[2];
	char base[64];

	cli_meta_set(&cm, "cov.centred", c->centred ? "true" : "false");
	if (ts_meta_setf(&cm, "cov.divisor", "%.17g", n) != 0 ||
	    ts_meta_setf(&cm, "cov.noise_sd", "%.17g", c->pl->noisy ?
	    c->pl->sigma[P_COV] / n : 0) != 0)
		cli_die(EX_OSERR, "out of memory");
	if (c->o->has_clip && ts_meta_setf(&cm, "cov.clip", "%.17g",
	    c->o->clip) != 0)
		cli_die(EX_OSERR, "out of memory");
	for (size_t i = 0; i < nb; i++) {
		const size_t *ix = idx + o;
		size_t k = sizes[i];
		int64_t *sub = cli_reallocarray(NULL, k, sizeof *sub);
		double *mv = NULL;

		/* ix is ascending: these are upper-triangle entries. */
		for (size_t a = 0; a < k; a++)
			for (size_t b = a; b < k; b++)
				c->blk[a * k + b] = src[ix[a] * d + ix[b]];
		if (src_is_cov) {
			la_sym_fill(k, c->blk);
		} else {
			apply_sym(c, c->blk, k, &off);
			finish_cov(c, c->blk, ix, k, n);
		}
		for (size_t a = 0; a < k; a++)
			sub[a] = (int64_t)ix[a];
		dims[0] = k;
		snprintf(base, sizeof base, "subspace/%zu", i);
		put_tensor(c, base, rep, TS_I64, 1, dims, sub, NULL);
		if (c->centred) {
			const double *m = c->o->mean == MEAN_FILE ? c->m0 :
			    c->mean;
			mv = cli_reallocarray(NULL, k, sizeof *mv);
			for (size_t a = 0; a < k; a++)
				mv[a] = m[ix[a]];
			snprintf(base, sizeof base, "mean/%zu", i);
			put_tensor(c, base, rep, TS_F64, 1, dims, mv, NULL);
		}
		dims[1] = k;
		snprintf(base, sizeof base, "cov/%zu", i);
		put_tensor(c, base, rep, TS_F64, 2, dims, c->blk, &cm);
		free(sub);
		free(mv);
		o += k;
	}
	ts_meta_free(&cm);
}

/* Forward selection on cov: the blocks into c->idx and c->bsz.  The noise
 * error of a feature is the noise sd of one covariance entry; on the
 * released (noisy) covariance, residual variances below it count as 0. */
static size_t
select_blocks(struct ctx *c, const double *cov, double n, int noisy)
{
	size_t nb;
	double tau = c->pl->noisy ? c->pl->sigma[P_COV] / n : 0;
	int rc;

	rc = subspace_forward_select(c->d, cov, c->perm, tau, noisy ? tau : 0,
	    c->o->maxk, c->bsz, &nb);
	if (rc == SUBSPACE_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	if (rc != 0)
		cli_die(EX_SOFTWARE, "forward selection: the covariance is "
		    "not finite");
	memcpy(c->idx, c->perm, c->d * sizeof *c->idx);
	subspace_sort_blocks(c->idx, c->bsz, nb);
	return nb;
}

/*
 * One release: the noise of the count, the sum and the second moments, in
 * this order (drawn already when drawn is set: see draw_early); then
 * everything else is post-processing of released values.
 */
static void
release(struct ctx *c, struct rng *rng, uint64_t rep, int drawn)
{
	const struct plan *pl = c->pl;
	const struct acc *a = c->a;
	struct draws *dr = c->dr;
	size_t d = c->d, full = d;
	double n;

	if (pl->noisy && !drawn) {
		draw_head(c, rng, dr);
		check_draws(dr);
	}
	n = c->o->has_count ? (double)c->o->count_public : (double)a->n;
	if (pl->w[P_CNT] > 0)
		apply(pl, P_CNT, &n, 1, dr->cnt);
	n = fmax(n, 1);			/* post-processing */
	if (c->o->mean == MEAN_RELEASED) {
		memcpy(c->mean, a->s, d * sizeof *c->mean);
		if (pl->w[P_SUM] > 0)
			apply(pl, P_SUM, c->mean, d, dr->sum);
		for (size_t j = 0; j < d; j++)
			c->mean[j] /= n;
	}
	put_tensor(c, "count", rep, TS_F64, 0, NULL, &n, NULL);
	if (c->o->subspaces != SUB_SELECT) {
		if (pl->noisy && !drawn) {
			draw_cov(c, rng, c->sizes, c->nb, dr, c->threads);
			check_draws(dr);
		}
		write_blocks(c, rep, c->perm, c->sizes, c->nb, a->S, 0, n);
	} else if (c->cov_pub) {
		/* The blocks depend on the released count: their noise
		 * is drawn once they are known. */
		size_t nb = select_blocks(c, c->cov_pub, n, 0);
		if (pl->noisy) {
			draws_reserve(dr, c->bsz, nb);
			draw_cov(c, rng, c->bsz, nb, dr, c->threads);
			check_draws(dr);
		}
		write_blocks(c, rep, c->idx, c->bsz, nb, a->S, 0, n);
	} else {
		size_t nb, off = 0;

		/* The whole matrix is released (its sensitivity is the
		 * same as any block-diagonal part's); the blocks are chosen
		 * on it and the rest is dropped: post-processing. */
		if (pl->noisy && !drawn) {
			draw_cov(c, rng, &full, 1, dr, c->threads);
			check_draws(dr);
		}
		memcpy(c->full, a->S, d * d * sizeof *c->full);
		apply_sym(c, c->full, d, &off);
		finish_cov(c, c->full, c->ident, d, n);
		nb = select_blocks(c, c->full, n, 1);
		write_blocks(c, rep, c->idx, c->bsz, nb, c->full, 1, n);
	}
}

/* ---- metadata ---- */

/* The ledger of a side input: its releases, and its raw marks made
 * aggregate (the output depends on all of its rows). */
static void
inherit_side(struct ts_meta *m, const struct ts_meta *src, const char *label)
{
	struct ts_meta tmp = { 0 };
	char err[256];

	for (size_t i = 0; i < src->n; i++) {
		const char *k = src->kv[i].key;
		if (strncmp(k, "dp.raw.", 7) == 0) {
			if (ledger_mark_raw(m, k + 7, LEDGER_AGGREGATE, err,
			    sizeof err) != 0)
				cli_die(EX_DATAERR, "%s: %s", label, err);
		} else if (strncmp(k, "dp.", 3) == 0) {
			cli_meta_set(&tmp, k, src->kv[i].val);
		}
	}
	cli_inherit(m, &tmp, label);
	ts_meta_free(&tmp);
}

static void
set_param(struct ledger_entry *e, const char *key, double v)
{
	if (ts_meta_setf(&e->params, key, "%.17g", v) != 0)
		cli_die(EX_OSERR, "out of memory");
}

static void
record_release(struct ts_meta *m, struct rng *rng, const char *dataset,
    const struct plan *pl, const struct opts *o)
{
	static const char *const sig[NPARTS] = { "sigma", "sigma_sum",
	    "sigma_count" };
	static const char *const sen[NPARTS] = { "l2_sensitivity",
	    "l2_sensitivity_sum", "l2_sensitivity_count" };
	static const char *const grd[NPARTS] = { "grid", "grid_sum",
	    "grid_count" };
	static const char *const wgt[NPARTS] = { "weight_cov", "weight_sum",
	    "weight_count" };
	struct ledger_entry e;
	const double *ord;
	double reps = o->audit ? (double)o->audit : 1;
	size_t no;

	dpcli_entry(&e, rng, dataset, "gaussian");
	e.relation = o->relation;
	ord = rdp_default_orders(&no);
	e.norders = no;
	for (size_t i = 0; i < no; i++) {
		e.orders[i] = ord[i];
		e.rdp[i] = reps * rdp_gaussian(ord[i], 1 / pl->mu);
	}
	for (int i = 0; i < NPARTS; i++) {
		if (pl->w[i] == 0)
			continue;
		set_param(&e, sig[i], pl->sigma[i]);
		set_param(&e, sen[i], pl->sens[i]);
		set_param(&e, grd[i], pl->grid[i]);
		set_param(&e, wgt[i], pl->w[i]);
	}
	set_param(&e, "clip", o->clip);
	set_param(&e, "noise_multiplier", 1 / pl->mu);
	if (o->audit)
		set_param(&e, "audit_releases", reps);
	if (o->unsafe)
		set_param(&e, "unsafe_test_per_block", 1);
	dpcli_release(m, &e);
	ts_meta_free(&e.params);
}

/* ---- main ---- */

int
main(int argc, char **argv)
{
	static const char *const cals[] = { "rdp", "agm", NULL };
	static const char *const rels[] = { "add-remove", "replace-one",
	    NULL };
	static const char *const unsafe[] = { "per-block", NULL };
	static const struct option longopts[] = {
		{ "audit-repeat", required_argument, NULL, OPT_AUDIT },
		{ "calibration", required_argument, NULL, OPT_CALIBRATION },
		{ "clip", required_argument, NULL, OPT_CLIP },
		{ "count-public", required_argument, NULL, OPT_COUNT_PUBLIC },
		{ "dataset", required_argument, NULL, OPT_DATASET },
		{ "delta", required_argument, NULL, 'd' },
		{ "epsilon", required_argument, NULL, 'e' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "level", required_argument, NULL, OPT_LEVEL },
		{ "mean", required_argument, NULL, OPT_MEAN },
		{ "neighbours", required_argument, NULL, OPT_NEIGHBOURS },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "seed", required_argument, NULL, 'S' },
		{ "select-on", required_argument, NULL, OPT_SELECT_ON },
		{ "sigma", required_argument, NULL, OPT_SIGMA },
		{ "split", required_argument, NULL, OPT_SPLIT },
		{ "subspaces", required_argument, NULL, OPT_SUBSPACES },
		{ "tensor", required_argument, NULL, OPT_TENSOR },
		{ "unsafe-test-miscalibrate", required_argument, NULL,
		    OPT_UNSAFE },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct opts o = { .tensor = "X", .relation = LEDGER_ADD_REMOVE };
	struct ts_reader *r, *rm = NULL, *rs = NULL;
	struct ts_meta meta = { 0 }, prov = { 0 };
	struct tensor hdr;
	struct acc a = { 0 };
	struct prep p = { 0 };
	struct plan pl;
	struct ctx c = { 0 };
	struct draws dr = { 0 };
	struct early early = { 0 };
	pthread_t early_th;
	int early_started = 0, early_on;
	struct rng *rng, *srng = NULL;
	const char *label, *mlabel = NULL, *slabel = NULL, *dataset;
	FILE *in, *mfp = NULL, *sfp = NULL, *ofp;
	char **av, err[256];
	double *m0 = NULL, *cov_pub = NULL, t_start = now(), t_read, t_rel;
	size_t d, *perm, *sizes, nb = 1, maxk = 0, full;
	uint64_t ncov = 0;
	int ch, rc, nin = 0;

	cli_init(argv[0], argc, argv);
	av = cli_reallocarray(NULL, (size_t)argc + 1, sizeof *av);
	memcpy(av, argv, (size_t)argc * sizeof *av);
	av[argc] = NULL;
	av[0] = (char *)(uintptr_t)cli_prog();
	while ((ch = getopt_long(argc, av, "d:e:fho:qS:Vv", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'd':
			o.delta = cli_double("--delta", optarg, 0, 1);
			if (!(o.delta > 0 && o.delta < 1))
				cli_usage_error("invalid --delta '%s': must lie "
				    "strictly between 0 and 1", optarg);
			o.has_delta = 1;
			break;
		case 'e':
			o.epsilon = cli_double("--epsilon", optarg, 0, EPS_MAX);
			if (!(o.epsilon > 0))
				cli_usage_error("invalid --epsilon '%s': must be "
				    "positive", optarg);
			o.has_eps = 1;
			break;
		case 'f':
			o.force = 1;
			break;
		case 'h':
			usage(0);
		case 'o':
			o.output = optarg;
			break;
		case 'q':
			o.quiet = 1;
			break;
		case 'S':
			(void)dpcli_seed_arg(optarg);
			o.seed = optarg;
			break;
		case 'V':
			cli_version();
		case 'v':
			o.verbose = 1;
			break;
		case OPT_AUDIT:
			o.audit = (uint64_t)cli_ll("--audit-repeat", optarg, 1,
			    MAX_AUDIT);
			break;
		case OPT_CALIBRATION:
			o.calibration = cli_choice("--calibration", optarg,
			    cals);
			o.has_cal = 1;
			break;
		case OPT_CLIP:
			o.clip = cli_double("--clip", optarg, CLIP_MIN,
			    CLIP_MAX);
			o.has_clip = 1;
			break;
		case OPT_COUNT_PUBLIC:
			o.count_public = (uint64_t)cli_ll("--count-public",
			    optarg, 0, INT64_MAX);
			o.has_count = 1;
			break;
		case OPT_DATASET:
			o.dataset = optarg;
			if (ledger_check_dataset(optarg) != NULL)
				cli_usage_error("invalid --dataset '%s': %s",
				    optarg, ledger_check_dataset(optarg));
			break;
		case OPT_LEVEL:
			o.level = cli_level_arg(optarg);
			break;
		case OPT_MEAN:
			if (strcmp(optarg, "released") == 0) {
				o.mean = MEAN_RELEASED;
			} else if (strcmp(optarg, "zero") == 0) {
				o.mean = MEAN_ZERO;
			} else if (*optarg == '\0') {
				cli_usage_error("invalid --mean '': expected "
				    "released, zero or a file");
			} else {
				o.mean = MEAN_FILE;
				o.mean_file = optarg;
			}
			break;
		case OPT_NEIGHBOURS:
			o.relation = cli_choice("--neighbours", optarg, rels) ==
			    0 ? LEDGER_ADD_REMOVE : LEDGER_REPLACE_ONE;
			break;
		case OPT_SELECT_ON:
			o.select_on = optarg;
			break;
		case OPT_SIGMA:
			o.sigma = cli_double("--sigma", optarg, 0, SIGMA_MAX);
			if (o.sigma != 0 && o.sigma < SIGMA_MIN)
				cli_usage_error("invalid --sigma '%s': 0 or at "
				    "least %g", optarg, SIGMA_MIN);
			o.has_sigma = 1;
			break;
		case OPT_SPLIT:
			parse_split(&o, optarg);
			break;
		case OPT_SUBSPACES:
			parse_subspaces(&o, optarg);
			break;
		case OPT_TENSOR:
			if (ts_check_name(optarg) != NULL)
				cli_usage_error("invalid --tensor '%s': %s",
				    optarg, ts_check_name(optarg));
			o.tensor = optarg;
			break;
		case OPT_UNSAFE:
			(void)cli_choice("--unsafe-test-miscalibrate", optarg,
			    unsafe);
			o.unsafe = 1;
			break;
		default:
			usage(EX_USAGE);
		}
	}
	argc -= optind;
	if (argc > 1)
		usage(EX_USAGE);
	cli_set_quiet(o.quiet);
	check_options(&o);

	/* Open everything before computing. */
	in = cli_open_in(argc == 1 ? av[optind] : NULL, &label);
	if (o.mean_file) {
		if (strcmp(o.mean_file, "-") == 0)
			cli_usage_error("--mean needs a file, not stdin");
		mfp = cli_open_in(o.mean_file, &mlabel);
		not_the_input(in, mfp, "--mean", o.mean_file);
	}
	if (o.select_on) {
		if (strcmp(o.select_on, "-") == 0)
			cli_usage_error("--select-on needs a file, not stdin");
		sfp = cli_open_in(o.select_on, &slabel);
		not_the_input(in, sfp, "--select-on", o.select_on);
		cli_warn("--select-on %s: the subspaces depend on this data, "
		    "which is declared public: it gets no privacy protection",
		    o.select_on);
	}
	ofp = cli_out_open(o.output, o.force);
	rng = dpcli_rng(o.seed, WORK_ITEM);
	if (o.has_sigma && o.sigma == 0)
		cli_warn("--sigma 0: no noise: the output is NOT private");
	if (o.unsafe)
		cli_warn("--unsafe-test-miscalibrate: each block is clipped "
		    "and calibrated on its own: the output is NOT private");
	r = cli_reader(in, label);

	/* The shape of X fixes the partition, drawn before any row is read
	 * (it depends on random bits only). */
	d = find_rows(r, label, o.tensor, &hdr);
	full = d;
	perm = cli_reallocarray(NULL, d, sizeof *perm);
	sizes = cli_reallocarray(NULL, d, sizeof *sizes);
	if (o.subspaces == SUB_NONE) {
		for (size_t j = 0; j < d; j++)
			perm[j] = j;
		sizes[0] = d;
	} else {
		if (o.seed != NULL &&
		    rng_new_seeded(&srng, dpcli_seed_arg(o.seed),
		    WORK_ITEM "/subspaces") != 0)
			cli_die(EX_OSERR, "out of memory");
		subspace_permute(srng ? srng : rng, d, perm);
		rng_free(srng);
	}
	if (o.subspaces == SUB_RANDOM) {
		if (o.m > d)
			cli_usage_error("invalid --subspaces '%s': %s has only "
			    "%zu features", o.subspaces_arg, o.tensor, d);
		nb = o.m;
		(void)subspace_equal_sizes(d, nb, sizes);
		subspace_sort_blocks(perm, sizes, nb);
	}
	if (o.subspaces == SUB_SELECT) {
		/* Any partition noises at most the whole triangle. */
		ncov = (uint64_t)d * (d + 1) / 2;
		maxk = d;
	} else {
		for (size_t i = 0; i < nb; i++) {
			ncov += (uint64_t)sizes[i] * (sizes[i] + 1) / 2;
			maxk = sizes[i] > maxk ? sizes[i] : maxk;
		}
	}
	if (o.audit && o.audit * (nb * (o.mean == MEAN_ZERO ? 2 : 3) + 1) >
	    TS_MAX_TENSORS)
		cli_usage_error("--audit-repeat %llu: the releases would need "
		    "more than %d tensors in one stream",
		    (unsigned long long)o.audit, TS_MAX_TENSORS);
	plan_noise(&pl, &o, d, ncov);

	if (mfp) {
		rm = cli_reader(mfp, mlabel);
		m0 = read_mean(rm, mlabel, d);
	}
	p.clip = o.has_clip ? o.clip : 0;
	p.shrink = 1 - (double)(d + 8) * 0x1p-52;
	p.m0 = m0;
	if (o.unsafe) {
		size_t *bo = cli_reallocarray(NULL, d, sizeof *bo), off = 0;
		for (size_t i = 0; i < nb; off += sizes[i++])
			for (size_t j = 0; j < sizes[i]; j++)
				bo[perm[off + j]] = i;
		p.block_of = bo;
		p.nb = nb;
	}
	a.d = d;
	a.S = cli_calloc(d * d, sizeof *a.S);
	if (o.mean == MEAN_RELEASED)
		a.s = cli_calloc(d, sizeof *a.s);

	c.o = &o;
	c.d = d;
	c.a = &a;
	c.pl = &pl;
	c.m0 = m0;
	c.perm = perm;
	c.sizes = sizes;
	c.nb = nb;
	c.centred = o.mean != MEAN_ZERO;
	c.dr = &dr;
	c.seed = o.seed;
	if (o.seed)
		c.seed_value = dpcli_seed_arg(o.seed);
	{
		long np = sysconf(_SC_NPROCESSORS_ONLN);
		c.threads = np < 1 ? 1 : np > MAX_THREADS ? MAX_THREADS :
		    (int)np;
	}
	snprintf(c.item, sizeof c.item, "%s", WORK_ITEM);
	if (pl.noisy) {
		dr.sum = cli_reallocarray(NULL, d, sizeof *dr.sum);
		if (o.subspaces == SUB_SELECT && !sfp) {
			early.sizes = &full;
			early.nb = 1;
		} else if (o.subspaces != SUB_SELECT) {
			early.sizes = sizes;
			early.nb = nb;
		}
		draws_reserve(&dr, early.sizes, early.nb);
	}
	/* The noise of a single release does not depend on the data: it is
	 * drawn on a core that BLAS leaves free while the rows are
	 * accumulated (else after, by all cores; the draws, and so the
	 * output, are the same either way). */
	early_on = pl.noisy && !o.audit && la_blas_threads() < c.threads;
	if (early_on) {
		early.c = &c;
		early.rng = rng;
		early.dr = &dr;
		early_started = pthread_create(&early_th, NULL, draw_early,
		    &early) == 0;
		if (!early_started)
			draw_early(&early);
	}
	accumulate(r, &hdr, &p, &a, "rows");
	tensor_free(&hdr);
	drain(r);
	cli_progress_done();
	if (o.has_count && a.n != o.count_public)
		cli_die(EX_DATAERR, "%s: tensor '%s' does not have the "
		    "--count-public %llu rows", label, o.tensor,
		    (unsigned long long)o.count_public);
	if (sfp) {
		rs = cli_reader(sfp, slabel);
		cov_pub = public_cov(rs, slabel, &o, d, m0, &a.syrk_secs);
	}
	t_read = now();
	if (early_started)
		pthread_join(early_th, NULL);
	if (early_on)
		check_draws(&dr);
	/* Only with --sigma 0 is the count of bad rows shown: otherwise it
	 * is a statistic of the private data. */
	if (!pl.noisy && a.nonfinite)
		cli_warn("%llu rows with non-finite values were taken as zero "
		    "rows", (unsigned long long)a.nonfinite);
	dataset = dpcli_dataset(ts_reader_meta(r), o.dataset, label);

	c.cov_pub = cov_pub;
	c.w = cli_writer(ofp, o.level);
	c.blk = cli_reallocarray(NULL, maxk * maxk, sizeof *c.blk);
	c.mean = cli_reallocarray(NULL, d, sizeof *c.mean);
	if (o.subspaces == SUB_SELECT) {
		size_t *id = cli_reallocarray(NULL, d, sizeof *id);
		for (size_t j = 0; j < d; j++)
			id[j] = j;
		c.ident = id;
		c.idx = cli_reallocarray(NULL, d, sizeof *c.idx);
		c.bsz = cli_reallocarray(NULL, d, sizeof *c.bsz);
		if (cov_pub == NULL)
			c.full = cli_reallocarray(NULL, d * d, sizeof *c.full);
	}
	if (!o.audit) {
		release(&c, rng, 0, early_on);
	} else {
		for (uint64_t i = 0; i < o.audit; i++) {
			struct rng *ri = rng;

			snprintf(c.item, sizeof c.item, "%s/audit/%llu",
			    WORK_ITEM, (unsigned long long)i);
			if (o.seed && rng_new_seeded(&ri, c.seed_value,
			    c.item) != 0)
				cli_die(EX_OSERR, "out of memory");
			release(&c, ri, i, 0);
			if (ri != rng)
				rng_free(ri);
			cli_progress("releases", i + 1, o.audit);
		}
		cli_progress_done();
	}
	t_rel = now();

	/* The stream metadata: ledgers of every input, the release, the
	 * provenance; written last, after the tensors. */
	cli_inherit(&meta, ts_reader_meta(r), label);
	cli_prov_input(&prov, nin++, label, ts_reader_digest(r));
	if (rm) {
		inherit_side(&meta, ts_reader_meta(rm), mlabel);
		cli_prov_input(&prov, nin++, mlabel, ts_reader_digest(rm));
	}
	if (rs) {
		inherit_side(&meta, ts_reader_meta(rs), slabel);
		cli_prov_input(&prov, nin++, slabel, ts_reader_digest(rs));
	}
	/* Every other dataset whose rows are in X is now aggregated
	 * without protection. */
	for (size_t i = 0; i < meta.n; i++) {
		const char *k = meta.kv[i].key;
		if (strncmp(k, "dp.raw.", 7) == 0 && strcmp(k + 7, dataset) != 0
		    && ledger_mark_raw(&meta, k + 7, LEDGER_AGGREGATE, err,
		    sizeof err) != 0)
			cli_die(EX_DATAERR, "%s: %s", label, err);
	}
	if (pl.noisy) {
		record_release(&meta, rng, dataset, &pl, &o);
	} else if (ledger_mark_raw(&meta, dataset, LEDGER_AGGREGATE, err,
	    sizeof err) != 0) {
		cli_die(EX_DATAERR, "%s: %s", label, err);
	}
	if (o.audit && ts_meta_setf(&meta, "dp.audit", "%llu",
	    (unsigned long long)o.audit) != 0)
		cli_die(EX_OSERR, "out of memory");
	cli_meta_set(&meta, "cov.subspaces", o.subspaces_arg ?
	    o.subspaces_arg : "none");
	if (o.subspaces == SUB_SELECT) {
		char *s = cli_reallocarray(NULL, d, 12), *q = s;
		for (size_t j = 0; j < d; j++)
			q += sprintf(q, "%s%zu", j ? "," : "", perm[j]);
		cli_meta_set(&meta, "subspace.order", s);
		free(s);
	}
	cli_prov(&meta);
	if (ts_meta_merge(&meta, &prov, "", NULL) != 0)
		cli_die(EX_OSERR, "out of memory");
	if ((rc = ts_write_meta(c.w, &meta)) != 0 ||
	    (rc = ts_writer_finish(c.w)) != 0)
		cli_wdie(c.w, rc);
	ts_writer_close(c.w);
	if (o.verbose) {
		double gf = (double)a.n * (double)d * (double)d /
		    fmax(a.syrk_secs, 1e-9) / 1e9;
		fprintf(stderr, "%s: %llu rows x %zu features: read and "
		    "accumulate %.3f s (syrk %.3f s, %.2f GFLOP/s)\n",
		    cli_prog(), (unsigned long long)a.n, d, t_read - t_start,
		    a.syrk_secs, gf);
		if (pl.noisy)
			fprintf(stderr, "%s: noise multiplier %.6g, sd %.6g on "
			    "the second moments (sensitivity %.6g)\n",
			    cli_prog(), 1 / pl.mu, pl.sigma[P_COV],
			    pl.sens[P_COV]);
		fprintf(stderr, "%s: noise, post-processing and output "
		    "%.3f s\n", cli_prog(), t_rel - t_read);
	}
	ts_meta_free(&meta);
	ts_meta_free(&prov);
	ts_reader_close(r);
	ts_reader_close(rm);
	ts_reader_close(rs);
	cli_close_in(in);
	if (mfp)
		cli_close_in(mfp);
	if (sfp)
		cli_close_in(sfp);
	rng_free(rng);
	free(a.S);
	free(a.s);
	free(m0);
	free(cov_pub);
	free(perm);
	free(sizes);
	free(c.blk);
	free(c.mean);
	free(c.idx);
	free(c.bsz);
	free(c.full);
	free((void *)(uintptr_t)c.ident);
	free(dr.sum);
	free(dr.cov);
	free((void *)(uintptr_t)p.block_of);
	free(av);
	cli_out_commit();
	return 0;
}
