/*
 * dpsgdopt.c: the combinations of dpsgd-train's options (dpsgdopt.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dpsgdopt.h"

/* Format a message into err; @return err. */
static const char *msg(char *, size_t, const char *, ...)
    __attribute__((format(printf, 3, 4)));

static const char *
msg(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return err;
}

/* The options of --mode assoc and gmm-uda, which train without DP-SGD:
 * their losses couple the examples of a batch, so clipping one example's
 * gradient does not bound its influence.  --no-dp is implied. */
static const char *
check_adapt(const struct dpsgd_params *p, const struct dpsgd_given *g,
    char *err, size_t errlen)
{
	int gmm = p->adapt == DPSGD_GMM;
	const char *m = gmm ? "gmm-uda" : "assoc";

	if (p->protect && gmm)
		return msg(err, errlen, "--mode gmm-uda cannot protect the "
		    "target: the diversity term of the information "
		    "maximisation (the entropy of the batch-mean prediction) "
		    "couples the examples of a batch, so per-example clipping "
		    "does not bound one example's influence; without --protect "
		    "the target rows are marked aggregate (not private)");
	if (p->protect)
		return msg(err, errlen, "--mode assoc trains without DP-SGD "
		    "(the walker, visit and cover losses couple the examples of "
		    "a batch): --protect does not apply; the labels' privacy is "
		    "the ledger entry of the labelled input (teacher-vote)");
	if (p->has_eps || p->has_delta || p->has_sigma || g->clip ||
	    p->exact || p->audit || p->unsafe)
		return msg(err, errlen, "--mode %s trains without DP-SGD: "
		    "--epsilon, --delta, --sigma, --clip, --exact-noise, "
		    "--audit-repeat and --unsafe-test-no-clip do not apply", m);
	if (g->grl)
		return msg(err, errlen, "--grl-max needs --mode dann%s", gmm ?
		    " (gmm-uda weighs the adversarial loss with --beta-adv)" :
		    "");
	if (!p->has_epochs)
		return msg(err, errlen, "--mode %s needs --epochs", m);
	if (p->batch > DPSGD_ASSOC_MAX_BATCH)
		return msg(err, errlen, "--mode %s: --batch %zu exceeds %u (a "
		    "batch is one forward and backward pass)", m, p->batch,
		    (unsigned)DPSGD_ASSOC_MAX_BATCH);
	if (gmm) {
		if (g->beta)
			return msg(err, errlen, "--beta1, --beta2 and --beta3 "
			    "need --mode assoc");
		if (g->target)
			return msg(err, errlen, "--mode gmm-uda reads the "
			    "target rows from the operand: --target does not "
			    "apply");
		if (!p->init)
			return msg(err, errlen, "--mode gmm-uda needs --init "
			    "(the source model)");
		if (!g->source_features)
			return msg(err, errlen, "--mode gmm-uda needs "
			    "--source-features (gmm-fit sample output)");
		return NULL;
	}
	if (g->gmm || g->source_features)
		return msg(err, errlen, "--source-features, --feature-layer, "
		    "--kd-temp, --beta-adv, --beta-kd and --beta-im need --mode "
		    "gmm-uda");
	if (g->domain_hidden)
		return msg(err, errlen, "--domain-hidden needs --mode dann or "
		    "gmm-uda");
	if (!g->target)
		return msg(err, errlen, "--mode assoc needs --target");
	return NULL;
}

