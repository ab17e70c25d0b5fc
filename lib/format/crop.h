/*
 * crop.h: crop an image to the bounding box of its pixels above a
 * threshold, pad the box to a square with the digit centred, then resize
 * it (idx_resize, area averaging) to a fixed size.  featurize
 * --crop-bbox uses it.  Per image and data-independent: the output of an
 * image depends on that image only.
 *
 * The box: the smallest rows r0..r1 and columns c0..c1 holding every
 * pixel > thr (the whole frame when none is).  The square: side
 * s = max(bh, bw) + 2 * margin, background 0, the box placed at row
 * margin + floor((s - 2 margin - bh) / 2), column likewise.
 *
 * Ownership: a crop is the caller's (crop_free accepts NULL); it keeps
 * one idx_resize per square side seen.  Nothing here prints, exits or
 * reads the environment.  Errors: PV_E_NOMEM, PV_E_RANGE (a zero side).
 */
#ifndef PRIVADA_CROP_H
#define PRIVADA_CROP_H

#include "pverr.h"

#include <stddef.h>
#include <stdint.h>

#define CROP_MAX_MARGIN 1024

struct crop;

/* Images of h x w bytes, pixels above thr, margin pixels of background
 * around the box, resized to th x tw.  @return 0 with *out, or an error. */
int crop_new(struct crop **out, uint64_t h, uint64_t w, unsigned thr,
    uint64_t margin, uint64_t th, uint64_t tw);

/* Crop, pad and resize pix (h*w bytes, row-major) into out (th*tw).
 * @return 0 or PV_E_NOMEM (a resize of a new side). */
int crop_apply(struct crop *c, const unsigned char *pix, double *out);

/* The square of the last crop_apply: side *s, s*s bytes. */
const unsigned char *crop_square(const struct crop *c, uint64_t *s);

void crop_free(struct crop *c);

#endif
