/* convert.c: tns to-csv, from-csv, to-npy and from-npy: tensors to and
 * from CSV and NumPy .npy files. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "csvin.h"
#include "ledger.h"
#include "npy.h"
#include "pverr.h"
#include "tensor.h"
#include "tns.h"
#include "tstream.h"
#include "tsvalue.h"

#define CSV_MAX_COLS (1u << 24)		/* columns named by to-csv --header */

static void
print_value(FILE *fp, int dtype, const unsigned char *p)
{
	char buf[TS_VALUE_TEXT];

	fputs(ts_value_format(buf, sizeof buf, dtype, p), fp);
}

/* CSV and NPY carry no ledger: whether the rows are raw records, models
 * fitted without privacy or outputs of DP releases is unknown, so the
 * output says so (formats/tensor-stream.md 10.1, rule 5) and DP tools
 * refuse it unless the user declares it (--assume-raw). */
static void
unknown_provenance(struct ts_meta *meta)
{
	cli_meta_set(meta, LEDGER_PROVENANCE_KEY, LEDGER_PROVENANCE_UNKNOWN);
}

/* ---- to-csv ---- */

/* Find the tensor --tensor names (or the first) and leave r on it.
 * Exits 65 naming what the stream has when it is absent. */
static void
seek_tensor(struct ts_reader *r, const char *label, const char *want,
    struct tensor *hdr)
{
	struct names all = { 0 };
	int rc;

	while ((rc = ts_read_next(r, hdr)) == 1) {
		if (want == NULL || strcmp(hdr->name, want) == 0) {
			names_free(&all);
			return;
		}
		names_add(&all, hdr->name, 0);
		tensor_free(hdr);
	}
	if (rc < 0)
		cli_rdie(r, rc);
	if (want == NULL)
		cli_die(EX_DATAERR, "%s: the stream has no tensor", label);
	cli_die(EX_DATAERR, "%s: no tensor '%s'; the stream has: %s", label,
	    want, names_list(&all));
}

/* Read the rest of the stream, so that a damaged end is still noticed. */
static void
drain(struct ts_reader *r)
{
	struct tensor hdr;
	int rc;

	while ((rc = ts_read_next(r, &hdr)) == 1)
		tensor_free(&hdr);
	if (rc < 0)
		cli_rdie(r, rc);
}

int
cmd_to_csv(struct opts *o, int argc, char **argv)
{
	const char *label;
	FILE *in, *out;
	struct ts_reader *r;
	struct tensor hdr;
	struct cli_rowbuf b = { NULL, 0 };
	uint64_t rb, cap, cols, n, esz;
	int done = 0;

	one_operand(argc, "to-csv");
	in = cli_open_in(argc ? argv[0] : NULL, &label);
	/* CSV is text: a terminal is fine. */
	out = cli_out_open(o->c.output, 1);
	r = cli_reader(in, label);
	seek_tensor(r, label, o->tensor, &hdr);
	if (hdr.ndim > 2)
		cli_die(EX_DATAERR, "%s: tensor '%s' has %d dimensions: to-csv "
		    "writes 1-D and 2-D tensors", label, hdr.name, hdr.ndim);
	esz = ts_dtype_size(hdr.dtype);
	rb = ts_reader_row_bytes(r);
	cols = hdr.ndim == 2 ? hdr.dims[1] : 1;
	if (o->header) {
		/* The header's size follows a declared dimension, not the
		 * data, so it is bounded. */
		if (cols > CSV_MAX_COLS)
			cli_die(EX_DATAERR, "%s: tensor '%s' has %llu columns: "
			    "too many for a CSV header", label, hdr.name,
			    (unsigned long long)cols);
		if (hdr.ndim < 2)
			fprintf(out, "%s\n", hdr.name);
		else {
			for (uint64_t j = 0; j < cols; j++)
				fprintf(out, "%s%s_%llu", j ? "," : "", hdr.name,
				    (unsigned long long)j);
			fputc('\n', out);
		}
	}
	cap = cli_rowbuf_rows(&b, rb, &hdr);
	while (!done) {
		n = cli_fill_rows(r, b.p, rb, cap, &done);
		for (uint64_t i = 0; i < n; i++) {
			for (uint64_t j = 0; j < cols; j++) {
				if (j)
					putc(',', out);
				print_value(out, hdr.dtype, b.p + i * rb + j * esz);
			}
			putc('\n', out);
		}
		if (ferror(out))
			cli_die(EX_IOERR, "write error: %s", strerror(errno));
	}
	tensor_free(&hdr);
	drain(r);
	ts_reader_close(r);
	cli_close_in(in);
	cli_rowbuf_free(&b);
	cli_out_commit();
	return 0;
}

