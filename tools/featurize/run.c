/* run.c: featurize's readers: CSV, IDX images, text (featurize.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "crop.h"
#include "csvin.h"
#include "csvlay.h"
#include "feat.h"
#include "featurize.h"
#include "idx.h"
#include "labcol.h"
#include "scale.h"
#include "strtab.h"
#include "tensor.h"
#include "text.h"
#include "tstream.h"

/* ---- CSV ---- */

/* A column index option value; a bad one is a usage error. */
static uint64_t
index_arg(const char *opt, const char *s)
{
	char msg[CSVLAY_MSG];
	uint64_t v;

	if (csvlay_index(opt, s, &v, msg) != 0)
		cli_usage_error("%s", msg);
	return v;
}

static void
csv_params(const struct opts *o, struct csvlay_params *p)
{
	p->columns = o->p.columns;
	p->label = o->p.label;
	p->header = o->header;
	p->missing = o->missing;
}

void
run_csv(struct out *ou, const struct opts *o, struct infile *in,
    struct infile *pub, struct infile **inputs, int ninputs)
{
	struct ts_meta xm = { 0 };
	struct csvlay_params p;
	struct feat_csv fc;
	char where[600], msg[FEAT_MSG];
	int rc;

	csv_params(o, &p);
	if ((rc = feat_csv_open(&fc, infile_fp(in), infile_label(in), &p,
	    msg)) != 0)
		feat_die(in, rc, msg);
	if (pub) {
		cli_warn("--scale-from: learning feature bounds from '%s', "
		    "which you declare public; never pass private data here",
		    infile_label(pub));
		if ((rc = feat_learn_bounds(o->sj ? &ou->isc : &ou->sc,
		    infile_fp(pub),
		    infile_label(pub), &p, fc.L.d, msg)) != 0)
			feat_die(pub, rc, msg);
		cli_meta_set(&xm, "scale", "per-feature bounds of a public "
		    "file");
		cli_meta_set(&xm, "scale.public", infile_label(pub));
	}
	if (fc.L.names)
		set_names_meta(&xm, fc.L.names, fc.L.feat, fc.L.d);
	ou->has_y = fc.L.label >= 0;
	if (o->sj) {
		size_t d;
		if (fc.L.d != o->ih * o->iw)
			cli_die(EX_DATAERR, "%s: %zu feature columns, but "
			    "--image %llux%llu needs %llu", infile_label(in),
			    fc.L.d, (unsigned long long)o->ih,
			    (unsigned long long)o->iw,
			    (unsigned long long)(o->ih * o->iw));
		d = scat_begin(ou, (size_t)o->ih, (size_t)o->iw,
		    infile_label(in), &xm);
		begin_x(ou, d, &xm);
		scat_rows(ou);
	} else
		begin_x(ou, fc.L.d, &xm);
	while ((rc = feat_csv_next(&fc, ou->row, msg)) == 1) {
		const char *lab = ou->has_y ? fc.f[fc.L.label] : NULL;
		snprintf(where, sizeof where, "%s:%llu", infile_label(in),
		    (unsigned long long)csvin_line(fc.c));
		if (lab && !put_label(ou, lab, strlen(lab), 0, where))
			continue;
		take_row(ou, where);
	}
	if (rc < 0)
		feat_die(in, rc, msg);
	if (fc.L.replaced)
		cli_warn("%llu bad or missing values replaced by 0",
		    (unsigned long long)fc.L.replaced);
	if (fc.L.dropped)
		cli_warn("%llu rows with bad or missing values dropped",
		    (unsigned long long)fc.L.dropped);
	feat_csv_close(&fc);
	finish(ou, inputs, ninputs, infile_label(in));
}

/* ---- IDX ---- */

static void
idx_header(struct infile *s, struct idx_header *x)
{
	char msg[IDX_MSG];
	int rc = idx_read_header(infile_fp(s), x, msg);

	if (rc == 0)
		return;
	if (rc == PV_E_IO || (rc == PV_E_TRUNCATED && infile_error(s)))
		cli_infile_die(s);
	cli_die(EX_DATAERR, "%s: %s", infile_label(s), msg);
}

void
run_idx(struct out *ou, const struct opts *o, struct infile *in,
    struct infile *lab, struct infile **inputs, int ninputs)
{
	struct idx_header x, y;
	struct ts_meta xm = { 0 };
	unsigned char *pix;
	uint64_t h = 0, w = 0, th, tw;
	struct idx_resize *rs = NULL;
	struct crop *cr = NULL;
	char where[600];

