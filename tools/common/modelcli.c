/* modelcli.c: reading models, labels and rows in the tools (see
 * modelcli.h). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "modelcli.h"

void
mcli_read_model(const char *path, struct nn_model *m, struct ts_meta *meta,
    uint64_t *digest, const char **label)
{
	FILE *fp = cli_open_in(path, label);

	mcli_read_model_fp(fp, *label, m, meta, digest);
}

void
mcli_read_model_fp(FILE *fp, const char *label, struct nn_model *m,
    struct ts_meta *meta, uint64_t *digest)
{
	struct ts_reader *r = cli_reader(fp, label);
	struct tensor *t = NULL;
	size_t nt = 0;
	char err[256];
	int rc;

	if ((rc = ts_read_all(r, &t, &nt)) != 0)
		cli_rdie(r, rc);
	if (model_read(m, ts_reader_meta(r), t, nt, err, sizeof err) != 0)
		cli_die(EX_DATAERR, "%s: %s", label, err);
	if (meta != NULL && ts_meta_merge(meta, ts_reader_meta(r), "",
	    NULL) != 0)
		cli_die(EX_OSERR, "out of memory");
	if (digest != NULL)
		*digest = ts_reader_digest(r);
	for (size_t i = 0; i < nt; i++)
		tensor_free(&t[i]);
	free(t);
	ts_reader_close(r);
	cli_close_in(fp);
}

int64_t *
mcli_read_labels(struct ts_reader *r, struct tensor *hdr, const char *label,
    size_t *n)
{
	int64_t *y;
	int rc;

	if (hdr->ndim != 1 || (hdr->dtype != TS_I32 && hdr->dtype != TS_I64 &&
	    hdr->dtype != TS_U8))
		cli_die(EX_DATAERR, "%s: tensor 'y': expected i32, i64 or u8 of "
		    "1 dimension", label);
	if ((rc = ts_read_data(r, hdr)) != 0)
		cli_rdie(r, rc);
	*n = (size_t)hdr->dims[0];
	y = cli_reallocarray(NULL, *n ? *n : 1, sizeof *y);
	for (size_t i = 0; i < *n; i++)
		y[i] = hdr->dtype == TS_I32 ? ((int32_t *)hdr->data)[i] :
		    hdr->dtype == TS_I64 ? ((int64_t *)hdr->data)[i] :
		    ((uint8_t *)hdr->data)[i];
	return y;
}

void
mcli_check_x(const struct tensor *hdr, size_t d, const char *label)
{
	if (hdr->ndim != 2 || (hdr->dtype != TS_F32 && hdr->dtype != TS_F64))
		cli_die(EX_DATAERR, "%s: tensor 'X': expected f32 or f64 "
		    "of 2 dimensions", label);
	if (hdr->dims[1] != d)
		cli_die(EX_DATAERR, "%s: tensor 'X' has %llu features, "
		    "the model takes %zu", label,
		    (unsigned long long)hdr->dims[1], d);
}

size_t
mcli_read_rows(struct ts_reader *r, const struct tensor *hdr, float *xb,
    double **xd, size_t rows, size_t d)
{
	int64_t got;

	if (hdr->dtype == TS_F64 && *xd == NULL)
		*xd = cli_reallocarray(NULL, rows * d, sizeof **xd);
	got = ts_read_rows(r, hdr->dtype == TS_F64 ? (void *)*xd : (void *)xb,
	    rows);
	if (got < 0)
		cli_rdie(r, (int)got);
	if (hdr->dtype == TS_F64)
		for (size_t i = 0; i < (size_t)got * d; i++)
			xb[i] = (float)(*xd)[i];
	return (size_t)got;
}

void
mcli_parse_widths(const char *opt, const char *arg, size_t *w, size_t *n)
{
	char *s = cli_strdup(arg), *p = s, *tok;

	*n = 0;
	if (strcmp(arg, "") == 0 || strcmp(arg, "none") == 0) {
		free(s);
		return;
	}
	while ((tok = strsep(&p, ",")) != NULL) {
		if (*n + 1 >= NN_MAX_LAYERS)
			cli_usage_error("invalid %s '%s': at most %d "
			    "hidden layers", opt, arg, NN_MAX_LAYERS - 1);
		w[(*n)++] = (size_t)cli_ll(opt, tok, 1, NN_MAX_WIDTH);
	}
	free(s);
}

void
mcli_conv_paths(struct nn_net *net)
{
	const char *e = getenv("PRIVADA_TEST_CONV_PATH"), *p;
	size_t nconv = 0;

	if (e == NULL || *e == '\0')
		return;
	for (size_t l = 0; l < net->nlayers; l++)
		nconv += net->layer[l].kind == NN_CONV;
	if (strlen(e) != nconv || strspn(e, "adg") != nconv)
		cli_usage_error("invalid PRIVADA_TEST_CONV_PATH '%s': one of "
		    "a, d, g for each of the model's %zu convolutions", e,
		    nconv);
	p = e;
	for (size_t l = 0; l < net->nlayers; l++)
		if (net->layer[l].kind == NN_CONV) {
			net->layer[l].path = *p == 'g' ? NN_PATH_GHOST :
			    *p == 'd' ? NN_PATH_DIRECT : NN_PATH_AUTO;
			p++;
		}
}
