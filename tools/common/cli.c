/* cli.c: helpers for tools (see cli.h). */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ck.h"
#include "cli.h"
#include "pverr.h"
#include "ledger.h"

static const char *prog = "privada";
static int argc_saved;
static char **argv_saved;
static int quiet;
static int progress_shown;

/* Output files: a temporary file each (tmp, until renamed to path), and
 * its FILE while open.  The signal handler reads outs and nouts: they
 * change only with the caught signals blocked (out_block). */
struct outfile {
	char *path, *tmp;
	FILE *fp;
};
static struct outfile *volatile outs;
static volatile size_t nouts;

/* The signals that remove the temporary files before they kill: every
 * catchable one whose default action ends the process and that a user,
 * a pipe or a limit sends (SIGKILL cannot be caught: it can leave a
 * temporary file, which make clean removes by its name). */
static const int out_signals[] = {
	SIGHUP, SIGINT, SIGPIPE, SIGTERM, SIGXFSZ, SIGXCPU, SIGUSR1, SIGUSR2
};
#define NOUT_SIGNALS (sizeof out_signals / sizeof out_signals[0])

static void
out_cleanup(void)
{
	for (size_t i = 0; i < nouts; i++)
		if (outs[i].tmp != NULL)
			unlink(outs[i].tmp);
}

/* Async-signal-safe only: unlink, sigaction, raise.  The signal is
 * re-raised with its default action, so the exit status shows it. */
static void
out_on_signal(int sig)
{
	struct sigaction sa;

	out_cleanup();
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	raise(sig);
}

/* Block (how SIG_BLOCK) or restore (SIG_SETMASK with *old) the caught
 * signals around a change to outs. */
static void
out_block(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < NOUT_SIGNALS; i++)
		sigaddset(&set, out_signals[i]);
	sigprocmask(SIG_BLOCK, &set, old);
}

static void
out_unblock(const sigset_t *old)
{
	sigprocmask(SIG_SETMASK, old, NULL);
}

/* Installed with the first temporary file.  A signal the caller
 * ignores (nohup's SIGHUP, a background job's SIGINT) stays ignored. */
static void
out_handlers(void)
{
	static int done;
	struct sigaction sa, old;

	if (done)
		return;
	done = 1;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = out_on_signal;
	sigfillset(&sa.sa_mask);
	for (size_t i = 0; i < NOUT_SIGNALS; i++)
		if (sigaction(out_signals[i], NULL, &old) == 0 &&
		    old.sa_handler != SIG_IGN)
			sigaction(out_signals[i], &sa, NULL);
}

/* The temporary file of path: a hidden sibling whose name says what it
 * is, DIR/.BASE.privada-tmp.XXXXXX (make clean removes these). */
static char *
out_tmp_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	int dirlen = (int)(base - path);
	char *tmp;

	if (asprintf(&tmp, "%.*s.%s" CLI_TMP_INFIX "XXXXXX", dirlen, path,
	    base) < 0)
		cli_die(EX_OSERR, "out of memory");
	return tmp;
}

void
cli_init(const char *p, int argc, char **argv)
{
	const char *slash = strrchr(p, '/');

	prog = slash ? slash + 1 : p;
	/* A copy of the arguments as typed: getopt_long permutes argv, and
	 * prov.args must record the command that was run.  argv[0] becomes
	 * the program's name, so that getopt's own messages start with it,
	 * as every other message does, and not with the path it was run by. */
	argc_saved = argc;
	if ((argv_saved = calloc((size_t)argc + 1, sizeof *argv_saved)) == NULL)
		cli_die(EX_OSERR, "out of memory");
	for (int i = 0; i < argc; i++)
		argv_saved[i] = argv[i];
	if (argc > 0)
		argv[0] = (char *)prog;
	setlocale(LC_ALL, "C");
	atexit(out_cleanup);
}

const char *
cli_prog(void)
{
	return prog;
}

void
cli_set_quiet(int q)
{
	quiet = q;
}

