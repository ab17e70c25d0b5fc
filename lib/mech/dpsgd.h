/*
 * dpsgd.h: the DP-SGD trainer of dpsgd-train (Abadi et al. 2016,
 * Algorithm 1, with Poisson sampling), its privacy plan and its ledger
 * entry, and the adaptation modes that share its loop: DANN (Ganin et al.
 * 2016) with per-domain protection, associative adaptation (Haeusser et
 * al. 2017) and source-free adaptation with a feature mixture (paper
 * 003), the last two without DP-SGD.
 *
 *   struct dpsgd_params p;  dpsgd_defaults(&p);  ... fill p ...
 *   if ((msg = dpsgd_check_params(&p)) != NULL) usage error;
 *   dpsgd_add_domain(&model, &nets, L, dh, ndh, &np);  // dann, gmm-uda
 *   dpsgd_new(&t, &p, &model, nets, np, K, &train, &side, &val);
 *   dpsgd_plan(t);                 // q, steps, sigma, noise scale, clip plan
 *   dpsgd_train(t, rng, all);      // once, or p.audit times
 *   dpsgd_ledger_entry(t, i, &e);  // after dpcli_entry, before dpcli_release
 *   dpsgd_put_meta(t, &meta, &mi); // the train.* keys
 *   dpsgd_free(t);
 *
 * The privacy plan.  Neighbours are add/remove: the true count of a
 * protected stream's rows is private, so the sampling rate q = batch / N
 * and everything that depends on N use the size the data holder declares
 * public (public_records), never the number of rows given.  With an
 * epsilon, the noise multiplier (or the number of steps) is solved from
 * the RDP curve of the subsampled Gaussian at delta less the fast noise
 * sampler's total variation charge (noise_fast.h), repeated until the
 * charge of the plan it gives is covered.
 *
 * Ownership: the handle borrows the params, the model, the nets and the
 * data until dpsgd_free; the model's parameters are trained in place.
 * The rows of the data are read only (zero the non-finite ones first).
 * Nothing here prints, exits or reads the environment: progress and the
 * per-epoch report go through the callbacks of the params.
 *
 * Errors: 0 or a PV_E_* code; dpsgd_errmsg(t) gives the message.
 *   PV_E_OPTION   the options cannot be met (a usage error of the tool:
 *                 no sigma meets epsilon, --sigma too small, ...)
 *   PV_E_NOMEM    out of memory
 *   PV_E_ENTROPY  no secure randomness
 *   other         a broken invariant (accountant, clip plan, noise)
 */
#ifndef PRIVADA_DPSGD_H
#define PRIVADA_DPSGD_H

#include <stddef.h>
#include <stdint.h>

#include "ledger.h"
#include "model.h"
#include "nn.h"
#include "optim.h"
#include "pverr.h"
#include "rng.h"
#include "tstream.h"

#define DPSGD_WORK_ITEM "dpsgd-train"	/* the seeded streams' prefix */
#define DPSGD_MECHANISM "subsampled_gaussian"
#define DPSGD_MAX_AUDIT 1000000		/* trainings of an audit */
#define DPSGD_MAX_BATCH (1u << 30)
#define DPSGD_MAX_STEPS (UINT64_C(1) << 32)	/* steps of one training */
#define DPSGD_MAX_EPOCHS 1e6
#define DPSGD_CAP_MIN 64		/* rows per forward/backward call */
#define DPSGD_CAP_MAX 4096
#define DPSGD_ASSOC_MAX_BATCH DPSGD_CAP_MAX	/* assoc, gmm-uda: one batch
						 * is one fwd/bwd call */

/* Defaults of the adaptation losses (man page: Associative domain
 * adaptation, Source-free adaptation with a feature mixture). */
#define DPSGD_BETA_WALKER 1.0		/* Haeusser et al. 2017 */
#define DPSGD_BETA_VISIT 0.5
#define DPSGD_BETA_COVER 0.0		/* paper 004 gives no value */
#define DPSGD_KD_TEMP 20.0		/* paper 003, section E */

/* DP-SGD, DP-SGD with clipping but no noise (sigma 0: not private), or
 * plain mini-batch training. */
enum dpsgd_mode { DPSGD_DP, DPSGD_CLIP_ONLY, DPSGD_NODP };

