/*
 * covest.c: the covariance release of covest (see covest.h).
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "covest.h"
#include "covnoise.h"
#include "fpsum.h"
#include "jgauss.h"
#include "la.h"
#include "noise.h"
#include "noise_fast.h"
#include "rdp.h"
#include "subspace.h"

#define CHUNK_ELEMS (1u << 23)		/* doubles of rows per SYRK call */
#define CHUNK_MIN 256			/* ... but at least this many rows */
#define CHUNK_MAX 4096			/* ... and at most */
#define CHUNK_FIRST 256			/* rows of the first chunk (see accumulate) */
#define NOISE_CHUNK (1u << 18)		/* values noised with one rng */

enum { P_COV = COVEST_COV, P_SUM = COVEST_SUM, P_CNT = COVEST_CNT,
	NPARTS = COVEST_NPARTS };
static const char *const part_name[NPARTS] = { "cov", "sum", "count" };
/* Default budget split of the parts released (renormalised over them). */
static const double default_split[NPARTS] = { 0.8, 0.1, 0.1 };

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

/* The integer noise of one release (covnoise.h), in the order it is
 * drawn: count, sum, then the upper triangle of each block row by row. */
struct draws {
	int64_t cnt[1];
	int64_t *sum;			/* d */
	int64_t *cov;			/* the blocks' upper triangles */
	size_t cap;			/* entries of cov */
	int rc, part;			/* the first failure: NOISE_E_* */
	int rng_rc;			/* ... or an RNG_E_* one */
	double tv;			/* TV of the fast draws (noise_fast.h) */
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
	double tv;			/* TV of its fast draws */
};

struct noise {
	const struct covest *c;
	struct rng *rng;		/* the release's generator */
	struct draws *dr;
	int head;			/* job 0 draws the count and sum */
	const size_t *sizes;		/* the blocks */
	size_t nb;
	struct njob *jobs;
	size_t njobs;
	atomic_size_t next;		/* the next job to claim */
	atomic_size_t done;		/* second moments noised so far */
	size_t total;			/* ... out of */
	pthread_t caller;		/* the thread that reports progress */
	pthread_t th[COVEST_MAX_THREADS];
	int started[COVEST_MAX_THREADS];
};

struct covest {
	struct covest_params p;
	size_t d;
	char msg[256];
	int stream_err;
	size_t *perm;			/* visiting order or partition */
	size_t *sizes;			/* fixed partition (none, random) */
	size_t nb, maxk;		/* blocks, the largest */
	uint64_t ncov;			/* second moments noised at most */
	struct covest_plan pl;
	struct noise_fast *fast[NPARTS];	/* SAMPLER_FAST: per part */
	double tv_drawn;		/* TV of every fast draw so far */
	double *m0;			/* MEAN_FILE */
	size_t *block_of;		/* unsafe per-block clipping */
	struct acc a;
	double *cov_pub;		/* select on public rows */
	struct draws dr;		/* the noise of the current release */
	struct noise early;		/* ... drawn while reading */
	int early_on;
	struct ts_writer *w;
	double *full;			/* d x d scratch (select) */
	double *blk;			/* largest block, k x k scratch */
	double *S_spare;		/* S, when the release may overwrite it */
	double *mean;			/* d */
	size_t *idx, *bsz;		/* per-release partition (select) */
	size_t *ident;			/* 0..d-1 */
	char item[64];			/* work item of the current release */
};

static int
fail(struct covest *c, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof c->msg, fmt, ap);
	va_end(ap);
	c->stream_err = 0;
	return rc;
}

static int
nomem(struct covest *c)
{
	return fail(c, PV_E_NOMEM, "out of memory");
}

static int
rfail(struct covest *c, const struct ts_reader *r, int rc)
{
	snprintf(c->msg, sizeof c->msg, "%s", ts_reader_errmsg(r));
	c->stream_err = 1;
	return rc;
}

static int
wfail(struct covest *c, const struct ts_writer *w, int rc)
{
	snprintf(c->msg, sizeof c->msg, "%s", ts_writer_errmsg(w));
	c->stream_err = 1;
	return rc;
}

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

const char *
covest_part_name(int i)
{
	return i >= 0 && i < NPARTS ? part_name[i] : "?";
}

const char *
covest_errmsg(const struct covest *c)
{
	return c->msg;
}

int
covest_err_stream(const struct covest *c)
{
	return c->stream_err;
}

/* ---- parameters ---- */

void
covest_parts_released(const struct covest_params *p, int rel[NPARTS])
{
	rel[P_COV] = 1;
	rel[P_SUM] = p->mean == COVEST_MEAN_RELEASED;
	/* Under replace-one the neighbours have the same size: the count
	 * is public by the relation itself. */
	rel[P_CNT] = !p->has_count && p->relation == LEDGER_ADD_REMOVE;
}

const char *
covest_check_params(const struct covest_params *p)
{
	static const char *const split_zero[NPARTS] = {
		"invalid --split: the cov is released and needs a positive "
		    "weight",
		"invalid --split: the sum is released and needs a positive "
		    "weight",
		"invalid --split: the count is released and needs a positive "
		    "weight" };
	static const char *const split_unreleased[NPARTS] = {
		"invalid --split: the cov is not released (the count is "
		    "public): give it weight 0",
		"invalid --split: the sum is not released (--mean is not "
		    "released): give it weight 0",
		"invalid --split: the count is not released (the count is "
		    "public): give it weight 0" };
	int rel[NPARTS];

	if (p->has_eps != p->has_delta)
		return "--epsilon and --delta go together";
	if (p->has_eps && p->has_sigma)
		return "--epsilon and --sigma exclude each other";
	if (!p->has_eps && !p->has_sigma)
		return "no privacy parameters: give --epsilon and --delta, "
		    "or --sigma";
	if (p->has_cal && !p->has_eps)
		return "--calibration applies to --epsilon only";
	if (p->has_eps && (!(p->epsilon > 0) || p->epsilon > COVEST_EPS_MAX ||
	    !(p->delta > 0) || !(p->delta < 1)))
		return "--epsilon or --delta out of range";
	if (p->has_sigma && !(p->sigma == 0 || (p->sigma >= COVEST_SIGMA_MIN &&
	    p->sigma <= COVEST_SIGMA_MAX)))
		return "--sigma out of range";
	if (p->has_clip && !(p->clip >= COVEST_CLIP_MIN && p->clip <= COVEST_CLIP_MAX))
		return "--clip out of range";
	if (!p->has_clip && !(p->has_sigma && p->sigma == 0))
		return "--clip is required: without a bound on the rows there "
		    "is no sensitivity";
	if (p->relation != LEDGER_ADD_REMOVE &&
	    p->relation != LEDGER_REPLACE_ONE)
		return "unknown neighbouring relation";
	if (p->mean < COVEST_MEAN_RELEASED || p->mean > COVEST_MEAN_FILE ||
	    p->subspaces < COVEST_SUB_NONE || p->subspaces > COVEST_SUB_FROM ||
	    p->calibration < COVEST_CAL_RDP || p->calibration > COVEST_CAL_AGM)
		return "unknown --mean, --subspaces or --calibration";
	if (p->subspaces == COVEST_SUB_RANDOM && (p->m < 1 ||
	    p->m > COVEST_MAX_FEATURES))
		return "--subspaces random:M needs M from 1 to 16384";
	if (p->select_public && p->subspaces != COVEST_SUB_SELECT)
		return "--select-on needs --subspaces select";
	if (p->unsafe_per_block && (p->subspaces != COVEST_SUB_RANDOM ||
	    !p->has_clip))
		return "--unsafe-test-miscalibrate needs --subspaces random:M "
		    "and --clip";
	if (p->audit && p->has_sigma && p->sigma == 0)
		return "--audit-repeat needs noise";
	if (p->threads < 1 || p->threads > COVEST_MAX_THREADS)
		return "threads out of range";
	/*
	 * A public count is exact: under add/remove neighbours the count is
	 * private (one record more changes it), so releasing it would be no
	 * DP release.  It is sound under replace-one neighbours, which keep
	 * the size: --count-public means replace-one, with the
	 * sensitivities of plan_noise (sqrt(2) C^2 and 2 C).
	 */
	if (p->has_count && p->relation == LEDGER_ADD_REMOVE)
		return "--count-public releases the exact count, which "
		    "add/remove neighbours keep private: it implies "
		    "--neighbours replace-one";
	covest_parts_released(p, rel);
	if (p->has_split)
		for (int i = 0; i < NPARTS; i++) {
			if (!isfinite(p->split[i]) || p->split[i] < 0)
				return "invalid --split: expected three "
				    "non-negative weights A,B,C";
			if (rel[i] && p->split[i] == 0)
				return split_zero[i];
			if (!rel[i] && p->split[i] != 0)
				return split_unreleased[i];
		}
	if (p->has_split && !isfinite(p->split[0] + p->split[1] +
	    p->split[2]))
		/* Issue 15: 1e308,1e308,1e308 divided by an infinite sum
		 * was an internal error (70). */
		return "invalid --split: the weights' sum overflows (they are "
		    "relative: scale them down)";
	return NULL;
}