static void
vmsg(const char *kind, const char *fmt, va_list ap)
{
	cli_progress_done();
	fprintf(stderr, "%s: %s", prog, kind);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void
cli_die(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
	exit(code);
}

void
cli_warn(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void
cli_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s --help' for more information.\n", prog);
	exit(EX_USAGE);
}

void
cli_version(void)
{
	printf("%s (privada) %s\n", prog, PRIVADA_VERSION);
	exit(0);
}

double
cli_double(const char *opt, const char *arg, double lo, double hi)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (end == arg || *end != '\0')
		cli_usage_error("invalid %s '%s': not a number", opt, arg);
	if (errno == ERANGE || !isfinite(v))
		cli_usage_error("invalid %s '%s': out of range", opt, arg);
	if (v < lo || v > hi)
		cli_usage_error("invalid %s '%s': must be in [%g, %g]", opt, arg,
		    lo, hi);
	return v;
}

long long
cli_ll(const char *opt, const char *arg, long long lo, long long hi)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(arg, &end, 10);
	if (end == arg || *end != '\0')
		cli_usage_error("invalid %s '%s': not an integer", opt, arg);
	if (errno == ERANGE || v < lo || v > hi)
		cli_usage_error("invalid %s '%s': must be in [%lld, %lld]", opt,
		    arg, lo, hi);
	return v;
}

uint64_t
cli_u64(const char *opt, const char *arg)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (arg[0] == '-' || arg[0] == '+')
		cli_usage_error("invalid %s '%s': not an unsigned integer", opt,
		    arg);
	v = strtoull(arg, &end, 10);
	if (end == arg || *end != '\0')
		cli_usage_error("invalid %s '%s': not an unsigned integer", opt,
		    arg);
	if (errno == ERANGE)
		cli_usage_error("invalid %s '%s': out of range", opt, arg);
	return v;
}

void *
cli_malloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		cli_die(EX_OSERR, "out of memory");
	return p;
}

void *
cli_calloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		cli_die(EX_OSERR, "out of memory");
	return p;
}

void *
cli_reallocarray(void *p, size_t n, size_t size)
{
	size_t bytes;

	if (ck_mul_size(n, size, &bytes) != 0 ||
	    (p = realloc(p, bytes ? bytes : 1)) == NULL)
		cli_die(EX_OSERR, "out of memory");
	return p;
}

char *
cli_strdup(const char *s)
{
	char *p = strdup(s);

	if (p == NULL)
		cli_die(EX_OSERR, "out of memory");
	return p;
}

void
cli_meta_set(struct ts_meta *m, const char *key, const char *val)
{
	if (ts_meta_set(m, key, val) != 0)
		cli_die(EX_OSERR, "out of memory");
}

int
cli_choice(const char *opt, const char *arg, const char *const *words)
{
	char list[256];
	size_t len = 0, n;

	for (n = 0; words[n] != NULL; n++)
		if (strcmp(arg, words[n]) == 0)
			return (int)n;
	list[0] = '\0';
	for (size_t i = 0; i < n && len < sizeof list; i++)
		len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
		    i == 0 ? "" : i + 1 == n ? " or " : ", ", words[i]);
	cli_usage_error("invalid %s '%s': expected %s", opt, arg, list);
}

const char *
cli_level_arg(const char *arg)
{
	(void)cli_ll("--level", arg, CLI_LEVEL_MIN, CLI_LEVEL_MAX);
	return arg;
}

FILE *
cli_open_in(const char *path, const char **label)
{
	FILE *fp;

	if (path == NULL || strcmp(path, "-") == 0) {
		*label = "<stdin>";
		return stdin;
	}
	if ((fp = fopen(path, "rb")) == NULL)
		cli_die(EX_NOINPUT, "%s: %s", path, strerror(errno));
	*label = path;
	return fp;
}

void
cli_close_in(FILE *fp)
{
	if (fp != NULL && fp != stdin)
		fclose(fp);
}

struct infile *
cli_infile_open(const char *path, unsigned flags)
{
	const char *label;
	FILE *fp = cli_open_in(path, &label);
	struct infile *f = infile_open(fp, label, flags);

	if (f == NULL)
		cli_die(EX_OSERR, "out of memory");
	return f;
}

