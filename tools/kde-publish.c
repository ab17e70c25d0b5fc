/* kde-publish: publish a model sampled parameter by parameter from kernel
 * density estimates over M models, by the exponential mechanism (DP-PG and
 * DP-PGP, paper 002). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "dpcli.h"
#include "kde.h"
#include "ledger.h"
#include "model.h"
#include "modelcli.h"
#include "nn.h"
#include "noise.h"
#include "parts.h"
#include "rdp.h"
#include "tensor.h"
#include "tstream.h"

#define WORK_ITEM "kde-publish"
#define MAX_MODELS 100000
#define MAX_GRID (1u << 20)		/* candidates per parameter */
#define MAX_THREADS 64
#define MAX_AUDIT 1000000
#define MAX_RETRIES 1000
#define MAX_KMEANS_ITERS 1000
#define MAX_K 65536
#define EPS_MAX 1e4
#define RANGE_MAX 1e6
#define BLOCK 4096			/* parameters per unit of work */
#define TILE 64				/* parameters transposed at once */
#define DEN_BITS 40			/* the EM rate is cn / 2^40 */
#define TEST_ROWS 1024

enum { BW_SILVERMAN, BW_SCOTT, BW_VALUE };

enum {
	OPT_AUDIT = 256, OPT_BANDWIDTH, OPT_BW_MIN, OPT_DATASET, OPT_GRID,
	OPT_GRID_POINTS, OPT_GROUP, OPT_GROUP_EPS, OPT_K, OPT_KMEANS_ITERS,
	OPT_LEVEL, OPT_MAX_RETRIES, OPT_PUBLIC_TEST, OPT_RANGE, OPT_THREADS,
	OPT_THRESHOLD, OPT_WINDOW
};

struct opts {
	const char *output, *level, *seed, *dataset, *test;
	int force, quiet, bw;
	double eps, delta, bw_value, bw_min, step, range, window, ratio;
	double group_eps, threshold;
	uint64_t points, k, iters, retries, audit, threads;
	int has_grid, has_points, has_window, has_bw_min, has_k, has_geps;
	int has_threshold, has_retries, has_iters;
};

/* What a model stream says about the data it was trained on. */
struct part {
	const char *label;
	struct split_part sp;		/* split.part, split.parent, split.id */
	int has;			/* a part of a split of the raw data */
};

/* The mechanism's constants, the same for every parameter. */
struct mech {
	struct kde_grid g;
	int rule;			/* KDE_SILVERMAN, KDE_SCOTT or 0 */
	float kinv;			/* fixed bandwidth: 1 / b */
	double bw_min;			/* data-dependent: the floor */
	double p;			/* sup of one kernel's window mass */
	double sens;			/* sensitivity of U (before rounding) */
	double eta;			/* |computed U - U| bound */
	double gamma;			/* rounding grid of U */
	double sens_eff;		/* sens + 2 eta + gamma: charged */
	double norm;			/* U = norm * (sum of kernel masses) */
	uint64_t cn;			/* EM rate c = cn / 2^DEN_BITS per unit of q */
	double eps_used;		/* 2 sens_eff c / gamma <= eps */
};

/* Work shared by the threads of one release. */
struct job {
	const struct mech *mc;
	float *const *par;		/* par[m][j] */
	size_t nm, np;
	float *out;
	const char *seed;
	uint64_t attempt;
	atomic_size_t next;
	atomic_int err;
};

__attribute__((noreturn)) static void
usage(int status)
{
	FILE *fp = status ? stderr : stdout;

	fputs("usage: kde-publish [-fqV] [-o file] [-S seed] -e eps [-d delta]\n"
	    "                   [--audit-repeat n] [--bandwidth rule] "
	    "[--bw-min b]\n"
	    "                   [--dataset name] [--grid step | --grid-points "
	    "n]\n"
	    "                   [--group ratio --k k] [--group-eps eps] "
	    "[--kmeans-iters n]\n"
	    "                   [--level level] [--public-test file "
	    "--threshold acc\n"
	    "                   --max-retries n] [--range r] [--threads n] "
	    "[--window w]\n"
	    "                   model ...\n", fp);
	if (status == 0)
		fputs("\n"
		    "  -d DELTA               delta of the (eps, delta) total "
		    "printed (default 1e-5)\n"
		    "  -e EPS                 epsilon of each parameter's "
		    "exponential mechanism\n"
		    "                         (the paper's epsilon_j; the total "
		    "composes all of them)\n"
		    "  -f, --force            write to a terminal\n"
		    "  -h, --help             show this help\n"
		    "  -o, --output FILE      write FILE (through a temporary "
		    "file), not stdout\n"
		    "  -q, --quiet            no warnings or summary\n"
		    "  -S, --seed N           reproducible noise: the output is "
		    "NOT private\n"
		    "  -V, --version          show the version\n"
		    "      --audit-repeat N   N independent releases (tests "
		    "only)\n"
		    "      --bandwidth RULE   silverman (default), scott or a "
		    "fixed bandwidth VALUE\n"
		    "      --bw-min B         floor of data-dependent bandwidths "
		    "(default: the grid step)\n"
		    "      --dataset NAME     the protected dataset (default: "
		    "from the inputs)\n"
		    "      --grid STEP        candidate spacing\n"
		    "      --grid-points N    candidates over [-r, r] (default "
		    "201)\n"
		    "      --group RATIO      DP-PGP: group the top RATIO of each "
		    "layer (needs --k)\n"
		    "      --group-eps EPS    epsilon of each grouped parameter's "
		    "Laplace offset\n"
		    "                         (default: -e)\n"
		    "      --k K              DP-PGP: clusters per layer\n"
		    "      --kmeans-iters N   DP-PGP: k-means iterations (default "
		    "10)\n"
		    "      --level N          zstd level of the output (default "
		    "1)\n"
		    "      --max-retries N    resample at most N times while the "
		    "public test fails\n"
		    "      --public-test FILE a public labelled test set (X, y) "
		    "for the quality loop\n"
		    "      --range R          candidates lie in [-R, R] (default "
		    "1)\n"
		    "      --threads N        worker threads (default: the "
		    "processors online)\n"
		    "      --threshold ACC    accept a sample whose test accuracy "
		    "is at least ACC\n"
		    "      --window W         utility window (default: the grid "
		    "step)\n", fp);
	exit(status);
}

