/* mia.c: membership inference attacks and their statistics (mia.h). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "logreg.h"
#include "mia.h"
#include "pverr.h"

const char *
mia_check_params(const struct mia_params *p)
{
	if (p->attack != MIA_LOSS && p->attack != MIA_CONFIDENCE &&
	    p->attack != MIA_SHADOW)
		return "unknown attack";
	if (p->classes < 1)
		return "the model has no classes";
	if (p->attack == MIA_SHADOW && p->nshadow == 0)
		return "the shadow attack needs at least one shadow model";
	return NULL;
}

int
mia_logsoftmax(const float *z, size_t n, size_t k, double *lp, size_t *bad)
{
	for (size_t i = 0; i < n; i++) {
		const float *zi = z + i * k;
		double *li = lp + i * k;
		double mx = zi[0], sum = 0, lse;

		for (size_t j = 0; j < k; j++) {
			if (!isfinite(zi[j])) {
				*bad = i;
				return PV_E_NUMERIC;
			}
			if (zi[j] > mx)
				mx = zi[j];
		}
		for (size_t j = 0; j < k; j++)
			sum += exp((double)zi[j] - mx);
		lse = mx + log(sum);
		for (size_t j = 0; j < k; j++)
			li[j] = (double)zi[j] - lse;
	}
	return 0;
}

double
mia_row_score(const struct mia_set *s, size_t i, int attack)
{
	const double *lp = s->logp + i * s->k;
	double mx = lp[0];

	if (attack == MIA_LOSS)
		return lp[s->y[i]];
	for (size_t j = 1; j < s->k; j++)
		if (lp[j] > mx)
			mx = lp[j];
	return exp(mx);
}

static int
row_correct(const struct mia_set *s, size_t i)
{
	const double *lp = s->logp + i * s->k;
	size_t b = 0;

	for (size_t j = 1; j < s->k; j++)
		if (lp[j] > lp[b])
			b = j;
	return b == (size_t)s->y[i];
}

/* ---- scores and their statistics ---- */

struct sc {
	double s;
	int member;
};

static int
sc_cmp(const void *a, const void *b)
{
	double x = ((const struct sc *)a)->s, y = ((const struct sc *)b)->s;

	return (x > y) - (x < y);
}

/* A list of scored rows (members and non-members). */
struct sclist {
	struct sc *v;
	size_t n, cap, n1, n0;
	int nomem;			/* some push failed */
};

static void
sc_push(struct sclist *l, double s, int member)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		struct sc *v = cap > SIZE_MAX / sizeof *v ? NULL :
		    realloc(l->v, cap * sizeof *v);

		if (v == NULL) {
			l->nomem = 1;
			return;
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n].s = s;
	l->v[l->n++].member = member;
	if (member)
		l->n1++;
	else
		l->n0++;
}

/* Balanced accuracy (TPR + TNR) / 2 of "member iff score >= t". */
static double
bacc_at(const struct sclist *l, double t)
{
	size_t tp = 0, tn = 0;

	if (l->n1 == 0 || l->n0 == 0 || isnan(t))
		return NAN;
	for (size_t i = 0; i < l->n; i++) {
		if (l->v[i].member && l->v[i].s >= t)
			tp++;
		else if (!l->v[i].member && l->v[i].s < t)
			tn++;
	}
	return ((double)tp / (double)l->n1 + (double)tn / (double)l->n0) / 2;
}

/* Sort l, then the AUC (Mann-Whitney: the probability that a member
 * scores above a non-member, ties counted half) and the threshold of the
 * best balanced accuracy on l itself (thresholds at every distinct score;
 * on ties of accuracy the largest threshold; +inf, "nobody is a member",
 * when nothing beats 1/2). */
