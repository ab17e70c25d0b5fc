/*
 * Unit tests of lib/mech/dpsgdopt: which combinations of dpsgd-train's
 * options the trainer accepts, called directly (not through the tool).
 *
 * Independent expectations (dpsgd-train(1), "Privacy options"):
 * - the mode: --no-dp and the adaptation modes assoc and gmm-uda train
 *   without DP-SGD, --sigma 0 clips without noise, any other noise is
 *   DP-SGD;
 * - no defaults for privacy: neither a budget nor a noise multiplier is
 *   refused, and epsilon needs delta; epsilon, sigma and epochs together
 *   over-determine the training;
 * - assoc and gmm-uda couple the examples of a batch: no privacy option
 *   and no --protect applies to them;
 * - the declared sizes: required exactly for the streams DP-SGD clips
 *   (the input; in DANN the domains of --protect), refused elsewhere;
 * - validation data for early stopping must be declared public;
 * - dann and assoc need a feature extractor (hidden layers or --init);
 * - messages never overflow err, which is always terminated;
 * - the model (dpsgd_setup_model): under privacy the number of classes
 *   is --classes or a public label set, never learnt from the rows
 *   (a usage error when nothing is declared); without privacy it is the
 *   largest label + 1, and fewer than 2 classes is a data error; --freeze
 *   leaves at least one layer (of the encoder, for gmm-uda) to train;
 *   --init's model must take the input's width, match --classes and have
 *   hidden layers to adapt; the domain classifier's parameters follow
 *   the model's.
 */
#include <string.h>

#include "dpsgdopt.h"
#include "tap.h"

static struct dpsgd_params
base(void)
{
	struct dpsgd_params p;

	dpsgd_defaults(&p);
	p.has_epochs = 1;
	p.epochs = 1;
	return p;
}

static void
test_mode(void)
{
	struct dpsgd_params p = base();
	struct dpsgd_given g = { 0 };
	char err[DPSGD_OPT_ERRLEN];

	ok(dpsgd_check_options(&p, &g, err, sizeof err) != NULL,
	    "no privacy parameter is refused");
	ok(strstr(err, "missing privacy parameters") != NULL, "%s", err);
	p.has_sigma = 1;
	p.sigma = 1;
	ok(dpsgd_check_options(&p, &g, err, sizeof err) == NULL &&
	    p.mode == DPSGD_DP, "sigma 1: DP-SGD");
	p.sigma = 0;
	ok(dpsgd_check_options(&p, &g, err, sizeof err) == NULL &&
	    p.mode == DPSGD_CLIP_ONLY, "sigma 0: clipping without noise");
	p.has_eps = 1;
	p.epsilon = 1;
	ok(dpsgd_check_options(&p, &g, err, sizeof err) != NULL &&
	    strstr(err, "--epsilon needs --delta") != NULL, "%s", err);
	p.has_delta = 1;
	p.delta = 1e-5;
	p.sigma = 1;
	ok(dpsgd_check_options(&p, &g, err, sizeof err) != NULL &&
	    strstr(err, "over-determine") != NULL, "%s", err);
	p = base();
	g.nodp = 1;
	ok(dpsgd_check_options(&p, &g, err, sizeof err) == NULL &&
	    p.mode == DPSGD_NODP, "--no-dp: no DP-SGD");
	p.has_sigma = 1;
	ok(dpsgd_check_options(&p, &g, err, sizeof err) != NULL,
	    "--no-dp refuses --sigma");
	p = base();
	p.has_epochs = 0;
	ok(dpsgd_check_options(&p, &g, err, sizeof err) != NULL &&
	    strcmp(err, "--no-dp needs --epochs") == 0, "%s", err);
}

