/* mia-eval: membership inference attacks on a model: attack accuracy and AUC from member and non-member rows. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "la.h"
#include "model.h"
#include "modelcli.h"
#include "nn.h"
#include "tensor.h"
#include "tstream.h"

#define ROWS 1024			/* rows per forward pass */
#define MAX_SHADOWS 256			/* --shadow options */
#define LOGP_MIN (-50.0)		/* attack features: log p clamped */
#define SHADOW_MIN_CLASS 10		/* rows of each kind for a class model */
#define LR_LAMBDA 1e-2			/* L2 penalty of the attack model */
#define LR_ITERS 100			/* Newton steps at most */

enum { ATT_LOSS, ATT_CONFIDENCE, ATT_SHADOW };
enum { REP_TEXT, REP_TSV };
enum { OPT_ATTACK = 256, OPT_MEMBERS, OPT_MODEL, OPT_NONMEMBERS,
	OPT_REPORT_FORMAT, OPT_SCORES, OPT_SHADOW };

struct opts {
	const char *output, *model, *members, *nonmembers, *scores;
	const char *shadow[MAX_SHADOWS];
	size_t nshadow;
	int attack, report_format;
};

/* Rows of one input evaluated by one model: log-probabilities and labels. */
struct evalset {
	const char *label;
	size_t n, k;
	double *logp;			/* n x k, log softmax of the logits */
	int32_t *y;
};

/* One attack model (logistic regression on standardised features). */
struct lrmodel {
	size_t d;			/* features; w has d + 1 entries */
	double *mu, *sd, *w;		/* w[d]: intercept */
};

/* The metrics of one report row; NAN where not applicable. */
struct metrics {
	size_t n1, n0;
	double macc1, macc0;		/* model accuracy on members, others */
	double auc, acc_best, thr_best, acc_half, acc_mean, thr_mean;
	double acc_shadow, thr_shadow;
	int pooled;			/* shadow attack: pooled model used */
};

__attribute__((noreturn)) static void
usage(int status)
{
	FILE *fp = status ? stderr : stdout;

	fputs("usage: mia-eval [-hqV] [-o file] [--attack kind] --members file"
	    "\n"
	    "                --model file --nonmembers file "
	    "[--report-format format]\n"
	    "                [--scores file] [--shadow spec]\n", fp);
	if (status == 0)
		fputs("\n"
		    "  -h, --help             show this help\n"
		    "  -o, --output FILE      write the report to FILE (through a "
		    "temporary file)\n"
		    "  -q, --quiet            no warnings\n"
		    "  -V, --version          show the version\n"
		    "      --attack KIND      loss (default), confidence or "
		    "shadow\n"
		    "      --members FILE     rows the model was trained on (X, y;"
		    " required)\n"
		    "      --model FILE       the model stream to attack "
		    "(required)\n"
		    "      --nonmembers FILE  rows it never saw, same "
		    "distribution (required)\n"
		    "      --report-format F  text (default) or tsv\n"
		    "      --scores FILE      write each row's attack score as "
		    "TSV to FILE\n"
		    "      --shadow SPEC      MODEL:MEMBERS:NONMEMBERS of a "
		    "shadow model (repeatable)\n", fp);
	exit(status);
}

/* ---- inputs ---- */

/* Labels y (i32, i64 or u8, one dimension) read whole, each a class of
 * the model. */
static int32_t *
read_labels(struct ts_reader *r, struct tensor *hdr, const char *label,
    size_t k, size_t *n)
{
	int64_t *v = mcli_read_labels(r, hdr, label, n);
	int32_t *y = cli_reallocarray(NULL, *n ? *n : 1, sizeof *y);

	for (size_t i = 0; i < *n; i++) {
		if (v[i] < 0 || (uint64_t)v[i] >= k)
			cli_die(EX_DATAERR, "%s: tensor 'y': row %zu: label "
			    "%lld outside the model's classes [0, %zu)", label,
			    i, (long long)v[i], k);
		y[i] = (int32_t)v[i];
	}
	free(v);
	return y;
}

