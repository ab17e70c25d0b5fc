/* teacher-vote: aggregate the label votes of teacher models with differential privacy (PATE). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dpcli.h"
#include "ledger.h"
#include "noise.h"
#include "parts.h"
#include "rdp.h"
#include "tensor.h"
#include "tstream.h"

#define MAX_CLASSES (1u << 20)		/* --classes */
#define MAX_TEACHERS (UINT32_C(1) << 31)	/* votes per count fit u32 */
#define MAX_COUNTS (UINT64_C(1) << 31)	/* queries x classes */
#define MAX_AUDIT 32768			/* --audit-repeat: 2 tensors each */
#define GAMMA_MIN 1e-6			/* --gamma range (besides inf) */
#define GAMMA_MAX 1e6
#define SIGMA_MIN 1e-3			/* --sigma, --sigma1 range (besides 0) */
#define SIGMA_MAX 1e9
#define THRESHOLD_MAX 1e12
#define LAPLACE_BITS 32			/* the scale's numerator is <= 2^32 */
#define ROW_BYTES (1u << 20)		/* bytes of votes read at once */
#define WORK_ITEM "teacher-vote"
#define UNSAFE_ENV "PRIVADA_TEST_UNSAFE"
#define SS_GRID_BITS 32			/* GNSS release on the grid 2^-32 */
#define SS_FLOOR_BITS 12		/* smooth sensitivity >= 2^-12 */
#define SS_SIGMA_MIN 1e-3		/* --ss-sigma range */
#define SS_SIGMA_MAX 1e3
#define SS_BETA_DEFAULT 0.4		/* --ss-beta: 0.4 / --ss-order */
#define SS_MAX_RDP 1e6			/* data-dependent RDP released */

enum { M_LNMAX, M_GNMAX, M_CONFIDENT };
static const char *const mech_names[] = { "lnmax", "gnmax",
    "confident-gnmax", NULL };
static const char *const ledger_mech[] = { "pate_lnmax", "pate_gnmax",
    "pate_confident_gnmax" };

enum {
	OPT_AUDIT = 256, OPT_CLASSES, OPT_DDEP, OPT_DATASET, OPT_GAMMA,
	OPT_LEVEL, OPT_MAX_ANSWERS, OPT_MECHANISM, OPT_REVEAL, OPT_SIGMA,
	OPT_SIGMA1, OPT_SS_BETA, OPT_SS_ORDER, OPT_SS_SIGMA, OPT_THRESHOLD,
	OPT_UNSAFE
};

struct opts {
	const char *output, *level, *seed, *dataset;
	int force, quiet, mech, ddep, unsafe, reveal;
	int has_gamma, has_sigma, has_sigma1, has_threshold, has_max;
	int has_ss_beta, has_ss_order, has_ss_sigma;
	double gamma, sigma, sigma1, threshold;	/* gamma inf: no noise */
	double ss_beta, ss_order, ss_sigma;	/* --data-dependent */
	uint64_t classes, max_answers, audit;
};

/* The vote histograms: count[q * k + j] teachers voted j on query q. */
struct votes {
	size_t q, k;
	uint64_t n;			/* teachers */
	uint32_t *count;
};

/* What a teacher stream says about the partition it was trained on. */
struct part {
	const char *label;
	struct split_part sp;		/* split.part, split.parent, split.id */
	int predicted;			/* written by predict */
	char *queries;			/* predict's prov.input.0.xxh64 */
	char *qraw;			/* predict.raw.* as "key=value;..." */
};

/* The samplers of a run. */
struct noise {
	int off;			/* no noise: NOT private */
	uint64_t lnum, lden;		/* lnmax: Laplace scale lnum / lden */
	struct noise_dg *g;		/* gnmax, confident answers: sigma */
	struct noise_dg *g1;		/* confident check: sigma1 */
};

__attribute__((noreturn)) static void
usage(int status)
{
	FILE *fp = status ? stderr : stdout;

	fputs("usage: teacher-vote [-fqV] [-o file] [-S seed] --classes k\n"
	    "                    [--audit-repeat n] [--data-dependent] "
	    "[--dataset name]\n"
	    "                    [--gamma g] [--level level] "
	    "[--max-answers n]\n"
	    "                    [--mechanism name] [--sigma s] "
	    "[--sigma1 s]\n"
	    "                    [--ss-beta b] [--ss-order a] "
	    "[--ss-sigma s]\n"
	    "                    [--threshold t] [file ...]\n", fp);
	if (status == 0)
		fputs("\n"
		    "  -f, --force            write to a terminal\n"
		    "  -h, --help             show this help\n"
		    "  -o, --output FILE      write FILE (through a temporary "
		    "file), not stdout\n"
		    "  -q, --quiet            no warnings\n"
		    "  -S, --seed N           reproducible noise: the output is "
		    "NOT private\n"
		    "  -V, --version          show the version\n"
		    "      --audit-repeat N   N independent releases (tests "
		    "only)\n"
		    "      --classes K        number of classes (required)\n"
		    "      --data-dependent   gnmax, confident-gnmax: also release "
		    "the data-dependent\n"
		    "                         RDP at --ss-order, with smooth "
		    "sensitivity (GNSS)\n"
		    "      --dataset NAME     the protected dataset (default: "
		    "from the inputs)\n"
		    "      --gamma G          lnmax: Laplace noise of scale 1/G "
		    "per count; inf: none,\n"
		    "                         NOT private\n"
		    "      --level N          zstd level of the output (default "
		    "1)\n"
		    "      --max-answers N    confident-gnmax: answer at most N "
		    "queries\n"
		    "      --mechanism NAME   lnmax (default), gnmax or "
		    "confident-gnmax\n"
		    "      --sigma S          gnmax, confident-gnmax: Gaussian "
		    "noise per count;\n"
		    "                         0: none, NOT private\n"
		    "      --sigma1 S         confident-gnmax: noise of the "
		    "threshold check\n"
		    "      --ss-beta B        smoothness of the sensitivity "
		    "(default 0.4 / order)\n"
		    "      --ss-order A       the order of the data-dependent "
		    "release\n"
		    "      --ss-sigma S       GNSS noise: S times the smooth "
		    "sensitivity\n"
		    "      --threshold T      confident-gnmax: answer when the "
		    "noisy top count >= T\n", fp);
	exit(status);
}

/* ---- options ---- */

static double
sigma_arg(const char *opt, const char *arg)
{
	double v = cli_double(opt, arg, 0, SIGMA_MAX);

	if (v != 0 && v < SIGMA_MIN)
		cli_usage_error("invalid %s '%s': 0 or at least %g", opt, arg,
		    SIGMA_MIN);
	return v;
}

static double
gamma_arg(const char *arg)
{
	double v;

	if (strcmp(arg, "inf") == 0)
		return INFINITY;
	v = cli_double("--gamma", arg, 0, GAMMA_MAX);
	if (v < GAMMA_MIN)
		cli_usage_error("invalid --gamma '%s': between %g and %g, or "
		    "inf", arg, GAMMA_MIN, GAMMA_MAX);
	return v;
}

/* An option that the mechanism does not take. */
static void
not_for(const struct opts *o, int has, const char *opt)
{
	if (has)
		cli_usage_error("%s does not apply to --mechanism %s", opt,
		    mech_names[o->mech]);
}

