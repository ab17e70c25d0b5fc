/*
 * covest: estimate covariance matrices with differential privacy.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "covnoise.h"
#include "dpcli.h"
#include "fpsum.h"
#include "jgauss.h"
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
#define CHUNK_FIRST 256			/* rows of the first chunk (see accumulate) */
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

enum { SUB_NONE, SUB_RANDOM, SUB_SELECT, SUB_FROM };
enum { MEAN_RELEASED, MEAN_ZERO, MEAN_FILE };
enum { CAL_RDP, CAL_AGM };

enum {
	OPT_ASSUME_RAW = 256, OPT_AUDIT, OPT_CALIBRATION, OPT_CLIP, OPT_COUNT_PUBLIC,
	OPT_DATASET, OPT_LEVEL, OPT_MEAN, OPT_NEIGHBOURS, OPT_SELECT_ON,
	OPT_SIGMA, OPT_SPLIT, OPT_SUBSPACES, OPT_TENSOR, OPT_UNSAFE
};

struct opts {
	const char *output, *level, *seed, *tensor, *dataset, *select_on;
	const char *mean_file, *subspaces_arg, *from_file;
	int force, quiet, verbose, relation, mean, subspaces, calibration;
	int assume_raw;
	int has_eps, has_delta, has_sigma, has_clip, has_split, has_cal;
	int has_count, has_relation, unsafe, has_part_seed;
	uint64_t part_seed;		/* --subspaces random:M:SEED */
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
	double rows_bound;		/* public bound on the rows summed */
	double fp_margin;		/* relative float margin (fpsum.h) */
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
	size_t maxk;			/* ... its size */
	double *S_spare;		/* S, when the release may overwrite it */
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
	    "              [--assume-raw] [--audit-repeat n] "
	    "[--calibration method]\n"
	    "              [--clip bound] [--count-public n] [--dataset name]\n"
	    "              [--level level] [--mean how] [--neighbours relation]\n"
	    "              [--select-on file]"
	    " [--sigma multiplier] [--split weights]\n"
	    "              [--subspaces how]"
	    " [--tensor name] [file]\n", fp);
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
		    "      --assume-raw       the input, of unknown provenance (tns from-csv,\n"
		    "                         from-npy), holds raw records of --dataset\n"
		    "      --audit-repeat N   N independent releases (tests "
		    "only)\n"
		    "      --calibration M    rdp (default) or agm: how "
		    "--epsilon sets the noise\n"
		    "      --clip C           scale rows of L2 norm above C "
		    "down to C (required)\n"
		    "      --count-public N   the row count is public and is N "
		    "(replace-one)\n"
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
		    "      --subspaces HOW    none (default), random:M[:SEED] "
		    "(SEED: a public\n"
		    "                         partition), from:FILE (the "
		    "partition of a covest\n"
		    "                         stream) or select[:K]\n"
		    "      --tensor NAME      the rows (default X)\n", fp);
	exit(status);
}

/* ---- options ---- */

/* An unsigned decimal integer filling [p, end), or -1 (no sign, no
 * space, at most UINT64_MAX). */
static int
parse_u64(const char *p, const char *end, uint64_t *v)
{
	*v = 0;
	if (p == end)
		return -1;
	for (; p < end; p++) {
		if (*p < '0' || *p > '9' || *v > (UINT64_MAX - (uint64_t)(*p -
		    '0')) / 10)
			return -1;
		*v = *v * 10 + (uint64_t)(*p - '0');
	}
	return 0;
}

