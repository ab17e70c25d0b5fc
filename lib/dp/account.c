/* account.c: DP events, their RDP composition and inverse queries
 * (account.h). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "account.h"
#include "pld.h"
#include "pverr.h"

static const struct {
	const char *name;
	unsigned allowed;
} kinds[] = {
	[ACCOUNT_SGM] = { "sgm", ACCOUNT_P_Q | ACCOUNT_P_SIGMA |
	    ACCOUNT_P_STEPS | ACCOUNT_P_EPS | ACCOUNT_P_SOLVE | ACCOUNT_P_PLD },
	[ACCOUNT_GAUSSIAN] = { "gaussian", ACCOUNT_P_SIGMA | ACCOUNT_P_SENS |
	    ACCOUNT_P_COUNT | ACCOUNT_P_EPS | ACCOUNT_P_SOLVE |
	    ACCOUNT_P_ANALYTIC },
	[ACCOUNT_LAPLACE] = { "laplace", ACCOUNT_P_SCALE | ACCOUNT_P_SENS |
	    ACCOUNT_P_COUNT },
	[ACCOUNT_LNMAX] = { "pate-lnmax", ACCOUNT_P_GAMMA | ACCOUNT_P_QUERIES |
	    ACCOUNT_P_COUNTS | ACCOUNT_P_DDEP },
	[ACCOUNT_GNMAX] = { "pate-gnmax", ACCOUNT_P_SIGMA | ACCOUNT_P_QUERIES |
	    ACCOUNT_P_COUNTS | ACCOUNT_P_DDEP },
};

static const char *const solves[] = { "sigma", "steps", "q" };

void
account_event_init(struct account_event *e, int kind)
{
	memset(e, 0, sizeof *e);
	e->kind = kind;
	e->sens = 1;
	e->count = 1;
}

void
account_event_free(struct account_event *e)
{
	rdp_acct_free(e->acct);
	free(e->votes);
	free(e->qoff);
	e->acct = NULL;
	e->votes = NULL;
	e->qoff = NULL;
}

void
account_result_free(struct account_result *r)
{
	rdp_acct_free(r->total);
	free(r->orders);
	free(r->tmp);
	r->total = NULL;
	r->orders = NULL;
	r->tmp = NULL;
}

const char *
account_kind_name(int kind)
{
	return kind >= 0 && kind < ACCOUNT_NKINDS ? kinds[kind].name : "?";
}

int
account_kind(const char *name)
{
	for (int i = 0; i < ACCOUNT_NKINDS; i++)
		if (strcmp(name, kinds[i].name) == 0)
			return i;
	return -1;
}

int
account_kind_allows(int kind, unsigned bit)
{
	return kind >= 0 && kind < ACCOUNT_NKINDS &&
	    (kinds[kind].allowed & bit) != 0;
}

const char *
account_solve_name(int solve)
{
	return solve >= ACCOUNT_SOLVE_SIGMA && solve <= ACCOUNT_SOLVE_Q ?
	    solves[solve - ACCOUNT_SOLVE_SIGMA] : "none";
}

static const char *
msg(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static const char *
msg(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return buf;
}

const char *
account_check_event(const struct account_event *e, size_t nev, char *buf,
    size_t len)
{
	const char *k = account_kind_name(e->kind);
	unsigned g = e->given;
	const unsigned qss = ACCOUNT_P_Q | ACCOUNT_P_SIGMA | ACCOUNT_P_STEPS;

	if (e->kind < 0 || e->kind >= ACCOUNT_NKINDS)
		return msg(buf, len, "unknown event kind %d", e->kind);
	if (g & (ACCOUNT_P_EPS | ACCOUNT_P_SOLVE)) {
		unsigned need;

		if (!(g & ACCOUNT_P_EPS) || !(g & ACCOUNT_P_SOLVE))
			return msg(buf, len, "'%s': --epsilon and --solve go "
			    "together", k);
		if (nev > 1)
			return msg(buf, len, "'%s': --solve works on a single "
			    "event, not a composition", k);
		if (e->kind == ACCOUNT_GAUSSIAN &&
		    e->solve != ACCOUNT_SOLVE_SIGMA)
			return msg(buf, len, "'gaussian': only --solve sigma is "
			    "supported");
		need = e->kind == ACCOUNT_GAUSSIAN ? 0 : qss &
		    ~(unsigned)(e->solve == ACCOUNT_SOLVE_SIGMA ?
		    ACCOUNT_P_SIGMA : e->solve == ACCOUNT_SOLVE_STEPS ?
		    ACCOUNT_P_STEPS : ACCOUNT_P_Q);
		if (e->kind == ACCOUNT_GAUSSIAN && (g & ACCOUNT_P_SIGMA))
			return msg(buf, len, "'gaussian --solve sigma' takes no "
			    "--sigma");
		if (e->kind == ACCOUNT_SGM && (g & qss) != need)
			return msg(buf, len, "'sgm --solve %s' needs exactly the "
			    "other two of --q, --sigma and --steps",
			    account_solve_name(e->solve));
		return NULL;
	}
	if ((g & ACCOUNT_P_ANALYTIC))
		return msg(buf, len, "'%s': --analytic applies to --solve "
		    "sigma; the analytic epsilon is always printed", k);
	switch (e->kind) {
	case ACCOUNT_SGM:
		if ((g & qss) != qss)
			return msg(buf, len, "'sgm' needs --q, --sigma and "
			    "--steps");
		break;
	case ACCOUNT_GAUSSIAN:
		if (!(g & ACCOUNT_P_SIGMA))
			return msg(buf, len, "'gaussian' needs --sigma");
		break;
	case ACCOUNT_LAPLACE:
		if (!(g & ACCOUNT_P_SCALE))
			return msg(buf, len, "'laplace' needs --scale");
		break;
	default:
		if (!(g & (e->kind == ACCOUNT_LNMAX ? ACCOUNT_P_GAMMA :
		    ACCOUNT_P_SIGMA)))
			return msg(buf, len, "'%s' needs %s", k,
			    e->kind == ACCOUNT_LNMAX ? "--gamma" : "--sigma");
		if ((g & ACCOUNT_P_COUNTS) && !(g & ACCOUNT_P_DDEP))
			return msg(buf, len, "'%s': --counts gives a "
			    "data-dependent bound, which is not private by "
			    "itself; say --data-dependent to get it anyway", k);
		if ((g & ACCOUNT_P_DDEP) && !(g & ACCOUNT_P_COUNTS))
			return msg(buf, len, "'%s': --data-dependent needs "
			    "--counts", k);
		if ((g & ACCOUNT_P_COUNTS) && (g & ACCOUNT_P_QUERIES))
			return msg(buf, len, "'%s': --queries and --counts "
			    "exclude each other (the queries are the lines of "
			    "the file)", k);
		if (!(g & (ACCOUNT_P_COUNTS | ACCOUNT_P_QUERIES)))
			return msg(buf, len, "'%s' needs --queries", k);
	}
	return NULL;
}

/* ---- order lists ---- */