/* Is a one of rdp-account's default orders (where every curve is)? */
static int
default_order(double a)
{
	size_t n;
	const double *ord = rdp_default_orders(&n);

	for (size_t i = 0; i < n; i++)
		if (ord[i] == a)
			return 1;
	return 0;
}

static void
check_ddep(struct opts *o)
{
	if (!o->ddep) {
		if (o->has_ss_beta || o->has_ss_order || o->has_ss_sigma ||
		    o->reveal)
			cli_usage_error("--ss-beta, --ss-order and --ss-sigma "
			    "go with --data-dependent");
		return;
	}
	if (o->mech == M_LNMAX)
		cli_usage_error("--data-dependent applies to gnmax and "
		    "confident-gnmax: the smooth sensitivity of Papernot et "
		    "al. (2018) is derived for Gaussian noise, and lnmax has "
		    "only its data-independent bound");
	if (!o->has_ss_order || !o->has_ss_sigma)
		cli_usage_error("--data-dependent needs --ss-order and "
		    "--ss-sigma: the data-dependent bound is released only "
		    "with smooth-sensitivity noise");
	if (!default_order(o->ss_order))
		cli_usage_error("invalid --ss-order '%g': one of the default "
		    "orders of rdp-account (1.1 to 10.9 by 0.1, 11 to 63, 128, "
		    "256, 512, 1024)", o->ss_order);
	if (!o->has_ss_beta)
		o->ss_beta = SS_BETA_DEFAULT / o->ss_order;
	if (!(2 * o->ss_order * o->ss_beta < 1))
		cli_usage_error("--ss-beta %g and --ss-order %g: the GNSS "
		    "release needs 2 order beta < 1", o->ss_beta, o->ss_order);
	if (o->audit)
		cli_usage_error("--data-dependent does not go with "
		    "--audit-repeat");
	if (o->unsafe)
		cli_usage_error("--data-dependent does not go with "
		    "--unsafe-test-half-noise");
	if (o->reveal) {
		const char *e = getenv(UNSAFE_ENV);
		if (e == NULL || strcmp(e, "1") != 0)
			cli_usage_error("--unsafe-test-reveal-ss is refused "
			    "unless %s=1: it publishes data-dependent values "
			    "(tests only)", UNSAFE_ENV);
	}
}

static void
check_options(struct opts *o)
{
	const char *e;

	check_ddep(o);
	if (o->classes == 0)
		cli_usage_error("--classes is required: the number of classes "
		    "must not be learnt from the votes");
	switch (o->mech) {
	case M_LNMAX:
		if (!o->has_gamma)
			cli_usage_error("no privacy parameters: lnmax needs "
			    "--gamma");
		not_for(o, o->has_sigma, "--sigma");
		not_for(o, o->has_sigma1, "--sigma1");
		not_for(o, o->has_threshold, "--threshold");
		not_for(o, o->has_max, "--max-answers");
		break;
	case M_GNMAX:
		if (!o->has_sigma)
			cli_usage_error("no privacy parameters: gnmax needs "
			    "--sigma");
		not_for(o, o->has_gamma, "--gamma");
		not_for(o, o->has_sigma1, "--sigma1");
		not_for(o, o->has_threshold, "--threshold");
		not_for(o, o->has_max, "--max-answers");
		break;
	default:
		if (!o->has_sigma || !o->has_sigma1 || !o->has_threshold)
			cli_usage_error("no privacy parameters: confident-gnmax "
			    "needs --sigma1, --threshold and --sigma");
		not_for(o, o->has_gamma, "--gamma");
		if ((o->sigma == 0) != (o->sigma1 == 0))
			cli_usage_error("--sigma 0 and --sigma1 0 go together "
			    "(no noise at all, NOT private)");
	}
	if (o->unsafe) {
		e = getenv(UNSAFE_ENV);
		if (e == NULL || strcmp(e, "1") != 0)
			cli_usage_error("--unsafe-test-half-noise is refused "
			    "unless %s=1: it breaks the privacy guarantee (tests "
			    "only)", UNSAFE_ENV);
	}
}

static int
noise_off(const struct opts *o)
{
	return o->mech == M_LNMAX ? isinf(o->gamma) : o->sigma == 0;
}

/*
 * The discrete Laplace scale b = num / den used for --gamma g: the exact
 * 1/g when g times 2^k is an integer for some k <= LAPLACE_BITS, else
 * num = 2^LAPLACE_BITS and den = floor(g num), so b >= 1/g: at least the
 * noise claimed (the privacy of a scale-b discrete Laplace on integer
 * counts of L1 sensitivity D is D/b, which only falls as b grows).  The
 * numerator stays small so that the sampler's U + num V never overflows.
 */
static void
laplace_scale(double g, int half, uint64_t *num, uint64_t *den)
{
	int k = 0;
	double d = g;

	while (k < LAPLACE_BITS && d != floor(d)) {
		d *= 2;
		k++;
	}
	*num = UINT64_C(1) << k;
	*den = (uint64_t)floor(d);	/* g >= 1e-6 keeps it >= 1 */
	if (half)
		*den *= 2;	/* g <= 1e6: den < 2^53, no overflow */
}

/* ---- input ---- */

static char *
dup_or_null(const char *s)
{
	return s ? cli_strdup(s) : NULL;
}

/* Allocate the histograms once the number of queries is known. */
static void
votes_alloc(struct votes *v, uint64_t q, const char *label)
{
	if (q > MAX_COUNTS / v->k)
		cli_die(EX_DATAERR, "%s: %" PRIu64 " queries of %zu classes: "
		    "more than %" PRIu64 " vote counts", label, q, v->k,
		    MAX_COUNTS);
	v->q = (size_t)q;
	v->count = cli_calloc(v->q * v->k, sizeof *v->count);
}

/* Add the votes of one teacher (or rows teachers) to the histograms. */
static void
add_votes(struct votes *v, const int32_t *lab, size_t rows,
    const char *label, const char *tname)
{
	for (size_t r = 0; r < rows; r++) {
		if (v->n == MAX_TEACHERS)
			cli_die(EX_DATAERR, "%s: more than %" PRIu32 " teachers",
			    label, MAX_TEACHERS);
		for (size_t q = 0; q < v->q; q++) {
			int32_t c = lab[r * v->q + q];
			if (c < 0 || (uint64_t)c >= v->k)
				cli_die(EX_DATAERR, "%s: tensor '%s': teacher "
				    "%" PRIu64 ", query %zu: label %" PRId32
				    " outside [0, %zu) (--classes %zu)", label,
				    tname, v->n, q, c, v->k, v->k);
			v->count[q * v->k + (size_t)c]++;
		}
		v->n++;
	}
}

/* The tensor 'votes' (i32 [teachers, queries]), read by chunks of rows. */
static void
read_votes_tensor(struct ts_reader *r, const struct tensor *h,
    struct votes *v, const char *label)
{
	size_t cap;
	int32_t *buf;
	int64_t got;