void
cli_infile_close(struct infile *f)
{
	FILE *src;

	if (f == NULL)
		return;
	src = infile_source(f);
	infile_close(f);
	cli_close_in(src);
}

void
cli_infile_die(const struct infile *f)
{
	if (infile_error(f) != 0)
		cli_ts_die(infile_error(f), infile_errmsg(f));
	cli_die(EX_IOERR, "%s: read error", infile_label(f));
}

void
cli_infile_read(struct infile *f, void *buf, size_t n, const char *what)
{
	if (fread(buf, 1, n, infile_fp(f)) != n) {
		if (infile_error(f) || ferror(infile_fp(f)))
			cli_infile_die(f);
		cli_die(EX_DATAERR, "%s: truncated: %s", infile_label(f), what);
	}
}

void
cli_infile_end(struct infile *f, uint64_t n, const char *what)
{
	if (fgetc(infile_fp(f)) != EOF)
		cli_die(EX_DATAERR, "%s: trailing bytes after %llu %s",
		    infile_label(f), (unsigned long long)n, what);
	if (infile_error(f) || ferror(infile_fp(f)))
		cli_infile_die(f);
}

FILE *
cli_out_open(const char *path, int force)
{
	if (path == NULL || strcmp(path, "-") == 0) {
		if (!force && isatty(STDOUT_FILENO))
			cli_usage_error("refusing to write a tensor stream to a "
			    "terminal (redirect stdout, use --output, or --force)");
		return stdout;
	}
	return cli_out_open_path(path);
}

FILE *
cli_out_open_path(const char *path)
{
	static mode_t mask;
	static int have_mask;
	struct outfile *o;
	struct stat st;
	sigset_t old;
	char *tmp;
	int fd, e;

	if (!have_mask) {
		/* The only way to read the umask is to set it. */
		mask = umask(0);
		umask(mask);
		have_mask = 1;
	}
	out_block(&old);
	outs = cli_reallocarray(outs, nouts + 1, sizeof *outs);
	out_unblock(&old);
	o = &outs[nouts];
	o->fp = NULL;
	o->path = cli_strdup(path);
	o->tmp = NULL;
	/* A device, FIFO or socket (/dev/null, /dev/stdout, a named pipe)
	 * is written in place: renaming a file over it would replace it. */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode))
			cli_die(EX_CANTCREAT, "%s: is a directory", path);
		if ((o->fp = fopen(path, "wb")) == NULL)
			cli_die(EX_CANTCREAT, "%s: %s", path, strerror(errno));
		nouts++;
		return o->fp;
	}
	tmp = out_tmp_name(path);
	out_handlers();
	/* Created and recorded with the signals blocked: a signal between
	 * the two would leave the file behind. */
	out_block(&old);
	if ((fd = mkstemp(tmp)) < 0) {
		e = errno;
		out_unblock(&old);
		free(tmp);
		cli_die(EX_CANTCREAT, "%s: %s", path, strerror(e));
	}
	o->tmp = tmp;
	nouts++;	/* from here on, removed at exit unless committed */
	out_unblock(&old);
	/* mkstemp creates mode 0600; an output is an ordinary file. */
	if (fchmod(fd, 0666 & ~mask) != 0 ||
	    (o->fp = fdopen(fd, "wb")) == NULL) {
		e = errno;
		close(fd);
		cli_die(EX_CANTCREAT, "%s: %s", path, strerror(e));
	}
	return o->fp;
}

static struct outfile *
out_find(const FILE *fp)
{
	for (size_t i = 0; fp != NULL && i < nouts; i++)
		if (outs[i].fp == fp)
			return &outs[i];
	return NULL;
}

static void
out_close(struct outfile *o)
{
	FILE *fp = o->fp;

	o->fp = NULL;
	if (fflush(fp) != 0 || ferror(fp)) {
		int e = errno;
		fclose(fp);
		cli_die(EX_IOERR, "%s: write error: %s", o->path, strerror(e));
	}
	if (fclose(fp) != 0)
		cli_die(EX_IOERR, "%s: write error: %s", o->path,
		    strerror(errno));
}

