/*
 * pate.h: PATE aggregation of teacher votes (teacher-vote): LNMax, GNMax
 * and Confident GNMax over vote histograms (Papernot et al. 2017, 2018),
 * their data-independent RDP, the data-dependent RDP released with smooth
 * sensitivity (GNSS), and the checks that the teachers were trained on
 * disjoint parts of one split and answered the same queries.
 *
 * The shape is libsvm's: the tool fills a struct pate_params, asks
 * pate_check_params, builds the samplers with pate_new, calls pate_run
 * once per release, and fills its ledger entries with pate_ledger and
 * pate_gnss_ledger after dpcli_entry (which gives the id and the seeded
 * flag).
 *
 * Ownership: struct pate_votes owns count (pate_votes_free); struct pate
 * owns its samplers (pate_free accepts NULL); struct pate_teacher owns its
 * strings (pate_teacher_free).  The ledger functions add to e->params,
 * which the caller frees.
 *
 * Errors: functions return 0 or a negative PV_E_* code (lib/common/pverr.h;
 * the noise codes of lib/dp/noise.h are the same values), unless stated.
 * Nothing here prints, exits or reads the environment.
 */
#ifndef PRIVADA_PATE_H
#define PRIVADA_PATE_H

#include <stddef.h>
#include <stdint.h>

#include "ledger.h"
#include "parts.h"
#include "rng.h"
#include "tstream.h"

#define PATE_MAX_CLASSES (1u << 20)
#define PATE_MAX_TEACHERS (UINT32_C(1) << 31)	/* votes per count fit u32 */
#define PATE_MAX_COUNTS (UINT64_C(1) << 31)	/* queries x classes */
#define PATE_GAMMA_MIN 1e-6		/* gamma range (besides inf) */
#define PATE_GAMMA_MAX 1e6
#define PATE_SIGMA_MIN 1e-3		/* sigma, sigma1 range (besides 0) */
#define PATE_SIGMA_MAX 1e9
#define PATE_THRESHOLD_MAX 1e12
#define PATE_SS_GRID_BITS 32		/* GNSS release on the grid 2^-32 */
#define PATE_SS_FLOOR_BITS 12		/* smooth sensitivity >= 2^-12 */
#define PATE_SS_SIGMA_MIN 1e-3		/* ss_sigma range */
#define PATE_SS_SIGMA_MAX 1e3
#define PATE_SS_BETA_DEFAULT 0.4	/* ss_beta: 0.4 / ss_order */
#define PATE_SS_MAX_RDP 1e6		/* data-dependent RDP released */

/* The ledger mechanism of the data-dependent (GNSS) release. */
#define PATE_GNSS_MECHANISM "pate_smooth_sensitivity"

enum pate_mech { PATE_LNMAX, PATE_GNMAX, PATE_CONFIDENT };

struct pate_params {
	int mech;			/* enum pate_mech */
	double gamma;			/* lnmax: Laplace 1/gamma per count;
					 * inf: no noise, NOT private */
	double sigma;			/* gnmax, confident answers; 0: none */
	double sigma1;			/* confident: the threshold check */
	double threshold;		/* confident: answer if noisy max >= */
	int has_max;			/* confident: max_answers is a cap */
	uint64_t max_answers;
	uint64_t audit;			/* releases of the same votes, 0: one */
	int half_noise;			/* tests only: half the noise claimed */
	int ddep;			/* also the data-dependent release */
	double ss_order, ss_beta, ss_sigma;	/* its order, smoothness
					 * and noise (x smooth sensitivity) */
	int reveal;			/* tests only: the ledger shows f, SS */
	/* Optional: the queries voted so far of a release, out of total
	 * (public counts only: never the number answered). */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
};

/* The vote histograms: count[q * k + j] teachers voted j on query q. */
struct pate_votes {
	size_t q, k;			/* queries, classes (k set by caller) */
	uint64_t n;			/* teachers */
	uint32_t *count;
};

/* The data-dependent release of one run. */
struct pate_dd {
	int gn;				/* GNMax's bound can beat the
					 * data-independent one (ddep_plan) */
	double f;			/* the data-dependent RDP at ss_order */
	double ss;			/* its smooth sensitivity */
	double released;		/* f + GNSS noise, on the grid */
	double answered;		/* queries answered */
};

/* @return NULL if p is consistent (each value in range, the options of its
 * mechanism, the data-dependent release's conditions), else a message. */
const char *pate_check_params(const struct pate_params *p);
/* 1 if a is one of rdp-account's default orders, where every ledger curve
 * is (the orders the data-dependent release may use). */
int pate_ss_order_ok(double a);
/* 1 if p adds no noise (gamma inf, sigma 0): the output is NOT private. */
int pate_noise_off(const struct pate_params *p);
/* The ledger mechanism name of p's release (pate_lnmax, ...). */
const char *pate_mechanism(const struct pate_params *p);

/* Allocate v->count for q queries of v->k classes (zeroed).
 * @return 0, PV_E_LIMIT (more than PATE_MAX_COUNTS counts) or PV_E_NOMEM. */