	if (h->dtype != TS_I32 || h->ndim != 2)
		cli_die(EX_DATAERR, "%s: tensor 'votes': expected i32 of 2 "
		    "dimensions [teachers, queries], not %s of %d",
		    label, ts_dtype_name(h->dtype) ? ts_dtype_name(h->dtype) :
		    "?", h->ndim);
	votes_alloc(v, h->dims[1], label);
	cap = v->q == 0 ? 1 : ROW_BYTES / 4 / v->q;
	cap = cap ? cap : 1;
	buf = cli_reallocarray(NULL, cap, v->q ? v->q * 4 : 4);
	while ((got = ts_read_rows(r, buf, cap)) > 0)
		add_votes(v, buf, (size_t)got, label, "votes");
	if (got < 0)
		cli_rdie(r, (int)got);
	free(buf);
}

/* One teacher's 'y_pred' (i32 [queries] or [queries, 1]). */
static void
read_ypred_tensor(struct ts_reader *r, const struct tensor *h,
    struct votes *v, const char *label)
{
	int32_t *lab = NULL;
	size_t n = 0, cap = 0;
	int64_t got;

	if (h->dtype != TS_I32 || !(h->ndim == 1 || (h->ndim == 2 &&
	    h->dims[1] == 1)))
		cli_die(EX_DATAERR, "%s: tensor 'y_pred': expected i32 labels "
		    "[queries], not %s of %d dimensions", label,
		    ts_dtype_name(h->dtype) ? ts_dtype_name(h->dtype) : "?",
		    h->ndim);
	for (;;) {
		if (n == cap) {
			cap = cap ? 2 * cap : 4096;
			lab = cli_reallocarray(lab, cap, sizeof *lab);
		}
		got = ts_read_rows(r, lab + n, cap - n);
		if (got < 0)
			cli_rdie(r, (int)got);
		if (got == 0)
			break;
		n += (size_t)got;
	}
	if (v->count == NULL)
		votes_alloc(v, n, label);
	else if (n != v->q)
		cli_die(EX_DATAERR, "%s: tensor 'y_pred' has %zu queries, the "
		    "first teacher %zu: teachers must answer the same queries",
		    label, n, v->q);
	add_votes(v, lab, 1, label, "y_pred");
	free(lab);
}

/* Read one input: a 'votes' tensor or a teacher's 'y_pred' (other
 * tensors are skipped).  *meta receives a copy of its stream metadata.
 * @return 1 for votes, 0 for y_pred. */
static int
read_input(const char *path, struct votes *v, struct ts_meta *meta,
    uint64_t *digest, const char **label, int want)
{
	FILE *fp = cli_open_in(path, label);
	struct ts_reader *r = cli_reader(fp, *label);
	struct tensor h;
	int rc, kind = -1;

	while ((rc = ts_read_next(r, &h)) == 1) {
		int is_votes = strcmp(h.name, "votes") == 0;

		if (!is_votes && strcmp(h.name, "y_pred") != 0) {
			tensor_free(&h);
			continue;
		}
		if (kind >= 0)
			cli_die(EX_DATAERR, "%s: a second tensor '%s': an input "
			    "holds one 'votes' or one 'y_pred'", *label,
			    h.name);
		kind = is_votes;
		if (want >= 0 && kind != want)
			cli_die(EX_DATAERR, "%s: tensor '%s': %s", *label,
			    h.name, want ? "a stream of 'votes' is the only "
			    "input" : "expected the predictions 'y_pred' of a "
			    "teacher, as the other inputs");
		if (kind)
			read_votes_tensor(r, &h, v, *label);
		else
			read_ypred_tensor(r, &h, v, *label);
		tensor_free(&h);
	}
	if (rc < 0)
		cli_rdie(r, rc);
	if (kind < 0)
		cli_die(EX_DATAERR, "%s: no tensor 'votes' (i32 [teachers, "
		    "queries]) or 'y_pred' (a teacher's labels, from predict)",
		    *label);
	if (ts_meta_merge(meta, ts_reader_meta(r), "", NULL) != 0)
		cli_die(EX_OSERR, "out of memory");
	*digest = ts_reader_digest(r);
	ts_reader_close(r);
	cli_close_in(fp);
	return kind;
}

/* The dataset a teacher protects: the one marked aggregate (a teacher
 * trained without privacy on its part), or --dataset. */
static const char *
teacher_dataset(const struct ts_meta *m, const char *given,
    const char *label)
{
	const char *found;
	int n;

	if (given != NULL)
		return given;
	if ((found = dpcli_aggregate_dataset(m, &n)) != NULL)
		return found;
	cli_die(EX_DATAERR, "%s: %s: name the protected dataset with "
	    "--dataset", label, n == 0 ? "no dataset is marked 'aggregate' "
	    "(dp.raw.NAME, as a teacher trained without privacy carries)" :
	    "several datasets are marked 'aggregate'");
}

/* The raw marks of the queries a teacher answered (predict.raw.*), as
 * one string to compare. */
static char *
query_marks(const struct ts_meta *m)
{
	size_t len = 1;
	char *s;

	for (size_t i = 0; i < m->n; i++)
		if (strncmp(m->kv[i].key, "predict.raw.", 12) == 0)
			len += strlen(m->kv[i].key) + strlen(m->kv[i].val) + 2;
	s = cli_malloc(len);
	*s = '\0';
	for (size_t i = 0; i < m->n; i++)
		if (strncmp(m->kv[i].key, "predict.raw.", 12) == 0) {
			strcat(s, m->kv[i].key + 12);
			strcat(s, "=");
			strcat(s, m->kv[i].val);
			strcat(s, ";");
		}
	return s;
}

/* Check one teacher stream and record its partition. */
static void
teacher_part(const struct ts_meta *m, const char *dataset,
    const char *label, struct part *p)
{
	char key[16 + LEDGER_MAX_NAME];
	const char *s, *tool;

	snprintf(key, sizeof key, "dp.raw.%s", dataset);
	s = ts_meta_get(m, key);
	if (s != NULL && strcmp(s, "row-local") == 0)
		cli_die(EX_DATAERR, "%s: the predictions are row-local in the "
		    "protected dataset %s (%s = row-local): the queries must "
		    "be public", label, dataset, key);
	snprintf(key, sizeof key, "predict.raw.%s", dataset);
	if ((s = ts_meta_get(m, key)) != NULL)
		cli_die(EX_DATAERR, "%s: the queries derive from the protected "
		    "dataset %s (%s = %s): they must be public", label,
		    dataset, key, s);
	snprintf(key, sizeof key, "split.raw.%s", dataset);
	s = ts_meta_get(m, key);
	if (s != NULL && strcmp(s, "aggregate") == 0)
		cli_die(EX_DATAERR, "%s: the part was already an aggregate of "
		    "%s when it was split (%s = aggregate): the teachers are "
		    "not independent, so one record can move them all",
		    label, dataset, key);
	switch (part_read(&p->sp, m)) {
	case PART_OK:
		break;
	case PART_NONE:
		cli_die(EX_DATAERR, "%s: no partition id (split.part): "
		    "teachers must be trained on disjoint parts from tns "
		    "split", label);
	case PART_MIXED:
		s = ts_meta_get(m, PART_MIXED_BY);
		cli_die(EX_DATAERR, "%s: split.part is '%s' (made so by %s): "
		    "the teacher derives from several parts, or from the whole "
		    "dataset without privacy, so one record can move several "
		    "teachers: each teacher must depend on one part only (and "
		    "on DP releases)", label, SPLIT_MIXED,
		    s != NULL ? s : "an input");
	case PART_BAD:
		cli_die(EX_DATAERR, "%s: split.part '%s' is not i/n with "
		    "i < n", label, ts_meta_get(m, "split.part"));
	case PART_NO_PARENT:
		cli_die(EX_DATAERR, "%s: split.part without split.parent: "
		    "cannot tell which split the part belongs to", label);
	default:
		cli_die(EX_OSERR, "out of memory");
	}
	p->label = label;
	tool = ts_meta_get(m, "prov.tool");
	p->predicted = tool && strcmp(tool, "predict") == 0;
	p->queries = p->predicted ?
	    dup_or_null(ts_meta_get(m, "prov.input.0.xxh64")) : NULL;
	p->qraw = query_marks(m);
}

