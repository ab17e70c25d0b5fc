/*
 * cli.h: helpers for tools only: messages, option values, opening inputs
 * and outputs, progress, provenance.  The one module of libprivada that
 * prints and exits (STYLE.md section 4); lib code never calls it.
 *
 * Exit codes are <sysexits.h> values, as in STYLE.md section 3.
 */
#ifndef PRIVADA_CLI_H
#define PRIVADA_CLI_H

#include <stdint.h>
#include <stdio.h>
#include <sysexits.h>

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

/* Open an input: NULL or "-" is stdin (label "<stdin>").  Exits 66 when it
 * cannot be opened.  *label is set to a string that lives until exit. */
FILE *cli_open_in(const char *path, const char **label);
void cli_close_in(FILE *fp);

/* Output: stdout, or with a path, a sibling temporary file renamed into
 * place by cli_out_commit, and removed at exit if never committed.
 * Refuses a terminal on stdout unless force (exit 64). */
FILE *cli_out_open(const char *path, int force);
/* fflush, fsync-free close and rename (or close stdout).  Exit 74 on error. */
void cli_out_commit(void);

/* Tensor stream writer on the output, at --level or PRIVADA_LEVEL
 * (default 1), with PRIVADA_THREADS compression workers (default 0).
 * level_opt is the --level argument or NULL. */
struct ts_writer *cli_writer(FILE *fp, const char *level_opt);
/* Reader on an opened input; exits 71 when out of memory. */
struct ts_reader *cli_reader(FILE *fp, const char *label);

/* Exit with the tool code for a TS_E* error: 71 out of memory, 74 I/O,
 * 70 API misuse, 65 otherwise.  msg is printed after "prog: ". */
void cli_ts_die(int code, const char *msg) __attribute__((noreturn));
/* Shorthands for a failed reader or writer call. */
void cli_rdie(const struct ts_reader *r, int code) __attribute__((noreturn));
void cli_wdie(const struct ts_writer *w, int code) __attribute__((noreturn));

/* Stream metadata for an output: copy what src carries (every key but
 * prov.*: the privacy ledger dp.* is merged, a conflicting entry is an
 * error naming the input), exit 65 on conflict. */
void cli_inherit(struct ts_meta *dst, const struct ts_meta *src,
    const char *label);
/* Set prov.tool, prov.version, prov.args; prov.input.N.name/digest are
 * added by cli_prov_input for each input read. */
void cli_prov(struct ts_meta *m);
void cli_prov_input(struct ts_meta *m, int idx, const char *label,
    uint64_t digest);

/* Progress on stderr when it is a terminal and not quiet, at most a few
 * updates a second; total 0 if unknown.  cli_progress_done clears it. */
void cli_progress(const char *what, uint64_t done, uint64_t total);
void cli_progress_done(void);

#endif
