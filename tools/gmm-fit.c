/*
 * gmm-fit: fit Gaussian mixture models, with differential privacy, and
 * sample from them.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "dpcli.h"
#include "dpem.h"
#include "fpsum.h"
#include "gmm.h"
#include "gmmfit.h"
#include "gmmio.h"
#include "jgauss.h"
#include "la.h"
#include "labels.h"
#include "ledger.h"
#include "noise.h"
#include "rdp.h"
#include "tensor.h"
#include "tstream.h"

#define MAX_K GMMIO_MAX_K		/* --components */
#define MAX_FEATURES GMMIO_MAX_D	/* columns of X */
#define MAX_CLASSES GMMIO_MAX_CLASSES	/* --classes */
#define MAX_ITER 100000			/* --iters, --max-iter */
#define MAX_RESTARTS 1000
#define MAX_AUDIT 1000000
#define MAX_SAMPLE ((long long)INT32_MAX)	/* rows of gmm-fit sample */
#define SAMPLE_BLOCK 4096		/* rows written at once */
#define CLIP_MIN 1e-50
#define CLIP_MAX 1e50
#define SIGMA_MIN 1e-6
#define SIGMA_MAX 1e6
#define EPS_MAX 100
#define WORK_ITEM "gmm-fit"
#define UNSAFE_ENV "PRIVADA_TEST_UNSAFE"

enum {
	OPT_ASSUME_RAW = 256, OPT_AUDIT, OPT_BY_LABEL, OPT_CLASSES, OPT_CLIP, OPT_COVARIANCE,
	OPT_DATASET, OPT_INIT, OPT_INIT_MEANS, OPT_ITERS, OPT_LEVEL, OPT_MAX_ITER,
	OPT_MODEL, OPT_N, OPT_REG, OPT_RESTARTS, OPT_SIGMA, OPT_SPLIT,
	OPT_STATS, OPT_TOL, OPT_UNSAFE
};

struct opts {
	const char *output, *level, *seed, *dataset, *init_means;
	int force, quiet, verbose, by_label, cov, stats, unsafe, init_dp;
	int assume_raw;
	int has_eps, has_delta, has_sigma, has_clip, has_split, has_iters;
	int has_tol, has_max_iter, has_restarts, has_classes, dp;
	double epsilon, delta, sigma, clip, reg, tol, split[DPEM_NPARTS];
	size_t k, iters, max_iter, restarts, classes;
	uint64_t audit;
};

struct data {
	const char *label;
	size_t n, d, nclass;
	double *X;			/* n x d, grouped by class */
	size_t *start;			/* nclass + 1 row offsets */
	int32_t *y;			/* labels as read, or NULL */
	struct label_set lset;		/* y's label set */
	char *label_names;		/* lset.names (owned), or NULL */
	int names_ok;			/* label_names may be published */
	uint64_t nonfinite, dropped;
};

__attribute__((noreturn)) static void
usage(int status)
{
	FILE *fp = status ? stderr : stdout;

	fputs("usage: gmm-fit [-fqVv] [-d delta] [-e epsilon] [-k components] "
	    "[-o file]\n"
	    "               [-S seed] [--assume-raw] [--audit-repeat n] "
	    "[--by-label]\n"
	    "               [--classes n]"
	    " [--clip bound] [--covariance type] "
	    "[--dataset name]\n"
	    "               [--init kind] [--init-means file] [--iters n]\n"
	    "               [--level level] [--max-iter n] [--reg value]\n"
	    "               [--restarts n]\n"
	    "               [--sigma multiplier] [--split weights] [--stats]\n"
	    "               [--tol value] [file]\n"
	    "       gmm-fit sample [-fqV] [-o file] [-S seed] "
	    "[--level level]\n"
	    "               --model file --n rows\n", fp);
	if (status == 0)
		fputs("\n"
		    "  -d, --delta D          delta of (epsilon, delta)-DP\n"
		    "  -e, --epsilon E        epsilon of (epsilon, delta)-DP "
		    "over all iterations\n"
		    "  -f, --force            write to a terminal\n"
		    "  -h, --help             show this help\n"
		    "  -k, --components K     mixture components (default 1)\n"
		    "  -o, --output FILE      write FILE (through a temporary "
		    "file), not stdout\n"
		    "  -q, --quiet            no warnings, no progress\n"
		    "  -S, --seed N           reproducible randomness: NOT "
		    "private\n"
		    "  -V, --version          show the version\n"
		    "  -v, --verbose          log-likelihood per iteration, "
		    "BIC, AIC, noise, times\n"
		    "      --assume-raw       the input, of unknown provenance (tns from-csv,\n"
		    "                         from-npy), holds raw records of --dataset\n"
		    "      --audit-repeat N   N independent DP-EM runs (tests "
		    "only)\n"
		    "      --by-label         one mixture per class of y, with "
		    "class priors\n"
		    "      --classes N        the classes are 0 .. N-1\n"
		    "      --clip B           scale rows of L2 norm above B "
		    "down to B (DP: required)\n"
		    "      --covariance TYPE  full (default), diag or "
		    "spherical\n"
		    "      --dataset NAME     the protected dataset (default: "
		    "from the input)\n"
		    "      --init KIND        DP start: ball (default: data-"
		    "independent) or dp\n"
		    "      --init-means FILE  initial means (public), K x d\n"
		    "      --iters N          exactly N iterations (DP: default "
		    "10)\n"
		    "      --level N          zstd level of the output (default "
		    "1)\n"
		    "      --max-iter N       iterations at most (default 100; "
		    "not with DP)\n"
		    "      --reg R            added to the covariances' diagonal "
		    "(default 1e-6)\n"
		    "      --restarts N       k-means++ starts, the best kept "
		    "(default 1; not with DP)\n"
		    "      --sigma Z          noise multiplier per iteration; 0: "
		    "plain EM, NOT private\n"
		    "      --split A,B,C      budget weights of counts, sums, "
		    "second moments\n"
		    "      --stats            also write the released statistics "
		    "of every iteration\n"
		    "      --tol T            convergence tolerance (default "
		    "1e-3; not with DP)\n"
		    "\n"
		    "sample:\n"
		    "      --model FILE       the fitted model\n"
		    "      --n ROWS           rows to draw\n", fp);
	exit(status);
}

