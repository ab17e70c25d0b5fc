/* train.c: dpsgd-train's DP-SGD run, every --mode but ncm (dpsgd-train.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dpcli.h"
#include "dpnorm.h"
#include "dpsgd.h"
#include "dpsgd-train.h"
#include "dpsgdopt.h"
#include "labels.h"
#include "ledger.h"
#include "model.h"
#include "modelcli.h"
#include "nn.h"
#include "optim.h"
#include "opts.h"
#include "rdp.h"
#include "tensor.h"
#include "tstream.h"
#include "xycli.h"

/* dpsgd_setup_model's error: usage, data or system. */
__attribute__((noreturn)) void
setup_die(int rc, const char *err)
{
	if (rc == PV_E_OPTION)
		cli_usage_error("%s", err);
	cli_die(rc == PV_E_FORMAT ? EX_DATAERR : rc == PV_E_NOMEM ? EX_OSERR :
	    EX_USAGE, "%s", err);
}

/* A trainer's error: a usage error when the options cannot be met. */
__attribute__((noreturn)) static void
dpsgd_die(const struct dpsgd *t, int rc)
{
	if (rc == PV_E_OPTION)
		cli_usage_error("%s", dpsgd_errmsg(t));
	cli_die(rc == PV_E_NOMEM || rc == PV_E_ENTROPY ? EX_OSERR :
	    EX_SOFTWARE, "%s", dpsgd_errmsg(t));
}

/* The DP-SGD release entry of stream i (dpsgd_ledger_entry). */
static void
record_release(struct ts_meta *meta, struct rng *rng, const struct dpsgd *t,
    size_t i, const char *dataset)
{
	struct ledger_entry e;
	int rc;

	dpcli_entry(&e, rng, dataset, DPSGD_MECHANISM);
	if ((rc = dpsgd_ledger_entry(t, i, &e)) != 0)
		cli_die(rc == PV_E_NOMEM ? EX_OSERR : EX_SOFTWARE, "accountant: "
		    "%s", rdp_strerror(rc));
	dpcli_release(meta, &e);
	ts_meta_free(&e.params);
}

/* Under privacy a label outside the classes is not an error (it would
 * reveal the record): such rows are dropped, uncounted.  Say so whenever
 * the classes are the user's number rather than a public label set's, on
 * the options alone, never on the rows. */
void
warn_dropped(const struct opts *o, const struct xyset *tr, int dp)
{
	if (dp && o->classes && tr->lset.source != LABEL_PUBLIC)
		cli_warn("--classes %zu: rows labelled outside 0..%zu are "
		    "dropped without a count (under privacy the count is "
		    "private)", o->classes, o->classes - 1);
}

/* Write the f64 tensor name: [rows, len], or [len] when rows is 0. */
void
write_f64(struct ts_writer *w, const char *name, const double *v,
    uint64_t rows, size_t len)
{
	uint64_t dims[2] = { rows, len };
	struct tensor hdr;
	int rc;

	if ((rc = tensor_init(&hdr, name, TS_F64, rows ? 2 : 1, rows ? dims :
	    dims + 1)) != 0 || (rc = ts_write_begin(w, &hdr)) != 0 ||
	    (rc = ts_write_rows(w, v, rows ? rows : len)) != 0 ||
	    (rc = ts_write_end(w)) != 0)
		cli_wdie(w, rc);
	tensor_free(&hdr);
}

/*
 * --batch full: full-batch gradient descent, every row in every step.
 * Under privacy the batch is the size declared public, so q = B / N = 1:
 * no sampling, no amplification, each step the plain Gaussian mechanism
 * (rdp_sgm at q = 1 is alpha / (2 sigma^2)), and the clipped sum is
 * divided by the declared size, not by the private count.  Without
 * privacy the batch is every row read (set once they are: full_batch_rows).
 */
static void
full_batch(struct opts *o)
{
	if (!o->batch_full)
		return;
	if (o->p.adapt != DPSGD_CLASSIFY)
		cli_usage_error("--batch full goes with --mode classify only");
	if (o->p.public_records[0])
		o->p.batch = (size_t)o->p.public_records[0];
	else if (o->g.nodp)
		o->p.batch = DPSGD_MAX_BATCH;	/* the rows, once read */
}