/* Apply m to the rows X of a stream and keep their log-probabilities
 * (computed in double from the logits, the largest subtracted) and
 * labels.  The file is opened by the caller (everything is opened before
 * computing). */
static void
eval_rows(const struct nn_model *m, FILE *fp, const char *label,
    struct evalset *s)
{
	struct ts_reader *r = cli_reader(fp, label);
	struct tensor hdr;
	struct nn_ws ws;
	size_t d = model_inputs(m), k = model_classes(m), cap = 0, ny = 0;
	float *xb = cli_reallocarray(NULL, (size_t)ROWS * d, sizeof *xb);
	double *xd = NULL;
	int rc, have_x = 0;

	memset(s, 0, sizeof *s);
	s->label = label;
	s->k = k;
	if (nn_ws_init(&ws, &m->net, ROWS) != 0)
		cli_die(EX_OSERR, "out of memory");
	while ((rc = ts_read_next(r, &hdr)) == 1) {
		if (strcmp(hdr.name, "y") == 0) {
			if (s->y != NULL)
				cli_die(EX_DATAERR, "%s: two tensors 'y'", label);
			s->y = read_labels(r, &hdr, label, k, &ny);
			tensor_free(&hdr);
			continue;
		}
		if (strcmp(hdr.name, "X") != 0) {
			tensor_free(&hdr);
			continue;
		}
		if (have_x)
			cli_die(EX_DATAERR, "%s: two tensors 'X'", label);
		have_x = 1;
		mcli_check_x(&hdr, d, label);
		for (;;) {
			size_t n = mcli_read_rows(r, &hdr, xb, &xd, ROWS, d);
			const float *z;

			if (n == 0)
				break;
			nn_forward(&m->net, m->param, &ws, xb, n);
			z = nn_output(&m->net, &ws);
			if (s->n + n > cap) {
				cap = (s->n + n) * 2;
				s->logp = cli_reallocarray(s->logp, cap,
				    k * sizeof *s->logp);
			}
			for (size_t i = 0; i < n; i++) {
				const float *zi = z + i * k;
				double *lp = s->logp + (s->n + i) * k;
				double mx = zi[0], sum = 0, lse;

				for (size_t j = 0; j < k; j++) {
					if (!isfinite(zi[j]))
						cli_die(EX_DATAERR, "%s: row %zu: "
						    "the model gives a logit "
						    "that is not finite", label,
						    s->n + i);
					if (zi[j] > mx)
						mx = zi[j];
				}
				for (size_t j = 0; j < k; j++)
					sum += exp((double)zi[j] - mx);
				lse = mx + log(sum);
				for (size_t j = 0; j < k; j++)
					lp[j] = (double)zi[j] - lse;
			}
			s->n += n;
		}
		tensor_free(&hdr);
	}
	if (rc < 0)
		cli_rdie(r, rc);
	if (!have_x)
		cli_die(EX_DATAERR, "%s: no tensor 'X'", label);
	if (s->y == NULL)
		cli_die(EX_DATAERR, "%s: no tensor 'y' (the attacks need the "
		    "true labels)", label);
	if (ny != s->n)
		cli_die(EX_DATAERR, "%s: tensor 'y' has %zu rows, 'X' %zu",
		    label, ny, s->n);
	if (s->n == 0)
		cli_die(EX_DATAERR, "%s: tensor 'X' has no rows", label);
	ts_reader_close(r);
	nn_ws_free(&ws);
	free(xb);
	free(xd);
}

static void
evalset_free(struct evalset *s)
{
	free(s->logp);
	free(s->y);
}

/* ---- scores and their statistics ---- */

/* The threshold attacks' score of row i, oriented so that larger means
 * "member": minus the cross-entropy loss, or the largest probability. */
static double
row_score(const struct evalset *s, size_t i, int attack)
{
	const double *lp = s->logp + i * s->k;
	double mx = lp[0];

	if (attack == ATT_LOSS)
		return lp[s->y[i]];
	for (size_t j = 1; j < s->k; j++)
		if (lp[j] > mx)
			mx = lp[j];
	return exp(mx);
}

