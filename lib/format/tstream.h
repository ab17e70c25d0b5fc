/*
 * tstream.h: reader and writer of tensor streams (formats/tensor-stream.md).
 *
 * A stream is zstd-compressed; inside it, records: a header, stream
 * metadata and tensors (a header record, row chunks, an end-of-tensor
 * record), and a final end record with counts, so truncation is detected.
 *
 * Ownership: readers and writers borrow the FILE they are given and never
 * close it.  Tensor headers returned by ts_read_next are the caller's
 * (release with tensor_free).  Strings returned by *_errmsg belong to the
 * handle and live until the next call on it.  The free functions accept
 * NULL.  Nothing here prints, exits or reads the environment.
 *
 * Errors are negative TS_E* values (pinned: never renumbered); after an
 * error a handle only answers *_errmsg and *_close.
 */
#ifndef PRIVADA_TSTREAM_H
#define PRIVADA_TSTREAM_H

#include "pverr.h"

#include <stdint.h>
#include <stdio.h>

#include "tensor.h"
#include "xxh64.h"

enum ts_error {
	TS_OK = PV_OK,
	TS_E_IO = PV_E_IO,		/* read or write error (errno text in message) */
	TS_E_NOMEM = PV_E_NOMEM,	/* out of memory */
	TS_E_ZSTD = PV_E_ZSTD,		/* corrupt compressed data */
	TS_E_TRUNCATED = PV_E_TRUNCATED,	/* input ends early */
	TS_E_FORMAT = PV_E_FORMAT,	/* malformed record or field */
	TS_E_VERSION = PV_E_VERSION,	/* unsupported major version */
	TS_E_LIMIT = PV_E_LIMIT,	/* a size exceeds a reader limit */
	TS_E_OVERFLOW = PV_E_OVERFLOW,	/* a size computation overflows */
	TS_E_CHECKSUM = PV_E_CHECKSUM,	/* zstd content checksum mismatch or missing */
	TS_E_USAGE = PV_E_USAGE	/* API used out of order or with bad arguments */
};

#define TS_VERSION_MAJOR 1
#define TS_VERSION_MINOR 0

/* Default reader limits (formats/tensor-stream.md, section 11). */
#define TS_MAX_HEADER (16u << 20)		/* body of a header or metadata record */
#define TS_MAX_BYTES (UINT64_C(1) << 36)	/* one tensor read into memory (64 GiB) */
#define TS_MAX_ELEMS (UINT64_C(1) << 40)	/* elements of one tensor */
#define TS_MAX_TENSORS 65536			/* tensors in one stream */
#define TS_WINDOW_LOG_MAX 27			/* zstd window: 128 MiB */

/* Name of an error code, e.g. "truncated input". */
const char *ts_strerror(int code);

/* ---- reading ---- */

struct ts_reader;

/* Create a reader on fp.  label names the input in messages ("<stdin>",
 * a path).  Nothing is read yet.  @return NULL when out of memory. */
struct ts_reader *ts_reader_open(FILE *fp, const char *label);
void ts_reader_close(struct ts_reader *r);

/* Lower the reader's limits (0 keeps a default).  Used by tests. */
void ts_reader_set_limits(struct ts_reader *r, uint64_t max_header,
    uint64_t max_bytes);

/* With on, before the first read: fread the input ahead in one helper
 * thread (a few MiB), overlapping input with decompression and parsing.
 * Decompression, the frame checks and the parse stay in this thread, so
 * results, errors, messages, offsets and the digest are those of the
 * synchronous reader.  fp must not be used by the caller until
 * ts_reader_close, which waits for a pending fread: use it on regular
 * files, not on pipes or terminals that may never deliver.  It pays only
 * with more than one CPU.  A thread that cannot start leaves the reader
 * synchronous; on 0 does nothing.
 * @return 0, or TS_E_USAGE after the first read. */
int ts_reader_set_async(struct ts_reader *r, int on);

/* Advance to the next tensor, skipping unread rows of the current one.
 * On 1, *hdr holds the tensor's name, dtype, dims (dims[0] is
 * TS_UNKNOWN_ROWS when rows are streamed) and metadata, with data NULL.
 * A tensor whose row exceeds 1 MiB has its first row read ahead into a
 * buffer that grows with the data present, so that a declared row the
 * input does not hold fails here (TS_E_TRUNCATED) before any caller
 * allocates one (spec section 11).
 * @return 1 for a tensor, 0 at the end of a valid stream (end record
 * checked, nothing trailing), or a negative TS_E* code. */