static void
sc_stats(struct sclist *l, double *auc, double *best, double *thr)
{
	double below0 = 0, sum = 0;
	size_t tp = 0, fp = 0;

	*auc = *best = *thr = NAN;
	if (l->n1 == 0 || l->n0 == 0)
		return;
	qsort(l->v, l->n, sizeof *l->v, sc_cmp);
	for (size_t i = 0; i < l->n;) {
		size_t j = i, c1 = 0, c0 = 0;

		while (j < l->n && l->v[j].s == l->v[i].s) {
			if (l->v[j].member)
				c1++;
			else
				c0++;
			j++;
		}
		sum += (double)c1 * (below0 + 0.5 * (double)c0);
		below0 += (double)c0;
		i = j;
	}
	*auc = sum / ((double)l->n1 * (double)l->n0);
	*best = 0.5;
	*thr = INFINITY;
	for (size_t i = l->n; i > 0;) {
		size_t j = i;
		double a;

		while (j > 0 && l->v[j - 1].s == l->v[i - 1].s) {
			if (l->v[j - 1].member)
				tp++;
			else
				fp++;
			j--;
		}
		a = ((double)tp / (double)l->n1 + 1 - (double)fp /
		    (double)l->n0) / 2;
		if (a > *best) {
			*best = a;
			*thr = l->v[i - 1].s;
		}
		i = j;
	}
}

static void
sc_list(struct sclist *l, const double *s1, size_t n1, const double *s0,
    size_t n0)
{
	memset(l, 0, sizeof *l);
	for (size_t i = 0; i < n1; i++)
		sc_push(l, s1[i], 1);
	for (size_t i = 0; i < n0; i++)
		sc_push(l, s0[i], 0);
}

int
mia_auc(const double *s1, size_t n1, const double *s0, size_t n0,
    double *auc, double *best, double *thr)
{
	struct sclist l;

	sc_list(&l, s1, n1, s0, n0);
	if (l.nomem) {
		free(l.v);
		return PV_E_NOMEM;
	}
	sc_stats(&l, auc, best, thr);
	free(l.v);
	return 0;
}

double
mia_bacc(const double *s1, size_t n1, const double *s0, size_t n0, double t)
{
	struct sclist l;
	double a;

	sc_list(&l, s1, n1, s0, n0);
	a = l.nomem ? NAN : bacc_at(&l, t);
	free(l.v);
	return a;
}

/* ---- the shadow attack model ---- */

/* Features of row i: its log-probabilities sorted in decreasing order,
 * then the log-probability of its true class, each clamped at
 * MIA_LOGP_MIN. */
static int
dbl_desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x < y) - (x > y);
}

static void
features(const struct mia_set *s, size_t i, double *f)
{
	const double *lp = s->logp + i * s->k;

	for (size_t j = 0; j < s->k; j++)
		f[j] = lp[j] < MIA_LOGP_MIN ? MIA_LOGP_MIN : lp[j];
	qsort(f, s->k, sizeof *f, dbl_desc);
	f[s->k] = lp[s->y[i]] < MIA_LOGP_MIN ? MIA_LOGP_MIN : lp[s->y[i]];
}

/* Scores of the shadow models' rows of class cls (-1: all) into l, with
 * the threshold attack's score. */
static void
shadow_scores(const struct mia_set *sh, size_t nsh, int attack, long cls,
    struct sclist *l)
{
	for (size_t h = 0; h < nsh; h++)
		for (int k = 0; k < 2; k++)
			for (size_t i = 0; i < sh[2 * h + (size_t)k].n; i++)
				if (cls < 0 || sh[2 * h + (size_t)k].y[i] == cls)
					sc_push(l, mia_row_score(&sh[2 * h + (size_t)k],
					    i, attack), k == 0);
}

/* Fit the attack model of class cls (-1: all classes) on the shadow
 * rows.  @return 0; 1 when there are fewer than MIA_SHADOW_MIN_CLASS
 * rows of either kind or the fit fails; PV_E_NOMEM. */
