/*
 * arch.c: dpsgd-train --arch, --input-shape and --activation: their
 * combinations with the other options, and the input shape.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dpsgd-train.h"

void
arch_check(const struct opts *o)
{
	if (o->arch == NULL) {
		if (o->shape[0] != 0 || o->has_act)
			cli_usage_error("--input-shape and --activation need "
			    "--arch");
		return;
	}
	if (o->g.hidden || o->nhidden)
		cli_usage_error("--arch and --hidden both give the layers: "
		    "give one");
	if (o->init != NULL)
		cli_usage_error("--arch does not apply with --init (the "
		    "model's architecture is its own)");
	if (o->p.adapt != DPSGD_CLASSIFY || o->ncm)
		cli_usage_error("--arch: only --mode classify trains "
		    "convolutional models");
	if (o->norm_sigma > 0)
		cli_usage_error("--arch: --normalize folds into a dense first "
		    "layer only; standardise the images beforehand");
}

void
arch_shape(const struct opts *o, const struct xyset *tr, size_t *shape)
{
	size_t h = tr->img_h, w = tr->img_w, d = tr->d;
	const char *label = tr->label;

	if (o->shape[0] != 0) {
		if (o->shape[0] * o->shape[1] * o->shape[2] != d)
			cli_die(EX_DATAERR, "%s: %zu features, but "
			    "--input-shape %zux%zux%zu has %zu", label, d,
			    o->shape[0], o->shape[1], o->shape[2],
			    o->shape[0] * o->shape[1] * o->shape[2]);
		memcpy(shape, o->shape, 3 * sizeof *shape);
		return;
	}
	if (tr->fshape[0] * tr->fshape[1] * tr->fshape[2] == d && d != 0) {
		/* featurize --scatter: C,H,W, channel last with --layout
		 * hwc, channel-major (not images as a convolution reads
		 * them) without. */
		if (!tr->fhwc)
			cli_usage_error("--arch: the rows of %s are %zu "
			    "channels of %zux%zu in channel-major order: "
			    "write them channel last with featurize --layout "
			    "hwc", label, tr->fshape[0], tr->fshape[1],
			    tr->fshape[2]);
		shape[0] = tr->fshape[1];
		shape[1] = tr->fshape[2];
		shape[2] = tr->fshape[0];
		return;
	}
	if (h == 0 || w == 0 || h * w != d)
		cli_usage_error("--arch: %s does not hold images of "
		    "image.height x image.width pixels: give --input-shape",
		    label);
	shape[0] = h;
	shape[1] = w;
	shape[2] = 1;
}
