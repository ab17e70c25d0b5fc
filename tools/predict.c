/* predict: apply a model stream to features: labels, probabilities, logits or hidden features. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "model.h"
#include "modelcli.h"
#include "nn.h"
#include "opts.h"
#include "pverr.h"
#include "report.h"
#include "tensor.h"
#include "tstream.h"

#define ROWS 1024			/* rows per forward pass */

enum { OUT_LABELS, OUT_PROBS, OUT_LOGITS, OUT_FEATURES };
enum { REP_TEXT, REP_TSV };
enum { OPT_EMIT = OPTS_FIRST_TOOL, OPT_FEATURES, OPT_MODEL,
	OPT_OUTPUT_KIND, OPT_REPORT, OPT_REPORT_FORMAT };

struct opts {
	struct opts_common c;		/* -f -h -o -q -V --level */
	const char *model, *report;
	int kind, report_format;
	size_t layer;			/* --features */
};

__attribute__((noreturn)) static void
usage(int status)
{
	FILE *fp = status ? stderr : stdout;

	fputs("usage: predict [-fhqV] [-o file] --model file [--emit kind]\n"
	    "               [--features layer] [--level level] [--report file]\n"
	    "               [--report-format format] [file]\n", fp);
	if (status == 0)
		fputs("\n"
		    "  -f, --force            write to a terminal\n"
		    "  -h, --help             show this help\n"
		    "  -o FILE                write FILE (through a temporary "
		    "file), not stdout\n"
		    "  -q, --quiet            no warnings, no report on stderr\n"
		    "  -V, --version          show the version\n"
		    "      --emit KIND        labels (default: y_pred), probs "
		    "(P) or logits\n"
		    "      --features LAYER   emit the activations after hidden "
		    "layer LAYER (1..)\n"
		    "      --level N          zstd level of the output\n"
		    "      --model FILE       the model stream (required)\n"
		    "      --report FILE      write the report (needs y) to FILE, "
		    "not stderr\n"
		    "      --report-format F  text (default) or tsv\n", fp);
	exit(status);
}

/* Whether the n floats at x are all finite. */
static int
row_finite(const float *x, size_t n)
{
	for (size_t j = 0; j < n; j++)
		if (!isfinite(x[j]))
			return 0;
	return 1;
}

/* ---- the report ---- */

/* The raw marks of the scored rows, "d=mark,..." or "-" (caller frees):
 * statistics of such rows are computed without privacy. */
static char *
raw_marks(const struct ts_meta *m)
{
	size_t len = 2;
	char *s;

	for (size_t i = 0; i < m->n; i++)
		if (strncmp(m->kv[i].key, "dp.raw.", 7) == 0)
			len += strlen(m->kv[i].key) + strlen(m->kv[i].val) + 2;
	s = cli_malloc(len);
	s[0] = '\0';
	for (size_t i = 0; i < m->n; i++)
		if (strncmp(m->kv[i].key, "dp.raw.", 7) == 0)
			snprintf(s + strlen(s), len - strlen(s), "%s%s=%s",
			    s[0] ? "," : "", m->kv[i].key + 7, m->kv[i].val);
	if (s[0] == '\0')
		snprintf(s, len, "-");
	return s;
}

/* raw: raw_marks of the rows; the tsv report carries it in a last
 * column, the text report says NOT private. */