static int
row_correct(const struct evalset *s, size_t i)
{
	const double *lp = s->logp + i * s->k;
	size_t b = 0;

	for (size_t j = 1; j < s->k; j++)
		if (lp[j] > lp[b])
			b = j;
	return b == (size_t)s->y[i];
}

struct sc {
	double s;
	int member;
};

static int
sc_cmp(const void *a, const void *b)
{
	double x = ((const struct sc *)a)->s, y = ((const struct sc *)b)->s;

	return (x > y) - (x < y);
}

/* A list of scored rows (members and non-members). */
struct sclist {
	struct sc *v;
	size_t n, cap, n1, n0;
};

static void
sc_push(struct sclist *l, double s, int member)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->v = cli_reallocarray(l->v, l->cap, sizeof *l->v);
	}
	l->v[l->n].s = s;
	l->v[l->n++].member = member;
	if (member)
		l->n1++;
	else
		l->n0++;
}

/* Balanced accuracy (TPR + TNR) / 2 of "member iff score >= t". */
static double
bacc_at(const struct sclist *l, double t)
{
	size_t tp = 0, tn = 0;

	if (l->n1 == 0 || l->n0 == 0 || isnan(t))
		return NAN;
	for (size_t i = 0; i < l->n; i++) {
		if (l->v[i].member && l->v[i].s >= t)
			tp++;
		else if (!l->v[i].member && l->v[i].s < t)
			tn++;
	}
	return ((double)tp / (double)l->n1 + (double)tn / (double)l->n0) / 2;
}

/* Sort l, then the AUC (Mann-Whitney: the probability that a member
 * scores above a non-member, ties counted half) and the threshold of the
 * best balanced accuracy on l itself (thresholds at every distinct score;
 * on ties of accuracy the largest threshold; +inf, "nobody is a member",
 * when nothing beats 1/2). */
static void
sc_stats(struct sclist *l, double *auc, double *best, double *thr)
{
	double below0 = 0, sum = 0;
	size_t tp = 0, fp = 0;

	*auc = *best = *thr = NAN;
	if (l->n1 == 0 || l->n0 == 0)
		return;
	qsort(l->v, l->n, sizeof *l->v, sc_cmp);
	for (size_t i = 0; i < l->n;) {
		size_t j = i, c1 = 0, c0 = 0;

		while (j < l->n && l->v[j].s == l->v[i].s) {
			if (l->v[j].member)
				c1++;
			else
				c0++;
			j++;
		}
		sum += (double)c1 * (below0 + 0.5 * (double)c0);
		below0 += (double)c0;
		i = j;
	}
	*auc = sum / ((double)l->n1 * (double)l->n0);
	*best = 0.5;
	*thr = INFINITY;
	for (size_t i = l->n; i > 0;) {
		size_t j = i;
		double a;

		while (j > 0 && l->v[j - 1].s == l->v[i - 1].s) {
			if (l->v[j - 1].member)
				tp++;
			else
				fp++;
			j--;
		}
		a = ((double)tp / (double)l->n1 + 1 - (double)fp /
		    (double)l->n0) / 2;
		if (a > *best) {
			*best = a;
			*thr = l->v[i - 1].s;
		}
		i = j;
	}
}

/* ---- the shadow attack model ---- */

/* Features of row i: its log-probabilities sorted in decreasing order,
 * then the log-probability of its true class, each clamped at LOGP_MIN. */
static int
dbl_desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x < y) - (x > y);
}

static void
features(const struct evalset *s, size_t i, double *f)
{
	const double *lp = s->logp + i * s->k;

	for (size_t j = 0; j < s->k; j++)
		f[j] = lp[j] < LOGP_MIN ? LOGP_MIN : lp[j];
	qsort(f, s->k, sizeof *f, dbl_desc);
	f[s->k] = lp[s->y[i]] < LOGP_MIN ? LOGP_MIN : lp[s->y[i]];
}