static void
test_adapt(void)
{
	struct dpsgd_params p = base();
	struct dpsgd_given g = { .target = 1 };
	char err[DPSGD_OPT_ERRLEN];

	p.adapt = DPSGD_ASSOC;
	ok(dpsgd_check_options(&p, &g, err, sizeof err) == NULL &&
	    p.mode == DPSGD_NODP, "assoc trains without DP-SGD");
	p.has_sigma = 1;
	ok(dpsgd_check_options(&p, &g, err, sizeof err) != NULL &&
	    strstr(err, "--mode assoc trains without DP-SGD") != NULL, "%s",
	    err);
	p = base();
	p.adapt = DPSGD_ASSOC;
	p.protect = DPSGD_PROTECT_TARGET;
	ok(dpsgd_check_options(&p, &g, err, sizeof err) != NULL,
	    "assoc refuses --protect");
	p = base();
	p.adapt = DPSGD_GMM;
	p.init = 1;
	g = (struct dpsgd_given){ .source_features = 1 };
	ok(dpsgd_check_options(&p, &g, err, sizeof err) == NULL &&
	    p.mode == DPSGD_NODP, "gmm-uda trains without DP-SGD");
	p.protect = DPSGD_PROTECT_TARGET;
	ok(dpsgd_check_options(&p, &g, err, sizeof err) != NULL &&
	    strlen(err) > 256 && strlen(err) < sizeof err - 1,
	    "the longest message fits (%zu bytes)", strlen(err));
	p.protect = 0;
	p.init = 0;
	ok(dpsgd_check_options(&p, &g, err, sizeof err) != NULL &&
	    strstr(err, "needs --init") != NULL, "%s", err);
	p = base();
	p.has_sigma = 1;
	p.sigma = 1;
	g = (struct dpsgd_given){ .beta = 1 };
	ok(dpsgd_check_options(&p, &g, err, sizeof err) != NULL &&
	    strstr(err, "need --mode assoc") != NULL, "%s", err);
}

static void
test_public(void)
{
	struct dpsgd_params p = base();
	struct dpsgd_given g = { 0 };
	char err[DPSGD_OPT_ERRLEN], small[16];

	p.has_sigma = 1;
	p.sigma = 1;
	(void)dpsgd_check_options(&p, &g, err, sizeof err);
	ok(dpsgd_check_inputs(&p, &g, err, sizeof err) != NULL &&
	    strstr(err, "--public-records N") != NULL, "%s", err);
	ok(dpsgd_check_inputs(&p, &g, small, sizeof small) != NULL &&
	    strlen(small) == sizeof small - 1, "a short buffer is terminated");
	p.public_records[0] = 100;
	ok(dpsgd_check_inputs(&p, &g, err, sizeof err) == NULL,
	    "DP-SGD with the input's declared size");
	p.public_records[1] = 100;
	ok(dpsgd_check_inputs(&p, &g, err, sizeof err) != NULL &&
	    strstr(err, "--target-public-records applies") != NULL, "%s",
	    err);
	/* DANN protecting the target only: the target's size, not the
	 * input's. */
	p = base();
	p.has_sigma = 1;
	p.sigma = 1;
	p.adapt = DPSGD_DANN;
	p.protect = DPSGD_PROTECT_TARGET;
	g.target = 1;
	g.hidden = 1;
	ok(dpsgd_check_options(&p, &g, err, sizeof err) == NULL,
	    "dann protecting the target");
	p.public_records[1] = 50;
	ok(dpsgd_check_inputs(&p, &g, err, sizeof err) == NULL,
	    "dann: the target's declared size");
	p.public_records[0] = 50;
	ok(dpsgd_check_inputs(&p, &g, err, sizeof err) != NULL &&
	    strstr(err, "--public-records applies") != NULL, "%s", err);
	/* Without DP-SGD no size applies. */
	p = base();
	g = (struct dpsgd_given){ .nodp = 1 };
	(void)dpsgd_check_options(&p, &g, err, sizeof err);
	p.public_records[0] = 10;
	ok(dpsgd_check_inputs(&p, &g, err, sizeof err) != NULL,
	    "--no-dp refuses --public-records");
}

