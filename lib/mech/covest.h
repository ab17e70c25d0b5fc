/*
 * covest.h: the covariance release of covest (Analyze Gauss, Dwork et al.
 * 2014): the rows of X are clipped to a public L2 bound, their second
 * moments (and sum and count) accumulated, and one Gaussian mechanism
 * over those parts releases them, whole or as a block-diagonal of feature
 * subspaces (subspace.h), from which the covariance is post-processed.
 *
 * Use: fill a struct covest_params and check it with
 * covest_check_params; covest_new; covest_open_rows on the stream of the
 * rows; covest_partition; covest_plan (the noise); optionally
 * covest_read_mean; covest_accumulate; optionally covest_select_on;
 * covest_finish_reading; then covest_release once (or audit times, rep
 * 0..audit-1) into a writer; covest_ledger_entry fills the release's
 * ledger entry.  The seeded random streams are the work items "covest",
 * "covest/subspaces", "<item>/cov/<block>/<run>" and
 * "covest/audit/<rep>" (rng.h).
 *
 * Ownership: the handle owns everything it allocates; readers, writers,
 * generators and tensors passed in stay the caller's.  Nothing here
 * prints, exits or reads the environment; progress goes through the
 * callback of the params.  Functions return 0 or a negative PV_E_* code
 * and leave a message in covest_errmsg: PV_E_OPTION (the parameters are
 * in conflict with the data: a usage error), PV_E_NOMEM, PV_E_ENTROPY (no
 * secure randomness), PV_E_NOISE (a sampler failed: nothing released),
 * PV_E_NUMERIC (a broken invariant), PV_E_USAGE (a bug), and the codes of
 * tstream.h for a failed reader or writer (covest_err_stream is then 1
 * and the message is the stream's own), or PV_E_FORMAT for input that
 * does not fit (the message names no file: prefix it).
 */
#ifndef PRIVADA_COVEST_H
#define PRIVADA_COVEST_H

#include "pverr.h"

#include <stddef.h>
#include <stdint.h>

#include "ledger.h"
#include "rng.h"
#include "tensor.h"
#include "tstream.h"

#define COVEST_MAX_FEATURES 16384	/* columns of X: S is d x d doubles */
#define COVEST_MAX_THREADS 8		/* noise workers */
#define COVEST_WORK_ITEM "covest"
#define COVEST_CLIP_MIN 1e-50		/* clip range: C^2 stays normal */
#define COVEST_CLIP_MAX 1e50
#define COVEST_SIGMA_MIN 1e-6		/* sigma range (besides 0) */
#define COVEST_SIGMA_MAX 1e6
#define COVEST_EPS_MAX 100

/* The parts of a release, each with its own Gaussian noise. */
enum { COVEST_COV, COVEST_SUM, COVEST_CNT, COVEST_NPARTS };
enum { COVEST_SUB_NONE, COVEST_SUB_RANDOM, COVEST_SUB_SELECT,
	COVEST_SUB_FROM };
enum { COVEST_MEAN_RELEASED, COVEST_MEAN_ZERO, COVEST_MEAN_FILE };
enum { COVEST_CAL_RDP, COVEST_CAL_AGM };
/* The noise sampler: the exact discrete Gaussian (covnoise_draw), or the
 * fast one of noise_fast.h, within total variation tau per sample of it,
 * whose total is charged to delta (noise_fast.h, "Charging it"). */
enum { COVEST_SAMPLER_EXACT, COVEST_SAMPLER_FAST };

struct covest_params {
	int relation;			/* LEDGER_ADD_REMOVE, LEDGER_REPLACE_ONE */
	int mean;			/* COVEST_MEAN_*; FILE: covest_read_mean */
	int subspaces;			/* COVEST_SUB_* */
	size_t m;			/* SUB_RANDOM: blocks */
	int has_part_seed;		/* SUB_RANDOM: a public partition seed */
	uint64_t part_seed;
	size_t maxk;			/* SUB_SELECT: largest block, 0: d */
	int select_public;		/* SUB_SELECT on public rows
					 * (covest_select_on) */
	int has_eps, has_delta, has_sigma, has_clip, has_cal, has_split;
	double epsilon, delta;		/* has_eps: (epsilon, delta)-DP */
	int calibration;		/* COVEST_CAL_* (has_cal) */
	int sampler;			/* COVEST_SAMPLER_* (0: exact) */
	double sigma;			/* has_sigma: the joint multiplier;
					 * 0: no noise, NOT private */
	double clip;			/* has_clip: L2 bound of the rows */
	double split[COVEST_NPARTS];	/* has_split: budget weights */
	int has_count;			/* the count is public ... */
	uint64_t count_public;		/* ... and is this (replace-one) */
	uint64_t audit;			/* independent releases; 0: one */
	int unsafe_per_block;		/* clip each block alone: NOT private
					 * (tests only) */
	int seeded;			/* reproducible noise: NOT private */
	uint64_t seed;
	int threads;			/* noise workers, 1..COVEST_MAX_THREADS */
	/* Progress of a pass over rows (total 0: unknown), and of the noise
	 * step of a release (entries noised; not with audit), or NULL. */
	void (*progress)(void *ctx, const char *what, double done,
	    double total);
	void *progress_ctx;
};

