/*
 * cli.h: helpers for tools only: messages, option values, memory,
 * opening inputs and outputs, progress, provenance.  The one module of
 * libprivada that prints and exits (STYLE.md section 4); lib code never
 * calls it.
 *
 * Exit codes are <sysexits.h> values, as in STYLE.md section 3.
 */
#ifndef PRIVADA_CLI_H
#define PRIVADA_CLI_H

#include <stdint.h>
#include <stdio.h>
#include <sysexits.h>

#include "infile.h"
#include "parts.h"
#include "tensor.h"
#include "tstream.h"

#define PRIVADA_VERSION "0.1.0"

/* Remember the program name and arguments (for messages and prov.args),
 * set the C numeric locale.  Call first in main. */
void cli_init(const char *prog, int argc, char **argv);
const char *cli_prog(void);
/* Silence warnings and progress (--quiet). */
void cli_set_quiet(int quiet);

/* "prog: message" on stderr, then exit(code). */
void cli_die(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));
/* "prog: warning: message" on stderr unless quiet. */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A usage error: the message, a hint to run --help, exit 64. */
void cli_usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));
/* Print "prog VERSION" to stdout and exit 0. */
void cli_version(void) __attribute__((noreturn));

/* Parse an option value completely, or exit 64 quoting it.
 * cli_double accepts finite values with lo <= v <= hi. */
double cli_double(const char *opt, const char *arg, double lo, double hi);
long long cli_ll(const char *opt, const char *arg, long long lo, long long hi);
uint64_t cli_u64(const char *opt, const char *arg);

/* Memory, or exit 71 "out of memory".  A size of 0 allocates 1 byte;
 * cli_reallocarray checks n * size for overflow. */
void *cli_malloc(size_t n);
void *cli_calloc(size_t n, size_t size);
void *cli_reallocarray(void *p, size_t n, size_t size);
char *cli_strdup(const char *s);
/* ts_meta_set, or exit 71. */
void cli_meta_set(struct ts_meta *m, const char *key, const char *val);

/* The index of arg in words (NULL-terminated), or exit 64 with
 * "invalid OPT 'ARG': expected a, b or c". */
int cli_choice(const char *opt, const char *arg, const char *const *words);

/* zstd levels of --level and PRIVADA_LEVEL. */
#define CLI_LEVEL_MIN (-131072)
#define CLI_LEVEL_MAX 22
/* Check a --level value while parsing options (exit 64 quoting it).
 * @return arg, to pass to cli_writer later. */
const char *cli_level_arg(const char *arg);

/* Open an input: NULL or "-" is stdin (label "<stdin>").  Exits 66 when it
 * cannot be opened.  *label is set to a string that lives until exit. */
FILE *cli_open_in(const char *path, const char **label);
void cli_close_in(FILE *fp);

/* An input opened as by cli_open_in, read through an infile (infile.h):
 * its bytes hashed for prov.input.N.xxh64, gzip decompressed with
 * INFILE_GZIP.  Exits 66, or 71 when out of memory.  Read from
 * infile_fp; the label is infile_label. */
struct infile *cli_infile_open(const char *path, unsigned flags);
/* Close f and the input under it (stdin stays open).  Accepts NULL. */
void cli_infile_close(struct infile *f);
/* Exit for a failed read of f: with its own error (as cli_ts_die), else
 * 74 "LABEL: read error". */
void cli_infile_die(const struct infile *f) __attribute__((noreturn));
/* Read exactly n bytes of f into buf, else exit 65 "LABEL: truncated:
 * WHAT" (or as cli_infile_die on a read error). */
void cli_infile_read(struct infile *f, void *buf, size_t n,
    const char *what);
/* f must end here, after its n records (what they are), else exit 65
 * "LABEL: trailing bytes after N WHAT". */
void cli_infile_end(struct infile *f, uint64_t n, const char *what);

/*
 * Outputs.  cli_out_open gives stdout, or with a path, the output file;
 * cli_out_open_path opens further files (tns split's parts).  A file is
 * written as a hidden sibling temporary file, DIR/.BASE.privada-tmp.XXXXXX
 * (mode 0666 less the umask, like a file fopen creates), removed at exit
 * and on SIGHUP, SIGINT, SIGPIPE, SIGTERM, SIGXFSZ, SIGXCPU, SIGUSR1 and
 * SIGUSR2 (then re-raised) unless cli_out_commit renamed it into place,
 * which it does only once every output has been written and closed, and
 * for all outputs or none: a tool that fails leaves no output looking
 * complete.  Only SIGKILL can leave a temporary file.
 */
#define CLI_TMP_INFIX ".privada-tmp."
/* stdout (refusing a terminal unless force: exit 64), or path as by
 * cli_out_open_path. */
FILE *cli_out_open(const char *path, int force);
/* A new output file at path.  Exit 73 when it cannot be created. */
FILE *cli_out_open_path(const char *path);
/* Close an output of cli_out_open_path early (before cli_out_commit,
 * to bound the open files); it is still renamed by cli_out_commit.
 * Exit 74 on a write error. */
void cli_out_close(FILE *fp);
/* Close every output file still open, rename them all into place, then
 * close stdout.  Exit 74 on a write error, 73 when a rename fails. */
void cli_out_commit(void);

/* Tensor stream writer on fp, at --level (level_opt, or NULL) or
 * PRIVADA_LEVEL (default 1), with PRIVADA_THREADS compression workers
 * (default 0); label names fp in messages.  Exit 64 on a bad level or
 * thread count, 71 when out of memory. */
struct ts_writer *cli_writer_label(FILE *fp, const char *label,
    const char *level_opt);
/* cli_writer_label on an output of cli_out_open or cli_out_open_path,
 * labelled "<stdout>" or by its path. */