static int
shadow_fit(struct logreg *a, const struct mia_set *sh, size_t nsh, long cls,
    size_t k)
{
	size_t n = 0, cap = 0, n1 = 0, d = k + 1;
	double *F = NULL;
	int *lab = NULL, rc;

	memset(a, 0, sizeof *a);
	for (size_t h = 0; h < nsh; h++)
		for (int s = 0; s < 2; s++) {
			const struct mia_set *set = &sh[2 * h + (size_t)s];

			for (size_t i = 0; i < set->n; i++) {
				if (cls >= 0 && set->y[i] != cls)
					continue;
				if (n == cap) {
					double *F2;
					int *lab2;

					cap = cap ? 2 * cap : 256;
					F2 = cap > SIZE_MAX / d / sizeof *F ?
					    NULL : realloc(F, cap * d *
					    sizeof *F);
					if (F2 != NULL)
						F = F2;
					lab2 = realloc(lab, cap * sizeof *lab);
					if (lab2 != NULL)
						lab = lab2;
					if (F2 == NULL || lab2 == NULL) {
						free(F);
						free(lab);
						return PV_E_NOMEM;
					}
				}
				features(set, i, F + n * d);
				lab[n++] = s == 0;
				n1 += s == 0;
			}
		}
	if (n1 < MIA_SHADOW_MIN_CLASS || n - n1 < MIA_SHADOW_MIN_CLASS)
		rc = 1;
	else if ((rc = logreg_fit(a, F, lab, n, d, MIA_LR_LAMBDA,
	    MIA_LR_ITERS)) != 0 && rc != PV_E_NOMEM)
		rc = 1;
	free(F);
	free(lab);
	return rc;
}

void
mia_result_free(struct mia_result *r)
{
	free(r->score[0]);
	free(r->score[1]);
	free(r->rows);
	memset(r, 0, sizeof *r);
}

/* The metrics of class c (-1: all rows). */
static int
class_row(const struct mia_params *p, const struct mia_set set[2],
    const struct mia_set *sh, const struct mia_result *res, long c,
    struct mia_metrics *r)
{
	struct sclist l = { 0 }, half[2] = { { 0 }, { 0 } };
	size_t right[2] = { 0, 0 };
	double sum1 = 0, a, b, t[2];
	int nomem;

	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < set[k].n; i++) {
			if (c >= 0 && set[k].y[i] != c)
				continue;
			sc_push(&l, res->score[k][i], k == 0);
			sc_push(&half[i % 2], res->score[k][i], k == 0);
			right[k] += (size_t)row_correct(&set[k], i);
			if (k == 0)
				sum1 += res->score[k][i];
		}
	if ((nomem = l.nomem || half[0].nomem || half[1].nomem))
		goto out;
	memset(r, 0, sizeof *r);
	r->n1 = l.n1;
	r->n0 = l.n0;
	r->macc1 = l.n1 ? (double)right[0] / (double)l.n1 : NAN;
	r->macc0 = l.n0 ? (double)right[1] / (double)l.n0 : NAN;
	r->acc_mean = r->thr_mean = r->acc_shadow = r->thr_shadow = NAN;
	sc_stats(&l, &r->auc, &r->acc_best, &r->thr_best);
	/* Two-fold: the threshold chosen on one half (rows of even, then
	 * odd index in each input) is scored on the other. */
	sc_stats(&half[0], &a, &b, &t[0]);
	sc_stats(&half[1], &a, &b, &t[1]);
	r->acc_half = (bacc_at(&half[1], t[0]) + bacc_at(&half[0], t[1])) / 2;
	if (p->attack != MIA_SHADOW && l.n1 > 0) {
		r->thr_mean = sum1 / (double)l.n1;
		r->acc_mean = bacc_at(&l, r->thr_mean);
	}
	if (p->attack != MIA_SHADOW && p->nshadow > 0) {
		struct sclist s = { 0 };

		shadow_scores(sh, p->nshadow, p->attack, c, &s);
		if (s.n1 < MIA_SHADOW_MIN_CLASS || s.n0 < MIA_SHADOW_MIN_CLASS) {
			s.n = s.n1 = s.n0 = 0;
			shadow_scores(sh, p->nshadow, p->attack, -1, &s);
		}
		nomem = s.nomem;
		sc_stats(&s, &a, &b, &r->thr_shadow);
		r->acc_shadow = bacc_at(&l, r->thr_shadow);
		free(s.v);
	} else if (p->attack == MIA_SHADOW) {
		r->thr_shadow = 0.5;
		r->acc_shadow = bacc_at(&l, 0.5);
	}
	/* Thresholds in the attack's own units: a loss, not its negation. */
	if (p->attack == MIA_LOSS) {
		r->thr_best = -r->thr_best;
		r->thr_mean = -r->thr_mean;
		r->thr_shadow = -r->thr_shadow;
	}
