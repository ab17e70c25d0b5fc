/*
 * Unit tests of lib/dp/account: rdp-account's events.  The event checks
 * (each missing or conflicting parameter), the order grids, the vote
 * histogram parser, and computed epsilons against closed forms: the
 * classic RDP conversion of the Gaussian curve minimised here, the pure
 * DP sums of Laplace and LNMax, Gaussian composition as one release of
 * sigma / sqrt(k), and an inverse query that meets its target.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "pverr.h"
#include "tap.h"

#define DELTA 1e-5

static struct account_event
ev(int kind, unsigned given)
{
	struct account_event e;

	account_event_init(&e, kind);
	e.given = given;
	return e;
}

static void
test_kinds_and_checks(void)
{
	char buf[200];
	struct account_event e;
	const unsigned qss = ACCOUNT_P_Q | ACCOUNT_P_SIGMA | ACCOUNT_P_STEPS;

	for (int k = 0; k < ACCOUNT_NKINDS; k++)
		ok(account_kind(account_kind_name(k)) == k, "kind %s round trip",
		    account_kind_name(k));
	ok(account_kind("nope") == -1, "unknown kind");
	ok(account_kind_allows(ACCOUNT_SGM, ACCOUNT_P_PLD) &&
	    !account_kind_allows(ACCOUNT_LAPLACE, ACCOUNT_P_SIGMA) &&
	    !account_kind_allows(ACCOUNT_GNMAX, ACCOUNT_P_GAMMA),
	    "allowed parameters");
	e = ev(ACCOUNT_SGM, qss);
	ok(account_check_event(&e, 1, buf, sizeof buf) == NULL, "sgm complete");
	e = ev(ACCOUNT_SGM, ACCOUNT_P_Q | ACCOUNT_P_SIGMA);
	ok(account_check_event(&e, 1, buf, sizeof buf) != NULL &&
	    strstr(buf, "--steps") != NULL, "sgm without steps: %s", buf);
	e = ev(ACCOUNT_GAUSSIAN, 0);
	ok(account_check_event(&e, 1, buf, sizeof buf) != NULL,
	    "gaussian without sigma: %s", buf);
	e = ev(ACCOUNT_LAPLACE, ACCOUNT_P_SENS);
	ok(account_check_event(&e, 1, buf, sizeof buf) != NULL,
	    "laplace without scale: %s", buf);
	e = ev(ACCOUNT_LNMAX, ACCOUNT_P_QUERIES);
	ok(account_check_event(&e, 1, buf, sizeof buf) != NULL,
	    "lnmax without gamma: %s", buf);
	e = ev(ACCOUNT_GNMAX, ACCOUNT_P_SIGMA | ACCOUNT_P_COUNTS);
	ok(account_check_event(&e, 1, buf, sizeof buf) != NULL &&
	    strstr(buf, "--data-dependent") != NULL,
	    "counts without --data-dependent: %s", buf);
	e = ev(ACCOUNT_GNMAX, ACCOUNT_P_SIGMA | ACCOUNT_P_COUNTS |
	    ACCOUNT_P_QUERIES | ACCOUNT_P_DDEP);
	ok(account_check_event(&e, 1, buf, sizeof buf) != NULL,
	    "counts with queries: %s", buf);
	e = ev(ACCOUNT_GNMAX, ACCOUNT_P_SIGMA);
	ok(account_check_event(&e, 1, buf, sizeof buf) != NULL,
	    "gnmax without queries: %s", buf);
	e = ev(ACCOUNT_SGM, ACCOUNT_P_EPS | ACCOUNT_P_Q | ACCOUNT_P_STEPS);
	ok(account_check_event(&e, 1, buf, sizeof buf) != NULL,
	    "epsilon without solve: %s", buf);
	e.given |= ACCOUNT_P_SOLVE;
	e.solve = ACCOUNT_SOLVE_SIGMA;
	ok(account_check_event(&e, 1, buf, sizeof buf) == NULL,
	    "sgm --solve sigma with q and steps");
	ok(account_check_event(&e, 2, buf, sizeof buf) != NULL,
	    "solve in a composition: %s", buf);
	e.solve = ACCOUNT_SOLVE_STEPS;
	ok(account_check_event(&e, 1, buf, sizeof buf) != NULL,
	    "solve steps given steps: %s", buf);
	e = ev(ACCOUNT_GAUSSIAN, ACCOUNT_P_EPS | ACCOUNT_P_SOLVE);
	e.solve = ACCOUNT_SOLVE_Q;
	ok(account_check_event(&e, 1, buf, sizeof buf) != NULL,
	    "gaussian solve q: %s", buf);
	e = ev(ACCOUNT_GAUSSIAN, ACCOUNT_P_SIGMA | ACCOUNT_P_ANALYTIC);
	ok(account_check_event(&e, 1, buf, sizeof buf) != NULL,
	    "analytic without solve: %s", buf);
}

static void
test_orders(void)
{
	double *o;
	size_t n;
	const char *why;

	ok(account_orders("default", &o, &n, &why) == 0 &&
	    n == RDP_DEFAULT_NORDERS, "default grid");
	free(o);
	ok(account_orders("opacus", &o, &n, &why) == 0 && n == 151 &&
	    o[0] == 1.1 && o[98] == 10.9 && o[99] == 12 && o[150] == 63,
	    "opacus grid: 1.1 .. 10.9, 12 .. 63");
	free(o);
	ok(account_orders("pate", &o, &n, &why) == 0 && n == 298 &&
	    o[0] == 2 && o[197] == 100.5 && o[198] == 100 &&
	    fabs(o[297] - 500) < 1e-12, "pate grid: arange then logspace to "
	    "500");
	free(o);
	ok(account_orders("2,4.5", &o, &n, &why) == 0 && n == 2 &&
	    o[1] == 4.5, "a list");
	free(o);
	ok(account_orders("2,x", &o, &n, &why) == PV_E_FORMAT, "not a number");
	ok(account_orders("2,", &o, &n, &why) == PV_E_FORMAT, "empty field");
	ok(account_orders("1e999", &o, &n, &why) == PV_E_RANGE && why == NULL,
	    "overflow");
	ok(account_orders("1", &o, &n, &why) == PV_E_RANGE && why != NULL,
	    "order 1 refused: %s", why ? why : "-");
}

static int
counts(const char *text, struct account_event *e, uint64_t *line, char *err)
{
	FILE *fp = fmemopen((void *)text, strlen(text), "r");
	int rc;

	account_event_init(e, ACCOUNT_GNMAX);
	rc = account_read_counts(fp, e, line, err, 200);
	fclose(fp);
	return rc;
}

static void
test_counts(void)
{
	struct account_event e;
	uint64_t line;
	char err[200];

	ok(counts("1,2,3\n4, 5 ,6\r\n", &e, &line, err) == 0 && e.queries == 2 &&
	    e.qoff[0] == 0 && e.qoff[1] == 3 && e.qoff[2] == 6 &&
	    e.votes[4] == 5, "two histograms");
	account_event_free(&e);
	/* Issue 15: ragged histograms were accepted before. */
	ok(counts("1,2,3\n4, 5\r\n", &e, &line, err) == PV_E_FORMAT &&
	    line == 2 && strstr(err, "line 1 has 3") != NULL,
	    "ragged histograms: %s", err);
	account_event_free(&e);
	ok(counts("1,2\n1,x\n", &e, &line, err) == PV_E_FORMAT && line == 2 &&
	    strstr(err, "field 2") != NULL, "bad field named: %s", err);
	account_event_free(&e);
	ok(counts("1,-2\n", &e, &line, err) == PV_E_FORMAT && line == 1,
	    "negative count: %s", err);
	account_event_free(&e);
	ok(counts("5\n", &e, &line, err) == PV_E_FORMAT, "one class: %s", err);
	account_event_free(&e);
	ok(counts("1,2\n\n", &e, &line, err) == PV_E_FORMAT && line == 2,
	    "empty line: %s", err);
	account_event_free(&e);
	ok(counts("", &e, &line, err) == PV_E_FORMAT && line == 0,
	    "no histograms: %s", err);
	account_event_free(&e);
}