static void
meta_setf(struct ts_meta *m, const char *key, const char *fmt, double v)
{
	if (ts_meta_setf(m, key, fmt, v) != 0)
		cli_die(EX_OSERR, "out of memory");
}

/* ---- options ---- */

static void
parse_split(struct opts *o, const char *arg)
{
	const char *p = arg;
	char *end;

	for (int i = 0; i < DPEM_NPARTS; i++) {
		errno = 0;
		o->split[i] = strtod(p, &end);
		if (end == p || errno == ERANGE || !isfinite(o->split[i]) ||
		    !(o->split[i] > 0))
			cli_usage_error("invalid --split '%s': expected three "
			    "positive weights A,B,C", arg);
		p = end;
		if (i < DPEM_NPARTS - 1 && *p++ != ',')
			cli_usage_error("invalid --split '%s': expected three "
			    "positive weights A,B,C", arg);
	}
	if (*p != '\0')
		cli_usage_error("invalid --split '%s': expected three positive "
		    "weights A,B,C", arg);
	o->has_split = 1;
}

static void
check_options(struct opts *o)
{
	if (o->has_eps != o->has_delta)
		cli_usage_error("--epsilon and --delta go together");
	if (o->has_eps && o->has_sigma)
		cli_usage_error("--epsilon and --sigma exclude each other");
	if (!o->has_eps && !o->has_sigma)
		cli_usage_error("no privacy parameters: give --epsilon and "
		    "--delta, or --sigma (--sigma 0: plain EM, not private)");
	o->dp = !(o->has_sigma && o->sigma == 0);
	if (o->has_iters && (o->has_tol || o->has_max_iter))
		cli_usage_error("--iters runs a fixed number of iterations: "
		    "not with --tol or --max-iter");
	if (o->restarts > 1 && o->init_means)
		cli_usage_error("--restarts draws k-means++ starts: not with "
		    "--init-means");
	if (o->init_dp && !o->dp)
		cli_usage_error("--init dp releases a noisy start: it needs "
		    "privacy (without it the start is k-means++)");
	if (o->init_dp && o->init_means)
		cli_usage_error("--init dp and --init-means are two starts: "
		    "give one");
	if (o->dp) {
		if (!o->has_clip)
			cli_usage_error("--clip is required: without a bound on "
			    "the rows there is no sensitivity");
		if (o->has_tol || o->has_max_iter)
			cli_usage_error("--tol and --max-iter stop on the data: "
			    "DP-EM runs a fixed number of --iters");
		if (o->has_restarts)
			cli_usage_error("--restarts picks the best start on the "
			    "data: not with privacy");
		if (!(o->reg > 0))
			cli_usage_error("--reg must be positive with privacy: "
			    "the noisy covariances need a floor");
		if (!o->has_iters)
			o->iters = 10;
	} else {
		if (o->audit)
			cli_usage_error("--audit-repeat needs noise");
		if (o->stats)
			cli_usage_error("--stats writes released statistics: "
			    "it needs privacy");
		if (o->has_split)
			cli_usage_error("--split weights the noise: not with "
			    "--sigma 0");
		if (o->unsafe)
			cli_usage_error("--unsafe-test-miscalibrate needs "
			    "noise");
	}
	if (o->has_classes && !o->by_label)
		cli_usage_error("--classes applies to --by-label");
	if (o->unsafe) {
		const char *e = getenv(UNSAFE_ENV);
		if (e == NULL || strcmp(e, "1") != 0)
			cli_usage_error("--unsafe-test-miscalibrate is refused "
			    "unless %s=1: it breaks the privacy guarantee "
			    "(tests only)", UNSAFE_ENV);
	}
}

/* ---- input ---- */

/* Read the rows of tensor X (and y with need_y) into memory: EM visits
 * them once per iteration, which a stream on stdin cannot replay. */
