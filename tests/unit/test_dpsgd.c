/*
 * Unit tests of lib/mech/dpsgd: the DP-SGD trainer, its privacy plan and
 * its ledger entry, called directly (not through dpsgd-train).
 *
 * Independent expectations:
 * - dpsgd_check_params accepts a consistent set and rejects each bad
 *   field alone;
 * - the plan: q = B / N_public exactly, steps = round(epochs / q) with
 *   DP-SGD and ceil(epochs * ceil(n / B)) without;
 * - the ledger entry at q = 1 is the Gaussian mechanism's closed form,
 *   steps * alpha / (2 sigma^2) at every order, and an audit of R
 *   trainings is R times one training;
 * - a solved sigma meets epsilon, and 1% less noise does not;
 * - the noisy step: with a negligible clip bound and SGD at lr 1 from 0
 *   (logistic regression starts at 0), one step moves every parameter by
 *   -noise / B, so the moves scaled by B / noise_std have mean 0 and
 *   variance 1 (10200 draws, fixed seeds: the sample variance has sd
 *   0.014, the tolerance 0.06 is over 4 sd);
 * - clipping: without noise, one step at q = 1 from 0 moves the
 *   parameters by at most lr * C (the mean of n clipped gradients over
 *   B = n), though the unclipped gradients are much larger, as the test
 *   shows by turning clipping off;
 * - training without privacy fits separable data (validation accuracy
 *   1) and reports its epochs;
 * - DANN protecting both domains: D's parameters follow the model's, each
 *   domain has its own q = B / N_public and ledger entry, and the train.*
 *   keys name the streams; associative adaptation trains without DP-SGD
 *   and writes no DP keys.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpsgd.h"
#include "noise_fast.h"
#include "rdp.h"
#include "tap.h"

/* n rows of d features, two classes split by the sign of feature 0
 * (shifted away from 0 by 1), the others uniform in [-s, s]. */
static void
make_data(struct dpsgd_data *dt, size_t n, size_t d, float s, struct rng *r)
{
	dt->n = n;
	dt->d = d;
	dt->X = calloc(n * d, sizeof *dt->X);
	dt->y = calloc(n, sizeof *dt->y);
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < d; j++)
			dt->X[i * d + j] = s * (2 * (float)(rng_u64(r) >> 11) *
			    0x1p-53f - 1);
		dt->y[i] = (int32_t)(i % 2);
		dt->X[i * d] = (dt->y[i] ? 1 : -1) * (1 + fabsf(dt->X[i * d]));
	}
}

static void
free_data(struct dpsgd_data *dt)
{
	free(dt->X);
	free(dt->y);
}

/* Logistic regression (one layer) of d inputs and K classes. */
static void
logreg(struct nn_model *m, size_t d, size_t K)
{
	size_t w[2] = { d, K };

	if (model_init(m, w, 1) != 0)
		abort();
}

/* A classifier of DP-SGD with sigma given. */
static void
dp_params(struct dpsgd_params *p, double sigma, size_t batch, uint64_t npub,
    double epochs)
{
	dpsgd_defaults(p);
	p->mode = sigma > 0 ? DPSGD_DP : DPSGD_CLIP_ONLY;
	p->has_sigma = 1;
	p->sigma = sigma;
	p->has_epochs = 1;
	p->epochs = epochs;
	p->batch = batch;
	p->public_records[0] = npub;
	p->seeded = 1;
	p->seed = 42;
}