/* What is trained, and on which losses. */
enum dpsgd_adapt { DPSGD_CLASSIFY, DPSGD_DANN, DPSGD_ASSOC, DPSGD_GMM };

/* DANN: the domains whose examples are clipped and noised. */
enum { DPSGD_PROTECT_SOURCE = 1, DPSGD_PROTECT_TARGET = 2,
	DPSGD_PROTECT_BOTH = 3 };

/* Rows of one input: X as n rows of d floats, y (labels, or NULL) as n
 * values; a negative label is never a class. */
struct dpsgd_data {
	float *X;
	int32_t *y;
	size_t n, d;
};

struct dpsgd_params {
	int mode;			/* enum dpsgd_mode */
	int adapt;			/* enum dpsgd_adapt */
	int protect;			/* DANN with DP: DPSGD_PROTECT_* */
	int has_eps, has_delta, has_sigma, has_epochs;
	double epsilon, delta;		/* the budget (has_eps, has_delta) */
	double sigma;			/* noise multiplier (has_sigma) */
	double clip;			/* C, [NN_CLIP_MIN, NN_CLIP_MAX] */
	double epochs;			/* (has_epochs), (0, DPSGD_MAX_EPOCHS] */
	size_t batch;			/* B, [1, DPSGD_MAX_BATCH] */
	size_t patience;		/* epochs without a better validation
					 * accuracy before stopping; 0: never */
	int init;			/* the model's parameters are given:
					 * train from them (not He/Glorot) */
	int exact;			/* exact noise sampler */
	int unsafe;			/* TEST ONLY: no clipping, NOT private */
	uint64_t audit;			/* trainings of an audit, or 0 */
	uint64_t public_records[2];	/* declared sizes of the training
					 * input and the DANN target (the
					 * protected ones), or 0 */
	struct optim_cfg oc;		/* total and every are set here */
	double sched_epochs;		/* step schedule: epochs per decay */
	double grl_max;			/* DANN: the GRL's final coefficient */
	double beta[3];			/* assoc: walker, visit, cover */
	double kd_temp, beta_adv, beta_kd, beta_im;	/* gmm-uda */
	int seeded;			/* sub-streams seeded from seed (NOT
					 * private), else from the system */
	uint64_t seed;
	/* Progress: done of total units of what ("steps", "trainings");
	 * what NULL when the display is to be cleared.  loss: the mean
	 * training loss of the epoch so far, only under DPSGD_NODP (a loss
	 * of private rows is not released), else NaN.  May be NULL. */
	void (*progress)(void *ctx, const char *what, uint64_t done,
	    uint64_t total, double loss);
	/* A line reporting an epoch (a single training only).  May be NULL. */
	void (*report)(void *ctx, const char *line);
	void *ctx;
};

/* One stream's plan: public once dpsgd_plan has run (tv after training). */
struct dpsgd_plan {
	const char *name;		/* labelled, source, target, samples */
	int dp;				/* clipped and noised */
	uint64_t npub;			/* its declared size (dp) */
	double q;			/* Poisson rate (dp) */
	double sigma, noise_std;	/* multiplier, the noise's sd (dp) */
	double sens, gamma;		/* l2 sensitivity, noise grid */
	double eps;			/* epsilon at delta, or -1 */
	double tv;			/* the fast sampler's TV bound */
	double clip_row;		/* the bound rows are clipped at */
	int release;			/* a DP-SGD ledger entry is due */
	int private_for;		/* the output is private for the
					 * stream's dataset (else it is marked
					 * aggregate: no noise, no clipping, or
					 * not protected) */
};

/* The state of training, for the output. */
struct dpsgd_summary {
	size_t nstreams;
	size_t nparam;			/* trained vector (with D's) */
	uint64_t steps, steps_per_epoch, epochs_run, best_epoch;
	double best_acc;		/* with validation data */
};

struct dpsgd;

/* Defaults of the params: batch 256, clip 1, grl_max 1, the betas and
 * the temperature above, optim_defaults; no privacy parameter. */
void dpsgd_defaults(struct dpsgd_params *p);

/* NULL when p is consistent, else a message (static storage). */
const char *dpsgd_check_params(const struct dpsgd_params *p);

