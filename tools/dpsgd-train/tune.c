/*
 * tune.c: dpsgd-train --tune, private hyper-parameter tuning by repeat
 * and select (lib/dp/tune.h; dpsgd-train.h).
 *
 * The input's rows are split by a public seed into a training part and a
 * validation part: a row is validation when the XXH64 of its bytes
 * (features, label) under the seed falls below --val-fraction of 2^64,
 * so adding or removing a record changes one part by that record and
 * nothing else.  One trial draws a configuration of the grid uniformly
 * (public randomness), trains it with DP-SGD on the training part (its
 * declared size: --public-records minus the validation part's declared
 * size, round(F N)) and scores the model by the number of validation
 * rows it classifies correctly plus discrete Gaussian noise (sensitivity
 * 1 under add/remove), divided by the validation part's declared size.
 * K ~ --tune-trials trials run; the model with the best noisy score is
 * written, with its configuration and noisy score; no other trial's
 * model or score, and not K, leaves the tool.  The whole is one release,
 * charged before the first trial runs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accuracy.h"
#include "cli.h"
#include "dpcli.h"
#include "dpsgd.h"
#include "dpsgd-train.h"
#include "dpsgdopt.h"
#include "ledger.h"
#include "model.h"
#include "nn.h"
#include "noise.h"
#include "rdp.h"
#include "tune.h"
#include "xxh64.h"
#include "xycli.h"

#define TUNE_MAX_CONFIGS 1024
#define TUNE_MAX_VALUES 64
#define TUNE_MECHANISM "repeat_select"

/* The grid: each key's values; a configuration picks one of each. */
struct grid {
	double v[4][TUNE_MAX_VALUES];	/* lr, clip, epochs, batch */
	size_t n[4];
	size_t nconf;
};

static const char *const keys[4] = { "lr", "clip", "epochs", "batch" };

static void
grid_parse(const char *arg, struct grid *g)
{
	char *s = cli_strdup(arg), *save = NULL, *item;

	memset(g, 0, sizeof *g);
	for (item = strtok_r(s, ";", &save); item != NULL;
	    item = strtok_r(NULL, ";", &save)) {
		char *eq = strchr(item, '='), *save2 = NULL, *v;
		size_t k;

		if (eq == NULL)
			cli_usage_error("invalid --tune '%s': expected "
			    "KEY=V,V;KEY=V... with keys lr, clip, epochs, "
			    "batch", arg);
		*eq = '\0';
		for (k = 0; k < 4 && strcmp(item, keys[k]) != 0; k++)
			;
		if (k == 4 || g->n[k] != 0)
			cli_usage_error("invalid --tune '%s': '%s' is not one "
			    "of lr, clip, epochs, batch, or is repeated", arg,
			    item);
		for (v = strtok_r(eq + 1, ",", &save2); v != NULL;
		    v = strtok_r(NULL, ",", &save2)) {
			double x;

			if (g->n[k] == TUNE_MAX_VALUES)
				cli_usage_error("invalid --tune '%s': more than "
				    "%d values of %s", arg, TUNE_MAX_VALUES,
				    keys[k]);
			switch (k) {
			case 0:
				x = cli_double("--tune lr", v, 0, 1e6);
				if (!(x > 0))
					cli_usage_error("invalid --tune lr '%s': "
					    "not positive", v);
				break;
			case 1:
				x = cli_double("--tune clip", v, NN_CLIP_MIN,
				    NN_CLIP_MAX);
				break;
			case 2:
				x = cli_double("--tune epochs", v, 0,
				    DPSGD_MAX_EPOCHS);
				if (!(x > 0))
					cli_usage_error("invalid --tune epochs "
					    "'%s': not positive", v);
				break;
			default:
				x = (double)cli_ll("--tune batch", v, 1,
				    DPSGD_MAX_BATCH);
				break;
			}
			g->v[k][g->n[k]++] = x;
		}
		if (g->n[k] == 0)
			cli_usage_error("invalid --tune '%s': no value of %s",
			    arg, keys[k]);
	}
	free(s);
	g->nconf = 1;
	for (size_t k = 0; k < 4; k++)
		if (g->n[k] != 0) {
			g->nconf *= g->n[k];
			if (g->nconf > TUNE_MAX_CONFIGS)
				cli_usage_error("invalid --tune '%s': more than "
				    "%d configurations", arg, TUNE_MAX_CONFIGS);
		}
}

/* Configuration c's parameters into p (the options' values for keys the
 * grid does not name). */