/* Print the report r in format; raw as raw_marks. */
static void
report(FILE *fp, int format, const struct report *r, const char *raw)
{
	size_t K = r->k, K1 = K + 1;
	const uint64_t *cm = r->cm;

	if (format == REP_TSV)
		fputs("class\tprecision\trecall\tf1\tsupport", fp);
	else
		fprintf(fp, "accuracy %.4f (%llu of %llu)\n%s%s%s\n%-7s %9s "
		    "%9s %9s %9s\n", r->accuracy, (unsigned long long)r->right,
		    (unsigned long long)r->n, strcmp(raw, "-") ? "NOT private: "
		    "computed without privacy on raw rows (dp.raw: " : "",
		    strcmp(raw, "-") ? raw : "", strcmp(raw, "-") ? ")\n" : "",
		    "class", "precision", "recall", "f1", "support");
	if (format == REP_TSV) {
		for (size_t j = 0; j < K; j++)
			fprintf(fp, "\tpred_%zu", j);
		fputs("\traw\n", fp);
	}
	for (size_t i = 0; i < K; i++) {
		if (format == REP_TSV) {
			fprintf(fp, "%zu\t%.6f\t%.6f\t%.6f\t%llu", i,
			    r->precision[i], r->recall[i], r->f1[i],
			    (unsigned long long)r->support[i]);
			for (size_t j = 0; j < K; j++)
				fprintf(fp, "\t%llu",
				    (unsigned long long)cm[i * K1 + j]);
			fprintf(fp, "\t%s\n", raw);
		} else {
			fprintf(fp, "%-7zu %9.4f %9.4f %9.4f %9llu\n", i,
			    r->precision[i], r->recall[i], r->f1[i],
			    (unsigned long long)r->support[i]);
		}
	}
	if (format == REP_TSV) {
		/* Micro averages of single-label data all equal accuracy. */
		double a = r->accuracy;
		fprintf(fp, "all\t%.6f\t%.6f\t%.6f\t%llu", a, a, a,
		    (unsigned long long)r->n);
		for (size_t j = 0; j < K; j++)
			fprintf(fp, "\t%llu", (unsigned long long)r->pred[j]);
		fprintf(fp, "\t%s\n", raw);
		if (r->none) {
			fprintf(fp, "nonfinite\t\t\t\t%llu",
			    (unsigned long long)r->none);
			for (size_t j = 0; j < K; j++)
				fputc('\t', fp);
			fprintf(fp, "\t%s\n", raw);
		}
		return;
	}
	fprintf(fp, "%-7s %9.4f %9.4f %9.4f %9llu\n\nconfusion matrix "
	    "(rows: true class, columns: predicted class)\n%-7s", "macro",
	    r->macro_p, r->macro_r, r->macro_f, (unsigned long long)r->n, "");
	for (size_t j = 0; j < K; j++)
		fprintf(fp, " %7zu", j);
	fputc('\n', fp);
	for (size_t i = 0; i < K; i++) {
		fprintf(fp, "%-7zu", i);
		for (size_t j = 0; j < K; j++)
			fprintf(fp, " %7llu", (unsigned long long)cm[i * K1 + j]);
		fputc('\n', fp);
	}
	if (r->none) {
		fprintf(fp, "\nnonfinite %llu rows: no prediction, counted as "
		    "wrong; by true class\n%-7s", (unsigned long long)r->none,
		    "");
		for (size_t i = 0; i < K; i++)
			fprintf(fp, " %7llu", (unsigned long long)cm[i * K1 + K]);
		fputc('\n', fp);
	}
}

/* ---- main ---- */

