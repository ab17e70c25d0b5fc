/* sample.c: gmm-fit sample: draw rows from a model (gmm-fit.h). */
#include <getopt.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dpcli.h"
#include "gmm-fit.h"
#include "gmmio.h"
#include "labels.h"
#include "opts.h"
#include "rng.h"
#include "tensor.h"
#include "tstream.h"

/* Parse gmm.classes or gmm.priors (gmmio_parse_list), exit 65 if bad. */
static size_t
parse_list(const char *s, double *v, const char *label, const char *key)
{
	char err[256];
	size_t n = gmmio_parse_list(s, v, GMMIO_MAX_CLASSES, err, sizeof err);

	if (n == 0)
		cli_die(EX_DATAERR, "%s: %s: %s", label, key, err);
	return n;
}

int
sample_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "seed", required_argument, NULL, 'S' },
		{ "version", no_argument, NULL, 'V' },
		{ "level", required_argument, NULL, OPTS_LEVEL },
		{ "model", required_argument, NULL, OPT_MODEL },
		{ "n", required_argument, NULL, OPT_N },
		{ NULL, 0, NULL, 0 }
	};
	struct opts_common oc = OPTS_COMMON_INIT;
	const char *model = NULL;
	const char *mlabel, *cov_s, *cls_s, *pri_s;
	int ch, rc, cov;
	long long nrows = -1;
	FILE *mfp, *ofp;
	struct ts_reader *r;
	struct ts_writer *w;
	struct tensor *t = NULL, hx, hy;
	struct ts_meta meta = { 0 };
	struct rng *rng;
	struct gmmio_model gm;
	size_t nt = 0, C, d;
	double *cls, *pri;
	int32_t *y;
	float *blk;
	uint64_t dims[2];
	char err[256];

	while ((ch = getopt_long(argc, argv, "fho:qS:V", longopts, NULL)) !=
	    -1) {
		if (opts_common(&oc, ch, optarg, usage))
			continue;
		switch (ch) {
		case OPT_MODEL:
			model = optarg;
			break;
		case OPT_N:
			nrows = cli_ll("--n", optarg, 1, MAX_SAMPLE);
			break;
		default:
			usage(EX_USAGE);
		}
	}
	if (optind != argc)
		usage(EX_USAGE);
	if (model == NULL)
		cli_usage_error("sample: --model is required");
	if (nrows < 0)
		cli_usage_error("sample: --n is required");
	if (strcmp(model, "-") == 0)
		cli_usage_error("sample: --model needs a file, not stdin");
	mfp = cli_open_in(model, &mlabel);
	ofp = cli_out_open(oc.output, oc.force);
	/* Sampling is post-processing of the model: a seed makes it
	 * reproducible without touching the privacy of the release. */
	rng = dpcli_rng_quiet(oc.seed, WORK_ITEM "/sample");

	r = cli_reader(mfp, mlabel);
	if ((rc = ts_read_all(r, &t, &nt)) != 0)
		cli_rdie(r, rc);
	cov_s = ts_meta_get(ts_reader_meta(r), "gmm.covariance");
	cls_s = ts_meta_get(ts_reader_meta(r), "gmm.classes");
	pri_s = ts_meta_get(ts_reader_meta(r), "gmm.priors");
	if (cov_s == NULL || cls_s == NULL || pri_s == NULL)
		cli_die(EX_DATAERR, "%s: --model: no gmm.covariance, gmm.classes "
		    "or gmm.priors: not a gmm-fit model", mlabel);
	if ((cov = gmmio_cov_parse(cov_s)) < 0)
		cli_die(EX_DATAERR, "%s: --model: gmm.covariance '%s' is not "
		    "full, diag or spherical", mlabel, cov_s);
	cls = cli_reallocarray(NULL, GMMIO_MAX_CLASSES, sizeof *cls);
	pri = cli_reallocarray(NULL, GMMIO_MAX_CLASSES, sizeof *pri);
	C = parse_list(cls_s, cls, mlabel, "gmm.classes");
	if (parse_list(pri_s, pri, mlabel, "gmm.priors") != C)
		cli_die(EX_DATAERR, "%s: --model: gmm.priors and gmm.classes "
		    "differ in length", mlabel);
	rc = gmmio_load(&gm, t, nt, cov, cls, pri, C, err, sizeof err);
	if (rc == PV_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	if (rc != 0)
		cli_die(EX_DATAERR, "%s: --model: %s", mlabel, err);
	d = gm.d;
	cli_inherit(&meta, ts_reader_meta(r), mlabel);
	{
		struct ts_meta prov = { 0 };
		cli_prov(&meta);
		cli_prov_input(&prov, 0, mlabel, ts_reader_digest(r),
		    ts_reader_meta(r));
		if (ts_meta_merge(&meta, &prov, "", NULL) != 0)
			cli_die(EX_OSERR, "out of memory");
		ts_meta_free(&prov);
	}

	/* The classes first (their indices, labels at the end), then the
	 * rows. */
	y = cli_reallocarray(NULL, (size_t)nrows, sizeof *y);
	gmmio_draw_classes(&gm, rng, y, (size_t)nrows);
	w = cli_writer(ofp, oc.level);
	dims[0] = (uint64_t)nrows;
	dims[1] = d;
	if (tensor_init(&hx, "X", TS_F32, 2, dims) != 0)
		cli_die(EX_SOFTWARE, "bad tensor header");
	if ((rc = ts_write_begin(w, &hx)) != 0)
		cli_wdie(w, rc);
	blk = cli_reallocarray(NULL, (size_t)SAMPLE_BLOCK * d, sizeof *blk);
	for (size_t i = 0; i < (size_t)nrows; i += SAMPLE_BLOCK) {
		size_t m = (size_t)nrows - i < SAMPLE_BLOCK ?
		    (size_t)nrows - i : SAMPLE_BLOCK;

		gmmio_sample_rows(&gm, rng, y + i, m, blk);
		if ((rc = ts_write_rows(w, blk, m)) != 0)
			cli_wdie(w, rc);
	}
	if ((rc = ts_write_end(w)) != 0)
		cli_wdie(w, rc);
	tensor_free(&hx);
	for (size_t i = 0; i < (size_t)nrows; i++)
		y[i] = gm.labels[y[i]];
	dims[0] = (uint64_t)nrows;
	if (tensor_init(&hy, "y", TS_I32, 1, dims) != 0)
		cli_die(EX_SOFTWARE, "bad tensor header");
	{
		/* The sample's classes are the model's: public when the
		 * model says so (an older model says nothing: data). */
		const char *ln = ts_meta_get(ts_reader_meta(r),
		    "gmm.label_names");
		const char *src = ts_meta_get(ts_reader_meta(r),
		    "gmm.label_source");
		int pub = src != NULL && strcmp(src, "public") == 0;

		if (ln != NULL && label_names_count(ln) == 0)
			/* Issue 15: said "disagree" of a malformed value. */
			cli_die(EX_DATAERR, "%s: --model: gmm.label_names is "
			    "malformed: not a JSON array of strings", mlabel);
		if (ln != NULL && label_names_count(ln) != C)
			cli_die(EX_DATAERR, "%s: --model: gmm.label_names and "
			    "gmm.classes disagree", mlabel);
		if (label_put(&hy.meta, pub ? LABEL_PUBLIC : LABEL_DATA,
		    pub ? C : 0, ln) != 0)
			cli_die(EX_OSERR, "out of memory");
	}
	hy.data = y;
	if ((rc = ts_write_tensor(w, &hy)) != 0)
		cli_wdie(w, rc);
	hy.data = NULL;
	tensor_free(&hy);
	if ((rc = ts_write_meta(w, &meta)) != 0 ||
	    (rc = ts_writer_finish(w)) != 0)
		cli_wdie(w, rc);
	ts_writer_close(w);
	gmmio_free(&gm);
	for (size_t i = 0; i < nt; i++)
		tensor_free(&t[i]);
	free(t);
	free(cls);
	free(pri);
	free(y);
	free(blk);
	ts_meta_free(&meta);
	ts_reader_close(r);
	cli_close_in(mfp);
	rng_free(rng);
	cli_out_commit();
	return 0;
}