/*
 * The teachers must be trained on disjoint data: parts of one split (the
 * same parent, the same number of parts and, when tns split records it,
 * the same split.id) with distinct indices (lib/dp/parts.h), and they must
 * answer the same queries.
 */
static void
check_disjoint(struct part *p, size_t n)
{
	const struct split_part **pp = cli_reallocarray(NULL, n, sizeof *pp);
	const struct part *x, *y;
	int all_queries = 1, rc;
	size_t a, b;

	for (size_t t = 0; t < n; t++)
		pp[t] = &p[t].sp;
	rc = parts_disjoint(pp, n, &a, &b);
	free(pp);
	x = &p[a];
	y = &p[b];
	switch (rc) {
	case PARTS_DISJOINT:
		break;
	case PARTS_PARENT:
		cli_die(EX_DATAERR, "%s and %s come from different "
		    "splits (split.parent %s and %s), whose parts overlap: "
		    "teachers must be disjoint parts of one split", x->label,
		    y->label, x->sp.parent, y->sp.parent);
	case PARTS_COUNT:
		cli_die(EX_DATAERR, "%s and %s come from splits into %"
		    PRIu64 " and %" PRIu64 " parts, which overlap: "
		    "teachers must be disjoint parts of one split",
		    x->label, y->label, x->sp.n, y->sp.n);
	case PARTS_ID:
		cli_die(EX_DATAERR, "%s and %s come from different "
		    "splits (split.id %s and %s), whose parts overlap",
		    x->label, y->label, x->sp.id ? x->sp.id : "none",
		    y->sp.id ? y->sp.id : "none");
	case PARTS_SAME:
		break;		/* reported after the queries */
	default:
		cli_die(EX_OSERR, "out of memory");
	}
	/* The same queries: the same digest where predict wrote one.  It
	 * writes none of queries carrying a raw mark (section 10.2 of the
	 * format: a digest of protected rows is a membership test); then
	 * the queries must at least carry the same marks (and number, as
	 * read).  With and without a digest, they differ. */
	for (size_t t = 0; t < n; t++)
		all_queries &= p[t].queries != NULL;
	for (size_t t = 1; t < n; t++) {
		if (!p[0].predicted || !p[t].predicted)
			continue;
		if (all_queries && strcmp(p[t].queries, p[0].queries) != 0)
			cli_die(EX_DATAERR, "%s and %s are predictions on "
			    "different inputs (prov.input.0.xxh64 %s and %s): "
			    "teachers must answer the same queries", p[0].label,
			    p[t].label, p[0].queries, p[t].queries);
		if ((p[t].queries == NULL) != (p[0].queries == NULL) ||
		    strcmp(p[t].qraw, p[0].qraw) != 0)
			cli_die(EX_DATAERR, "%s and %s are predictions on "
			    "different inputs (their raw marks differ: '%s' and "
			    "'%s'): teachers must answer the same queries",
			    p[0].label, p[t].label, p[0].qraw, p[t].qraw);
	}
	if (rc == PARTS_SAME)
		cli_die(EX_DATAERR, "%s and %s were trained on the same "
		    "part %" PRIu64 "/%" PRIu64 ": teachers must be "
		    "disjoint", x->label, y->label, x->sp.i, x->sp.n);
}

/* ---- the mechanisms ---- */

/*
 * Report noisy max over the k counts: each count gets independent noise
 * (discrete Laplace for lnmax, discrete Gaussian g otherwise), and the
 * largest noisy count wins, ties broken uniformly at random, by reservoir
 * sampling over the tied classes with the generator.
 */
static int32_t
noisy_argmax(struct rng *r, const uint32_t *c, size_t k,
    const struct noise *nz, int laplace, struct noise_dg *g)
{
	int64_t best = 0, v, z = 0;
	uint64_t ties = 0;
	size_t arg = 0;
	int rc = 0;

	for (size_t j = 0; j < k; j++) {
		if (!nz->off)
			rc = laplace ? noise_dlaplace(r, nz->lnum, nz->lden, &z) :
			    noise_dg_sample(g, r, &z);
		if (rc != 0)
			dpcli_noise_die(rc);
		if (__builtin_add_overflow((int64_t)c[j], z, &v))
			dpcli_noise_die(NOISE_E_OVERFLOW);
		if (j == 0 || v > best) {
			best = v;
			arg = j;
			ties = 1;
		} else if (v == best && rng_uniform_below(r, ++ties) == 0) {
			arg = j;
		}
	}
	return (int32_t)arg;
}

/* The confident-GNMax check: max count + N_Z(0, sigma1^2) >= t. */
static int
passes(struct rng *r, const uint32_t *c, size_t k, const struct noise *nz,
    double t)
{
	uint32_t m = 0;
	int64_t z = 0, s;
	int rc;

	for (size_t j = 0; j < k; j++)
		m = c[j] > m ? c[j] : m;
	if (!nz->off && (rc = noise_dg_sample(nz->g1, r, &z)) != 0)
		dpcli_noise_die(rc);
	if (__builtin_add_overflow((int64_t)m, z, &s))
		dpcli_noise_die(NOISE_E_OVERFLOW);
	/* The comparison with a double threshold is exact for |s| < 2^53;
	 * beyond, both sides are far past any threshold accepted. */
	return (double)s >= t;
}

/* One release: y[q] the answer or -1, ans[q] 1 if answered. */
static void
release(struct rng *r, const struct votes *v, const struct noise *nz,
    const struct opts *o, int32_t *y, uint8_t *ans)
{
	uint64_t answered = 0;

	for (size_t q = 0; q < v->q; q++) {
		const uint32_t *c = v->count + q * v->k;

		y[q] = -1;
		ans[q] = 0;
		if (o->mech == M_CONFIDENT) {
			/* Once max-answers are given, the rest is neither
			 * checked nor answered (the Renyi filter's budget). */
			if (o->has_max && answered == o->max_answers)
				continue;
			if (!passes(r, c, v->k, nz, o->threshold))
				continue;
		}
		y[q] = noisy_argmax(r, c, v->k, nz, o->mech == M_LNMAX, nz->g);
		ans[q] = 1;
		answered++;
	}
}