/* ---- options ---- */

static void
parse_bandwidth(struct opts *o, const char *arg)
{
	if (strcmp(arg, "silverman") == 0)
		o->bw = BW_SILVERMAN;
	else if (strcmp(arg, "scott") == 0)
		o->bw = BW_SCOTT;
	else {
		char *end;
		double v;

		errno = 0;
		v = strtod(arg, &end);
		if (errno || end == arg || *end != '\0' || !isfinite(v) ||
		    !(v > 0) || v > RANGE_MAX)
			cli_usage_error("invalid --bandwidth '%s': expected "
			    "silverman, scott or a positive bandwidth", arg);
		o->bw = BW_VALUE;
		o->bw_value = v;
	}
}

static void
check_options(struct opts *o)
{
	if (!(o->eps > 0))
		cli_usage_error("-e is required: the epsilon of each "
		    "parameter's exponential mechanism");
	if (o->has_grid && o->has_points)
		cli_usage_error("--grid and --grid-points do not go together");
	if (o->has_grid) {
		double n = floor(2 * o->range / o->step) + 1;
		if (n > MAX_GRID)
			cli_usage_error("--grid %g over [-%g, %g]: %.0f "
			    "candidates, more than %u", o->step, o->range,
			    o->range, n, MAX_GRID);
		o->points = (uint64_t)n;
	} else {
		o->step = 2 * o->range / (double)(o->points - 1);
	}
	if (!o->has_window)
		o->window = o->step;
	if (o->bw == BW_VALUE && o->has_bw_min)
		cli_usage_error("--bw-min applies to silverman and scott");
	if (!o->has_bw_min)
		o->bw_min = o->step;
	if ((o->ratio > 0) != o->has_k)
		cli_usage_error("--group RATIO and --k K go together");
	if (!(o->ratio > 0) && (o->has_geps || o->has_iters))
		cli_usage_error("--group-eps and --kmeans-iters need --group");
	if (!o->has_geps)
		o->group_eps = o->eps;
	if (o->test != NULL && (!o->has_threshold || !o->has_retries))
		cli_usage_error("--public-test needs --threshold and "
		    "--max-retries");
	if (o->test == NULL && (o->has_threshold || o->has_retries))
		cli_usage_error("--threshold and --max-retries need "
		    "--public-test (a test set declared public)");
	if (o->test != NULL && o->audit)
		cli_usage_error("--audit-repeat and --public-test do not go "
		    "together");
}

/* ---- input ---- */

/* Read one model: its parameters (checked finite) and metadata. */
static void
read_model(const char *path, struct nn_model *m, struct ts_meta *meta,
    uint64_t *digest, const char **label)
{
	mcli_read_model(path, m, meta, digest, label);
	for (size_t j = 0; j < m->nparam; j++)
		if (!isfinite(m->param[j]))
			cli_die(EX_DATAERR, "%s: parameter %zu is not finite",
			    *label, j);
}

/* The dataset the models protect: --dataset, or the one dataset marked
 * aggregate (models trained without privacy), or the one raw mark or
 * data.name (dpcli_dataset). */
static const char *
model_dataset(const struct ts_meta *m, const char *given, const char *label)
{
	const char *found;
	int n;

	if (given != NULL)
		return given;
	if ((found = dpcli_aggregate_dataset(m, &n)) != NULL)
		return found;
	if (n > 1)
		cli_die(EX_DATAERR, "%s: several datasets are marked "
		    "'aggregate': name the protected one with --dataset", label);
	return dpcli_dataset(m, NULL, label);
}

/* The partition a model was trained on, if its metadata says. */
static void
model_part(const struct ts_meta *m, const char *dataset, const char *label,
    struct part *p)
{
	char key[16 + LEDGER_MAX_NAME];
	const char *s;

	memset(p, 0, sizeof *p);
	p->label = label;
	switch (part_read(&p->sp, m)) {
	case PART_OK:
		break;
	case PART_NONE:
		return;
	case PART_MIXED:
		s = ts_meta_get(m, PART_MIXED_BY);
		cli_die(EX_DATAERR, "%s: split.part is '%s' (made so by %s): "
		    "the model derives from several parts, or from the whole "
		    "dataset without privacy: each model must depend on one "
		    "part only (and on DP releases), or on no split at all",
		    label, SPLIT_MIXED, s != NULL ? s : "an input");
	case PART_BAD:
		cli_die(EX_DATAERR, "%s: split.part '%s' is not i/n with i < n",
		    label, ts_meta_get(m, "split.part"));
	case PART_NO_PARENT:
		cli_die(EX_DATAERR, "%s: split.part without split.parent: "
		    "not a part written by tns split", label);
	default:
		cli_die(EX_OSERR, "out of memory");
	}
	snprintf(key, sizeof key, "split.raw.%s", dataset);
	s = ts_meta_get(m, key);
	/* A part that was already an aggregate of the dataset when split is
	 * not a disjoint piece of its records. */
	p->has = !(s != NULL && strcmp(s, "aggregate") == 0);
}

/*
 * Whether the models were trained on disjoint parts of one split
 * (lib/dp/parts.h).  Then one record of the dataset reaches one model, and a
 * guarantee about one model more or less (or replaced) is a guarantee
 * about one record.
 * @return NULL when disjoint, else the reason (a static string).
 */