/*
 * A trainer of model m (its parameters extended to np floats by the
 * nets of DANN or gmm-uda; nets NULL otherwise).  train: the training
 * input (labelled, or the target rows of gmm-uda); side: the DANN or
 * assoc target rows, or the gmm-uda source samples (NULL otherwise);
 * val: public validation data (or NULL).  K: the classes.  Sets the
 * streams and their sampling rates (dpsgd_stream_plan shows them).
 * @return 0 or PV_E_NOMEM (*out may be NULL then).
 */
int dpsgd_new(struct dpsgd **out, const struct dpsgd_params *p,
    struct nn_model *m, const struct nn_dann *nets, size_t np, size_t K,
    const struct dpsgd_data *train, const struct dpsgd_data *side,
    const struct dpsgd_data *val);

/* The length of training and each protected stream's privacy plan, then
 * the clip plans and the buffers.  @return 0 or an error (above);
 * PV_E_RANGE: a protected input has more than NN_MAX_RECORDS rows. */
int dpsgd_plan(struct dpsgd *t);

/* Train once, or p->audit times from the same start (all: p->audit rows
 * of the np parameters, the result of each training), drawing the batches
 * and initial weights from rng (or, seeded audits, sub-streams).
 * @return 0 or an error; nothing is released on an error. */
int dpsgd_train(struct dpsgd *t, struct rng *rng, float *all);

/* The plan of stream i (< nstreams). */
void dpsgd_stream_plan(const struct dpsgd *t, size_t i, struct dpsgd_plan *out);

void dpsgd_summary(const struct dpsgd *t, struct dpsgd_summary *out);

/*
 * Fill the DP-SGD release of stream i in e (made by dpcli_entry): steps
 * times the subsampled Gaussian's RDP curve (times the audit trainings),
 * the fast sampler's TV charged to delta, the parameters.
 * @return 0, PV_E_NOMEM (e->params partly set: free it), or an
 * accountant error.
 */
int dpsgd_ledger_entry(const struct dpsgd *t, size_t i,
    struct ledger_entry *e);

/* What the output's train.* keys take from the tool. */
struct dpsgd_meta {
	const char *dataset[2];		/* the streams' ledger names, or NULL */
	const char *lr_schedule;	/* as given; NULL: "constant" */
	size_t freeze;			/* the leading layers kept frozen */
};

/*
 * Append the domain classifier D of DANN or gmm-uda to model m: the
 * feature extractor is layers 1..L of m, D's hidden widths dh[0..ndh),
 * its parameters follow m's in one vector (m->param grows to *np floats,
 * D's zero; m->nparam stays).
 * @return 0, PV_E_NOMEM, or nn_dann_init's error (a bad width).
 */
int dpsgd_add_domain(struct nn_model *m, struct nn_dann *nets, size_t L,
    const size_t *dh, size_t ndh, size_t *np);

/*
 * Write the trainings of an audit: each parameter tensor of net stacked
 * over the runs, <prefix>/fc<k>/W as [runs, in * out] and <prefix>/fc<k>/b
 * as [runs, out], row i from all + i * np (prefix "model" for the
 * classifier, "domain" for a domain classifier).
 * @return 0 or the writer's error (a TS_E* code).
 */
int dpsgd_write_audit(struct ts_writer *w, const struct nn_net *net,
    const char *prefix, const float *all, size_t np, uint64_t runs);

/* The raw marks of meta (the inputs' ledgers merged) for the model: every
 * dp.raw.<name> but those of the protected streams (mi->dataset) becomes
 * aggregate, as the rows of those datasets now feed an aggregate.
 * @return 0, or -1 with a message in err (ledger_mark_raw failed). */
int dpsgd_mark_raw(const struct dpsgd *t, struct ts_meta *meta,
    const struct dpsgd_meta *mi, char *err, size_t errlen);

/* Set the train.* keys of the output (the mode, the optimiser, the
 * adaptation, each protected stream's q, sigma, noise and epsilon, the
 * validation result) in meta, after training.
 * @return 0 or PV_E_NOMEM. */
int dpsgd_put_meta(const struct dpsgd *t, struct ts_meta *meta,
    const struct dpsgd_meta *mi);

/* The message of the last error, or "" (valid until dpsgd_free). */
const char *dpsgd_errmsg(const struct dpsgd *t);

/* Free t (NULL is fine); the borrowed data stay. */
void dpsgd_free(struct dpsgd *t);

#endif
