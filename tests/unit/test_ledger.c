/* Unit tests of the dp.* ledger encoding (lib/ledger.c). */
#include <string.h>

#include <math.h>

#include "ledger.h"
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
	return tap_done();
}