int ts_read_next(struct ts_reader *r, struct tensor *hdr);

/* Read up to maxrows rows of the current tensor into buf.
 * @return rows read (> 0), 0 when the tensor is complete (its end record
 * checked), or a negative TS_E* code. */
int64_t ts_read_rows(struct ts_reader *r, void *buf, uint64_t maxrows);

/* Read all rows of the current tensor into t->data (allocated, growing
 * with the data actually present, never beyond the limits); t is the
 * header ts_read_next filled, and dims[0] is set to the row count.
 * @return 0 or a negative TS_E* code. */
int ts_read_data(struct ts_reader *r, struct tensor *t);

/* Bytes of the row of the current tensor (valid after ts_read_next). */
uint64_t ts_reader_row_bytes(const struct ts_reader *r);

/* Read the whole stream: every tensor into *out (an array of *n tensors,
 * the caller's; free each with tensor_free and the array with free).
 * @return 0 or a negative TS_E* code. */
int ts_read_all(struct ts_reader *r, struct tensor **out, size_t *n);

/* Stream metadata seen so far (complete once ts_read_next returned 0). */
const struct ts_meta *ts_reader_meta(const struct ts_reader *r);
/* Position in the decompressed stream, for messages. */
uint64_t ts_reader_offset(const struct ts_reader *r);
/* XXH64 (seed 0) of the compressed bytes consumed so far; after the end
 * of a valid stream, the digest of the whole file. */
uint64_t ts_reader_digest(const struct ts_reader *r);
/* The format version the stream's header declares, into *major and
 * *minor (valid after the first ts_read_next, even when it failed with
 * TS_E_VERSION).  @return 0, or TS_E_USAGE when no header with a valid
 * magic has been read. */
int ts_reader_version(const struct ts_reader *r, int *major, int *minor);
/* Counts from the end record (valid after ts_read_next returned 0). */
uint64_t ts_reader_tensors(const struct ts_reader *r);
/* Message for the last error: "LABEL: offset N: what is wrong". */
const char *ts_reader_errmsg(const struct ts_reader *r);

/* ---- writing ---- */

struct ts_writer;

/* Create a writer on fp at zstd level (-131072..22; 0 means 1) with
 * threads compression workers (0 = in the caller's thread).  Nothing is
 * written yet.  @return NULL when out of memory or level/threads invalid. */
struct ts_writer *ts_writer_open(FILE *fp, const char *label, int level,
    int threads);
/* Free the writer.  If ts_writer_finish did not succeed, the stream is
 * left without its end record, so every reader rejects it. */
void ts_writer_close(struct ts_writer *w);

/* With on, compress and write in one helper thread (on 0: drain it and
 * stop it).  The thread makes the zstd calls this thread would have made,
 * in the same order, so the bytes are identical; emits wait in a queue of
 * a few MiB (large ones, flushes and finish drain it and run here).  A
 * write or zstd error is returned by the next call on the writer, at the
 * latest by ts_writer_finish, with the code and message of the
 * synchronous writer.  It pays only with more than one CPU.  A thread
 * that cannot start leaves the writer synchronous.  fp must not be used
 * by the caller until ts_writer_finish or ts_writer_close returns.
 * @return 0, or the writer's error. */
int ts_writer_set_async(struct ts_writer *w, int on);
/* Write a stream metadata record (between tensors).  Keys must satisfy
 * ts_check_key, values UTF-8.  @return 0 or a negative TS_E* code. */
int ts_write_meta(struct ts_writer *w, const struct ts_meta *m);
/* Begin a tensor with hdr's name, dtype, dims and metadata; dims[0] may be
 * TS_UNKNOWN_ROWS (ndim >= 1).  @return 0 or a negative TS_E* code. */
int ts_write_begin(struct ts_writer *w, const struct tensor *hdr);
/* Append nrows rows (nrows * row bytes from buf). */
int ts_write_rows(struct ts_writer *w, const void *buf, uint64_t nrows);
/* Close the current tensor; checks the declared row count. */
int ts_write_end(struct ts_writer *w);
/* Begin, all rows of t->data, end. */
int ts_write_tensor(struct ts_writer *w, const struct tensor *t);
/* Make everything written so far decodable downstream (zstd flush). */
int ts_write_flush(struct ts_writer *w);
/* Write the end record, end the zstd frame and fflush fp.
 * @return 0 or a negative TS_E* code. */
int ts_writer_finish(struct ts_writer *w);
const char *ts_writer_errmsg(const struct ts_writer *w);

#endif