static void
test_inputs(void)
{
	struct dpsgd_params p = base();
	struct dpsgd_given g = { .nodp = 1, .val = 1 };
	char err[DPSGD_OPT_ERRLEN];

	(void)dpsgd_check_options(&p, &g, err, sizeof err);
	ok(dpsgd_check_inputs(&p, &g, err, sizeof err) != NULL &&
	    strstr(err, "--val needs --val-public") != NULL, "%s", err);
	g.val_public = 1;
	ok(dpsgd_check_inputs(&p, &g, err, sizeof err) == NULL,
	    "--val declared public");
	p.patience = 3;
	g.val = g.val_public = 0;
	ok(dpsgd_check_inputs(&p, &g, err, sizeof err) != NULL &&
	    strcmp(err, "--patience needs --val") == 0, "%s", err);
	p = base();
	p.adapt = DPSGD_DANN;
	g = (struct dpsgd_given){ .nodp = 1, .target = 1 };
	(void)dpsgd_check_options(&p, &g, err, sizeof err);
	ok(dpsgd_check_inputs(&p, &g, err, sizeof err) != NULL &&
	    strstr(err, "needs a feature extractor") != NULL, "%s", err);
	g.hidden = 1;
	ok(dpsgd_check_inputs(&p, &g, err, sizeof err) == NULL,
	    "dann with a hidden layer");
}

static struct dpsgd_setup
setup_base(const int32_t *y, size_t n)
{
	static const struct label_set none = { 0 };

	return (struct dpsgd_setup){ .lset = &none, .y = y, .n = n, .d = 4,
	    .mode = "classify", .label = "in", .ilabel = "init",
	    .slabel = "src", .iarch = "4-3" };
}

