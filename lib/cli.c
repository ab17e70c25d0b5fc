/* cli.c: helpers for tools (see cli.h). */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static const char *prog = "privada";
static int argc_saved;
static char **argv_saved;
static int quiet;
static FILE *out_fp;
static char *out_path, *out_tmp;
static int progress_shown;

static void
out_cleanup(void)
{
	if (out_tmp != NULL)
		unlink(out_tmp);
}

void
cli_init(const char *p, int argc, char **argv)
{
	const char *slash = strrchr(p, '/');

	prog = slash ? slash + 1 : p;
	argc_saved = argc;
	argv_saved = argv;
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

FILE *
cli_out_open(const char *path, int force)
{
	int fd;

	if (path == NULL || strcmp(path, "-") == 0) {
		if (!force && isatty(STDOUT_FILENO))
			cli_usage_error("refusing to write a tensor stream to a "
			    "terminal (redirect stdout, use --output, or --force)");
		out_fp = stdout;
		return stdout;
	}
	if (asprintf(&out_tmp, "%s.tmpXXXXXX", path) < 0 ||
	    (out_path = strdup(path)) == NULL)
		cli_die(EX_OSERR, "out of memory");
	if ((fd = mkstemp(out_tmp)) < 0 || (out_fp = fdopen(fd, "wb")) == NULL) {
		int e = errno;
		free(out_tmp);
		out_tmp = NULL;
		cli_die(EX_CANTCREAT, "%s: %s", path, strerror(e));
	}
	return out_fp;
}

void
cli_out_commit(void)
{
	if (out_fp == NULL || out_fp == stdout) {
		if (fflush(stdout) != 0 || ferror(stdout) || fclose(stdout) != 0)
			cli_die(EX_IOERR, "write error on stdout: %s",
			    strerror(errno));
		return;
	}
	if (fflush(out_fp) != 0 || ferror(out_fp) || fclose(out_fp) != 0)
		cli_die(EX_IOERR, "%s: write error: %s", out_path,
		    strerror(errno));
	out_fp = NULL;
	if (rename(out_tmp, out_path) != 0)
		cli_die(EX_CANTCREAT, "%s: %s", out_path, strerror(errno));
	free(out_tmp);
	out_tmp = NULL;
	if (fflush(stdout) != 0 || ferror(stdout) || fclose(stdout) != 0)
		cli_die(EX_IOERR, "write error on stdout: %s", strerror(errno));
}

struct ts_writer *
cli_writer(FILE *fp, const char *level_opt)
{
	const char *env = getenv("PRIVADA_LEVEL");
	const char *th = getenv("PRIVADA_THREADS");
	int level = 1, threads = 0;
	struct ts_writer *w;

	if (level_opt != NULL)
		level = (int)cli_ll("--level", level_opt, -131072, 22);
	else if (env != NULL && *env != '\0')
		level = (int)cli_ll("PRIVADA_LEVEL", env, -131072, 22);
	if (th != NULL && *th != '\0')
		threads = (int)cli_ll("PRIVADA_THREADS", th, 0, 64);
	if ((w = ts_writer_open(fp, fp == stdout ? "<stdout>" : out_path,
	    level, threads)) == NULL)
		cli_die(EX_OSERR, "out of memory");
	return w;
}

struct ts_reader *
cli_reader(FILE *fp, const char *label)
{
	struct ts_reader *r = ts_reader_open(fp, label);

	if (r == NULL)
		cli_die(EX_OSERR, "out of memory");
	return r;
}

void
cli_ts_die(int code, const char *msg)
{
	int ex = EX_DATAERR;

	if (code == TS_E_NOMEM)
		ex = EX_OSERR;
	else if (code == TS_E_IO)
		ex = EX_IOERR;
	else if (code == TS_E_USAGE)
		ex = EX_SOFTWARE;
	cli_die(ex, "%s", msg);
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
cli_inherit(struct ts_meta *dst, const struct ts_meta *src, const char *label)
{
	const char *key = NULL;

	for (size_t i = 0; i < src->n; i++) {
		const struct ts_kv *kv = &src->kv[i];
		const char *old;

		if (strncmp(kv->key, "prov.", 5) == 0)
			continue;
		old = ts_meta_get(dst, kv->key);
		if (old != NULL && strcmp(old, kv->val) != 0) {
			key = kv->key;
			/* Two inputs disagreeing on a ledger entry cannot both
			 * be honest; other keys: the first input wins. */
			if (strncmp(key, "dp.", 3) == 0)
				cli_die(EX_DATAERR, "%s: ledger entry '%s' "
				    "conflicts with another input", label, key);
			continue;
		}
		if (old == NULL && ts_meta_set(dst, kv->key, kv->val) != 0)
			cli_die(EX_OSERR, "out of memory");
	}
}

void
cli_prov(struct ts_meta *m)
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
	if (ts_meta_set(m, "prov.tool", prog) != 0 ||
	    ts_meta_set(m, "prov.version", PRIVADA_VERSION) != 0 ||
	    ts_meta_set(m, "prov.args", ts_utf8_valid(s, strlen(s)) ? s :
	    "(arguments are not UTF-8)") != 0)
		cli_die(EX_OSERR, "out of memory");
	free(s);
}

void
cli_prov_input(struct ts_meta *m, int idx, const char *label, uint64_t digest)
{
	char key[64];

	snprintf(key, sizeof key, "prov.input.%d.name", idx);
	if (ts_meta_set(m, key, ts_utf8_valid(label, strlen(label)) ? label :
	    "(name is not UTF-8)") != 0)
		cli_die(EX_OSERR, "out of memory");
	snprintf(key, sizeof key, "prov.input.%d.xxh64", idx);
	if (ts_meta_setf(m, key, "%016llx", (unsigned long long)digest) != 0)
		cli_die(EX_OSERR, "out of memory");
}

void
cli_progress(const char *what, uint64_t done, uint64_t total)
{
	static struct timespec last;
	struct timespec now;

	if (quiet || !isatty(STDERR_FILENO))
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (progress_shown && (now.tv_sec - last.tv_sec) * 1000000000L +
	    (now.tv_nsec - last.tv_nsec) < 250000000L)
		return;
	last = now;
	if (total)
		fprintf(stderr, "\r%s: %s %llu/%llu (%.0f%%)\033[K", prog, what,
		    (unsigned long long)done, (unsigned long long)total,
		    100.0 * (double)done / (double)total);
	else
		fprintf(stderr, "\r%s: %s %llu\033[K", prog, what,
		    (unsigned long long)done);
	progress_shown = 1;
}

void
cli_progress_done(void)
{
	if (progress_shown) {
		fprintf(stderr, "\r\033[K");
		progress_shown = 0;
	}
}