static void
test_check_params(void)
{
	struct dpsgd_params good, p;

	dpsgd_defaults(&good);
	good.has_eps = good.has_delta = good.has_epochs = 1;
	good.epsilon = 1;
	good.delta = 1e-5;
	good.epochs = 2;
	good.public_records[0] = 1000;
	ok(dpsgd_check_params(&good) == NULL, "check: a DP-SGD classifier "
	    "with epsilon, delta and epochs is accepted");
#define BAD(what, stmt) do { p = good; stmt; \
	ok(dpsgd_check_params(&p) != NULL, "check rejects " what); } while (0)
	BAD("batch 0", p.batch = 0);
	BAD("a batch over the limit", p.batch = (size_t)DPSGD_MAX_BATCH + 1);
	BAD("clip 0", p.clip = 0);
	BAD("a clip bound over NN_CLIP_MAX", p.clip = NN_CLIP_MAX * 2);
	BAD("epochs 0", p.epochs = 0);
	BAD("epsilon 0", p.epsilon = 0);
	BAD("epsilon without delta", p.has_delta = 0);
	BAD("delta 1", p.delta = 1);
	BAD("no epsilon and no sigma", p.has_eps = 0);
	BAD("epsilon, sigma and epochs together", (p.has_sigma = 1,
	    p.sigma = 1));
	BAD("a missing declared size", p.public_records[0] = 0);
	BAD("a declared size over NN_MAX_RECORDS", p.public_records[0] =
	    NN_MAX_RECORDS + 1);
	BAD("sigma 0 with epsilon", (p.mode = DPSGD_CLIP_ONLY,
	    p.has_sigma = 1, p.sigma = 0, p.has_epochs = 0));
	BAD("DP mode with sigma 0", (p.has_eps = 0, p.has_sigma = 1,
	    p.sigma = 0));
	BAD("assoc with DP-SGD", p.adapt = DPSGD_ASSOC);
	BAD("dann with DP-SGD protecting nothing", p.adapt = DPSGD_DANN);
	BAD("a negative sigma", (p.has_eps = 0, p.has_sigma = 1,
	    p.sigma = -1));
	BAD("lr 0", p.oc.lr = 0);
	BAD("momentum 1", p.oc.momentum = 1);
	BAD("an unknown mode", p.mode = 7);
	BAD("an audit of too many trainings", p.audit = DPSGD_MAX_AUDIT + 1);
	BAD("without DP-SGD, epsilon", p.mode = DPSGD_NODP);
	BAD("without DP-SGD, no epochs", (p.mode = DPSGD_NODP, p.has_eps = 0,
	    p.has_delta = 0, p.has_epochs = 0));
#undef BAD
	p = good;
	p.adapt = DPSGD_DANN;
	p.protect = DPSGD_PROTECT_TARGET;
	ok(dpsgd_check_params(&p) != NULL, "check: dann protecting the "
	    "target needs the target's declared size");
	p.public_records[1] = 500;
	ok(dpsgd_check_params(&p) == NULL, "check: ... and accepts it");
}

/* The plan and the ledger entry at q = 1: the Gaussian mechanism's RDP,
 * steps * alpha / (2 sigma^2). */
static void
test_plan_q1(void)
{
	struct dpsgd_params p;
	struct dpsgd_data dt;
	struct nn_model m;
	struct dpsgd *t;
	struct dpsgd_plan pl;
	struct dpsgd_summary sm;
	struct ledger_entry e;
	struct rng *r;
	double sigma = 2.5, worst = 0;
	int rc;

	rng_new_seeded(&r, 1, "test/data");
	make_data(&dt, 64, 5, 1, r);
	logreg(&m, 5, 2);
	dp_params(&p, sigma, 100, 64, 3);
	p.exact = 1;
	ok(dpsgd_check_params(&p) == NULL, "plan q=1: params accepted");
	rc = dpsgd_new(&t, &p, &m, NULL, m.nparam, 2, &dt, NULL, NULL);
	ok(rc == 0 && dpsgd_plan(t) == 0, "plan q=1: planned");
	dpsgd_stream_plan(t, 0, &pl);
	dpsgd_summary(t, &sm);
	ok(pl.dp && pl.q == 1 && pl.npub == 64, "plan: batch >= N gives q = 1");
	ok(sm.steps == 3 && sm.steps_per_epoch == 1, "plan: 3 epochs at q = 1 "
	    "are 3 steps (got %llu)", (unsigned long long)sm.steps);
	ok(pl.sens >= p.clip && pl.noise_std >= sigma * pl.sens &&
	    pl.noise_std <= 1.01 * sigma * pl.sens, "plan: noise sd %.9g is "
	    "sigma times a sensitivity %.9g >= C", pl.noise_std, pl.sens);
	memset(&e, 0, sizeof e);
	ok(dpsgd_ledger_entry(t, 0, &e) == 0, "ledger entry filled");
	for (size_t i = 0; i < e.norders; i++) {
		double want = 3 * e.orders[i] / (2 * sigma * sigma);
		double err = fabs(e.rdp[i] - want) / want;
		if (err > worst)
			worst = err;
	}
	ok(e.norders > 0 && worst < 1e-9, "ledger: RDP at q = 1 is steps * "
	    "alpha / (2 sigma^2) at %zu orders (worst relative error %.3g)",
	    e.norders, worst);
	ok(strcmp(e.mechanism, DPSGD_MECHANISM) == 0 &&
	    e.relation == LEDGER_ADD_REMOVE && e.tv == 0,
	    "ledger: subsampled_gaussian, add/remove, exact noise has no TV");
	ok(ts_meta_get(&e.params, "public_records") != NULL &&
	    strtod(ts_meta_get(&e.params, "public_records"), NULL) == 64 &&
	    strtod(ts_meta_get(&e.params, "steps"), NULL) == 3,
	    "ledger: the params record the declared size and the steps");
	ts_meta_free(&e.params);
	ok(pl.release && pl.private_for, "plan: DP-SGD is released, private");
	dpsgd_free(t);
	p.unsafe = 1;
	dpsgd_new(&t, &p, &m, NULL, m.nparam, 2, &dt, NULL, NULL);
	dpsgd_plan(t);
	dpsgd_stream_plan(t, 0, &pl);
	ok(pl.release && !pl.private_for, "plan: without clipping the release "
	    "is recorded but not private");
	dpsgd_free(t);
	model_free(&m);
	free_data(&dt);
	rng_free(r);
}

