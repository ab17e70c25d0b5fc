/*
 * Unit tests of lib/mech/dppg (DP-PG, DP-PGP) without the CLI:
 * dppg_check_params rejecting each bad field; the calibration against
 * erf and the rounding bounds; the exponential mechanism's output
 * frequencies against probabilities computed independently (the window
 * masses in double with erfc, exp(eps U / (2 sens)) normalised); the same
 * seeded output for one thread or several; DP-PGP publishing the clipped
 * mean when the noise is negligible, and grouping ceil(ratio n) per layer;
 * the account and the ledger against their closed forms; the models'
 * partition (per record or per model); and lib/ml's
 * accuracy_model on a net whose answer is known.
 *
 * Statistical checks use fixed seeds and the critical values of
 * tests/unit/stat.h (false-failure rate below 1e-6 per check).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accuracy.h"
#include "dppg.h"
#include "pverr.h"
#include "rdp.h"
#include "stat.h"
#include "tap.h"

static struct dppg_params
base(void)
{
	struct dppg_params p = { .eps = 4, .delta = 1e-5, .bw = DPPG_BW_VALUE,
	    .bw_value = 0.2, .range = 1, .step = 0.25, .points = 9,
	    .window = 0.25, .attempts = 1, .threads = 2, .seeded = 1,
	    .seed = 7, .work_item = "dppg-test" };

	return p;
}

static void
test_check_params(void)
{
	struct dppg_params p = base(), b;

	ok(dppg_check_params(&p) == NULL, "the base parameters are accepted");
	b = p;
	b.eps = 0;
	ok(dppg_check_params(&b) != NULL, "eps 0 is refused");
	b = p;
	b.eps = 2e4;
	ok(dppg_check_params(&b) != NULL, "eps above 1e4 is refused");
	b = p;
	b.delta = 1;
	ok(dppg_check_params(&b) != NULL, "delta 1 is refused");
	b = p;
	b.range = -1;
	ok(dppg_check_params(&b) != NULL, "a negative range is refused");
	b = p;
	b.window = 0;
	ok(dppg_check_params(&b) != NULL, "window 0 is refused");
	b = p;
	b.points = 0;
	ok(dppg_check_params(&b) != NULL, "a grid of no point is refused");
	b.points = DPPG_MAX_GRID + 1;
	ok(dppg_check_params(&b) != NULL, "a grid of 2^20 + 1 points is "
	    "refused");
	b = p;
	b.bw_value = 0;
	ok(dppg_check_params(&b) != NULL, "bandwidth 0 is refused");
	b = p;
	b.bw = DPPG_BW_SCOTT;
	b.bw_min = 0;
	ok(dppg_check_params(&b) != NULL, "scott with bw_min 0 is refused");
	b.bw = 9;
	ok(dppg_check_params(&b) != NULL, "an unknown rule is refused");
	b = p;
	b.ratio = 0.5;
	ok(dppg_check_params(&b) != NULL, "grouping without k is refused");
	b.k = 2;
	b.group_eps = 1;
	ok(dppg_check_params(&b) == NULL, "grouping with k and group_eps is "
	    "accepted");
	b.ratio = 1.5;
	ok(dppg_check_params(&b) != NULL, "a ratio above 1 is refused");
	b = p;
	b.attempts = 0;
	ok(dppg_check_params(&b) != NULL, "no attempt charged is refused");
	b = p;
	b.threads = 65;
	ok(dppg_check_params(&b) != NULL, "65 threads are refused");
	b = p;
	b.work_item = NULL;
	ok(dppg_check_params(&b) != NULL, "seeded without a work item is "
	    "refused");
}

static void
test_calib(void)
{
	struct dppg_params p = base();
	struct dppg *d;
	const struct dppg_calib *c;
	double b = 1.0 / (double)(float)(1 / 0.2);
	double pw = erf(0.25 / (2 * M_SQRT2 * b));

	ok(dppg_new(&d, &p, 3) == 0, "calibrated for 3 models");
	c = dppg_calib(d);
	ok(c->candidates == 9 && fabs(c->sens - pw) <= 1e-11 &&
	    c->sens >= pw, "fixed bandwidth: sensitivity erf(w / (2 sqrt2 b)) "
	    "= %.12g", c->sens);
	ok(c->sens_eff >= c->sens + 2 * c->eta + c->gamma && c->gamma <=
	    c->sens * 0x1p-23, "charged sensitivity covers the error %.3g and "
	    "the grid %.3g", c->eta, c->gamma);
	/* The rate is rounded down to a multiple of 2^-40: eps_used loses
	 * less than one unit, 2 sens_eff 2^-40 / gamma. */
	ok(c->eps_used <= p.eps && c->eps_used > p.eps - 2 * c->sens_eff *
	    ldexp(1, -DPPG_DEN_BITS) / c->gamma, "eps used %.17g: at most "
	    "eps, less by under one unit of the rate", c->eps_used);
	dppg_free(d);
	p.eps = 1e-300;
	ok(dppg_new(&d, &p, 3) == PV_E_SIZE && d == NULL, "an eps whose rate "
	    "rounds to 0 is refused");
	p = base();
	p.bw = DPPG_BW_SILVERMAN;
	p.bw_min = 0.25;
	ok(dppg_new(&d, &p, 4) == 0, "silverman, 4 models");
	c = dppg_calib(d);
	pw = erf(0.25 / (2 * M_SQRT2 * (1.0 / (double)(float)(1 / 0.25))));
	ok(fabs(c->sens - pw) <= 1e-11, "data-dependent bandwidth: "
	    "sensitivity p(bw_min) = %.12g, not divided by M", c->sens);
	dppg_free(d);
}