/* The privacy options (STYLE.md: no defaults) into p->mode. */
static const char *
check_mode(struct dpsgd_params *p, const struct dpsgd_given *g, char *err,
    size_t errlen)
{
	int dann = p->adapt == DPSGD_DANN;

	if (g->beta)
		return msg(err, errlen, "--beta1, --beta2 and --beta3 need "
		    "--mode assoc");
	if (g->gmm || g->source_features)
		return msg(err, errlen, "--source-features, --feature-layer, "
		    "--kd-temp, --beta-adv, --beta-kd and --beta-im need --mode "
		    "gmm-uda");
	if (!dann && (g->target || p->protect || g->domain_hidden || g->grl))
		return msg(err, errlen, "--target, --protect, --domain-hidden "
		    "and --grl-max need --mode dann");
	if (dann) {
		if (!g->target)
			return msg(err, errlen, "--mode dann needs --target");
		if (!p->has_epochs)
			return msg(err, errlen, "--mode dann needs --epochs");
		if (g->nodp && p->protect)
			return msg(err, errlen, "--no-dp trains without "
			    "privacy: --protect does not apply");
		if (!g->nodp && !p->protect)
			return msg(err, errlen, "--mode dann with privacy needs "
			    "--protect target, source or both (or --no-dp)");
	}
	p->mode = DPSGD_NODP;
	if (g->nodp) {
		if (p->has_eps || p->has_delta || p->has_sigma)
			return msg(err, errlen, "--no-dp trains without "
			    "privacy: --epsilon, --delta and --sigma do not "
			    "apply");
		if (p->audit || p->unsafe)
			return msg(err, errlen, "--audit-repeat and "
			    "--unsafe-test-no-clip need DP-SGD");
		if (!p->has_epochs)
			return msg(err, errlen, "--no-dp needs --epochs");
		return NULL;
	}
	if (p->has_eps && !p->has_delta)
		return msg(err, errlen, "--epsilon needs --delta");
	if (!p->has_eps && !p->has_sigma)
		return msg(err, errlen, "missing privacy parameters: give "
		    "--epsilon and --delta, or --sigma (or train without "
		    "privacy with --no-dp)");
	if (p->has_eps && p->has_sigma && p->has_epochs)
		return msg(err, errlen, "--epsilon, --sigma and --epochs "
		    "together over-determine the training: give two of them");
	if (!p->has_epochs && !(p->has_eps && p->has_sigma))
		return msg(err, errlen, "give --epochs (or --epsilon, --delta "
		    "and --sigma to train as long as the budget allows)");
	p->mode = DPSGD_DP;
	if (p->has_sigma && p->sigma == 0) {
		if (p->has_eps)
			return msg(err, errlen, "--sigma 0 adds no noise: "
			    "--epsilon cannot be met");
		if (p->audit)
			return msg(err, errlen, "--audit-repeat needs noise");
		p->mode = DPSGD_CLIP_ONLY;
	}
	return NULL;
}

const char *
dpsgd_check_options(struct dpsgd_params *p, const struct dpsgd_given *g,
    char *err, size_t errlen)
{
	if (p->adapt == DPSGD_ASSOC || p->adapt == DPSGD_GMM) {
		p->mode = DPSGD_NODP;
		return check_adapt(p, g, err, errlen);
	}
	return check_mode(p, g, err, errlen);
}

/*
 * The inputs' declarations.  Early stopping may only look at data
 * declared public.  The declared sizes: one for each clipped stream,
 * none for another.  Neighbours are add/remove, under which the number
 * of records N is private: the sampling rate q = B / N, the steps E / q
 * and every check that depends on N use the size the data holder
 * declares public (the published size of the dataset, or a public upper
 * bound), never the count of the rows read.
 */
const char *
dpsgd_check_inputs(const struct dpsgd_params *p, const struct dpsgd_given *g,
    char *err, size_t errlen)
{
	static const char *const opt[2] = { "--public-records",
	    "--target-public-records" };
	int dann = p->adapt == DPSGD_DANN, need[2];

	if (g->val && !g->val_public)
		return msg(err, errlen, "--val needs --val-public: early "
		    "stopping may only look at data declared public");
	if (g->val_public && !g->val)
		return msg(err, errlen, "--val-public needs --val");
	if (p->patience && !g->val)
		return msg(err, errlen, "--patience needs --val");
	if (p->audit && g->val)
		return msg(err, errlen, "--audit-repeat and --val do not go "
		    "together");
	need[0] = p->mode != DPSGD_NODP && (!dann ||
	    (p->protect & DPSGD_PROTECT_SOURCE));
	need[1] = p->mode != DPSGD_NODP && dann &&
	    (p->protect & DPSGD_PROTECT_TARGET);
	for (int i = 0; i < 2; i++) {
		if (need[i] && p->public_records[i] == 0)
			return msg(err, errlen, "DP-SGD on %s needs %s N: the "
			    "number of its records, declared public by the "
			    "data holder (the published size of the dataset, "
			    "or a public upper bound); the sampling rate is "
			    "--batch / N, and the true count stays private",
			    i ? "the --target rows" : "the input", opt[i]);
		if (!need[i] && p->public_records[i] != 0)
			return msg(err, errlen, "%s applies to the rows that "
			    "DP-SGD protects (%s)", opt[i], i ? "--mode dann "
			    "with --protect target or both" : "not with "
			    "--no-dp, --mode assoc or gmm-uda, nor --protect "
			    "target");
	}
	if (p->oc.nesterov && p->oc.momentum == 0)
		return msg(err, errlen, "--nesterov needs --momentum");
	if ((dann || p->adapt == DPSGD_ASSOC) && !p->init && !g->hidden)
		return msg(err, errlen, "--mode %s needs a feature extractor: "
		    "give --hidden (or an --init model with hidden layers)",
		    dann ? "dann" : "assoc");
	if (p->adapt == DPSGD_GMM && g->hidden)
		return msg(err, errlen, "--hidden does not apply with --init "
		    "(the model fixes the layers)");
	return NULL;
}