/* The RDP of one subsampled entry, times the audit's trainings. */
static void
test_audit_entry(void)
{
	struct dpsgd_params p;
	struct dpsgd_data dt;
	struct nn_model m;
	struct dpsgd *t;
	struct ledger_entry e1, e3;
	struct rng *r;
	double worst = 0, one;

	rng_new_seeded(&r, 2, "test/data");
	make_data(&dt, 200, 4, 1, r);
	logreg(&m, 4, 2);
	dp_params(&p, 1.3, 20, 200, 1);
	p.exact = 1;
	dpsgd_new(&t, &p, &m, NULL, m.nparam, 2, &dt, NULL, NULL);
	dpsgd_plan(t);
	memset(&e1, 0, sizeof e1);
	dpsgd_ledger_entry(t, 0, &e1);
	dpsgd_free(t);
	p.audit = 3;
	dpsgd_new(&t, &p, &m, NULL, m.nparam, 2, &dt, NULL, NULL);
	dpsgd_plan(t);
	memset(&e3, 0, sizeof e3);
	dpsgd_ledger_entry(t, 0, &e3);
	for (size_t i = 0; i < e1.norders; i++)
		if (fabs(e3.rdp[i] - 3 * e1.rdp[i]) > worst)
			worst = fabs(e3.rdp[i] - 3 * e1.rdp[i]) / e1.rdp[i];
	ok(worst < 1e-12, "ledger: an audit of 3 trainings costs 3 times one");
	rdp_sgm1(0.1, 1.3, e1.orders[3], &one);
	ok(fabs(e1.rdp[3] - 10 * one) <= 1e-12 * e1.rdp[3], "ledger: q = "
	    "B / N = 0.1, 10 steps: 10 times the subsampled Gaussian's RDP");
	ok(strtod(ts_meta_get(&e3.params, "audit_releases"), NULL) == 3,
	    "ledger: the audit's trainings are a param");
	ts_meta_free(&e1.params);
	ts_meta_free(&e3.params);
	dpsgd_free(t);
	model_free(&m);
	free_data(&dt);
	rng_free(r);
}