/* Models m of one layer of widths w, every parameter of model m x[m]. */
static float **
flat_models(const double *x, size_t nm, size_t np)
{
	float **par = malloc(nm * sizeof *par);

	for (size_t m = 0; m < nm; m++) {
		par[m] = malloc(np * sizeof **par);
		for (size_t j = 0; j < np; j++)
			par[m][j] = (float)x[m];
	}
	return par;
}

static void
free_models(float **par, size_t nm)
{
	for (size_t m = 0; m < nm; m++)
		free(par[m]);
	free(par);
}

static void
test_em_frequencies(void)
{
	const double x[3] = { 0.1, 0.3, -0.2 };
	size_t w[2] = { 199, 100 }, nsel = 5, np;
	struct nn_model shape = { 0 };
	struct dppg_params p = base();
	struct dppg *d;
	const struct dppg_calib *c;
	float **par, *out, *out1;
	long obs[9] = { 0 };
	long double pr[9], tot = 0;
	double b = 1.0 / (double)(float)(1 / 0.2), chi;
	int rc, inside = 1;

	if (model_init(&shape, w, 1) != 0)
		abort();
	np = shape.nparam;
	par = flat_models(x, 3, np);
	out = malloc(np * sizeof *out);
	out1 = malloc(np * sizeof *out1);
	if (dppg_new(&d, &p, 3) != 0)
		abort();
	c = dppg_calib(d);
	rc = dppg_run(d, &shape, par, 3, 0, NULL, out, &nsel);
	ok(rc == 0 && np == 20000 && nsel == 0, "20000 parameters published, "
	    "none grouped");
	/* P(t_k) proportional to exp(eps_used U_k / (2 sens_eff)), U_k the
	 * models' kernel mass in [t_k - w/2, t_k + w/2]. */
	for (int k = 0; k < 9; k++) {
		double t = -1 + 0.25 * k, u = 0;
		for (int m = 0; m < 3; m++)
			u += 0.5 * (erfc(-(t + 0.125 - x[m]) / (b * M_SQRT2)) -
			    erfc(-(t - 0.125 - x[m]) / (b * M_SQRT2)));
		pr[k] = expl((long double)(c->eps_used * u / (2 *
		    c->sens_eff)));
		tot += pr[k];
	}
	for (int k = 0; k < 9; k++)
		pr[k] /= tot;
	for (size_t j = 0; j < np; j++) {
		double k = (out[j] + 1) / 0.25;
		if (k != floor(k) || k < 0 || k > 8) {
			inside = 0;
			break;
		}
		obs[(int)k]++;
	}
	chi = chi2_stat(obs, pr, 9, (long)np);
	ok(inside && chi <= chi2_crit(8), "candidate frequencies fit "
	    "exp(eps U / (2 sens)) (chi2 %.2f, critical %.2f)", chi,
	    chi2_crit(8));

	p.threads = 1;
	dppg_free(d);
	if (dppg_new(&d, &p, 3) != 0)
		abort();
	rc = dppg_run(d, &shape, par, 3, 0, NULL, out1, &nsel);
	ok(rc == 0 && memcmp(out, out1, np * sizeof *out) == 0,
	    "the seeded output is the same with 1 thread as with 2");
	rc = dppg_run(d, &shape, par, 3, 1, NULL, out1, &nsel);
	ok(rc == 0 && memcmp(out, out1, np * sizeof *out) != 0,
	    "another attempt draws other values");
	dppg_free(d);
	free_models(par, 3);
	free(out);
	free(out1);
	model_free(&shape);
}