static void
write_release(struct ts_writer *w, const struct votes *v, const int32_t *y,
    const uint8_t *ans, const char *suffix)
{
	struct tensor t;
	uint64_t dims[1] = { v->q };
	char name[32];
	int rc;

	snprintf(name, sizeof name, "y%s", suffix);
	if (tensor_init(&t, name, TS_I32, 1, dims) != 0)
		cli_die(EX_SOFTWARE, "bad tensor header");
	if ((rc = ts_write_begin(w, &t)) != 0 ||
	    (rc = ts_write_rows(w, y, v->q)) != 0 ||
	    (rc = ts_write_end(w)) != 0)
		cli_wdie(w, rc);
	tensor_free(&t);
	snprintf(name, sizeof name, "answered%s", suffix);
	if (tensor_init(&t, name, TS_U8, 1, dims) != 0)
		cli_die(EX_SOFTWARE, "bad tensor header");
	if ((rc = ts_write_begin(w, &t)) != 0 ||
	    (rc = ts_write_rows(w, ans, v->q)) != 0 ||
	    (rc = ts_write_end(w)) != 0)
		cli_wdie(w, rc);
	tensor_free(&t);
}

/* ---- the data-dependent release (Papernot et al. 2018) ---- */

/*
 * The data-dependent bound of Papernot et al. (2018) depends on the vote
 * histograms, so publishing it is itself a release.  It is published
 * only with the smooth-sensitivity mechanism of their Appendix C (GNSS):
 *  - f(D) = the data-dependent RDP at the order a = --ss-order of every
 *    checked query's threshold step (Thm. 6 with sqrt(2) sigma1 and q
 *    the probability of the less likely outcome, their section 4.2) and
 *    of every answered query's GNMax step (rdp_pate_gnmax_dep: Thm. 6,
 *    Prop. 10's mu1, mu2, q~ from the union bound of Prop. 7); which
 *    queries were answered is part of the released output.  The paper's
 *    q are for continuous Gaussian noise; ours is the discrete Gaussian,
 *    whose tails are slightly heavier on the integers, so q~ and the
 *    threshold's q are the bounds for it (rdp_pate_logq_dgauss,
 *    rdp_pate_threshold_dep_dgauss: the gaps less 1, times a factor C
 *    within 1e-4 of 1 for sigma >= 1), and Prop. 13's bounds become C
 *    bl(q/C), C bu(q/C);
 *  - LS(d), the local sensitivity of f at the histograms d teachers away,
 *    bounded by the sum over queries of the per-query bounds of their
 *    Algorithms 3-5 (Prop. 13: one teacher's vote moves in every query's
 *    histogram) and of the threshold step's bound;
 *  - SS = max_d e^(-beta d) LS(d), the beta-smooth sensitivity (Nissim,
 *    Raskhodnikova and Smith 2007), raised to at least 2^-12 and by a
 *    relative 2^-20 (the floating-point error of LS);
 *  - the release f~ = h (round(f / h) + Z), h = 2^-32, Z an exact
 *    discrete Gaussian of standard deviation sigma_s SS / h (lib/dp/noise.h).
 * The continuous GNSS f + SS N(0, sigma_s^2) is (a', e)-RDP for 1 < a' <
 * 1/(2 beta) with e = a' e^(2 beta) / sigma_s^2 + (beta a' - log(1 - 2 a'
 * beta) / 2) / (a' - 1) (their Thm. 23).  On the grid, the two centres
 * differ by at most |f(D) - f(D')| / h + 1 <= (1 + h / 2^-12) SS / h,
 * which multiplies the first term by (1 + 2^-20)^2, and by Poisson
 * summation each normaliser sum_z exp(-(z - c)^2 / (2 s^2)) lies within a
 * factor 1 +- tau(s), tau(s) = 2 sum_k exp(-2 pi^2 k^2 s^2), of its
 * integral, which adds (log(1 + tau(s*)) + (a' - 1) log(1 + tau(s)) -
 * a' log(1 - tau(s))) / (a' - 1) with s >= sigma_s 2^20 and s* >= s /
 * sqrt(a') (zero in double precision for sigma_s >= 1e-3).  The noise's
 * scale is rounded up, so its smoothness is beta + 2^-50.
 */

static double
gnss_tau(double s)
{
	double e = exp(-2 * M_PI * M_PI * s * s);

	return e < 1 ? 2 * e / (1 - e) : INFINITY;
}

static double
gnss_rdp(double a, double beta, double sigma_s)
{
	double b = beta + ldexp(1, -50), infl = 1 + ldexp(1, -(SS_GRID_BITS -
	    SS_FLOOR_BITS)), s, ss, c;

	if (!(2 * a * b < 1))
		return INFINITY;
	s = sigma_s * ldexp(1, SS_GRID_BITS - SS_FLOOR_BITS);
	ss = s / sqrt(a);
	c = (log1p(gnss_tau(ss)) + (a - 1) * log1p(gnss_tau(s)) -
	    a * log1p(-gnss_tau(s))) / (a - 1);
	return a * exp(2 * b) * infl * infl / (sigma_s * sigma_s) +
	    (b * a - 0.5 * log1p(-2 * a * b)) / (a - 1) + c;
}

/* Whether the data-dependent bounds can fall below the data-independent
 * ones for this number of teachers and classes (decided from the
 * parameters alone: a unanimous histogram is the most favourable, and
 * every largest count 0..n for the threshold step); dies if neither. */
static void
ddep_applicable(const struct opts *o, const struct votes *v, int *gn)
{
	double a = o->ss_order, *c = cli_calloc(v->k, sizeof *c), lq;
	int th = 0;

	c[0] = (double)v->n;
	lq = rdp_pate_logq_dgauss(c, v->k, o->sigma);
	*gn = rdp_pate_gnmax_dep(a, lq, o->sigma) < rdp_pate_gnmax(a, o->sigma);
	if (o->mech == M_CONFIDENT) {
		double ind = a / (2 * o->sigma1 * o->sigma1);
		for (uint64_t m = 0; m <= v->n && !th; m++) {
			c[0] = (double)m;
			th = rdp_pate_threshold_dep_dgauss(a, c[0], o->threshold,
			    o->sigma1) < ind;
		}
	}
	free(c);
	if (!*gn && !th)
		cli_die(EX_DATAERR, "--data-dependent: with %" PRIu64
		    " teachers, %zu classes and these noise levels, the "
		    "data-dependent bound at order %g equals the "
		    "data-independent one for every vote histogram, even a "
		    "unanimous one: nothing to release (run without "
		    "--data-dependent)", v->n, v->k, a);
	if (*gn && !rdp_pate_gnmax_ss_conditions(a, o->sigma, v->k, 1))
		cli_die(EX_DATAERR, "--data-dependent: conditions C5 and C6 of "
		    "Papernot et al. (2018, Appendix B.4) fail for sigma %g, "
		    "%zu classes at order %g, so the local sensitivity bound "
		    "does not hold: choose another --ss-order", o->sigma,
		    v->k, a);
}