/* The classes of a new model: K from --classes or the label set (never
 * learnt from the rows under privacy), else the largest label + 1. */
static int
setup_classes(const struct dpsgd_setup *s, size_t *K, char *err,
    size_t errlen)
{
	char lerr[256];
	int names_ok, rc;

	rc = label_classes(s->lset, s->dp, s->classes, K, &names_ok, lerr,
	    sizeof lerr);
	if (rc != LABEL_OK) {
		msg(err, errlen, "%s: %s", s->label, lerr);
		return rc == LABEL_E_USAGE ? PV_E_OPTION : PV_E_FORMAT;
	}
	if (*K == 0)
		for (size_t i = 0; i < s->n; i++)
			if (s->y[i] >= 0 && (size_t)s->y[i] + 1 > *K)
				*K = (size_t)s->y[i] + 1;
	if (*K < 2) {
		msg(err, errlen, "%s: tensor 'y': fewer than 2 classes",
		    s->label);
		return PV_E_FORMAT;
	}
	return 0;
}

/* The model of --init against the options and the input. */
static int
setup_init(const struct nn_model *m, const struct dpsgd_params *p,
    const struct dpsgd_setup *s, char *err, size_t errlen)
{
	if (s->nhidden) {
		msg(err, errlen, "--hidden does not apply with --init (the "
		    "model fixes the layers)");
		return PV_E_OPTION;
	}
	if (model_inputs(m) != s->d) {
		msg(err, errlen, "%s: the model takes %zu features, %s has %zu",
		    s->ilabel, model_inputs(m), s->label, s->d);
		return PV_E_FORMAT;
	}
	if (s->classes && s->classes != model_classes(m)) {
		msg(err, errlen, "--classes %zu: the model of --init has %zu "
		    "classes", s->classes, model_classes(m));
		return PV_E_OPTION;
	}
	if (p->adapt != DPSGD_CLASSIFY && m->net.nlayers < 2) {
		msg(err, errlen, "%s: --mode %s needs a model with hidden "
		    "layers, not %s", s->ilabel, s->mode, s->iarch);
		return PV_E_FORMAT;
	}
	return 0;
}

/* dpsgd_add_domain's error as dpsgd_setup_model's. */
static int
setup_domain(struct nn_model *m, struct nn_dann *nets,
    const struct dpsgd_setup *s, size_t L, size_t *np, char *err,
    size_t errlen)
{
	int rc = dpsgd_add_domain(m, nets, L, s->dh, s->ndh, np);

	if (rc == PV_E_NOMEM) {
		msg(err, errlen, "out of memory");
		return rc;
	}
	if (rc != 0) {
		msg(err, errlen, "--domain-hidden: %s", nn_strerror(rc));
		return PV_E_OPTION;
	}
	return 0;
}

