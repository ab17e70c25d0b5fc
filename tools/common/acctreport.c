/* acctreport.c: rdp-account's reports in text, TSV and JSON (see
 * acctreport.h). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "account.h"
#include "acctreport.h"
#include "ledger.h"
#include "rdp.h"
#include "emit.h"
#include "verdict.h"

#define ID_SHOWN 8			/* hex digits of a release id in text */

const char *const acct_conversions[] = { "improved", "classic", NULL };

static const char *
conv_name(int conv)
{
	return acct_conversions[conv];
}

/* ---- events ---- */

/* The parameters of an event, for every format. */
struct param {
	const char *key;
	double v;
	int integer;			/* then the value is u */
	uint64_t u;
};

static size_t
event_params(const struct account_event *e, struct param *p)
{
	size_t n = 0;

	switch (e->kind) {
	case ACCOUNT_SGM:
		p[n++] = (struct param){ "q", e->q, 0, 0 };
		p[n++] = (struct param){ "sigma", e->sigma, 0, 0 };
		p[n++] = (struct param){ "steps", 0, 1, e->steps };
		break;
	case ACCOUNT_GAUSSIAN:
		p[n++] = (struct param){ "sigma", e->sigma, 0, 0 };
		p[n++] = (struct param){ "sensitivity", e->sens, 0, 0 };
		p[n++] = (struct param){ "count", 0, 1, e->count };
		break;
	case ACCOUNT_LAPLACE:
		p[n++] = (struct param){ "scale", e->scale, 0, 0 };
		p[n++] = (struct param){ "sensitivity", e->sens, 0, 0 };
		p[n++] = (struct param){ "count", 0, 1, e->count };
		break;
	case ACCOUNT_LNMAX:
		p[n++] = (struct param){ "gamma", e->gamma, 0, 0 };
		p[n++] = (struct param){ "queries", 0, 1, e->queries };
		break;
	default:
		p[n++] = (struct param){ "sigma", e->sigma, 0, 0 };
		p[n++] = (struct param){ "queries", 0, 1, e->queries };
	}
	return n;
}

/* An integer parameter; solved steps may be UINT64_MAX: unbounded. */
static void
pint(FILE *fp, const struct param *p, int fmt)
{
	if (p->u == UINT64_MAX && strcmp(p->key, "steps") == 0) {
		if (fmt == EMIT_TEXT)
			fputs("unbounded", fp);
		else
			emit_num(fp, fmt, INFINITY);
	} else {
		fprintf(fp, "%llu", (unsigned long long)p->u);
	}
}

static void
text_events(FILE *fp, const struct acct_report *r,
    const struct account_result *res)
{
	struct param p[4];

	for (size_t i = 0; i < r->nev; i++) {
		const struct account_event *e = &r->ev[i];
		size_t n = event_params(e, p);

		if (r->nev > 1)
			fprintf(fp, "event %zu: ", i + 1);
		fprintf(fp, "%s", account_kind_name(e->kind));
		for (size_t k = 0; k < n; k++) {
			fprintf(fp, "%s %s ", k ? "," : "", p[k].key);
			if (p[k].integer)
				pint(fp, &p[k], EMIT_TEXT);
			else
				fprintf(fp, "%.6g", p[k].v);
		}
		if (e->data_dependent)
			fprintf(fp, ", data-dependent (%s)", e->counts_label);
		if (r->nev > 1)
			fprintf(fp, ": epsilon %.6g alone (order %g)", e->eps,
			    e->order);
		fputc('\n', fp);
		if (e->solve != ACCOUNT_SOLVE_NONE) {
			struct param ps = { "steps", 0, 1, e->steps };

			fprintf(fp, "solved: %s ",
			    account_solve_name(e->solve));
			if (e->solve == ACCOUNT_SOLVE_STEPS)
				pint(fp, &ps, EMIT_TEXT);
			else
				fprintf(fp, "%.10g", e->solve ==
				    ACCOUNT_SOLVE_SIGMA ? e->sigma : e->q);
			fprintf(fp, " is the %s value with epsilon <= %g at delta "
			    "%g (%s)\n", e->solve == ACCOUNT_SOLVE_SIGMA ? "smallest" :
			    "largest", e->target, r->delta, e->analytic ?
			    "analytic Gaussian calibration" : "RDP");
		}
	}
	fprintf(fp, "epsilon %.6g at delta %g (RDP, order %g, %s conversion)\n",
	    res->eps, r->delta, res->order, conv_name(r->conv));
	if (!isnan(res->eps_analytic))
		fprintf(fp, "epsilon %.6g at delta %g (analytic Gaussian mechanism, "
		    "exact: Balle and Wang 2018)\n", res->eps_analytic, r->delta);
	if (!isnan(res->eps_pure))
		fprintf(fp, "epsilon %.6g at delta 0 (pure DP, basic composition)\n",
		    res->eps_pure);
	if (!isnan(res->eps_pld))
		fprintf(fp, "epsilon %.6g at delta %g (privacy loss distribution, "
		    "connect-the-dots upper bound)\n", res->eps_pld, r->delta);
	if (res->data_dependent)
		fprintf(fp, "%s\n", VERDICT_DD_NOTE);
	if (r->verbose) {
		const double *c = rdp_acct_curve(res->total);
		fprintf(fp, "order\trdp\n");
		for (size_t j = 0; j < res->norders; j++)
			fprintf(fp, "%g\t%.6g\n", res->orders[j], c[j]);
	}
}

