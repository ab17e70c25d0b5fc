/*
 * Unit tests of lib/mech/mia and lib/num/logreg: the log-softmax, the
 * AUC and best threshold against brute force over all pairs and all
 * thresholds, a whole loss attack against statistics computed here, the
 * shadow attack on separable shadow rows, check_params rejecting each
 * bad field, and the attack model's fit meeting its optimality condition
 * (the penalised, weighted gradient vanishes).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logreg.h"
#include "mia.h"
#include "pverr.h"
#include "tap.h"

static uint64_t seed = 42;

static double
unif(void)
{
	seed = seed * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(seed >> 11) / 9007199254740992.0;
}

static void
test_params(void)
{
	struct mia_params p = { .attack = MIA_LOSS, .classes = 2 };

	ok(mia_check_params(&p) == NULL, "good params");
	p.attack = 9;
	ok(mia_check_params(&p) != NULL, "bad attack refused");
	p.attack = MIA_LOSS;
	p.classes = 0;
	ok(mia_check_params(&p) != NULL, "no classes refused");
	p.classes = 2;
	p.attack = MIA_SHADOW;
	ok(mia_check_params(&p) != NULL, "shadow attack without shadows "
	    "refused");
}

static void
test_logsoftmax(void)
{
	float z[6] = { 1, 2, 3, 1000, 0, -1000 };
	double lp[6], s0 = 0, s1 = 0;
	size_t bad = 99;

	ok(mia_logsoftmax(z, 2, 3, lp, &bad) == 0, "log-softmax");
	for (int j = 0; j < 3; j++) {
		s0 += exp(lp[j]);
		s1 += exp(lp[3 + j]);
	}
	ok(fabs(s0 - 1) < 1e-15 && fabs(s1 - 1) < 1e-15 && lp[3] == 0 &&
	    fabs(lp[1] - lp[0] - 1) < 1e-15, "probabilities sum to 1, no "
	    "overflow");
	z[4] = NAN;
	ok(mia_logsoftmax(z, 2, 3, lp, &bad) == PV_E_NUMERIC && bad == 1,
	    "a non-finite logit is refused, its row named");
}

/* AUC by all pairs; best balanced accuracy by all thresholds. */
static void
brute(const double *s1, size_t n1, const double *s0, size_t n0,
    double *auc, double *best)
{
	double sum = 0;

	for (size_t i = 0; i < n1; i++)
		for (size_t j = 0; j < n0; j++)
			sum += s1[i] > s0[j] ? 1 : s1[i] == s0[j] ? 0.5 : 0;
	*auc = sum / (double)(n1 * n0);
	*best = 0.5;
	for (size_t i = 0; i < n1 + n0; i++) {
		double t = i < n1 ? s1[i] : s0[i - n1];
		double a = mia_bacc(s1, n1, s0, n0, t);
		if (a > *best)
			*best = a;
	}
}

static void
test_auc(void)
{
	double s1[40], s0[30], auc, best, thr, bauc, bbest;

	for (int r = 0; r < 5; r++) {
		for (int i = 0; i < 40; i++)
			s1[i] = floor(unif() * 10 + r) / 4;	/* ties */
		for (int i = 0; i < 30; i++)
			s0[i] = floor(unif() * 10) / 4;
		ok(mia_auc(s1, 40, s0, 30, &auc, &best, &thr) == 0, "auc");
		brute(s1, 40, s0, 30, &bauc, &bbest);
		ok(fabs(auc - bauc) < 1e-12 && fabs(best - bbest) < 1e-12 &&
		    fabs(mia_bacc(s1, 40, s0, 30, thr) - best) < 1e-12,
		    "shift %d: auc %.6f best %.6f equal brute force", r, auc,
		    best);
	}
	ok(mia_auc(s1, 40, s0, 0, &auc, &best, &thr) == 0 && isnan(auc),
	    "no non-members: NaN");
}