void
cli_out_close(FILE *fp)
{
	struct outfile *o = out_find(fp);

	if (o == NULL)
		cli_die(EX_SOFTWARE, "cli_out_close: not an output file");
	out_close(o);
}

void
cli_out_commit(void)
{
	struct outfile *o;
	sigset_t old;
	size_t n;
	int e;

	for (size_t i = 0; i < nouts; i++)
		if (outs[i].fp != NULL)
			out_close(&outs[i]);
	/* All or nothing: the renames run with the caught signals held
	 * off, and when one fails, the outputs already renamed are removed
	 * with the temporary files left (tns split's parts: either every
	 * part or none). */
	out_block(&old);
	for (size_t i = 0; i < nouts; i++) {
		if (outs[i].tmp == NULL)
			continue;
		if (rename(outs[i].tmp, outs[i].path) != 0) {
			e = errno;
			for (size_t j = 0; j < i; j++)
				if (outs[j].tmp != NULL)
					unlink(outs[j].path);
			cli_die(EX_CANTCREAT, "%s: %s", outs[i].path,
			    strerror(e));
		}
	}
	o = outs;
	n = nouts;
	outs = NULL;
	nouts = 0;
	out_unblock(&old);
	for (size_t i = 0; i < n; i++) {
		free(o[i].tmp);
		free(o[i].path);
	}
	free(o);
	if (fflush(stdout) != 0 || ferror(stdout) || fclose(stdout) != 0)
		cli_die(EX_IOERR, "write error on stdout: %s", strerror(errno));
}

struct ts_writer *
cli_writer_label(FILE *fp, const char *label, const char *level_opt)
{
	const char *env = getenv("PRIVADA_LEVEL");
	const char *th = getenv("PRIVADA_THREADS");
	int level = 1, threads = 0;
	struct ts_writer *w;

	if (level_opt != NULL)
		level = (int)cli_ll("--level", level_opt, CLI_LEVEL_MIN,
		    CLI_LEVEL_MAX);
	else if (env != NULL && *env != '\0')
		level = (int)cli_ll("PRIVADA_LEVEL", env, CLI_LEVEL_MIN,
		    CLI_LEVEL_MAX);
	if (th != NULL && *th != '\0')
		threads = (int)cli_ll("PRIVADA_THREADS", th, 0, 64);
	if ((w = ts_writer_open(fp, label, level, threads)) == NULL)
		cli_die(EX_OSERR, "out of memory");
	return w;
}

struct ts_writer *
cli_writer(FILE *fp, const char *level_opt)
{
	const struct outfile *o = out_find(fp);

	return cli_writer_label(fp, o != NULL ? o->path : fp == stdout ?
	    "<stdout>" : "<output>", level_opt);
}

struct ts_reader *
cli_reader(FILE *fp, const char *label)
{
	struct ts_reader *r = ts_reader_open(fp, label);

	if (r == NULL)
		cli_die(EX_OSERR, "out of memory");
	return r;
}

int
cli_pv_exit(int code)
{
	switch (code) {
	case PV_OK:
		return 0;
	case PV_E_NOMEM:
	case PV_E_ENTROPY:
		return EX_OSERR;
	case PV_E_IO:
		return EX_IOERR;
	case PV_E_OPTION:
		return EX_USAGE;
	case PV_E_BUDGET:
		return CLI_EX_BUDGET;
	case PV_E_NOBUDGET:
		return EX_CONFIG;
	case PV_E_STORE:
		return EX_IOERR;
	case PV_E_ZSTD:
	case PV_E_TRUNCATED:
	case PV_E_FORMAT:
	case PV_E_VERSION:
	case PV_E_LIMIT:
	case PV_E_OVERFLOW:
	case PV_E_CHECKSUM:
	case PV_E_NOTPD:
	case PV_E_PRIVATE:
		return EX_DATAERR;
	default:		/* RANGE, USAGE, NOISE, NUMERIC, NOROOT, SIZE */
		return EX_SOFTWARE;
	}
}

void
cli_pv_die(int code, const char *msg)
{
	cli_die(cli_pv_exit(code), "%s", msg != NULL ? msg : pv_strerror(code));
}