static void
test_setup(void)
{
	static const int32_t y[] = { 0, 2, -1, 1 }, y1[] = { 0, 0, -1 };
	static const size_t hid[] = { 5, 6 }, dh[] = { 3 };
	struct dpsgd_params p = base();
	struct dpsgd_setup s = setup_base(y, 4);
	struct label_set pub = { .source = LABEL_PUBLIC, .classes = 7 };
	struct nn_model m, mi;
	struct nn_dann nets;
	char err[DPSGD_OPT_ERRLEN];
	size_t K = 0, np = 0, w[2] = { 4, 3 };
	int rc;

	/* Without privacy: K is the largest label + 1. */
	rc = dpsgd_setup_model(&m, &nets, &p, &s, &K, &np, err, sizeof err);
	ok(rc == 0 && K == 3 && m.net.nlayers == 1 && np == m.nparam &&
	    model_inputs(&m) == 4, "logistic model, K %zu", K);
	model_free(&m);
	/* Under privacy nothing declared: a usage error naming the input. */
	s.dp = 1;
	rc = dpsgd_setup_model(&m, &nets, &p, &s, &K, &np, err, sizeof err);
	ok(rc == PV_E_OPTION && strncmp(err, "in: ", 4) == 0, "%s", err);
	s.classes = 4;
	rc = dpsgd_setup_model(&m, &nets, &p, &s, &K, &np, err, sizeof err);
	ok(rc == 0 && K == 4, "--classes 4 under privacy: K %zu", K);
	model_free(&m);
	s.classes = 0;
	s.lset = &pub;
	rc = dpsgd_setup_model(&m, &nets, &p, &s, &K, &np, err, sizeof err);
	ok(rc == 0 && K == 7, "public label set: K %zu", K);
	model_free(&m);
	/* One class seen: a data error. */
	s = setup_base(y1, 3);
	rc = dpsgd_setup_model(&m, &nets, &p, &s, &K, &np, err, sizeof err);
	ok(rc == PV_E_FORMAT && strcmp(err, "in: tensor 'y': fewer than 2 "
	    "classes") == 0, "%s", err);
	/* --freeze: at least one layer trained. */
	s = setup_base(y, 4);
	s.hidden = hid;
	s.nhidden = 2;
	s.freeze = 3;
	rc = dpsgd_setup_model(&m, &nets, &p, &s, &K, &np, err, sizeof err);
	ok(rc == PV_E_OPTION && strcmp(err, "--freeze 3: the model has 3 "
	    "layers; at least one must be trained") == 0, "%s", err);
	model_free(&m);
	s.freeze = 2;
	rc = dpsgd_setup_model(&m, &nets, &p, &s, &K, &np, err, sizeof err);
	ok(rc == 0 && m.net.layer[0].frozen && m.net.layer[1].frozen &&
	    !m.net.layer[2].frozen, "--freeze 2");
	model_free(&m);
	/* dann: the domain classifier's parameters follow the model's. */
	p.adapt = DPSGD_DANN;
	s.freeze = 0;
	s.dh = dh;
	s.ndh = 1;
	rc = dpsgd_setup_model(&m, &nets, &p, &s, &K, &np, err, sizeof err);
	ok(rc == 0 && np == m.nparam + (6 * 3 + 3) + (3 * 2 + 2),
	    "dann: %zu parameters, the model's %zu", np, m.nparam);
	model_free(&m);
	/* gmm-uda: the encoder is layers 1..L, the rest frozen. */
	p.adapt = DPSGD_GMM;
	s.feature_layer = 1;
	s.src_d = 5;
	rc = dpsgd_setup_model(&m, &nets, &p, &s, &K, &np, err, sizeof err);
	ok(rc == 0 && !m.net.layer[0].frozen && m.net.layer[1].frozen &&
	    m.net.layer[2].frozen, "gmm-uda: layers after 1 frozen");
	model_free(&m);
	s.src_d = 6;
	rc = dpsgd_setup_model(&m, &nets, &p, &s, &K, &np, err, sizeof err);
	ok(rc == PV_E_FORMAT && strcmp(err, "src: 6 features, but layer 1 "
	    "of the model of init has 5 units") == 0, "%s", err);
	model_free(&m);
	s.feature_layer = 3;
	rc = dpsgd_setup_model(&m, &nets, &p, &s, &K, &np, err, sizeof err);
	ok(rc == PV_E_OPTION && strcmp(err, "--feature-layer 3: the model of "
	    "init has 2 hidden layers") == 0, "%s", err);
	model_free(&m);
	s.feature_layer = 1;
	s.freeze = 1;
	rc = dpsgd_setup_model(&m, &nets, &p, &s, &K, &np, err, sizeof err);
	ok(rc == PV_E_OPTION && strcmp(err, "--freeze 1: the encoder has 1 "
	    "layers; at least one must be trained") == 0, "%s", err);
	model_free(&m);

	/* --init: checked against the options and the input. */
	p = base();
	s = setup_base(y, 4);
	s.init = 1;
	ok(model_init(&mi, w, 1) == 0, "a 4-3 model");
	rc = dpsgd_setup_model(&mi, &nets, &p, &s, &K, &np, err, sizeof err);
	ok(rc == 0 && K == 3 && np == mi.nparam, "--init: K %zu", K);
	s.classes = 5;
	rc = dpsgd_setup_model(&mi, &nets, &p, &s, &K, &np, err, sizeof err);
	ok(rc == PV_E_OPTION && strcmp(err, "--classes 5: the model of "
	    "--init has 3 classes") == 0, "%s", err);
	s.classes = 0;
	s.d = 9;
	rc = dpsgd_setup_model(&mi, &nets, &p, &s, &K, &np, err, sizeof err);
	ok(rc == PV_E_FORMAT && strcmp(err, "init: the model takes 4 "
	    "features, in has 9") == 0, "%s", err);
	s.d = 4;
	s.hidden = hid;
	s.nhidden = 1;
	rc = dpsgd_setup_model(&mi, &nets, &p, &s, &K, &np, err, sizeof err);
	ok(rc == PV_E_OPTION && strstr(err, "--hidden does not apply with "
	    "--init") == err, "%s", err);
	s.nhidden = 0;
	p.adapt = DPSGD_DANN;
	s.mode = "dann";
	rc = dpsgd_setup_model(&mi, &nets, &p, &s, &K, &np, err, sizeof err);
	ok(rc == PV_E_FORMAT && strcmp(err, "init: --mode dann needs a model "
	    "with hidden layers, not 4-3") == 0, "%s", err);
	model_free(&mi);
}

int
main(void)
{
	test_mode();
	test_adapt();
	test_public();
	test_inputs();
	test_setup();
	return tap_done();
}
