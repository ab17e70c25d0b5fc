/*
 * dppg.h: DP-PG and DP-PGP (kde-publish, paper 002): publish a model
 * parameter by parameter, each sampled by the exponential mechanism over a
 * grid of candidates with the kernel density estimate of the M models'
 * values as utility (lib/ml/kde.h), and optionally (DP-PGP) the top
 * parameters of each layer grouped by k-means and published as a clipped
 * mean plus Laplace noise.  Every attempt the quality loop may make is
 * charged.
 *
 * The shape is libsvm's: the tool fills a struct dppg_params, asks
 * dppg_check_params, calibrates with dppg_new, calls dppg_run once per
 * attempt, then dppg_account and dppg_ledger (after dpcli_entry, which
 * gives the id and the seeded flag).
 *
 * Ownership: struct dppg (dppg_free accepts NULL) owns its grid; dppg_run
 * writes the caller's out; dppg_ledger adds to e->params, which the caller
 * frees.  Errors: 0 or a negative PV_E_* code (lib/common/pverr.h; the
 * noise codes of lib/dp/noise.h are the same values).  dppg_run is
 * thread-safe for distinct dppg handles; it starts params.threads - 1
 * threads of its own.  Nothing here prints, exits or reads the
 * environment.
 */
#ifndef PRIVADA_DPPG_H
#define PRIVADA_DPPG_H

#include <stddef.h>
#include <stdint.h>

#include "kde.h"
#include "ledger.h"
#include "model.h"
#include "parts.h"
#include "rng.h"

#define DPPG_MAX_GRID (1u << 20)	/* candidates per parameter */
#define DPPG_MAX_THREADS 64
#define DPPG_EPS_MAX 1e4
#define DPPG_RANGE_MAX 1e6
#define DPPG_DEN_BITS 40		/* the EM rate is cn / 2^40 */
#define DPPG_BLOCK 4096			/* parameters per unit of work */
#define DPPG_MECHANISM "exponential"	/* the ledger entry's mechanism */

enum dppg_bw { DPPG_BW_SILVERMAN, DPPG_BW_SCOTT, DPPG_BW_VALUE };

struct dppg_params {
	double eps;			/* each parameter's EM epsilon */
	double delta;			/* of the (eps, delta) total reported */
	int bw;				/* enum dppg_bw */
	double bw_value;		/* DPPG_BW_VALUE: the bandwidth */
	double bw_min;			/* the rules: floor of the bandwidth */
	double range;			/* candidates in [-range, range] */
	double step;			/* their spacing */
	size_t points;			/* their number: 2 range / step + 1 */
	double window;			/* utility window */
	double ratio;			/* DP-PGP: top ratio per layer; 0 off */
	uint64_t k;			/* DP-PGP: clusters per layer */
	uint64_t iters;			/* DP-PGP: k-means iterations */
	double group_eps;		/* DP-PGP: epsilon per grouped offset */
	uint64_t attempts;		/* attempts charged: releases, or the
					 * quality loop's cap (retries + 1) */
	uint64_t audit;			/* tests: releases of one input, or 0 */
	size_t threads;			/* 1..DPPG_MAX_THREADS */
	int seeded;			/* seed: reproducible, NOT private */
	uint64_t seed;
	const char *work_item;		/* names the seeded streams: block b
					 * of attempt a draws from the seed and
					 * "<work_item>/attempt/<a>/block/<b>" */	/* Optional: the parameters drawn so far of one DP-PG release, out
	 * of total (counts of the model's shape only), from the calling
	 * thread. */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
};

/* The calibration of the mechanism (see dppg.c, dppg_new). */
struct dppg_calib {
	size_t candidates;		/* grid points */
	double p;			/* sup of one kernel's window mass */
	double sens;			/* sensitivity of the utility */
	double eta;			/* |computed U - U| bound */
	double gamma;			/* rounding grid of U */
	double sens_eff;		/* sens + 2 eta + gamma: charged */
	double eps_used;		/* per parameter, <= eps */
	double group_b;			/* DP-PGP: Laplace scale of an offset */
	double group_sens;		/* DP-PGP: L1 sensitivity, charged */
	double group_eps_used;		/* DP-PGP: per grouped parameter */
};