/* The named grids (rdp-account.1 lists them); *o NULL if name is none of
 * them.  @return 0 or PV_E_NOMEM. */
static int
named_orders(const char *name, double **out, size_t *n)
{
	double *o;
	size_t k = 0;

	*out = NULL;
	if (strcmp(name, "default") == 0) {
		const double *d = rdp_default_orders(n);
		if ((o = malloc(*n * sizeof *o)) == NULL)
			return PV_E_NOMEM;
		memcpy(o, d, *n * sizeof *o);
		*out = o;
		return 0;
	}
	if (strcmp(name, "opacus") == 0) {
		/* Opacus RDPAccountant.DEFAULT_ALPHAS: 1.1 .. 10.9, 12 .. 63. */
		if ((o = malloc(151 * sizeof *o)) == NULL)
			return PV_E_NOMEM;
		for (int x = 1; x < 100; x++)
			o[k++] = 1 + x / 10.0;
		for (int a = 12; a < 64; a++)
			o[k++] = a;
		*n = k;
		*out = o;
		return 0;
	}
	if (strcmp(name, "pate") == 0) {
		/* Papernot et al. 2018's analysis: numpy arange(2, 101, .5)
		 * then logspace(2, log10(500), 100), computed as numpy does
		 * (10 ** (start + i step), the last point exactly the stop),
		 * so that results match its published scripts bit for bit. */
		double start = 2.0, stop = log10(500.0), step = (stop - start) / 99;
		if ((o = malloc((198 + 100) * sizeof *o)) == NULL)
			return PV_E_NOMEM;
		for (int j = 0; 2 + 0.5 * j < 101; j++)
			o[k++] = 2 + 0.5 * j;
		for (int i = 0; i < 100; i++)
			o[k++] = pow(10.0, i == 99 ? stop : i * step + start);
		*n = k;
		*out = o;
	}
	return 0;
}