	idx_header(in, &x);
	if (x.ndim < 2)
		cli_die(EX_DATAERR, "%s: offset 3: IDX with 1 dimension holds "
		    "labels, not images (give it to --labels)", infile_label(in));
	if (lab) {
		idx_header(lab, &y);
		if (y.ndim != 1)
			cli_die(EX_DATAERR, "%s: offset 3: a labels file has 1 "
			    "dimension, not %d", infile_label(lab), y.ndim);
		if (y.n != x.n)
			cli_die(EX_DATAERR, "%s: %llu labels for %llu images in "
			    "%s", infile_label(lab), (unsigned long long)y.n,
			    (unsigned long long)x.n, infile_label(in));
	}
	if (o->p.resize && x.ndim != 3)
		cli_usage_error("--resize needs images of 3 dimensions (N, H, "
		    "W); %s has %d", infile_label(in), x.ndim);
	th = tw = 0;
	if (x.ndim == 3) {
		h = x.dims[1];
		w = x.dims[2];
		th = o->p.resize ? o->rh : h;
		tw = o->p.resize ? o->rw : w;
		if (ts_meta_setf(&xm, "image.height", "%llu",
		    (unsigned long long)th) != 0 ||
		    ts_meta_setf(&xm, "image.width", "%llu",
		    (unsigned long long)tw) != 0)
			cli_die(EX_OSERR, "out of memory");
	}
	if (x.elems == 0)
		cli_die(EX_DATAERR, "%s: images of 0 pixels", infile_label(in));
	if (o->p.resize && th * w > 4 * MAX_FEATURES)
		cli_die(EX_DATAERR, "%s: images of %llux%llu pixels are too "
		    "large to resize", infile_label(in), (unsigned long long)h,
		    (unsigned long long)w);
	if (o->p.crop) {
		int rc = crop_new(&cr, h, w, o->crop_thr, CROP_MARGIN, th, tw);
		if (rc == PV_E_NOMEM)
			cli_die(EX_OSERR, "out of memory");
		if (rc != 0)
			cli_die(EX_DATAERR, "%s: images of %llux%llu pixels "
			    "are too large to crop", infile_label(in),
			    (unsigned long long)h, (unsigned long long)w);
		cli_meta_set(&xm, "image.crop", "bbox");
		if (ts_meta_setf(&xm, "image.crop_threshold", "%u",
		    o->crop_thr) != 0 ||
		    ts_meta_setf(&xm, "image.crop_margin", "%d",
		    CROP_MARGIN) != 0)
			cli_die(EX_OSERR, "out of memory");
	} else if (o->p.resize && idx_resize_new(&rs, h, w, th, tw) != 0)
		cli_die(EX_OSERR, "out of memory");
	if (o->sj && x.ndim != 3)
		cli_die(EX_DATAERR, "%s: offset 3: --scatter needs images of 3 "
		    "dimensions (N, H, W), not %d", infile_label(in), x.ndim);
	ou->total = x.n;
	pix = cli_malloc((size_t)x.elems);
	ou->has_y = lab != NULL;
	if (o->sj) {
		begin_x(ou, scat_begin(ou, (size_t)th, (size_t)tw,
		    infile_label(in), &xm), &xm);
		scat_rows(ou);
	} else
		begin_x(ou, (size_t)(o->p.resize ? th * tw : x.elems), &xm);
	for (uint64_t i = 0; i < x.n; i++) {
		char what[64];
		snprintf(what, sizeof what, "image %llu of %llu",
		    (unsigned long long)i, (unsigned long long)x.n);
		cli_infile_read(in, pix, (size_t)x.elems, what);
		if (lab) {
			unsigned char lb;
			snprintf(what, sizeof what, "label %llu of %llu",
			    (unsigned long long)i, (unsigned long long)x.n);
			cli_infile_read(lab, &lb, 1, what);
			snprintf(where, sizeof where, "%s: %s",
			    infile_label(lab), what);
			if (!put_label(ou, NULL, 0, lb, where))
				continue;
		}
		if (cr) {
			if (crop_apply(cr, pix, ou->row) != 0)
				cli_die(EX_OSERR, "out of memory");
		} else if (!o->p.resize) {
			for (size_t j = 0; j < x.elems; j++)
				ou->row[j] = pix[j];
		} else {
			idx_resize_apply(rs, pix, ou->row);
		}
		snprintf(where, sizeof where, "%s: image %llu", infile_label(in),
		    (unsigned long long)i);
		take_row(ou, where);
	}
	cli_infile_end(in, x.n, "images");
	if (lab)
		cli_infile_end(lab, x.n, "labels");
	free(pix);
	idx_resize_free(rs);
	crop_free(cr);
	finish(ou, inputs, ninputs, infile_label(in));
}

