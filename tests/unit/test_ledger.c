/* Unit tests of the dp.* ledger encoding (lib/dp/ledger.c). */
#include <string.h>

#include <math.h>

#include "ledger.h"
#include "noise_fast.h"
#include "rdp.h"
#include "tap.h"

static void
entry(struct ledger_entry *e, unsigned char idbyte, const char *ds)
{
	unsigned char b[16];

	memset(e, 0, sizeof *e);
	memset(b, idbyte, sizeof b);
	ledger_format_id(e->id, b);
	snprintf(e->dataset, sizeof e->dataset, "%s", ds);
	strcpy(e->mechanism, "gaussian");
	strcpy(e->tool, "covest");
	e->relation = LEDGER_ADD_REMOVE;
	e->epsilon = -1;
	e->delta = 1e-12;
	e->norders = 3;
	for (int i = 0; i < 3; i++) {
		e->orders[i] = 1.5 + i;
		e->rdp[i] = 0.1 * (i + 1) / 3.0;
	}
	ts_meta_set(&e->params, "sigma", "4.5");
}


/* The epsilon of the Gaussian curve c (at the default orders) plus
 * eps_basic, converted at delta_rdp; inf when it cannot be. */
static double
conv_at(const double *ord, const double *c, size_t no, double delta_rdp,
    double eps_basic)
{
	double eps, order;

	if (!(delta_rdp > 0) || rdp_to_epsilon(ord, c, no, delta_rdp,
	    RDP_CONV_IMPROVED, &eps, &order) != 0)
		return INFINITY;
	return eps + eps_basic;
}

/*
 * The TV charge of the fast sampler at the composed epsilon (issue 13,
 * item 10), against an independent computation: the least charge c with
 * c >= d0 + (1 + e^E(delta - c)) tv, by bisection in long double, E the
 * composed epsilon at delta - c.  Fails on 7b23f82: the entry's charge
 * stayed at tv_epsilon = 32 while the composition reached about 76.
 */
static void
test_tv_recharge(void)
{
	struct ts_meta m = { 0 };
	struct ledger l = { 0 };
	struct ledger_entry g, p;
	struct ledger_total t;
	size_t no;
	const double *ord = rdp_default_orders(&no);
	double curve[RDP_DEFAULT_NORDERS], tv = 1e-38, delta = 1e-5;
	long double lo, hi, want_c, used;
	double want_eps;
	char err[256];

	entry(&g, 0x11, "cifar");
	entry(&p, 0x22, "cifar");
	g.norders = no;
	for (size_t i = 0; i < no; i++) {
		g.orders[i] = ord[i];
		curve[i] = g.rdp[i] = rdp_gaussian(ord[i], 0.12);
	}
	g.tv = tv;
	g.tv_epsilon = 32;
	g.delta = noise_fast_delta_charge(32, tv);
	p.norders = 0;
	p.epsilon = 1;
	p.delta = 1e-7;
	ledger_put(&m, &g, err, sizeof err);
	ledger_put(&m, &p, err, sizeof err);
	ok(ledger_parse(&m, &l, err, sizeof err) == 0 && l.n == 2 &&
	    l.e[0].tv == tv && l.e[0].tv_epsilon == 32,
	    "tv and tv_epsilon round-trip");
	/* Independent: bisection on c in [d0, delta). */
	lo = 1e-7L + (long double)g.delta;
	hi = delta;
	for (int it = 0; it < 200; it++) {
		long double mid = (lo + hi) / 2;
		double e = conv_at(ord, curve, no, (double)(delta - mid), 1);
		long double need = 1e-7L + (1 + expl((long double)e)) * tv;
		if (need <= mid)
			hi = mid;
		else
			lo = mid;
	}
	want_c = hi;
	want_eps = conv_at(ord, curve, no, (double)(delta - want_c), 1);
	ok(ledger_total(&l, "cifar", delta, RDP_CONV_IMPROVED, &t, err,
	    sizeof err) == 0, "a TV charge at the composed epsilon: %s",
	    t.releases ? "ok" : err);
	ok(t.tv_recharged && t.epsilon > 32, "the composition (epsilon "
	    "%.6g) exceeds tv_epsilon 32 and the charge is raised",
	    t.epsilon);
	used = (long double)t.delta_rdp + 1e-7L + (1 +
	    expl((long double)t.epsilon)) * tv;
	ok(used <= delta, "sound: delta_rdp + 1e-7 + (1 + e^eps) tv = %.9Lg "
	    "<= delta", used);
	ok(t.epsilon >= want_eps * (1 - 1e-12) && t.epsilon <= want_eps *
	    (1 + 1e-4), "epsilon %.9g = the fixed point's %.9g (bisection)",
	    t.epsilon, want_eps);
	ok(fabs((double)(t.delta_extra - want_c)) <= 1e-4 * (double)want_c &&
	    t.delta_extra > 1e-6, "delta charged %.6g = the fixed point's "
	    "%.6Lg (the charge at tv_epsilon 32 was %.3g)", t.delta_extra,
	    want_c, g.delta);
	/* Below tv_epsilon nothing changes. */
	ledger_free(&l);
	ts_meta_free(&m);
	for (size_t i = 0; i < no; i++)
		g.rdp[i] = rdp_gaussian(ord[i], 4);
	ledger_put(&m, &g, err, sizeof err);
	ledger_parse(&m, &l, err, sizeof err);
	ok(ledger_total(&l, "cifar", delta, RDP_CONV_IMPROVED, &t, err,
	    sizeof err) == 0 && !t.tv_recharged && t.delta_extra == g.delta &&
	    t.epsilon < 32, "an epsilon below tv_epsilon keeps the "
	    "entry's charge");
	/* A charge that cannot fit in delta is an error, not a number. */
	ledger_free(&l);
	ts_meta_free(&m);
	for (size_t i = 0; i < no; i++)
		g.rdp[i] = rdp_gaussian(ord[i], 0.12);
	g.tv = 1e-30;
	g.delta = noise_fast_delta_charge(32, g.tv);
	ledger_put(&m, &g, err, sizeof err);
	ledger_parse(&m, &l, err, sizeof err);
	ok(ledger_total(&l, "cifar", delta, RDP_CONV_IMPROVED, &t, err,
	    sizeof err) != 0 && strstr(err, "total variation") != NULL,
	    "a TV charge beyond delta is refused: %s", err);
	ledger_free(&l);
	ts_meta_free(&m);
	ts_meta_free(&g.params);
	ts_meta_free(&p.params);
}