out:
	free(l.v);
	free(half[0].v);
	free(half[1].v);
	return nomem ? PV_E_NOMEM : 0;
}

int
mia_run(const struct mia_params *p, const struct mia_set set[2],
    const struct mia_set *sh, struct mia_result *r)
{
	size_t K = p->classes;
	struct logreg pooled = { 0 }, *cm = NULL;
	int *has_cm = NULL, rc = 0;
	double *f = NULL;

	memset(r, 0, sizeof *r);
	if (mia_check_params(p) != NULL)
		return PV_E_RANGE;
	for (int k = 0; k < 2; k++)
		if ((r->score[k] = calloc(set[k].n ? set[k].n : 1,
		    sizeof *r->score[k])) == NULL)
			goto nomem;
	if ((r->rows = calloc(K + 1, sizeof *r->rows)) == NULL ||
	    (f = calloc(K + 1, sizeof *f)) == NULL)
		goto nomem;
	r->nrows = K + 1;

	/* The attack models of the shadow attack: one per class, trained on
	 * the shadow models' rows of that class (Shokri et al. 2017), and a
	 * pooled one for classes with too few rows. */
	if (p->attack == MIA_SHADOW) {
		if ((rc = shadow_fit(&pooled, sh, p->nshadow, -1, K)) != 0) {
			rc = rc == PV_E_NOMEM ? rc : PV_E_NUMERIC;
			goto out;
		}
		cm = calloc(K, sizeof *cm);
		has_cm = calloc(K, sizeof *has_cm);
		if (cm == NULL || has_cm == NULL)
			goto nomem;
		for (size_t c = 0; c < K; c++) {
			if ((rc = shadow_fit(&cm[c], sh, p->nshadow, (long)c,
			    K)) == PV_E_NOMEM)
				goto out;
			has_cm[c] = rc == 0;
			if (!has_cm[c])
				logreg_free(&cm[c]);
		}
		rc = 0;
	}

	/* Every row's score, larger meaning "member". */
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < set[k].n; i++) {
			size_t c = (size_t)set[k].y[i];

			if (p->attack != MIA_SHADOW) {
				r->score[k][i] = mia_row_score(&set[k], i,
				    p->attack);
				continue;
			}
			features(&set[k], i, f);
			r->score[k][i] = logreg_apply(has_cm[c] ? &cm[c] :
			    &pooled, f);
		}

	/* The report rows: all rows, then each class. */
	for (long c = -1; c < (long)K; c++) {
		struct mia_metrics *m = &r->rows[c + 1];

		if ((rc = class_row(p, set, sh, r, c, m)) != 0)
			goto out;
		if (p->attack == MIA_SHADOW)
			m->pooled = c >= 0 && !has_cm[c];
	}
	goto out;
nomem:
	rc = PV_E_NOMEM;
out:
	if (cm != NULL)
		for (size_t c = 0; c < K; c++)
			logreg_free(&cm[c]);
	logreg_free(&pooled);
	free(cm);
	free(has_cm);
	free(f);
	if (rc != 0)
		mia_result_free(r);
	return rc;
}