static void
tsv_events(FILE *fp, const struct acct_report *r,
    const struct account_result *res)
{
	struct param p[4];

	fprintf(fp, "delta\t");
	emit_num(fp, EMIT_TSV, r->delta);
	fprintf(fp, "\nconversion\t%s\norders\t%s\nevents\t%zu\n",
	    conv_name(r->conv), r->orders_name, r->nev);
	for (size_t i = 0; i < r->nev; i++) {
		const struct account_event *e = &r->ev[i];
		size_t n = event_params(e, p);

		fprintf(fp, "event.%zu.mechanism\t%s\n", i + 1,
		    account_kind_name(e->kind));
		for (size_t k = 0; k < n; k++) {
			fprintf(fp, "event.%zu.%s\t", i + 1, p[k].key);
			if (p[k].integer)
				pint(fp, &p[k], EMIT_TSV);
			else
				emit_num(fp, EMIT_TSV, p[k].v);
			fputc('\n', fp);
		}
		if (e->data_dependent) {
			fprintf(fp, "event.%zu.counts\t", i + 1);
			emit_tstr(fp, e->counts_label);
			fputc('\n', fp);
		}
		fprintf(fp, "event.%zu.epsilon\t", i + 1);
		emit_num(fp, EMIT_TSV, e->eps);
		fprintf(fp, "\nevent.%zu.order\t", i + 1);
		emit_num(fp, EMIT_TSV, e->order);
		fputc('\n', fp);
		if (e->solve != ACCOUNT_SOLVE_NONE) {
			fprintf(fp, "solve\t%s\ntarget_epsilon\t",
			    account_solve_name(e->solve));
			emit_num(fp, EMIT_TSV, e->target);
			fprintf(fp, "\n%s\t", account_solve_name(e->solve));
			if (e->solve == ACCOUNT_SOLVE_STEPS)
				pint(fp, &p[2], EMIT_TSV);
			else
				emit_num(fp, EMIT_TSV, e->solve ==
				    ACCOUNT_SOLVE_SIGMA ? e->sigma : e->q);
			fputc('\n', fp);
		}
	}
	fprintf(fp, "epsilon\t");
	emit_num(fp, EMIT_TSV, res->eps);
	fprintf(fp, "\norder\t");
	emit_num(fp, EMIT_TSV, res->order);
	fputc('\n', fp);
	if (!isnan(res->eps_analytic)) {
		fprintf(fp, "epsilon_analytic\t");
		emit_num(fp, EMIT_TSV, res->eps_analytic);
		fputc('\n', fp);
	}
	if (!isnan(res->eps_pure)) {
		fprintf(fp, "epsilon_pure\t");
		emit_num(fp, EMIT_TSV, res->eps_pure);
		fputc('\n', fp);
	}
	if (!isnan(res->eps_pld)) {
		fprintf(fp, "epsilon_pld\t");
		emit_num(fp, EMIT_TSV, res->eps_pld);
		fputc('\n', fp);
	}
	if (res->data_dependent)
		fprintf(fp, "data_dependent\ttrue\nnote\t%s\n", VERDICT_DD_NOTE);
	if (r->verbose) {
		const double *c = rdp_acct_curve(res->total);
		for (size_t j = 0; j < res->norders; j++) {
			fprintf(fp, "rdp\t");
			emit_num(fp, EMIT_TSV, res->orders[j]);
			fputc('\t', fp);
			emit_num(fp, EMIT_TSV, c[j]);
			fputc('\n', fp);
		}
	}
}