/* f (the data-dependent RDP at --ss-order) and its smooth sensitivity. */
static void
ddep_compute(const struct opts *o, const struct votes *v,
    const uint8_t *ans, int gn, double *f, double *ss)
{
	size_t n1 = (size_t)v->n + 1, ns = n1 > v->k ? n1 : v->k;
	double *c = cli_calloc(v->k, sizeof *c);
	double *ls = cli_calloc(n1, sizeof *ls), *tot = cli_calloc(n1,
	    sizeof *tot), *scr = cli_calloc(ns, sizeof *scr);
	double a = o->ss_order, logq0 = NAN;
	uint64_t na = 0;

	if (gn)
		logq0 = rdp_pate_gnmax_logq0(a, o->sigma);
	*f = 0;
	for (size_t q = 0; q < v->q; q++) {
		double mx = 0;

		/* After --max-answers answers nothing is checked (release). */
		if (o->mech == M_CONFIDENT && o->has_max &&
		    na == o->max_answers)
			break;
		na += ans[q];

		for (size_t j = 0; j < v->k; j++) {
			c[j] = v->count[q * v->k + j];
			mx = c[j] > mx ? c[j] : mx;
		}
		if (o->mech == M_CONFIDENT) {
			*f += rdp_pate_threshold_dep_dgauss(a, mx, o->threshold,
			    o->sigma1);
			if (rdp_pate_threshold_ls(mx, v->n, o->threshold,
			    o->sigma1, a, 1, ls, scr) != 0)
				cli_die(EX_SOFTWARE, "threshold sensitivity: bad "
				    "arguments");
			for (size_t d = 0; d < n1; d++)
				tot[d] += ls[d];
			if (!ans[q])
				continue;
		}
		if (!gn) {
			/* Data-independent for every histogram: LS 0. */
			*f += rdp_pate_gnmax(a, o->sigma);
			continue;
		}
		*f += rdp_pate_gnmax_dep(a, rdp_pate_logq_dgauss(c, v->k,
		    o->sigma), o->sigma);
		if (rdp_pate_gnmax_ls(c, v->k, v->n, o->sigma, a, logq0, 1, ls,
		    scr) != 0)
			cli_die(EX_SOFTWARE, "gnmax sensitivity: bad arguments");
		for (size_t d = 0; d < n1; d++)
			tot[d] += ls[d];
	}
	*ss = rdp_smooth_max(tot, v->n, o->ss_beta) * (1 + ldexp(1, -20));
	free(c);
	free(ls);
	free(tot);
	free(scr);
}

/* The GNSS release of f with smooth sensitivity ss (see above). */
static double
gnss_release(struct rng *r, double f, double ss, double sigma_s)
{
	double h = ldexp(1, -SS_GRID_BITS), fl = ldexp(1, -SS_FLOOR_BITS);
	double s = ss > fl ? ss : fl, centre, scale;
	struct noise_dg *g;
	int64_t z;
	int rc;

	if (!(ss >= 0) || !isfinite(ss))
		cli_die(EX_SOFTWARE, "--data-dependent: the smooth sensitivity "
		    "is not a number: nothing was released");
	if (!(f >= 0 && f <= SS_MAX_RDP))
		cli_die(EX_DATAERR, "--data-dependent: the data-dependent RDP "
		    "is out of range [0, %g]: nothing was released",
		    SS_MAX_RDP);
	centre = nearbyint(f / h);
	scale = nextafter(sigma_s * s / h, INFINITY);
	if ((rc = noise_dg_new_sigma(&g, scale)) != 0)
		dpcli_noise_die(rc);
	if ((rc = noise_dg_sample(g, r, &z)) != 0)
		dpcli_noise_die(rc);
	noise_dg_free(g);
	if (llabs(z) > (INT64_C(1) << 53) - (INT64_C(1) << 52))
		dpcli_noise_die(NOISE_E_OVERFLOW);
	return h * (centre + (double)z);
}

static void
record_gnss(struct ts_meta *m, struct rng *rng, const char *dataset,
    const struct opts *o, const struct votes *v, const char *label_id,
    double released, double answered, double f, double ss)
{
	struct ledger_entry e;
	const double *ord;
	char key[TS_MAX_KEY + 1];
	size_t no;

	dpcli_entry(&e, rng, dataset, "pate_smooth_sensitivity");
	e.relation = LEDGER_REPLACE_ONE;
	e.data_dependent = 1;
	ord = rdp_default_orders(&no);
	e.norders = no;
	for (size_t i = 0; i < no; i++) {
		e.orders[i] = ord[i];
		e.rdp[i] = gnss_rdp(ord[i], o->ss_beta, o->ss_sigma);
	}
	dpcli_param(&e, "order", o->ss_order);
	dpcli_param(&e, "rdp_released", released);
	dpcli_param(&e, "beta", o->ss_beta);
	dpcli_param(&e, "sigma", o->ss_sigma);
	dpcli_param(&e, "grid", ldexp(1, -SS_GRID_BITS));
	dpcli_param(&e, "ss_floor", ldexp(1, -SS_FLOOR_BITS));
	dpcli_param(&e, "queries", (double)v->q);
	if (o->mech == M_CONFIDENT)
		dpcli_param(&e, "answered", answered);
	dpcli_param(&e, "teachers", (double)v->n);
	dpcli_param(&e, "classes", (double)v->k);
	if (o->reveal) {
		dpcli_param(&e, "unsafe_test_rdp_data_dependent", f);
		dpcli_param(&e, "unsafe_test_smooth_sensitivity", ss);
	}
	dpcli_release(m, &e);
	snprintf(key, sizeof key, "dp.release.%s.sanitizes", e.id);
	cli_meta_set(m, key, label_id);
	ts_meta_free(&e.params);
}

/* ---- the ledger ---- */

/*
 * The data-independent RDP of the whole release at each order.  One
 * teacher's vote moving from class a to class b changes two counts by 1:
 * L1 sensitivity 2, L2 sensitivity sqrt(2), and the largest count by at
 * most 1.  Removing or adding a teacher changes one count by 1, which is
 * covered.
 *  - lnmax: discrete Laplace of scale b >= 1/gamma on integer counts is
 *    (2 gamma)-DP (the ratio of its probabilities at integer points z and
 *    z + d is at most exp(|d|/b): Canonne, Kamath and Steinke 2020;
 *    Dwork and Roth 2014, report noisy max), as RDP min(eps, alpha
 *    eps^2 / 2) (rdp_pate_lnmax, as in Papernot et al. 2018);
 *  - gnmax: the discrete Gaussian of variance sigma^2 per count gives
 *    alpha ||d||^2 / (2 sigma^2) = alpha / sigma^2 (CKS 2020; Papernot et
 *    al. 2018 section 4);
 *  - confident-gnmax: every query's check is a Gaussian mechanism on the
 *    largest count, sensitivity 1: alpha / (2 sigma1^2) (Papernot et al.
 *    2018, Algorithm 1), and every answer a gnmax with sigma.  Whether a
 *    query is answered depends on the check's outcome, so the answers'
 *    costs are chosen adaptively; their sum is at most A alpha / sigma^2
 *    with A the --max-answers cap (else the number of queries), and by
 *    the Renyi filter of Feldman and Zrnic (2021, Thm. 3.1) the whole
 *    release is then (alpha, Q alpha / (2 sigma1^2) + A alpha /
 *    sigma^2)-RDP at every order.
 * Post-processing (the argmax, tie breaking) is free.
 */