void
cli_ts_die(int code, const char *msg)
{
	cli_pv_die(code, msg);
}

void
cli_rdie(const struct ts_reader *r, int code)
{
	cli_ts_die(code, ts_reader_errmsg(r));
}

void
cli_wdie(const struct ts_writer *w, int code)
{
	cli_ts_die(code, ts_writer_errmsg(w));
}

void
cli_inherit_split(struct ts_meta *dst, const struct ts_meta *src,
    const char *label)
{
	char *by;

	if (asprintf(&by, "%s: %s", prog, ts_utf8_valid(label, strlen(label)) ?
	    label : "(name is not UTF-8)") < 0)
		cli_die(EX_OSERR, "out of memory");
	if (part_merge(dst, src, by) != 0)
		cli_die(EX_OSERR, "out of memory");
	free(by);
}

void
cli_inherit(struct ts_meta *dst, const struct ts_meta *src, const char *label)
{
	char err[256];

	/* The partition first: it compares src with the raw marks dst has
	 * from the other inputs (formats/tensor-stream.md, 10.1.2). */
	cli_inherit_split(dst, src, label);
	for (size_t i = 0; i < src->n; i++) {
		const struct ts_kv *kv = &src->kv[i];
		const char *old;

		if (strncmp(kv->key, "prov.", 5) == 0 ||
		    strncmp(kv->key, "split.", 6) == 0)
			continue;
		/* Raw-taint marks merge by strength: aggregate wins over
		 * row-local (formats/tensor-stream.md, section 10.1, rule 3). */
		if (strncmp(kv->key, "dp.raw.", 7) == 0) {
			int kind = strcmp(kv->val, "aggregate") == 0 ?
			    LEDGER_AGGREGATE : strcmp(kv->val, "row-local") == 0 ?
			    LEDGER_ROW_LOCAL : 0;
			if (kind == 0)
				cli_die(EX_DATAERR, "%s: ledger entry '%s' has the "
				    "unknown value '%s'", label, kv->key, kv->val);
			if (ledger_mark_raw(dst, kv->key + 7, kind, err,
			    sizeof err) != 0)
				cli_die(EX_DATAERR, "%s: ledger entry '%s': %s",
				    label, kv->key, err);
			continue;
		}
		old = ts_meta_get(dst, kv->key);
		if (old != NULL && strcmp(old, kv->val) != 0) {
			/* Two inputs disagreeing on a ledger entry cannot both
			 * be honest; other keys: the first input wins. */
			if (strncmp(kv->key, "dp.", 3) == 0)
				cli_die(EX_DATAERR, "%s: ledger entry '%s' "
				    "conflicts with another input", label, kv->key);
			continue;
		}
		if (old == NULL && ts_meta_set(dst, kv->key, kv->val) != 0)
			cli_die(EX_OSERR, "out of memory");
	}
}

void
cli_out_finish(struct ts_writer *w, struct ts_meta *m,
    const struct ts_meta *prov)
{
	int rc;

	cli_prov(m);
	if (prov != NULL && ts_meta_merge(m, prov, "", NULL) != 0)
		cli_die(EX_OSERR, "out of memory");
	if ((rc = ts_write_meta(w, m)) != 0 ||
	    (rc = ts_writer_finish(w)) != 0)
		cli_wdie(w, rc);
	ts_writer_close(w);
}

char *
cli_args_text(void)
{
	size_t len = 0;
	char *s, *p;

	for (int i = 1; i < argc_saved; i++)
		len += strlen(argv_saved[i]) * 4 + 3;
	if ((s = p = malloc(len + 1)) == NULL)
		cli_die(EX_OSERR, "out of memory");
	/* Arguments quoted for a POSIX shell, so the command can be rerun. */
	for (int i = 1; i < argc_saved; i++) {
		const char *a = argv_saved[i];
		if (i > 1)
			*p++ = ' ';
		*p++ = '\'';
		for (; *a; a++) {
			if (*a == '\'') {
				memcpy(p, "'\\''", 4);
				p += 4;
			} else {
				*p++ = *a;
			}
		}
		*p++ = '\'';
	}
	*p = '\0';
	return s;
}

