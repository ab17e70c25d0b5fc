/* out.c: featurize's output: rows, labels, X and y (featurize.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "csvlay.h"
#include "featurize.h"
#include "labcol.h"
#include "scale.h"
#include "scatter.h"
#include "tensor.h"
#include "tstream.h"

/* An error of a feat reader on s: a usage error, a read error of s, or
 * bad data. */
__attribute__((noreturn)) void
feat_die(struct infile *s, int rc, const char *msg)
{
	if (rc == PV_E_OPTION)
		cli_usage_error("%s", msg);
	if (rc == PV_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	if (rc == PV_E_IO && (infile_error(s) || msg[0] == '\0'))
		cli_infile_die(s);
	cli_die(EX_DATAERR, "%s", msg);
}

/* Scale, normalize, clip, convert and write one row. */
void
put_row(struct out *ou, const char *where)
{
	size_t bad;
	int rc;

	if (scale_row(&ou->sc, ou->row, ou->frow, ou->d, &bad) != 0)
		cli_die(EX_DATAERR, "%s: feature %zu: %g does not fit in f32 "
		    "(use --dtype f64)", where, bad, ou->row[bad]);
	if (ou->sc.dtype == TS_F32)
		rc = ts_write_rows(ou->w, ou->frow, 1);
	else
		rc = ts_write_rows(ou->w, ou->row, 1);
	if (rc != 0)
		cli_wdie(ou->w, rc);
	if (++ou->rows % PROGRESS_EVERY == 0)
		cli_progress("rows", ou->rows, ou->total);
}

/* Put the label of the current row: a string (len bytes of s), or with s
 * NULL the integer v (idx); where names the row for messages.
 * @return 1 when the row is kept, 0 when it is dropped. */
int
put_label(struct out *ou, const char *s, size_t len, int32_t v,
    const char *where)
{
	struct labcol *l = &ou->lab;
	char vb[CSVLAY_SHOWN + 8], *copy, ib[16];
	int rc = s ? labcol_put(l, s, len) : labcol_put_int(l, v);

	if (rc >= 0)
		return rc;
	if (rc == PV_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	if (rc == PV_E_LIMIT)
		cli_die(EX_DATAERR, "more than %d distinct labels", INT32_MAX);
	if (s == NULL) {
		len = (size_t)snprintf(ib, sizeof ib, "%d", (int)v);
		s = ib;
	}
	copy = cli_malloc(len + 1);
	memcpy(copy, s, len);
	copy[len] = '\0';
	if (l->map_names != NULL)
		cli_die(EX_DATAERR, "%s: label '%s' is not in the label map "
		    "%s (or give --drop-unknown)", where,
		    csvlay_shown(copy, vb, sizeof vb), ou->map_label);
	cli_die(EX_DATAERR, "%s: label '%s' is not a class 0 .. %zu "
	    "(--classes %zu; or give --drop-unknown)", where,
	    csvlay_shown(copy, vb, sizeof vb), l->classes - 1, l->classes);
}

/* Begin X with d features; meta are X's tensor metadata (moved). */
void
begin_x(struct out *ou, size_t d, struct ts_meta *meta)
{
	const struct opts *o = ou->o;
	uint64_t dims[2] = { TS_UNKNOWN_ROWS, d };
	struct tensor t;
	int rc;

	ou->d = d;
	ou->row = cli_calloc(d, sizeof *ou->row);
	ou->frow = cli_calloc(d, sizeof *ou->frow);
	if (tensor_init(&t, "X", o->dtype, 2, dims) != 0)
		cli_die(EX_SOFTWARE, "bad tensor header");
	t.meta = *meta;
	memset(meta, 0, sizeof *meta);
	cli_meta_set(&t.meta, "normalize", o->normalize == SCALE_NORM_L1 ? "l1" :
	    o->normalize == SCALE_NORM_L2 ? "l2" : "none");
	cli_meta_set(&t.meta, "clip_rows", o->clip_arg ? o->clip_arg : "none");
	if (o->p.binary)
		cli_meta_set(&t.meta, "binary", "values other than 0 set to 1");
	if (ts_meta_get(&t.meta, "scale") == NULL) {
		rc = ou->sc.on ? ts_meta_setf(&t.meta, "scale", "%.17g:%.17g",
		    ou->sc.lo, ou->sc.hi) : ts_meta_set(&t.meta, "scale", "none");
		if (rc != 0)
			cli_die(EX_OSERR, "out of memory");
	}
	if ((rc = ts_write_begin(ou->w, &t)) != 0)
		cli_wdie(ou->w, rc);
	tensor_free(&t);
}

/* End X, write y (when there are labels) and the closing metadata. */
void
finish(struct out *ou, struct infile **inputs, int ninputs, const char *what)
{
	struct labcol *l = &ou->lab;
	struct ts_meta m = { 0 };
	struct tensor t;
	uint64_t dims[1];
	int rc;

	if (ou->st)
		scat_flush(ou);
	if ((rc = ts_write_end(ou->w)) != 0)
		cli_wdie(ou->w, rc);
	if (ou->has_y) {
		dims[0] = l->n;
		if (tensor_init(&t, "y", TS_I32, 1, dims) != 0)
			cli_die(EX_SOFTWARE, "bad tensor header");
		if (l->unknown)
			cli_warn("%llu rows with a label outside the declared "
			    "label set dropped", (unsigned long long)l->unknown);
		rc = labcol_finish(l, &t.meta);
		if (rc == PV_E_LIMIT)
			cli_die(EX_DATAERR, "%s: %zu distinct labels: their names "
			    "exceed the metadata limit of 1 MiB", what, l->tab.n);
		if (rc == PV_E_FORMAT)
			cli_die(EX_DATAERR, "%s: a label is not valid UTF-8", what);
		if (rc != 0)
			cli_die(EX_OSERR, "out of memory");
		t.data = l->y;
		if ((rc = ts_write_tensor(ou->w, &t)) != 0)
			cli_wdie(ou->w, rc);
		t.data = NULL;
		tensor_free(&t);
	}
	for (int i = 0; i < ninputs; i++)
		cli_prov_input(&m, i, infile_label(inputs[i]),
		    infile_digest(inputs[i]), NULL);
	if ((rc = ts_write_meta(ou->w, &m)) != 0 ||
	    (rc = ts_writer_finish(ou->w)) != 0)
		cli_wdie(ou->w, rc);
	ts_meta_free(&m);
	cli_progress_done();
	labcol_free(l);
	free(ou->row);
	free(ou->frow);
	scale_free(&ou->sc);
	scale_free(&ou->isc);
	scatter_free(ou->st);
	free(ou->img);
	free(ou->feat);
	free(ou->where);
}

void
set_names_meta(struct ts_meta *m, char **names, const size_t *idx, size_t d)
{
	size_t len;
	char *b = json_str_array(names, idx, d, TS_MAX_VALUE, &len);

	if (b == NULL)
		cli_die(EX_OSERR, "out of memory");
	/* Names longer than a metadata value allows are left out: they
	 * label columns, nothing downstream needs them. */
	if (len <= TS_MAX_VALUE && ts_utf8_valid(b, len) &&
	    ts_meta_set(m, "features.names", b) != 0)
		cli_die(EX_OSERR, "out of memory");
	free(b);
}