/* Sigma solved for epsilon meets it, and not with 1% less noise. */
static void
test_solve(void)
{
	struct dpsgd_params p;
	struct dpsgd_data dt;
	struct nn_model m;
	struct dpsgd *t;
	struct dpsgd_plan pl;
	struct rng *r;
	double e_at, e_less;

	rng_new_seeded(&r, 3, "test/data");
	make_data(&dt, 300, 4, 1, r);
	logreg(&m, 4, 2);
	dpsgd_defaults(&p);
	p.has_eps = p.has_delta = p.has_epochs = 1;
	p.epsilon = 2;
	p.delta = 1e-5;
	p.epochs = 5;
	p.batch = 30;
	p.public_records[0] = 300;
	p.exact = 1;
	ok(dpsgd_check_params(&p) == NULL, "solve: params accepted");
	dpsgd_new(&t, &p, &m, NULL, m.nparam, 2, &dt, NULL, NULL);
	ok(dpsgd_plan(t) == 0, "solve: planned");
	dpsgd_stream_plan(t, 0, &pl);
	rdp_sgm_epsilon(0.1, pl.sigma, 50, 1e-5, NULL, 0, RDP_CONV_IMPROVED,
	    &e_at, NULL);
	rdp_sgm_epsilon(0.1, pl.sigma * 0.99, 50, 1e-5, NULL, 0,
	    RDP_CONV_IMPROVED, &e_less, NULL);
	ok(e_at <= 2 * (1 + 1e-9) && e_less > 2, "solve: sigma %.6g meets "
	    "epsilon 2 in 50 steps (%.6g), 0.99 sigma does not (%.6g)",
	    pl.sigma, e_at, e_less);
	ok(fabs(pl.eps - e_at) <= 1e-12 * e_at, "solve: the plan reports its "
	    "epsilon");
	dpsgd_free(t);
	/* The fast sampler: its TV is charged to delta, so the solve at the
	 * reduced delta needs at least as much noise. */
	p.exact = 0;
	{
		struct dpsgd_plan fast;

		dpsgd_new(&t, &p, &m, NULL, m.nparam, 2, &dt, NULL, NULL);
		ok(dpsgd_plan(t) == 0, "solve: planned with the fast sampler");
		dpsgd_stream_plan(t, 0, &fast);
		ok(fast.sigma >= pl.sigma, "solve: the fast sampler's charge "
		    "costs noise (%.9g >= %.9g)", fast.sigma, pl.sigma);
		dpsgd_free(t);
	}
	/* Too little noise for the declared size: a usage error. */
	dp_params(&p, 1e-9, 30, 300, 1);
	dpsgd_new(&t, &p, &m, NULL, m.nparam, 2, &dt, NULL, NULL);
	ok(dpsgd_plan(t) == PV_E_OPTION && strstr(dpsgd_errmsg(t),
	    "too small") != NULL, "plan: sigma 1e-9 is refused: %s",
	    dpsgd_errmsg(t));
	dpsgd_free(t);
	model_free(&m);
	free_data(&dt);
	rng_free(r);
}

/* The noisy step's scale, and the TV of the fast sampler in the entry. */
static void
test_noise_scale(void)
{
	struct dpsgd_params p;
	struct dpsgd_data dt;
	struct nn_model m;
	struct dpsgd *t;
	struct dpsgd_plan pl;
	struct ledger_entry e;
	struct rng *r;
	size_t d = 50, K = 10, np, runs = 20;
	double s1 = 0, s2 = 0, mean, var;
	float *all;

	rng_new_seeded(&r, 4, "test/data");
	make_data(&dt, 100, d, 1, r);
	logreg(&m, d, K);
	np = m.nparam;
	/* q = 1, one step; C 1e-8 against noise sd about 1e-3: the clipped
	 * sum (at most 100 C) is 1e-3 of the noise. */
	dp_params(&p, 1e5, 100, 100, 1);
	p.clip = 1e-8;
	p.audit = runs;
	p.oc.lr = 1;
	all = calloc(runs * np, sizeof *all);
	dpsgd_new(&t, &p, &m, NULL, np, K, &dt, NULL, NULL);
	ok(dpsgd_plan(t) == 0, "noise: planned");
	dpsgd_stream_plan(t, 0, &pl);
	ok(dpsgd_train(t, r, all) == 0, "noise: %zu trainings", runs);
	for (size_t i = 0; i < runs * np; i++) {
		double z = -(double)all[i] * 100 / pl.noise_std;
		s1 += z;
		s2 += z * z;
	}
	mean = s1 / (double)(runs * np);
	var = s2 / (double)(runs * np) - mean * mean;
	ok(fabs(mean) < 0.05 && fabs(var - 1) < 0.06, "noise: a step moves "
	    "each parameter by noise / B, sd noise_std (mean %.4f, variance "
	    "%.4f of %zu)", mean, var, runs * np);
	dpsgd_stream_plan(t, 0, &pl);
	memset(&e, 0, sizeof e);
	dpsgd_ledger_entry(t, 0, &e);
	ok(pl.tv > 0 && e.tv == pl.tv && e.tv_epsilon == NOISE_FAST_EPS_REF &&
	    e.delta == noise_fast_delta_charge(NOISE_FAST_EPS_REF, e.tv),
	    "ledger: the fast sampler's TV %.3g is charged to delta at "
	    "epsilon 32", pl.tv);
	ts_meta_free(&e.params);
	dpsgd_free(t);
	free(all);
	model_free(&m);
	free_data(&dt);
	rng_free(r);
}

