/*
 * psdshrink: make released covariance blocks positive semi-definite by
 * shrinking them towards a target (post-processing, no new release).
 */
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "la.h"
#include "ledger.h"
#include "opts.h"
#include "psd.h"
#include "tensor.h"
#include "tstream.h"

#define DEFAULT_TOL 1e-6
#define MIN_TOL 1e-15
/* Relative tolerance of the symmetry check: covariances are written
 * mirrored, so anything beyond rounding is a malformed input. */
#define SYM_RTOL 1e-12

enum { M_SHRINK, M_EIGCLIP, M_NONE };
enum { T_IDENTITY, T_DIAG, T_FILE };
enum { OPT_FLOOR = OPTS_FIRST_TOOL, OPT_METHOD, OPT_TARGET, OPT_TOL };

static const char *const methods[] = { "shrink", "eigclip", "none", NULL };
static const char *const tnames[] = { "identity", "diag", "file" };

struct opts {
	struct opts_common c;	/* -f -o -q -v --level */
	const char *target_file;
	int method, target;
	int floor_set, tol_set, target_set;
	double floor, tol;
};

/* The --target stream: its cov/<i> and subspace/<i> tensors. */
struct target {
	const char *label;
	struct tensor *t;
	size_t n;
	struct ts_meta meta;
	uint64_t digest;
};

/* The blocks shrunk although PRIMA's Theorem 2 condition does not hold,
 * summarised in one warning at the end of the run. */
struct violations {
	size_t n;		/* blocks shrunk with ||Sigma||_F >= ||C~||_F */
	double worst;		/* the largest ||Sigma||_F / ||C~||_F of them */
	char name[TS_MAX_NAME + 1];	/* the block with that ratio */
	double ns, nc;		/* its norms */
};

/* A subspace/<i> tensor of the input, kept to compare with the target's. */
struct seen {
	struct tensor *t;
	size_t n;
};

static const struct option longopts[] = {
	{ "force", no_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },
	{ "output", required_argument, NULL, 'o' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "version", no_argument, NULL, 'V' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "level", required_argument, NULL, OPTS_LEVEL },
	{ "floor", required_argument, NULL, OPT_FLOOR },
	{ "method", required_argument, NULL, OPT_METHOD },
	{ "target", required_argument, NULL, OPT_TARGET },
	{ "tol", required_argument, NULL, OPT_TOL },
	{ NULL, 0, NULL, 0 }
};

__attribute__((noreturn)) static void
usage(int status)
{
	FILE *fp = status ? stderr : stdout;

	fputs("usage: psdshrink [-fhqVv] [-o file] [--floor value] "
	    "[--level n]\n"
	    "                 [--method method] [--target target] "
	    "[--tol tol] [file]\n", fp);
	if (status == 0)
		fputs("\n"
		    "  -f, --force          write to a terminal\n"
		    "  -h, --help           show this help\n"
		    "  -o, --output FILE    write FILE (through a temporary "
		    "file), not stdout\n"
		    "  -q, --quiet          no warnings\n"
		    "  -V, --version        show the version\n"
		    "  -v, --verbose        report each block on stderr\n"
		    "      --floor VALUE    eigclip: smallest eigenvalue kept "
		    "(default 0)\n"
		    "      --level N        zstd level of the output (default "
		    "1)\n"
		    "      --method METHOD  shrink (default), eigclip or none\n"
		    "      --target TARGET  shrink towards identity (default), "
		    "diag or the\n"
		    "                       cov/<i> tensors of a stream FILE\n"
		    "      --tol TOL        shrink: bisection tolerance on alpha "
		    "(default 1e-6)\n", fp);
	exit(status);
}

/* ---- ledger ---- */

/* ---- checks ---- */

static int
is_cov(const char *name)
{
	return strncmp(name, "cov/", 4) == 0;
}

static int
is_subspace(const char *name)
{
	return strncmp(name, "subspace/", 9) == 0;
}