static void
json_events(FILE *fp, const struct acct_report *r,
    const struct account_result *res)
{
	struct param p[4];
	int first = 1;

	fputc('{', fp);
	emit_jnum(fp, &first, "delta", r->delta);
	emit_jkey(fp, &first, "conversion");
	emit_jstr(fp, conv_name(r->conv));
	emit_jkey(fp, &first, "orders");
	emit_jstr(fp, r->orders_name);
	emit_jkey(fp, &first, "events");
	fputc('[', fp);
	for (size_t i = 0; i < r->nev; i++) {
		const struct account_event *e = &r->ev[i];
		size_t n = event_params(e, p);
		int f2 = 1;

		fprintf(fp, "%s{", i ? "," : "");
		emit_jkey(fp, &f2, "mechanism");
		emit_jstr(fp, account_kind_name(e->kind));
		for (size_t k = 0; k < n; k++) {
			emit_jkey(fp, &f2, p[k].key);
			if (p[k].integer)
				pint(fp, &p[k], EMIT_JSON);
			else
				emit_num(fp, EMIT_JSON, p[k].v);
		}
		if (e->data_dependent) {
			emit_jkey(fp, &f2, "counts");
			emit_jstr(fp, e->counts_label);
		}
		emit_jnum(fp, &f2, "epsilon", e->eps);
		emit_jnum(fp, &f2, "order", e->order);
		fputc('}', fp);
	}
	fputc(']', fp);
	for (size_t i = 0; i < r->nev; i++) {
		const struct account_event *e = &r->ev[i];
		if (e->solve == ACCOUNT_SOLVE_NONE)
			continue;
		emit_jkey(fp, &first, "solve");
		emit_jstr(fp, account_solve_name(e->solve));
		emit_jnum(fp, &first, "target_epsilon", e->target);
		emit_jkey(fp, &first, account_solve_name(e->solve));
		if (e->solve == ACCOUNT_SOLVE_STEPS) {
			struct param ps = { "steps", 0, 1, e->steps };
			pint(fp, &ps, EMIT_JSON);
		} else {
			emit_num(fp, EMIT_JSON, e->solve ==
			    ACCOUNT_SOLVE_SIGMA ? e->sigma : e->q);
		}
	}
	emit_jnum(fp, &first, "epsilon", res->eps);
	emit_jnum(fp, &first, "order", res->order);
	if (!isnan(res->eps_analytic))
		emit_jnum(fp, &first, "epsilon_analytic", res->eps_analytic);
	if (!isnan(res->eps_pld))
		emit_jnum(fp, &first, "epsilon_pld", res->eps_pld);
	if (!isnan(res->eps_pure))
		emit_jnum(fp, &first, "epsilon_pure", res->eps_pure);
	if (res->data_dependent) {
		emit_jkey(fp, &first, "data_dependent");
		fputs("true", fp);
		emit_jkey(fp, &first, "note");
		emit_jstr(fp, VERDICT_DD_NOTE);
	}
	if (r->verbose) {
		const double *c = rdp_acct_curve(res->total);
		int f2 = 1;

		emit_jkey(fp, &first, "curve");
		fputc('{', fp);
		emit_jkey(fp, &f2, "orders");
		fputc('[', fp);
		for (size_t j = 0; j < res->norders; j++) {
			fprintf(fp, "%s", j ? "," : "");
			emit_num(fp, EMIT_JSON, res->orders[j]);
		}
		fputs("],", fp);
		f2 = 1;
		emit_jkey(fp, &f2, "rdp");
		fputc('[', fp);
		for (size_t j = 0; j < res->norders; j++) {
			fprintf(fp, "%s", j ? "," : "");
			emit_num(fp, EMIT_JSON, c[j]);
		}
		fputs("]}", fp);
	}
	fputs("}\n", fp);
}