void
cli_prov(struct ts_meta *m)
{
	char *s = cli_args_text();

	if (ts_meta_set(m, "prov.tool", prog) != 0 ||
	    ts_meta_set(m, "prov.version", PRIVADA_VERSION) != 0 ||
	    ts_meta_set(m, "prov.args", ts_utf8_valid(s, strlen(s)) ? s :
	    "(arguments are not UTF-8)") != 0)
		cli_die(EX_OSERR, "out of memory");
	free(s);
}

void
cli_prov_input(struct ts_meta *m, int idx, const char *label, uint64_t digest,
    const struct ts_meta *src)
{
	char key[64];

	snprintf(key, sizeof key, "prov.input.%d.name", idx);
	if (ts_meta_set(m, key, ts_utf8_valid(label, strlen(label)) ? label :
	    "(name is not UTF-8)") != 0)
		cli_die(EX_OSERR, "out of memory");
	/* An unkeyed digest of protected bytes is a membership test: with
	 * the other records and the command line, anyone can hash D and D'
	 * and compare (tensor-stream.md, section 10.2).  Rows of unknown
	 * provenance may be raw records too. */
	if (src == NULL || ledger_has_raw(src) ||
	    ts_meta_get(src, "dp.provenance") != NULL)
		return;
	snprintf(key, sizeof key, "prov.input.%d.xxh64", idx);
	if (ts_meta_setf(m, key, "%016llx", (unsigned long long)digest) != 0)
		cli_die(EX_OSERR, "out of memory");
}

/* The measurement of the current what: its start (time, units done). */
static char progress_what[128];
static struct timespec progress_t0;
static uint64_t progress_d0, progress_last;

static double
ts_diff(const struct timespec *a, const struct timespec *b)
{
	return (double)(a->tv_sec - b->tv_sec) +
	    (double)(a->tv_nsec - b->tv_nsec) * 1e-9;
}

/* "1:05", "1:02:03", or "?" beyond 99 hours. */
static void
fmt_hms(char *buf, size_t len, double s)
{
	unsigned long t;

	if (!(s >= 0) || s > 99 * 3600.0) {
		snprintf(buf, len, "?");
		return;
	}
	t = (unsigned long)(s + 0.5);
	if (t >= 3600)
		snprintf(buf, len, "%lu:%02lu:%02lu", t / 3600, t / 60 % 60,
		    t % 60);
	else
		snprintf(buf, len, "%lu:%02lu", t / 60, t % 60);
}

void
cli_progress_stat(const char *what, uint64_t done, uint64_t total,
    const char *name, double value)
{
	static struct timespec last;
	struct timespec now;
	char rate[64] = "", eta[64] = "", stat[96] = "", hms[32];
	double dt, r;
	int fresh = 0;

	if (quiet || !isatty(STDERR_FILENO))
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);

	if (strncmp(what, progress_what, sizeof progress_what - 1) != 0 ||
	    done < progress_last) {
		snprintf(progress_what, sizeof progress_what, "%s", what);
		progress_t0 = now;
		progress_d0 = done;
		fresh = 1;
	}
	progress_last = done;
	/* A new what and the last unit are always shown. */
	if (progress_shown && !fresh && ts_diff(&now, &last) < 0.25 &&
	    (total == 0 || done != total))
		return;
	last = now;
	dt = ts_diff(&now, &progress_t0);
	if (done > progress_d0 && dt > 0) {
		r = (double)(done - progress_d0) / dt;
		snprintf(rate, sizeof rate, r >= 100 ? " %.0f/s" : " %.3g/s",
		    r);
		if (total >= done) {
			fmt_hms(hms, sizeof hms, (double)(total - done) / r);
			snprintf(eta, sizeof eta, " ETA %s", hms);
		}
	}
	if (name != NULL && !isnan(value))
		snprintf(stat, sizeof stat, " %s %.4g", name, value);
	if (total)
		fprintf(stderr, "\r%s: %s %llu/%llu (%.0f%%)%s%s%s\033[K", prog,
		    what, (unsigned long long)done, (unsigned long long)total,
		    100.0 * (double)done / (double)total, rate, eta, stat);
	else
		fprintf(stderr, "\r%s: %s %llu%s%s\033[K", prog, what,
		    (unsigned long long)done, rate, stat);
	progress_shown = 1;
}