/* A covariance block: f64, 2-D, square, finite and symmetric. */
static size_t
check_cov(const struct tensor *t, const char *label)
{
	double asym;
	size_t k;

	if (t->dtype != TS_F64 || t->ndim != 2 || t->dims[0] != t->dims[1])
		cli_die(EX_DATAERR, "%s: tensor '%s': expected an f64 [k, k] "
		    "covariance, got %s with %d dims", label, t->name,
		    ts_dtype_name(t->dtype) ? ts_dtype_name(t->dtype) : "?",
		    t->ndim);
	k = (size_t)t->dims[0];
	if (k == 0)
		cli_die(EX_DATAERR, "%s: tensor '%s' is empty", label, t->name);
	asym = la_asymmetry(k, t->data);
	if (asym < 0)
		cli_die(EX_DATAERR, "%s: tensor '%s': an entry is not finite",
		    label, t->name);
	if (asym > SYM_RTOL)
		cli_die(EX_DATAERR, "%s: tensor '%s' is not symmetric (relative "
		    "asymmetry %.3g)", label, t->name, asym);
	return k;
}

static const struct tensor *
target_find(const struct target *tg, const char *name)
{
	for (size_t i = 0; i < tg->n; i++)
		if (strcmp(tg->t[i].name, name) == 0)
			return &tg->t[i];
	return NULL;
}

static void
target_read(struct target *tg, const char *path)
{
	FILE *fp = cli_open_in(path, &tg->label);
	struct ts_reader *r = cli_reader(fp, tg->label);
	int rc;

	if ((rc = ts_read_all(r, &tg->t, &tg->n)) != 0)
		cli_rdie(r, rc);
	if (ts_meta_copy_except(&tg->meta, ts_reader_meta(r), "") != 0)
		cli_die(EX_OSERR, "out of memory");
	tg->digest = ts_reader_digest(r);
	ts_reader_close(r);
	cli_close_in(fp);
	for (size_t i = 0; i < tg->n; i++) {
		size_t k;
		double *w;

		if (!is_cov(tg->t[i].name))
			continue;
		/* The bisection needs f(1) > 0: a positive definite target. */
		k = check_cov(&tg->t[i], tg->label);
		w = cli_reallocarray(NULL, k * k, sizeof *w);
		memcpy(w, tg->t[i].data, k * k * sizeof *w);
		if (la_chol(k, w) != 0) {
			free(w);
			cli_die(EX_DATAERR, "%s: target '%s' is not positive "
			    "definite (make it so first, e.g. with psdshrink "
			    "--method eigclip --floor F)", tg->label,
			    tg->t[i].name);
		}
		free(w);
	}
}