static double
sigmoid(double t)
{
	return t >= 0 ? 1 / (1 + exp(-t)) : exp(t) / (1 + exp(t));
}

static double
lr_apply(const struct lrmodel *a, const double *f)
{
	double t = a->w[a->d];

	for (size_t j = 0; j < a->d; j++)
		t += a->w[j] * (f[j] - a->mu[j]) / a->sd[j];
	return sigmoid(t);
}

/* Fit a to the n rows of F (n x d) with membership lab: logistic
 * regression with the two kinds weighted to equal total weight, an L2
 * penalty LR_LAMBDA on the standardised weights (not the intercept), by
 * Newton's method.  @return 0, or -1 when the Hessian is singular. */
static int
lr_fit(struct lrmodel *a, const double *F, const int *lab, size_t n,
    size_t d)
{
	size_t p = d + 1, n1 = 0;
	double *g = cli_calloc(p, sizeof *g), *H = cli_calloc(p * p, sizeof *H);
	double *x = cli_calloc(p, sizeof *x), w1, w0;
	int rc = 0;

	a->d = d;
	a->mu = cli_calloc(d, sizeof *a->mu);
	a->sd = cli_calloc(d, sizeof *a->sd);
	a->w = cli_calloc(p, sizeof *a->w);
	for (size_t i = 0; i < n; i++)
		n1 += lab[i] != 0;
	w1 = (double)n / (2.0 * (double)n1);
	w0 = (double)n / (2.0 * (double)(n - n1));
	for (size_t j = 0; j < d; j++) {
		double m = 0, v = 0;
		for (size_t i = 0; i < n; i++)
			m += F[i * d + j];
		m /= (double)n;
		for (size_t i = 0; i < n; i++)
			v += (F[i * d + j] - m) * (F[i * d + j] - m);
		v = sqrt(v / (double)n);
		a->mu[j] = m;
		a->sd[j] = v > 1e-12 ? v : 1;
	}
	for (int it = 0; it < LR_ITERS; it++) {
		double step = 0;

		memset(g, 0, p * sizeof *g);
		memset(H, 0, p * p * sizeof *H);
		for (size_t i = 0; i < n; i++) {
			double q, wi = lab[i] ? w1 : w0, r, c;

			for (size_t j = 0; j < d; j++)
				x[j] = (F[i * d + j] - a->mu[j]) / a->sd[j];
			x[d] = 1;
			q = lr_apply(a, F + i * d);
			r = wi * (q - (lab[i] ? 1 : 0));
			c = wi * q * (1 - q);
			for (size_t j = 0; j < p; j++) {
				g[j] += r * x[j];
				for (size_t l = j; l < p; l++)
					H[j * p + l] += c * x[j] * x[l];
			}
		}
		for (size_t j = 0; j < d; j++) {
			g[j] += LR_LAMBDA * (double)n * a->w[j];
			H[j * p + j] += LR_LAMBDA * (double)n;
		}
		H[d * p + d] += 1e-9 * (double)n;
		if (la_chol(p, H) != 0) {
			rc = -1;
			break;
		}
		/* Solve U^T U delta = g: forward, then back substitution. */
		for (size_t j = 0; j < p; j++) {
			double t = g[j];
			for (size_t l = 0; l < j; l++)
				t -= H[l * p + j] * x[l];
			x[j] = t / H[j * p + j];
		}
		for (size_t j = p; j-- > 0;) {
			double t = x[j];
			for (size_t l = j + 1; l < p; l++)
				t -= H[j * p + l] * x[l];
			x[j] = t / H[j * p + j];
		}
		for (size_t j = 0; j < p; j++) {
			a->w[j] -= x[j];
			step = fmax(step, fabs(x[j]));
		}
		if (step < 1e-10)
			break;
	}
	free(g);
	free(H);
	free(x);
	return rc;
}

static void
lr_free(struct lrmodel *a)
{
	free(a->mu);
	free(a->sd);
	free(a->w);
}

/* ---- the report ---- */