/* Clipping bounds a step; without it the same step is larger. */
static double
clip_step_norm(int unsafe, int *release, int *private_for)
{
	struct dpsgd_plan pl;
	struct dpsgd_params p;
	struct dpsgd_data dt;
	struct nn_model m;
	struct dpsgd *t;
	struct rng *r;
	double s = 0;

	rng_new_seeded(&r, 5, "test/data");
	make_data(&dt, 40, 6, 50, r);	/* rows of norm about 70 */
	logreg(&m, 6, 3);
	dp_params(&p, 0, 40, 40, 1);	/* sigma 0: clip only; q = 1 */
	p.clip = 0.5;
	p.unsafe = unsafe;
	p.oc.lr = 1;
	dpsgd_new(&t, &p, &m, NULL, m.nparam, 3, &dt, NULL, NULL);
	if (dpsgd_plan(t) != 0 || dpsgd_train(t, r, NULL) != 0)
		return -1;
	dpsgd_stream_plan(t, 0, &pl);
	*release = pl.release;
	*private_for = pl.private_for;
	for (size_t i = 0; i < m.nparam; i++)
		s += (double)m.param[i] * m.param[i];
	dpsgd_free(t);
	model_free(&m);
	free_data(&dt);
	rng_free(r);
	return sqrt(s);
}

static void
test_clip(void)
{
	int rel, priv;
	double c = clip_step_norm(0, &rel, &priv), u;

	ok(!rel && !priv, "clip only: no release, not private");
	u = clip_step_norm(1, &rel, &priv);

	ok(c >= 0 && c <= 0.5 * (1 + 1e-6), "clip: a step from 0 at lr 1 "
	    "moves at most C = 0.5 (%.9g)", c);
	ok(u > 2, "clip: the same step unclipped is larger (%.4g)", u);
}

static int progress_calls, report_calls;

static void
count_progress(void *ctx, const char *what, uint64_t done, uint64_t total,
    double loss)
{
	(void)ctx;
	(void)loss;
	(void)done;
	(void)total;
	if (what != NULL)
		progress_calls++;
}

static void
count_report(void *ctx, const char *line)
{
	(void)ctx;
	if (strncmp(line, "epoch ", 6) == 0)
		report_calls++;
}