/* ---- calibration ---- */

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
/* The plan of covest_plan_noise with the noise calibrated at delta dl
 * (--epsilon), without the fast sampler's charge. */
static int
plan_at(struct covest_plan *pl, const struct covest_params *o, size_t d,
    uint64_t ncov, double dl, char *msg, size_t len)
{
	struct jgauss_part jp[NPARTS];
	int rel[NPARTS];
	double wsum = 0, c2 = o->clip * o->clip;
	size_t bad;

	memset(pl, 0, sizeof *pl);
	if (o->has_sigma && o->sigma == 0)
		return 0;
	pl->noisy = 1;
	covest_parts_released(o, rel);
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
	if (!isfinite(pl->fp_margin)) {
		snprintf(msg, len, "--count-public %llu: too many rows for the "
		    "floating-point error bound (at most %llu)",
		    (unsigned long long)o->count_public,
		    (unsigned long long)(FPSUM_MAX_TERMS - 2));
		return PV_E_OPTION;
	}
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
	} else if (o->calibration == COVEST_CAL_AGM) {
		int rc = rdp_agm_sigma(o->epsilon, dl, &pl->z);
		if (rc != 0) {
			snprintf(msg, len, "--epsilon %g --delta %g: no noise "
			    "multiplier: %s", o->epsilon, o->delta,
			    rdp_strerror(rc));
			return PV_E_OPTION;
		}
	} else if (jgauss_calibrate_rdp(o->epsilon, dl, 1, &pl->z) != 0) {
		/* The smallest noise multiplier whose Gaussian RDP curve at
		 * the default orders converts to at most eps at delta (what
		 * rdp-account reports). */
		snprintf(msg, len, "--epsilon %g --delta %g needs a noise "
		    "multiplier above %g", o->epsilon, o->delta, pl->z);
		return PV_E_OPTION;
	}
	for (int i = 0; i < NPARTS; i++)
		jp[i] = (struct jgauss_part){ .w = pl->w[i],
		    .delta2 = pl->delta2[i], .nent = pl->nent[i] };
	/* The recorded curve must not exceed what was asked for, rounding
	 * included (jgauss_plan inflates z until it does not). */
	if (jgauss_plan(jp, NPARTS, pl->z, o->has_sigma ||
	    o->calibration == COVEST_CAL_AGM ? JGAUSS_MU : JGAUSS_RDP,
	    o->epsilon, dl, 1, &pl->mu, &bad) != 0) {
		if (bad >= NPARTS) {
			snprintf(msg, len, "cannot convert the RDP curve");
			return PV_E_NUMERIC;
		}
		snprintf(msg, len, "the noise of the %s is out of range (check "
		    "--clip and --sigma)", part_name[bad]);
		return PV_E_OPTION;
	}
	for (int i = 0; i < NPARTS; i++) {
		pl->sigma[i] = jp[i].sigma;
		pl->grid[i] = jp[i].grid;
		pl->sens[i] = jp[i].sens;
	}
	return 0;
}

/*
 * The fast sampler's total variation (noise_fast.h, "Charging it"): the
 * release with fast noise is within tv = the sum over every value noised
 * of its tau of the release with exact noise, so if that one is (eps,
 * delta)-DP this one is (eps, delta + (1 + e^eps) tv)-DP.  Every part is
 * drawn through the sampler (count, sum, second moments), every release
 * of --audit-repeat too; nent bounds the values of each part.  The charge
 * is taken at the --epsilon asked for, at least NOISE_FAST_EPS_REF (the
 * accountant charges it again at a larger composed epsilon).  @return 0
 * or -1 (no bound).
 */
static int
plan_tv(struct covest_plan *pl, const struct covest_params *o)
{
	double reps = o->audit ? (double)o->audit : 1;

	pl->tv = 0;
	for (int i = 0; i < NPARTS; i++) {
		double g, t;

		pl->tv_sample[i] = 0;
		if (pl->w[i] == 0)
			continue;
		g = noise_grid(pl->sigma[i]);
		if (g == 0)
			return -1;
		t = noise_fast_tv_per_sample(ceil(pl->sigma[i] / g));
		if (!(t >= 0))
			return -1;
		pl->tv_sample[i] = t;
		pl->tv = nextafter(pl->tv + nextafter(t * (double)pl->nent[i] *
		    reps, INFINITY), INFINITY);
	}
	pl->tv_epsilon = noise_fast_tv_epsilon(o->has_eps ? o->epsilon : 0);
	pl->tv_charge = noise_fast_delta_charge(pl->tv_epsilon, pl->tv);
	return pl->tv_charge >= 0 && isfinite(pl->tv_charge) ? 0 : -1;
}