int
main(int argc, char **argv)
{
	static const char *const kinds[] = { "labels", "probs", "logits",
	    NULL };
	static const char *const formats[] = { "text", "tsv", NULL };
	static const struct option longopts[] = {
		{ "emit", required_argument, NULL, OPT_EMIT },
		{ "features", required_argument, NULL, OPT_FEATURES },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "level", required_argument, NULL, OPTS_LEVEL },
		{ "model", required_argument, NULL, OPT_MODEL },
		{ "output", required_argument, NULL, OPT_OUTPUT_KIND },
		{ "quiet", no_argument, NULL, 'q' },
		{ "report", required_argument, NULL, OPT_REPORT },
		{ "report-format", required_argument, NULL, OPT_REPORT_FORMAT },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct opts o = { .c = OPTS_COMMON_INIT, .kind = OUT_LABELS };
	struct nn_model m;
	struct nn_ws ws;
	struct ts_meta meta = { 0 }, mmeta = { 0 }, prov = { 0 };
	struct ts_reader *r;
	struct ts_writer *w;
	struct tensor hdr, out, ycopy;
	FILE *in, *ofp, *rfp = NULL;
	const char *label, *mlabel;
	uint64_t mdigest = 0, nx = 0, nonfinite = 0;
	struct report rep;
	int64_t *y = NULL;
	int32_t *pred = NULL;
	size_t ny = 0, K, d, width, upto, predcap = 0;
	float *xb, *ob;
	double *xd = NULL;
	int ch, rc, have_x = 0, kind_given = 0, output_kind = 0;
	int report_only;

	cli_init(argv[0], argc, argv);
	while ((ch = getopt_long(argc, argv, "fho:qV", longopts, NULL)) != -1) {
		if (opts_common(&o.c, ch, optarg, usage))
			continue;
		switch (ch) {
		case OPT_FEATURES:
			o.layer = (size_t)cli_ll("--features", optarg, 1,
			    NN_MAX_LAYERS);
			break;
		case OPT_MODEL:
			o.model = optarg;
			break;
		case OPT_EMIT:
			o.kind = cli_choice("--emit", optarg, kinds);
			kind_given = 1;
			break;
		case OPT_OUTPUT_KIND:
			/* The old spelling of --emit, kept for one release:
			 * --output names a file in every other tool. */
			o.kind = cli_choice("--output", optarg, kinds);
			kind_given = 1;
			output_kind = 1;
			break;
		case OPT_REPORT:
			o.report = optarg;
			break;
		case OPT_REPORT_FORMAT:
			o.report_format = cli_choice("--report-format", optarg,
			    formats);
			break;
		default:
			usage(EX_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc > 1)
		cli_usage_error("at most one input file");
	if (o.model == NULL)
		cli_usage_error("--model is required");
	if (o.layer && kind_given)
		cli_usage_error("--features and --emit do not go together");
	if (output_kind)
		cli_warn("--output KIND is deprecated and will name the output "
		    "file, as in the other tools: use --emit KIND");
	if (o.layer)
		o.kind = OUT_FEATURES;

	/* Open everything before computing: the model is read first. */
	in = cli_open_in(argc ? argv[0] : NULL, &label);
	mcli_read_model(o.model, &m, &mmeta, &mdigest, &mlabel);
	/* At a terminal, the plain "predict --model m.tns data.tns" shows
	 * the report (on stdout) and writes no predictions: a stream of
	 * labels is binary.  Asking for data (--emit, --features) or for
	 * the report in a file still refuses, as in every tool. */
	report_only = (o.c.output == NULL || strcmp(o.c.output, "-") == 0) &&
	    !o.c.force && !kind_given && !o.layer && o.report == NULL &&
	    isatty(STDOUT_FILENO);
	if (report_only) {
		if ((ofp = fopen("/dev/null", "w")) == NULL)
			cli_die(EX_OSFILE, "/dev/null: %s", strerror(errno));
	} else
		ofp = cli_out_open(o.c.output, o.c.force);
	if (o.report != NULL)
		rfp = cli_out_open_path(o.report);
	K = model_classes(&m);
	d = model_inputs(&m);
	if (o.layer && o.layer >= m.net.nlayers)
		cli_usage_error("--features %zu: the model has %zu hidden "
		    "layers", o.layer, m.net.nlayers - 1);
	upto = o.kind == OUT_FEATURES ? o.layer : m.net.nlayers;
	width = o.kind == OUT_FEATURES ? m.net.layer[o.layer - 1].out :
	    o.kind == OUT_LABELS ? 1 : K;
	if (nn_ws_init(&ws, &m.net, ROWS) != 0)
		cli_die(EX_OSERR, "out of memory");
	xb = cli_reallocarray(NULL, (size_t)ROWS * d, sizeof *xb);
	ob = cli_reallocarray(NULL, (size_t)ROWS * width, sizeof *ob);
	w = cli_writer(ofp, o.c.level);
	r = cli_reader(in, label);
	memset(&ycopy, 0, sizeof ycopy);

	while ((rc = ts_read_next(r, &hdr)) == 1) {
		if (strcmp(hdr.name, "y") == 0) {
			if (y != NULL)
				cli_die(EX_DATAERR, "%s: two tensors 'y'", label);
			y = mcli_read_labels(r, &hdr, label, &ny);
			ycopy = hdr;	/* keeps its metadata and data */
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
		{
			uint64_t dims[2] = { TS_UNKNOWN_ROWS, width };
			const char *name = o.kind == OUT_LABELS ? "y_pred" :
			    o.kind == OUT_PROBS ? "P" : o.kind == OUT_LOGITS ?
			    "logits" : "X";

			if (tensor_init(&out, name, o.kind == OUT_LABELS ?
			    TS_I32 : TS_F32, o.kind == OUT_LABELS ? 1 : 2,
			    dims) != 0)
				cli_die(EX_SOFTWARE, "bad tensor header");
			if ((rc = ts_write_begin(w, &out)) != 0)
				cli_wdie(w, rc);
		}
		for (;;) {
			size_t n = mcli_read_rows(r, &hdr, xb, &xd, ROWS, d);
			float *z;

			if (n == 0)
				break;
			nn_forward_to(&m.net, m.param, &ws, xb, n, upto);
			z = ws.a[upto];
			if (nx + n > predcap) {
				predcap = (size_t)(nx + n) * 2;
				pred = cli_reallocarray(pred, predcap,
				    sizeof *pred);
			}
			for (size_t i = 0; i < n; i++) {
				float *zi = z + i * K;
				size_t b = 0, j;

				if (o.kind == OUT_FEATURES)
					break;
				/* A row with a non-finite value or score (an
				 * overflow) has no class: label -1, logits and
				 * probabilities NaN (ReLU alone would map a
				 * NaN input to a finite score). */
				if (!row_finite(xb + i * d, d) ||
				    !row_finite(zi, K)) {
					pred[nx + i] = -1;
					nonfinite++;
					for (j = 0; j < K; j++) {
						zi[j] = NAN;
						if (o.kind == OUT_PROBS)
							ob[i * K + j] = NAN;
					}
					continue;
				}
				for (j = 1; j < K; j++)
					if (zi[j] > zi[b])
						b = j;
				pred[nx + i] = (int32_t)b;
				if (o.kind == OUT_PROBS) {
					/* softmax with the maximum subtracted */
					double s = 0, mx = zi[b];
					for (j = 0; j < K; j++)
						s += exp((double)zi[j] - mx);
					for (j = 0; j < K; j++)
						ob[i * K + j] = (float)(exp(
						    (double)zi[j] - mx) / s);
				}
			}
			if (o.kind == OUT_LABELS)
				rc = ts_write_rows(w, pred + nx, n);
			else if (o.kind == OUT_PROBS)
				rc = ts_write_rows(w, ob, n);
			else
				rc = ts_write_rows(w, z, n);
			if (rc != 0)
				cli_wdie(w, rc);
			nx += n;
			cli_progress("rows", nx, 0);
		}
		if ((rc = ts_write_end(w)) != 0)
			cli_wdie(w, rc);
		tensor_free(&out);
		tensor_free(&hdr);
	}
	if (rc < 0)
		cli_rdie(r, rc);
	cli_progress_done();
	if (!have_x)
		cli_die(EX_DATAERR, "%s: no tensor 'X'", label);
	if (y != NULL && ny != nx)
		cli_die(EX_DATAERR, "%s: tensor 'y' has %zu rows, 'X' %llu",
		    label, ny, (unsigned long long)nx);
	if (y != NULL && o.kind != OUT_FEATURES)
		for (size_t i = 0; i < ny; i++)
			if (y[i] < 0 || (uint64_t)y[i] >= K)
				cli_die(EX_DATAERR, "%s: tensor 'y': row %zu: "
				    "label %lld outside the model's classes "
				    "[0, %zu)", label, i, (long long)y[i], K);
	if (nonfinite)
		cli_warn("%llu rows have non-finite values or scores: no "
		    "prediction (label -1), counted as wrong",
		    (unsigned long long)nonfinite);
	if (report_only && y == NULL)
		cli_usage_error("%s has no labels 'y' to report on, and "
		    "stdout is a terminal: redirect stdout, use -o FILE, or "
		    "--force", label);
	if (rfp != NULL && (y == NULL || o.kind == OUT_FEATURES))
		cli_usage_error("--report needs labels 'y' in the input and "
		    "predictions (not --features)");
	if (y != NULL && (rc = ts_write_tensor(w, &ycopy)) != 0)
		cli_wdie(w, rc);

	/* Stream metadata: the data's, then the model's ledger (every
	 * entry: the predictions depend on both). */
	/* The query rows' own split.* keys are left out: the predictions
	 * belong to the model's partition (teacher-vote reads it).  Their
	 * raw marks merge with the model's (an aggregate mark wins), so
	 * they are also kept apart as predict.raw.<dataset>: teacher-vote
	 * refuses queries drawn from the dataset its teachers protect. */
	{
		struct ts_meta dm = { 0 };
		const struct ts_meta *im = ts_reader_meta(r);
		if (ts_meta_copy_except(&dm, im, "split.") != 0)
			cli_die(EX_OSERR, "out of memory");
		cli_inherit(&meta, &dm, label);
		ts_meta_free(&dm);
		for (size_t i = 0; i < im->n; i++) {
			char k[TS_MAX_KEY + 8];
			if (strncmp(im->kv[i].key, "dp.raw.", 7) != 0)
				continue;
			if ((size_t)snprintf(k, sizeof k, "predict.raw.%s",
			    im->kv[i].key + 7) > TS_MAX_KEY)
				cli_die(EX_DATAERR, "%s: ledger key '%s' is too "
				    "long to record in predict.raw", label,
				    im->kv[i].key);
			if (ts_meta_set(&meta, k, im->kv[i].val) != 0)
				cli_die(EX_OSERR, "out of memory");
		}
	}
	/* The model's split.* keys are copied as they are (a mixed model
	 * stays mixed, naming what mixed it): the query rows' raw marks,
	 * now in meta, must not count as the whole dataset against the
	 * model's part. */
	{
		struct ts_meta mm = { 0 };
		if (ts_meta_copy_except(&mm, &mmeta, "split.") != 0)
			cli_die(EX_OSERR, "out of memory");
		cli_inherit(&meta, &mm, mlabel);
		ts_meta_free(&mm);
		for (size_t i = 0; i < mmeta.n; i++)
			if (strncmp(mmeta.kv[i].key, "split.", 6) == 0)
				cli_meta_set(&meta, mmeta.kv[i].key,
				    mmeta.kv[i].val);
	}
	cli_prov_input(&prov, 0, label, ts_reader_digest(r),
	    ts_reader_meta(r));
	cli_prov_input(&prov, 1, mlabel, mdigest, &mmeta);
	if (o.kind == OUT_FEATURES)
		rc = ts_meta_setf(&meta, "predict.output", "features:%zu",
		    o.layer);
	else
		rc = ts_meta_set(&meta, "predict.output", kinds[o.kind]);
	if (rc == 0 && o.kind != OUT_FEATURES)
		rc = ts_meta_setf(&meta, "predict.nonfinite_rows", "%llu",
		    (unsigned long long)nonfinite);
	if (rc != 0)
		cli_die(EX_OSERR, "out of memory");
	cli_out_finish(w, &meta, &prov);
	if (report_only) {
		if (fclose(ofp) != 0)
			cli_die(EX_IOERR, "/dev/null: %s", strerror(errno));
		rfp = stdout;
		if (!o.c.quiet)
			cli_warn("stdout is a terminal: the report only, no "
			    "predictions (redirect stdout or use -o FILE to "
			    "keep them)");
	}

	if (y != NULL && o.kind != OUT_FEATURES && (rfp != NULL || !o.c.quiet)) {
		char *raw = raw_marks(ts_reader_meta(r));

		/* The accuracy is a statistic of the rows: of a protected
		 * dataset's records, it is computed without privacy. */
		if (strcmp(raw, "-") != 0 && rfp != NULL && !report_only)
			cli_warn("the report is computed without privacy on raw "
			    "rows (dp.raw: %s): it is NOT private for their "
			    "dataset", raw);
		if ((rc = report_compute(&rep, y, pred, ny, K)) != 0)
			cli_die(rc == PV_E_NOMEM ? EX_OSERR : EX_SOFTWARE,
			    "report: %s", pv_strerror(rc));
		report(rfp ? rfp : stderr, o.report_format, &rep, raw);
		report_free(&rep);
		free(raw);
	}
	cli_out_commit();
	cli_close_in(in);
	ts_reader_close(r);
	tensor_free(&ycopy);
	nn_ws_free(&ws);
	model_free(&m);
	ts_meta_free(&meta);
	ts_meta_free(&mmeta);
	ts_meta_free(&prov);
	free(y);
	free(pred);
	free(xb);
	free(xd);
	free(ob);
	return 0;
}