void
cli_progress(const char *what, uint64_t done, uint64_t total)
{
	cli_progress_stat(what, done, total, NULL, NAN);
}

void
cli_progress_done(void)
{
	if (progress_shown) {
		fprintf(stderr, "\r\033[K");
		progress_shown = 0;
	}
	progress_what[0] = '\0';
}

/* Make b hold about CLI_ROWBUF bytes of rows of tensor t (rb bytes each), at
 * least one row, but no more rows than t declares: a valid tensor of no
 * rows may have rows too large to allocate.  @return the rows b holds. */
uint64_t
cli_rowbuf_rows(struct cli_rowbuf *b, uint64_t rb, const struct tensor *t)
{
	uint64_t rows = rb ? CLI_ROWBUF / rb : CLI_ROWBUF, need, declared;

	declared = t->ndim == 0 ? 1 : t->dims[0];
	if (rows == 0)
		rows = 1;
	need = rows > declared ? declared * rb : rows * rb;
	if (need == 0)
		need = 1;
	/* The reader hands out whole rows only, so a row must fit. */
	if (need > TS_MAX_BYTES)
		cli_die(EX_DATAERR, "tensor '%s': a row of %llu bytes exceeds "
		    "the in-memory limit of %llu bytes", t->name,
		    (unsigned long long)rb, (unsigned long long)TS_MAX_BYTES);
	if (need > b->cap) {
		unsigned char *p = need <= SIZE_MAX ? realloc(b->p,
		    (size_t)need) : NULL;
		if (p == NULL)
			cli_die(EX_OSERR, "out of memory: a row of tensor '%s' "
			    "has %llu bytes", t->name, (unsigned long long)rb);
		b->p = p;
		b->cap = (size_t)need;
	}
	return rows;
}

/* Read rows of the current tensor of r until buf holds cap rows or the
 * tensor ends.  *done is set at the end.  @return rows read. */
uint64_t
cli_fill_rows(struct ts_reader *r, void *buf, uint64_t rb, uint64_t cap,
    int *done)
{
	uint64_t filled = 0;
	int64_t n;

	*done = 0;
	while (filled < cap) {
		n = ts_read_rows(r, (unsigned char *)buf + filled * rb,
		    cap - filled);
		if (n < 0)
			cli_rdie(r, (int)n);
		if (n == 0) {
			*done = 1;
			break;
		}
		filled += (uint64_t)n;
	}
	return filled;
}

/* Copy the rows of the tensor just read by ts_read_next from r to w,
 * which has begun the same tensor.  Rows go straight from the reader into
 * b and from b to the writer: one copy, no per-row work. */
uint64_t
cli_copy_rows(struct ts_reader *r, struct ts_writer *w, const struct tensor *hdr,
    struct cli_rowbuf *b)
{
	uint64_t rb = ts_reader_row_bytes(r), cap = cli_rowbuf_rows(b, rb, hdr);
	uint64_t total = 0, n;
	int rc, done = 0;

	while (!done) {
		n = cli_fill_rows(r, b->p, rb, cap, &done);
		if (n > 0 && (rc = ts_write_rows(w, b->p, n)) != 0)
			cli_wdie(w, rc);
		total += n;
		cli_progress("rows", total, 0);
	}
	return total;
}

void
cli_pass_tensor(struct ts_reader *r, struct ts_writer *w, const struct tensor *hdr,
    struct cli_rowbuf *b)
{
	int rc;

	if ((rc = ts_write_begin(w, hdr)) != 0)
		cli_wdie(w, rc);
	cli_copy_rows(r, w, hdr, b);
	if ((rc = ts_write_end(w)) != 0)
		cli_wdie(w, rc);
}


void
cli_rowbuf_free(struct cli_rowbuf *b)
{
	free(b->p);
	b->p = NULL;
	b->cap = 0;
}

double
cli_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