static void
test_pgp(void)
{
	size_t w[3] = { 3, 2, 2 }, nsel = 0, np;
	struct nn_model shape = { 0 };
	struct dppg_params p = base();
	struct dppg *d;
	struct rng *r;
	float *par[3], *out;
	double worst = 0;
	int rc;

	if (model_init(&shape, w, 2) != 0 || rng_new_seeded(&r, 5, "pgp") != 0)
		abort();
	np = shape.nparam;
	for (int m = 0; m < 3; m++) {
		par[m] = malloc(np * sizeof **par);
		for (size_t j = 0; j < np; j++)
			par[m][j] = (float)(0.9 * sin((double)j) + 0.01 * m);
	}
	/* One parameter beyond the range: its mean is clipped to 1. */
	par[0][3] = 1.5f;
	par[1][3] = 2.0f;
	par[2][3] = 3.0f;
	out = malloc(np * sizeof *out);
	p.ratio = 1;
	p.k = 1;
	p.iters = 2;
	p.group_eps = DPPG_EPS_MAX;
	if (dppg_new(&d, &p, 3) != 0)
		abort();
	rc = dppg_run(d, &shape, par, 3, 0, r, out, &nsel);
	for (size_t j = 0; j < np; j++) {
		double m = 0;
		for (int i = 0; i < 3; i++)
			m += fmin(1, fmax(-1, par[i][j]));
		worst = fmax(worst, fabs(out[j] - m / 3));
	}
	ok(rc == 0 && nsel == np && worst < 1e-2, "ratio 1, tiny noise: every "
	    "parameter is the clipped mean of the models (worst %.2g)", worst);
	ok(fabs(dppg_calib(d)->group_sens - 2.0 / 3) < 1e-3,
	    "the grouped offset's sensitivity is 2R/M (%.6g)",
	    dppg_calib(d)->group_sens);
	dppg_free(d);
	p.ratio = 0.5;
	if (dppg_new(&d, &p, 3) != 0)
		abort();
	rc = dppg_run(d, &shape, par, 3, 0, r, out, &nsel);
	ok(rc == 0 && nsel == 4 + 3, "ratio 0.5 groups ceil(8/2) + ceil(6/2) "
	    "parameters (%zu)", nsel);
	dppg_free(d);
	for (int m = 0; m < 3; m++)
		free(par[m]);
	free(out);
	rng_free(r);
	model_free(&shape);
}

static void
test_account(void)
{
	struct dppg_params p = base();
	struct dppg_account ac;
	struct ledger_entry e;
	struct dppg *d;
	double worst = 0, eg;

	p.attempts = 3;
	p.ratio = 0.5;
	p.k = 2;
	p.group_eps = 0.5;
	if (dppg_new(&d, &p, 5) != 0 || dppg_account(d, 100, 10, &ac) != 0)
		abort();
	eg = dppg_calib(d)->group_eps_used;
	for (size_t i = 0; i < ac.no; i++) {
		double a = ac.orders[i], want = 3 * (100 * fmin(4, a * 16 / 8) +
		    10 * rdp_laplace(a, dppg_calib(d)->group_b /
		    dppg_calib(d)->group_sens));
		worst = fmax(worst, fabs(ac.rdp[i] - want) / want);
	}
	ok(ac.no == RDP_DEFAULT_NORDERS && worst < 1e-12, "RDP: attempts x "
	    "(np min(eps, a eps^2/8) + nsel Laplace) (worst %.2g)", worst);
	ok(eg <= 0.5 && eg > 0.5 * (1 - 1e-6) && fabs(ac.basic - 3 * (100 * 4 +
	    10 * eg)) < 1e-9 && fabs(ac.zcdp - 3 * (100 * 2 + 10 * eg * eg /
	    2)) < 1e-9, "basic composition %.6g and zCDP %.6g", ac.basic,
	    ac.zcdp);
	ok(ac.eps_rdp > 0 && ac.eps_rdp <= ac.basic, "(eps, delta) from RDP "
	    "%.6g is at most the basic total", ac.eps_rdp);
	memset(&e, 0, sizeof e);
	ok(dppg_ledger(d, &ac, 5, 1, &e) == 0 && e.relation ==
	    LEDGER_REPLACE_ONE && e.epsilon == ac.basic && e.norders == ac.no &&
	    e.rdp[7] == ac.rdp[7] && ts_meta_get(&e.params, "per_record") &&
	    strcmp(ts_meta_get(&e.params, "attempts_charged"), "3") == 0 &&
	    strcmp(ts_meta_get(&e.params, "grouped_parameters"), "10") == 0,
	    "the ledger entry: replace-one, the basic epsilon, the curve, the "
	    "attempts charged");
	ok(dppg_rdp_em(2, 1) == 0.25 && dppg_rdp_em(100, 1) == 1,
	    "EM RDP is min(eps, a eps^2 / 8)");
	ts_meta_free(&e.params);
	dppg_free(d);
}