int
covest_plan_noise(struct covest_plan *pl, const struct covest_params *o,
    size_t d, uint64_t ncov, char *msg, size_t len)
{
	double charge = 0;
	int rc;

	/* With --epsilon, the noise is calibrated at delta less the
	 * charge, repeated until the charge of the plan is covered. */
	for (int it = 0; it < 8; it++) {
		double dl = o->delta - charge;

		if (o->has_eps && !(dl > 0)) {
			snprintf(msg, len, "--sampler fast: its charge %g on "
			    "delta exceeds --delta %g (at epsilon %g): use "
			    "--sampler exact", charge, o->delta,
			    pl->tv_epsilon);
			return PV_E_OPTION;
		}
		if ((rc = plan_at(pl, o, d, ncov, dl, msg, len)) != 0)
			return rc;
		if (!pl->noisy || o->sampler != COVEST_SAMPLER_FAST)
			return 0;
		if (plan_tv(pl, o) != 0) {
			snprintf(msg, len, "--sampler fast: no bound on its "
			    "total variation");
			return PV_E_NUMERIC;
		}
		if (!o->has_eps || pl->tv_charge <= charge)
			return 0;
		charge = pl->tv_charge;
	}
	snprintf(msg, len, "--sampler fast: the noise plan does not settle");
	return PV_E_NUMERIC;
}

/* ---- the handle ---- */

int
covest_new(struct covest **out, const struct covest_params *p)
{
	struct covest *c = calloc(1, sizeof *c);

	*out = c;
	if (c == NULL)
		return PV_E_NOMEM;
	c->p = *p;
	snprintf(c->item, sizeof c->item, "%s", COVEST_WORK_ITEM);
	return 0;
}

static int noise_finish(struct noise *, int);