/* Without privacy on separable data: accuracy 1, epochs reported. */
static void
test_nodp(void)
{
	struct dpsgd_params p;
	struct dpsgd_data dt, va;
	struct nn_model m;
	struct dpsgd *t;
	struct dpsgd_summary sm;
	struct rng *r;

	rng_new_seeded(&r, 6, "test/data");
	make_data(&dt, 250, 3, 1, r);
	make_data(&va, 100, 3, 1, r);
	logreg(&m, 3, 2);
	dpsgd_defaults(&p);
	p.mode = DPSGD_NODP;
	p.has_epochs = 1;
	p.epochs = 4;
	p.batch = 32;
	p.progress = count_progress;
	p.report = count_report;
	ok(dpsgd_check_params(&p) == NULL, "no dp: params accepted");
	dpsgd_new(&t, &p, &m, NULL, m.nparam, 2, &dt, NULL, &va);
	ok(dpsgd_plan(t) == 0, "no dp: planned");
	dpsgd_summary(t, &sm);
	ok(sm.steps_per_epoch == 8 && sm.steps == 32, "no dp: ceil(250 / 32) "
	    "= 8 steps an epoch, 32 in 4 epochs");
	ok(dpsgd_train(t, r, NULL) == 0, "no dp: trained");
	dpsgd_summary(t, &sm);
	ok(sm.best_acc == 1 && sm.epochs_run == 4 && sm.best_epoch >= 1,
	    "no dp: separable data are fitted (validation accuracy %.3f)",
	    sm.best_acc);
	ok(progress_calls == 32 && report_calls == 4, "no dp: a progress "
	    "call per step (%d), a report per epoch (%d)", progress_calls,
	    report_calls);
	dpsgd_free(t);
	model_free(&m);
	free_data(&dt);
	free_data(&va);
	rng_free(r);
}

/* An MLP d-h-K. */
static void
mlp(struct nn_model *m, size_t d, size_t h, size_t K)
{
	size_t w[3] = { d, h, K };

	if (model_init(m, w, 2) != 0)
		abort();
}

/* DANN protecting both domains: D's parameters follow the model's, zero
 * until trained; each domain gets its own plan and ledger entry; the
 * train.* keys name the streams. */
static void
test_dann(void)
{
	struct dpsgd_params p;
	struct dpsgd_data src, tgt;
	struct nn_model m;
	struct nn_dann nets;
	struct dpsgd *t;
	struct dpsgd_plan ps, pt;
	struct dpsgd_meta mi = { { "src", "tgt" }, NULL, 0 };
	struct ts_meta meta = { 0 };
	struct ledger_entry e;
	struct rng *r;
	size_t dh[1] = { 4 }, np, zero = 0, finite = 0;
	int rc;

	rng_new_seeded(&r, 7, "test/data");
	make_data(&src, 120, 5, 1, r);
	make_data(&tgt, 80, 5, 1, r);
	mlp(&m, 5, 6, 2);
	rc = dpsgd_add_domain(&m, &nets, 1, dh, 1, &np);
	/* D: 6 -> 4 -> 2. */
	ok(rc == 0 && np == m.nparam + 6 * 4 + 4 + 4 * 2 + 2, "dann: D's "
	    "%zu parameters follow the model's %zu", np - m.nparam, m.nparam);
	for (size_t i = m.nparam; i < np; i++)
		zero += m.param[i] == 0;
	ok(zero == np - m.nparam, "dann: D's parameters start at zero");
	dp_params(&p, 1.5, 20, 120, 2);
	p.adapt = DPSGD_DANN;
	p.protect = DPSGD_PROTECT_BOTH;
	p.public_records[1] = 100;
	ok(dpsgd_check_params(&p) == NULL, "dann: params accepted");
	dpsgd_new(&t, &p, &m, &nets, np, 2, &src, &tgt, NULL);
	ok(dpsgd_plan(t) == 0 && dpsgd_train(t, r, NULL) == 0, "dann: trained "
	    "(%s)", dpsgd_errmsg(t));
	dpsgd_stream_plan(t, 0, &ps);
	dpsgd_stream_plan(t, 1, &pt);
	ok(ps.dp && pt.dp && strcmp(ps.name, "source") == 0 &&
	    strcmp(pt.name, "target") == 0, "dann: both domains are protected");
	ok(ps.q == 20.0 / 120 && pt.q == 20.0 / 100, "dann: each domain's q "
	    "is B over its declared size");
	for (size_t i = 0; i < np; i++)
		finite += isfinite(m.param[i]) != 0;
	ok(finite == np, "dann: the parameters are finite");
	memset(&e, 0, sizeof e);
	ok(dpsgd_ledger_entry(t, 1, &e) == 0 && strtod(ts_meta_get(&e.params,
	    "q"), NULL) == pt.q, "dann: the target's entry has its own q");
	ts_meta_free(&e.params);
	ok(dpsgd_put_meta(t, &meta, &mi) == 0 &&
	    strcmp(ts_meta_get(&meta, "train.adapt"), "dann") == 0 &&
	    strcmp(ts_meta_get(&meta, "train.protect"), "both") == 0 &&
	    strcmp(ts_meta_get(&meta, "train.target.dataset"), "tgt") == 0 &&
	    strtod(ts_meta_get(&meta, "train.source.q"), NULL) == ps.q &&
	    strcmp(ts_meta_get(&meta, "train.mode"), "dp_sgd") == 0 &&
	    ts_meta_get(&meta, "train.q") == NULL, "dann: the train.* keys "
	    "name each stream");
	ts_meta_free(&meta);
	{
		struct ts_meta raw = { 0 };
		char err[256];

		ts_meta_set(&raw, "dp.raw.src", "row-local");
		ts_meta_set(&raw, "dp.raw.tgt", "row-local");
		ts_meta_set(&raw, "dp.raw.other", "row-local");
		ok(dpsgd_mark_raw(t, &raw, &mi, err, sizeof err) == 0 &&
		    strcmp(ts_meta_get(&raw, "dp.raw.src"), "row-local") == 0 &&
		    strcmp(ts_meta_get(&raw, "dp.raw.tgt"), "row-local") == 0 &&
		    strcmp(ts_meta_get(&raw, "dp.raw.other"), "aggregate") == 0,
		    "dann: the protected datasets stay raw, another becomes "
		    "aggregate");
		ok(ps.release && ps.private_for && pt.release && pt.private_for,
		    "dann: a release is due for each domain, private for both");
		ts_meta_free(&raw);
	}
	dpsgd_free(t);
	model_free(&m);
	free_data(&src);
	free_data(&tgt);
	rng_free(r);
}

