/*
 * idx.h: the IDX files of MNIST and Fashion-MNIST (big-endian dims, then
 * the values), unsigned bytes only, and resizing their images by area
 * averaging.  featurize --format idx uses it.
 *
 * Ownership: idx_read_header borrows fp and reads exactly the header; an
 * idx_resize is the caller's (idx_resize_free accepts NULL).  Nothing here
 * prints, exits or reads the environment.
 *
 * Errors: PV_E_IO (ferror on fp), PV_E_TRUNCATED, PV_E_FORMAT (magic,
 * type or number of dimensions), PV_E_LIMIT (an image over
 * IDX_MAX_ELEMS), PV_E_NOMEM.  Messages name the byte offset at fault.
 */
#ifndef PRIVADA_IDX_H
#define PRIVADA_IDX_H

#include "pverr.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define IDX_MAX_NDIM 4
#define IDX_MAX_ELEMS (UINT64_C(1) << 24)	/* bytes in one image */
#define IDX_MSG 128				/* bytes of a message */

struct idx_header {
	uint64_t n;			/* dims[0]: images (or labels) */
	uint64_t elems;			/* bytes per item: dims[1..] */
	uint64_t dims[IDX_MAX_NDIM];
	int ndim;			/* 1 .. IDX_MAX_NDIM */
};

/*
 * Read and check an IDX header of unsigned bytes (type 0x08) with 1 to 4
 * dimensions from fp.  elems is checked against IDX_MAX_ELEMS as each
 * dimension is read.
 * @return 0, or a PV_E_* code with msg set ("offset 3: ...").
 */
int idx_read_header(FILE *fp, struct idx_header *x, char msg[IDX_MSG]);

/*
 * Area-averaging resize of h x w images to th x tw: target cell i of n
 * source cells covers [i*n/m, (i+1)*n/m); each source cell contributes
 * its overlap / n, so a constant image stays constant and the total
 * intensity per row scales by m / n.  Rows first, then columns.
 */
struct idx_resize;

/* @return 0 with *out, or PV_E_NOMEM (or PV_E_RANGE for a zero target
 * side). */
int idx_resize_new(struct idx_resize **out, uint64_t h, uint64_t w,
    uint64_t th, uint64_t tw);
/* Resize one image pix (h*w bytes, row-major) into out (th*tw). */
void idx_resize_apply(struct idx_resize *rs, const unsigned char *pix,
    double *out);
void idx_resize_free(struct idx_resize *rs);

#endif