static void
record_release(struct ts_meta *m, struct rng *rng, const char *dataset,
    const struct opts *o, const struct votes *v, const struct noise *nz,
    int relation, char id[LEDGER_ID_HEX + 1])
{
	struct ledger_entry e;
	const double *ord;
	double reps = o->audit ? (double)o->audit : 1, nq = (double)v->q;
	double na = nq;
	size_t no;

	if (o->mech == M_CONFIDENT && o->has_max &&
	    (double)o->max_answers < nq)
		na = (double)o->max_answers;
	dpcli_entry(&e, rng, dataset, ledger_mech[o->mech]);
	e.relation = relation;
	ord = rdp_default_orders(&no);
	e.norders = no;
	for (size_t i = 0; i < no; i++) {
		double a = ord[i], c;

		switch (o->mech) {
		case M_LNMAX:
			c = nq * rdp_pate_lnmax(a, 1 / o->gamma);
			break;
		case M_GNMAX:
			c = nq * rdp_pate_gnmax(a, o->sigma);
			break;
		default:
			c = nq * rdp_gaussian(a, o->sigma1) +
			    na * rdp_pate_gnmax(a, o->sigma);
		}
		e.orders[i] = a;
		e.rdp[i] = reps * c;
	}
	if (o->mech == M_LNMAX) {
		dpcli_param(&e, "gamma", o->gamma);
		dpcli_param(&e, "scale", (double)nz->lnum / (double)nz->lden);
		dpcli_param(&e, "l1_sensitivity", 2);
	} else {
		dpcli_param(&e, "sigma", o->sigma);
		dpcli_param(&e, "l2_sensitivity", sqrt(2));
	}
	if (o->mech == M_CONFIDENT) {
		dpcli_param(&e, "sigma1", o->sigma1);
		dpcli_param(&e, "threshold", o->threshold);
		dpcli_param(&e, "threshold_sensitivity", 1);
		dpcli_param(&e, "answers_charged", na);
		if (o->has_max)
			dpcli_param(&e, "max_answers", (double)o->max_answers);
	}
	dpcli_param(&e, "queries", nq);
	dpcli_param(&e, "teachers", (double)v->n);
	dpcli_param(&e, "classes", (double)v->k);
	if (o->audit)
		dpcli_param(&e, "audit_releases", reps);
	if (o->unsafe)
		dpcli_param(&e, "unsafe_test_half_noise", 1);
	dpcli_release(m, &e);
	memcpy(id, e.id, sizeof e.id);
	ts_meta_free(&e.params);
}