/* The noise of every release: one Gaussian mechanism over the parts. */
struct covest_plan {
	int noisy;			/* 0 with --sigma 0 */
	double z;			/* joint noise multiplier asked for */
	double w[COVEST_NPARTS];	/* budget weights; 0: not released */
	double delta2[COVEST_NPARTS];	/* L2 sensitivity before the grid */
	uint64_t nent[COVEST_NPARTS];	/* values noised (for the grid) */
	double sigma[COVEST_NPARTS];	/* noise standard deviation */
	double grid[COVEST_NPARTS];	/* rounding grid of the sampler */
	double sens[COVEST_NPARTS];	/* sensitivity charged: delta2 + grid */
	double mu;			/* joint mu = 1 / noise multiplier */
	double rows_bound;		/* public bound on the rows summed */
	double fp_margin;		/* relative float margin (fpsum.h) */
	/* SAMPLER_FAST (else all 0): TV per sample of each part, the TV of
	 * every value of every release together (nent of each part, times
	 * the audit releases: a bound on the draws), the epsilon it is
	 * charged at (the --epsilon asked for, at least NOISE_FAST_EPS_REF) and
	 * the charge (1 + e^tv_epsilon) tv on delta.  With --epsilon the
	 * noise is calibrated at --delta less the charge. */
	double tv_sample[COVEST_NPARTS];
	double tv, tv_epsilon, tv_charge;
};

struct covest;

/* The name of part i: "cov", "sum" or "count". */
const char *covest_part_name(int i);

/* Which parts p releases with noise (rel[i] 1 or 0). */
void covest_parts_released(const struct covest_params *p,
    int rel[COVEST_NPARTS]);

/* A message naming the first field of p in error, or NULL. */
const char *covest_check_params(const struct covest_params *p);

/* The noise plan of p for d features of which ncov second moments are
 * noised.  @return 0, PV_E_OPTION (no noise fits the parameters) or
 * PV_E_NUMERIC, with a message in msg[0..len-1]. */
int covest_plan_noise(struct covest_plan *pl, const struct covest_params *p,
    size_t d, uint64_t ncov, char *msg, size_t len);

/* A handle for one run of p (copied; p must pass covest_check_params).
 * @return 0 or PV_E_NOMEM.  Free it with covest_free (NULL is fine),
 * which waits for noise workers still running. */
int covest_new(struct covest **out, const struct covest_params *p);
void covest_free(struct covest *c);

/* The message of the last failure ("" if none). */
const char *covest_errmsg(const struct covest *c);

/* 1 if the last failure was the reader's or writer's own. */
int covest_err_stream(const struct covest *c);

/* Find the tensor name in r (a 2-D f32 or f64 matrix of 1 to
 * COVEST_MAX_FEATURES columns): its header into hdr (the caller frees
 * it), its columns into *d.  @return 0 or an error. */
int covest_open_rows(struct covest *c, struct ts_reader *r, const char *name,
    struct tensor *hdr, size_t *d);

/* The partition of the features: none; random blocks, drawn from rng or the
 * public seed; select, chosen at release; or from the subspace/<i>
 * tensors of the stream from (a covest or psdshrink stream).  Nothing
 * depends on data.  For SUB_RANDOM, m <= d is the caller's to check. */
int covest_partition(struct covest *c, struct rng *rng,
    struct ts_reader *from);

/* The number of blocks of the partition (before select). */
size_t covest_nblocks(const struct covest *c);

/* Plan the noise (covest_plan_noise); the plan stays in the handle. */
int covest_plan(struct covest *c);
const struct covest_plan *covest_get_plan(const struct covest *c);

/* The public mean (MEAN_FILE): the first tensor of r, d finite values;
 * r is read to its end. */
int covest_read_mean(struct covest *c, struct ts_reader *r);

/*
 * One pass over the rows of the tensor whose header hdr was read from r
 * (covest_open_rows): each row is centred on the public mean, clipped and
 * accumulated; r is then read to its end.  A single release's noise is
 * drawn from rng meanwhile, on the cores BLAS leaves free.  Fails with
 * PV_E_FORMAT when the rows are not the --count-public count or exceed
 * the public bound of the float margin.
 */
int covest_accumulate(struct covest *c, struct ts_reader *r,
    const struct tensor *hdr, struct rng *rng);

/* SUB_SELECT on public rows: the tensor of the same name in r, prepared
 * as the private rows, gives the covariance the blocks are chosen on. */
int covest_select_on(struct covest *c, struct ts_reader *r,
    const char *name);

/* Wait for the noise drawn during covest_accumulate and check it. */
int covest_finish_reading(struct covest *c);

/* The rows read, the rows with a non-finite value (taken as zero rows:
 * a private statistic), the seconds spent in SYRK. */
void covest_stats(const struct covest *c, uint64_t *n, uint64_t *nonfinite,
    double *syrk_secs);

/*
 * Release rep (0 for a single release; 0..audit-1 with params.audit,
 * which draws each from its own generator) into w: the tensors count,
 * and per block subspace/<i>, mean/<i> (when centred) and cov/<i>, named
 * <name>/<rep> with audit.  The noise of the count, sum and second
 * moments is drawn in this order from rng; the rest is post-processing.
 */
int covest_release(struct covest *c, struct ts_writer *w, struct rng *rng,
    uint64_t rep);

/* The features in block order after the last release (d values): the
 * subspace.order of a selection. */
const size_t *covest_order(const struct covest *c);

/* Fill e (begun by the caller with id, dataset, mechanism "gaussian" and
 * the seeded flag) with the relation, the RDP curve of every release
 * (that of the exact sampler), the parameters and, with the fast sampler,
 * tv, tv_epsilon and the charge on delta of the plan.  @return 0,
 * PV_E_NOMEM, or PV_E_NUMERIC when more TV was drawn than planned (a
 * bug). */
int covest_ledger_entry(const struct covest *c, struct ledger_entry *e);

#endif