/* ---- the ledger ---- */

static const char *
rel_name(const struct ledger_total *t)
{
	if (t->mixed)
		return "mixed";
	if (t->releases == 0)
		return "none";
	return t->relation == LEDGER_REPLACE_ONE ? "replace_one" : "add_remove";
}

static const char *
raw_name(int raw)
{
	return raw == LEDGER_AGGREGATE ? "aggregate" : raw == LEDGER_ROW_LOCAL ?
	    "row-local" : "none";
}

static void
print_params(FILE *fp, const struct ledger_entry *e, int fmt)
{
	for (size_t k = 0; k < e->params.n; k++) {
		if (fmt == EMIT_JSON) {
			fprintf(fp, "%s", k ? "," : "");
			emit_jstr(fp, e->params.kv[k].key);
			fputc(':', fp);
			emit_jstr(fp, e->params.kv[k].val);
		} else {
			fprintf(fp, "%s", k ? " " : "");
			emit_tstr(fp, e->params.kv[k].key);
			fputc('=', fp);
			emit_tstr(fp, e->params.kv[k].val);
		}
	}
}

static void
text_ledger(FILE *fp, const struct acct_report *r, const struct ledger *l,
    const struct verdict_report *d, size_t nd)
{
	if (nd == 0)
		fprintf(fp, "no datasets: the streams carry no privacy ledger\n");
	for (size_t i = 0; i < nd; i++) {
		const struct ledger_total *t = &d[i].t;

		fprintf(fp, "%sdataset %s\n", i ? "\n" : "", d[i].name);
		fprintf(fp, "  releases        %zu\n", t->releases);
		if (!isfinite(t->epsilon))
			fprintf(fp, "  epsilon         none\n");
		else if (t->norders > 0 && t->eps_basic > 0)
			fprintf(fp, "  epsilon         %.6g at delta %g (RDP %.6g at "
			    "order %g, %s conversion, + %.6g by basic "
			    "composition)\n", t->epsilon, r->delta, t->eps_rdp,
			    t->order, conv_name(r->conv), t->eps_basic);
		else if (t->norders > 0)
			fprintf(fp, "  epsilon         %.6g at delta %g (RDP order %g, "
			    "%s conversion)\n", t->epsilon, r->delta, t->order,
			    conv_name(r->conv));
		else
			fprintf(fp, "  epsilon         %.6g at delta %g\n", t->epsilon,
			    r->delta);
		if (t->delta_extra > 0)
			fprintf(fp, "  releases' delta %g (the RDP curve is converted "
			    "at delta %g)\n", t->delta_extra, t->delta_rdp);
		fprintf(fp, "  neighbours      %s\n", rel_name(t));
		fprintf(fp, "  seeded          %s\n", t->seeded ? "yes" : "no");
		fprintf(fp, "  raw-derived     %s\n", t->raw ? raw_name(t->raw) :
		    "no");
		fprintf(fp, "  data-dependent  %s\n", t->data_dependent ? "yes" :
		    "no");
		if (t->assumed_raw)
			fprintf(fp, "  assumed raw     yes (declared by the user: "
			    "--assume-raw)\n");
		if (d[i].public)
			fprintf(fp, "  public          yes (declared by the user)\n");
		if (d[i].has_dd)
			fprintf(fp, "  data-dependent epsilon %.6g at delta %g (order %g, "
			    "sanitised with smooth sensitivity; not a "
			    "guarantee)\n", d[i].eps_dd, r->delta, d[i].order_dd);
		fprintf(fp, "  verdict         ");
		emit_tstr(fp, d[i].why);
		fputc('\n', fp);
		if (!r->verbose)
			continue;
		for (size_t k = 0; k < l->n; k++) {
			const struct ledger_entry *e = &l->e[k];
			double order, eps;

			if (strcmp(e->dataset, d[i].name) != 0)
				continue;
			eps = verdict_entry_epsilon(r->vp, e, &order);
			fprintf(fp, "  release %.*s  ", ID_SHOWN, e->id);
			emit_tstr(fp, e->tool[0] ? e->tool : "-");
			fprintf(fp, "  ");
			emit_tstr(fp, e->mechanism);
			fprintf(fp, "  %s%s%s  epsilon %.6g alone  ",
			    e->relation == LEDGER_REPLACE_ONE ? "replace_one" :
			    "add_remove", e->seeded ? ", seeded" : "",
			    e->data_dependent ? ", data-dependent" : "", eps);
			print_params(fp, e, EMIT_TEXT);
			fputc('\n', fp);
		}
	}
}

