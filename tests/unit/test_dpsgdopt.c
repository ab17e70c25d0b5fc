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
 * - messages never overflow err, which is always terminated.
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

int
main(void)
{
	test_mode();
	test_adapt();
	test_public();
	test_inputs();
	return tap_done();
}
