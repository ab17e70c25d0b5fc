/*
 * infile.h: an input seen through a digest.  An infile reads another FILE
 * (the source), hashes every byte it takes from it with XXH64 (seed 0,
 * the digest a tool records as prov.input.N.xxh64), and hands the bytes
 * on through a plain FILE, so that any reader (stdio, csvin, getline)
 * can consume them.  With INFILE_GZIP, a source that starts with the
 * gzip magic (1f 8b) is decompressed on the way: the FILE gives the
 * plain bytes, the digest stays that of the bytes of the source.
 *
 * Ownership: an infile borrows its source and never closes it; the FILE
 * returned by infile_fp belongs to the infile (do not fclose it) and
 * lives until infile_close.  The label is copied.  infile_close accepts
 * NULL.  Nothing here prints, exits or reads the environment.
 *
 * Errors: a failed read through infile_fp returns short with ferror set
 * on that FILE (errno EIO); infile_error then names the cause as a TS_E*
 * code (tstream.h) and infile_errmsg says "LABEL: what is wrong".  The
 * first error sticks: later reads fail the same way.
 */
#ifndef PRIVADA_INFILE_H
#define PRIVADA_INFILE_H

#include <stdint.h>
#include <stdio.h>

/* Flags of infile_open. */
#define INFILE_GZIP 1u		/* decompress a source starting with 1f 8b */

struct infile;

/* Wrap src.  label names the input in messages ("<stdin>", a path).
 * Nothing is read yet.  @return NULL when out of memory, src is NULL or
 * flags has unknown bits. */
struct infile *infile_open(FILE *src, const char *label, unsigned flags);
/* Close the FILE of infile_fp and free f; the source stays open. */
void infile_close(struct infile *f);

/* The FILE to read the (decompressed) bytes from. */
FILE *infile_fp(const struct infile *f);
/* The source, as given to infile_open (for fstat, or to close it). */
FILE *infile_source(const struct infile *f);
/* The label, as given to infile_open. */
const char *infile_label(const struct infile *f);

/* XXH64 (seed 0) of the source bytes read so far; after the FILE of
 * infile_fp reached its end, the digest of the whole source. */
uint64_t infile_digest(const struct infile *f);

/* 0, or the TS_E* code of the first failed read: TS_E_IO (the source
 * could not be read; errno text in the message), TS_E_NOMEM,
 * TS_E_TRUNCATED (gzip data ends early), TS_E_FORMAT (corrupt gzip data,
 * or bytes after the last gzip member that do not start another). */
int infile_error(const struct infile *f);
/* Message of that error: "LABEL: gzip: truncated compressed data";
 * "" when there was none. */
const char *infile_errmsg(const struct infile *f);

#endif