static void
tsv_ledger(FILE *fp, const struct acct_report *r, const struct ledger *l,
    const struct verdict_report *d, size_t nd)
{
	fprintf(fp, "dataset\treleases\tepsilon\torder\tdelta\tdelta_extra\t"
	    "neighbours\tseeded\traw\tdata_dependent\tverdict\twhy\t"
	    "epsilon_data_dependent\torder_data_dependent\tpublic\t"
	    "assumed_raw\n");
	for (size_t i = 0; i < nd; i++) {
		const struct ledger_total *t = &d[i].t;

		fprintf(fp, "%s\t%zu\t", d[i].name, t->releases);
		emit_num(fp, EMIT_TSV, t->epsilon);
		fputc('\t', fp);
		emit_num(fp, EMIT_TSV, t->order);
		fputc('\t', fp);
		emit_num(fp, EMIT_TSV, r->delta);
		fputc('\t', fp);
		emit_num(fp, EMIT_TSV, t->delta_extra);
		fprintf(fp, "\t%s\t%d\t%s\t%d\t%s\t", rel_name(t), t->seeded,
		    raw_name(t->raw), t->data_dependent,
		    verdict_name(d[i].verdict));
		emit_tstr(fp, d[i].why);
		fputc('\t', fp);
		if (d[i].has_dd) {
			emit_num(fp, EMIT_TSV, d[i].eps_dd);
			fputc('\t', fp);
			emit_num(fp, EMIT_TSV, d[i].order_dd);
		} else {
			fputs("-\t-", fp);
		}
		fprintf(fp, "\t%d\t%d\n", d[i].public, t->assumed_raw);
	}
	if (!r->verbose)
		return;
	fprintf(fp, "\ndataset\tid\ttool\tmechanism\tneighbours\tseeded\t"
	    "data_dependent\tepsilon\torder\tdelta\tparams\n");
	for (size_t i = 0; i < nd; i++)
		for (size_t k = 0; k < l->n; k++) {
			const struct ledger_entry *e = &l->e[k];
			double order, eps;

			if (strcmp(e->dataset, d[i].name) != 0)
				continue;
			eps = verdict_entry_epsilon(r->vp, e, &order);
			fprintf(fp, "%s\t%s\t", e->dataset, e->id);
			emit_tstr(fp, e->tool);
			fputc('\t', fp);
			emit_tstr(fp, e->mechanism);
			fprintf(fp, "\t%s\t%d\t%d\t", e->relation == LEDGER_REPLACE_ONE ?
			    "replace_one" : "add_remove", e->seeded,
			    e->data_dependent);
			emit_num(fp, EMIT_TSV, eps);
			fputc('\t', fp);
			emit_num(fp, EMIT_TSV, order);
			fputc('\t', fp);
			emit_num(fp, EMIT_TSV, e->delta);
			fputc('\t', fp);
			print_params(fp, e, EMIT_TSV);
			fputc('\n', fp);
		}
}