struct ts_writer *cli_writer(FILE *fp, const char *level_opt);
/* Reader on an opened input; exits 71 when out of memory. */
struct ts_reader *cli_reader(FILE *fp, const char *label);

/* The exit status of a library error code (lib/common/pverr.h): the one
 * place where PV_E_* codes become sysexits (71 for memory and randomness,
 * 74 I/O, 64 options, 65 bad data, 70 anything that is a bug). */
int cli_pv_exit(int code);
/* The exit status of a release the budget store refused (privada(7)):
 * EX_NOPERM, the data holder's policy does not permit it. */
#define CLI_EX_BUDGET 77
/* Exit with cli_pv_exit(code) and msg (pv_strerror(code) when NULL),
 * printed after "prog: ". */
void cli_pv_die(int code, const char *msg) __attribute__((noreturn));
/* The same for a TS_E* error of the stream reader or writer. */
void cli_ts_die(int code, const char *msg) __attribute__((noreturn));
/* Shorthands for a failed reader or writer call. */
void cli_rdie(const struct ts_reader *r, int code) __attribute__((noreturn));
void cli_wdie(const struct ts_writer *w, int code) __attribute__((noreturn));

/* The split.part of an output that derives from several parts. */
#define SPLIT_MIXED PART_MIXED_VALUE

/* Stream metadata for an output: copy what src carries (every key but
 * prov.*).  The privacy ledger dp.* is merged: raw-taint marks by
 * strength (aggregate over row-local), release entries by key, where a
 * conflicting value is an error naming the input (exit 65).  The split.*
 * keys merge as cli_inherit_split says; for other keys the first input
 * wins. */
void cli_inherit(struct ts_meta *dst, const struct ts_meta *src,
    const char *label);
/* The partition of input src (label) merged into dst by part_merge
 * (parts.h): an input from another part, or with raw rows or a
 * non-private aggregate of the whole dataset dst is a part of, makes
 * split.part SPLIT_MIXED and split.mixed_by "PROG: LABEL".  Call it
 * before src's raw marks reach dst (cli_inherit does).  Exit 71 when out
 * of memory. */
void cli_inherit_split(struct ts_meta *dst, const struct ts_meta *src,
    const char *label);
/* Set prov.tool, prov.version, prov.args; prov.input.N.name/digest are
 * added by cli_prov_input for each input read. */
void cli_prov(struct ts_meta *m);
/* The end of an output stream: m gets this run's provenance (cli_prov)
 * and the inputs' (prov, from cli_prov_input; NULL: none), is written,
 * and w is finished and closed.  Exits 71 or 74 on failure. */
void cli_out_finish(struct ts_writer *w, struct ts_meta *m,
    const struct ts_meta *prov);
/* The command line's arguments (after the program), each quoted for a
 * POSIX shell, as prov.args records them (malloc'd; exit 71 when out of
 * memory). */
char *cli_args_text(void);
/* prov.input.N.name = label and, only when src (the input's stream
 * metadata) is not NULL and carries no dp.raw.* mark, prov.input.N.xxh64
 * = digest.  src is NULL for an input that is not a tensor stream (CSV,
 * text, NPY, IDX): its bytes may be raw records, so it gets no digest. */
void cli_prov_input(struct ts_meta *m, int idx, const char *label,
    uint64_t digest, const struct ts_meta *src);

/* The one progress display of every tool: a line on stderr, only when
 * stderr is a terminal and not quiet, at most four updates a second (and
 * always the last unit, done == total): "prog: what done/total (P%)
 * R/s ETA m:ss", the rate and the time left measured since what began
 * (a new what, or done going back, starts a new measurement); total 0
 * if unknown (no percentage, no ETA).  cli_progress_done clears it. */
void cli_progress(const char *what, uint64_t done, uint64_t total);
/* The same with a statistic shown after it ("name value", %.4g), e.g.
 * the training loss.  Pass only a statistic of public or non-private
 * data: a loss of private rows is not released.  value NaN: none. */
void cli_progress_stat(const char *what, uint64_t done, uint64_t total,
    const char *name, double value);
void cli_progress_done(void);

/* Seconds on the monotonic clock (for timings in -v reports). */
double cli_now(void);

/* Moving rows between streams without per-row work.  A cli_rowbuf
 * (zero-initialised) is reused across tensors; free it with
 * cli_rowbuf_free. */
#define CLI_ROWBUF (1u << 20)	/* bytes of rows per read/write */
struct cli_rowbuf {
	unsigned char *p;
	size_t cap;
};
/* Size b for about CLI_ROWBUF bytes of rows of t (rb bytes each), at least
 * one row, no more than t declares.  Exit 65 when one row exceeds the
 * in-memory limit.  @return the rows b holds. */
uint64_t cli_rowbuf_rows(struct cli_rowbuf *b, uint64_t rb,
    const struct tensor *t);
/* Read rows (rb bytes each) of r's current tensor into buf until cap rows
 * or the tensor's end (*done set).  @return rows read.  Exit on a reader
 * error. */
uint64_t cli_fill_rows(struct ts_reader *r, void *buf, uint64_t rb,
    uint64_t cap, int *done);
/* Copy all rows of r's current tensor (hdr from ts_read_next) to w, which
 * has begun the same tensor.  @return rows copied. */
uint64_t cli_copy_rows(struct ts_reader *r, struct ts_writer *w,
    const struct tensor *hdr, struct cli_rowbuf *b);
/* Begin hdr on w, copy its rows, end it. */
void cli_pass_tensor(struct ts_reader *r, struct ts_writer *w,
    const struct tensor *hdr, struct cli_rowbuf *b);
void cli_rowbuf_free(struct cli_rowbuf *b);

#endif
