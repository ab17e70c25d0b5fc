/* scat.c: featurize --scatter: images batched through the scattering
 * transform (featurize.h). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "featurize.h"
#include "scale.h"
#include "scatter.h"
#include "tstream.h"

/* --scatter J[:L] */
void
parse_scatter(struct opts *o, const char *arg)
{
	const char *colon = strchr(arg, ':');
	char j[32];

	if (colon && (size_t)(colon - arg) >= sizeof j)
		cli_usage_error("invalid --scatter '%s': expected J[:L]", arg);
	if (colon) {
		memcpy(j, arg, (size_t)(colon - arg));
		j[colon - arg] = '\0';
	} else
		snprintf(j, sizeof j, "%s", arg);
	o->sj = (int)cli_ll("--scatter", j, 1, SCATTER_MAX_J);
	o->sl = colon ? (int)cli_ll("--scatter", colon + 1, 1,
	    SCATTER_MAX_L) : 8;
}

/* Set up the transform of h x w images (of the input named what) and
 * its metadata in xm.  @return the features of a row. */
size_t
scat_begin(struct out *ou, size_t h, size_t w, const char *what,
    struct ts_meta *xm)
{
	const struct opts *o = ou->o;
	size_t c, d, cap;
	int rc = scatter_new(&ou->st, h, w, o->sj, o->sl, o->threads);

	if (rc == PV_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	if (rc != 0)
		cli_usage_error("--scatter %d:%d: 2^%d is too large for the "
		    "%zux%zu images of %s (the reflection padding must stay "
		    "below each side)", o->sj, o->sl, o->sj, h, w, what);
	c = scatter_channels(ou->st);
	if (o->groups && c % o->groups != 0)
		cli_usage_error("--group-norm %zu does not divide the %zu "
		    "channels of --scatter %d:%d", o->groups, c, o->sj, o->sl);
	d = scatter_size(ou->st);
	if (d > MAX_FEATURES)
		cli_die(EX_DATAERR, "%s: --scatter %d:%d on %zux%zu images "
		    "gives %zu features, more than %llu", what, o->sj, o->sl,
		    h, w, d, (unsigned long long)MAX_FEATURES);
	ou->hw = h * w;
	/* A batch of at most 64 MiB, at least one image a thread. */
	cap = ((size_t)64 << 20) / (ou->hw * sizeof *ou->img +
	    d * sizeof *ou->feat);
	if (cap > SCAT_BATCH)
		cap = SCAT_BATCH;
	if (cap < (size_t)o->threads)
		cap = (size_t)o->threads;
	ou->cap = cap;
	ou->img = cli_calloc(cap * ou->hw, sizeof *ou->img);
	ou->feat = cli_calloc(cap * d, sizeof *ou->feat);
	ou->where = cli_calloc(cap, sizeof *ou->where);
	if (ts_meta_set(xm, "features.kind", "scattering") != 0 ||
	    ts_meta_setf(xm, "features.scatter", "J=%d L=%d order=2",
	    o->sj, o->sl) != 0 ||
	    ts_meta_setf(xm, "features.shape", "%zu,%zu,%zu", c,
	    scatter_out_h(ou->st), scatter_out_w(ou->st)) != 0 ||
	    (o->groups ? ts_meta_setf(xm, "features.group_norm", "%zu",
	    o->groups) : ts_meta_set(xm, "features.group_norm", "none")) ||
	    (o->hwc && ts_meta_set(xm, "features.layout", "hwc") != 0) ||
	    (ts_meta_get(xm, "image.height") == NULL &&
	    (ts_meta_setf(xm, "image.height", "%zu", h) != 0 ||
	    ts_meta_setf(xm, "image.width", "%zu", w) != 0)))
		cli_die(EX_OSERR, "out of memory");
	if (ts_meta_get(xm, "scale") == NULL && (ou->isc.on ?
	    ts_meta_setf(xm, "scale", "%.17g:%.17g", ou->isc.lo,
	    ou->isc.hi) : ts_meta_set(xm, "scale", "none")) != 0)
		cli_die(EX_OSERR, "out of memory");
	return d;
}

/* After begin_x: a row holds an image's pixels, then its features. */
void
scat_rows(struct out *ou)
{
	if (ou->hw > ou->d) {
		free(ou->row);
		ou->row = cli_calloc(ou->hw, sizeof *ou->row);
	}
}

/* Transform, GroupNorm and write the batched images. */
void
scat_flush(struct out *ou)
{
	size_t c, per;

	if (ou->nb == 0)
		return;
	if (scatter_run(ou->st, ou->img, ou->nb, ou->feat) != 0)
		cli_die(EX_OSERR, "cannot start a thread");
	c = scatter_channels(ou->st);
	per = scatter_out_h(ou->st) * scatter_out_w(ou->st);
	for (size_t i = 0; i < ou->nb; i++) {
		double *f = ou->feat + i * ou->d;
		if (ou->o->groups)
			scatter_group_norm(f, c, per, ou->o->groups);
		if (ou->o->hwc)
			scatter_hwc(f, c, per, ou->row);
		else
			memcpy(ou->row, f, ou->d * sizeof *f);
		put_row(ou, ou->where[i]);
	}
	ou->nb = 0;
}

/* Scale the image in ou->row (hw pixels) and batch it. */
static void
scat_push(struct out *ou, const char *where)
{
	float *dst = ou->img + ou->nb * ou->hw;

	scale_bounds(&ou->isc, ou->row, ou->hw);
	for (size_t j = 0; j < ou->hw; j++) {
		if (!(fabs(ou->row[j]) <= FLT_MAX))
			cli_die(EX_DATAERR, "%s: pixel %zu: %g is not a finite "
			    "f32 (use --scale)", where, j, ou->row[j]);
		dst[j] = (float)ou->row[j];
	}
	snprintf(ou->where[ou->nb], WHERE, "%s", where);
	if (++ou->nb == ou->cap)
		scat_flush(ou);
}

/* A row of the input: an image to batch, or a row to write. */
void
take_row(struct out *ou, const char *where)
{
	if (ou->st)
		scat_push(ou, where);
	else
		put_row(ou, where);
}
