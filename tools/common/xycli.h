/*
 * xycli.h: the labelled rows a trainer reads (tools only, like cli.h:
 * these print and exit on error).  A stream's X (f32 or f64 of 2
 * dimensions) is read whole as f32 rows, its y (i32, i64 or u8) as i32
 * labels with its label set; a label outside [0, INT32_MAX] becomes -1,
 * never a class.
 *
 *   struct xyset s;
 *   xy_read(&s, fp, label, 1);        // 1: y is required
 *   xy_zero_rows(&s, dp);             // before training
 *   xy_free(&s);
 */
#ifndef PRIVADA_XYCLI_H
#define PRIVADA_XYCLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "labels.h"
#include "tstream.h"

struct xyset {
	const char *label;		/* the name errors use */
	float *X;			/* n x d */
	int32_t *y;			/* n labels, or NULL */
	size_t n, d;
	struct ts_meta meta;		/* the stream's */
	uint64_t digest;
	struct label_set lset;		/* y's label set */
	char *label_names;		/* lset.names (owned), or NULL */
	size_t img_h, img_w;		/* X's image.height and image.width
					 * (tensor metadata), or 0 */
	size_t fshape[3];		/* X's features.shape C,H,W (featurize
					 * --scatter), or zeros */
	int fhwc;			/* features.layout is hwc: a row is
					 * fshape channel last */
};

/* Read the stream fp (opened by the caller, who closes it) into s; exit
 * 65 without X, or without y when need_y. */
void xy_read(struct xyset *s, FILE *fp, const char *label, int need_y);

void xy_free(struct xyset *s);

/* Exit 65 unless every label is a class of [0, K) (public data, or a run
 * without privacy). */
void xy_check_labels(const struct xyset *s, size_t K);

/* Drop the rows without a label (-1: queries teacher-vote left
 * unanswered); with verbose, say how many on stderr.  Exit 65 when no
 * row is left. */
void xy_drop_unlabelled(struct xyset *s, int verbose);

/* Zero the rows with a non-finite value; warn of their count only when
 * the rows are not protected (dp 0). */
void xy_zero_rows(struct xyset *s, int dp);

#endif
