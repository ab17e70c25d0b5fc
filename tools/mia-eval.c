/* mia-eval: membership inference attacks on a model: attack accuracy and AUC from member and non-member rows. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mia.h"
#include "model.h"
#include "modelcli.h"
#include "nn.h"
#include "opts.h"
#include "pverr.h"
#include "tensor.h"
#include "tstream.h"

#define ROWS 1024			/* rows per forward pass */
#define MAX_SHADOWS 256			/* --shadow options */
enum { REP_TEXT, REP_TSV };
enum { OPT_ATTACK = OPTS_FIRST_TOOL, OPT_MEMBERS, OPT_MODEL, OPT_NONMEMBERS,
	OPT_REPORT_FORMAT, OPT_SCORES, OPT_SHADOW };

struct opts {
	struct opts_common c;		/* -h -o -q -V */
	const char *model, *members, *nonmembers, *scores;
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

__attribute__((noreturn)) static void
usage(int status)
{
	FILE *fp = status ? stderr : stdout;

	fputs("usage: mia-eval [-fhqV] [-o file] [--attack kind] --members file"
	    "\n"
	    "                --model file --nonmembers file "
	    "[--report-format format]\n"
	    "                [--scores file] [--shadow spec]\n", fp);
	if (status == 0)
		fputs("\n"
		    "  -f, --force            accepted: the report is text, "
		    "written to a terminal too\n"
		    "  -h, --help             show this help\n"
		    "  -o, --output FILE      write the report to FILE (through a "
		    "temporary file)\n"
		    "  -q, --quiet            no warnings, no progress\n"
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
    struct evalset *s, const char *what)
{
	struct ts_reader *r = cli_reader(fp, label);
	struct tensor hdr;
	struct nn_ws ws;
	size_t d = model_inputs(m), k = model_classes(m), cap = 0, ny = 0;
	uint64_t total;
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
		/* Progress: rows scored (a count, never a score or a loss). */
		total = hdr.dims[0] == TS_UNKNOWN_ROWS ? 0 : hdr.dims[0];
		cli_progress(what, 0, total);
		for (;;) {
			size_t n = mcli_read_rows(r, &hdr, xb, &xd, ROWS, d), bad;
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
			if (mia_logsoftmax(z, n, k, s->logp + s->n * k,
			    &bad) != 0)
				cli_die(EX_DATAERR, "%s: row %zu: the model gives "
				    "a logit that is not finite", label,
				    s->n + bad);
			s->n += n;
			cli_progress(what, s->n, total);
		}
		/* The last update (throttled ones are skipped): the count is
		 * known once the rows are read. */
		cli_progress(what, s->n, s->n);
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

static struct mia_set
mia_view(const struct evalset *s)
{
	return (struct mia_set){ .n = s->n, .k = s->k, .logp = s->logp,
	    .y = s->y };
}

static void
evalset_free(struct evalset *s)
{
	free(s->logp);
	free(s->y);
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
    const struct mia_metrics *r)
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

int
main(int argc, char **argv)
{
	static const char *const attacks[] = { "loss", "confidence", "shadow",
	    NULL };
	static const char *const formats[] = { "text", "tsv", NULL };
	static const struct option longopts[] = {
		{ "attack", required_argument, NULL, OPT_ATTACK },
		{ "force", no_argument, NULL, 'f' },
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
	struct opts o = { .c = OPTS_COMMON_INIT, .attack = MIA_LOSS };
	struct nn_model m;
	struct shadow *sh = NULL;
	struct evalset set[2];
	struct mia_params mp = { 0 };
	struct mia_set ms[2], *mss;
	struct mia_result res;
	FILE *in[2], *ofp, *sfp = NULL;
	const char *mlabel, *label[2];
	size_t K;
	int ch, rc;

	cli_init(argv[0], argc, argv);
	while ((ch = getopt_long(argc, argv, "fho:qV", longopts, NULL)) != -1) {
		if (opts_common(&o.c, ch, optarg, usage))
			continue;
		switch (ch) {
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
	if (o.attack == MIA_SHADOW && o.nshadow == 0)
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
	ofp = cli_out_open(o.c.output, 1);
	if (o.scores != NULL)
		sfp = cli_out_open_path(o.scores);

	for (int k = 0; k < 2; k++)
		eval_rows(&m, in[k], label[k], &set[k], k == 0 ?
		    "members: rows scored" : "non-members: rows scored");
	for (size_t h = 0; h < o.nshadow; h++)
		for (int k = 0; k < 2; k++) {
			char what[96];

			snprintf(what, sizeof what, "shadow model %zu/%zu: "
			    "%s: rows scored", h + 1, o.nshadow, k == 0 ?
			    "members" : "non-members");
			eval_rows(&sh[h].m, sh[h].fp[k], sh[h].label[k],
			    &sh[h].s[k], what);
		}
	cli_progress_done();

	mp.attack = o.attack;
	mp.classes = K;
	mp.nshadow = o.nshadow;
	mss = cli_calloc(2 * o.nshadow + 1, sizeof *mss);
	for (int k = 0; k < 2; k++)
		ms[k] = mia_view(&set[k]);
	for (size_t h = 0; h < o.nshadow; h++)
		for (int k = 0; k < 2; k++)
			mss[2 * h + (size_t)k] = mia_view(&sh[h].s[k]);
	if ((rc = mia_run(&mp, ms, mss, &res)) == PV_E_NUMERIC)
		cli_die(EX_DATAERR, "the shadow models' rows cannot train "
		    "an attack model: at least %d members and %d "
		    "non-members with a non-singular fit are needed",
		    MIA_SHADOW_MIN_CLASS, MIA_SHADOW_MIN_CLASS);
	else if (rc == PV_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	else if (rc != 0)
		cli_die(EX_SOFTWARE, "mia_run: %s", pv_strerror(rc));
	if (sfp != NULL) {
		fputs("set\trow\tlabel\tscore\n", sfp);
		for (int k = 0; k < 2; k++)
			for (size_t i = 0; i < set[k].n; i++)
				fprintf(sfp, "%s\t%zu\t%d\t%.17g\n",
				    k == 0 ? "member" : "nonmember", i,
				    (int)set[k].y[i], res.score[k][i]);
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
		char cls[32];

		if (c < 0)
			snprintf(cls, sizeof cls, "all");
		else
			snprintf(cls, sizeof cls, "%ld", c);
		report_row(ofp, o.report_format, attacks[o.attack], cls,
		    &res.rows[c + 1]);
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
	}
	for (size_t h = 0; h < o.nshadow; h++) {
		for (int k = 0; k < 2; k++) {
			cli_close_in(sh[h].fp[k]);
			evalset_free(&sh[h].s[k]);
		}
		model_free(&sh[h].m);
		free(sh[h].spec);
	}
	mia_result_free(&res);
	free(mss);
	free(sh);
	model_free(&m);
	return 0;
}