static void
json_ledger(FILE *fp, const struct acct_report *r, const struct ledger *l,
    const struct verdict_report *d, size_t nd)
{
	int first = 1;

	fputc('{', fp);
	emit_jnum(fp, &first, "delta", r->delta);
	emit_jkey(fp, &first, "conversion");
	emit_jstr(fp, conv_name(r->conv));
	if (r->vp->have_budget)
		emit_jnum(fp, &first, "budget", r->vp->budget);
	emit_jkey(fp, &first, "datasets");
	fputc('[', fp);
	for (size_t i = 0; i < nd; i++) {
		const struct ledger_total *t = &d[i].t;
		int f = 1;

		fprintf(fp, "%s{", i ? "," : "");
		emit_jkey(fp, &f, "dataset");
		emit_jstr(fp, d[i].name);
		emit_jkey(fp, &f, "releases");
		fprintf(fp, "%zu", t->releases);
		emit_jnum(fp, &f, "epsilon", t->epsilon);
		emit_jnum(fp, &f, "order", t->order);
		emit_jnum(fp, &f, "eps_rdp", t->eps_rdp);
		emit_jnum(fp, &f, "eps_basic", t->eps_basic);
		emit_jnum(fp, &f, "delta_extra", t->delta_extra);
		emit_jkey(fp, &f, "neighbours");
		emit_jstr(fp, rel_name(t));
		emit_jkey(fp, &f, "seeded");
		fputs(t->seeded ? "true" : "false", fp);
		emit_jkey(fp, &f, "raw");
		if (t->raw)
			emit_jstr(fp, raw_name(t->raw));
		else
			fputs("null", fp);
		emit_jkey(fp, &f, "data_dependent");
		fputs(t->data_dependent ? "true" : "false", fp);
		emit_jkey(fp, &f, "verdict");
		emit_jstr(fp, verdict_name(d[i].verdict));
		emit_jkey(fp, &f, "why");
		emit_jstr(fp, d[i].why);
		if (d[i].has_dd) {
			emit_jnum(fp, &f, "epsilon_data_dependent",
			    d[i].eps_dd);
			emit_jnum(fp, &f, "order_data_dependent",
			    d[i].order_dd);
		}
		emit_jkey(fp, &f, "public");
		fputs(d[i].public ? "true" : "false", fp);
		emit_jkey(fp, &f, "assumed_raw");
		fputs(t->assumed_raw ? "true" : "false", fp);
		if (r->verbose) {
			int n = 0;

			emit_jkey(fp, &f, "release_list");
			fputc('[', fp);
			for (size_t k = 0; k < l->n; k++) {
				const struct ledger_entry *e = &l->e[k];
				double order, eps;
				int g = 1;

				if (strcmp(e->dataset, d[i].name) != 0)
					continue;
				eps = verdict_entry_epsilon(r->vp, e, &order);
				fprintf(fp, "%s{", n++ ? "," : "");
				emit_jkey(fp, &g, "id");
				emit_jstr(fp, e->id);
				emit_jkey(fp, &g, "tool");
				emit_jstr(fp, e->tool);
				emit_jkey(fp, &g, "mechanism");
				emit_jstr(fp, e->mechanism);
				emit_jkey(fp, &g, "neighbours");
				emit_jstr(fp, e->relation == LEDGER_REPLACE_ONE ?
				    "replace_one" : "add_remove");
				emit_jkey(fp, &g, "seeded");
				fputs(e->seeded ? "true" : "false", fp);
				emit_jkey(fp, &g, "data_dependent");
				fputs(e->data_dependent ? "true" : "false",
				    fp);
				emit_jnum(fp, &g, "epsilon", eps);
				emit_jnum(fp, &g, "order", order);
				emit_jnum(fp, &g, "delta", e->delta);
				emit_jkey(fp, &g, "params");
				fputc('{', fp);
				print_params(fp, e, EMIT_JSON);
				fputs("}}", fp);
			}
			fputc(']', fp);
		}
		fputc('}', fp);
	}
	fputs("]}\n", fp);
}

void
acct_report_events(FILE *fp, const struct acct_report *r,
    const struct account_result *res)
{
	if (r->format == EMIT_TEXT)
		text_events(fp, r, res);
	else if (r->format == EMIT_TSV)
		tsv_events(fp, r, res);
	else
		json_events(fp, r, res);
}

void
acct_report_ledger(FILE *fp, const struct acct_report *r,
    const struct ledger *l, const struct verdict_report *d, size_t nd)
{
	if (r->format == EMIT_TEXT)
		text_ledger(fp, r, l, d, nd);
	else if (r->format == EMIT_TSV)
		tsv_ledger(fp, r, l, d, nd);
	else
		json_ledger(fp, r, l, d, nd);
}