static void
grid_config(const struct grid *g, size_t c, struct dpsgd_params *p)
{
	for (size_t k = 0; k < 4; k++) {
		double x;

		if (g->n[k] == 0)
			continue;
		x = g->v[k][c % g->n[k]];
		c /= g->n[k];
		if (k == 0)
			p->oc.lr = x;
		else if (k == 1)
			p->clip = x;
		else if (k == 2)
			p->epochs = x;
		else
			p->batch = (size_t)x;
	}
}

/* "lr=0.5;clip=1;..." of configuration c. */
static void
grid_name(const struct grid *g, size_t c, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t k = 0; k < 4; k++) {
		if (g->n[k] == 0)
			continue;
		off += (size_t)snprintf(buf + off, off < len ? len - off : 0,
		    "%s%s=%g", off ? ";" : "", keys[k], g->v[k][c % g->n[k]]);
		c /= g->n[k];
	}
}

/* The options --tune cannot go with (usage errors). */
static void
tune_check(struct opts *o)
{
	if (o->ncm || o->p.adapt != DPSGD_CLASSIFY)
		cli_usage_error("--tune trains classifiers: --mode classify "
		    "only");
	if (o->tune_trials == NULL || !o->has_val_fraction)
		cli_usage_error("--tune needs --tune-trials and --val-fraction");
	if (o->val != NULL || o->init != NULL || o->g.nodp ||
	    o->norm_sigma > 0 || o->p.audit || o->batch_full ||
	    o->p.patience || o->p.unsafe)
		cli_usage_error("--tune does not go with --val, --init, --no-dp, "
		    "--normalize, --audit-repeat, --batch full, --patience or "
		    "--unsafe-test-no-clip");
	if (o->c.has_epsilon == o->p.has_sigma)
		cli_usage_error("--tune needs --epsilon and --delta (the tuned "
		    "total) or --sigma (each trial's), not both");
	if (o->p.has_sigma && !(o->p.sigma > 0))
		cli_usage_error("--tune needs noise: --sigma 0 is not private");
	if (!o->c.has_delta)
		cli_usage_error("--tune needs --delta");
	if (o->p.public_records[0] == 0)
		cli_usage_error("--tune needs --public-records (the input's "
		    "size, declared public)");
}

/* Whether row i of s goes to validation. */
static int
is_val(const struct xyset *s, size_t i, uint64_t seed, double frac)
{
	struct ts_xxh64 h;

	ts_xxh64_init(&h, seed);
	ts_xxh64_update(&h, s->X + i * s->d, s->d * sizeof *s->X);
	ts_xxh64_update(&h, s->y + i, sizeof *s->y);
	return (double)ts_xxh64_final(&h) < ldexp(frac, 64);
}

/* A fresh model for the rows of tr under p (dpsgd_setup_model). */
static void
new_model(struct opts *o, const struct dpsgd_params *p,
    const struct xyset *tr, const struct dpsgd_data *view, const char *label,
    struct nn_model *m, size_t *K, size_t *np)
{
	struct nn_dann nets;
	struct dpsgd_setup su;
	char serr[4096];
	int rc;

	su = (struct dpsgd_setup){ .dp = 1, .classes = o->classes,
	    .hidden = o->hidden, .nhidden = o->nhidden, .freeze = o->freeze,
	    .lset = &tr->lset, .y = view->y, .n = view->n, .d = tr->d,
	    .mode = modes[DPSGD_CLASSIFY], .label = label,
	    .arch = o->arch != NULL ? o->spec : NULL, .narch = o->nspec,
	    .shape = { o->tshape[0], o->tshape[1], o->tshape[2] },
	    .act = o->act };
	memset(&nets, 0, sizeof nets);
	if ((rc = dpsgd_setup_model(m, &nets, p, &su, K, np, serr,
	    sizeof serr)) != 0)
		setup_die(rc, serr);
}

__attribute__((noreturn)) static void
trainer_die(const struct dpsgd *t, int rc)
{
	if (rc == PV_E_OPTION)
		cli_usage_error("%s", dpsgd_errmsg(t));
	cli_die(rc == PV_E_NOMEM || rc == PV_E_ENTROPY ? EX_OSERR :
	    EX_SOFTWARE, "%s", t != NULL ? dpsgd_errmsg(t) : "out of memory");
}