static void
full_batch_rows(struct opts *o, size_t n)
{
	if (o->batch_full && o->g.nodp && n > 0)
		o->p.batch = n < DPSGD_MAX_BATCH ? n : DPSGD_MAX_BATCH;
}

/* The DP-SGD trainer (every --mode but ncm): read, train, write the
 * model; t_start is when the tool started (-v). */
int
run_train(struct opts *o, int argc, char **argv, double t_start)
{
	struct xyset tr, tg, va, sf;
	struct nn_dann dnets, gnets;	/* dann's, gmm-uda's F, H and D */
	struct nn_model m;
	struct dpsgd *dp = NULL;
	struct dpsgd_data view[2], vview;
	struct dpsgd_plan pl[2];
	struct dpsgd_summary sm;
	struct dpsgd_meta mi;
	struct dpsgd_setup su;
	size_t shape[3] = { 0, 0, 0 };	/* --arch: the input images */
	struct xyset *sdt[2];
	const struct xyset *vap = NULL;
	const char *dataset[2];
	size_t nst, K = 0, np;
	struct ts_meta meta = { 0 }, prov = { 0 }, initmeta = { 0 };
	struct ts_writer *w;
	struct rng *rng;
	FILE *in, *ofp, *vfp = NULL, *ifp = NULL, *tfp = NULL, *sfp = NULL;
	const char *label, *vlabel = NULL, *ilabel = NULL, *tlabel = NULL;
	const char *slabel = NULL;
	char err[256], oerr[DPSGD_OPT_ERRLEN], arch[MODEL_MAX_ARCH];
	char serr[4096];
	uint64_t idigest = 0;
	float *all = NULL;
	struct dpnorm nrm;
	double *nmean = NULL, *nsd = NULL;
	int rc, nin = 0, src_dp, mode;

	if (argc > 1)
		cli_usage_error("at most one input file");
	full_batch(o);
	normalize_check(o);
	if (dpsgd_check_options(&o->p, &o->g, oerr, sizeof oerr) != NULL)
		cli_usage_error("%s", oerr);
	mode = o->p.mode;
	if (o->p.unsafe)
		opts_unsafe_gate("--unsafe-test-no-clip");
	if (o->p.oc.kind == OPTIM_ADAM && !o->has_lr)
		o->p.oc.lr = 0.001;
	if (dpsgd_check_inputs(&o->p, &o->g, oerr, sizeof oerr) != NULL)
		cli_usage_error("%s", oerr);
	if (dpsgd_check_params(&o->p) != NULL)
		cli_usage_error("%s", dpsgd_check_params(&o->p));
	/* Which streams are clipped (and noised): the labelled one unless
	 * --no-dp; in dann mode, the domains of --protect. */
	src_dp = mode != DPSGD_NODP && (!o->dann ||
	    (o->p.protect & DPSGD_PROTECT_SOURCE));

	/* Open everything before computing. */
	in = cli_open_in(argc ? argv[0] : NULL, &label);
	if (o->target != NULL)
		tfp = cli_open_in(o->target, &tlabel);
	if (o->init != NULL)
		ifp = cli_open_in(o->init, &ilabel);
	if (o->src_feat != NULL)
		sfp = cli_open_in(o->src_feat, &slabel);
	if (o->val != NULL)
		vfp = cli_open_in(o->val, &vlabel);
	ofp = cli_out_open(o->c.output, o->c.force);
	/* Without privacy a seed only makes the run reproducible: no
	 * warning about noise. */
	rng = mode == DPSGD_NODP ? dpcli_rng_quiet(o->c.seed,
	    DPSGD_WORK_ITEM) :
	    dpcli_rng(o->c.seed, DPSGD_WORK_ITEM);
	if (mode == DPSGD_CLIP_ONLY)
		cli_warn("--sigma 0: no noise: the model is NOT private");
	if (o->norm_sigma > 0 && o->c.has_epsilon)
		cli_warn("--normalize: its release adds to the training's "
		    "--epsilon (rdp-account ledger reports the total)");
	if (o->p.unsafe)
		cli_warn("--unsafe-test-no-clip: gradients are not clipped: the "
		    "model is NOT private");

	xy_read(&tr, in, label, o->p.adapt != DPSGD_GMM);
	cli_close_in(in);
	full_batch_rows(o, tr.n);
	if (o->norm_sigma > 0)
		normalize_rows(o, &tr, rng, &nrm, &nmean, &nsd);
	if (o->p.adapt == DPSGD_ASSOC)
		xy_drop_unlabelled(&tr, o->c.verbose);
	if (sfp != NULL) {
		xy_read(&sf, sfp, slabel, 0);
		cli_close_in(sfp);
	}
	if (tfp != NULL) {
		xy_read(&tg, tfp, tlabel, 0);
		cli_close_in(tfp);
		if (tg.d != tr.d)
			cli_die(EX_DATAERR, "%s: %zu features, %s has %zu",
			    tlabel, tg.d, label, tr.d);
	}
	if (ifp != NULL)
		mcli_read_model_fp(ifp, ilabel, &m, &initmeta, &idigest);
	if (o->arch != NULL)
		arch_shape(o, &tr, shape);
	if (ifp != NULL && m.cnn && (o->p.adapt != DPSGD_CLASSIFY ||
	    o->norm_sigma > 0))
		cli_usage_error("%s: a convolutional model trains with --mode "
		    "classify only, without --normalize", ilabel);
	su = (struct dpsgd_setup){ .init = ifp != NULL, .dp = src_dp,
	    .classes = o->classes, .hidden = o->hidden, .nhidden = o->nhidden,
	    .freeze = o->freeze, .feature_layer = o->feature_layer, .dh = o->dh,
	    .ndh = o->ndh, .lset = &tr.lset, .y = tr.y, .n = tr.n, .d = tr.d,
	    .src_d = sfp != NULL ? sf.d : 0, .mode = modes[o->p.adapt],
	    .label = label, .ilabel = ilabel, .slabel = slabel,
	    .iarch = ts_meta_get(&initmeta, "model.arch"),
	    .arch = o->arch != NULL ? o->spec : NULL, .narch = o->nspec,
	    .shape = { shape[0], shape[1], shape[2] }, .act = o->act,
	    .ts = { o->ts[0], o->ts[1], o->ts[2] } };
	if ((rc = dpsgd_setup_model(&m, o->dann ? &dnets : &gnets, &o->p, &su,
	    &K, &np, serr, sizeof serr)) != 0)
		setup_die(rc, serr);
	mcli_conv_paths(&m.net);
	if (o->dann) {
		/* The encoder's features leave a ReLU: a Gaussian sample's
		 * negative values are projected to 0, or the domain
		 * classifier tells the domains apart by sign alone.
		 * FIXME: only gmm-uda reads --source-features, so sf is
		 * never read here and this loop never runs (it read an
		 * uninitialised sf before); gmm-uda's samples are not
		 * projected.  Moving it changes seeded gmm-uda outputs. */
		for (size_t i = 0; sfp != NULL && i < sf.n * sf.d; i++)
			if (sf.X[i] < 0)
				sf.X[i] = 0;
	}
	if (!src_dp && o->p.adapt != DPSGD_GMM)
		xy_check_labels(&tr, K);
	/* Under privacy a label outside the classes is not an error (it
	 * would reveal the record): such rows are dropped, uncounted.  Say
	 * so whenever the classes are the user's number rather than a public
	 * label set's, on the options alone, never on the rows. */
	warn_dropped(o, &tr, src_dp);
	if (vfp != NULL) {
		xy_read(&va, vfp, vlabel, 1);
		cli_close_in(vfp);
		if (va.d != tr.d)
			cli_die(EX_DATAERR, "%s: %zu features, %s has %zu",
			    vlabel, va.d, label, tr.d);
		xy_check_labels(&va, K);
		nn_zero_nonfinite_rows(va.X, va.n, va.d);
		if (o->norm_sigma > 0)
			dpnorm_apply(va.X, va.n, va.d, nmean, nsd);
		vap = &va;
	}

	/* The streams: the training input, and the target rows of dann and
	 * assoc or the source samples of gmm-uda (a side input: no dataset
	 * of its own here, its ledger is inherited). */
	nst = o->p.adapt != DPSGD_CLASSIFY ? 2 : 1;
	sdt[0] = &tr;
	sdt[1] = o->p.adapt == DPSGD_GMM ? &sf : &tg;
	dataset[0] = dpcli_dataset(&tr.meta, o->c.dataset, label);
	dataset[1] = nst > 1 && o->p.adapt != DPSGD_GMM ?
	    dpcli_dataset(&tg.meta, NULL, tlabel) : NULL;
	if (o->dann && strcmp(dataset[0], dataset[1]) == 0)
		cli_die(EX_DATAERR, "%s: the target rows belong to dataset %s, "
		    "like the source rows of %s: --mode dann needs two datasets",
		    tlabel, dataset[1], label);
	for (size_t i = 0; i < nst; i++)
		view[i] = (struct dpsgd_data){ sdt[i]->X, sdt[i]->y,
		    sdt[i]->n, sdt[i]->d };
	if (vap != NULL)
		vview = (struct dpsgd_data){ va.X, va.y, va.n, va.d };
	if ((rc = dpsgd_new(&dp, &o->p, &m, o->dann ? &dnets : o->p.adapt ==
	    DPSGD_GMM ? &gnets : NULL, np, K, &view[0], nst > 1 ? &view[1] :
	    NULL, vap != NULL ? &vview : NULL)) != 0)
		dpsgd_die(dp, rc);
	for (size_t i = 0; i < nst; i++) {
		dpsgd_stream_plan(dp, i, &pl[i]);
		if (!pl[i].dp)
			continue;
		if (sdt[i]->n > NN_MAX_RECORDS)
			cli_die(EX_DATAERR, "%s: %zu records exceed the DP-SGD "
			    "limit of %llu", sdt[i]->label, sdt[i]->n,
			    (unsigned long long)NN_MAX_RECORDS);
		if (sdt[i]->n != pl[i].npub)
			cli_warn("%s: %zu records, but %s declares %llu: the "
			    "sampling rate q = %g is --batch / %llu (this "
			    "warning is for the data holder only: no output "
			    "shows the true count)", sdt[i]->label, sdt[i]->n,
			    i == 0 ? "--public-records" :
			    "--target-public-records",
			    (unsigned long long)pl[i].npub, pl[i].q,
			    (unsigned long long)pl[i].npub);
	}
	xy_zero_rows(&tr, pl[0].dp);
	if (nst > 1)
		xy_zero_rows(sdt[1], pl[1].dp);
	/* Validation data must be public: not derived from any dataset
	 * trained on here. */
	for (size_t i = 0; i < nst && vap != NULL; i++) {
		char key[16 + LEDGER_MAX_NAME];

		if (dataset[i] == NULL)
			continue;
		snprintf(key, sizeof key, "dp.raw.%s", dataset[i]);
		if (ts_meta_get(&va.meta, key) != NULL)
			cli_die(EX_DATAERR, "%s: the validation data derives "
			    "from the protected dataset %s (%s): it is not "
			    "public", vlabel, dataset[i], key);
	}

	/* The length of training and the privacy plan of each protected
	 * stream: q, sigma, the noise scale. */
	if ((rc = dpsgd_plan(dp)) != 0)
		dpsgd_die(dp, rc);
	dpsgd_summary(dp, &sm);
	for (size_t i = 0; i < nst; i++) {
		dpsgd_stream_plan(dp, i, &pl[i]);
		if (!pl[i].dp || !o->c.verbose)
			continue;
		fprintf(stderr, "%s: %s: %zu records, q %.6g, %llu steps, "
		    "sigma %.6g, clip %g (rows clipped at %.9g), noise sd "
		    "%.6g\n", cli_prog(), pl[i].name, sdt[i]->n, pl[i].q,
		    (unsigned long long)sm.steps, pl[i].sigma, o->p.clip,
		    pl[i].clip_row, pl[i].noise_std);
		if (pl[i].eps >= 0)
			fprintf(stderr, "%s: (%.6g, %g)-DP for dataset %s%s\n",
			    cli_prog(), pl[i].eps, o->c.delta, dataset[i],
			    i == 0 && o->norm_sigma > 0 ? " (the training; "
			    "--normalize adds its release: rdp-account ledger "
			    "composes them)" : "");
	}

	/* Train: once, or --audit-repeat times from the same input. */
	if (o->p.audit)
		all = cli_reallocarray(NULL, o->p.audit * np, sizeof *all);
	if ((rc = dpsgd_train(dp, rng, all)) != 0)
		dpsgd_die(dp, rc);
	dpsgd_summary(dp, &sm);
	for (size_t i = 0; i < nst; i++)
		dpsgd_stream_plan(dp, i, &pl[i]);

	/* The output: the model (and the domain classifier), then the
	 * stream metadata. */
	/* Trained on standardised rows: the map goes into the first layer,
	 * so the model reads raw rows. */
	if (o->norm_sigma > 0)
		dpnorm_fold(&m, nmean, nsd);
	w = cli_writer(ofp, o->c.level);
	if (o->p.audit) {
		if ((rc = dpsgd_write_audit(w, &m.net, "model", all, np,
		    o->p.audit)) != 0 || (o->dann && (rc = dpsgd_write_audit(w,
		    &dnets.dom, "domain", all, np, o->p.audit)) != 0))
			cli_wdie(w, rc);
	} else if ((rc = model_write(w, &m)) != 0 || (o->dann &&
	    (rc = model_write_net(w, &dnets.dom, m.param, "domain")) != 0) ||
	    (o->p.adapt == DPSGD_GMM && (rc = model_write_net(w, &gnets.dom,
	    m.param, "domain")) != 0))
		cli_wdie(w, rc);
	/* The released normalisation (post-processing of its release). */
	if (o->norm_sigma > 0) {
		write_f64(w, "normalize/mean", nmean, 0, tr.d);
		write_f64(w, "normalize/sd", nsd, 0, tr.d);
	}
	cli_inherit(&meta, &tr.meta, label);
	cli_prov_input(&prov, nin++, label, tr.digest, &tr.meta);
	if (o->dann || o->p.adapt == DPSGD_ASSOC) {
		cli_inherit(&meta, &tg.meta, tlabel);
		cli_prov_input(&prov, nin++, tlabel, tg.digest, &tg.meta);
	}
	if (o->p.adapt == DPSGD_GMM) {
		/* The samples are post-processing of a (DP) mixture: their
		 * release entries come along, any raw mark as aggregate. */
		dpcli_inherit_side(&meta, &sf.meta, slabel);
		cli_prov_input(&prov, nin++, slabel, sf.digest, &sf.meta);
	}
	if (o->init != NULL) {
		dpcli_inherit_side(&meta, &initmeta, ilabel);
		cli_prov_input(&prov, nin++, ilabel, idigest, &initmeta);
	}
	if (vap != NULL) {
		dpcli_inherit_side(&meta, &va.meta, vlabel);
		cli_prov_input(&prov, nin++, vlabel, va.digest, &va.meta);
	}
	/* The ledger: the aggregate marks, each protected stream's release,
	 * and the datasets the model is not private for. */
	mi.dataset[0] = dataset[0];
	mi.dataset[1] = dataset[1];
	mi.lr_schedule = o->sched_arg;
	mi.freeze = o->freeze;
	if (dpsgd_mark_raw(dp, &meta, &mi, err, sizeof err) != 0)
		cli_die(EX_DATAERR, "%s: %s", label, err);
	if (o->norm_sigma > 0)
		record_normalize(&meta, rng, &nrm, tr.d, dataset[0]);
	for (size_t i = 0; i < nst; i++) {
		if (pl[i].release)
			record_release(&meta, rng, dp, i, dataset[i]);
		if (dataset[i] != NULL && !pl[i].private_for)
			dpcli_not_private(&meta, dataset[i], sdt[i]->label);
	}
	dpcli_audit_mark(&meta, o->p.audit);
	if (model_put_meta(&m, &meta) != 0)
		cli_die(EX_OSERR, "out of memory");
	model_arch(&m, arch, sizeof arch);
	if (dpsgd_put_meta(dp, &meta, &mi) != 0)
		cli_die(EX_OSERR, "out of memory");
	cli_out_finish(w, &meta, &prov);
	if (o->c.verbose)
		fprintf(stderr, "%s: %s trained in %.2f s\n", cli_prog(), arch,
		    cli_now() - t_start);
	cli_out_commit();

	dpsgd_free(dp);
	free(all);
	free(nmean);
	free(nsd);
	model_free(&m);
	xy_free(&tr);
	if (tfp != NULL)
		xy_free(&tg);
	if (sfp != NULL)
		xy_free(&sf);
	if (vap != NULL)
		xy_free(&va);
	ts_meta_free(&meta);
	ts_meta_free(&prov);
	ts_meta_free(&initmeta);
	rng_free(rng);
	return 0;
}