static void
put_num(FILE *fp, int format, double v, int width)
{
	if (format == REP_TSV) {
		if (isnan(v))
			fputs("\t-", fp);
		else
			fprintf(fp, "\t%.6g", v);
	} else if (isnan(v)) {
		fprintf(fp, " %*s", width, "-");
	} else {
		fprintf(fp, " %*.4f", width, v);
	}
}

static void
report_row(FILE *fp, int format, const char *attack, const char *cls,
    const struct metrics *r)
{
	if (format == REP_TSV)
		fprintf(fp, "%s\t%s\t%zu\t%zu", attack, cls, r->n1, r->n0);
	else
		fprintf(fp, "%-5s %8zu %8zu", cls, r->n1, r->n0);
	put_num(fp, format, r->macc1, 7);
	put_num(fp, format, r->macc0, 7);
	put_num(fp, format, r->auc, 6);
	put_num(fp, format, r->acc_best, 6);
	put_num(fp, format, r->acc_half, 6);
	put_num(fp, format, r->acc_mean, 6);
	put_num(fp, format, r->acc_shadow, 6);
	if (format == REP_TSV) {
		put_num(fp, format, r->thr_best, 0);
		put_num(fp, format, r->thr_mean, 0);
		put_num(fp, format, r->thr_shadow, 0);
	} else if (r->pooled) {
		fputs("  (pooled attack model)", fp);
	}
	fputc('\n', fp);
}

/* ---- main ---- */

struct shadow {
	struct nn_model m;
	char *spec;			/* owns paths[] */
	const char *paths[3];
	FILE *fp[2];
	const char *label[2];
	struct evalset s[2];		/* members, non-members */
};

/* Scores of the shadow models' rows of class cls (-1: all) into l, with
 * the threshold attack's score. */
static void
shadow_scores(const struct shadow *sh, size_t nsh, int attack, long cls,
    struct sclist *l)
{
	for (size_t h = 0; h < nsh; h++)
		for (int k = 0; k < 2; k++)
			for (size_t i = 0; i < sh[h].s[k].n; i++)
				if (cls < 0 || sh[h].s[k].y[i] == cls)
					sc_push(l, row_score(&sh[h].s[k], i,
					    attack), k == 0);
}

/* Fit the attack model of class cls (-1: all classes) on the shadow
 * rows.  @return 0, or -1 when there are fewer than SHADOW_MIN_CLASS
 * rows of either kind (or the fit fails). */
static int
shadow_fit(struct lrmodel *a, const struct shadow *sh, size_t nsh, long cls,
    size_t k)
{
	size_t n = 0, cap = 0, n1 = 0, d = k + 1;
	double *F = NULL;
	int *lab = NULL, rc;

	for (size_t h = 0; h < nsh; h++)
		for (int s = 0; s < 2; s++)
			for (size_t i = 0; i < sh[h].s[s].n; i++) {
				if (cls >= 0 && sh[h].s[s].y[i] != cls)
					continue;
				if (n == cap) {
					cap = cap ? 2 * cap : 256;
					F = cli_reallocarray(F, cap,
					    d * sizeof *F);
					lab = cli_reallocarray(lab, cap,
					    sizeof *lab);
				}
				features(&sh[h].s[s], i, F + n * d);
				lab[n++] = s == 0;
				n1 += s == 0;
			}
	memset(a, 0, sizeof *a);
	if (n1 < SHADOW_MIN_CLASS || n - n1 < SHADOW_MIN_CLASS)
		rc = -1;
	else
		rc = lr_fit(a, F, lab, n, d);
	free(F);
	free(lab);
	return rc;
}