int
run_tune(struct opts *o, int argc, char **argv)
{
	struct grid g;
	struct tune_dist dist;
	struct xyset tr;
	struct dpsgd_data tv;
	struct dpsgd_params *tp = NULL;
	struct dpsgd *best = NULL;
	struct nn_model *bm = NULL;
	struct dpsgd_meta mi;
	struct ledger_entry e;
	struct ts_meta meta = { 0 }, prov = { 0 };
	struct ts_writer *w;
	struct noise_dg *dg;
	struct rng *rng;
	const double *ord;
	double *qc, trial[RDP_DEFAULT_NORDERS], tuned[RDP_DEFAULT_NORDERS];
	double sigma, eps, eps1, best_score = -INFINITY;
	uint64_t *sc, npub, nvpub, ntpub, k;
	float *Xv;
	int32_t *yv;
	size_t nv = 0, nt = 0, no, K, np, bestc = 0;
	const char *label, *dataset;
	char err[256], cname[512], oerr[DPSGD_OPT_ERRLEN];
	FILE *in, *ofp;
	int rc;

	if (argc > 1)
		cli_usage_error("at most one input file");
	tune_check(o);
	grid_parse(o->tune, &g);
	if (tune_dist_parse(o->tune_trials, &dist, err, sizeof err) != 0)
		cli_usage_error("invalid --tune-trials %s", err);
	if (g.n[2] == 0 && !o->p.has_epochs)
		cli_usage_error("--tune: give the epochs in the grid or by "
		    "--epochs");
	npub = o->p.public_records[0];
	nvpub = (uint64_t)llround(o->val_fraction * (double)npub);
	if (nvpub == 0 || nvpub >= npub)
		cli_usage_error("--val-fraction %g of --public-records %llu "
		    "leaves an empty part", o->val_fraction,
		    (unsigned long long)npub);
	ntpub = npub - nvpub;
	/* Every trial is plain DP-SGD with a given noise multiplier and
	 * the exact sampler (the fast one's total variation would add up
	 * over an unbounded number of trials). */
	o->p.exact = 1;
	o->p.has_epochs = 1;
	{
		struct dpsgd_params c = o->p;

		c.has_eps = 0;
		c.has_sigma = 1;
		c.sigma = 1;
		c.public_records[0] = ntpub;
		grid_config(&g, 0, &c);
		if (dpsgd_check_options(&c, &o->g, oerr, sizeof oerr) != NULL ||
		    dpsgd_check_inputs(&c, &o->g, oerr, sizeof oerr) != NULL)
			cli_usage_error("%s", oerr);
		o->p.mode = c.mode;
	}

	in = cli_open_in(argc ? argv[0] : NULL, &label);
	ofp = cli_out_open(o->c.output, o->c.force);
	rng = dpcli_rng(o->c.seed, DPSGD_WORK_ITEM "/tune");
	xy_read(&tr, in, label, 1);
	cli_close_in(in);
	if (o->arch != NULL)
		arch_shape(o, &tr, o->tshape);
	dataset = dpcli_dataset(&tr.meta, o->c.dataset, label);
	warn_dropped(o, &tr, 1);
	xy_zero_rows(&tr, 1);
	if (tr.n > NN_MAX_RECORDS)
		cli_die(EX_DATAERR, "%s: %zu records exceed the DP-SGD limit of "
		    "%llu", label, tr.n, (unsigned long long)NN_MAX_RECORDS);

	/* The split, in place: training rows first, validation rows into
	 * their own arrays. */
	Xv = cli_reallocarray(NULL, tr.n ? tr.n * tr.d : 1, sizeof *Xv);
	yv = cli_reallocarray(NULL, tr.n ? tr.n : 1, sizeof *yv);
	for (size_t i = 0; i < tr.n; i++) {
		if (is_val(&tr, i, o->split_seed, o->val_fraction)) {
			memcpy(Xv + nv * tr.d, tr.X + i * tr.d, tr.d *
			    sizeof *Xv);
			yv[nv++] = tr.y[i];
		} else {
			if (nt != i) {
				memmove(tr.X + nt * tr.d, tr.X + i * tr.d,
				    tr.d * sizeof *tr.X);
				tr.y[nt] = tr.y[i];
			}
			nt++;
		}
	}
	tv = (struct dpsgd_data){ tr.X, tr.y, nt, tr.d };

	/* Each configuration's plan: q and steps at the trial's declared
	 * size. */
	qc = cli_reallocarray(NULL, g.nconf, sizeof *qc);
	sc = cli_reallocarray(NULL, g.nconf, sizeof *sc);
	tp = cli_reallocarray(NULL, g.nconf, sizeof *tp);
	for (size_t c = 0; c < g.nconf; c++) {
		struct nn_model m;
		struct dpsgd *t = NULL;
		struct dpsgd_plan pl;
		struct dpsgd_summary sm;

		tp[c] = o->p;
		tp[c].has_eps = 0;
		tp[c].has_sigma = 1;
		tp[c].sigma = o->p.has_sigma ? o->p.sigma : 1;
		tp[c].public_records[0] = ntpub;
		tp[c].progress = NULL;
		tp[c].report = NULL;
		grid_config(&g, c, &tp[c]);
		if (dpsgd_check_params(&tp[c]) != NULL)
			cli_usage_error("--tune: %s", dpsgd_check_params(&tp[c]));
		new_model(o, &tp[c], &tr, &tv, label, &m, &K, &np);
		if ((rc = dpsgd_new(&t, &tp[c], &m, NULL, np, K, &tv, NULL,
		    NULL)) != 0 || (rc = dpsgd_plan(t)) != 0)
			trainer_die(t, rc);
		dpsgd_stream_plan(t, 0, &pl);
		dpsgd_summary(t, &sm);
		qc[c] = pl.q;
		sc[c] = sm.steps;
		dpsgd_free(t);
		model_free(&m);
	}

	/* The noise: the given multiplier, or the one whose tuned total
	 * meets --epsilon; then the release, charged before any trial. */
	ord = rdp_default_orders(&no);
	if (o->p.has_sigma) {
		sigma = o->p.sigma;
	} else if ((rc = tune_solve_sigma(&dist, g.nconf, qc, sc,
	    o->score_sigma, o->c.delta, o->c.epsilon, &sigma, &eps)) != 0) {
		if (rc == PV_E_NOROOT)
			cli_usage_error("--epsilon %g cannot be met: the tuning "
			    "of the score alone (--tune-score-sigma %g) costs "
			    "more", o->c.epsilon, o->score_sigma);
		cli_die(rc == PV_E_NOMEM ? EX_OSERR : EX_SOFTWARE,
		    "accountant: %s", rdp_strerror(rc));
	}
	if ((rc = tune_trial_sgm(g.nconf, qc, sc, sigma, o->score_sigma, ord,
	    no, trial)) != 0 || (rc = tune_rdp(&dist, ord, trial, no,
	    tuned)) != 0 || (rc = rdp_to_epsilon(ord, tuned, no, o->c.delta,
	    RDP_CONV_IMPROVED, &eps, NULL)) != 0 || (rc = rdp_to_epsilon(ord,
	    trial, no, o->c.delta, RDP_CONV_IMPROVED, &eps1, NULL)) != 0)
		cli_die(rc == PV_E_NOMEM ? EX_OSERR : EX_SOFTWARE,
		    "accountant: %s", rdp_strerror(rc));
	if (o->c.verbose)
		fprintf(stderr, "%s: --tune: %zu configurations, trials %s "
		    "(mean %.6g), sigma %.6g, score sigma %g: (%.6g, %g)-DP for "
		    "dataset %s (one trial alone: %.6g)\n", cli_prog(), g.nconf,
		    o->tune_trials, dist.mu, sigma, o->score_sigma, eps,
		    o->c.delta, dataset, eps1);
	for (size_t c = 0; c < g.nconf; c++)
		tp[c].sigma = sigma;

	cli_inherit(&meta, &tr.meta, label);
	cli_prov_input(&prov, 0, label, tr.digest, &tr.meta);
	dpcli_entry(&e, rng, dataset, TUNE_MECHANISM);
	e.relation = LEDGER_ADD_REMOVE;
	e.norders = no;
	for (size_t j = 0; j < no; j++) {
		e.orders[j] = ord[j];
		e.rdp[j] = tuned[j];
	}
	{
		double qmax = 0, smax = 0;

		for (size_t c = 0; c < g.nconf; c++) {
			qmax = qc[c] > qmax ? qc[c] : qmax;
			smax = (double)sc[c] > smax ? (double)sc[c] : smax;
		}
		dpcli_param(&e, "trials_mean", dist.mu);
		dpcli_param(&e, "trials_poisson", dist.kind == TUNE_POISSON);
		if (dist.kind == TUNE_NEGBIN) {
			dpcli_param(&e, "trials_shape", dist.eta);
			dpcli_param(&e, "trials_gamma", dist.gamma);
		}
		dpcli_param(&e, "configurations", (double)g.nconf);
		dpcli_param(&e, "trial_sigma", sigma);
		dpcli_param(&e, "trial_q_max", qmax);
		dpcli_param(&e, "trial_steps_max", smax);
		dpcli_param(&e, "trial_epsilon", eps1);
		dpcli_param(&e, "score_sigma", o->score_sigma);
		dpcli_param(&e, "score_l2_sensitivity", 1);
		dpcli_param(&e, "val_fraction", o->val_fraction);
		dpcli_param(&e, "split_seed", (double)o->split_seed);
		dpcli_param(&e, "public_records", (double)npub);
		dpcli_param(&e, "train_public_records", (double)ntpub);
		dpcli_param(&e, "val_public_records", (double)nvpub);
	}
	dpcli_release(&meta, &e);
	ts_meta_free(&e.params);

	/* The trials. */
	if ((rc = tune_sample(&dist, rng, &k)) != 0)
		cli_die(EX_SOFTWARE, "--tune-trials: %s", pv_strerror(rc));
	if (k == 0)
		cli_die(EX_DATAERR, "--tune-trials %s drew no trial (probability "
		    "e^-%g): nothing is written; the release is charged",
		    o->tune_trials, dist.mu);
	if ((rc = noise_dg_new_sigma(&dg, o->score_sigma)) != 0)
		dpcli_noise_die(rc);
	for (uint64_t t = 0; t < k; t++) {
		size_t c = (size_t)rng_uniform_below(rng, g.nconf);
		struct nn_model *m = cli_reallocarray(NULL, 1, sizeof *m);
		struct dpsgd *dp = NULL;
		double acc = 0, score;
		int64_t z;

		/* A seeded run (NOT private) gives each trial its own
		 * sub-streams, as an unseeded one draws fresh ones. */
		if (o->p.seeded)
			tp[c].seed = ts_xxh64(&t, sizeof t, o->p.seed);
		new_model(o, &tp[c], &tr, &tv, label, m, &K, &np);
		if ((rc = dpsgd_new(&dp, &tp[c], m, NULL, np, K, &tv, NULL,
		    NULL)) != 0 || (rc = dpsgd_plan(dp)) != 0 ||
		    (rc = dpsgd_train(dp, rng, NULL)) != 0)
			trainer_die(dp, rc);
		if (nv > 0 && (rc = accuracy_model(m, m->param, Xv, yv, nv,
		    &acc)) != 0)
			cli_die(EX_OSERR, "out of memory");
		if ((rc = noise_dg_sample(dg, rng, &z)) != 0)
			dpcli_noise_die(rc);
		score = (round(acc * (double)nv) + (double)z) / (double)nvpub;
		if (score > best_score) {
			if (best != NULL) {
				dpsgd_free(best);
				model_free(bm);
				free(bm);
			}
			best = dp;
			bm = m;
			bestc = c;
			best_score = score;
		} else {
			dpsgd_free(dp);
			model_free(m);
			free(m);
		}
	}
	noise_dg_free(dg);

	w = cli_writer(ofp, o->c.level);
	if ((rc = model_write(w, bm)) != 0)
		cli_wdie(w, rc);
	mi.dataset[0] = dataset;
	mi.dataset[1] = NULL;
	mi.lr_schedule = o->sched_arg;
	mi.freeze = o->freeze;
	if (model_put_meta(bm, &meta) != 0 ||
	    dpsgd_put_meta(best, &meta, &mi) != 0)
		cli_die(EX_OSERR, "out of memory");
	/* The trial's own epsilon is not the release's: the ledger holds
	 * the tuned one. */
	ts_meta_del(&meta, "train.epsilon");
	ts_meta_del(&meta, "train.delta");
	grid_name(&g, bestc, cname, sizeof cname);
	if (ts_meta_set(&meta, "tune.grid", o->tune) != 0 ||
	    ts_meta_set(&meta, "tune.trials", o->tune_trials) != 0 ||
	    ts_meta_set(&meta, "tune.config", cname) != 0 ||
	    ts_meta_setf(&meta, "tune.val_accuracy", "%.17g",
	    best_score) != 0 ||
	    ts_meta_setf(&meta, "tune.val_fraction", "%.17g",
	    o->val_fraction) != 0 ||
	    ts_meta_setf(&meta, "tune.epsilon", "%.17g", eps) != 0)
		cli_die(EX_OSERR, "out of memory");
	if (o->c.verbose)
		fprintf(stderr, "%s: --tune: the best configuration %s, noisy "
		    "validation accuracy %.4f\n", cli_prog(), cname, best_score);
	cli_out_finish(w, &meta, &prov);
	cli_out_commit();

	dpsgd_free(best);
	model_free(bm);
	free(bm);
	free(tp);
	free(qc);
	free(sc);
	free(Xv);
	free(yv);
	xy_free(&tr);
	ts_meta_free(&meta);
	ts_meta_free(&prov);
	rng_free(rng);
	return 0;
}
