/*
 * tensor.h: the plain tensor struct and key/value metadata.
 *
 * Ownership: a struct tensor owns its data buffer (free with tensor_free)
 * and its metadata.  struct ts_meta owns every key and value string; the
 * setters copy their arguments.  All functions accept zeroed structs, and
 * the free functions accept NULL.
 */
#ifndef PRIVADA_TENSOR_H
#define PRIVADA_TENSOR_H

#include <stddef.h>
#include <stdint.h>

/* dtype codes as written in the stream (formats/tensor-stream.md, section 5).
 * Codes are never reused. */
enum ts_dtype {
	TS_F32 = 1,	/* IEEE-754 binary32 */
	TS_F64 = 2,	/* IEEE-754 binary64 */
	TS_I32 = 3,	/* two's complement 32-bit */
	TS_I64 = 4,	/* two's complement 64-bit */
	TS_U8 = 5	/* unsigned 8-bit */
};

#define TS_MAX_NDIM 8
#define TS_MAX_NAME 255			/* bytes in a tensor name */
#define TS_MAX_KEY 255			/* bytes in a metadata key */
#define TS_MAX_VALUE (1u << 20)		/* bytes in a metadata value */
#define TS_MAX_META 65536		/* entries in one metadata block */
#define TS_UNKNOWN_ROWS UINT64_MAX	/* dims[0] of a tensor streamed by rows */

struct ts_kv {
	char *key;
	char *val;
};

/* Key/value pairs in insertion order; keys are unique.  Read kv[0..n-1]
 * freely; change it only through the ts_meta_* functions, which keep a
 * hash index (slot) so lookups stay fast on hostile, large inputs. */
struct ts_meta {
	size_t n, cap;
	struct ts_kv *kv;
	size_t nslot;		/* 0, or a power of two > 2n */
	uint32_t *slot;		/* index + 1 into kv, 0 for empty */
};

struct tensor {
	char name[TS_MAX_NAME + 1];
	int dtype;			/* enum ts_dtype */
	int ndim;			/* 0..TS_MAX_NDIM */
	uint64_t dims[TS_MAX_NDIM];
	void *data;			/* row-major, little-endian host layout */
	struct ts_meta meta;
};

/* Size in bytes of one element of dtype, or 0 for an unknown code. */
size_t ts_dtype_size(int dtype);
/* Name ("f32", ...) of a dtype, or NULL for an unknown code. */
const char *ts_dtype_name(int dtype);
/* dtype code for a name, or 0 if unknown. */
int ts_dtype_from_name(const char *name);

/* Bytes in one row (product of dims[1..] times the element size; for
 * ndim 0 the element size).  @return 0 or -1 on overflow. */
int tensor_row_bytes(const struct tensor *t, uint64_t *out);
/* Number of rows: dims[0], or 1 for a scalar. */
uint64_t tensor_rows(const struct tensor *t);
/* Total elements and bytes, with dims[0] known.  @return 0 or -1 on overflow. */
int tensor_elems(const struct tensor *t, uint64_t *out);
int tensor_bytes(const struct tensor *t, uint64_t *out);

/* Initialise a header (no data).  dims are copied; name is truncated to
 * TS_MAX_NAME.  @return 0, or -1 if ndim or dtype is invalid. */
int tensor_init(struct tensor *t, const char *name, int dtype, int ndim,
    const uint64_t *dims);
/* Allocate zeroed data for a header with known dims.  @return 0, -1 on
 * overflow or out of memory. */
int tensor_alloc(struct tensor *t);
void tensor_free(struct tensor *t);

/* Name syntax: 1..255 bytes of [A-Za-z0-9_./-], not starting with '/' or '.'.
 * @return NULL if valid, else a static message. */
const char *ts_check_name(const char *name);
/* Key syntax: dotted lower_snake_case, [a-z0-9_] segments separated by '.',
 * no empty segment, 1..255 bytes.  @return NULL if valid, else a message. */
const char *ts_check_key(const char *key);
/* @return 1 if the n bytes at s are valid UTF-8 without NUL bytes. */
int ts_utf8_valid(const char *s, size_t n);

/* Metadata.  ts_meta_set replaces an existing value.  @return 0, or -1 out of
 * memory.  ts_meta_get returns the value or NULL. */
int ts_meta_set(struct ts_meta *m, const char *key, const char *val);
int ts_meta_setf(struct ts_meta *m, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
const char *ts_meta_get(const struct ts_meta *m, const char *key);
int ts_meta_del(struct ts_meta *m, const char *key);
void ts_meta_free(struct ts_meta *m);
/* Copy the entries of src whose key starts with prefix ("" for all) into dst.
 * An entry already in dst with a different value is a conflict: when
 * conflict_key is not NULL it is set to the key and -2 is returned (dst
 * keeps the entries merged so far); equal values merge silently.
 * @return 0, -1 out of memory, -2 conflict. */
int ts_meta_merge(struct ts_meta *dst, const struct ts_meta *src,
    const char *prefix, const char **conflict_key);
/* Copy every entry of src whose key does not start with skip_prefix. */
int ts_meta_copy_except(struct ts_meta *dst, const struct ts_meta *src,
    const char *skip_prefix);

#endif