/* ---- from-csv ---- */

int
cmd_from_csv(struct opts *o, int argc, char **argv)
{
	const char *label, *name = o->name ? o->name : "x", *bad;
	struct infile *in;
	struct csvin *c;
	struct ts_writer *w;
	struct ts_meta meta = { 0 }, prov = { 0 };
	struct tensor t;
	unsigned char *row = NULL;
	char **f;
	size_t nf, ncols = 0, esz = ts_dtype_size(o->dtype);
	uint64_t dims[2] = { TS_UNKNOWN_ROWS, 0 }, nrows = 0;
	int rc, begun = 0, have_cols = 0;

	one_operand(argc, "from-csv");
	if ((bad = ts_check_name(name)) != NULL)
		cli_usage_error("invalid --name '%s': %s", name, bad);
	in = cli_infile_open(argc ? argv[0] : NULL, 0);
	label = infile_label(in);
	w = cli_writer(cli_out_open(o->c.output, o->c.force), o->c.level);
	if ((c = csvin_open(infile_fp(in), label, ',')) == NULL)
		cli_die(EX_OSERR, "out of memory");
	while ((rc = csvin_next(c, &f, &nf)) == 1) {
		if (!have_cols) {
			ncols = nf;
			have_cols = 1;
			row = cli_reallocarray(NULL, ncols, esz);
			if (o->header)
				continue;
		} else if (nf != ncols) {
			free(row);
			cli_die(EX_DATAERR, "%s:%llu: %zu fields, expected %zu "
			    "like the first line", label,
			    (unsigned long long)csvin_line(c), nf, ncols);
		}
		for (size_t j = 0; j < nf; j++) {
			if ((bad = ts_value_parse(f[j], o->dtype, row + j * esz))
			    == NULL)
				continue;
			free(row);
			cli_die(EX_DATAERR, "%s:%llu: field %zu '%s' %s", label,
			    (unsigned long long)csvin_line(c), j + 1, f[j],
			    bad);
		}
		if (!begun) {
			dims[1] = ncols;
			if (tensor_init(&t, name, o->dtype, 2, dims) != 0)
				cli_die(EX_SOFTWARE, "bad tensor header");
			if ((rc = ts_write_begin(w, &t)) != 0)
				cli_wdie(w, rc);
			begun = 1;
		}
		if ((rc = ts_write_rows(w, row, 1)) != 0)
			cli_wdie(w, rc);
		nrows++;
	}
	if (rc < 0 && infile_error(in) != 0)
		cli_infile_die(in);
	if (rc < 0)
		cli_die(EX_DATAERR, "%s", csvin_errmsg(c));
	if (!begun) {
		/* No data rows: an empty tensor, as wide as the header. */
		dims[0] = 0;
		dims[1] = ncols;
		if (tensor_init(&t, name, o->dtype, 2, dims) != 0)
			cli_die(EX_SOFTWARE, "bad tensor header");
		if ((rc = ts_write_begin(w, &t)) != 0)
			cli_wdie(w, rc);
	}
	if ((rc = ts_write_end(w)) != 0)
		cli_wdie(w, rc);
	tensor_free(&t);
	csvin_close(c);
	cli_prov_input(&prov, 0, label, infile_digest(in), NULL);
	unknown_provenance(&meta);
	if (o->c.verbose)
		fprintf(stderr, "%s: %s: %llu rows of %zu columns\n", cli_prog(),
		    label, (unsigned long long)nrows, ncols);
	cli_infile_close(in);
	finish_stream(w, &meta, &prov);
	ts_meta_free(&prov);
	free(row);
	return 0;
}

/* ---- NumPy .npy ---- */