/* ---- text ---- */

void
run_text(struct out *ou, const struct opts *o, struct infile *in,
    struct infile *vsrc, struct infile **inputs, int ninputs)
{
	struct strtab vocab = { 0 };
	struct text_counter tc = { 0 };
	struct ts_meta xm = { 0 };
	char *line = NULL, where[600], msg[FEAT_MSG], tmsg[TEXT_MSG];
	size_t cap = 0, ulen;
	uint64_t ln = 0, lfield = 0;
	size_t d;
	int rc;

	if (o->p.label)
		lfield = index_arg("--label", o->p.label);
	if (vsrc) {
		if ((rc = feat_read_vocab(&vocab, infile_fp(vsrc),
		    infile_label(vsrc), MAX_FEATURES, msg)) != 0)
			feat_die(vsrc, rc, msg);
		d = vocab.n;
		set_names_meta(&xm, vocab.keys, NULL, d);
		cli_meta_set(&xm, "features.kind", "vocabulary counts");
	} else {
		d = (size_t)o->hash_dim;
		if (ts_meta_set(&xm, "features.kind", "hashed counts") != 0 ||
		    ts_meta_set(&xm, "features.hash", "xxh64") != 0 ||
		    ts_meta_setf(&xm, "features.hash_seed", "%d",
		    TEXT_HASH_SEED) != 0)
			cli_die(EX_OSERR, "out of memory");
	}
	cli_meta_set(&xm, "features.ngrams", "1,2");
	tc.vocab = vsrc ? &vocab : NULL;
	tc.d = d;
	ou->has_y = o->p.label != NULL;
	begin_x(ou, d, &xm);
	while ((rc = text_read_line(infile_fp(in), &line, &cap, &ulen,
	    TEXT_MAX_LINE)) > 0) {
		char *doc = line;
		size_t dn;
		ssize_t len = (ssize_t)ulen;
		ln++;
		while (len > 0 && (line[len - 1] == '\n' ||
		    line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len == 0)
			continue;
		if (memchr(line, '\0', (size_t)len) != NULL)
			cli_die(EX_DATAERR, "%s:%llu: NUL byte in the line",
			    infile_label(in), (unsigned long long)ln);
		dn = (size_t)len;
		snprintf(where, sizeof where, "%s:%llu", infile_label(in),
		    (unsigned long long)ln);
		if (o->p.label) {
			/* Cut field lfield out of the line: it is the label,
			 * the rest is the document. */
			char *p, *e;
			rc = text_label(line, (size_t)len, lfield, &p, &e, tmsg);
			if (rc > 0 && o->missing == CSVLAY_MISS_DROP)
				continue;
			if (rc != 0)
				cli_die(EX_DATAERR, "%s: %s", where, tmsg);
			if (!put_label(ou, p, (size_t)(e - p), 0, where))
				continue;
			/* Blank out the label so it is not a token. */
			memset(p, '\t', (size_t)(e - p));
		}
		if (text_count(&tc, doc, dn, ou->row) != 0)
			cli_die(EX_OSERR, "out of memory");
		put_row(ou, where);
		/* put_row transformed the row in place: clear it all when
		 * it was scaled (every entry may have moved), else only the
		 * touched entries. */
		if (ou->sc.on)
			memset(ou->row, 0, d * sizeof *ou->row);
		else
			text_clear(&tc, ou->row);
	}
	if (infile_error(in) || ferror(infile_fp(in)))
		cli_infile_die(in);
	if (rc == PV_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	if (rc == PV_E_LIMIT)
		cli_die(EX_DATAERR, "%s:%llu: line longer than %zu bytes (256 "
		    "MiB, the limit of a CSV field)", infile_label(in),
		    (unsigned long long)ln + 1, TEXT_MAX_LINE);
	free(line);
	text_counter_free(&tc);
	strtab_free(&vocab);
	finish(ou, inputs, ninputs, infile_label(in));
}