static void
test_loss_attack(void)
{
	enum { N1 = 50, N0 = 60, K = 3 };
	static double lp1[N1 * K], lp0[N0 * K];
	static int32_t y1[N1], y0[N0];
	struct mia_set set[2] = { { N1, K, lp1, y1 }, { N0, K, lp0, y0 } };
	struct mia_params p = { .attack = MIA_LOSS, .classes = K };
	struct mia_result r;
	double s1[N1], s0[N0], auc, best, sum = 0;
	size_t right1 = 0;

	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < set[k].n; i++) {
			float z[K];
			double *lp = (double *)set[k].logp + i * K;
			size_t bad;
			int32_t *y = (int32_t *)set[k].y;

			y[i] = (int32_t)(unif() * K);
			for (int j = 0; j < K; j++)
				z[j] = (float)(unif() * 2 + (j == y[i] ?
				    (k == 0 ? 1.5 : 0.3) : 0));
			mia_logsoftmax(z, 1, K, lp, &bad);
		}
	for (size_t i = 0; i < N1; i++) {
		s1[i] = lp1[i * K + (size_t)y1[i]];
		sum += s1[i];
		right1 += lp1[i * K + (size_t)y1[i]] >= lp1[i * K] &&
		    lp1[i * K + (size_t)y1[i]] >= lp1[i * K + 1] &&
		    lp1[i * K + (size_t)y1[i]] >= lp1[i * K + 2];
	}
	for (size_t i = 0; i < N0; i++)
		s0[i] = lp0[i * K + (size_t)y0[i]];
	ok(mia_run(&p, set, NULL, &r) == 0 && r.nrows == K + 1, "loss attack");
	brute(s1, N1, s0, N0, &auc, &best);
	ok(r.rows[0].n1 == N1 && r.rows[0].n0 == N0 &&
	    fabs(r.rows[0].auc - auc) < 1e-12 &&
	    fabs(r.rows[0].acc_best - best) < 1e-12,
	    "all rows: auc %.4f, best %.4f", auc, best);
	ok(fabs(r.rows[0].macc1 - (double)right1 / N1) < 1e-12,
	    "model accuracy on members");
	ok(fabs(r.rows[0].thr_mean + sum / N1) < 1e-12 &&
	    fabs(r.rows[0].acc_mean - mia_bacc(s1, N1, s0, N0, sum / N1)) <
	    1e-12, "mean threshold is the members' mean loss");
	ok(r.score[0][7] == s1[7] && r.score[1][3] == s0[3],
	    "scores are minus the loss");
	ok(r.rows[1].n1 + r.rows[2].n1 + r.rows[3].n1 == N1 &&
	    isnan(r.rows[0].acc_shadow), "classes partition the rows; no "
	    "shadow, no shadow accuracy");
	ok(auc > 0.6, "members are recognised (auc %.3f)", auc);
	mia_result_free(&r);
}

static void
test_shadow_attack(void)
{
	enum { N = 40, K = 2 };
	static double lp[3][2][N * K];
	static int32_t y[3][2][N];
	struct mia_set sets[3][2];
	struct mia_params p = { .attack = MIA_SHADOW, .classes = K,
	    .nshadow = 2 };
	struct mia_result r;

	/* Members: confident and right; non-members: unsure. */
	for (int h = 0; h < 3; h++)
		for (int k = 0; k < 2; k++) {
			for (size_t i = 0; i < N; i++) {
				double c = k == 0 ? 0.9 + 0.09 * unif() :
				    0.5 + 0.2 * unif();
				y[h][k][i] = (int32_t)(i % K);
				lp[h][k][i * K + i % K] = log(c);
				lp[h][k][i * K + (i + 1) % K] = log(1 - c);
			}
			sets[h][k] = (struct mia_set){ N, K, lp[h][k],
			    y[h][k] };
		}
	ok(mia_run(&p, sets[0], &sets[1][0], &r) == 0, "shadow attack");
	ok(r.rows[0].acc_shadow > 0.95 && r.rows[0].thr_shadow == 0.5 &&
	    !r.rows[1].pooled, "separable: accuracy %.3f at P = 1/2, class "
	    "models", r.rows[0].acc_shadow);
	mia_result_free(&r);
	sets[1][0].n = sets[1][1].n = 5;
	sets[2][0].n = sets[2][1].n = 4;
	ok(mia_run(&p, sets[0], &sets[1][0], &r) == PV_E_NUMERIC &&
	    r.rows == NULL, "too few shadow rows: PV_E_NUMERIC");
}

/* The gradient of the objective logreg_fit minimises, at its result. */
static void
test_logreg(void)
{
	enum { N = 200, D = 3 };
	static double F[N * D];
	int lab[N];
	struct logreg a;
	double g[D + 1] = { 0 }, gmax = 0, lambda = 1e-2, w1, w0;
	size_t n1 = 0;

	for (size_t i = 0; i < N; i++) {
		lab[i] = unif() < 0.3;
		n1 += (size_t)lab[i];
		for (int j = 0; j < D; j++)
			F[i * D + j] = unif() * 3 + (lab[i] ? 0.7 * j : 0);
	}
	ok(logreg_fit(&a, F, lab, N, D, lambda, 100) == 0, "logreg fit");
	w1 = (double)N / (2.0 * (double)n1);
	w0 = (double)N / (2.0 * (double)(N - n1));
	for (size_t i = 0; i < N; i++) {
		double q = logreg_apply(&a, F + i * D), x[D + 1];
		double wi = lab[i] ? w1 : w0;
		for (int j = 0; j < D; j++)
			x[j] = (F[i * D + j] - a.mu[j]) / a.sd[j];
		x[D] = 1;
		for (int j = 0; j <= D; j++)
			g[j] += wi * (q - lab[i]) * x[j];
	}
	for (int j = 0; j < D; j++)
		g[j] += lambda * N * a.w[j];
	for (int j = 0; j <= D; j++)
		gmax = fmax(gmax, fabs(g[j]));
	ok(gmax < 1e-6, "stationary: |gradient| %.3g", gmax);
	ok(a.w[2] > a.w[0], "the informative feature weighs more");
	logreg_free(&a);
	memset(lab, 0, sizeof lab);
	ok(logreg_fit(&a, F, lab, N, D, lambda, 100) == PV_E_RANGE,
	    "one class only: PV_E_RANGE");
	logreg_free(&a);
}

int
main(void)
{
	test_params();
	test_logsoftmax();
	test_auc();
	test_loss_attack();
	test_shadow_attack();
	test_logreg();
	return tap_done();
}
