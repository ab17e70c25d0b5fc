/*
 * mia.h: membership inference attacks on a classifier (mia-eval): the
 * loss threshold attack (Yeom et al. 2018), the confidence threshold
 * attack, and the shadow model attack (Shokri et al. 2017), scored by
 * AUC and balanced accuracies at several thresholds.
 *
 * The inputs are the model's log-probabilities on member and non-member
 * rows (and on shadow models' rows), with the true labels; mia_logsoftmax
 * computes them from logits.  The report is not a DP release: it is a
 * statistic of the member rows, computed without noise.
 *
 * Ownership: the caller owns the sets and params; mia_run fills a
 * struct mia_result that owns scores and rows (mia_result_free; a zeroed
 * result may be freed).  Nothing here prints, exits or reads the
 * environment.  Errors (lib/common/pverr.h): PV_E_NOMEM, PV_E_RANGE
 * (bad params), PV_E_NUMERIC (a non-finite logit; the shadow rows
 * cannot train the pooled attack model).
 */
#ifndef PRIVADA_MIA_H
#define PRIVADA_MIA_H

#include <stddef.h>
#include <stdint.h>

#define MIA_LOGP_MIN (-50.0)		/* attack features: log p clamped */
#define MIA_SHADOW_MIN_CLASS 10		/* rows of each kind for a class model */
#define MIA_LR_LAMBDA 1e-2		/* L2 penalty of the attack model */
#define MIA_LR_ITERS 100		/* Newton steps at most */

enum mia_attack { MIA_LOSS, MIA_CONFIDENCE, MIA_SHADOW };

/* Rows evaluated by one model. */
struct mia_set {
	size_t n, k;			/* rows, classes */
	const double *logp;		/* n x k log-probabilities */
	const int32_t *y;		/* n labels in [0, k) */
};

struct mia_params {
	int attack;			/* enum mia_attack */
	size_t classes;			/* k of every set, >= 1 */
	size_t nshadow;			/* shadow models; shadow attack: >= 1 */
};

/* The metrics of one report row; NAN where not applicable.  Thresholds
 * are in the attack's own units (a loss for MIA_LOSS, not its negation). */
struct mia_metrics {
	size_t n1, n0;			/* members, non-members */
	double macc1, macc0;		/* model accuracy on members, others */
	double auc;			/* Mann-Whitney, ties half */
	double acc_best, thr_best;	/* best threshold on these rows */
	double acc_half;		/* two-fold: chosen on one half */
	double acc_mean, thr_mean;	/* at the members' mean score */
	double acc_shadow, thr_shadow;	/* from the shadow models only */
	int pooled;			/* shadow attack: pooled model used */
};

struct mia_result {
	double *score[2];		/* members', non-members' row scores,
					 * larger meaning "member" */
	size_t nrows;			/* classes + 1 */
	struct mia_metrics *rows;	/* all rows, then class 0, 1, ... */
};

/* @return NULL if p is usable, else a message. */
const char *mia_check_params(const struct mia_params *p);

/* Log-softmax of n rows of k logits z (in double, the largest
 * subtracted) into lp (n x k).  @return 0, or PV_E_NUMERIC with *bad the
 * first row holding a non-finite logit. */
int mia_logsoftmax(const float *z, size_t n, size_t k, double *lp,
    size_t *bad);

/* Run the attack on set[0] (members) and set[1] (non-members), with
 * shadow[2 h] and shadow[2 h + 1] the members and non-members of shadow
 * model h (p->nshadow of them).  @return 0 or a PV_E_* code. */
int mia_run(const struct mia_params *p, const struct mia_set set[2],
    const struct mia_set *shadow, struct mia_result *r);
void mia_result_free(struct mia_result *r);

/* Building blocks, exported for tests. */
/* The threshold attacks' score of row i, larger meaning "member": minus
 * the cross-entropy loss (MIA_LOSS) or the largest probability. */
double mia_row_score(const struct mia_set *s, size_t i, int attack);
/* AUC and the best balanced accuracy with its threshold of the scores
 * s1 (members, n1) against s0 (n0).  @return 0 or PV_E_NOMEM. */
int mia_auc(const double *s1, size_t n1, const double *s0, size_t n0,
    double *auc, double *best, double *thr);
/* Balanced accuracy (TPR + TNR) / 2 of "member iff score >= t". */
double mia_bacc(const double *s1, size_t n1, const double *s0, size_t n0,
    double t);

#endif