/* The privacy spent by a whole run. */
struct dppg_account {
	double attempts, np, nsel;	/* charged; parameters; grouped */
	double basic;			/* basic composition epsilon */
	double zcdp;			/* zCDP rho */
	double eps_rdp, order;		/* (eps, delta) from RDP, its order */
	size_t no;			/* RDP curve at rdp_default_orders */
	double orders[LEDGER_MAX_ORDERS], rdp[LEDGER_MAX_ORDERS];
};

/* @return NULL if p is consistent, else a message. */
const char *dppg_check_params(const struct dppg_params *p);

/* Calibrate the mechanism for nm models (checked params).  @return 0
 * with *out set, PV_E_RANGE (the grid's points are not distinct floats),
 * PV_E_NUMERIC (the bandwidth is not a positive float), PV_E_SIZE (eps is
 * too small for the rounding of the utilities: the rate rounds to 0) or
 * PV_E_NOMEM. */
struct dppg;
int dppg_new(struct dppg **out, const struct dppg_params *p, size_t nm);
void dppg_free(struct dppg *d);
const struct dppg_calib *dppg_calib(const struct dppg *d);

/*
 * One attempt: publish the shape->nparam parameters of the nm models
 * par[m][j] (finite floats, shape's architecture) into out.  DP-PG draws
 * from the per-block generators (seeded) or one generator per thread
 * (entropy); DP-PGP, after it, from r.  *nsel receives the number of
 * grouped parameters.  @return 0, PV_E_NOMEM or a noise code (nothing
 * may be released).
 */
int dppg_run(const struct dppg *d, const struct nn_model *shape,
    float *const *par, size_t nm, uint64_t attempt, struct rng *r,
    float *out, size_t *nsel);

/* The privacy of a run of np parameters, nsel grouped per attempt.
 * @return 0 or PV_E_NUMERIC (no (eps, delta) from the curve). */
int dppg_account(const struct dppg *d, size_t np, size_t nsel,
    struct dppg_account *ac);

/* Fill e (from dpcli_entry, mechanism DPPG_MECHANISM): relation
 * replace-one, epsilon, the RDP curve and the parameters, for nm models,
 * per_record when they were trained on disjoint parts.  @return 0 or
 * PV_E_NOMEM. */
int dppg_ledger(const struct dppg *d, const struct dppg_account *ac,
    size_t nm, int per_record, struct ledger_entry *e);

/* What a model's stream says about the part of the dataset it was trained
 * on: has is 1 for a part of a split of the raw records (split.part, and
 * not already an aggregate of the dataset when split). */
struct dppg_part {
	struct split_part sp;
	int has;
};
/* Read the part of the model whose metadata is m, protecting dataset,
 * into p (zeroed first; part_free(&p->sp) after).  @return PART_OK or
 * PART_NONE (no split.part: has 0), or the error PART_MIXED, PART_BAD,
 * PART_NO_PARENT or PART_NOMEM (lib/dp/parts.h). */
int dppg_part_read(struct dppg_part *p, const struct ts_meta *m,
    const char *dataset);

/* dppg_parts_disjoint's results. */
enum dppg_parts_status {
	DPPG_PARTS_DISJOINT = 0,	/* the guarantee is per record */
	DPPG_PARTS_NO_PART,		/* model *a has no part */
	DPPG_PARTS_SAME,		/* models *a and *b: the same part */
	DPPG_PARTS_OTHER_SPLIT,		/* models *a and *b: other splits */
	DPPG_PARTS_NOMEM
};
/* Whether the n models were trained on disjoint parts of one split (then
 * one record reaches one model, and the guarantee per model is one per
 * record).  @return a dppg_parts_status. */
int dppg_parts_disjoint(const struct dppg_part *p, size_t n, size_t *a,
    size_t *b);

/* RDP at order a of one eps-DP exponential mechanism (bounded range). */
double dppg_rdp_em(double a, double eps);

#endif