int
cmd_from_npy(struct opts *o, int argc, char **argv)
{
	const char *label, *name = o->name ? o->name : "x", *bad;
	struct infile *in;
	FILE *fp;
	struct ts_writer *w;
	struct ts_meta meta = { 0 }, prov = { 0 };
	struct tensor t;
	struct cli_rowbuf b = { NULL, 0 };
	char msg[NPY_MSG];
	uint64_t rb, rows, cap;
	int rc;

	one_operand(argc, "from-npy");
	if ((bad = ts_check_name(name)) != NULL)
		cli_usage_error("invalid --name '%s': %s", name, bad);
	in = cli_infile_open(argc ? argv[0] : NULL, 0);
	label = infile_label(in);
	fp = infile_fp(in);
	w = cli_writer(cli_out_open(o->c.output, o->c.force), o->c.level);
	if ((rc = npy_read_header(fp, name, &t, msg)) != 0) {
		if (rc == PV_E_IO)
			cli_infile_die(in);
		if (rc == PV_E_USAGE)
			cli_die(EX_SOFTWARE, "%s", msg);
		if (rc == PV_E_NOMEM)
			cli_die(EX_OSERR, "out of memory");
		cli_die(EX_DATAERR, "%s: %s", label, msg);
	}
	tensor_row_bytes(&t, &rb);
	rows = tensor_rows(&t);
	if ((rc = ts_write_begin(w, &t)) != 0)
		cli_wdie(w, rc);
	cap = cli_rowbuf_rows(&b, rb, &t);
	for (uint64_t done = 0; done < rows;) {
		uint64_t k = rows - done < cap ? rows - done : cap;
		size_t got = fread(b.p, 1, (size_t)(k * rb), fp);
		if (got != k * rb) {
			if (ferror(fp))
				cli_infile_die(in);
			cli_die(EX_DATAERR, "%s: truncated: array data ends "
			    "inside row %llu of %llu", label,
			    (unsigned long long)(done + got / (rb ? rb : 1)),
			    (unsigned long long)rows);
		}
		if ((rc = ts_write_rows(w, b.p, k)) != 0)
			cli_wdie(w, rc);
		done += k;
	}
	if (fgetc(fp) != EOF)
		cli_die(EX_DATAERR, "%s: trailing bytes after the array data",
		    label);
	if (ferror(fp))
		cli_infile_die(in);
	if ((rc = ts_write_end(w)) != 0)
		cli_wdie(w, rc);
	tensor_free(&t);
	cli_prov_input(&prov, 0, label, infile_digest(in), NULL);
	unknown_provenance(&meta);
	cli_infile_close(in);
	finish_stream(w, &meta, &prov);
	ts_meta_free(&prov);
	cli_rowbuf_free(&b);
	return 0;
}

int
cmd_to_npy(struct opts *o, int argc, char **argv)
{
	const char *label;
	FILE *in, *out;
	struct ts_reader *r;
	struct tensor hdr;
	char head[NPY_HEADER_BUF];
	size_t hn;
	uint64_t nb;
	int rc;

	one_operand(argc, "to-npy");
	if ((o->c.output == NULL || strcmp(o->c.output, "-") == 0) && !o->c.force &&
	    isatty(STDOUT_FILENO))
		cli_usage_error("refusing to write .npy data to a terminal "
		    "(redirect stdout, use --output, or --force)");
	in = cli_open_in(argc ? argv[0] : NULL, &label);
	out = cli_out_open(o->c.output, 1);
	r = cli_reader(in, label);
	seek_tensor(r, label, o->tensor, &hdr);
	/* The header states the row count, so a streamed tensor is read
	 * into memory first. */
	if ((rc = ts_read_data(r, &hdr)) != 0)
		cli_rdie(r, rc);
	drain(r);
	if ((hn = npy_header(head, sizeof head, &hdr)) == 0)
		cli_die(EX_SOFTWARE, "%s: dtype %d has no .npy type", label,
		    hdr.dtype);
	tensor_bytes(&hdr, &nb);
	if (fwrite(head, 1, hn, out) != hn ||
	    fwrite(hdr.data, 1, (size_t)nb, out) != (size_t)nb)
		cli_die(EX_IOERR, "write error: %s", strerror(errno));
	tensor_free(&hdr);
	ts_reader_close(r);
	cli_close_in(in);
	cli_out_commit();
	return 0;
}