static void
parse_subspaces(struct opts *o, const char *arg)
{
	const char *colon = strchr(arg, ':');

	o->subspaces_arg = arg;
	o->has_part_seed = 0;
	o->from_file = NULL;
	if (strcmp(arg, "none") == 0) {
		o->subspaces = SUB_NONE;
	} else if (strncmp(arg, "random:", 7) == 0) {
		const char *m = arg + 7, *c2 = strchr(m, ':');
		const char *mend = c2 ? c2 : m + strlen(m);
		uint64_t v;

		o->subspaces = SUB_RANDOM;
		if (parse_u64(m, mend, &v) != 0 || v < 1 || v > MAX_FEATURES)
			cli_usage_error("invalid --subspaces '%s': M must be an "
			    "integer from 1 to %d", arg, MAX_FEATURES);
		o->m = (size_t)v;
		if (c2) {
			if (parse_u64(c2 + 1, c2 + 1 + strlen(c2 + 1),
			    &o->part_seed) != 0)
				cli_usage_error("invalid --subspaces '%s': SEED "
				    "must be an unsigned 64-bit integer", arg);
			o->has_part_seed = 1;
		}
	} else if (strncmp(arg, "from:", 5) == 0) {
		o->subspaces = SUB_FROM;
		o->from_file = arg + 5;
		if (*o->from_file == '\0' || strcmp(o->from_file, "-") == 0)
			cli_usage_error("invalid --subspaces '%s': from: needs a "
			    "file, not stdin", arg);
	} else if (strcmp(arg, "select") == 0 ||
	    (colon && colon - arg == 6 && strncmp(arg, "select", 6) == 0)) {
		o->subspaces = SUB_SELECT;
		o->maxk = colon ? (size_t)cli_ll("--subspaces select:K",
		    colon + 1, 1, MAX_FEATURES) : 0;
	} else {
		cli_usage_error("invalid --subspaces '%s': expected none, "
		    "random:M[:SEED], from:FILE or select[:K]", arg);
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
	/*
	 * A public count is exact: under add/remove neighbours the count is
	 * private (one record more changes it), so releasing it would be no
	 * DP release.  It is sound under replace-one neighbours, which keep
	 * the size: --count-public means replace-one, with the
	 * sensitivities of plan_noise (sqrt(2) C^2 and 2 C).
	 */
	if (o->has_count) {
		if (o->has_relation && o->relation == LEDGER_ADD_REMOVE)
			cli_usage_error("--count-public releases the exact count, "
			    "which add/remove neighbours keep private: it implies "
			    "--neighbours replace-one");
		o->relation = LEDGER_REPLACE_ONE;
	}
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

/* The L2 norm of x[0..d-1] by scaling (no overflow nor underflow in
 * the squares), for rows whose plain sum of squares is out of range. */
static double
scaled_norm(const double *x, size_t d)
{
	double sc = 0, ss = 0;

	for (size_t j = 0; j < d; j++)
		sc = fabs(x[j]) > sc ? fabs(x[j]) : sc;
	if (sc == 0)
		return 0;
	for (size_t j = 0; j < d; j++)
		ss += (x[j] / sc) * (x[j] / sc);
	return sc * sqrt(ss);
}

/* Prepare one row in place: a non-finite row becomes the zero row
 * (@return 1), else it is centred on the public mean and clipped. */
static int
prep_row(double *x, size_t d, const struct prep *p)
{
	double s0 = 0, s1 = 0, s2 = 0, s3 = 0, ss, norm;
	size_t j;

	if (p->m0)
		for (j = 0; j < d; j++)
			x[j] -= p->m0[j];
	/* One pass: the sum of squares, in four independent sums (so that
	 * it vectorises), is not finite if a value is not. */
	for (j = 0; j + 4 <= d; j += 4) {
		s0 += x[j] * x[j];
		s1 += x[j + 1] * x[j + 1];
		s2 += x[j + 2] * x[j + 2];
		s3 += x[j + 3] * x[j + 3];
	}
	for (; j < d; j++)
		s0 += x[j] * x[j];
	ss = (s0 + s1) + (s2 + s3);
	if (!isfinite(ss))
		for (j = 0; j < d; j++)
			if (!isfinite(x[j])) {
				memset(x, 0, d * sizeof *x);
				return 1;
			}
	if (p->clip == 0)
		return 0;
	if (p->block_of == NULL) {
		/*
		 * The computed norm is within a relative (d + 8) 2^-53 of the
		 * true one: each square and each of the at most d/4 + 5
		 * additions of non-negative terms on its way to the sum errs
		 * by a relative 2^-53, the root by less.  A sum of squares below 2^-900
		 * (where squares may have underflowed) or above the range
		 * takes the scaled computation, which has the same bound.
		 * Rows are clipped to C times 1 less twice that, so that no
		 * clipped row, nor any row left as it is, can exceed C.
		 */
		norm = isfinite(ss) && ss >= 0x1p-900 ? sqrt(ss) :
		    scaled_norm(x, d);
		if (norm > p->clip * p->shrink) {
			double f = p->clip * p->shrink / norm;
			for (j = 0; j < d; j++)
				x[j] *= f;
		}
		return 0;
	}
	/* The unsafe test variant: each block clipped on its own, as a
	 * per-subspace mechanism with parallel composition would. */
	for (size_t b = 0; b < p->nb; b++)
		p->bscale[b] = p->bss[b] = 0;
	for (j = 0; j < d; j++)
		p->bscale[p->block_of[j]] = fmax(p->bscale[p->block_of[j]],
		    fabs(x[j]));
	for (j = 0; j < d; j++) {
		double sc = p->bscale[p->block_of[j]];
		if (sc > 0)
			p->bss[p->block_of[j]] += (x[j] / sc) * (x[j] / sc);
	}
	for (size_t b = 0; b < p->nb; b++) {
		norm = p->bscale[b] * sqrt(p->bss[b]);
		p->bss[b] = norm > p->clip * p->shrink ? p->clip * p->shrink /
		    norm : 1;
	}
	for (j = 0; j < d; j++)
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

/* An array of n doubles for the large matrices, in transparent huge
 * pages where the system allows them (fewer page faults and TLB misses in
 * SYRK).  Free it with free(3). */
static double *
big_array(size_t n)
{
	size_t bytes, align = (size_t)2 << 20;
	void *p;

	if (n > SIZE_MAX / sizeof(double) - align)
		cli_die(EX_OSERR, "out of memory");
	bytes = n * sizeof(double);
	if (posix_memalign(&p, align, bytes ? bytes : 1) != 0)
		cli_die(EX_OSERR, "out of memory");
#ifdef MADV_HUGEPAGE
	(void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
	return p;
}

/* A zeroed d x d matrix, its pages written (not merely mapped) here: a
 * calloc'ed page that SYRK first reads maps the shared zero page, and its
 * first write then copies it and flushes the TLB of every processor the
 * threads ran on, which costs the accumulation several per cent. */
static double *
zeroed_square(size_t d)
{
	double *m = big_array(d * d);

	memset(m, 0, d * d * sizeof *m);
	return m;
}

/* A chunk of rows, read and prepared by one thread while the previous
 * chunk is accumulated by another. */
struct chunk {
	struct ts_reader *r;
	const struct prep *p;
	int dtype;
	size_t d, rows;			/* rows: capacity */
	size_t want;			/* rows to read this time */
	void *raw;
	double *x;
	double *s;			/* the running sum of rows, or NULL */
	float *row;			/* f32: one row of scratch */
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
	while ((size_t)ch->got < ch->want) {
		int64_t k = ts_read_rows(ch->r, (char *)ch->raw + (size_t)ch->got *
		    d * ts_dtype_size(ch->dtype), ch->want - (size_t)ch->got);
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
	/* f32 rows are widened in place, from the last: the doubles of row i
	 * overlap the floats of rows i and up only, and a row goes through
	 * scratch, so that the conversion loop vectorises. */
	if (ch->dtype == TS_F32)
		for (size_t i = (size_t)ch->got; i-- > 0;) {
			double *x = ch->x + i * d;

			memcpy(ch->row, (float *)ch->raw + i * d,
			    d * sizeof *ch->row);
			for (size_t j = 0; j < d; j++)
				x[j] = ch->row[j];
		}
	/* The sum of rows is this thread's too: the chunks are read one
	 * after another, in order, so the sum is the same as a serial one. */
	for (size_t i = 0; i < (size_t)ch->got; i++) {
		double *x = ch->x + i * d;

		ch->nonfinite += (uint64_t)prep_row(x, d, &p);
		if (ch->s)
			for (size_t j = 0; j < d; j++)
				ch->s[j] += x[j];
	}
	return NULL;
}

/*
 * Stream the rows of the current tensor into a: each chunk is read
 * (decompressed, converted, clipped, summed) in a second thread while SYRK
 * accumulates the previous one.  The first chunk is small and the next
 * ones double up to the full size, so that SYRK starts early instead of
 * waiting for a whole chunk to be read.
 */
static void
accumulate(struct ts_reader *r, const struct tensor *hdr, const struct prep *p,
    struct acc *a, const char *what)
{
	size_t d = a->d, rows = CHUNK_ELEMS / d, want;
	uint64_t total = hdr->dims[0] == TS_UNKNOWN_ROWS ? 0 : hdr->dims[0];
	struct chunk ch[2];
	int cur = 0;

	if (rows < CHUNK_MIN)
		rows = CHUNK_MIN;
	if (rows > CHUNK_MAX)
		rows = CHUNK_MAX;
	want = rows < CHUNK_FIRST ? rows : CHUNK_FIRST;
	for (int i = 0; i < 2; i++) {
		ch[i] = (struct chunk){ .r = r, .p = p, .dtype = hdr->dtype,
		    .d = d, .rows = rows, .s = a->s };
		/* f32 rows are read into the first half of the buffer and
		 * widened in place. */
		ch[i].x = big_array(rows * d);
		ch[i].raw = ch[i].x;
		if (hdr->dtype == TS_F32)
			ch[i].row = cli_reallocarray(NULL, d,
			    sizeof *ch[i].row);
		if (p->block_of) {
			ch[i].bscale = cli_reallocarray(NULL, p->nb,
			    sizeof *ch[i].bscale);
			ch[i].bss = cli_reallocarray(NULL, p->nb,
			    sizeof *ch[i].bss);
		}
	}
	ch[cur].want = want;
	read_chunk(&ch[cur]);
	while (ch[cur].got > 0) {
		struct chunk *c = &ch[cur];
		size_t k = (size_t)c->got;
		pthread_t th;
		int async;
		double t0;

		want = 2 * want < rows ? 2 * want : rows;
		ch[1 - cur].want = want;
		async = pthread_create(&th, NULL, read_chunk, &ch[1 - cur]) == 0;
		t0 = cli_now();
		la_syrk_acc(k, d, c->x, a->S);
		a->syrk_secs += cli_now() - t0;
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
		free(ch[i].row);
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

/* The block number of a tensor named subspace/<i> (a decimal <i>, no
 * leading zero), or -1. */
static long long
subspace_id(const char *name)
{
	const char *p = name + 9;
	long long v = 0;

	if (strncmp(name, "subspace/", 9) != 0 || *p == '\0' ||
	    (*p == '0' && p[1] != '\0'))
		return -1;
	for (; *p; p++) {
		if (*p < '0' || *p > '9' || v > MAX_FEATURES)
			return -1;
		v = v * 10 + (*p - '0');
	}
	return v;
}

/*
 * The partition of --subspaces from:FILE: the tensors subspace/0 ..
 * subspace/<nb-1> of a covest or psdshrink stream, each an i64 vector of
 * distinct columns of X, the blocks disjoint.  The blocks go into perm
 * and sizes in their order, each with its features in the order given;
 * the features in no block follow them in perm (they are not released).
 * @return nb.
 */
static size_t
read_partition(struct ts_reader *r, const char *label, size_t d, size_t *perm,
    size_t *sizes)
{
	int64_t **blk = cli_calloc(d, sizeof *blk);
	size_t *len = cli_calloc(d, sizeof *len), nb = 0, o = 0;
	unsigned char *used = cli_calloc(d, 1);
	struct tensor t;
	int rc;

	while ((rc = ts_read_next(r, &t)) == 1) {
		long long id;
		uint64_t k;

		if (strncmp(t.name, "subspace/", 9) != 0) {
			tensor_free(&t);
			continue;
		}
		if ((id = subspace_id(t.name)) < 0)
			cli_die(EX_DATAERR, "%s: tensor '%s': expected "
			    "subspace/<i> with a decimal <i>", label, t.name);
		if ((size_t)id >= d)
			cli_die(EX_DATAERR, "%s: tensor '%s': more blocks than "
			    "the %zu columns of X", label, t.name, d);
		if (t.dtype != TS_I64 || t.ndim != 1)
			cli_die(EX_DATAERR, "%s: tensor '%s' is %s with %d "
			    "dimensions: expected an i64 vector of columns",
			    label, t.name, ts_dtype_name(t.dtype), t.ndim);
		if (t.dims[0] != TS_UNKNOWN_ROWS && t.dims[0] > d)
			cli_die(EX_DATAERR, "%s: tensor '%s' has %llu features, "
			    "X only %zu columns", label, t.name,
			    (unsigned long long)t.dims[0], d);
		if ((rc = ts_read_data(r, &t)) != 0)
			cli_rdie(r, rc);
		k = t.dims[0];
		if (k == 0 || k > d)
			cli_die(EX_DATAERR, "%s: tensor '%s' has %llu features: "
			    "expected 1 to %zu", label, t.name,
			    (unsigned long long)k, d);
		if (blk[id] != NULL)
			cli_die(EX_DATAERR, "%s: tensor '%s' appears twice",
			    label, t.name);
		blk[id] = cli_reallocarray(NULL, (size_t)k, sizeof **blk);
		memcpy(blk[id], t.data, (size_t)k * sizeof **blk);
		len[id] = (size_t)k;
		if ((size_t)id >= nb)
			nb = (size_t)id + 1;
		tensor_free(&t);
	}
	if (rc < 0)
		cli_rdie(r, rc);
	if (nb == 0)
		cli_die(EX_DATAERR, "%s: no subspace/<i> tensor (expected a "
		    "covest or psdshrink stream)", label);
	for (size_t i = 0; i < nb; i++) {
		if (blk[i] == NULL)
			cli_die(EX_DATAERR, "%s: no tensor 'subspace/%zu' (the "
			    "blocks are numbered from 0 without gaps)", label, i);
		for (size_t j = 0; j < len[i]; j++) {
			int64_t f = blk[i][j];

			if (f < 0 || (uint64_t)f >= d)
				cli_die(EX_DATAERR, "%s: subspace/%zu names "
				    "feature %lld, but X has %zu columns", label,
				    i, (long long)f, d);
			if (used[f])
				cli_die(EX_DATAERR, "%s: feature %lld is in two "
				    "subspaces", label, (long long)f);
			used[f] = 1;
			perm[o++] = (size_t)f;
		}
		sizes[i] = len[i];
		free(blk[i]);
	}
	for (size_t j = 0; j < d; j++)
		if (!used[j])
			perm[o++] = j;
	free(blk);
	free(len);
	free(used);
	return nb;
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
	a.S = zeroed_square(d);
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

/* The smallest noise multiplier whose Gaussian RDP curve at the default
 * orders converts to at most eps at delta (what rdp-account reports). */
static double
calibrate_rdp(double eps, double delta)
{
	double z;

	if (jgauss_calibrate_rdp(eps, delta, 1, &z) != 0)
		cli_usage_error("--epsilon %g --delta %g needs a noise "
		    "multiplier above %g", eps, delta, z);
	return z;
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
	struct jgauss_part jp[NPARTS];
	int rel[NPARTS];
	double wsum = 0, c2 = o->clip * o->clip;
	size_t bad;

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
	/*
	 * Floating point (fpsum.h; Casacuberta et al. 2022): the second
	 * moments are sums of the terms x_j x_k (one rounding each) of the
	 * clipped rows, ||x x^T|| <= C^2, in an order SYRK leaves open, and
	 * the sum adds the rows one by one; with at most n rows, neighbouring
	 * computed sums differ by up to e C^2 and e C more than the exact
	 * ones, e = 2 n gamma_(n + 2).  n is a public bound, never the count
	 * of the rows (private under add/remove): --count-public, else
	 * FPSUM_MAX_ROWS (more rows are refused).  The count is an exact
	 * integer.
	 */
	pl->rows_bound = o->has_count ? (double)o->count_public :
	    (double)FPSUM_MAX_ROWS;
	pl->fp_margin = fpsum_margin(pl->rows_bound, 2, 0x1p-53);
	if (!isfinite(pl->fp_margin))
		cli_usage_error("--count-public %llu: too many rows for the "
		    "floating-point error bound (at most %llu)",
		    (unsigned long long)o->count_public,
		    (unsigned long long)(FPSUM_MAX_TERMS - 2));
	pl->delta2[P_COV] = nextafter(pl->delta2[P_COV] + pl->fp_margin * c2,
	    INFINITY);
	pl->delta2[P_SUM] = nextafter(pl->delta2[P_SUM] + pl->fp_margin *
	    o->clip, INFINITY);
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
	for (int i = 0; i < NPARTS; i++)
		jp[i] = (struct jgauss_part){ .w = pl->w[i],
		    .delta2 = pl->delta2[i], .nent = pl->nent[i] };
	/* The recorded curve must not exceed what was asked for, rounding
	 * included (jgauss_plan inflates z until it does not). */
	if (jgauss_plan(jp, NPARTS, pl->z, o->has_sigma ||
	    o->calibration == CAL_AGM ? JGAUSS_MU : JGAUSS_RDP, o->epsilon,
	    o->delta, 1, &pl->mu, &bad) != 0) {
		if (bad >= NPARTS)
			cli_die(EX_SOFTWARE, "cannot convert the RDP curve");
		cli_usage_error("the noise of the %s is out of range (check "
		    "--clip and --sigma)", part_name[bad]);
	}
	for (int i = 0; i < NPARTS; i++) {
		pl->sigma[i] = jp[i].sigma;
		pl->grid[i] = jp[i].grid;
		pl->sens[i] = jp[i].sens;
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

/*
 * The noise of a release as jobs that threads claim one at a time.  Job 0
 * draws from the release's generator, in this order, the count and the
 * sum (when head is set) and every block of at most NOISE_CHUNK values.
 * Each other job draws a run of rows of a larger block, about NOISE_CHUNK
 * values, with its own generator (seeded: the work item "<release item>/
 * cov/<block>/<run>"; else fresh from the system).  So the draws, and a
 * seeded output, do not depend on which thread runs which job, nor on how
 * many threads there are.  No job touches data: they may run while the
 * rows are being read.
 */
struct njob {
	size_t block, run;
	int64_t *dst;			/* run jobs */
	size_t n;
	int rc, part, rng_rc;		/* the job's failure */
};

struct noise {
	const struct ctx *c;
	struct rng *rng;		/* the release's generator */
	struct draws *dr;
	int head;			/* job 0 draws the count and sum */
	const size_t *sizes;		/* the blocks */
	size_t nb;
	struct njob *jobs;
	size_t njobs;
	atomic_size_t next;		/* the next job to claim */
	pthread_t th[MAX_THREADS];
	int started[MAX_THREADS];
};

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

/* Cut the noise of a release into jobs (dr->cov must have room). */
static void
noise_plan(struct noise *nz, const struct ctx *c, struct rng *rng,
    struct draws *dr, int head, const size_t *sizes, size_t nb)
{
	size_t njobs = 1, off = 0;

	memset(nz, 0, sizeof *nz);
	nz->c = c;
	nz->rng = rng;
	nz->dr = dr;
	nz->head = head;
	nz->sizes = sizes;
	nz->nb = nb;
	for (size_t i = 0; i < nb; i++) {
		size_t ne = sizes[i] * (sizes[i] + 1) / 2;
		if (ne > NOISE_CHUNK)
			njobs += ne / NOISE_CHUNK + 1;
	}
	nz->jobs = cli_reallocarray(NULL, njobs, sizeof *nz->jobs);
	memset(nz->jobs, 0, njobs * sizeof *nz->jobs);
	nz->njobs = 1;
	for (size_t i = 0; i < nb; i++) {
		size_t k = sizes[i], ne = k * (k + 1) / 2, a = 0, run = 0;

		if (ne <= NOISE_CHUNK) {
			off += ne;
			continue;
		}
		while (a < k) {
			struct njob *jb = &nz->jobs[nz->njobs++];
			size_t got = 0;

			while (a < k && got < NOISE_CHUNK)
				got += k - a++;
			*jb = (struct njob){ .block = i, .run = run++,
			    .dst = dr->cov + off, .n = got };
			off += got;
		}
	}
	atomic_init(&nz->next, 0);
}

static void
job_fail(struct njob *jb, int part, int rc)
{
	if (jb->rc == 0 && jb->rng_rc == 0) {
		jb->rc = rc;
		jb->part = part;
	}
}

/* Job 0: the release generator's draws, in order. */
static void
job_head(struct noise *nz, struct njob *jb)
{
	const struct plan *pl = nz->c->pl;
	struct draws *dr = nz->dr;
	double sigma = pl->sigma[P_COV];
	size_t off = 0;
	int rc;

	if (nz->head) {
		if (pl->w[P_CNT] > 0 && (rc = covnoise_draw(nz->rng,
		    pl->sigma[P_CNT], dr->cnt, 1)) != 0)
			job_fail(jb, P_CNT, rc);
		if (jb->rc == 0 && pl->w[P_SUM] > 0 &&
		    (rc = covnoise_draw(nz->rng, pl->sigma[P_SUM], dr->sum,
		    nz->c->d)) != 0)
			job_fail(jb, P_SUM, rc);
	}
	for (size_t i = 0; i < nz->nb && jb->rc == 0; i++) {
		size_t ne = nz->sizes[i] * (nz->sizes[i] + 1) / 2;

		if (ne <= NOISE_CHUNK && (rc = covnoise_draw(nz->rng, sigma,
		    dr->cov + off, ne)) != 0)
			job_fail(jb, P_COV, rc);
		off += ne;
	}
}

static void
job_run(struct noise *nz, struct njob *jb)
{
	const struct ctx *c = nz->c;
	struct rng *r;
	int rc;

	if (c->seed) {
		char item[128];

		snprintf(item, sizeof item, "%s/cov/%zu/%zu", c->item,
		    jb->block, jb->run);
		rc = rng_new_seeded(&r, c->seed_value, item);
	} else {
		rc = rng_new(&r);
	}
	if (rc != 0) {
		jb->rng_rc = rc;
		return;
	}
	if ((rc = covnoise_draw(r, c->pl->sigma[P_COV], jb->dst, jb->n)) != 0)
		job_fail(jb, P_COV, rc);
	rng_free(r);
}

static void *
noise_work(void *arg)
{
	struct noise *nz = arg;
	size_t j;

	while ((j = atomic_fetch_add(&nz->next, 1)) < nz->njobs) {
		if (j == 0)
			job_head(nz, &nz->jobs[0]);
		else
			job_run(nz, &nz->jobs[j]);
	}
	return NULL;
}

/* Start a worker in each slot from..threads-1 not started yet (slot 0 is
 * the calling thread's), as long as jobs are left. */
static void
noise_spawn(struct noise *nz, int from, int threads)
{
	for (int t = from; t < threads && t < MAX_THREADS; t++)
		if (!nz->started[t] && atomic_load(&nz->next) < nz->njobs)
			nz->started[t] = pthread_create(&nz->th[t], NULL,
			    noise_work, nz) == 0;
}

/* Run the remaining jobs with threads threads in all (this one included),
 * wait for every worker, and record the first failure in job order into
 * nz->dr (see check_draws). */
static void
noise_finish(struct noise *nz, int threads)
{
	struct draws *dr = nz->dr;

	noise_spawn(nz, 1, threads);
	noise_work(nz);
	for (int t = 0; t < MAX_THREADS; t++)
		if (nz->started[t])
			pthread_join(nz->th[t], NULL);
	for (size_t j = 0; j < nz->njobs; j++) {
		const struct njob *jb = &nz->jobs[j];

		if (dr->rc != 0 || dr->rng_rc != 0)
			break;
		if (jb->rng_rc != 0)
			dr->rng_rc = jb->rng_rc;
		else if (jb->rc != 0) {
			dr->rc = jb->rc;
			dr->part = jb->part;
		}
	}
	free(nz->jobs);
	nz->jobs = NULL;
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

/* Draw the noise of a release with threads threads, and check it. */
static void
draw_all(const struct ctx *c, struct rng *rng, struct draws *dr, int head,
    const size_t *sizes, size_t nb)
{
	struct noise nz;

	noise_plan(&nz, c, rng, dr, head, sizes, nb);
	noise_finish(&nz, c->threads);
	check_draws(dr);
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
 * draws start at *off. */
static void
noise_upper(const struct ctx *c, double *b, size_t k, size_t *off)
{
	if (c->pl->noisy)
		for (size_t a = 0; a < k; a++) {
			apply(c->pl, P_COV, b + a * k + a, k - a,
			    c->dr->cov + *off);
			*off += k - a;
		}
}

/* Copy the upper triangle of the k x k matrix b to its lower one, tile by
 * tile (column by column, every value would miss the cache). */
static void
mirror(size_t k, double *b)
{
	enum { T = 64 };

	for (size_t i0 = 0; i0 < k; i0 += T)
		for (size_t j0 = 0; j0 <= i0; j0 += T) {
			size_t i1 = i0 + T < k ? i0 + T : k;
			size_t j1 = j0 + T < k ? j0 + T : k;

			for (size_t i = i0; i < i1; i++)
				for (size_t j = j0; j < j1 && j < i; j++)
					b[i * k + j] = b[j * k + i];
		}
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

	/* The upper triangle (mirrored later): C is symmetric. */
	for (size_t i = 0; i < k; i++) {
		double mi = centre ? c->mean[ix[i]] : 0;

		for (size_t j = i; j < k; j++) {
			b[i * k + j] /= n;
			if (centre)
				b[i * k + j] -= mi * c->mean[ix[j]];
		}
	}
}

/* 1 if ix[0..k-1] is strictly increasing. */
static int
ascending(const size_t *ix, size_t k)
{
	for (size_t i = 1; i < k; i++)
		if (ix[i] <= ix[i - 1])
			return 0;
	return 1;
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

		int contig = ix[k - 1] >= ix[0] && ix[k - 1] - ix[0] == k - 1 &&
		    ascending(ix, k);
		double *bk;

		/* A single release of all features in order finishes S in
		 * place; else the block is copied out. */
		if (src == c->S_spare && contig && k == d) {
			bk = c->S_spare;
		} else {
			if (c->blk == NULL)
				c->blk = big_array(c->maxk * c->maxk);
			bk = c->blk;
			/* S holds its upper triangle only (ix is ascending,
			 * except as --subspaces from: gives it). */
			if (contig) {
				for (size_t a = 0; a < k; a++)
					memcpy(bk + a * k + a, src + ix[a] * d +
					    ix[a], (k - a) * sizeof *src);
			} else {
				for (size_t a = 0; a < k; a++)
					for (size_t b = a; b < k; b++)
						bk[a * k + b] = ix[a] <= ix[b] ?
						    src[ix[a] * d + ix[b]] :
						    src[ix[b] * d + ix[a]];
			}
		}
		if (!src_is_cov) {
			noise_upper(c, bk, k, &off);
			finish_cov(c, bk, ix, k, n);
		}
		mirror(k, bk);
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
		put_tensor(c, base, rep, TS_F64, 2, dims, bk, &cm);
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
 * this order (drawn already when drawn is set: see main); then
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

	/* With --select-on the blocks depend on the released count: their
	 * noise is drawn once they are known.  Else the blocks are known, or
	 * the whole matrix is noised (select). */
	if (pl->noisy && !drawn) {
		if (c->o->subspaces == SUB_SELECT && c->cov_pub)
			draw_all(c, rng, dr, 1, NULL, 0);
		else if (c->o->subspaces == SUB_SELECT)
			draw_all(c, rng, dr, 1, &full, 1);
		else
			draw_all(c, rng, dr, 1, c->sizes, c->nb);
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
		write_blocks(c, rep, c->perm, c->sizes, c->nb, a->S, 0, n);
	} else if (c->cov_pub) {
		size_t nb = select_blocks(c, c->cov_pub, n, 0);
		if (pl->noisy) {
			draws_reserve(dr, c->bsz, nb);
			draw_all(c, rng, dr, 0, c->bsz, nb);
		}
		write_blocks(c, rep, c->idx, c->bsz, nb, a->S, 0, n);
	} else {
		size_t nb, off = 0;

		/* The whole matrix is released (its sensitivity is the
		 * same as any block-diagonal part's); the blocks are chosen
		 * on it and the rest is dropped: post-processing. */
		memcpy(c->full, a->S, d * d * sizeof *c->full);
		noise_upper(c, c->full, d, &off);
		finish_cov(c, c->full, c->ident, d, n);
		mirror(d, c->full);
		nb = select_blocks(c, c->full, n, 1);
		write_blocks(c, rep, c->idx, c->bsz, nb, c->full, 1, n);
	}
}

/* ---- metadata ---- */

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
		dpcli_param(&e, sig[i], pl->sigma[i]);
		dpcli_param(&e, sen[i], pl->sens[i]);
		dpcli_param(&e, grd[i], pl->grid[i]);
		dpcli_param(&e, wgt[i], pl->w[i]);
	}
	dpcli_param(&e, "clip", o->clip);
	dpcli_param(&e, "noise_multiplier", 1 / pl->mu);
	dpcli_param(&e, "fp_margin", pl->fp_margin);
	dpcli_param(&e, "rows_bound", pl->rows_bound);
	if (o->audit)
		dpcli_param(&e, "audit_releases", reps);
	if (o->unsafe)
		dpcli_param(&e, "unsafe_test_per_block", 1);
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
		{ "assume-raw", no_argument, NULL, OPT_ASSUME_RAW },
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
	struct ts_reader *r, *rm = NULL, *rs = NULL, *rf = NULL;
	struct ts_meta meta = { 0 }, prov = { 0 };
	struct tensor hdr;
	struct acc a = { 0 };
	struct prep p = { 0 };
	struct plan pl;
	struct ctx c = { 0 };
	struct draws dr = { 0 };
	struct noise early;
	int early_on = 0;
	struct rng *rng, *srng = NULL;
	const char *label, *mlabel = NULL, *slabel = NULL, *flabel = NULL;
	const char *dataset;
	FILE *in, *mfp = NULL, *sfp = NULL, *ffp = NULL, *ofp;
	char **av;
	double *m0 = NULL, *cov_pub = NULL, t_start = cli_now(), t_read, t_rel;
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
			o.delta = dpcli_delta_arg("--delta", optarg);
			o.has_delta = 1;
			break;
		case 'e':
			o.epsilon = dpcli_epsilon_arg("--epsilon", optarg,
			    EPS_MAX);
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
		case OPT_ASSUME_RAW:
			o.assume_raw = 1;
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
			o.has_relation = 1;
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
	if (o.assume_raw)
		dpcli_assume_raw(o.dataset);
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
	if (o.from_file)
		ffp = cli_open_in(o.from_file, &flabel);
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
	} else if (o.subspaces == SUB_FROM) {
		rf = cli_reader(ffp, flabel);
		nb = read_partition(rf, flabel, d, perm, sizes);
	} else {
		/* A public partition seed (random:M:SEED) or --seed gives
		 * the same partition: the generator of the work item
		 * covest/subspaces. */
		if ((o.has_part_seed || o.seed != NULL) &&
		    rng_new_seeded(&srng, o.has_part_seed ? o.part_seed :
		    dpcli_seed_arg(o.seed), WORK_ITEM "/subspaces") != 0)
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
	a.S = zeroed_square(d);
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
	/*
	 * The noise of a single release does not depend on the data: when
	 * BLAS leaves a core free, its jobs start there while the rows are
	 * accumulated, and once they are, every core takes the jobs left
	 * (else it is all drawn after, by every core).  The draws, and so
	 * the output, are the same either way.
	 */
	if (pl.noisy) {
		const size_t *esz = NULL;
		size_t enb = 0;
		int bt = la_blas_threads();

		dr.sum = cli_reallocarray(NULL, d, sizeof *dr.sum);
		if (o.subspaces == SUB_SELECT && !sfp) {
			esz = &full;
			enb = 1;
		} else if (o.subspaces != SUB_SELECT) {
			esz = sizes;
			enb = nb;
		}
		draws_reserve(&dr, esz, enb);
		early_on = !o.audit && bt < c.threads;
		if (early_on) {
			/* One core for BLAS's threads, one for the reader. */
			int helpers = c.threads - bt - 1;

			noise_plan(&early, &c, rng, &dr, 1, esz, enb);
			noise_spawn(&early, 1, 1 + (helpers > 1 ? helpers : 1));
		}
	}
	accumulate(r, &hdr, &p, &a, "rows");
	tensor_free(&hdr);
	drain(r);
	cli_progress_done();
	if (o.has_count && a.n != o.count_public)
		cli_die(EX_DATAERR, "%s: tensor '%s' does not have the "
		    "--count-public %llu rows", label, o.tensor,
		    (unsigned long long)o.count_public);
	/* The float margin charged holds for at most rows_bound rows. */
	if (pl.noisy && (double)a.n > pl.rows_bound)
		cli_die(EX_DATAERR, "%s: tensor '%s' has more than %.0f rows, "
		    "the public bound of the floating-point error charged to "
		    "the sensitivity (declare the count with --count-public)",
		    label, o.tensor, pl.rows_bound);
	if (sfp) {
		rs = cli_reader(sfp, slabel);
		cov_pub = public_cov(rs, slabel, &o, d, m0, &a.syrk_secs);
	}
	t_read = cli_now();
	if (early_on) {
		noise_finish(&early, c.threads);
		check_draws(&dr);
	}
	/* Only with --sigma 0 is the count of bad rows shown: otherwise it
	 * is a statistic of the private data. */
	if (!pl.noisy && a.nonfinite)
		cli_warn("%llu rows with non-finite values were taken as zero "
		    "rows", (unsigned long long)a.nonfinite);
	dataset = dpcli_dataset(ts_reader_meta(r), o.dataset, label);

	c.cov_pub = cov_pub;
	c.w = cli_writer(ofp, o.level);
	c.maxk = maxk;
	/* Only a single release may overwrite S (select reads it again). */
	if (!o.audit && o.subspaces != SUB_SELECT)
		c.S_spare = a.S;
	c.mean = cli_reallocarray(NULL, d, sizeof *c.mean);
	if (o.subspaces == SUB_SELECT) {
		size_t *id = cli_reallocarray(NULL, d, sizeof *id);
		for (size_t j = 0; j < d; j++)
			id[j] = j;
		c.ident = id;
		c.idx = cli_reallocarray(NULL, d, sizeof *c.idx);
		c.bsz = cli_reallocarray(NULL, d, sizeof *c.bsz);
		if (cov_pub == NULL)
			c.full = big_array(d * d);
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
	t_rel = cli_now();

	/* The stream metadata: ledgers of every input, the release, the
	 * provenance; written last, after the tensors. */
	cli_inherit(&meta, ts_reader_meta(r), label);
	cli_prov_input(&prov, nin++, label, ts_reader_digest(r),
	    ts_reader_meta(r));
	if (rm) {
		dpcli_inherit_side(&meta, ts_reader_meta(rm), mlabel);
		cli_prov_input(&prov, nin++, mlabel, ts_reader_digest(rm),
		    ts_reader_meta(rm));
	}
	if (rs) {
		dpcli_inherit_side(&meta, ts_reader_meta(rs), slabel);
		cli_prov_input(&prov, nin++, slabel, ts_reader_digest(rs),
		    ts_reader_meta(rs));
	}
	/* The partition of from: may have been chosen on that stream's
	 * release (select): the output depends on it, so its ledger comes
	 * along (a release is composed once however many streams carry
	 * it). */
	if (rf) {
		dpcli_inherit_side(&meta, ts_reader_meta(rf), flabel);
		cli_prov_input(&prov, nin++, flabel, ts_reader_digest(rf),
		    ts_reader_meta(rf));
	}
	/* Every other dataset whose rows are in X is now aggregated
	 * without protection. */
	dpcli_aggregate_others(&meta, dataset, label);
	if (pl.noisy)
		record_release(&meta, rng, dataset, &pl, &o);
	else
		dpcli_not_private(&meta, dataset, label);
	dpcli_audit_mark(&meta, o.audit);
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
	ts_reader_close(rf);
	cli_close_in(in);
	if (mfp)
		cli_close_in(mfp);
	if (sfp)
		cli_close_in(sfp);
	if (ffp)
		cli_close_in(ffp);
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