int pate_votes_alloc(struct pate_votes *v, uint64_t q);
/* Add the votes of rows teachers, lab[r * v->q + q] the label of teacher
 * r on query q.  @return 0, PV_E_LIMIT (more than PATE_MAX_TEACHERS; v->n
 * stays at the maximum) or PV_E_RANGE (a label outside [0, k): the teacher
 * is v->n, the query *bad_q). */
int pate_votes_add(struct pate_votes *v, const int32_t *lab, size_t rows,
    size_t *bad_q);
void pate_votes_free(struct pate_votes *v);

/* The samplers for p (checked by pate_check_params).  @return 0 with *out
 * set, PV_E_NOMEM, or a noise code. */
struct pate;
int pate_new(struct pate **out, const struct pate_params *p);
void pate_free(struct pate *pt);

/*
 * Whether the data-dependent release can say anything for v's number of
 * teachers and classes (from the parameters alone); sets dd->gn.
 * @return 0; 1 when the data-dependent bound equals the data-independent
 * one for every histogram (nothing to release); 2 when conditions C5 and
 * C6 of Papernot et al. (2018, Appendix B.4) fail at ss_order; PV_E_NOMEM.
 */
int pate_ddep_plan(const struct pate_params *p, const struct pate_votes *v,
    struct pate_dd *dd);

/*
 * One release over v with randomness r: y[q] the answer or -1, ans[q] 1
 * if answered (v->q entries each).  With p->ddep and dd (planned by
 * pate_ddep_plan), then the data-dependent RDP, its smooth sensitivity
 * and its GNSS release into dd.  @return 0, a noise code (nothing may be
 * released), PV_E_NOMEM, PV_E_NUMERIC (the smooth sensitivity is not a
 * number), PV_E_LIMIT (the data-dependent RDP is outside [0,
 * PATE_SS_MAX_RDP]) or PV_E_USAGE (a broken invariant).
 */
int pate_run(const struct pate *pt, struct rng *r, const struct pate_votes *v,
    int32_t *y, uint8_t *ans, struct pate_dd *dd);

/* The RDP at order a of the GNSS release with smoothness beta and noise
 * sigma_s times the smooth sensitivity, on the grid (inf if 2 a beta >= 1). */
double pate_gnss_rdp(double a, double beta, double sigma_s);

/*
 * Fill e (from dpcli_entry, mechanism pate_mechanism) for the release of
 * pt over v: relation (LEDGER_ADD_REMOVE for a votes tensor,
 * LEDGER_REPLACE_ONE for teachers), the RDP curve at rdp_default_orders
 * and the parameters.  @return 0 or PV_E_NOMEM.
 */
int pate_ledger(const struct pate *pt, const struct pate_votes *v,
    int relation, struct ledger_entry *e);
/* The same for the GNSS release dd (mechanism PATE_GNSS_MECHANISM). */
int pate_gnss_ledger(const struct pate_params *p, const struct pate_votes *v,
    const struct pate_dd *dd, struct ledger_entry *e);

/* What a teacher's stream says about the part it was trained on. */
struct pate_teacher {
	struct split_part sp;		/* split.part, split.parent, split.id */
	int predicted;			/* written by predict */
	char *queries;			/* predict's prov.input.0.xxh64 */
	char *qraw;			/* predict.raw.* as "key=value;..." */
};

/* pate_teacher_read's results. */
enum pate_teacher_status {
	PATE_T_OK = 0,
	PATE_T_ROW_LOCAL,		/* dp.raw.<dataset> = row-local */
	PATE_T_QUERIES_RAW,		/* predict.raw.<dataset>: private */
	PATE_T_PART_AGGREGATE,		/* split.raw.<dataset> = aggregate */
	PATE_T_NO_PART,			/* no split.part */
	PATE_T_MIXED,			/* split.part = mixed */
	PATE_T_BAD_PART,		/* split.part not i/n with i < n */
	PATE_T_NO_PARENT,		/* split.part without split.parent */
	PATE_T_NOMEM
};
/* Check the metadata m of one teacher protecting dataset and read its
 * part into t (zeroed first; t owns its strings only with PATE_T_OK).
 * @return a pate_teacher_status. */
int pate_teacher_read(struct pate_teacher *t, const struct ts_meta *m,
    const char *dataset);
void pate_teacher_free(struct pate_teacher *t);

/* pate_teachers_check's results (in the order they are tested). */
enum pate_teachers_status {
	PATE_TS_OK = 0,
	PATE_TS_PARENT,			/* different split.parent */
	PATE_TS_COUNT,			/* splits into different part counts */
	PATE_TS_ID,			/* different split.id */
	PATE_TS_DIGEST,			/* predictions on different inputs */
	PATE_TS_MARKS,			/* their raw marks differ */
	PATE_TS_SAME,			/* trained on the same part */
	PATE_TS_NOMEM
};
/* Whether the n teachers t[] are disjoint parts of one split answering
 * the same queries; on failure *a and *b index the offending pair.
 * @return a pate_teachers_status. */
int pate_teachers_check(const struct pate_teacher *t, size_t n, size_t *a,
    size_t *b);

#endif