int
main(int argc, char **argv)
{
	static const char *const attacks[] = { "loss", "confidence", "shadow",
	    NULL };
	static const char *const formats[] = { "text", "tsv", NULL };
	static const struct option longopts[] = {
		{ "attack", required_argument, NULL, OPT_ATTACK },
		{ "help", no_argument, NULL, 'h' },
		{ "members", required_argument, NULL, OPT_MEMBERS },
		{ "model", required_argument, NULL, OPT_MODEL },
		{ "nonmembers", required_argument, NULL, OPT_NONMEMBERS },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "report-format", required_argument, NULL, OPT_REPORT_FORMAT },
		{ "scores", required_argument, NULL, OPT_SCORES },
		{ "shadow", required_argument, NULL, OPT_SHADOW },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct opts o = { .attack = ATT_LOSS };
	struct nn_model m;
	struct shadow *sh = NULL;
	struct evalset set[2];
	struct lrmodel pooled, *cm = NULL;
	int *has_cm = NULL;
	FILE *in[2], *ofp, *sfp = NULL;
	const char *mlabel, *label[2];
	double *score[2];
	size_t K;
	int ch;

	cli_init(argv[0], argc, argv);
	while ((ch = getopt_long(argc, argv, "ho:qV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			usage(0);
		case 'o':
			o.output = optarg;
			break;
		case 'q':
			cli_set_quiet(1);
			break;
		case 'V':
			cli_version();
		case OPT_ATTACK:
			o.attack = cli_choice("--attack", optarg, attacks);
			break;
		case OPT_MEMBERS:
			o.members = optarg;
			break;
		case OPT_MODEL:
			o.model = optarg;
			break;
		case OPT_NONMEMBERS:
			o.nonmembers = optarg;
			break;
		case OPT_REPORT_FORMAT:
			o.report_format = cli_choice("--report-format", optarg,
			    formats);
			break;
		case OPT_SCORES:
			o.scores = optarg;
			break;
		case OPT_SHADOW:
			if (o.nshadow == MAX_SHADOWS)
				cli_usage_error("more than %d --shadow options",
				    MAX_SHADOWS);
			o.shadow[o.nshadow++] = optarg;
			break;
		default:
			usage(EX_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc > 0)
		cli_usage_error("no operands expected (inputs are named "
		    "options)");
	if (o.model == NULL)
		cli_usage_error("--model is required");
	if (o.members == NULL)
		cli_usage_error("--members is required");
	if (o.nonmembers == NULL)
		cli_usage_error("--nonmembers is required");
	if (o.attack == ATT_SHADOW && o.nshadow == 0)
		cli_usage_error("--attack shadow needs at least one --shadow");
	if (strcmp(o.members, "-") == 0 && strcmp(o.nonmembers, "-") == 0)
		cli_usage_error("--members and --nonmembers cannot both be "
		    "the standard input");

	/* Open everything before computing. */
	sh = cli_calloc(o.nshadow ? o.nshadow : 1, sizeof *sh);
	for (size_t h = 0; h < o.nshadow; h++) {
		char *p = sh[h].spec = cli_strdup(o.shadow[h]);

		for (int f = 0; f < 3; f++) {
			char *c = strchr(p, ':');
			if ((f < 2) != (c != NULL))
				cli_usage_error("invalid --shadow '%s': expected "
				    "MODEL:MEMBERS:NONMEMBERS", o.shadow[h]);
			if (c != NULL)
				*c = '\0';
			if (*p == '\0')
				cli_usage_error("invalid --shadow '%s': an empty "
				    "file name", o.shadow[h]);
			sh[h].paths[f] = p;
			if (c != NULL)
				p = c + 1;
		}
	}
	mcli_read_model(o.model, &m, NULL, NULL, &mlabel);
	K = model_classes(&m);
	in[0] = cli_open_in(o.members, &label[0]);
	in[1] = cli_open_in(o.nonmembers, &label[1]);
	for (size_t h = 0; h < o.nshadow; h++) {
		mcli_read_model(sh[h].paths[0], &sh[h].m, NULL, NULL,
		    &mlabel);
		if (model_classes(&sh[h].m) != K)
			cli_die(EX_DATAERR, "%s: the shadow model has %zu classes, "
			    "the model %zu", sh[h].paths[0],
			    model_classes(&sh[h].m), K);
		for (int k = 0; k < 2; k++)
			sh[h].fp[k] = cli_open_in(sh[h].paths[k + 1],
			    &sh[h].label[k]);
	}
	ofp = cli_out_open(o.output, 1);
	if (o.scores != NULL)
		sfp = cli_out_open_path(o.scores);

	for (int k = 0; k < 2; k++)
		eval_rows(&m, in[k], label[k], &set[k]);
	for (size_t h = 0; h < o.nshadow; h++)
		for (int k = 0; k < 2; k++)
			eval_rows(&sh[h].m, sh[h].fp[k], sh[h].label[k],
			    &sh[h].s[k]);

	/* The attack models of the shadow attack: one per class, trained on
	 * the shadow models' rows of that class (Shokri et al. 2017), and a
	 * pooled one for classes with too few rows. */
	if (o.attack == ATT_SHADOW) {
		if (shadow_fit(&pooled, sh, o.nshadow, -1, K) != 0)
			cli_die(EX_DATAERR, "the shadow models' rows cannot train "
			    "an attack model: at least %d members and %d "
			    "non-members with a non-singular fit are needed",
			    SHADOW_MIN_CLASS, SHADOW_MIN_CLASS);
		cm = cli_calloc(K, sizeof *cm);
		has_cm = cli_calloc(K, sizeof *has_cm);
		for (size_t c = 0; c < K; c++) {
			has_cm[c] = shadow_fit(&cm[c], sh, o.nshadow, (long)c,
			    K) == 0;
			if (!has_cm[c])
				lr_free(&cm[c]);
		}
	}

	/* Every row's score, larger meaning "member". */
	for (int k = 0; k < 2; k++) {
		double *f = cli_calloc(K + 1, sizeof *f);

		score[k] = cli_calloc(set[k].n, sizeof *score[k]);
		for (size_t i = 0; i < set[k].n; i++) {
			size_t c = (size_t)set[k].y[i];

			if (o.attack != ATT_SHADOW) {
				score[k][i] = row_score(&set[k], i, o.attack);
				continue;
			}
			features(&set[k], i, f);
			score[k][i] = lr_apply(has_cm[c] ? &cm[c] : &pooled, f);
		}
		free(f);
	}
	if (sfp != NULL) {
		fputs("set\trow\tlabel\tscore\n", sfp);
		for (int k = 0; k < 2; k++)
			for (size_t i = 0; i < set[k].n; i++)
				fprintf(sfp, "%s\t%zu\t%d\t%.17g\n",
				    k == 0 ? "member" : "nonmember", i,
				    (int)set[k].y[i], score[k][i]);
	}

	/* The report: all rows, then each class. */
	if (o.report_format == REP_TSV) {
		fputs("attack\tclass\tmembers\tnonmembers\tmodel_acc_members\t"
		    "model_acc_nonmembers\tauc\tacc_best\tacc_half\tacc_mean\t"
		    "acc_shadow\tthr_best\tthr_mean\tthr_shadow\n", ofp);
	} else {
		static const char *const what[] = {
		    "loss threshold (Yeom et al. 2018): score = -loss",
		    "confidence threshold: score = largest probability",
		    ("shadow models (Shokri et al. 2017): score = attack "
		    "model's P(member)") };
		fprintf(ofp, "membership inference: %s\n"
		    "model %s, members %s, non-members %s, %zu shadow "
		    "model%s\n"
		    "accuracies are balanced: (TPR + TNR) / 2\n\n"
		    "%-5s %8s %8s %7s %7s %6s %6s %6s %6s %6s\n", what[o.attack],
		    o.model, label[0], label[1], o.nshadow,
		    o.nshadow == 1 ? "" : "s", "class", "members", "nonmemb",
		    "acc_in", "acc_out", "auc", "best", "half", "mean",
		    "shadow");
	}
	for (long c = -1; c < (long)K; c++) {
		struct sclist l = { 0 }, half[2] = { { 0 }, { 0 } };
		struct metrics r;
		size_t right[2] = { 0, 0 };
		double sum1 = 0, a, b, t[2];
		char cls[32];

		for (int k = 0; k < 2; k++)
			for (size_t i = 0; i < set[k].n; i++) {
				if (c >= 0 && set[k].y[i] != c)
					continue;
				sc_push(&l, score[k][i], k == 0);
				sc_push(&half[i % 2], score[k][i], k == 0);
				right[k] += (size_t)row_correct(&set[k], i);
				if (k == 0)
					sum1 += score[k][i];
			}
		memset(&r, 0, sizeof r);
		r.n1 = l.n1;
		r.n0 = l.n0;
		r.macc1 = l.n1 ? (double)right[0] / (double)l.n1 : NAN;
		r.macc0 = l.n0 ? (double)right[1] / (double)l.n0 : NAN;
		r.acc_mean = r.thr_mean = r.acc_shadow = r.thr_shadow = NAN;
		sc_stats(&l, &r.auc, &r.acc_best, &r.thr_best);
		/* Two-fold: the threshold chosen on one half (rows of even,
		 * then odd index in each input) is scored on the other. */
		sc_stats(&half[0], &a, &b, &t[0]);
		sc_stats(&half[1], &a, &b, &t[1]);
		r.acc_half = (bacc_at(&half[1], t[0]) +
		    bacc_at(&half[0], t[1])) / 2;
		if (o.attack != ATT_SHADOW && l.n1 > 0) {
			r.thr_mean = sum1 / (double)l.n1;
			r.acc_mean = bacc_at(&l, r.thr_mean);
		}
		if (o.attack != ATT_SHADOW && o.nshadow > 0) {
			struct sclist s = { 0 };

			shadow_scores(sh, o.nshadow, o.attack, c, &s);
			if (s.n1 < SHADOW_MIN_CLASS || s.n0 < SHADOW_MIN_CLASS) {
				s.n = s.n1 = s.n0 = 0;
				shadow_scores(sh, o.nshadow, o.attack, -1, &s);
			}
			sc_stats(&s, &a, &b, &r.thr_shadow);
			r.acc_shadow = bacc_at(&l, r.thr_shadow);
			free(s.v);
		} else if (o.attack == ATT_SHADOW) {
			r.thr_shadow = 0.5;
			r.acc_shadow = bacc_at(&l, 0.5);
			r.pooled = c >= 0 && !has_cm[c];
		}
		/* Thresholds in the attack's own units: a loss, not its
		 * negation. */
		if (o.attack == ATT_LOSS) {
			r.thr_best = -r.thr_best;
			r.thr_mean = -r.thr_mean;
			r.thr_shadow = -r.thr_shadow;
		}
		if (c < 0)
			snprintf(cls, sizeof cls, "all");
		else
			snprintf(cls, sizeof cls, "%ld", c);
		report_row(ofp, o.report_format, attacks[o.attack], cls, &r);
		free(l.v);
		free(half[0].v);
		free(half[1].v);
	}
	if (o.report_format == REP_TEXT)
		fputs("\nauc: Mann-Whitney, ties half; best: the best threshold "
		    "on these rows (optimistic);\nhalf: threshold chosen on "
		    "one half of the rows, scored on the other (two folds);\n"
		    "mean: threshold at the members' mean score (Yeom: the mean "
		    "training loss);\nshadow: threshold or attack model from the "
		    "shadow models only.\nThis report is not a differentially "
		    "private release: it is computed from the\nmember rows "
		    "without noise.\n", ofp);

	cli_out_commit();
	for (int k = 0; k < 2; k++) {
		cli_close_in(in[k]);
		evalset_free(&set[k]);
		free(score[k]);
	}
	for (size_t h = 0; h < o.nshadow; h++) {
		for (int k = 0; k < 2; k++) {
			cli_close_in(sh[h].fp[k]);
			evalset_free(&sh[h].s[k]);
		}
		model_free(&sh[h].m);
		free(sh[h].spec);
	}
	if (o.attack == ATT_SHADOW) {
		for (size_t c = 0; c < K; c++)
			if (has_cm[c])
				lr_free(&cm[c]);
		lr_free(&pooled);
	}
	free(cm);
	free(has_cm);
	free(sh);
	model_free(&m);
	return 0;
}