static const char *
disjoint(const struct part *p, size_t n)
{
	static char why[512];
	const struct split_part **pp;
	size_t a, b;
	int rc;

	for (size_t t = 0; t < n; t++)
		if (!p[t].has) {
			snprintf(why, sizeof why, "%s carries no partition id "
			    "(split.part) of a split of the raw dataset",
			    p[t].label);
			return why;
		}
	pp = cli_reallocarray(NULL, n, sizeof *pp);
	for (size_t t = 0; t < n; t++)
		pp[t] = &p[t].sp;
	rc = parts_disjoint(pp, n, &a, &b);
	free(pp);
	if (rc == PARTS_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	if (rc == PARTS_SAME)
		snprintf(why, sizeof why, "%s and %s were trained on the "
		    "same part %" PRIu64 "/%" PRIu64, p[a].label, p[b].label,
		    p[a].sp.i, p[a].sp.n);
	else if (rc != PARTS_DISJOINT)
		snprintf(why, sizeof why, "%s and %s are parts of "
		    "different splits", p[a].label, p[b].label);
	return rc == PARTS_DISJOINT ? NULL : why;
}

/* ---- the mechanism ---- */

/*
 * The constants of the exponential mechanism (see the man page, section
 * SENSITIVITY).  One model's kernel puts mass g(t) in [0, p] into the
 * window of candidate t, p = erf(wmax / (2 sqrt 2 b)) (a window of width
 * wmax centred on the kernel holds the most).
 *  - fixed bandwidth: U(t) = sum over models of g(t); one model more,
 *    less or replaced moves U(t) by at most p: sens = p;
 *  - data-dependent bandwidth b >= bw_min: every kernel changes with b, so
 *    the sum has no small sensitivity; U(t) = (1/M) sum g(t) (the KDE's
 *    window mass, paper eq. 5) lies in [0, p(bw_min)] for both
 *    neighbours: sens = p(bw_min).
 * U is computed within eta, then rounded down to the grid gamma: the
 * rounded scores of two neighbours differ by less than sens + 2 eta +
 * gamma, which is what the mechanism is calibrated to.  The rate c =
 * eps gamma / (2 sens_eff) per unit of q is rounded down to cn / 2^40:
 * the mechanism spends eps_used <= eps.
 */
static void
mech_init(struct mech *mc, const struct opts *o, size_t nm)
{
	double b, z, lg;

	if (kde_grid_init(&mc->g, -o->range, o->step, (size_t)o->points,
	    o->window) != 0)
		cli_usage_error("the grid (--range %g, step %g, --window %g) "
		    "has points that are not distinct floats", o->range,
		    o->step, o->window);
	if (o->bw == BW_VALUE) {
		mc->rule = 0;
		mc->kinv = (float)(1.0 / o->bw_value);
		b = 1.0 / (double)mc->kinv;
		mc->norm = 1;
		mc->eta = 0;
	} else {
		mc->rule = o->bw == BW_SCOTT ? KDE_SCOTT : KDE_SILVERMAN;
		mc->bw_min = o->bw_min;
		/* b >= bw_min gives kinv = fl(1/b) <= fl(1/bw_min). */
		b = 1.0 / (double)(float)(1.0 / o->bw_min);
		mc->norm = 1 / (double)nm;
	}
	if (!(b > 0) || !isfinite(b))
		cli_usage_error("bandwidth %g out of range", b);
	z = mc->g.wmax / (2 * M_SQRT2 * b);
	mc->p = fmin(1, erf(z) * (1 + 1e-12));
	mc->sens = mc->p;
	/* kde_util's bound for m kernels, scaled like U (plus the rounding
	 * of the product by norm). */
	{
		double dm = (double)nm;
		double eta = 2 * dm * KDE_PHI_ERR + (2 * dm * dm + dm) *
		    0x1p-52;
		mc->eta = eta * mc->norm * (1 + 0x1p-50) + 0x1p-60;
	}
	lg = floor(log2(mc->sens)) - 24;
	mc->gamma = ldexp(1, (int)lg);
	mc->sens_eff = (mc->sens + 2 * mc->eta + mc->gamma) * (1 + 0x1p-50);
	{
		double c = o->eps * mc->gamma / (2 * mc->sens_eff);
		double scaled = floor(ldexp(c, DEN_BITS));

		mc->cn = (uint64_t)scaled;
		mc->eps_used = 2 * mc->sens_eff * ldexp((double)mc->cn,
		    -DEN_BITS) / mc->gamma;
	}
}

/* One parameter: its slice x[0..nm) to a published value. */
static int
publish_one(const struct mech *mc, const float *x, size_t nm, double *u,
    uint64_t *q, float *scratch, struct rng *r, float *out)
{
	float kinv = mc->kinv;
	size_t k, k0, k1;
	int rc;

	if (mc->rule) {
		double b = kde_bandwidth(mc->rule, x, nm);
		/* NaN (all equal) and tiny bandwidths take the floor. */
		if (!(b >= mc->bw_min))
			b = mc->bw_min;
		kinv = (float)(1.0 / b);
	}
	(void)kde_util(&mc->g, x, nm, kinv, u, scratch, &k0, &k1);
	/* Outside [k0, k1) every score is exactly 0. */
	for (size_t j = k0; j < k1; j++) {
		double v = floor(u[j] * mc->norm / mc->gamma);
		q[j] = v > 0 ? (uint64_t)v : 0;
	}
	if ((rc = kde_em_sample_range(r, q, mc->g.n, k0, k1, mc->cn, DEN_BITS,
	    &k)) != 0)
		return rc;
	*out = mc->g.t[k];
	return 0;
}

static struct rng *
block_rng(const char *seed, uint64_t attempt, size_t block)
{
	struct rng *r;
	char item[96];

	if (seed == NULL)
		return NULL;
	snprintf(item, sizeof item, "%s/attempt/%" PRIu64 "/block/%zu",
	    WORK_ITEM, attempt, block);
	if (rng_new_seeded(&r, dpcli_seed_arg(seed), item) != 0)
		return NULL;
	return r;
}

static void *
worker(void *arg)
{
	struct job *jb = arg;
	const struct mech *mc = jb->mc;
	size_t nb = (jb->np + BLOCK - 1) / BLOCK, blk;
	float *buf, *x, *scratch;
	double *u;
	uint64_t *q;
	struct rng *own = NULL;

	buf = malloc(jb->nm * TILE * sizeof *buf);
	x = malloc(jb->nm * sizeof *x);
	scratch = malloc(kde_scratch_floats(&mc->g) * sizeof *scratch);
	u = malloc(mc->g.n * sizeof *u);
	q = malloc(mc->g.n * sizeof *q);
	if (buf == NULL || x == NULL || scratch == NULL || u == NULL ||
	    q == NULL) {
		atomic_store(&jb->err, NOISE_E_NOMEM);
		goto out;
	}
	if (jb->seed == NULL && rng_new(&own) != 0) {
		atomic_store(&jb->err, NOISE_E_NOMEM);
		goto out;
	}
	while ((blk = atomic_fetch_add(&jb->next, 1)) < nb &&
	    atomic_load(&jb->err) == 0) {
		size_t j0 = blk * BLOCK, n = jb->np - j0 < BLOCK ?
		    jb->np - j0 : BLOCK;
		struct rng *r = jb->seed ? block_rng(jb->seed, jb->attempt,
		    blk) : own;

		if (r == NULL) {
			atomic_store(&jb->err, NOISE_E_NOMEM);
			break;
		}
		/* Slices by tiles of TILE parameters: the tile of every
		 * model stays in the cache while it is transposed. */
		for (size_t t0 = 0; t0 < n; t0 += TILE) {
			size_t tn = n - t0 < TILE ? n - t0 : TILE;
			int rc = 0;

			for (size_t m = 0; m < jb->nm; m++)
				memcpy(buf + m * TILE, jb->par[m] + j0 + t0,
				    tn * sizeof *buf);
			for (size_t j = 0; j < tn && rc == 0; j++) {
				for (size_t m = 0; m < jb->nm; m++)
					x[m] = buf[m * TILE + j];
				rc = publish_one(mc, x, jb->nm, u, q, scratch,
				    r, jb->out + j0 + t0 + j);
			}
			if (rc != 0) {
				atomic_store(&jb->err, rc);
				break;
			}
		}
		if (jb->seed)
			rng_free(r);
	}
out:
	rng_free(own);
	free(buf);
	free(x);
	free(scratch);
	free(u);
	free(q);
	return NULL;
}

/* DP-PG: every parameter through the exponential mechanism. */
static void
dp_pg(const struct mech *mc, float *const *par, size_t nm, size_t np,
    float *out, const struct opts *o, uint64_t attempt)
{
	struct job jb = { .mc = mc, .par = par, .nm = nm, .np = np,
	    .out = out, .seed = o->seed, .attempt = attempt };
	pthread_t th[MAX_THREADS];
	size_t nt = (size_t)o->threads, started = 0;

	atomic_init(&jb.next, 0);
	atomic_init(&jb.err, 0);
	for (size_t t = 1; t < nt; t++) {
		if (pthread_create(&th[started], NULL, worker, &jb) != 0)
			break;
		started++;
	}
	worker(&jb);
	for (size_t t = 0; t < started; t++)
		pthread_join(th[t], NULL);
	if (atomic_load(&jb.err) != 0)
		dpcli_noise_die(atomic_load(&jb.err));
}

/* ---- DP-PGP ---- */

struct grouping {
	double b;			/* Laplace scale of each offset */
	double gamma;			/* its grid */
	double sens;			/* L1 sensitivity of one mean, charged */
	double eps_used;		/* per grouped parameter */
	size_t nsel;			/* grouped parameters in all */
};

static int
abs_desc(const void *a, const void *b)
{
	float x = fabsf(**(float *const *)a), y = fabsf(**(float *const *)b);

	if (x != y)
		return x < y ? 1 : -1;
	return *(float *const *)a < *(float *const *)b ? -1 :
	    *(float *const *)a > *(float *const *)b;
}

/* The Laplace scale for offsets: the mean of values clipped to [-R, R]
 * moves by at most 2R/M when one model is replaced; the rounding to the
 * noise grid adds gamma (noise_sens_l1). */
static void
group_init(struct grouping *gr, const struct opts *o, size_t nm)
{
	double d = 2 * o->range / (double)nm;

	gr->b = d / o->group_eps;
	for (int i = 0; i < 4; i++) {
		gr->gamma = noise_grid(gr->b);
		gr->sens = noise_sens_l1(d, gr->gamma, 1);
		gr->b = gr->sens / o->group_eps;
	}
	gr->gamma = noise_grid(gr->b);
	gr->sens = noise_sens_l1(d, gr->gamma, 1);
	gr->eps_used = gr->sens / gr->b;
	if (gr->eps_used > o->group_eps * (1 + 1e-12))
		gr->b = gr->sens / o->group_eps * (1 + 1e-9);
	gr->eps_used = gr->sens / gr->b;
}

/*
 * Per layer (the weights and biases of fc<k>): the top ratio of the
 * published values by magnitude (a function of the DP-PG release: free),
 * grouped by k-means on those published values (also free: the release
 * is already private), from centroids evenly spaced over [-R, R]; then
 * each grouped parameter is published as its centroid c minus the
 * Laplace-perturbed offset c - mean_j + Lap(b) (paper eq. 7), i.e. the
 * clipped mean over the models plus Laplace noise.
 */
static void
dp_pgp(const struct grouping *gr, const struct nn_model *shape,
    float *const *par, size_t nm, float *out, const struct opts *o,
    struct rng *r, size_t *nsel_out)
{
	size_t nl = shape->net.nlayers, off = 0, nsel_all = 0;

	for (size_t l = 0; l < nl; l++) {
		size_t nl_par = nn_layer_params(&shape->net.layer[l]);
		size_t nsel = (size_t)ceil(o->ratio * (double)nl_par), kk;
		float **ord;
		double *c, *s, *mean;
		size_t *cnt, *cl;
		int rc;

		if (nsel > nl_par)
			nsel = nl_par;
		if (nsel == 0) {
			off += nl_par;
			continue;
		}
		kk = (size_t)o->k < nsel ? (size_t)o->k : nsel;
		ord = cli_reallocarray(NULL, nl_par, sizeof *ord);
		for (size_t j = 0; j < nl_par; j++)
			ord[j] = out + off + j;
		qsort(ord, nl_par, sizeof *ord, abs_desc);
		c = cli_reallocarray(NULL, kk, sizeof *c);
		s = cli_reallocarray(NULL, kk, sizeof *s);
		cnt = cli_reallocarray(NULL, kk, sizeof *cnt);
		cl = cli_reallocarray(NULL, nsel, sizeof *cl);
		mean = cli_reallocarray(NULL, nsel, sizeof *mean);
		for (size_t i = 0; i < kk; i++)
			c[i] = kk == 1 ? 0 : -o->range + 2 * o->range *
			    (double)i / (double)(kk - 1);
		for (uint64_t it = 0; it <= o->iters; it++) {
			for (size_t i = 0; i < kk; i++) {
				s[i] = 0;
				cnt[i] = 0;
			}
			for (size_t j = 0; j < nsel; j++) {
				double v = *ord[j], bd = INFINITY;
				for (size_t i = 0; i < kk; i++)
					if (fabs(v - c[i]) < bd) {
						bd = fabs(v - c[i]);
						cl[j] = i;
					}
				s[cl[j]] += v;
				cnt[cl[j]]++;
			}
			if (it == o->iters)
				break;
			for (size_t i = 0; i < kk; i++)
				if (cnt[i])
					c[i] = s[i] / (double)cnt[i];
		}
		/* The offsets: o_j = c - mean_j + Lap(b); published c - o_j. */
		for (size_t j = 0; j < nsel; j++) {
			size_t idx = (size_t)(ord[j] - out);
			double sm = 0;
			for (size_t m = 0; m < nm; m++) {
				double v = par[m][idx];
				sm += v < -o->range ? -o->range : v > o->range ?
				    o->range : v;
			}
			mean[j] = c[cl[j]] - sm / (double)nm;
		}
		if ((rc = noise_add_dlaplace(r, mean, nsel, gr->b, 0)) != 0)
			dpcli_noise_die(rc);
		for (size_t j = 0; j < nsel; j++)
			*ord[j] = (float)(c[cl[j]] - mean[j]);
		nsel_all += nsel;
		off += nl_par;
		free(ord);
		free(c);
		free(s);
		free(cnt);
		free(cl);
		free(mean);
	}
	*nsel_out = nsel_all;
}

/* ---- the quality loop ---- */

struct testset {
	float *x;
	int32_t *y;
	size_t n, d;
};

static void
read_test(const char *path, struct testset *ts, struct ts_meta *meta,
    const char *dataset, uint64_t *digest, const char **label)
{
	FILE *fp = cli_open_in(path, label);
	struct ts_reader *r = cli_reader(fp, *label);
	struct tensor *t = NULL;
	size_t nt = 0;
	char key[16 + LEDGER_MAX_NAME];
	const struct tensor *tx = NULL, *ty = NULL;
	const char *s;
	int rc;

	if ((rc = ts_read_all(r, &t, &nt)) != 0)
		cli_rdie(r, rc);
	if (ts_meta_merge(meta, ts_reader_meta(r), "", NULL) != 0)
		cli_die(EX_OSERR, "out of memory");
	snprintf(key, sizeof key, "dp.raw.%s", dataset);
	s = ts_meta_get(meta, "data.name");
	if (ts_meta_get(meta, key) != NULL || (s && strcmp(s, dataset) == 0))
		cli_die(EX_DATAERR, "%s: the test set derives from the "
		    "protected dataset %s: the quality loop needs a test set "
		    "that is public", *label, dataset);
	for (size_t i = 0; i < nt; i++) {
		if (strcmp(t[i].name, "X") == 0)
			tx = &t[i];
		else if (strcmp(t[i].name, "y") == 0)
			ty = &t[i];
	}
	if (tx == NULL || ty == NULL || tx->ndim != 2 || ty->ndim != 1 ||
	    (tx->dtype != TS_F32 && tx->dtype != TS_F64) ||
	    (ty->dtype != TS_I32 && ty->dtype != TS_I64 && ty->dtype != TS_U8)
	    || tx->dims[0] != ty->dims[0] || tx->dims[0] == 0)
		cli_die(EX_DATAERR, "%s: expected features 'X' (f32 or f64, 2 "
		    "dimensions) and labels 'y' (1 dimension) of the same "
		    "number of rows", *label);
	ts->n = (size_t)tx->dims[0];
	ts->d = (size_t)tx->dims[1];
	ts->x = cli_reallocarray(NULL, ts->n * ts->d, sizeof *ts->x);
	ts->y = cli_reallocarray(NULL, ts->n, sizeof *ts->y);
	for (size_t i = 0; i < ts->n * ts->d; i++)
		ts->x[i] = tx->dtype == TS_F32 ? ((float *)tx->data)[i] :
		    (float)((double *)tx->data)[i];
	for (size_t i = 0; i < ts->n; i++)
		ts->y[i] = ty->dtype == TS_I32 ? ((int32_t *)ty->data)[i] :
		    ty->dtype == TS_I64 ? (int32_t)((int64_t *)ty->data)[i] :
		    ((uint8_t *)ty->data)[i];
	*digest = ts_reader_digest(r);
	for (size_t i = 0; i < nt; i++)
		tensor_free(&t[i]);
	free(t);
	ts_reader_close(r);
	cli_close_in(fp);
}

static double
accuracy(const struct nn_model *m, const float *param,
    const struct testset *ts)
{
	struct nn_ws ws;
	size_t K = model_classes(m), right = 0;

	if (nn_ws_init(&ws, &m->net, TEST_ROWS) != 0)
		cli_die(EX_OSERR, "out of memory");
	for (size_t i = 0; i < ts->n; i += TEST_ROWS) {
		size_t n = ts->n - i < TEST_ROWS ? ts->n - i : TEST_ROWS;
		const float *z;

		nn_forward(&m->net, param, &ws, ts->x + i * ts->d, n);
		z = ws.a[m->net.nlayers];
		for (size_t r = 0; r < n; r++) {
			size_t b = 0;
			for (size_t j = 1; j < K; j++)
				if (z[r * K + j] > z[r * K + b])
					b = j;
			right += (int32_t)b == ts->y[i + r];
		}
	}
	nn_ws_free(&ws);
	return (double)right / (double)ts->n;
}

/* ---- accounting ---- */

/*
 * RDP of one parameter's exponential mechanism at order a: pure eps-DP
 * gives min(eps, a eps^2 / 2) (Bun and Steinke 2016), and the exponential
 * mechanism is eps-bounded-range, which gives eps^2 / 8-zCDP (Cesar and
 * Rogers 2021, Lemma 3.2 with Durfee and Rogers 2019): min(eps, a eps^2/8).
 */
static double
rdp_em(double a, double eps)
{
	return fmin(eps, a * eps * eps / 8);
}

struct account {
	double attempts, np, nsel;
	double eps_pg, eps_g, b_g;	/* b_g: Laplace scale / sensitivity */
	double basic, zcdp, eps_rdp, order;
	double *orders, *rdp;
	size_t no;
};

static void
account(struct account *ac, double delta)
{
	const double *ord = rdp_default_orders(&ac->no);

	ac->orders = cli_reallocarray(NULL, ac->no, sizeof *ac->orders);
	ac->rdp = cli_reallocarray(NULL, ac->no, sizeof *ac->rdp);
	for (size_t i = 0; i < ac->no; i++) {
		ac->orders[i] = ord[i];
		ac->rdp[i] = ac->attempts * (ac->np * rdp_em(ord[i],
		    ac->eps_pg) + (ac->nsel > 0 ? ac->nsel *
		    rdp_laplace(ord[i], ac->b_g) : 0));
	}
	ac->basic = ac->attempts * (ac->np * ac->eps_pg + ac->nsel * ac->eps_g);
	ac->zcdp = ac->attempts * (ac->np * ac->eps_pg * ac->eps_pg / 8 +
	    ac->nsel * ac->eps_g * ac->eps_g / 2);
	if (rdp_to_epsilon(ac->orders, ac->rdp, ac->no, delta,
	    RDP_CONV_IMPROVED, &ac->eps_rdp, &ac->order) != 0)
		cli_die(EX_SOFTWARE, "rdp: bad curve");
}

/* ---- main ---- */

/* Audit mode: the releases as the rows of one tensor 'audit' f32
 * [releases, parameters] (the model's parameter order). */
static void
audit_begin(struct ts_writer *w, uint64_t reps, size_t np)
{
	struct tensor t;
	uint64_t dims[2] = { reps, np };
	int rc;

	if (tensor_init(&t, "audit", TS_F32, 2, dims) != 0)
		cli_die(EX_SOFTWARE, "bad tensor header");
	if ((rc = ts_write_begin(w, &t)) != 0)
		cli_wdie(w, rc);
	tensor_free(&t);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "audit-repeat", required_argument, NULL, OPT_AUDIT },
		{ "bandwidth", required_argument, NULL, OPT_BANDWIDTH },
		{ "bw-min", required_argument, NULL, OPT_BW_MIN },
		{ "dataset", required_argument, NULL, OPT_DATASET },
		{ "force", no_argument, NULL, 'f' },
		{ "grid", required_argument, NULL, OPT_GRID },
		{ "grid-points", required_argument, NULL, OPT_GRID_POINTS },
		{ "group", required_argument, NULL, OPT_GROUP },
		{ "group-eps", required_argument, NULL, OPT_GROUP_EPS },
		{ "help", no_argument, NULL, 'h' },
		{ "k", required_argument, NULL, OPT_K },
		{ "kmeans-iters", required_argument, NULL, OPT_KMEANS_ITERS },
		{ "level", required_argument, NULL, OPT_LEVEL },
		{ "max-retries", required_argument, NULL, OPT_MAX_RETRIES },
		{ "output", required_argument, NULL, 'o' },
		{ "public-test", required_argument, NULL, OPT_PUBLIC_TEST },
		{ "quiet", no_argument, NULL, 'q' },
		{ "range", required_argument, NULL, OPT_RANGE },
		{ "seed", required_argument, NULL, 'S' },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ "version", no_argument, NULL, 'V' },
		{ "window", required_argument, NULL, OPT_WINDOW },
		{ NULL, 0, NULL, 0 }
	};
	struct opts o = { .bw = BW_SILVERMAN, .delta = 1e-5, .range = 1,
	    .points = 201, .iters = 10 };
	struct nn_model *models, outm = { 0 };
	struct ts_meta meta = { 0 }, prov = { 0 }, in = { 0 }, tmeta = { 0 };
	struct part *parts;
	struct mech mc = { 0 };
	struct grouping gr = { 0 };
	struct account ac = { 0 };
	struct testset tset = { 0 };
	struct ts_writer *w;
	struct rng *rng;
	float **par, *pub;
	const char *label, *dataset = NULL, *why, *tlabel = NULL;
	char dsbuf[LEDGER_MAX_NAME + 1], arch0[MODEL_MAX_ARCH],
	    arch[MODEL_MAX_ARCH], key[16 + LEDGER_MAX_NAME];
	uint64_t digest, attempts = 0, reps;
	size_t nm, np, nsel = 0;
	double acc = -1;
	int ch, per_record;
	FILE *ofp;

	cli_init(argv[0], argc, argv);
	while ((ch = getopt_long(argc, argv, "d:e:fho:qS:V", longopts, NULL))
	    != -1) {
		switch (ch) {
		case 'd':
			o.delta = dpcli_delta_arg("-d", optarg);
			break;
		case 'e':
			o.eps = dpcli_epsilon_arg("-e", optarg, EPS_MAX);
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
		case OPT_AUDIT:
			o.audit = (uint64_t)cli_ll("--audit-repeat", optarg, 1,
			    MAX_AUDIT);
			break;
		case OPT_BANDWIDTH:
			parse_bandwidth(&o, optarg);
			break;
		case OPT_BW_MIN:
			o.bw_min = cli_double("--bw-min", optarg, 0, RANGE_MAX);
			if (!(o.bw_min > 0))
				cli_usage_error("invalid --bw-min '%s': "
				    "positive", optarg);
			o.has_bw_min = 1;
			break;
		case OPT_DATASET:
			if (ledger_check_dataset(optarg) != NULL)
				cli_usage_error("invalid --dataset '%s': %s",
				    optarg, ledger_check_dataset(optarg));
			o.dataset = optarg;
			break;
		case OPT_GRID:
			o.step = cli_double("--grid", optarg, 0, RANGE_MAX);
			if (!(o.step > 0))
				cli_usage_error("invalid --grid '%s': "
				    "positive", optarg);
			o.has_grid = 1;
			break;
		case OPT_GRID_POINTS:
			o.points = (uint64_t)cli_ll("--grid-points", optarg, 2,
			    MAX_GRID);
			o.has_points = 1;
			break;
		case OPT_GROUP:
			o.ratio = cli_double("--group", optarg, 0, 1);
			if (!(o.ratio > 0))
				cli_usage_error("invalid --group '%s': a ratio "
				    "in (0, 1]", optarg);
			break;
		case OPT_GROUP_EPS:
			o.group_eps = cli_double("--group-eps", optarg, 0,
			    EPS_MAX);
			if (!(o.group_eps > 0))
				cli_usage_error("invalid --group-eps '%s': "
				    "positive", optarg);
			o.has_geps = 1;
			break;
		case OPT_K:
			o.k = (uint64_t)cli_ll("--k", optarg, 1, MAX_K);
			o.has_k = 1;
			break;
		case OPT_KMEANS_ITERS:
			o.iters = (uint64_t)cli_ll("--kmeans-iters", optarg, 0,
			    MAX_KMEANS_ITERS);
			o.has_iters = 1;
			break;
		case OPT_LEVEL:
			o.level = cli_level_arg(optarg);
			break;
		case OPT_MAX_RETRIES:
			o.retries = (uint64_t)cli_ll("--max-retries", optarg, 0,
			    MAX_RETRIES);
			o.has_retries = 1;
			break;
		case OPT_PUBLIC_TEST:
			o.test = optarg;
			break;
		case OPT_RANGE:
			o.range = cli_double("--range", optarg, 0, RANGE_MAX);
			if (!(o.range > 0))
				cli_usage_error("invalid --range '%s': "
				    "positive", optarg);
			break;
		case OPT_THREADS:
			o.threads = (uint64_t)cli_ll("--threads", optarg, 1,
			    MAX_THREADS);
			break;
		case OPT_THRESHOLD:
			o.threshold = cli_double("--threshold", optarg, 0, 1);
			o.has_threshold = 1;
			break;
		case OPT_WINDOW:
			o.window = cli_double("--window", optarg, 0, RANGE_MAX);
			if (!(o.window > 0))
				cli_usage_error("invalid --window '%s': "
				    "positive", optarg);
			o.has_window = 1;
			break;
		default:
			usage(EX_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	cli_set_quiet(o.quiet);
	check_options(&o);
	if (argc < 2)
		cli_usage_error("%s: at least two models are needed (M >= 2)",
		    argc == 0 ? "no model" : "one model");
	if ((uint64_t)argc > MAX_MODELS)
		cli_usage_error("more than %d models", MAX_MODELS);
	if (o.threads == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		o.threads = n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS :
		    (uint64_t)n;
	}
	nm = (size_t)argc;
	for (size_t i = 0; i < nm; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(argv[i], "-") == 0 && strcmp(argv[j], "-") ==
			    0)
				cli_usage_error("the standard input can be read "
				    "only once");

	ofp = cli_out_open(o.output, o.force);
	rng = dpcli_rng(o.seed, WORK_ITEM);

	/* The models: one architecture, their partitions, their ledgers. */
	models = cli_calloc(nm, sizeof *models);
	parts = cli_calloc(nm, sizeof *parts);
	par = cli_reallocarray(NULL, nm, sizeof *par);
	for (size_t i = 0; i < nm; i++) {
		ts_meta_free(&in);
		read_model(argv[i], &models[i], &in, &digest, &label);
		cli_prov_input(&prov, (int)i, label, digest, &in);
		model_arch(&models[i], arch, sizeof arch);
		if (i == 0) {
			memcpy(arch0, arch, sizeof arch);
			snprintf(dsbuf, sizeof dsbuf, "%s",
			    model_dataset(&in, o.dataset, label));
			dataset = dsbuf;
		} else if (strcmp(arch, arch0) != 0) {
			cli_die(EX_DATAERR, "%s: architecture %s, the first "
			    "model %s: the models must share one architecture",
			    label, arch, arch0);
		}
		model_part(&in, dataset, label, &parts[i]);
		par[i] = models[i].param;
		dpcli_carry(&meta, &in, "kde.", NULL, label);
	}
	ts_meta_free(&in);
	np = models[0].nparam;
	why = disjoint(parts, nm);
	per_record = why == NULL;
	snprintf(key, sizeof key, "dp.raw.%s", dataset);
	if (per_record && ts_meta_get(&meta, key) != NULL &&
	    strcmp(ts_meta_get(&meta, key), "aggregate") == 0) {
		/* One record reaches one model: the release is private for
		 * the dataset (formats/tensor-stream.md 10.1.2, last rule). */
		struct ts_meta tmp = { 0 };
		for (size_t i = 0; i < meta.n; i++)
			if (strcmp(meta.kv[i].key, key) != 0)
				cli_meta_set(&tmp, meta.kv[i].key,
				    meta.kv[i].val);
		ts_meta_free(&meta);
		meta = tmp;
	}
	if (o.test != NULL) {
		read_test(o.test, &tset, &tmeta, dataset, &digest, &tlabel);
		cli_prov_input(&prov, (int)nm, tlabel, digest, &tmeta);
		if (tset.d != model_inputs(&models[0]))
			cli_die(EX_DATAERR, "%s: %zu features, the models take "
			    "%zu", tlabel, tset.d, model_inputs(&models[0]));
		dpcli_inherit_side(&meta, &tmeta, tlabel);
	}

	mech_init(&mc, &o, nm);
	if (mc.cn == 0)
		cli_usage_error("-e %g is too small for the rounding of the "
		    "utilities (the rate rounds to 0)", o.eps);
	if (o.ratio > 0)
		group_init(&gr, &o, nm);
	if (!o.quiet && o.bw != BW_VALUE)
		cli_warn("--bandwidth %s depends on the data: the utility's "
		    "sensitivity is p(bw-min) = %.3g, not p(b)/M; the sample "
		    "is close to uniform unless eps is large (use a fixed "
		    "--bandwidth chosen on public data)", o.bw == BW_SCOTT ?
		    "scott" : "silverman", mc.sens);
	if (!per_record)
		cli_warn("the guarantee is per model, not per record of %s: %s",
		    dataset, why);

	{
		size_t wd[NN_MAX_LAYERS + 1], nl = models[0].net.nlayers;
		for (size_t l = 0; l < nl; l++)
			wd[l] = models[0].net.layer[l].in;
		wd[nl] = models[0].net.layer[nl - 1].out;
		if (model_init(&outm, wd, nl) != 0)
			cli_die(EX_OSERR, "out of memory");
	}
	pub = cli_reallocarray(NULL, np, sizeof *pub);
	w = cli_writer(ofp, o.level);
	reps = o.audit ? o.audit : 1;
	if (o.audit)
		audit_begin(w, reps, np);
	for (uint64_t a = 0; a < reps; a++) {
		for (;;) {
			dp_pg(&mc, par, nm, np, pub, &o, attempts);
			if (o.ratio > 0)
				dp_pgp(&gr, &models[0], par, nm, pub, &o, rng,
				    &nsel);
			attempts++;
			if (o.test == NULL)
				break;
			acc = accuracy(&outm, pub, &tset);
			if (!o.quiet)
				fprintf(stderr, "%s: attempt %" PRIu64 ": public "
				    "test accuracy %.4f\n", cli_prog(), attempts,
				    acc);
			if (acc >= o.threshold || attempts > o.retries)
				break;
		}
		if (o.audit) {
			int rc = ts_write_rows(w, pub, 1);
			if (rc != 0)
				cli_wdie(w, rc);
		}
		cli_progress("releases", a + 1, reps);
	}
	cli_progress_done();
	{
		int rc = o.audit ? ts_write_end(w) : (memcpy(outm.param, pub,
		    np * sizeof *pub), model_write(w, &outm));
		if (rc != 0)
			cli_wdie(w, rc);
	}

	/* The account: every attempt the loop could make is charged (the
	 * cap, not the attempts made: the number made depends on the
	 * data). */
	ac.attempts = o.test ? (double)(o.retries + 1) : (double)reps;
	ac.np = (double)np;
	ac.nsel = (double)nsel;
	ac.eps_pg = o.eps;
	ac.eps_g = o.ratio > 0 ? gr.eps_used : 0;
	ac.b_g = o.ratio > 0 ? gr.b / gr.sens : 1;
	account(&ac, o.delta);
	{
		struct ledger_entry e;

		dpcli_entry(&e, rng, dataset, "exponential");
		e.relation = LEDGER_REPLACE_ONE;
		e.epsilon = ac.basic;
		e.norders = ac.no;
		for (size_t i = 0; i < ac.no; i++) {
			e.orders[i] = ac.orders[i];
			e.rdp[i] = ac.rdp[i];
		}
		dpcli_param(&e, "eps_per_parameter", o.eps);
		dpcli_param(&e, "eps_per_parameter_used", mc.eps_used);
		dpcli_param(&e, "parameters", (double)np);
		dpcli_param(&e, "models", (double)nm);
		dpcli_param(&e, "utility_sensitivity", mc.sens);
		dpcli_param(&e, "sensitivity_charged", mc.sens_eff);
		dpcli_param(&e, "grid", mc.gamma);
		dpcli_param(&e, "utility_error", mc.eta);
		dpcli_param(&e, "candidates", (double)mc.g.n);
		dpcli_param(&e, "per_record", per_record);
		dpcli_param(&e, "attempts_charged", ac.attempts);
		if (o.ratio > 0) {
			dpcli_param(&e, "grouped_parameters", (double)nsel);
			dpcli_param(&e, "eps_per_grouped_offset", gr.eps_used);
			dpcli_param(&e, "scale", gr.b);
			dpcli_param(&e, "l1_sensitivity", gr.sens);
		}
		if (o.audit)
			dpcli_param(&e, "audit_releases", (double)o.audit);
		dpcli_release(&meta, &e);
		ts_meta_free(&e.params);
	}
	dpcli_audit_mark(&meta, o.audit);
	if (model_put_meta(&outm, &meta) != 0)
		cli_die(EX_OSERR, "out of memory");
	if (ts_meta_setf(&meta, "kde.models", "%zu", nm) != 0 ||
	    ts_meta_setf(&meta, "kde.parameters", "%zu", np) != 0 ||
	    ts_meta_setf(&meta, "kde.candidates", "%zu", mc.g.n) != 0 ||
	    ts_meta_setf(&meta, "kde.step", "%.17g", o.step) != 0 ||
	    ts_meta_setf(&meta, "kde.range", "%.17g", o.range) != 0 ||
	    ts_meta_setf(&meta, "kde.window", "%.17g", o.window) != 0 ||
	    ts_meta_setf(&meta, "kde.eps_per_parameter", "%.17g", o.eps) != 0
	    || ts_meta_setf(&meta, "kde.eps_basic", "%.17g", ac.basic) != 0 ||
	    ts_meta_setf(&meta, "kde.zcdp_rho", "%.17g", ac.zcdp) != 0 ||
	    ts_meta_setf(&meta, "kde.eps_rdp", "%.17g", ac.eps_rdp) != 0 ||
	    ts_meta_setf(&meta, "kde.delta", "%.17g", o.delta) != 0 ||
	    ts_meta_setf(&meta, "kde.attempts", "%" PRIu64, attempts) != 0)
		cli_die(EX_OSERR, "out of memory");
	cli_meta_set(&meta, "kde.bandwidth", o.bw == BW_SILVERMAN ?
	    "silverman" : o.bw == BW_SCOTT ? "scott" : "value");
	if (o.bw == BW_VALUE && ts_meta_setf(&meta, "kde.bandwidth_value",
	    "%.17g", o.bw_value) != 0)
		cli_die(EX_OSERR, "out of memory");
	cli_meta_set(&meta, "kde.guarantee", per_record ? "record" : "model");
	if (acc >= 0 && ts_meta_setf(&meta, "kde.test_accuracy", "%.17g",
	    acc) != 0)
		cli_die(EX_OSERR, "out of memory");
	cli_prov(&meta);
	if (ts_meta_merge(&meta, &prov, "", NULL) != 0)
		cli_die(EX_OSERR, "out of memory");
	{
		int rc;
		if ((rc = ts_write_meta(w, &meta)) != 0 ||
		    (rc = ts_writer_finish(w)) != 0)
			cli_wdie(w, rc);
	}
	ts_writer_close(w);
	cli_out_commit();

	if (!o.quiet) {
		fprintf(stderr, "%s: %zu models, %zu parameters, %zu "
		    "candidates each; guarantee per %s of %s\n", cli_prog(),
		    nm, np, mc.g.n, per_record ? "record" : "model", dataset);
		fprintf(stderr, "%s: paper's figure (eq. 6, per parameter): "
		    "eps_j = %g\n", cli_prog(), o.eps);
		fprintf(stderr, "%s: honest total over %.0f parameter "
		    "releases x %.0f attempt(s)%s: basic composition eps = "
		    "%.6g; zCDP rho = %.6g (bounded range, eps^2/8 each); "
		    "(eps, delta) = (%.6g, %g)\n", cli_prog(), ac.np,
		    ac.attempts, nsel ? " plus grouped offsets" : "",
		    ac.basic, ac.zcdp, ac.eps_rdp, o.delta);
	}

	for (size_t i = 0; i < nm; i++) {
		model_free(&models[i]);
		part_free(&parts[i].sp);
	}
	free(models);
	free(parts);
	free(par);
	free(pub);
	free(ac.orders);
	free(ac.rdp);
	free(tset.x);
	free(tset.y);
	kde_grid_free(&mc.g);
	model_free(&outm);
	rng_free(rng);
	ts_meta_free(&meta);
	ts_meta_free(&tmeta);
	ts_meta_free(&prov);
	return 0;
}
