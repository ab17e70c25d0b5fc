/*
 * npy.h: NumPy's .npy format (NEP 1, versions 1.0 to 3.0), the header
 * only: the bytes after it are the array in C order, little-endian, as
 * in a tensor's data.  tns from-npy and to-npy use it.
 *
 * Types: <f4 <f8 <i4 <i8 |u1 (and <u1), the dtypes of a tensor stream;
 * fortran_order must be False.
 *
 * Ownership: the caller owns every buffer; npy_read_header borrows fp and
 * reads exactly the header, leaving fp at the first data byte.  Nothing
 * here prints, exits or reads the environment.
 *
 * Errors: PV_E_IO (ferror on fp), PV_E_TRUNCATED, PV_E_FORMAT (bad magic
 * or header dict), PV_E_VERSION, PV_E_LIMIT (header or element count),
 * PV_E_OVERFLOW (the shape's size), PV_E_NOMEM.  The message says where,
 * as "offset N: what is wrong".
 */
#ifndef PRIVADA_NPY_H
#define PRIVADA_NPY_H

#include "pverr.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tensor.h"

#define NPY_MAX_HEADER 65536u	/* bytes in a .npy header dict */
#define NPY_GROWTH_DIGITS 21	/* numpy's spare room for dims[0] */
#define NPY_ALIGN 64		/* numpy >= 1.14 aligns data to 64 */
#define NPY_HEADER_BUF 512	/* enough for any header npy_header writes */
#define NPY_MSG 160		/* bytes of a message, with its NUL */

/* The .npy descr of a tensor dtype ("<f8"), or NULL. */
const char *npy_descr(int dtype);

/*
 * Parse the header dict in h[0..n) (the Python literal after the length
 * field, ending in a newline).
 * @return NULL, with *dtype, *ndim and dims[0..*ndim) set; or a message
 * (static storage) naming the field at fault.
 */
const char *npy_parse_dict(const char *h, size_t n, int *dtype, int *ndim,
    uint64_t *dims);

/*
 * Read the magic, version, length and dict of a .npy file from fp, and
 * set t to a tensor header (data NULL) named name with its dtype and
 * shape; the element count is checked against TS_MAX_ELEMS.
 * @return 0 (release t with tensor_free), or a PV_E_* code with msg set.
 */
int npy_read_header(FILE *fp, const char *name, struct tensor *t,
    char msg[NPY_MSG]);

/*
 * Write into buf the header numpy's np.save writes for t (format 1.0,
 * numpy >= 1.24, byte for byte): magic, version, length, the dict, room
 * for dims[0] to grow to 21 digits, and padding so the data starts at a
 * multiple of 64 bytes.  len must be at least NPY_HEADER_BUF.
 * @return its length in bytes, or 0 when t's dtype has no .npy type.
 */
size_t npy_header(char *buf, size_t len, const struct tensor *t);

#endif