static int
compute(struct account_event *e, size_t n, int conv, struct account_result *r,
    const char *orders)
{
	const char *why;

	memset(r, 0, sizeof *r);
	if (account_orders(orders, &r->orders, &r->norders, &why) != 0)
		return -100;
	return account_compute(e, n, DELTA, conv, r);
}

static void
test_compute(void)
{
	struct account_event e[2];
	struct account_result r;
	double best = INFINITY, sigma = 3, eps2;

	/* Gaussian, 4 releases: RDP 4 a / (2 sigma^2), classic conversion. */
	e[0] = ev(ACCOUNT_GAUSSIAN, ACCOUNT_P_SIGMA);
	e[0].sigma = sigma;
	e[0].count = 4;
	ok(compute(e, 1, RDP_CONV_CLASSIC, &r, "2,3,5,8,13,21,34") == 0,
	    "gaussian computed");
	for (int a = 0; a < 7; a++) {
		const double o[] = { 2, 3, 5, 8, 13, 21, 34 };
		double x = 4 * o[a] / (2 * sigma * sigma) - log(DELTA) /
		    (o[a] - 1);
		best = x < best ? x : best;
	}
	ok(fabs(r.eps - best) < 1e-12 * best && fabs(e[0].eps - best) <
	    1e-12 * best, "classic epsilon %.17g = %.17g", r.eps, best);
	ok(isnan(r.eps_pure) && r.eps_analytic < r.eps, "analytic below RDP");
	eps2 = r.eps_analytic;
	account_event_free(&e[0]);
	account_result_free(&r);
	/* 4 releases of sigma = one of sigma / 2. */
	e[0] = ev(ACCOUNT_GAUSSIAN, ACCOUNT_P_SIGMA);
	e[0].sigma = sigma / 2;
	ok(compute(e, 1, RDP_CONV_CLASSIC, &r, "2,3,5,8,13,21,34") == 0 &&
	    fabs(r.eps_analytic - eps2) < 1e-9 * eps2 &&
	    fabs(r.eps - best) < 1e-12 * best,
	    "Gaussian composition: count 4 = sigma / 2");
	account_event_free(&e[0]);
	account_result_free(&r);
	/* Laplace and LNMax: pure DP sums. */
	e[0] = ev(ACCOUNT_LAPLACE, ACCOUNT_P_SCALE);
	e[0].scale = 2;
	e[0].sens = 0.5;
	e[0].count = 3;
	e[1] = ev(ACCOUNT_LNMAX, ACCOUNT_P_GAMMA | ACCOUNT_P_QUERIES);
	e[1].gamma = 0.05;
	e[1].queries = 10;
	ok(compute(e, 2, RDP_CONV_IMPROVED, &r, "default") == 0 &&
	    fabs(r.eps_pure - (3 * 0.5 / 2 + 10 * 2 * 0.05)) < 1e-15 &&
	    isnan(r.eps_analytic) && r.eps > 0 && isfinite(r.eps),
	    "pure DP: %.17g (RDP %.6g)", r.eps_pure, r.eps);
	account_event_free(&e[0]);
	account_event_free(&e[1]);
	account_result_free(&r);
	/* sgm --solve sigma meets its target. */
	e[0] = ev(ACCOUNT_SGM, ACCOUNT_P_Q | ACCOUNT_P_STEPS | ACCOUNT_P_EPS |
	    ACCOUNT_P_SOLVE);
	e[0].q = 0.01;
	e[0].steps = 1000;
	e[0].target = 1;
	e[0].solve = ACCOUNT_SOLVE_SIGMA;
	ok(compute(e, 1, RDP_CONV_IMPROVED, &r, "default") == 0 &&
	    e[0].sigma > 0 && r.eps <= 1 + 1e-9 && r.eps > 0.99,
	    "solved sigma %.6g gives epsilon %.9g", e[0].sigma, r.eps);
	account_event_free(&e[0]);
	account_result_free(&r);
	e[0] = ev(ACCOUNT_SGM, ACCOUNT_P_Q | ACCOUNT_P_STEPS | ACCOUNT_P_EPS |
	    ACCOUNT_P_SOLVE);
	e[0].q = 1;
	e[0].steps = 1000000;
	e[0].target = 1e-9;
	e[0].solve = ACCOUNT_SOLVE_SIGMA;
	ok(compute(e, 1, RDP_CONV_IMPROVED, &r, "default") == PV_E_NOROOT &&
	    r.failed != NULL, "unreachable target: PV_E_NOROOT (%s)",
	    r.failed ? r.failed : "-");
	account_event_free(&e[0]);
	account_result_free(&r);
}

int
main(void)
{
	test_kinds_and_checks();
	test_orders();
	test_counts();
	test_compute();
	return tap_done();
}