/* Rows of unknown provenance and the --assume-raw declaration (issue 13,
 * item 5). */
static void
test_provenance(void)
{
	struct ts_meta m = { 0 };
	struct ledger l = { 0 };
	struct ledger_entry e;
	struct ledger_total t;
	char err[256];

	ts_meta_set(&m, "dp.provenance", "unknown");
	ok(ledger_parse(&m, &l, err, sizeof err) == 0 && l.unknown &&
	    l.n == 0, "dp.provenance = unknown is parsed as unknown");
	ledger_free(&l);
	entry(&e, 0x33, "imported");
	e.assumed_raw = 1;
	ledger_put(&m, &e, err, sizeof err);
	ok(strcmp(ts_meta_get(&m, "dp.release.33333333333333333333333333333333"
	    ".assumed_raw"), "true") == 0, "assumed_raw written");
	ok(ledger_parse(&m, &l, err, sizeof err) == 0 && l.n == 1 &&
	    l.e[0].assumed_raw && ledger_total(&l, "imported", 1e-5,
	    RDP_CONV_IMPROVED, &t, err, sizeof err) == 0 && t.assumed_raw,
	    "assumed_raw round-trips into the total");
	ledger_free(&l);
	ts_meta_free(&m);
	ts_meta_free(&e.params);
}