/* Associative adaptation without DP-SGD trains on both streams and
 * records its weights; a classifier's keys have no stream part. */
static void
test_assoc_meta(void)
{
	struct dpsgd_params p;
	struct dpsgd_data src, tgt;
	struct nn_model m;
	struct dpsgd *t;
	struct dpsgd_meta mi = { { "src", "tgt" }, "cosine", 0 };
	struct ts_meta meta = { 0 };
	struct rng *r;
	size_t finite = 0;

	rng_new_seeded(&r, 8, "test/data");
	make_data(&src, 60, 4, 1, r);
	make_data(&tgt, 50, 4, 1, r);
	mlp(&m, 4, 5, 2);
	dpsgd_defaults(&p);
	p.mode = DPSGD_NODP;
	p.adapt = DPSGD_ASSOC;
	p.has_epochs = 1;
	p.epochs = 2;
	p.batch = 16;
	p.beta[2] = 0.3;
	p.seeded = 1;
	ok(dpsgd_check_params(&p) == NULL, "assoc: params accepted");
	dpsgd_new(&t, &p, &m, NULL, m.nparam, 2, &src, &tgt, NULL);
	ok(dpsgd_plan(t) == 0 && dpsgd_train(t, r, NULL) == 0, "assoc: "
	    "trained");
	for (size_t i = 0; i < m.nparam; i++)
		finite += isfinite(m.param[i]) != 0;
	ok(finite == m.nparam, "assoc: the parameters are finite");
	ok(dpsgd_put_meta(t, &meta, &mi) == 0 &&
	    strcmp(ts_meta_get(&meta, "train.adapt"), "assoc") == 0 &&
	    strtod(ts_meta_get(&meta, "train.beta_cover"), NULL) == 0.3 &&
	    strcmp(ts_meta_get(&meta, "train.lr_schedule"), "cosine") == 0 &&
	    strcmp(ts_meta_get(&meta, "train.mode"), "no_dp") == 0 &&
	    ts_meta_get(&meta, "train.clip") == NULL, "assoc: the train.* "
	    "keys, no DP keys");
	ts_meta_free(&meta);
	dpsgd_free(t);
	model_free(&m);
	free_data(&src);
	free_data(&tgt);
	rng_free(r);
}

int
main(void)
{
	test_check_params();
	test_plan_q1();
	test_audit_entry();
	test_solve();
	test_noise_scale();
	test_clip();
	test_nodp();
	test_dann();
	test_assoc_meta();
	return tap_done();
}