int
account_orders(const char *arg, double **out, size_t *n, const char **why)
{
	double *o;
	const char *s = arg;
	size_t cap = 1, k = 0;
	int rc;

	*why = NULL;
	if ((rc = named_orders(arg, out, n)) != 0 || *out != NULL)
		return rc;
	for (const char *p = arg; *p; p++)
		cap += *p == ',';
	if (cap > RDP_MAX_ORDERS)
		return PV_E_LIMIT;
	if ((o = malloc(cap * sizeof *o)) == NULL)
		return PV_E_NOMEM;
	for (;;) {
		char *end;

		errno = 0;
		o[k] = strtod(s, &end);
		if (end == s || (*end != ',' && *end != '\0')) {
			free(o);
			return PV_E_FORMAT;
		}
		if (errno == ERANGE || !isfinite(o[k])) {
			free(o);
			return PV_E_RANGE;
		}
		k++;
		if (*end == '\0')
			break;
		s = end + 1;
	}
	if ((*why = rdp_check_orders(o, k)) != NULL) {
		free(o);
		return PV_E_RANGE;
	}
	*out = o;
	*n = k;
	return 0;
}

/* ---- vote histograms ---- */

static int
grow(void *pp, size_t *cap, size_t need, size_t size)
{
	void **p = pp, *q;
	size_t c = *cap;

	if (need <= c)
		return 0;
	while (c < need)
		c = c ? 2 * c : 1024;
	if (c > SIZE_MAX / size || (q = realloc(*p, c * size)) == NULL)
		return PV_E_NOMEM;
	*p = q;
	*cap = c;
	return 0;
}