/* A model's metadata: split.part and split.parent (NULL: absent). */
static int
part_of(struct dppg_part *p, const char *part, const char *parent,
    const char *raw)
{
	struct ts_meta m = { 0 };
	int rc;

	if (part)
		ts_meta_set(&m, "split.part", part);
	if (parent)
		ts_meta_set(&m, "split.parent", parent);
	if (raw)
		ts_meta_set(&m, "split.raw.d", raw);
	rc = dppg_part_read(p, &m, "d");
	ts_meta_free(&m);
	return rc;
}

static void
test_parts(void)
{
	struct dppg_part p[3];
	size_t a = 9, b = 9;

	ok(part_of(&p[0], "0/3", "s", NULL) == PART_OK && p[0].has &&
	    part_of(&p[1], "1/3", "s", "row-local") == PART_OK && p[1].has &&
	    part_of(&p[2], "2/3", "s", NULL) == PART_OK,
	    "three parts of one split are read");
	ok(dppg_parts_disjoint(p, 3, &a, &b) == DPPG_PARTS_DISJOINT,
	    "three parts of one split: the guarantee is per record");
	part_free(&p[2].sp);
	(void)part_of(&p[2], "1/3", "s", NULL);
	ok(dppg_parts_disjoint(p, 3, &a, &b) == DPPG_PARTS_SAME && a == 1 &&
	    b == 2, "part 1/3 twice: per model, naming models 1 and 2");
	part_free(&p[2].sp);
	(void)part_of(&p[2], "2/4", "s", NULL);
	ok(dppg_parts_disjoint(p, 3, &a, &b) == DPPG_PARTS_OTHER_SPLIT,
	    "a split into 4 parts among 3: per model");
	part_free(&p[2].sp);
	ok(part_of(&p[2], "2/3", "s", "aggregate") == PART_OK && !p[2].has &&
	    dppg_parts_disjoint(p, 3, &a, &b) == DPPG_PARTS_NO_PART && a == 2,
	    "a part already aggregate when split is no part of the records");
	part_free(&p[2].sp);
	ok(part_of(&p[2], NULL, NULL, NULL) == PART_NONE && !p[2].has &&
	    dppg_parts_disjoint(p, 3, &a, &b) == DPPG_PARTS_NO_PART,
	    "a model without split.part: per model");
	ok(part_of(&p[2], "mixed", "s", NULL) == PART_MIXED,
	    "a mixed model is refused");
	for (int i = 0; i < 3; i++)
		part_free(&p[i].sp);
}

static void
test_accuracy(void)
{
	size_t w[2] = { 2, 2 };
	struct nn_model m = { 0 };
	float x[8] = { 1, 0, 0, 1, 2, 3, 5, -1 };
	int32_t y[4] = { 0, 1, 0, 0 };
	double acc = -1;

	if (model_init(&m, w, 1) != 0)
		abort();
	m.param[0] = 1;		/* W = I, b = 0: the logits are x */
	m.param[3] = 1;
	ok(accuracy_model(&m, m.param, x, y, 4, &acc) == 0 && acc == 0.75,
	    "accuracy of the identity net on 4 rows: 3 of 4 (%.2f)", acc);
	model_free(&m);
}

int
main(void)
{
	test_check_params();
	test_calib();
	test_em_frequencies();
	test_pgp();
	test_account();
	test_parts();
	test_accuracy();
	return tap_done();
}