int
main(void)
{
	struct ts_meta m = { 0 }, m2 = { 0 };
	struct ledger_entry e, f;
	struct ledger l = { 0 };
	char err[256];

	entry(&e, 0xab, "mnist");
	ok(ledger_put(&m, &e, err, sizeof err) == 0, "put an entry");
	ok(strcmp(ts_meta_get(&m, "dp.release.abababababababababababababababab.neighbours"),
	    "add_remove") == 0, "neighbours key written");
	ok(ledger_mark_raw(&m, "usps", LEDGER_ROW_LOCAL, err, sizeof err) == 0 &&
	    ledger_mark_raw(&m, "usps", LEDGER_AGGREGATE, err, sizeof err) == 0 &&
	    ledger_mark_raw(&m, "usps", LEDGER_ROW_LOCAL, err, sizeof err) == 0 &&
	    strcmp(ts_meta_get(&m, "dp.raw.usps"), "aggregate") == 0,
	    "aggregate taint is never weakened");
	ok(ledger_mark_raw(&m, "Bad-Name", LEDGER_ROW_LOCAL, err, sizeof err) != 0,
	    "bad dataset name refused");
	ok(ledger_parse(&m, &l, err, sizeof err) == 0 && l.n == 1 && l.nraw == 1,
	    "parse back");
	ok(l.n == 1 && l.e[0].norders == 3 && l.e[0].rdp[2] == e.rdp[2] && l.e[0].rdp[0] == e.rdp[0] &&
	    l.e[0].orders[1] == 2.5 && l.e[0].delta == 1e-12 &&
	    strcmp(ts_meta_get(&l.e[0].params, "sigma"), "4.5") == 0,
	    "values round-trip exactly (%%.17g)");
	/* The same release seen through two inputs is counted once. */
	entry(&f, 0xcd, "mnist");
	ledger_put(&m2, &f, err, sizeof err);
	ledger_put(&m2, &e, err, sizeof err);
	ok(ledger_parse(&m2, &l, err, sizeof err) == 0 && l.n == 2,
	    "union by release id");
	ledger_free(&l);
	ts_meta_set(&m2, "dp.release.cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd.rdp", "0.1,-2,3");
	ok(ledger_parse(&m2, &l, err, sizeof err) != 0 && strstr(err, "negative"),
	    "negative RDP rejected: %s", err);
	ts_meta_set(&m2, "dp.release.cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd.rdp", "0.1,2");
	ok(ledger_parse(&m2, &l, err, sizeof err) != 0 && strstr(err, "orders"),
	    "order/value count mismatch rejected: %s", err);
	ts_meta_set(&m2, "dp.release.xyz.rdp", "1");
	ok(ledger_parse(&m2, &l, err, sizeof err) != 0, "bad id rejected");
	/* Composition: two Gaussian releases on mnist, one pure-eps release,
	 * a seeded one; the total equals an independent composition. */
	{
		struct ts_meta m3 = { 0 };
		struct ledger l3 = { 0 };
		struct ledger_entry g1, g2, p;
		struct ledger_total t;
		size_t no;
		const double *ord = rdp_default_orders(&no);
		double sum[RDP_DEFAULT_NORDERS], want, wo;

		entry(&g1, 1, "mnist");
		entry(&g2, 2, "mnist");
		entry(&p, 3, "mnist");
		g1.norders = g2.norders = no;
		for (size_t i = 0; i < no; i++) {
			g1.orders[i] = g2.orders[i] = ord[i];
			g1.rdp[i] = rdp_gaussian(ord[i], 3.0);
			g2.rdp[i] = rdp_gaussian(ord[i], 5.0);
			sum[i] = g1.rdp[i] + g2.rdp[i];
		}
		g1.delta = g2.delta = 0;
		p.norders = 0;
		p.epsilon = 0.25;
		p.delta = 1e-7;
		p.seeded = 1;
		ledger_put(&m3, &g1, err, sizeof err);
		ledger_put(&m3, &g2, err, sizeof err);
		ledger_put(&m3, &p, err, sizeof err);
		ok(ledger_parse(&m3, &l3, err, sizeof err) == 0 && l3.n == 3,
		    "three releases parsed");
		rdp_to_epsilon(ord, sum, no, 1e-5 - 1e-7, RDP_CONV_IMPROVED,
		    &want, &wo);
		ok(ledger_total(&l3, "mnist", 1e-5, RDP_CONV_IMPROVED, &t, err,
		    sizeof err) == 0 && t.releases == 3 && t.seeded &&
		    fabs(t.epsilon - (want + 0.25)) < 1e-12 && t.order == wo,
		    "total = RDP sum converted at delta - own deltas + basic eps "
		    "(%.12g vs %.12g)", t.epsilon, want + 0.25);
		ok(ledger_total(&l3, "mnist", 1e-7, RDP_CONV_IMPROVED, &t, err,
		    sizeof err) != 0, "delta below the entries' own deltas refused");
		ok(ledger_total(&l3, "usps", 1e-5, RDP_CONV_IMPROVED, &t, err,
		    sizeof err) == 0 && t.releases == 0 && t.epsilon == 0,
		    "an untouched dataset spent nothing");
		p.relation = LEDGER_REPLACE_ONE;
		memset(p.id, 'e', LEDGER_ID_HEX);
		ledger_put(&m3, &p, err, sizeof err);
		ledger_free(&l3);
		ledger_parse(&m3, &l3, err, sizeof err);
		ok(ledger_total(&l3, "mnist", 1e-5, RDP_CONV_IMPROVED, &t, err,
		    sizeof err) == 0 && t.mixed && isinf(t.epsilon),
		    "mixed neighbouring relations give no single epsilon");
		ts_meta_free(&m3);
		ledger_free(&l3);
		ts_meta_free(&g1.params);
		ts_meta_free(&g2.params);
		ts_meta_free(&p.params);
	}
	ts_meta_free(&m);
	ts_meta_free(&m2);
	ts_meta_free(&e.params);
	ts_meta_free(&f.params);
	ledger_free(&l);
	test_tv_recharge();
	test_provenance();
	return tap_done();
}