int
account_read_counts(FILE *fp, struct account_event *e, uint64_t *lineno,
    char *err, size_t errlen)
{
	char *line = NULL;
	size_t cap = 0, nv = 0, vcap = 0, nq = 0, qcap = 0;
	ssize_t len;
	int rc = 0;

	*lineno = 0;
	err[0] = '\0';
	if ((rc = grow(&e->qoff, &qcap, 1, sizeof *e->qoff)) != 0)
		return rc;
	e->qoff[0] = 0;
	while ((len = getline(&line, &cap, fp)) >= 0) {
		char *s = line, *end;
		size_t k = 0;

		++*lineno;
		while (len > 0 && (line[len - 1] == '\n' ||
		    line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len == 0) {
			msg(err, errlen, "empty line (one vote histogram per "
			    "line)");
			rc = PV_E_FORMAT;
			goto out;
		}
		if (memchr(line, '\0', (size_t)len) != NULL) {
			msg(err, errlen, "a NUL byte in the line");
			rc = PV_E_FORMAT;
			goto out;
		}
		for (;;) {
			double v = 0;
			int digits = 0;

			while (*s == ' ' || *s == '\t')
				s++;
			/* Decimal digits only: no sign, fraction, exponent,
			 * hex, inf or nan (a vote count is a count). */
			for (end = s; *end >= '0' && *end <= '9'; end++) {
				v = v * 10 + (*end - '0');
				digits = 1;
			}
			if (!digits || *end == '.' || *end == 'e' ||
			    *end == 'E' || *end == 'x' || *end == 'X') {
				if (digits || *s == '-' || *s == '+' ||
				    *s == '.')
					msg(err, errlen, "field %zu: a vote "
					    "count is an integer >= 0 in "
					    "decimal", k + 1);
				else
					msg(err, errlen, "field %zu is not a "
					    "number", k + 1);
				rc = PV_E_FORMAT;
				goto out;
			}
			if (v > ACCOUNT_MAX_VOTES) {
				msg(err, errlen, "field %zu: a vote count is at "
				    "most %.0f", k + 1, ACCOUNT_MAX_VOTES);
				rc = PV_E_FORMAT;
				goto out;
			}
			while (*end == ' ' || *end == '\t')
				end++;
			if (*end != ',' && *end != '\0') {
				msg(err, errlen, "field %zu is not a number",
				    k + 1);
				rc = PV_E_FORMAT;
				goto out;
			}
			if (++k > ACCOUNT_MAX_CLASSES) {
				msg(err, errlen, "more than %u classes",
				    ACCOUNT_MAX_CLASSES);
				rc = PV_E_FORMAT;
				goto out;
			}
			if ((rc = grow(&e->votes, &vcap, nv + 1,
			    sizeof *e->votes)) != 0)
				goto out;
			e->votes[nv++] = v;
			if (*end == '\0')
				break;
			s = end + 1;
		}
		if (k < 2) {
			msg(err, errlen, "a vote histogram needs at least 2 "
			    "classes");
			rc = PV_E_FORMAT;
			goto out;
		}
		if (nq > 0 && k != e->qoff[1]) {
			msg(err, errlen, "%zu classes, but line 1 has %zu (one "
			    "class count for the whole file)", k, e->qoff[1]);
			rc = PV_E_FORMAT;
			goto out;
		}
		if ((rc = grow(&e->qoff, &qcap, nq + 2, sizeof *e->qoff)) != 0)
			goto out;
		e->qoff[++nq] = nv;
	}
	if (ferror(fp)) {
		rc = PV_E_IO;
		goto out;
	}
	if (nq == 0) {
		*lineno = 0;
		msg(err, errlen, "no vote histograms");
		rc = PV_E_FORMAT;
		goto out;
	}
	e->queries = nq;
out:
	{
		int saved = errno;
		free(line);
		errno = saved;
	}
	return rc;
}

/* ---- computing ---- */

/* The per-query RDP curve of a PATE event, summed over its queries. */
static void
pate_curve(const struct account_event *e, const double *orders, size_t n,
    double *curve)
{
	int lap = e->kind == ACCOUNT_LNMAX;

	for (size_t j = 0; j < n; j++)
		curve[j] = 0;
	if (!e->data_dependent) {
		for (size_t j = 0; j < n; j++)
			curve[j] = lap ? rdp_pate_lnmax(orders[j], 1 / e->gamma) :
			    rdp_pate_gnmax(orders[j], e->sigma);
		return;
	}
	for (uint64_t i = 0; i < e->queries; i++) {
		const double *c = e->votes + e->qoff[i];
		size_t k = e->qoff[i + 1] - e->qoff[i];
		/* Papernot et al. 2018: Prop. 7 (LNMax, Laplace scale
		 * 1/gamma, pure 2 gamma-DP) with Prop. 8, and Thm. 6 with
		 * Prop. 10 (GNMax). */
		double lq = lap ? rdp_pate_logq_laplace(c, k, 1 / e->gamma) :
		    rdp_pate_logq_gaussian(c, k, e->sigma);

		for (size_t j = 0; j < n; j++)
			curve[j] += lap ? rdp_pate_pure_dep(orders[j], lq,
			    2 * e->gamma) :
			    rdp_pate_gnmax_dep(orders[j], lq, e->sigma);
	}
}

/* One event's own RDP curve and epsilon. */
static int
eval_event(struct account_event *e, struct account_result *r, double delta,
    int conv)
{
	int rc = 0;

	rdp_acct_free(e->acct);
	if ((e->acct = rdp_acct_new(r->orders, r->norders)) == NULL) {
		r->failed = NULL;
		return PV_E_NOMEM;
	}
	switch (e->kind) {
	case ACCOUNT_SGM:
		rc = rdp_acct_add_sgm(e->acct, e->q, e->sigma, e->steps);
		break;
	case ACCOUNT_GAUSSIAN:
		rc = rdp_acct_add_gaussian(e->acct, e->sigma / e->sens,
		    (double)e->count);
		break;
	case ACCOUNT_LAPLACE:
		rc = rdp_acct_add_laplace(e->acct, e->scale / e->sens,
		    (double)e->count);
		break;
	default:
		pate_curve(e, r->orders, r->norders, r->tmp);
		rc = rdp_acct_add_curve(e->acct, r->tmp, e->data_dependent ? 1 :
		    (double)e->queries);
	}
	if (rc != 0) {
		r->failed = account_kind_name(e->kind);
		return rc;
	}
	r->failed = "epsilon";
	return rdp_acct_epsilon(e->acct, delta, conv, &e->eps, &e->order);
}

/* Solve a single event for its solve parameter; PV_E_NOROOT when no
 * value in the searched range reaches the target. */
static int
solve_event(struct account_event *e, struct account_result *r, double delta,
    int conv)
{
	const double *o = r->orders;
	size_t n = r->norders;
	int rc;

	if (e->kind == ACCOUNT_GAUSSIAN) {
		double s;
		/* count releases with noise multiplier s are one release with
		 * s / sqrt(count) (Gaussian DP composes exactly: Dong, Roth
		 * and Su 2022, Cor. 3.3), and RDP is exact for Gaussians, so
		 * the RDP calibration is the SGM one with q = 1. */
		r->failed = "gaussian --solve sigma";
		if (e->analytic)
			rc = rdp_agm_sigma(e->target, delta, &s);
		else
			rc = rdp_sgm_solve_sigma(1, e->count, delta, e->target,
			    o, n, conv, &s);
		if (rc != 0)
			return rc;
		if (e->analytic)
			s *= sqrt((double)e->count);
		e->sigma = s * e->sens;
		return 0;
	}
	r->failed = "sgm --solve";
	switch (e->solve) {
	case ACCOUNT_SOLVE_SIGMA:
		return rdp_sgm_solve_sigma(e->q, e->steps, delta, e->target, o,
		    n, conv, &e->sigma);
	case ACCOUNT_SOLVE_STEPS:
		return rdp_sgm_solve_steps(e->q, e->sigma, delta, e->target, o,
		    n, conv, &e->steps);
	default:
		return rdp_sgm_solve_q(e->sigma, e->steps, delta, e->target, o,
		    n, conv, &e->q);
	}
}

int
account_compute(struct account_event *ev, size_t nev, double delta,
    int conv, struct account_result *r)
{
	double mu2 = 0, pure = 0;
	int all_gauss = 1, all_pure = 1, rc;

	r->failed = NULL;
	rdp_acct_free(r->total);
	if (r->tmp == NULL && (r->tmp = calloc(r->norders ? r->norders : 1,
	    sizeof *r->tmp)) == NULL)
		return PV_E_NOMEM;
	if ((r->total = rdp_acct_new(r->orders, r->norders)) == NULL)
		return PV_E_NOMEM;
	r->data_dependent = 0;
	for (size_t i = 0; i < nev; i++) {
		struct account_event *e = &ev[i];

		if (e->solve != ACCOUNT_SOLVE_NONE &&
		    (rc = solve_event(e, r, delta, conv)) != 0)
			return rc;
		if ((rc = eval_event(e, r, delta, conv)) != 0)
			return rc;
		r->failed = "composition";
		if ((rc = rdp_acct_add_curve(r->total, rdp_acct_curve(e->acct),
		    1)) != 0)
			return rc;
		r->data_dependent |= e->data_dependent;
		if (e->kind == ACCOUNT_GAUSSIAN)
			mu2 += (double)e->count * (e->sens / e->sigma) *
			    (e->sens / e->sigma);
		else
			all_gauss = 0;
		if (e->kind == ACCOUNT_LAPLACE)
			pure += (double)e->count * e->sens / e->scale;
		else if (e->kind == ACCOUNT_LNMAX && !e->data_dependent)
			pure += (double)e->queries * 2 * e->gamma;
		else
			all_pure = 0;
	}
	r->failed = "epsilon";
	if ((rc = rdp_acct_epsilon(r->total, delta, conv, &r->eps,
	    &r->order)) != 0)
		return rc;
	r->eps_analytic = NAN;
	if (all_gauss) {
		/* Gaussian releases compose exactly into one with noise
		 * multiplier 1 / sqrt(sum count (sens / sigma)^2) (Gaussian
		 * DP), whose exact epsilon is Balle and Wang's. */
		rc = rdp_agm_epsilon(1 / sqrt(mu2), delta, &r->eps_analytic);
		if (rc == RDP_E_NOROOT)
			r->eps_analytic = INFINITY;
		else if (rc != 0) {
			r->failed = "analytic Gaussian epsilon";
			return rc;
		}
	}
	r->eps_pure = all_pure ? pure : NAN;
	r->eps_pld = NAN;
	if (nev == 1 && ev[0].kind == ACCOUNT_SGM && ev[0].pld) {
		/* A second, usually tighter bound: the privacy loss
		 * distribution (lib/dp/pld.h); both are valid upper bounds. */
		rc = pld_sgm_epsilon(ev[0].q, ev[0].sigma, ev[0].steps, delta,
		    0, &r->eps_pld);
		if (rc != 0)
			r->eps_pld = NAN;	/* outside PLD's range: RDP only */
	}
	r->failed = NULL;
	return 0;
}