/* Stop on a failure of psd.h for the block name. */
__attribute__((noreturn)) static void
psd_die(int rc, const char *name)
{
	if (rc == PV_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	if (rc == PV_E_NOTPD)
		cli_die(EX_DATAERR, "%s: the target is not positive definite",
		    name);
	cli_die(EX_SOFTWARE, "%s: the eigensolver failed", name);
}

/* Process one cov/<i> tensor t (data read): replace its data and add
 * psd.* metadata. */
static void
process(struct tensor *t, const struct opts *o, const struct target *tg,
    const char *label, struct violations *v)
{
	const struct tensor *st = NULL;
	const double *sfull = NULL;
	double *out, *sdiag = NULL, nc, ns = 0, alpha = 0, lmin = NAN;
	size_t k = check_cov(t, label);
	int tries = 0, thm = 0, rc;

	if (o->method == M_NONE) {
		cli_meta_set(&t->meta, "psd.method", "none");
		cli_meta_set(&t->meta, "psd.alpha", "0");
		return;
	}
	out = cli_reallocarray(NULL, k * k, sizeof *out);
	nc = psd_fnorm(k * k, t->data);
	if (o->method == M_EIGCLIP) {
		size_t clipped;

		if ((rc = psd_eigclip(k, t->data, o->floor, out, &clipped,
		    &lmin)) != 0)
			psd_die(rc, t->name);
		cli_meta_set(&t->meta, "psd.method", "eigclip");
		cli_meta_set(&t->meta, "psd.alpha", "0");
		if (ts_meta_setf(&t->meta, "psd.floor", "%.17g", o->floor) != 0 ||
		    ts_meta_setf(&t->meta, "psd.clipped", "%zu", clipped) != 0)
			cli_die(EX_OSERR, "out of memory");
		if (o->c.verbose)
			fprintf(stderr, "%s: %s: k %zu, smallest eigenvalue %.6g, "
			    "%zu clipped to %.6g\n", cli_prog(), t->name, k, lmin,
			    clipped, o->floor);
		goto done;
	}
	if (o->target == T_FILE) {
		st = target_find(tg, t->name);
		if (st == NULL)
			cli_die(EX_DATAERR, "%s: the target has no tensor '%s'",
			    tg->label, t->name);
		if (st->dims[0] != k)
			cli_die(EX_DATAERR, "%s: target '%s' is %llu x %llu, the "
			    "input's is %zu x %zu", tg->label, t->name,
			    (unsigned long long)st->dims[0],
			    (unsigned long long)st->dims[0], k, k);
		sfull = st->data;
		ns = psd_fnorm(k * k, sfull);
	} else {
		sdiag = cli_reallocarray(NULL, k, sizeof *sdiag);
		psd_target_diag(k, t->data, o->target == T_IDENTITY, sdiag);
		ns = psd_fnorm(k, sdiag);
	}
	/* PRIMA (paper 001), Theorem 2: for alpha in (0, 1) the shrunk
	 * matrix is closer to the true covariance than C~ when
	 * ||Sigma||_F < ||C~||_F. */
	thm = ns < nc;
	if ((rc = psd_shrink(k, t->data, sfull, sdiag, o->tol, out, &alpha,
	    &tries, &lmin)) != 0)
		psd_die(rc, t->name);
	cli_meta_set(&t->meta, "psd.method", "shrink");
	cli_meta_set(&t->meta, "psd.target", tnames[o->target]);
	cli_meta_set(&t->meta, "psd.theorem2", thm ? "true" : "false");
	if (ts_meta_setf(&t->meta, "psd.alpha", "%.17g", alpha) != 0 ||
	    ts_meta_setf(&t->meta, "psd.tol", "%.17g", o->tol) != 0 ||
	    ts_meta_setf(&t->meta, "psd.target_fnorm", "%.17g", ns) != 0 ||
	    ts_meta_setf(&t->meta, "psd.input_fnorm", "%.17g", nc) != 0)
		cli_die(EX_OSERR, "out of memory");
	if (o->c.verbose)
		fprintf(stderr, "%s: %s: k %zu, alpha %.17g after %d Cholesky "
		    "attempts; ||Sigma||_F %.6g %s ||C||_F %.6g: Theorem 2 "
		    "condition %s\n", cli_prog(), t->name, k, alpha, tries, ns,
		    thm ? "<" : ">=", nc, thm ? "holds" : "violated");
	if (!thm && alpha > 0) {
		/* nc > 0 here: a zero block is positive semi-definite. */
		double ratio = nc > 0 ? ns / nc : INFINITY;

		if (v->n++ == 0 || ratio > v->worst) {
			v->worst = ratio;
			v->ns = ns;
			v->nc = nc;
			snprintf(v->name, sizeof v->name, "%s", t->name);
		}
	}
done:
	free(t->data);
	t->data = out;
	free(sdiag);
}

/* ---- streaming ---- */

/* The input's subspace/<i> must equal the target's, when it has one. */
static void
check_subspaces(const struct seen *s, const struct target *tg)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct tensor *a = &s->t[i], *b = target_find(tg, a->name);
		uint64_t bytes;

		if (b == NULL)
			continue;
		if (b->dtype != a->dtype || b->ndim != a->ndim ||
		    memcmp(b->dims, a->dims, sizeof a->dims) != 0 ||
		    tensor_bytes(a, &bytes) != 0 ||
		    memcmp(a->data, b->data, (size_t)bytes) != 0)
			cli_die(EX_DATAERR, "%s: '%s' differs from the input's: "
			    "the target covariances are for other features",
			    tg->label, a->name);
	}
}

static void
parse_target(struct opts *o, const char *arg)
{
	o->target_set = 1;
	if (strcmp(arg, "identity") == 0)
		o->target = T_IDENTITY;
	else if (strcmp(arg, "diag") == 0)
		o->target = T_DIAG;
	else if (*arg == '\0')
		cli_usage_error("invalid --target '': expected identity, diag "
		    "or a file");
	else {
		o->target = T_FILE;
		o->target_file = arg;
	}
}