void
covest_free(struct covest *c)
{
	if (c == NULL)
		return;
	if (c->early_on)
		(void)noise_finish(&c->early, c->p.threads);
	free(c->perm);
	free(c->sizes);
	free(c->m0);
	free(c->block_of);
	free(c->a.S);
	free(c->a.s);
	free(c->cov_pub);
	free(c->dr.sum);
	free(c->dr.cov);
	free(c->full);
	free(c->blk);
	free(c->mean);
	free(c->idx);
	free(c->bsz);
	free(c->ident);
	for (int i = 0; i < NPARTS; i++)
		noise_fast_free(c->fast[i]);
	free(c);
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

/* The tensor name of r, checked as rows; d its columns. */
static int
find_rows(struct covest *c, struct ts_reader *r, const char *name,
    struct tensor *hdr, size_t *d)
{
	int rc;

	while ((rc = ts_read_next(r, hdr)) == 1) {
		if (strcmp(hdr->name, name) == 0)
			break;
		tensor_free(hdr);
	}
	if (rc < 0)
		return rfail(c, r, rc);
	if (rc == 0)
		return fail(c, PV_E_FORMAT, "no tensor '%s' (name the rows "
		    "with --tensor)", name);
	if (hdr->ndim != 2)
		rc = fail(c, PV_E_FORMAT, "tensor '%s' has %d dimensions: rows "
		    "need 2", name, hdr->ndim);
	else if (hdr->dtype != TS_F32 && hdr->dtype != TS_F64)
		rc = fail(c, PV_E_FORMAT, "tensor '%s' is %s: covest reads f32 "
		    "or f64", name, ts_dtype_name(hdr->dtype));
	else if (hdr->dims[1] == 0 || hdr->dims[1] > COVEST_MAX_FEATURES)
		rc = fail(c, PV_E_FORMAT, "tensor '%s' has %llu columns: "
		    "covest takes 1 to %d", name,
		    (unsigned long long)hdr->dims[1], COVEST_MAX_FEATURES);
	if (rc < 0) {
		tensor_free(hdr);
		return rc;
	}
	*d = (size_t)hdr->dims[1];
	return 0;
}

int
covest_open_rows(struct covest *c, struct ts_reader *r, const char *name,
    struct tensor *hdr, size_t *d)
{
	int rc = find_rows(c, r, name, hdr, d);

	if (rc != 0)
		return rc;
	c->d = *d;
	c->a.d = *d;
	free(c->perm);
	free(c->sizes);
	c->perm = calloc(*d, sizeof *c->perm);
	c->sizes = calloc(*d, sizeof *c->sizes);
	if (c->perm == NULL || c->sizes == NULL)
		return nomem(c);
	return 0;
}

/* An array of n doubles for the large matrices, in transparent huge
 * pages where the system allows them (fewer page faults and TLB misses in
 * SYRK), or NULL.  Free it with free(3). */
static double *
big_array(size_t n)
{
	size_t bytes, align = (size_t)2 << 20;
	void *p;

	if (n > SIZE_MAX / sizeof(double) - align)
		return NULL;
	bytes = n * sizeof(double);
	if (posix_memalign(&p, align, bytes ? bytes : 1) != 0)
		return NULL;
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
	double *m;

	if (d != 0 && d > SIZE_MAX / d)
		return NULL;
	if ((m = big_array(d * d)) != NULL)
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
static int
accumulate(struct covest *c, struct ts_reader *r, const struct tensor *hdr,
    const struct prep *p, struct acc *a, const char *what)
{
	size_t d = a->d, rows = CHUNK_ELEMS / d, want;
	uint64_t total = hdr->dims[0] == TS_UNKNOWN_ROWS ? 0 : hdr->dims[0];
	struct chunk ch[2];
	int cur = 0, rc = 0;

	if (rows < CHUNK_MIN)
		rows = CHUNK_MIN;
	if (rows > CHUNK_MAX)
		rows = CHUNK_MAX;
	want = rows < CHUNK_FIRST ? rows : CHUNK_FIRST;
	memset(ch, 0, sizeof ch);
	for (int i = 0; i < 2; i++) {
		ch[i] = (struct chunk){ .r = r, .p = p, .dtype = hdr->dtype,
		    .d = d, .rows = rows, .s = a->s };
		/* f32 rows are read into the first half of the buffer and
		 * widened in place. */
		ch[i].x = big_array(rows * d);
		ch[i].raw = ch[i].x;
		if (hdr->dtype == TS_F32)
			ch[i].row = calloc(d, sizeof *ch[i].row);
		if (p->block_of) {
			ch[i].bscale = calloc(p->nb, sizeof *ch[i].bscale);
			ch[i].bss = calloc(p->nb, sizeof *ch[i].bss);
		}
		if (ch[i].x == NULL || (hdr->dtype == TS_F32 &&
		    ch[i].row == NULL) || (p->block_of && (ch[i].bscale ==
		    NULL || ch[i].bss == NULL)))
			rc = nomem(c);
	}
	if (rc == 0) {
		ch[cur].want = want;
		read_chunk(&ch[cur]);
	}
	while (rc == 0 && ch[cur].got > 0) {
		struct chunk *k0 = &ch[cur];
		size_t k = (size_t)k0->got;
		pthread_t th;
		int async;
		double t0;

		want = 2 * want < rows ? 2 * want : rows;
		ch[1 - cur].want = want;
		async = pthread_create(&th, NULL, read_chunk, &ch[1 - cur]) == 0;
		t0 = now();
		la_syrk_acc(k, d, k0->x, a->S);
		a->syrk_secs += now() - t0;
		a->n += k;
		if (c->p.progress)
			c->p.progress(c->p.progress_ctx, what, (double)a->n,
			    (double)total);
		if (async)
			pthread_join(th, NULL);
		else
			read_chunk(&ch[1 - cur]);
		cur = 1 - cur;
	}
	if (rc == 0 && ch[cur].got < 0)
		rc = rfail(c, r, (int)ch[cur].got);
	for (int i = 0; i < 2; i++) {
		a->nonfinite += ch[i].nonfinite;
		free(ch[i].x);
		free(ch[i].row);
		free(ch[i].bscale);
		free(ch[i].bss);
	}
	return rc;
}

/* Read the rest of a stream, so its metadata and digest are complete. */
static int
drain(struct covest *c, struct ts_reader *r)
{
	struct tensor h;
	int rc;

	while ((rc = ts_read_next(r, &h)) == 1)
		tensor_free(&h);
	return rc < 0 ? rfail(c, r, rc) : 0;
}

int
covest_read_mean(struct covest *c, struct ts_reader *r)
{
	size_t d = c->d;
	struct tensor t;
	uint64_t ne;
	int rc;

	if ((rc = ts_read_next(r, &t)) < 0)
		return rfail(c, r, rc);
	if (rc == 0)
		return fail(c, PV_E_FORMAT, "--mean: the stream holds no "
		    "tensor");
	if (t.dtype != TS_F32 && t.dtype != TS_F64)
		rc = fail(c, PV_E_FORMAT, "--mean: tensor '%s' is %s: expected "
		    "f32 or f64", t.name, ts_dtype_name(t.dtype));
	else if (t.ndim == 0 || (t.dims[0] != TS_UNKNOWN_ROWS &&
	    (tensor_elems(&t, &ne) != 0 || ne != d)))
		rc = fail(c, PV_E_FORMAT, "--mean: tensor '%s' must hold the "
		    "%zu values of the mean", t.name, d);
	else if ((rc = ts_read_data(r, &t)) != 0)
		rc = rfail(c, r, rc);
	else if (tensor_elems(&t, &ne) != 0 || ne != d)
		rc = fail(c, PV_E_FORMAT, "--mean: tensor '%s' must hold the "
		    "%zu values of the mean", t.name, d);
	else if ((c->m0 = calloc(d, sizeof *c->m0)) == NULL)
		rc = nomem(c);
	for (size_t j = 0; rc == 0 && j < d; j++) {
		c->m0[j] = t.dtype == TS_F64 ? ((double *)t.data)[j] :
		    ((float *)t.data)[j];
		if (!isfinite(c->m0[j]))
			rc = fail(c, PV_E_FORMAT, "--mean: value %zu is not "
			    "finite", j);
	}
	tensor_free(&t);
	return rc != 0 ? rc : drain(c, r);
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
		if (*p < '0' || *p > '9' || v > COVEST_MAX_FEATURES)
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
 */
static int
read_partition(struct covest *c, struct ts_reader *r)
{
	size_t d = c->d, *perm = c->perm, *sizes = c->sizes;
	int64_t **blk = calloc(d, sizeof *blk);
	size_t *len = calloc(d, sizeof *len), nb = 0, o = 0;
	unsigned char *used = calloc(d, 1);
	struct tensor t;
	int rc;

	if (blk == NULL || len == NULL || used == NULL) {
		rc = nomem(c);
		goto out;
	}
	while ((rc = ts_read_next(r, &t)) == 1) {
		long long id;
		uint64_t k = 0;

		if (strncmp(t.name, "subspace/", 9) != 0) {
			tensor_free(&t);
			continue;
		}
		if ((id = subspace_id(t.name)) < 0)
			rc = fail(c, PV_E_FORMAT, "tensor '%s': expected "
			    "subspace/<i> with a decimal <i>", t.name);
		else if ((size_t)id >= d)
			rc = fail(c, PV_E_FORMAT, "tensor '%s': more blocks "
			    "than the %zu columns of X", t.name, d);
		else if (t.dtype != TS_I64 || t.ndim != 1)
			rc = fail(c, PV_E_FORMAT, "tensor '%s' is %s with %d "
			    "dimensions: expected an i64 vector of columns",
			    t.name, ts_dtype_name(t.dtype), t.ndim);
		else if (t.dims[0] != TS_UNKNOWN_ROWS && t.dims[0] > d)
			rc = fail(c, PV_E_FORMAT, "tensor '%s' has %llu "
			    "features, X only %zu columns", t.name,
			    (unsigned long long)t.dims[0], d);
		else if ((rc = ts_read_data(r, &t)) != 0)
			rc = rfail(c, r, rc);
		else if ((k = t.dims[0]) == 0 || k > d)
			rc = fail(c, PV_E_FORMAT, "tensor '%s' has %llu "
			    "features: expected 1 to %zu", t.name,
			    (unsigned long long)k, d);
		else if (blk[id] != NULL)
			rc = fail(c, PV_E_FORMAT, "tensor '%s' appears twice",
			    t.name);
		else if ((blk[id] = calloc((size_t)k, sizeof **blk)) == NULL)
			rc = nomem(c);
		if (rc != 0) {
			tensor_free(&t);
			goto out;
		}
		memcpy(blk[id], t.data, (size_t)k * sizeof **blk);
		len[id] = (size_t)k;
		if ((size_t)id >= nb)
			nb = (size_t)id + 1;
		tensor_free(&t);
	}
	if (rc < 0) {
		rc = rfail(c, r, rc);
		goto out;
	}
	if (nb == 0) {
		rc = fail(c, PV_E_FORMAT, "no subspace/<i> tensor (expected a "
		    "covest or psdshrink stream)");
		goto out;
	}
	for (size_t i = 0; i < nb; i++) {
		if (blk[i] == NULL) {
			rc = fail(c, PV_E_FORMAT, "no tensor 'subspace/%zu' "
			    "(the blocks are numbered from 0 without gaps)", i);
			goto out;
		}
		for (size_t j = 0; j < len[i]; j++) {
			int64_t f = blk[i][j];

			if (f < 0 || (uint64_t)f >= d) {
				rc = fail(c, PV_E_FORMAT, "subspace/%zu names "
				    "feature %lld, but X has %zu columns", i,
				    (long long)f, d);
				goto out;
			}
			if (used[f]) {
				rc = fail(c, PV_E_FORMAT, "feature %lld is in "
				    "two subspaces", (long long)f);
				goto out;
			}
			used[f] = 1;
			perm[o++] = (size_t)f;
		}
		sizes[i] = len[i];
	}
	for (size_t j = 0; j < d; j++)
		if (!used[j])
			perm[o++] = j;
	c->nb = nb;
	rc = 0;
out:
	for (size_t i = 0; blk && i < d; i++)
		free(blk[i]);
	free(blk);
	free(len);
	free(used);
	return rc;
}

int
covest_partition(struct covest *c, struct rng *rng, struct ts_reader *from)
{
	const struct covest_params *o = &c->p;
	size_t d = c->d;
	int rc;

	c->nb = 1;
	if (o->subspaces == COVEST_SUB_NONE) {
		for (size_t j = 0; j < d; j++)
			c->perm[j] = j;
		c->sizes[0] = d;
	} else if (o->subspaces == COVEST_SUB_FROM) {
		if ((rc = read_partition(c, from)) != 0)
			return rc;
	} else {
		struct rng *srng = NULL;

		/* A public partition seed (random:M:SEED) or --seed gives
		 * the same partition: the generator of the work item
		 * covest/subspaces. */
		if ((o->has_part_seed || o->seeded) &&
		    rng_new_seeded(&srng, o->has_part_seed ? o->part_seed :
		    o->seed, COVEST_WORK_ITEM "/subspaces") != 0)
			return nomem(c);
		subspace_permute(srng ? srng : rng, d, c->perm);
		rng_free(srng);
	}
	if (o->subspaces == COVEST_SUB_RANDOM) {
		if (o->m > d)
			return fail(c, PV_E_OPTION, "%zu subspaces of %zu "
			    "features", o->m, d);
		c->nb = o->m;
		(void)subspace_equal_sizes(d, c->nb, c->sizes);
		subspace_sort_blocks(c->perm, c->sizes, c->nb);
	}
	c->ncov = 0;
	c->maxk = 0;
	if (o->subspaces == COVEST_SUB_SELECT) {
		/* Any partition noises at most the whole triangle. */
		c->ncov = (uint64_t)d * (d + 1) / 2;
		c->maxk = d;
	} else {
		for (size_t i = 0; i < c->nb; i++) {
			c->ncov += (uint64_t)c->sizes[i] * (c->sizes[i] + 1) /
			    2;
			c->maxk = c->sizes[i] > c->maxk ? c->sizes[i] : c->maxk;
		}
	}
	return 0;
}

size_t
covest_nblocks(const struct covest *c)
{
	return c->nb;
}

int
covest_plan(struct covest *c)
{
	int rc = covest_plan_noise(&c->pl, &c->p, c->d, c->ncov, c->msg,
	    sizeof c->msg);

	c->stream_err = 0;
	if (rc != 0 || !c->pl.noisy || c->p.sampler != COVEST_SAMPLER_FAST)
		return rc;
	/* One handle per part, shared read-only by the noise threads; its
	 * tau must be the one planned and charged. */
	for (int i = 0; i < NPARTS; i++) {
		if (c->pl.w[i] == 0)
			continue;
		rc = noise_fast_new_grid(&c->fast[i], c->pl.sigma[i]);
		if (rc == NOISE_E_NOMEM)
			return nomem(c);
		if (rc != 0)
			return fail(c, PV_E_NUMERIC, "noise of the %s: %s",
			    part_name[i], noise_strerror(rc));
		if (!(noise_fast_tv(c->fast[i]) <= c->pl.tv_sample[i]))
			return fail(c, PV_E_NUMERIC, "noise of the %s: the "
			    "sampler's TV %g exceeds the planned %g",
			    part_name[i], noise_fast_tv(c->fast[i]),
			    c->pl.tv_sample[i]);
	}
	return 0;
}

const struct covest_plan *
covest_get_plan(const struct covest *c)
{
	return &c->pl;
}

/* The preparation of a row: clip to C less the float margin of its
 * norm, after the public mean. */
static struct prep
row_prep(const struct covest *c)
{
	struct prep p = { .clip = c->p.has_clip ? c->p.clip : 0, .m0 = c->m0,
	    .shrink = 1 - (double)(c->d + 8) * 0x1p-52 };

	return p;
}

/* ---- noise ---- */

/* Room in dr->cov for the blocks' upper triangles. */
static int
draws_reserve(struct draws *dr, const size_t *sizes, size_t nb)
{
	size_t need = 0;

	for (size_t i = 0; i < nb; i++)
		need += sizes[i] * (sizes[i] + 1) / 2;
	if (need > dr->cap) {
		free(dr->cov);
		dr->cap = 0;
		if ((dr->cov = calloc(need, sizeof *dr->cov)) == NULL)
			return PV_E_NOMEM;
		dr->cap = need;
	}
	return 0;
}

/* Cut the noise of a release into jobs (dr->cov must have room). */
static int
noise_plan(struct noise *nz, const struct covest *c, struct rng *rng,
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
	nz->caller = pthread_self();
	for (size_t i = 0; i < nb; i++) {
		size_t ne = sizes[i] * (sizes[i] + 1) / 2;
		if (ne > NOISE_CHUNK)
			njobs += ne / NOISE_CHUNK + 1;
	}
	if ((nz->jobs = calloc(njobs, sizeof *nz->jobs)) == NULL)
		return PV_E_NOMEM;
	nz->njobs = 1;
	for (size_t i = 0; i < nb; i++) {
		size_t k = sizes[i], ne = k * (k + 1) / 2, a = 0, run = 0;

		if (ne <= NOISE_CHUNK) {
			off += ne;
			nz->jobs[0].n += ne;	/* job 0 draws them */
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
	nz->total = off;
	atomic_init(&nz->next, 0);
	atomic_init(&nz->done, 0);
	return 0;
}

/* Progress of the noise step (the entries noised: a count of the shape,
 * never a value), from the thread that planned it, and not within the
 * releases of --audit-repeat (the tool shows those). */
static void
noise_progress(struct noise *nz, size_t done)
{
	const struct covest *c = nz->c;

	if (c->p.progress != NULL && !c->p.audit && nz->total > 0 &&
	    pthread_equal(pthread_self(), nz->caller))
		c->p.progress(c->p.progress_ctx, "noise: entries noised",
		    (double)done, (double)nz->total);
}

/* Draw n values of part's noise into k from r with the chosen sampler;
 * the fast one adds its TV to *tv. */
static int
draw(const struct covest *c, int part, struct rng *r, int64_t *k, size_t n,
    double *tv)
{
	if (c->fast[part] != NULL)
		return covnoise_draw_fast(c->fast[part], r, k, n, tv);
	return covnoise_draw(r, c->pl.sigma[part], k, n);
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
	const struct covest_plan *pl = &nz->c->pl;
	struct draws *dr = nz->dr;
	size_t off = 0;
	int rc;

	if (nz->head) {
		if (pl->w[P_CNT] > 0 && (rc = draw(nz->c, P_CNT, nz->rng,
		    dr->cnt, 1, &jb->tv)) != 0)
			job_fail(jb, P_CNT, rc);
		if (jb->rc == 0 && pl->w[P_SUM] > 0 && (rc = draw(nz->c,
		    P_SUM, nz->rng, dr->sum, nz->c->d, &jb->tv)) != 0)
			job_fail(jb, P_SUM, rc);
	}
	for (size_t i = 0; i < nz->nb && jb->rc == 0; i++) {
		size_t ne = nz->sizes[i] * (nz->sizes[i] + 1) / 2;

		if (ne <= NOISE_CHUNK && (rc = draw(nz->c, P_COV, nz->rng,
		    dr->cov + off, ne, &jb->tv)) != 0)
			job_fail(jb, P_COV, rc);
		off += ne;
	}
}

static void
job_run(struct noise *nz, struct njob *jb)
{
	const struct covest *c = nz->c;
	struct rng *r;
	int rc;

	if (c->p.seeded) {
		char item[128];

		snprintf(item, sizeof item, "%s/cov/%zu/%zu", c->item,
		    jb->block, jb->run);
		rc = rng_new_seeded(&r, c->p.seed, item);
	} else {
		rc = rng_new(&r);
	}
	if (rc != 0) {
		jb->rng_rc = rc;
		return;
	}
	if ((rc = draw(c, P_COV, r, jb->dst, jb->n, &jb->tv)) != 0)
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
		noise_progress(nz, atomic_fetch_add(&nz->done,
		    nz->jobs[j].n) + nz->jobs[j].n);
	}
	return NULL;
}

/* Start a worker in each slot from..threads-1 not started yet (slot 0 is
 * the calling thread's), as long as jobs are left. */
static void
noise_spawn(struct noise *nz, int from, int threads)
{
	for (int t = from; t < threads && t < COVEST_MAX_THREADS; t++)
		if (!nz->started[t] && atomic_load(&nz->next) < nz->njobs)
			nz->started[t] = pthread_create(&nz->th[t], NULL,
			    noise_work, nz) == 0;
}

/* Run the remaining jobs with threads threads in all (this one included),
 * wait for every worker, and record the first failure in job order into
 * nz->dr (see check_draws). */
static int
noise_finish(struct noise *nz, int threads)
{
	struct draws *dr = nz->dr;

	noise_spawn(nz, 1, threads);
	noise_progress(nz, atomic_load(&nz->done));
	noise_work(nz);
	for (int t = 0; t < COVEST_MAX_THREADS; t++)
		if (nz->started[t])
			pthread_join(nz->th[t], NULL);
	noise_progress(nz, nz->total);
	for (size_t j = 0; j < nz->njobs; j++) {
		const struct njob *jb = &nz->jobs[j];

		dr->tv += jb->tv;
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
	nz->njobs = 0;
	return 0;
}

/* Stop on a failed draw: nothing has been released. */
static int
check_draws(struct covest *c, struct draws *dr)
{
	c->tv_drawn += dr->tv;
	dr->tv = 0;
	if (dr->rng_rc == RNG_E_NOMEM || dr->rc == NOISE_E_NOMEM)
		return nomem(c);
	if (dr->rng_rc != 0)
		return fail(c, PV_E_ENTROPY, "no secure randomness: %s",
		    rng_strerror(dr->rng_rc));
	if (dr->rc != 0)
		return fail(c, PV_E_NOISE, "noise of the %s: %s: nothing was "
		    "released", part_name[dr->part], noise_strerror(dr->rc));
	return 0;
}

/* Draw the noise of a release with the handle's threads, and check it. */
static int
draw_all(struct covest *c, struct rng *rng, struct draws *dr, int head,
    const size_t *sizes, size_t nb)
{
	struct noise nz;

	if (noise_plan(&nz, c, rng, dr, head, sizes, nb) != 0)
		return nomem(c);
	noise_finish(&nz, c->p.threads);
	return check_draws(c, dr);
}

static int
apply(struct covest *c, int part, double *x, size_t n, const int64_t *k)
{
	int rc = covnoise_apply(x, n, c->pl.sigma[part], k);

	if (rc != 0)
		return fail(c, PV_E_NOISE, "noise of the %s: %s: nothing was "
		    "released", part_name[part], noise_strerror(rc));
	return 0;
}

/* Add the drawn noise to the upper triangle of the k x k block b, whose
 * draws start at *off. */
static int
noise_upper(struct covest *c, double *b, size_t k, size_t *off)
{
	int rc;

	if (c->pl.noisy)
		for (size_t a = 0; a < k; a++) {
			if ((rc = apply(c, P_COV, b + a * k + a, k - a,
			    c->dr.cov + *off)) != 0)
				return rc;
			*off += k - a;
		}
	return 0;
}

int
covest_accumulate(struct covest *c, struct ts_reader *r,
    const struct tensor *hdr, struct rng *rng)
{
	const struct covest_params *o = &c->p;
	struct prep p = row_prep(c);
	size_t d = c->d;
	int rc;

	if (o->unsafe_per_block) {
		size_t off = 0;

		if ((c->block_of = calloc(d, sizeof *c->block_of)) == NULL)
			return nomem(c);
		for (size_t i = 0; i < c->nb; off += c->sizes[i++])
			for (size_t j = 0; j < c->sizes[i]; j++)
				c->block_of[c->perm[off + j]] = i;
		p.block_of = c->block_of;
		p.nb = c->nb;
	}
	if ((c->a.S = zeroed_square(d)) == NULL)
		return nomem(c);
	if (o->mean == COVEST_MEAN_RELEASED &&
	    (c->a.s = calloc(d, sizeof *c->a.s)) == NULL)
		return nomem(c);
	/*
	 * The noise of a single release does not depend on the data: when
	 * BLAS leaves a core free, its jobs start there while the rows are
	 * accumulated, and once they are, every core takes the jobs left
	 * (else it is all drawn after, by every core).  The draws, and so
	 * the output, are the same either way.
	 */
	if (c->pl.noisy) {
		const size_t *esz = NULL;
		size_t enb = 0;
		int bt = la_blas_threads();

		if ((c->dr.sum = calloc(d, sizeof *c->dr.sum)) == NULL)
			return nomem(c);
		if (o->subspaces == COVEST_SUB_SELECT && !o->select_public) {
			esz = &c->d;
			enb = 1;
		} else if (o->subspaces != COVEST_SUB_SELECT) {
			esz = c->sizes;
			enb = c->nb;
		}
		if (draws_reserve(&c->dr, esz, enb) != 0)
			return nomem(c);
		if (!o->audit && bt < o->threads) {
			/* One core for BLAS's threads, one for the reader. */
			int helpers = o->threads - bt - 1;

			if (noise_plan(&c->early, c, rng, &c->dr, 1, esz, enb)
			    != 0)
				return nomem(c);
			c->early_on = 1;
			noise_spawn(&c->early, 1, 1 + (helpers > 1 ? helpers :
			    1));
		}
	}
	if ((rc = accumulate(c, r, hdr, &p, &c->a, "rows")) != 0 ||
	    (rc = drain(c, r)) != 0)
		return rc;
	if (o->has_count && c->a.n != o->count_public)
		return fail(c, PV_E_FORMAT, "tensor '%s' does not have the "
		    "--count-public %llu rows", hdr->name,
		    (unsigned long long)o->count_public);
	/* The float margin charged holds for at most rows_bound rows. */
	if (c->pl.noisy && (double)c->a.n > c->pl.rows_bound)
		return fail(c, PV_E_FORMAT, "tensor '%s' has more than %.0f "
		    "rows, the public bound of the floating-point error "
		    "charged to the sensitivity (declare the count with "
		    "--count-public)", hdr->name, c->pl.rows_bound);
	return 0;
}

/* The covariance of the public rows of --select-on, prepared as the
 * private rows are and centred as the output is. */
int
covest_select_on(struct covest *c, struct ts_reader *r, const char *name)
{
	struct tensor hdr;
	struct prep p = row_prep(c);
	struct acc a = { .d = c->d };
	size_t d = c->d, dp;
	double n;
	int rc;

	if ((rc = find_rows(c, r, name, &hdr, &dp)) != 0)
		return rc;
	if (dp != d) {
		tensor_free(&hdr);
		return fail(c, PV_E_FORMAT, "--select-on: tensor '%s' has %zu "
		    "columns, the input %zu", name, dp, d);
	}
	a.S = zeroed_square(d);
	a.s = calloc(d, sizeof *a.s);
	if (a.S == NULL || a.s == NULL)
		rc = nomem(c);
	if (rc == 0)
		rc = accumulate(c, r, &hdr, &p, &a, "public rows");
	tensor_free(&hdr);
	if (rc == 0)
		rc = drain(c, r);
	if (rc == 0 && a.n == 0)
		rc = fail(c, PV_E_FORMAT, "--select-on: tensor '%s' has no "
		    "rows", name);
	if (rc != 0) {
		free(a.S);
		free(a.s);
		return rc;
	}
	la_sym_fill(d, a.S);
	n = (double)a.n;
	for (size_t i = 0; i < d; i++)
		for (size_t j = 0; j < d; j++) {
			a.S[i * d + j] /= n;
			if (c->p.mean == COVEST_MEAN_RELEASED)
				a.S[i * d + j] -= a.s[i] / n * (a.s[j] / n);
		}
	c->a.syrk_secs += a.syrk_secs;
	free(a.s);
	c->cov_pub = a.S;
	return 0;
}

int
covest_finish_reading(struct covest *c)
{
	if (!c->early_on)
		return 0;
	c->early_on = 0;
	noise_finish(&c->early, c->p.threads);
	return check_draws(c, &c->dr);
}

void
covest_stats(const struct covest *c, uint64_t *n, uint64_t *nonfinite,
    double *syrk_secs)
{
	*n = c->a.n;
	*nonfinite = c->a.nonfinite;
	*syrk_secs = c->a.syrk_secs;
}

/* ---- releases ---- */

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

static int
put_tensor(struct covest *c, const char *base, uint64_t rep, int dtype,
    int ndim, const uint64_t *dims, void *data, const struct ts_meta *meta)
{
	struct tensor t;
	char name[TS_MAX_NAME + 1];
	int rc;

	if (c->p.audit)
		snprintf(name, sizeof name, "%s/%llu", base,
		    (unsigned long long)rep);
	else
		snprintf(name, sizeof name, "%s", base);
	if (tensor_init(&t, name, dtype, ndim, dims) != 0)
		return fail(c, PV_E_USAGE, "bad tensor header for '%s'", name);
	if (meta && ts_meta_merge(&t.meta, meta, "", NULL) != 0) {
		tensor_free(&t);
		return nomem(c);
	}
	t.data = data;
	if ((rc = ts_write_tensor(c->w, &t)) != 0)
		rc = wfail(c, c->w, rc);
	t.data = NULL;
	tensor_free(&t);
	return rc;
}

/* Second moments to covariance, with released values only:
 * C = S / n - m m^T (ix: the block's features). */
static void
finish_cov(const struct covest *c, double *b, const size_t *ix, size_t k,
    double n)
{
	int centre = c->p.mean == COVEST_MEAN_RELEASED;

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

/* One block of write_blocks: ix its k features, bk its matrix. */
static int
write_block(struct covest *c, uint64_t rep, size_t i, const size_t *ix,
    size_t k, double *bk, const struct ts_meta *cm)
{
	int64_t *sub = calloc(k, sizeof *sub);
	double *mv = NULL;
	uint64_t dims[2];
	char base[64];
	int rc;

	if (sub == NULL)
		return nomem(c);
	for (size_t a = 0; a < k; a++)
		sub[a] = (int64_t)ix[a];
	dims[0] = k;
	snprintf(base, sizeof base, "subspace/%zu", i);
	rc = put_tensor(c, base, rep, TS_I64, 1, dims, sub, NULL);
	if (rc == 0 && c->p.mean != COVEST_MEAN_ZERO) {
		const double *m = c->p.mean == COVEST_MEAN_FILE ? c->m0 :
		    c->mean;

		if ((mv = calloc(k, sizeof *mv)) == NULL) {
			rc = nomem(c);
		} else {
			for (size_t a = 0; a < k; a++)
				mv[a] = m[ix[a]];
			snprintf(base, sizeof base, "mean/%zu", i);
			rc = put_tensor(c, base, rep, TS_F64, 1, dims, mv,
			    NULL);
		}
	}
	if (rc == 0) {
		dims[1] = k;
		snprintf(base, sizeof base, "cov/%zu", i);
		rc = put_tensor(c, base, rep, TS_F64, 2, dims, bk, cm);
	}
	free(sub);
	free(mv);
	return rc;
}

/* Write the blocks: from the accumulated second moments src (noise and
 * centring still to come), or from a released covariance (src_is_cov). */
static int
write_blocks(struct covest *c, uint64_t rep, const size_t *idx,
    const size_t *sizes, size_t nb, const double *src, int src_is_cov,
    double n)
{
	struct ts_meta cm = { 0 };
	size_t o = 0, d = c->d, off = 0;
	int rc = 0;

	if (ts_meta_set(&cm, "cov.centred", c->p.mean != COVEST_MEAN_ZERO ?
	    "true" : "false") != 0 ||
	    ts_meta_setf(&cm, "cov.divisor", "%.17g", n) != 0 ||
	    ts_meta_setf(&cm, "cov.noise_sd", "%.17g", c->pl.noisy ?
	    c->pl.sigma[P_COV] / n : 0) != 0 ||
	    (c->p.has_clip && ts_meta_setf(&cm, "cov.clip", "%.17g",
	    c->p.clip) != 0)) {
		ts_meta_free(&cm);
		return nomem(c);
	}
	for (size_t i = 0; i < nb && rc == 0; i++) {
		const size_t *ix = idx + o;
		size_t k = sizes[i];
		int contig = ix[k - 1] >= ix[0] && ix[k - 1] - ix[0] == k - 1 &&
		    ascending(ix, k);
		double *bk;

		/* A single release of all features in order finishes S in
		 * place; else the block is copied out. */
		if (src == c->S_spare && contig && k == d) {
			bk = c->S_spare;
		} else {
			if (c->blk == NULL && (c->blk = big_array(c->maxk *
			    c->maxk)) == NULL) {
				rc = nomem(c);
				break;
			}
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
			if ((rc = noise_upper(c, bk, k, &off)) != 0)
				break;
			finish_cov(c, bk, ix, k, n);
		}
		mirror(k, bk);
		rc = write_block(c, rep, i, ix, k, bk, &cm);
		o += k;
	}
	ts_meta_free(&cm);
	return rc;
}

/* Forward selection on cov: the blocks into c->idx and c->bsz.  The noise
 * error of a feature is the noise sd of one covariance entry; on the
 * released (noisy) covariance, residual variances below it count as 0. */
static int
select_blocks(struct covest *c, const double *cov, double n, int noisy,
    size_t *nb)
{
	double tau = c->pl.noisy ? c->pl.sigma[P_COV] / n : 0;
	int rc;

	rc = subspace_forward_select(c->d, cov, c->perm, tau, noisy ? tau : 0,
	    c->p.maxk, c->bsz, nb);
	if (rc == SUBSPACE_E_NOMEM)
		return nomem(c);
	if (rc != 0)
		return fail(c, PV_E_NUMERIC, "forward selection: the "
		    "covariance is not finite");
	memcpy(c->idx, c->perm, c->d * sizeof *c->idx);
	subspace_sort_blocks(c->idx, c->bsz, *nb);
	return 0;
}

/* The release's scratch, on the first release. */
static int
release_scratch(struct covest *c)
{
	size_t d = c->d;

	if (c->mean != NULL)
		return 0;
	/* Only a single release may overwrite S (select reads it again). */
	if (!c->p.audit && c->p.subspaces != COVEST_SUB_SELECT)
		c->S_spare = c->a.S;
	if ((c->mean = calloc(d, sizeof *c->mean)) == NULL)
		return nomem(c);
	if (c->p.subspaces == COVEST_SUB_SELECT) {
		c->ident = calloc(d, sizeof *c->ident);
		c->idx = calloc(d, sizeof *c->idx);
		c->bsz = calloc(d, sizeof *c->bsz);
		if (c->ident == NULL || c->idx == NULL || c->bsz == NULL)
			return nomem(c);
		for (size_t j = 0; j < d; j++)
			c->ident[j] = j;
		if (c->cov_pub == NULL && (c->full = big_array(d * d)) == NULL)
			return nomem(c);
	}
	return 0;
}

/*
 * One release: the noise of the count, the sum and the second moments, in
 * this order (drawn already when drawn is set: see covest_accumulate);
 * then everything else is post-processing of released values.
 */
static int
release(struct covest *c, struct rng *rng, uint64_t rep, int drawn)
{
	const struct covest_plan *pl = &c->pl;
	const struct acc *a = &c->a;
	struct draws *dr = &c->dr;
	size_t d = c->d, full = d, nb;
	double n;
	int rc;

	/* With --select-on the blocks depend on the released count: their
	 * noise is drawn once they are known.  Else the blocks are known, or
	 * the whole matrix is noised (select). */
	if (pl->noisy && !drawn) {
		if (c->p.subspaces == COVEST_SUB_SELECT && c->cov_pub)
			rc = draw_all(c, rng, dr, 1, NULL, 0);
		else if (c->p.subspaces == COVEST_SUB_SELECT)
			rc = draw_all(c, rng, dr, 1, &full, 1);
		else
			rc = draw_all(c, rng, dr, 1, c->sizes, c->nb);
		if (rc != 0)
			return rc;
	}
	n = c->p.has_count ? (double)c->p.count_public : (double)a->n;
	if (pl->w[P_CNT] > 0 && (rc = apply(c, P_CNT, &n, 1, dr->cnt)) != 0)
		return rc;
	n = fmax(n, 1);			/* post-processing */
	if (c->p.mean == COVEST_MEAN_RELEASED) {
		memcpy(c->mean, a->s, d * sizeof *c->mean);
		if (pl->w[P_SUM] > 0 && (rc = apply(c, P_SUM, c->mean, d,
		    dr->sum)) != 0)
			return rc;
		for (size_t j = 0; j < d; j++)
			c->mean[j] /= n;
	}
	if ((rc = put_tensor(c, "count", rep, TS_F64, 0, NULL, &n, NULL)) != 0)
		return rc;
	if (c->p.subspaces != COVEST_SUB_SELECT)
		return write_blocks(c, rep, c->perm, c->sizes, c->nb, a->S, 0,
		    n);
	if (c->cov_pub) {
		if ((rc = select_blocks(c, c->cov_pub, n, 0, &nb)) != 0)
			return rc;
		if (pl->noisy) {
			if (draws_reserve(dr, c->bsz, nb) != 0)
				return nomem(c);
			if ((rc = draw_all(c, rng, dr, 0, c->bsz, nb)) != 0)
				return rc;
		}
		return write_blocks(c, rep, c->idx, c->bsz, nb, a->S, 0, n);
	}
	/* The whole matrix is released (its sensitivity is the same as any
	 * block-diagonal part's); the blocks are chosen on it and the rest
	 * is dropped: post-processing. */
	{
		size_t off = 0;

		memcpy(c->full, a->S, d * d * sizeof *c->full);
		if ((rc = noise_upper(c, c->full, d, &off)) != 0)
			return rc;
		finish_cov(c, c->full, c->ident, d, n);
		mirror(d, c->full);
		if ((rc = select_blocks(c, c->full, n, 1, &nb)) != 0)
			return rc;
		return write_blocks(c, rep, c->idx, c->bsz, nb, c->full, 1, n);
	}
}

int
covest_release(struct covest *c, struct ts_writer *w, struct rng *rng,
    uint64_t rep)
{
	struct rng *ri = rng;
	int rc;

	if ((rc = release_scratch(c)) != 0)
		return rc;
	c->w = w;
	if (!c->p.audit)
		return release(c, rng, 0, c->early.c != NULL);
	snprintf(c->item, sizeof c->item, "%s/audit/%llu", COVEST_WORK_ITEM,
	    (unsigned long long)rep);
	if (c->p.seeded && rng_new_seeded(&ri, c->p.seed, c->item) != 0)
		return nomem(c);
	rc = release(c, ri, rep, 0);
	if (ri != rng)
		rng_free(ri);
	return rc;
}

const size_t *
covest_order(const struct covest *c)
{
	return c->perm;
}

/* ---- the ledger ---- */

int
covest_ledger_entry(const struct covest *c, struct ledger_entry *e)
{
	static const char *const sig[NPARTS] = { "sigma", "sigma_sum",
	    "sigma_count" };
	static const char *const sen[NPARTS] = { "l2_sensitivity",
	    "l2_sensitivity_sum", "l2_sensitivity_count" };
	static const char *const grd[NPARTS] = { "grid", "grid_sum",
	    "grid_count" };
	static const char *const wgt[NPARTS] = { "weight_cov", "weight_sum",
	    "weight_count" };
	const struct covest_plan *pl = &c->pl;
	const double *ord;
	double reps = c->p.audit ? (double)c->p.audit : 1;
	size_t no;
	int bad = 0;

	e->relation = c->p.relation;
	/* The fast sampler's TV, planned for every value of every release
	 * (the draws, summed with roundings up, cannot exceed it but by
	 * those roundings), and its charge on delta (noise_fast.h). */
	if (c->p.sampler == COVEST_SAMPLER_FAST && pl->noisy) {
		if (!(c->tv_drawn <= pl->tv * (1 + 0x1p-30)))
			return PV_E_NUMERIC;
		e->tv = pl->tv;
		e->tv_epsilon = pl->tv_epsilon;
		e->delta = pl->tv_charge;
	}
	ord = rdp_default_orders(&no);
	e->norders = no;
	for (size_t i = 0; i < no; i++) {
		e->orders[i] = ord[i];
		e->rdp[i] = reps * rdp_gaussian(ord[i], 1 / pl->mu);
	}
#define PARAM(k, v) (bad |= ts_meta_setf(&e->params, (k), "%.17g", (v)))
	for (int i = 0; i < NPARTS; i++) {
		if (pl->w[i] == 0)
			continue;
		PARAM(sig[i], pl->sigma[i]);
		PARAM(sen[i], pl->sens[i]);
		PARAM(grd[i], pl->grid[i]);
		PARAM(wgt[i], pl->w[i]);
	}
	PARAM("clip", c->p.clip);
	PARAM("noise_multiplier", 1 / pl->mu);
	PARAM("fp_margin", pl->fp_margin);
	PARAM("rows_bound", pl->rows_bound);
	if (c->p.audit)
		PARAM("audit_releases", reps);
	if (c->p.unsafe_per_block)
		PARAM("unsafe_test_per_block", 1.0);
#undef PARAM
	return bad ? PV_E_NOMEM : 0;
}