static void
read_input(struct ts_reader *r, struct data *dt, int need_y, int dp)
{
	struct tensor t, X = { 0 }, y = { 0 };
	int rc, haveX = 0, havey = 0;
	uint64_t ne;
	size_t bad = 0;

	while ((rc = ts_read_next(r, &t)) == 1) {
		if (strcmp(t.name, "X") == 0 && !haveX) {
			if (t.ndim != 2 || (t.dtype != TS_F32 &&
			    t.dtype != TS_F64))
				cli_die(EX_DATAERR, "%s: tensor 'X': expected f32 "
				    "or f64 of 2 dimensions, got %s of %d",
				    dt->label, ts_dtype_name(t.dtype), t.ndim);
			if (t.dims[1] == 0 || t.dims[1] > MAX_FEATURES)
				cli_die(EX_DATAERR, "%s: tensor 'X' has %llu "
				    "columns: gmm-fit takes 1 to %d", dt->label,
				    (unsigned long long)t.dims[1], MAX_FEATURES);
			if ((rc = ts_read_data(r, &t)) != 0)
				cli_rdie(r, rc);
			X = t;
			haveX = 1;
		} else if (strcmp(t.name, "y") == 0 && need_y && !havey) {
			if (t.ndim != 1 || (t.dtype != TS_I32 &&
			    t.dtype != TS_I64 && t.dtype != TS_U8))
				cli_die(EX_DATAERR, "%s: tensor 'y': expected i32, "
				    "i64 or u8 of 1 dimension", dt->label);
			if ((rc = ts_read_data(r, &t)) != 0)
				cli_rdie(r, rc);
			y = t;
			havey = 1;
		} else {
			tensor_free(&t);
		}
	}
	if (rc < 0)
		cli_rdie(r, rc);
	if (!haveX)
		cli_die(EX_DATAERR, "%s: no tensor 'X'", dt->label);
	if (need_y && !havey)
		cli_die(EX_DATAERR, "%s: no tensor 'y' of labels (--by-label)",
		    dt->label);
	dt->d = (size_t)X.dims[1];
	if (tensor_elems(&X, &ne) != 0 || ne > SIZE_MAX / sizeof(double))
		cli_die(EX_DATAERR, "%s: tensor 'X' is too large", dt->label);
	dt->n = (size_t)X.dims[0];
	if (havey && y.dims[0] != X.dims[0])
		cli_die(EX_DATAERR, "%s: tensor 'y' has %llu rows, 'X' %llu",
		    dt->label, (unsigned long long)y.dims[0],
		    (unsigned long long)X.dims[0]);
	rc = gmmio_rows(&dt->X, &X, dp, &dt->nonfinite, &bad);
	if (rc == PV_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	if (rc != 0)
		cli_die(EX_DATAERR, "%s: tensor 'X': row %zu has a non-finite "
		    "value", dt->label, bad);
	tensor_free(&X);
	if (havey) {
		char err[256];

		if (gmmio_labels(&dt->y, &y) != 0)
			cli_die(EX_OSERR, "out of memory");
		if (label_get(&y.meta, &dt->lset, err, sizeof err) != 0)
			cli_die(EX_DATAERR, "%s: tensor 'y': %s", dt->label, err);
		if (dt->lset.names != NULL)
			dt->lset.names = dt->label_names =
			    cli_strdup(dt->lset.names);
		tensor_free(&y);
	}
}

/* Group the rows by class: classes 0 .. nclass-1 with --by-label (rows
 * with other labels dropped under privacy, an error without), else one
 * class of every row. */
static void
group_rows(struct data *dt, const struct opts *o)
{
	size_t n = dt->n, C, bad = 0;
	char err[256];
	int rc;

	if (!o->by_label) {
		dt->nclass = 1;
		dt->start = cli_calloc(2, sizeof *dt->start);
		dt->start[1] = n;
		return;
	}
	/* Under privacy the classes are public: --classes or a label
	 * set declared public, never one learnt from the rows. */
	rc = label_classes(&dt->lset, o->dp, o->has_classes ? o->classes : 0,
	    &C, &dt->names_ok, err, sizeof err);
	if (rc == LABEL_E_USAGE)
		cli_usage_error("%s: %s", dt->label, err);
	if (rc != LABEL_OK)
		cli_die(EX_DATAERR, "%s: %s", dt->label, err);
	if (C == 0 && (C = gmmio_classes_seen(dt->y, n)) == 0)
		cli_die(EX_DATAERR, "%s: tensor 'y' holds no class", dt->label);
	if (C > MAX_CLASSES)
		cli_die(EX_DATAERR, "%s: %zu classes: gmm-fit takes at most %d",
		    dt->label, C, MAX_CLASSES);
	rc = gmmio_group(&dt->X, n, dt->d, dt->y, C, o->dp, &dt->start,
	    &dt->dropped, &bad);
	if (rc == PV_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	if (rc != 0)
		cli_die(EX_DATAERR, "%s: tensor 'y': row %zu: label %d is not a "
		    "class 0 .. %zu", dt->label, bad, (int)dt->y[bad], C - 1);
	dt->nclass = C;
}

/* The initial means of --init-means: the first tensor, K x d values. */
static double *
read_init_means(struct ts_reader *r, const char *label, size_t k, size_t d)
{
	struct tensor t;
	uint64_t ne;
	double *m;
	int rc;

	if ((rc = ts_read_next(r, &t)) < 0)
		cli_rdie(r, rc);
	if (rc == 0)
		cli_die(EX_DATAERR, "%s: --init-means: the stream holds no "
		    "tensor", label);
	if (t.dtype != TS_F32 && t.dtype != TS_F64)
		cli_die(EX_DATAERR, "%s: --init-means: tensor '%s' is %s: "
		    "expected f32 or f64", label, t.name,
		    ts_dtype_name(t.dtype));
	if (t.ndim != 2 || t.dims[1] != d ||
	    (t.dims[0] != TS_UNKNOWN_ROWS && t.dims[0] != k))
		cli_die(EX_DATAERR, "%s: --init-means: tensor '%s' must be "
		    "%zu x %zu (components x features)", label, t.name, k, d);
	if ((rc = ts_read_data(r, &t)) != 0)
		cli_rdie(r, rc);
	if (tensor_elems(&t, &ne) != 0 || ne != (uint64_t)k * d)
		cli_die(EX_DATAERR, "%s: --init-means: tensor '%s' must be "
		    "%zu x %zu (components x features)", label, t.name, k, d);
	m = cli_reallocarray(NULL, k * d, sizeof *m);
	for (size_t j = 0; j < k * d; j++) {
		m[j] = t.dtype == TS_F64 ? ((double *)t.data)[j] :
		    ((float *)t.data)[j];
		if (!isfinite(m[j]))
			cli_die(EX_DATAERR, "%s: --init-means: value %zu is not "
			    "finite", label, j);
	}
	tensor_free(&t);
	while ((rc = ts_read_next(r, &t)) == 1)
		tensor_free(&t);
	if (rc < 0)
		cli_rdie(r, rc);
	return m;
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

/* ---- output ---- */

struct out {
	struct ts_writer *w;
	uint64_t audit;			/* 0, or --audit-repeat */
};

/* Write a tensor (gmmio_put_tensor), exit on failure. */
static void
put_tensor(struct out *ot, const char *base, uint64_t rep, int ndim,
    const uint64_t *dims, const double *data, const struct ts_meta *meta)
{
	int rc = gmmio_put_tensor(ot->w, base, ot->audit != 0, rep, ndim,
	    dims, data, meta);

	if (rc == PV_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	if (rc != 0)
		cli_wdie(ot->w, rc);
}

/* Write the mixture of class label c (gmmio_put_model). */
static void
put_model(struct out *ot, int c, uint64_t rep, const struct gmm *g,
    const struct ts_meta *wmeta)
{
	int rc = gmmio_put_model(ot->w, c, ot->audit != 0, rep, g, wmeta);

	if (rc == PV_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	if (rc != 0)
		cli_wdie(ot->w, rc);
}

/* Write release rep of class c: the mixture, and with --stats the
 * released statistics (and those of the DP start). */
static void
put_release(struct out *ot, const struct dpem *e, size_t c, uint64_t rep,
    const struct opts *o, size_t d)
{
	char base[64];
	size_t ml = gmm_mom_len(o->cov, d);

	put_model(ot, (int)c, rep, dpem_model(e, c), NULL);
	if (o->stats) {
		uint64_t dims[3] = { o->iters, o->k, 1 + d + ml };

		snprintf(base, sizeof base, "gmm/%zu/stats", c);
		put_tensor(ot, base, rep, 3, dims, dpem_trace(e, c), NULL);
	}
	if (o->stats && o->init_dp) {
		uint64_t dims[1] = { 1 + 2 * d };
		double *v = cli_reallocarray(NULL, dims[0], sizeof *v);

		dpem_init_stats(e, c, v);
		snprintf(base, sizeof base, "gmm/%zu/init_stats", c);
		put_tensor(ot, base, rep, 1, dims, v, NULL);
		free(v);
	}
}

/* ---- maximum likelihood (--sigma 0) ---- */

struct vctx {
	size_t cls, starts;
};

static void
on_iter(void *arg, size_t start, size_t it, double ll)
{
	const struct vctx *v = arg;

	if (v->starts > 1)
		fprintf(stderr, "%s: class %zu: start %zu: iteration %zu: "
		    "log-likelihood %.17g\n", cli_prog(), v->cls, start, it,
		    ll);
	else
		fprintf(stderr, "%s: class %zu: iteration %zu: log-likelihood "
		    "%.17g\n", cli_prog(), v->cls, it, ll);
}

struct fit {
	struct gmmfit_result r;
	double secs;			/* in the fit */
};

/* Fit class c's mixture by EM with restarts (gmmfit); g receives the
 * best. */
static void
fit_ml(const struct opts *o, struct rng *rng, const struct data *dt,
    size_t c, const double *init, struct gmm *g, struct fit *f,
    int threads)
{
	size_t n = dt->start[c + 1] - dt->start[c];
	struct gmmfit_params p = { .k = o->k, .cov = o->cov, .reg = o->reg,
	    .tol = o->tol, .max_iter = o->has_iters ? o->iters : o->max_iter,
	    .fixed = o->has_iters, .restarts = o->restarts,
	    .threads = threads };
	struct vctx v = { c, o->restarts ? o->restarts : 1 };
	const char *msg;
	double t0;
	int rc;

	if (n < o->k)
		cli_die(EX_DATAERR, "%s: class %zu has %zu rows, fewer than the "
		    "%zu components", dt->label, c, n, o->k);
	if ((msg = gmmfit_check_params(&p)) != NULL)
		cli_die(EX_SOFTWARE, "EM: %s", msg);
	if (o->verbose) {
		p.on_iter = on_iter;
		p.ctx = &v;
	}
	t0 = cli_now();
	rc = gmmfit_run(&p, rng, dt->X + dt->start[c] * dt->d, n, dt->d,
	    init, g, &f->r);
	f->secs = cli_now() - t0;
	if ((rc == 0 || f->r.final) && !f->r.converged && !o->has_iters)
		cli_warn("class %zu: EM did not converge in %zu iterations "
		    "(raise --max-iter or --tol)", c, o->max_iter);
	if (rc == PV_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	if (rc == PV_E_NOTPD)
		cli_die(EX_DATAERR, "%s: class %zu: component %zu: the "
		    "covariance is not positive definite (try a larger --reg)",
		    dt->label, c, f->r.bad);
	if (rc != 0)
		cli_die(EX_DATAERR, "%s: class %zu: %s%s", dt->label, c,
		    f->r.final ? "" : "EM: ", gmm_strerror(rc));
}

/* ---- DP-EM (lib/mech/dpem) ---- */

static void
dp_setup(struct dpem_params *p, struct dpem_plan *pl, const struct opts *o,
    size_t nclass, size_t d)
{
	const char *msg;

	memset(p, 0, sizeof *p);
	p->k = o->k;
	p->cov = o->cov;
	p->clip = o->clip;
	p->reg = o->reg;
	p->iters = o->iters;
	p->init_dp = o->init_dp;
	p->calibrate = !o->has_sigma;
	p->epsilon = o->epsilon;
	p->delta = o->delta;
	p->sigma = o->sigma;
	for (int i = 0; i < DPEM_NPARTS; i++)
		p->split[i] = o->has_split ? o->split[i] : 1;
	p->repeats = o->audit;
	p->unsafe_moments_b = o->unsafe;
	p->stats = o->stats;
	if ((msg = dpem_check_params(p)) != NULL)
		cli_die(EX_SOFTWARE, "DP-EM: %s", msg);
	switch (dpem_plan(pl, p, nclass, d)) {
	case 0:
		break;
	case PV_E_OVERFLOW:
		cli_die(EX_SOFTWARE, "no floating-point margin for %zu "
		    "components in %zu dimensions", o->k, d);
	case PV_E_NOROOT:
		cli_usage_error("--epsilon %g --delta %g over %zu releases "
		    "needs a noise multiplier above %g", o->epsilon, o->delta,
		    dpem_releases(p), pl->z);
	case PV_E_RANGE:
		cli_usage_error("the noise of the %s is out of range (check "
		    "--clip and --sigma)", dpem_part_name((int)pl->bad));
	default:
		cli_die(EX_SOFTWARE, "cannot convert the RDP curve");
	}
}

static void
record_release(struct ts_meta *m, struct rng *rng, const char *dataset,
    const struct dpem_params *p, const struct dpem_plan *pl)
{
	struct ledger_entry e;

	dpcli_entry(&e, rng, dataset, "gaussian");
	if (dpem_ledger(&e, p, pl) != 0)
		cli_die(EX_OSERR, "out of memory");
	dpcli_release(m, &e);
	ts_meta_free(&e.params);
}
/* ---- sampling ---- */

/* Parse gmm.classes or gmm.priors (gmmio_parse_list), exit 65 if bad. */
static size_t
parse_list(const char *s, double *v, const char *label, const char *key)
{
	char err[256];
	size_t n = gmmio_parse_list(s, v, GMMIO_MAX_CLASSES, err, sizeof err);

	if (n == 0)
		cli_die(EX_DATAERR, "%s: %s: %s", label, key, err);
	return n;
}

static int
sample_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "level", required_argument, NULL, OPT_LEVEL },
		{ "model", required_argument, NULL, OPT_MODEL },
		{ "n", required_argument, NULL, OPT_N },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "seed", required_argument, NULL, 'S' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *output = NULL, *level = NULL, *seed = NULL, *model = NULL;
	const char *mlabel, *cov_s, *cls_s, *pri_s;
	int force = 0, ch, rc, cov;
	long long nrows = -1;
	FILE *mfp, *ofp;
	struct ts_reader *r;
	struct ts_writer *w;
	struct tensor *t = NULL, hx, hy;
	struct ts_meta meta = { 0 };
	struct rng *rng;
	struct gmmio_model gm;
	size_t nt = 0, C, d;
	double *cls, *pri;
	int32_t *y;
	float *blk;
	uint64_t dims[2];
	char err[256];

	while ((ch = getopt_long(argc, argv, "fho:qS:V", longopts, NULL)) !=
	    -1) {
		switch (ch) {
		case 'f':
			force = 1;
			break;
		case 'h':
			usage(0);
		case 'o':
			output = optarg;
			break;
		case 'q':
			cli_set_quiet(1);
			break;
		case 'S':
			(void)dpcli_seed_arg(optarg);
			seed = optarg;
			break;
		case 'V':
			cli_version();
		case OPT_LEVEL:
			level = cli_level_arg(optarg);
			break;
		case OPT_MODEL:
			model = optarg;
			break;
		case OPT_N:
			nrows = cli_ll("--n", optarg, 1, MAX_SAMPLE);
			break;
		default:
			usage(EX_USAGE);
		}
	}
	if (optind != argc)
		usage(EX_USAGE);
	if (model == NULL)
		cli_usage_error("sample: --model is required");
	if (nrows < 0)
		cli_usage_error("sample: --n is required");
	if (strcmp(model, "-") == 0)
		cli_usage_error("sample: --model needs a file, not stdin");
	mfp = cli_open_in(model, &mlabel);
	ofp = cli_out_open(output, force);
	/* Sampling is post-processing of the model: a seed makes it
	 * reproducible without touching the privacy of the release. */
	rc = seed ? rng_new_seeded(&rng, dpcli_seed_arg(seed), WORK_ITEM
	    "/sample") : rng_new(&rng);
	if (rc == RNG_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	if (rc != 0)
		cli_die(EX_OSERR, "no secure randomness: %s", rng_strerror(rc));

	r = cli_reader(mfp, mlabel);
	if ((rc = ts_read_all(r, &t, &nt)) != 0)
		cli_rdie(r, rc);
	cov_s = ts_meta_get(ts_reader_meta(r), "gmm.covariance");
	cls_s = ts_meta_get(ts_reader_meta(r), "gmm.classes");
	pri_s = ts_meta_get(ts_reader_meta(r), "gmm.priors");
	if (cov_s == NULL || cls_s == NULL || pri_s == NULL)
		cli_die(EX_DATAERR, "%s: --model: no gmm.covariance, gmm.classes "
		    "or gmm.priors: not a gmm-fit model", mlabel);
	if ((cov = gmmio_cov_parse(cov_s)) < 0)
		cli_die(EX_DATAERR, "%s: --model: gmm.covariance '%s' is not "
		    "full, diag or spherical", mlabel, cov_s);
	cls = cli_reallocarray(NULL, GMMIO_MAX_CLASSES, sizeof *cls);
	pri = cli_reallocarray(NULL, GMMIO_MAX_CLASSES, sizeof *pri);
	C = parse_list(cls_s, cls, mlabel, "gmm.classes");
	if (parse_list(pri_s, pri, mlabel, "gmm.priors") != C)
		cli_die(EX_DATAERR, "%s: --model: gmm.priors and gmm.classes "
		    "differ in length", mlabel);
	rc = gmmio_load(&gm, t, nt, cov, cls, pri, C, err, sizeof err);
	if (rc == PV_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	if (rc != 0)
		cli_die(EX_DATAERR, "%s: --model: %s", mlabel, err);
	d = gm.d;
	cli_inherit(&meta, ts_reader_meta(r), mlabel);
	{
		struct ts_meta prov = { 0 };
		cli_prov(&meta);
		cli_prov_input(&prov, 0, mlabel, ts_reader_digest(r),
		    ts_reader_meta(r));
		if (ts_meta_merge(&meta, &prov, "", NULL) != 0)
			cli_die(EX_OSERR, "out of memory");
		ts_meta_free(&prov);
	}

	/* The classes first (their indices, labels at the end), then the
	 * rows. */
	y = cli_reallocarray(NULL, (size_t)nrows, sizeof *y);
	gmmio_draw_classes(&gm, rng, y, (size_t)nrows);
	w = cli_writer(ofp, level);
	dims[0] = (uint64_t)nrows;
	dims[1] = d;
	if (tensor_init(&hx, "X", TS_F32, 2, dims) != 0)
		cli_die(EX_SOFTWARE, "bad tensor header");
	if ((rc = ts_write_begin(w, &hx)) != 0)
		cli_wdie(w, rc);
	blk = cli_reallocarray(NULL, (size_t)SAMPLE_BLOCK * d, sizeof *blk);
	for (size_t i = 0; i < (size_t)nrows; i += SAMPLE_BLOCK) {
		size_t m = (size_t)nrows - i < SAMPLE_BLOCK ?
		    (size_t)nrows - i : SAMPLE_BLOCK;

		gmmio_sample_rows(&gm, rng, y + i, m, blk);
		if ((rc = ts_write_rows(w, blk, m)) != 0)
			cli_wdie(w, rc);
	}
	if ((rc = ts_write_end(w)) != 0)
		cli_wdie(w, rc);
	tensor_free(&hx);
	for (size_t i = 0; i < (size_t)nrows; i++)
		y[i] = gm.labels[y[i]];
	dims[0] = (uint64_t)nrows;
	if (tensor_init(&hy, "y", TS_I32, 1, dims) != 0)
		cli_die(EX_SOFTWARE, "bad tensor header");
	{
		/* The sample's classes are the model's: public when the
		 * model says so (an older model says nothing: data). */
		const char *ln = ts_meta_get(ts_reader_meta(r),
		    "gmm.label_names");
		const char *src = ts_meta_get(ts_reader_meta(r),
		    "gmm.label_source");
		int pub = src != NULL && strcmp(src, "public") == 0;

		if (ln != NULL && label_names_count(ln) != C)
			cli_die(EX_DATAERR, "%s: --model: gmm.label_names and "
			    "gmm.classes disagree", mlabel);
		if (label_put(&hy.meta, pub ? LABEL_PUBLIC : LABEL_DATA,
		    pub ? C : 0, ln) != 0)
			cli_die(EX_OSERR, "out of memory");
	}
	hy.data = y;
	if ((rc = ts_write_tensor(w, &hy)) != 0)
		cli_wdie(w, rc);
	hy.data = NULL;
	tensor_free(&hy);
	if ((rc = ts_write_meta(w, &meta)) != 0 ||
	    (rc = ts_writer_finish(w)) != 0)
		cli_wdie(w, rc);
	ts_writer_close(w);
	gmmio_free(&gm);
	for (size_t i = 0; i < nt; i++)
		tensor_free(&t[i]);
	free(t);
	free(cls);
	free(pri);
	free(y);
	free(blk);
	ts_meta_free(&meta);
	ts_reader_close(r);
	cli_close_in(mfp);
	rng_free(rng);
	cli_out_commit();
	return 0;
}

/* Fit every class's mixture (no privacy) and write it with its criteria;
 * the priors are the classes' shares of the rows. */
static void
fit_classes(struct out *ot, const struct opts *o, struct rng *rng,
    struct data *dt, const double *init, int threads, struct fit *f,
    double *priors)
{
	struct gmm g;

	for (size_t c = 0; c < dt->nclass; c++) {
		struct ts_meta wm = { 0 };

		if (gmm_alloc(&g, o->k, dt->d, o->cov) != 0)
			cli_die(EX_OSERR, "out of memory");
		fit_ml(o, rng, dt, c, init, &g, &f[c], threads);
		priors[c] = (double)(dt->start[c + 1] - dt->start[c]) /
		    (double)dt->n;
		meta_setf(&wm, "gmm.log_likelihood", "%.17g", f[c].r.ll);
		meta_setf(&wm, "gmm.bic", "%.17g", f[c].r.bic);
		meta_setf(&wm, "gmm.aic", "%.17g", f[c].r.aic);
		meta_setf(&wm, "gmm.iterations", "%.0f", (double)f[c].r.iters);
		cli_meta_set(&wm, "gmm.converged", f[c].r.converged ?
		    "true" : "false");
		meta_setf(&wm, "gmm.rows", "%.0f",
		    (double)(dt->start[c + 1] - dt->start[c]));
		put_model(ot, (int)c, 0, &g, &wm);
		ts_meta_free(&wm);
		if (o->verbose)
			fprintf(stderr, "%s: class %zu: %zu rows, %zu "
			    "iterations (%s), log-likelihood %.17g, BIC "
			    "%.17g, AIC %.17g, %.4f s per iteration\n",
			    cli_prog(), c, dt->start[c + 1] -
			    dt->start[c], f[c].r.iters,
			    f[c].r.converged ? "converged" :
			    o->has_iters ? "fixed" : "not converged",
			    f[c].r.ll, f[c].r.bic, f[c].r.aic,
			    f[c].secs / (double)f[c].r.all_iters);
		gmm_free(&g);
	}
}

/* DP-EM: plan the noise, then each release (--audit-repeat: several,
 * each from its own seeded stream with --seed) written as it is made;
 * the priors from the last release's counts. */
static void
release_classes(struct out *ot, const struct opts *o, struct rng *rng,
    const struct data *dt, const double *init, int threads,
    struct dpem_params *dp, struct dpem_plan *pl, double *priors)
{
	struct dpem *e;
	double secs = 0;

	dp_setup(dp, pl, o, dt->nclass, dt->d);
	if (dpem_new(&e, dp, pl, dt->nclass, dt->d, threads) != 0)
		cli_die(EX_OSERR, "out of memory");
	if (o->verbose)
		fprintf(stderr, "%s: DP-EM: %zu iterations, noise "
		    "multiplier %.6g per iteration; sd %.6g (counts), "
		    "%.6g (sums), %.6g (second moments)\n", cli_prog(),
		    o->iters, 1 / pl->mu, pl->p[DPEM_CNT].sigma,
		    pl->p[DPEM_SUM].sigma, pl->p[DPEM_MOM].sigma);
	for (uint64_t rep = 0; rep < (o->audit ? o->audit : 1); rep++) {
		struct rng *rr = rng;
		double t0 = cli_now();
		int rc;

		if (o->audit && o->seed) {
			char item[64];
			snprintf(item, sizeof item, "%s/audit/%llu",
			    WORK_ITEM, (unsigned long long)rep);
			if (rng_new_seeded(&rr, dpcli_seed_arg(o->seed),
			    item) != 0)
				cli_die(EX_OSERR, "out of memory");
		}
		rc = dpem_run(e, rr, dt->X, dt->start, init);
		secs += cli_now() - t0;
		if (rc == PV_E_NOMEM)
			cli_die(EX_OSERR, "out of memory");
		if (rc != 0)
			cli_die(EX_SOFTWARE, "%s", dpem_errmsg(e));
		if (rr != rng)
			rng_free(rr);
		dpem_priors(e, priors);
		for (size_t c = 0; c < dt->nclass; c++)
			put_release(ot, e, c, rep, o, dt->d);
		cli_progress("releases", rep + 1, o->audit);
	}
	cli_progress_done();
	if (o->verbose)
		fprintf(stderr, "%s: DP-EM: %.4f s per iteration\n",
		    cli_prog(), secs / (double)(o->iters *
		    (o->audit ? o->audit : 1)));
	dpem_free(e);
}

/* ---- main ---- */

/* Parse the options into o and check them; @return the operand (NULL:
 * stdin). */
static const char *
parse_args(int argc, char **argv, struct opts *o)
{
	static const char *const covs[] = { "full", "diag", "spherical",
	    NULL };
	static const char *const unsafe[] = { "moments-b", NULL };
	static const char *const inits[] = { "ball", "dp", NULL };
	static const struct option longopts[] = {
		{ "assume-raw", no_argument, NULL, OPT_ASSUME_RAW },
		{ "audit-repeat", required_argument, NULL, OPT_AUDIT },
		{ "by-label", no_argument, NULL, OPT_BY_LABEL },
		{ "classes", required_argument, NULL, OPT_CLASSES },
		{ "clip", required_argument, NULL, OPT_CLIP },
		{ "components", required_argument, NULL, 'k' },
		{ "covariance", required_argument, NULL, OPT_COVARIANCE },
		{ "dataset", required_argument, NULL, OPT_DATASET },
		{ "delta", required_argument, NULL, 'd' },
		{ "epsilon", required_argument, NULL, 'e' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "init", required_argument, NULL, OPT_INIT },
		{ "init-means", required_argument, NULL, OPT_INIT_MEANS },
		{ "iters", required_argument, NULL, OPT_ITERS },
		{ "level", required_argument, NULL, OPT_LEVEL },
		{ "max-iter", required_argument, NULL, OPT_MAX_ITER },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "reg", required_argument, NULL, OPT_REG },
		{ "restarts", required_argument, NULL, OPT_RESTARTS },
		{ "seed", required_argument, NULL, 'S' },
		{ "sigma", required_argument, NULL, OPT_SIGMA },
		{ "split", required_argument, NULL, OPT_SPLIT },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "tol", required_argument, NULL, OPT_TOL },
		{ "unsafe-test-miscalibrate", required_argument, NULL,
		    OPT_UNSAFE },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "d:e:fhk:o:qS:Vv", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'd':
			o->delta = dpcli_delta_arg("--delta", optarg);
			o->has_delta = 1;
			break;
		case 'e':
			o->epsilon = dpcli_epsilon_arg("--epsilon", optarg,
			    EPS_MAX);
			o->has_eps = 1;
			break;
		case 'f':
			o->force = 1;
			break;
		case 'h':
			usage(0);
		case 'k':
			o->k = (size_t)cli_ll("--components", optarg, 1, MAX_K);
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'S':
			(void)dpcli_seed_arg(optarg);
			o->seed = optarg;
			break;
		case 'V':
			cli_version();
		case 'v':
			o->verbose = 1;
			break;
		case OPT_ASSUME_RAW:
			o->assume_raw = 1;
			break;
		case OPT_AUDIT:
			o->audit = (uint64_t)cli_ll("--audit-repeat", optarg, 1,
			    MAX_AUDIT);
			break;
		case OPT_BY_LABEL:
			o->by_label = 1;
			break;
		case OPT_CLASSES:
			o->classes = (size_t)cli_ll("--classes", optarg, 1,
			    MAX_CLASSES);
			o->has_classes = 1;
			break;
		case OPT_CLIP:
			o->clip = cli_double("--clip", optarg, CLIP_MIN,
			    CLIP_MAX);
			o->has_clip = 1;
			break;
		case OPT_COVARIANCE:
			o->cov = cli_choice("--covariance", optarg, covs);
			break;
		case OPT_DATASET:
			if (ledger_check_dataset(optarg) != NULL)
				cli_usage_error("invalid --dataset '%s': %s",
				    optarg, ledger_check_dataset(optarg));
			o->dataset = optarg;
			break;
		case OPT_INIT:
			o->init_dp = cli_choice("--init", optarg, inits);
			break;
		case OPT_INIT_MEANS:
			o->init_means = optarg;
			break;
		case OPT_ITERS:
			o->iters = (size_t)cli_ll("--iters", optarg, 1, MAX_ITER);
			o->has_iters = 1;
			break;
		case OPT_LEVEL:
			o->level = cli_level_arg(optarg);
			break;
		case OPT_MAX_ITER:
			o->max_iter = (size_t)cli_ll("--max-iter", optarg, 1,
			    MAX_ITER);
			o->has_max_iter = 1;
			break;
		case OPT_REG:
			o->reg = cli_double("--reg", optarg, 0, 1e10);
			break;
		case OPT_RESTARTS:
			o->restarts = (size_t)cli_ll("--restarts", optarg, 1,
			    MAX_RESTARTS);
			o->has_restarts = 1;
			break;
		case OPT_SIGMA:
			o->sigma = cli_double("--sigma", optarg, 0, SIGMA_MAX);
			if (o->sigma != 0 && o->sigma < SIGMA_MIN)
				cli_usage_error("invalid --sigma '%s': 0 or at "
				    "least %g", optarg, SIGMA_MIN);
			o->has_sigma = 1;
			break;
		case OPT_SPLIT:
			parse_split(o, optarg);
			break;
		case OPT_STATS:
			o->stats = 1;
			break;
		case OPT_TOL:
			o->tol = cli_double("--tol", optarg, 0, 1e10);
			o->has_tol = 1;
			break;
		case OPT_UNSAFE:
			(void)cli_choice("--unsafe-test-miscalibrate", optarg,
			    unsafe);
			o->unsafe = 1;
			break;
		default:
			usage(EX_USAGE);
		}
	}
	if (o->assume_raw)
		dpcli_assume_raw(o->dataset);
	argc -= optind;
	argv += optind;
	if (argc > 1)
		usage(EX_USAGE);
	cli_set_quiet(o->quiet);
	check_options(o);
	return argc == 1 ? argv[0] : NULL;
}


int
main(int argc, char **argv)
{
	struct opts o = { .k = 1, .reg = 1e-6, .tol = 1e-3, .max_iter = 100,
	    .restarts = 1, .cov = GMM_FULL };
	struct data dt = { 0 };
	struct ts_reader *r, *ri = NULL;
	struct ts_meta meta = { 0 }, prov = { 0 };
	struct rng *rng;
	struct out ot = { 0 };
	struct fit *fits = NULL;
	struct dpem_params dp;
	struct dpem_plan pl;
	const char *file, *label, *ilabel = NULL, *dataset;
	FILE *in, *ifp = NULL, *ofp;
	double *init = NULL, *priors, t_start = cli_now();
	int threads, nin = 0;

	cli_init(argv[0], argc, argv);
	if (argc > 1 && strcmp(argv[1], "sample") == 0)
		return sample_main(argc - 1, argv + 1);
	file = parse_args(argc, argv, &o);

	/* Open everything before computing. */
	in = cli_open_in(file, &label);
	if (o.init_means) {
		if (strcmp(o.init_means, "-") == 0)
			cli_usage_error("--init-means needs a file, not stdin");
		ifp = cli_open_in(o.init_means, &ilabel);
		not_the_input(in, ifp, "--init-means", o.init_means);
	}
	ofp = cli_out_open(o.output, o.force);
	rng = dpcli_rng(o.seed, WORK_ITEM);
	if (!o.dp)
		cli_warn("--sigma 0: plain EM without noise: the output is NOT "
		    "private");
	if (o.unsafe)
		cli_warn("--unsafe-test-miscalibrate: the second moments get "
		    "the noise of sensitivity B, not B^2: the output is NOT "
		    "private");
	r = cli_reader(in, label);
	dt.label = label;
	read_input(r, &dt, o.by_label, o.dp);
	/* The float margin charged holds for at most FPSUM_MAX_ROWS rows. */
	if (o.dp && dt.n > FPSUM_MAX_ROWS)
		cli_die(EX_DATAERR, "%s: tensor 'X' has more than %llu rows, "
		    "the public bound of the floating-point error charged to "
		    "the sensitivity", label,
		    (unsigned long long)FPSUM_MAX_ROWS);
	if (ifp) {
		ri = cli_reader(ifp, ilabel);
		init = read_init_means(ri, ilabel, o.k, dt.d);
	}
	dataset = dpcli_dataset(ts_reader_meta(r), o.dataset, label);
	if (o.has_clip)
		(void)gmm_clip_rows(dt.X, dt.n, dt.d, o.clip);
	group_rows(&dt, &o);
	if (!o.dp && dt.n == 0)
		cli_die(EX_DATAERR, "%s: tensor 'X' has no rows", label);
	if (o.audit && o.audit * dt.nclass * (o.stats ? (o.init_dp ? 5u : 4u) : 3u) >
	    TS_MAX_TENSORS)
		cli_usage_error("--audit-repeat %llu: the releases would need "
		    "more than %d tensors in one stream",
		    (unsigned long long)o.audit, TS_MAX_TENSORS);
	{
		long np = sysconf(_SC_NPROCESSORS_ONLN);
		int bt = la_blas_threads();
		threads = np < 1 ? 1 : bt < np ? bt : (int)np;
		if (threads < 1)
			threads = 1;
	}

	priors = cli_calloc(dt.nclass, sizeof *priors);
	ot.w = cli_writer(ofp, o.level);
	ot.audit = o.audit;

	if (!o.dp) {
		fits = cli_calloc(dt.nclass, sizeof *fits);
		fit_classes(&ot, &o, rng, &dt, init, threads, fits, priors);
	} else {
		release_classes(&ot, &o, rng, &dt, init, threads, &dp, &pl,
		    priors);
	}

	/* The stream metadata: ledgers, the release, the model, provenance. */
	cli_inherit(&meta, ts_reader_meta(r), label);
	cli_prov_input(&prov, nin++, label, ts_reader_digest(r),
	    ts_reader_meta(r));
	if (ri) {
		dpcli_inherit_side(&meta, ts_reader_meta(ri), ilabel);
		cli_prov_input(&prov, nin++, ilabel, ts_reader_digest(ri),
		    ts_reader_meta(ri));
	}
	dpcli_aggregate_others(&meta, dataset, label);
	if (o.dp)
		record_release(&meta, rng, dataset, &dp, &pl);
	else
		dpcli_not_private(&meta, dataset, label);
	dpcli_audit_mark(&meta, o.audit);
	{
		struct gmmio_info gi = { .C = dt.nclass, .priors = priors,
		    .cov = o.cov, .k = o.k, .d = dt.d, .has_clip = o.has_clip,
		    .clip = o.clip, .reg = o.reg, .dp = o.dp,
		    .iters = o.iters };

		/* Names are published only when they are public, or the
		 * model is not private; gmm.label_source says which. */
		if (o.by_label)
			gi.label_source = o.has_classes ||
			    dt.lset.source == LABEL_PUBLIC ? "public" : "data";
		if (dt.label_names && dt.names_ok)
			gi.label_names = dt.label_names;
		/* Criteria of the whole model: the classes' log-likelihoods
		 * and criteria add up. */
		for (size_t c = 0; c < dt.nclass && !o.dp; c++) {
			gi.bic += fits[c].r.bic;
			gi.aic += fits[c].r.aic;
			gi.ll += fits[c].r.ll * (double)(dt.start[c + 1] -
			    dt.start[c]);
		}
		if (!o.dp)
			gi.ll /= (double)dt.n;
		if (gmmio_put_meta(&meta, &gi) != 0)
			cli_die(EX_OSERR, "out of memory");
	}
	cli_prov(&meta);
	if (ts_meta_merge(&meta, &prov, "", NULL) != 0)
		cli_die(EX_OSERR, "out of memory");
	{
		int rc;
		if ((rc = ts_write_meta(ot.w, &meta)) != 0 ||
		    (rc = ts_writer_finish(ot.w)) != 0)
			cli_wdie(ot.w, rc);
	}
	ts_writer_close(ot.w);
	if (o.verbose)
		fprintf(stderr, "%s: %zu rows x %zu features, %zu class%s: "
		    "%.3f s in all\n", cli_prog(), dt.n, dt.d, dt.nclass,
		    dt.nclass == 1 ? "" : "es", cli_now() - t_start);

	free(fits);
	free(priors);
	free(init);
	free(dt.X);
	free(dt.start);
	free(dt.y);
	free(dt.label_names);
	ts_meta_free(&meta);
	ts_meta_free(&prov);
	ts_reader_close(r);
	ts_reader_close(ri);
	cli_close_in(in);
	if (ifp)
		cli_close_in(ifp);
	rng_free(rng);
	cli_out_commit();
	return 0;
}