int
main(int argc, char **argv)
{
	struct opts o = { .c = OPTS_COMMON_INIT, .method = M_SHRINK,
	    .target = T_IDENTITY, .tol = DEFAULT_TOL };
	struct target tg = { 0 };
	struct seen sub = { 0 };
	struct ts_meta meta = { 0 }, prov = { 0 };
	struct ts_reader *r;
	struct ts_writer *w;
	struct tensor hdr;
	struct cli_rowbuf pb = { NULL, 0 };
	struct violations viol = { 0 };
	size_t ncov = 0;
	const char *label;
	FILE *in;
	int ch, rc, nin = 0;

	cli_init("psdshrink", argc, argv);
	while ((ch = getopt_long(argc, argv, "fho:qVv", longopts, NULL)) != -1) {
		if (opts_common(&o.c, ch, optarg, usage))
			continue;
		switch (ch) {
		case OPT_FLOOR:
			o.floor = cli_double("--floor", optarg, 0, DBL_MAX);
			o.floor_set = 1;
			break;
		case OPT_METHOD:
			o.method = cli_choice("--method", optarg, methods);
			break;
		case OPT_TARGET:
			parse_target(&o, optarg);
			break;
		case OPT_TOL:
			o.tol = cli_double("--tol", optarg, MIN_TOL, 0.5);
			o.tol_set = 1;
			break;
		default:
			usage(EX_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc > 1)
		cli_usage_error("at most one input file");
	if (o.floor_set && o.method != M_EIGCLIP)
		cli_usage_error("--floor applies to --method eigclip only");
	if ((o.tol_set || o.target_set) && o.method != M_SHRINK)
		cli_usage_error("--%s applies to --method shrink only",
		    o.tol_set ? "tol" : "target");

	in = cli_open_in(argc ? argv[0] : NULL, &label);
	if (o.target == T_FILE && strcmp(o.target_file, "-") == 0 &&
	    strcmp(label, "<stdin>") == 0)
		cli_usage_error("the input and --target cannot both be stdin");
	w = cli_writer(cli_out_open(o.c.output, o.c.force), o.c.level);
	/* The target is read first, whole: it is as small as the input's
	 * covariances, which arrive one by one. */
	if (o.target == T_FILE) {
		target_read(&tg, o.target_file);
		cli_prov_input(&prov, nin++, tg.label, tg.digest, &tg.meta);
	}
	r = cli_reader(in, label);
	while ((rc = ts_read_next(r, &hdr)) == 1) {
		if (is_cov(hdr.name) || (o.target == T_FILE &&
		    is_subspace(hdr.name))) {
			if ((rc = ts_read_data(r, &hdr)) != 0)
				cli_rdie(r, rc);
			if (is_cov(hdr.name)) {
				process(&hdr, &o, &tg, label, &viol);
				ncov++;
			}
			if ((rc = ts_write_tensor(w, &hdr)) != 0)
				cli_wdie(w, rc);
			if (is_subspace(hdr.name)) {
				sub.t = cli_reallocarray(sub.t, sub.n + 1,
				    sizeof *sub.t);
				sub.t[sub.n++] = hdr;
				continue;
			}
		} else {
			cli_pass_tensor(r, w, &hdr, &pb);
		}
		tensor_free(&hdr);
	}
	if (rc < 0)
		cli_rdie(r, rc);
	if (ncov == 0)
		cli_die(EX_DATAERR, "%s: no cov/<i> tensor (expected a covest "
		    "stream)", label);
	if (o.target == T_FILE)
		check_subspaces(&sub, &tg);
	/* One line per run, however many blocks: -v reports each one. */
	if (viol.n > 0)
		cli_warn("%zu of %zu covariances were shrunk although PRIMA's "
		    "Theorem 2 condition ||Sigma||_F < ||C||_F is violated "
		    "(worst %s: ||Sigma||_F %.6g >= ||C||_F %.6g, ratio %.3g): "
		    "they may be farther from the true covariance (try "
		    "--target diag)", viol.n, ncov, viol.name, viol.ns, viol.nc,
		    viol.worst);
	/* No release: the ledger is copied as it is (post-processing). */
	cli_inherit(&meta, ts_reader_meta(r), label);
	if (o.target == T_FILE)
		cli_inherit(&meta, &tg.meta, tg.label);
	cli_prov_input(&prov, nin, label, ts_reader_digest(r),
	    ts_reader_meta(r));
	cli_out_finish(w, &meta, &prov);
	ts_reader_close(r);
	cli_close_in(in);
	cli_out_commit();
	for (size_t i = 0; i < tg.n; i++)
		tensor_free(&tg.t[i]);
	free(tg.t);
	ts_meta_free(&tg.meta);
	for (size_t i = 0; i < sub.n; i++)
		tensor_free(&sub.t[i]);
	free(sub.t);
	ts_meta_free(&meta);
	ts_meta_free(&prov);
	cli_rowbuf_free(&pb);
	return 0;
}