/* dpsgd_setup_model with --arch (--mode classify only). */
static int
setup_cnn(struct nn_model *m, const struct dpsgd_setup *s, size_t K,
    char *err, size_t errlen)
{
	struct nn_spec sp[NN_MAX_LAYERS];
	int rc;

	if (s->narch + 1 > NN_MAX_LAYERS) {
		msg(err, errlen, "--arch: too many layers");
		return PV_E_OPTION;
	}
	memcpy(sp, s->arch, s->narch * sizeof *sp);
	sp[s->narch] = (struct nn_spec){ NN_DENSE, K, 0, 0, 0 };
	if ((rc = model_init_cnn(m, s->shape[0], s->shape[1], s->shape[2], sp,
	    s->narch + 1, s->act, s->ts)) != 0) {
		if (rc == NN_E_NOMEM) {
			msg(err, errlen, "out of memory");
			return PV_E_NOMEM;
		}
		msg(err, errlen, "--arch: the layers do not fit inputs of "
		    "%zux%zux%zu (a window larger than its input, padding not "
		    "below the kernel, or an image layer after a dense one)",
		    s->shape[0], s->shape[1], s->shape[2]);
		return PV_E_OPTION;
	}
	return 0;
}

int
dpsgd_setup_model(struct nn_model *m, struct nn_dann *nets,
    const struct dpsgd_params *p, const struct dpsgd_setup *s, size_t *K,
    size_t *np, char *err, size_t errlen)
{
	int rc;

	if (s->init) {
		if ((rc = setup_init(m, p, s, err, errlen)) != 0)
			return rc;
		*K = model_classes(m);
	} else {
		size_t widths[NN_MAX_LAYERS + 1], nl = s->nhidden + 1;

		if (s->nhidden >= NN_MAX_LAYERS) {
			msg(err, errlen, "model: too many layers");
			return PV_E_RANGE;
		}
		*K = 0;
		if ((rc = setup_classes(s, K, err, errlen)) != 0)
			return rc;
		widths[0] = s->d;
		for (size_t i = 0; i < s->nhidden; i++)
			widths[i + 1] = s->hidden[i];
		widths[nl] = *K;
		if (s->arch != NULL) {
			if ((rc = setup_cnn(m, s, *K, err, errlen)) != 0)
				return rc;
		} else if ((rc = model_init(m, widths, nl)) != 0) {
			msg(err, errlen, "model: %s", nn_strerror(rc));
			return rc == NN_E_NOMEM ? PV_E_NOMEM : PV_E_RANGE;
		}
	}
	if (s->freeze >= m->net.nlayers) {
		msg(err, errlen, "--freeze %zu: the model has %zu layers; at "
		    "least one must be trained", s->freeze, m->net.nlayers);
		return PV_E_OPTION;
	}
	for (size_t l = 0; l < s->freeze; l++)
		m->net.layer[l].frozen = 1;
	*np = m->nparam;
	if (p->adapt == DPSGD_GMM) {
		/* E is layers 1..L, C the rest (frozen); D's parameters
		 * follow the model's, as with dann. */
		size_t L = s->feature_layer ? s->feature_layer :
		    m->net.nlayers - 1, h;

		if (L >= m->net.nlayers) {
			msg(err, errlen, "--feature-layer %zu: the model of %s "
			    "has %zu hidden layers", L, s->ilabel,
			    m->net.nlayers - 1);
			return PV_E_OPTION;
		}
		if (s->freeze >= L) {
			msg(err, errlen, "--freeze %zu: the encoder has %zu "
			    "layers; at least one must be trained", s->freeze, L);
			return PV_E_OPTION;
		}
		for (size_t l = L; l < m->net.nlayers; l++)
			m->net.layer[l].frozen = 1;
		if ((rc = setup_domain(m, nets, s, L, np, err, errlen)) != 0)
			return rc;
		h = m->net.layer[L - 1].out;
		if (s->src_d != h) {
			msg(err, errlen, "%s: %zu features, but layer %zu of the "
			    "model of %s has %zu units", s->slabel, s->src_d, L,
			    s->ilabel, h);
			return PV_E_FORMAT;
		}
	} else if (p->adapt == DPSGD_DANN) {
		/* F is every hidden layer, H the last layer; D's parameters
		 * follow the model's in one vector. */
		if ((rc = setup_domain(m, nets, s, m->net.nlayers - 1, np, err,
		    errlen)) != 0)
			return rc;
	}
	return 0;
}