/* ---- main ---- */

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "audit-repeat", required_argument, NULL, OPT_AUDIT },
		{ "classes", required_argument, NULL, OPT_CLASSES },
		{ "data-dependent", no_argument, NULL, OPT_DDEP },
		{ "dataset", required_argument, NULL, OPT_DATASET },
		{ "force", no_argument, NULL, 'f' },
		{ "gamma", required_argument, NULL, OPT_GAMMA },
		{ "help", no_argument, NULL, 'h' },
		{ "level", required_argument, NULL, OPT_LEVEL },
		{ "max-answers", required_argument, NULL, OPT_MAX_ANSWERS },
		{ "mechanism", required_argument, NULL, OPT_MECHANISM },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "seed", required_argument, NULL, 'S' },
		{ "sigma", required_argument, NULL, OPT_SIGMA },
		{ "sigma1", required_argument, NULL, OPT_SIGMA1 },
		{ "ss-beta", required_argument, NULL, OPT_SS_BETA },
		{ "ss-order", required_argument, NULL, OPT_SS_ORDER },
		{ "ss-sigma", required_argument, NULL, OPT_SS_SIGMA },
		{ "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ "unsafe-test-half-noise", no_argument, NULL, OPT_UNSAFE },
		{ "unsafe-test-reveal-ss", no_argument, NULL, OPT_REVEAL },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct opts o = { .mech = M_LNMAX };
	struct votes v = { 0 };
	struct noise nz = { 0 };
	struct ts_meta meta = { 0 }, prov = { 0 }, in = { 0 };
	struct ts_writer *w;
	struct part *parts = NULL;
	struct rng *rng;
	const char *label, *dataset = NULL, **paths;
	char key[16 + LEDGER_MAX_NAME], dsbuf[LEDGER_MAX_NAME + 1];
	int32_t *y;
	uint8_t *ans;
	uint64_t digest, answered = 0;
	size_t npaths;
	int ch, rc, mode, stdin_seen = 0, gn = 0;
	double dd_f = 0, dd_ss = 0, dd_rel = 0;
	char label_id[LEDGER_ID_HEX + 1];
	FILE *ofp;

	cli_init(argv[0], argc, argv);
	while ((ch = getopt_long(argc, argv, "fho:qS:V", longopts, NULL)) !=
	    -1) {
		switch (ch) {
		case 'f':
			o.force = 1;
			break;
		case 'h':
			usage(0);
		case 'o':
			o.output = optarg;
			break;
		case 'q':
			o.quiet = 1;
			break;
		case 'S':
			(void)dpcli_seed_arg(optarg);
			o.seed = optarg;
			break;
		case 'V':
			cli_version();
		case OPT_AUDIT:
			o.audit = (uint64_t)cli_ll("--audit-repeat", optarg, 1,
			    MAX_AUDIT);
			break;
		case OPT_CLASSES:
			o.classes = (uint64_t)cli_ll("--classes", optarg, 2,
			    MAX_CLASSES);
			break;
		case OPT_DDEP:
			o.ddep = 1;
			break;
		case OPT_DATASET:
			if (ledger_check_dataset(optarg) != NULL)
				cli_usage_error("invalid --dataset '%s': %s",
				    optarg, ledger_check_dataset(optarg));
			o.dataset = optarg;
			break;
		case OPT_GAMMA:
			o.gamma = gamma_arg(optarg);
			o.has_gamma = 1;
			break;
		case OPT_LEVEL:
			o.level = cli_level_arg(optarg);
			break;
		case OPT_MAX_ANSWERS:
			o.max_answers = (uint64_t)cli_ll("--max-answers", optarg,
			    0, INT64_MAX);
			o.has_max = 1;
			break;
		case OPT_MECHANISM:
			o.mech = cli_choice("--mechanism", optarg, mech_names);
			break;
		case OPT_SIGMA:
			o.sigma = sigma_arg("--sigma", optarg);
			o.has_sigma = 1;
			break;
		case OPT_SIGMA1:
			o.sigma1 = sigma_arg("--sigma1", optarg);
			o.has_sigma1 = 1;
			break;
		case OPT_REVEAL:
			o.reveal = 1;
			break;
		case OPT_SS_BETA:
			o.ss_beta = cli_double("--ss-beta", optarg, 1e-6, 0.5);
			o.has_ss_beta = 1;
			break;
		case OPT_SS_ORDER:
			o.ss_order = cli_double("--ss-order", optarg, 1.1, 1024);
			o.has_ss_order = 1;
			break;
		case OPT_SS_SIGMA:
			o.ss_sigma = cli_double("--ss-sigma", optarg,
			    SS_SIGMA_MIN, SS_SIGMA_MAX);
			o.has_ss_sigma = 1;
			break;
		case OPT_THRESHOLD:
			o.threshold = cli_double("--threshold", optarg,
			    -THRESHOLD_MAX, THRESHOLD_MAX);
			o.has_threshold = 1;
			break;
		case OPT_UNSAFE:
			o.unsafe = 1;
			break;
		default:
			usage(EX_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	cli_set_quiet(o.quiet);
	check_options(&o);
	nz.off = noise_off(&o);
	if (o.audit && nz.off)
		cli_usage_error("--audit-repeat needs noise");
	if (o.unsafe && nz.off)
		cli_usage_error("--unsafe-test-half-noise needs noise");
	if (o.ddep && nz.off)
		cli_usage_error("--data-dependent needs noise");
	npaths = argc > 0 ? (size_t)argc : 1;
	paths = cli_reallocarray(NULL, npaths, sizeof *paths);
	for (size_t i = 0; i < npaths; i++) {
		paths[i] = argc > 0 ? argv[i] : "-";
		if (strcmp(paths[i], "-") == 0 && stdin_seen++)
			cli_usage_error("the standard input can be read only "
			    "once");
	}

	/* Open the output and the generator before reading; the noise is
	 * drawn only after every input has been read and checked. */
	ofp = cli_out_open(o.output, o.force);
	rng = dpcli_rng(o.seed, WORK_ITEM);
	if (nz.off)
		cli_warn("%s: no noise: the output is NOT private",
		    o.mech == M_LNMAX ? "--gamma inf" : "--sigma 0");
	if (o.unsafe)
		cli_warn("--unsafe-test-half-noise: half the noise claimed: the "
		    "output is NOT private");
	if (o.reveal)
		cli_warn("--unsafe-test-reveal-ss: the ledger shows "
		    "data-dependent values: the output is NOT private");

	v.k = (size_t)o.classes;
	mode = read_input(paths[0], &v, &in, &digest, &label, -1);
	if (mode == 1 && npaths > 1)
		cli_usage_error("a stream of 'votes' is the only input; "
		    "teachers' predictions come one file each");
	if (mode == 1 && o.ddep)
		cli_die(EX_DATAERR, "%s: --data-dependent needs the teachers' "
		    "prediction streams: the smooth sensitivity of Papernot et "
		    "al. (2018) is for a fixed number of teachers (replace-one "
		    "neighbours), not for a votes tensor (add-remove)", label);
	cli_prov_input(&prov, 0, label, digest, &in);
	if (mode == 1) {
		if (v.n == 0)
			cli_die(EX_DATAERR, "%s: tensor 'votes' has no teachers",
			    label);
		snprintf(dsbuf, sizeof dsbuf, "%s",
		    dpcli_dataset(&in, o.dataset, label));
		dataset = dsbuf;
		dpcli_carry(&meta, &in, NULL, NULL, label);
	} else {
		parts = cli_calloc(npaths, sizeof *parts);
		for (size_t t = 0; t < npaths; t++) {
			if (t > 0) {
				ts_meta_free(&in);
				(void)read_input(paths[t], &v, &in, &digest,
				    &label, 0);
				cli_prov_input(&prov, (int)t, label, digest,
				    &in);
			}
			if (dataset == NULL) {
				/* A copy: in is freed for the next teacher. */
				snprintf(dsbuf, sizeof dsbuf, "%s",
				    teacher_dataset(&in, o.dataset, label));
				dataset = dsbuf;
			} else if (strcmp(teacher_dataset(&in, o.dataset, label),
			    dataset) != 0)
				cli_die(EX_DATAERR, "%s: the teachers protect "
				    "different datasets (%s and %s)", label,
				    dataset, teacher_dataset(&in, NULL, label));
			teacher_part(&in, dataset, label, &parts[t]);
			/* The teachers' parts are disjoint (checked below):
			 * each record of the dataset reaches one teacher, and
			 * the vote histogram is what the mechanism protects. */
			snprintf(key, sizeof key, "dp.raw.%s", dataset);
			dpcli_carry(&meta, &in, NULL, key, label);
		}
		check_disjoint(parts, npaths);
	}
	ts_meta_free(&in);
	if (o.ddep)
		ddep_applicable(&o, &v, &gn);

	if (!nz.off && o.mech == M_LNMAX)
		laplace_scale(o.gamma, o.unsafe, &nz.lnum, &nz.lden);
	if (!nz.off && o.mech != M_LNMAX) {
		double s = o.unsafe ? o.sigma / 2 : o.sigma;
		if ((rc = noise_dg_new_sigma(&nz.g, s)) != 0)
			dpcli_noise_die(rc);
		if (o.mech == M_CONFIDENT && (rc = noise_dg_new_sigma(&nz.g1,
		    o.unsafe ? o.sigma1 / 2 : o.sigma1)) != 0)
			dpcli_noise_die(rc);
	}

	y = cli_reallocarray(NULL, v.q ? v.q : 1, sizeof *y);
	ans = cli_reallocarray(NULL, v.q ? v.q : 1, sizeof *ans);
	w = cli_writer(ofp, o.level);
	if (!o.audit) {
		release(rng, &v, &nz, &o, y, ans);
		write_release(w, &v, y, ans, "");
		if (o.ddep) {
			for (size_t q = 0; q < v.q; q++)
				answered += ans[q];
			ddep_compute(&o, &v, ans, gn, &dd_f, &dd_ss);
			dd_rel = gnss_release(rng, dd_f, dd_ss, o.ss_sigma);
		}
	} else {
		for (uint64_t i = 0; i < o.audit; i++) {
			struct rng *ri = rng;
			char item[64], suffix[24];

			snprintf(item, sizeof item, "%s/audit/%" PRIu64,
			    WORK_ITEM, i);
			if (o.seed && rng_new_seeded(&ri,
			    dpcli_seed_arg(o.seed), item) != 0)
				cli_die(EX_OSERR, "out of memory");
			release(ri, &v, &nz, &o, y, ans);
			snprintf(suffix, sizeof suffix, "/%" PRIu64, i);
			write_release(w, &v, y, ans, suffix);
			if (ri != rng)
				rng_free(ri);
			cli_progress("releases", i + 1, o.audit);
		}
		cli_progress_done();
	}

	/* The stream metadata: the inputs' (less the split keys and, for
	 * teachers, their aggregate mark), the release, the provenance. */
	if (!nz.off) {
		record_release(&meta, rng, dataset, &o, &v, &nz, mode == 1 ?
		    LEDGER_ADD_REMOVE : LEDGER_REPLACE_ONE, label_id);
		if (o.ddep)
			record_gnss(&meta, rng, dataset, &o, &v, label_id,
			    dd_rel, (double)answered, dd_f, dd_ss);
	}
	if (nz.off || o.unsafe || o.reveal)
		dpcli_not_private(&meta, dataset, label);
	dpcli_audit_mark(&meta, o.audit);
	cli_meta_set(&meta, "vote.mechanism", mech_names[o.mech]);
	if (ts_meta_setf(&meta, "vote.teachers", "%" PRIu64, v.n) != 0 ||
	    ts_meta_setf(&meta, "vote.classes", "%zu", v.k) != 0 ||
	    ts_meta_setf(&meta, "vote.queries", "%zu", v.q) != 0)
		cli_die(EX_OSERR, "out of memory");
	cli_prov(&meta);
	if (ts_meta_merge(&meta, &prov, "", NULL) != 0)
		cli_die(EX_OSERR, "out of memory");
	if ((rc = ts_write_meta(w, &meta)) != 0 ||
	    (rc = ts_writer_finish(w)) != 0)
		cli_wdie(w, rc);
	ts_writer_close(w);
	cli_out_commit();

	for (size_t t = 0; parts != NULL && t < npaths; t++) {
		part_free(&parts[t].sp);
		free(parts[t].queries);
		free(parts[t].qraw);
	}
	free(parts);
	free(paths);
	free(y);
	free(ans);
	free(v.count);
	noise_dg_free(nz.g);
	noise_dg_free(nz.g1);
	rng_free(rng);
	ts_meta_free(&meta);
	ts_meta_free(&prov);
	return 0;
}
