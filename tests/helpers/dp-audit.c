/*
 * dp-audit: empirical lower bounds on the privacy loss of a mechanism
 * from samples of its output on two neighbouring inputs D and D' (a
 * test-only helper; tests/audit.bash wraps it for bats).
 *
 * A threshold test guesses "D'" when a sample lies above (or below) a
 * threshold.  Its false-positive rate (guessing D' on samples of D) and
 * false-negative rate are bounded above with exact one-sided
 * Clopper-Pearson bounds, each failing with probability at most alpha,
 * so both hold with probability at least 1 - 2 alpha.  Then:
 *
 *  - any (eps, delta)-DP mechanism has FPR + e^eps FNR >= 1 - delta and
 *    FNR + e^eps FPR >= 1 - delta, hence
 *      eps_lb = max(0, log((1 - delta - FNR_hi) / FPR_hi),
 *                      log((1 - delta - FPR_hi) / FNR_hi));
 *  - any mu-GDP mechanism has FNR >= Phi(Phi^-1(1 - FPR) - mu), hence
 *      mu_lb = max(0, Phi^-1(1 - FPR_hi) - Phi^-1(FNR_hi)).
 *
 * Both are valid lower bounds (with that confidence) for any threshold
 * chosen independently of the evaluation samples.  Without --threshold,
 * the first half of each file chooses the threshold and direction
 * (maximising the objective with cheap Wilson bounds) and the second
 * half evaluates it, so choosing never invalidates the bound.
 *
 * Input: one finite number per line (a scalar projection of a release).
 * Output: "key<TAB>value" lines (see usage).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "cli.h"

static void
usage(int status)
{
	FILE *fp = status ? stderr : stdout;

	fprintf(fp, "usage: dp-audit [-a alpha] [-d delta] [-o eps|mu] "
	    "[-t threshold [-B]] file_d file_d2\n"
	    "       dp-audit [-a alpha] -c k n\n");
	if (status == 0)
		fprintf(fp, "\n"
		    "  -a, --alpha A      failure probability of each one-sided\n"
		    "                     Clopper-Pearson bound (default 0.025)\n"
		    "  -B, --below        with -t: guess D' below the threshold\n"
		    "  -c, --cp           print the upper bound for k of n and exit\n"
		    "  -d, --delta D      delta for eps_lb (default 0)\n"
		    "  -o, --objective O  eps or mu: what the threshold maximises\n"
		    "  -t, --threshold T  fixed threshold, all samples evaluate it\n"
		    "\n"
		    "output keys: n_d n_d2 threshold direction fp fn fpr fnr\n"
		    "             fpr_hi fnr_hi confidence eps_lb mu_lb\n");
	exit(status);
}

/* ---- special functions ---- */

/* Continued fraction of the incomplete beta function (Abramowitz and
 * Stegun 26.5.8), evaluated by the modified Lentz method. */
static long double
beta_cf(long double a, long double b, long double x)
{
	const long double tiny = 1e-300L;
	long double c = 1, d = 1 - (a + b) * x / (a + 1), h;

	if (fabsl(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (int m = 1; m <= 1000000; m++) {
		long double aa, del;

		aa = m * (b - m) * x / ((a - 1 + 2 * m) * (a + 2 * m));
		d = 1 + aa * d;
		c = 1 + aa / c;
		d = fabsl(d) < tiny ? 1 / tiny : 1 / d;
		c = fabsl(c) < tiny ? tiny : c;
		h *= d * c;
		aa = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 1 + 2 * m));
		d = 1 + aa * d;
		c = 1 + aa / c;
		d = fabsl(d) < tiny ? 1 / tiny : 1 / d;
		c = fabsl(c) < tiny ? tiny : c;
		del = d * c;
		h *= del;
		if (fabsl(del - 1) < 1e-18L)
			break;
	}
	return h;
}

/* Regularised incomplete beta I_x(a, b) for a, b > 0. */
static long double
ibeta(long double a, long double b, long double x)
{
	long double front;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	front = expl(lgammal(a + b) - lgammal(a) - lgammal(b) +
	    a * logl(x) + b * log1pl(-x));
	if (x < (a + 1) / (a + b + 2))
		return front * beta_cf(a, b, x) / a;
	return 1 - front * beta_cf(b, a, 1 - x) / b;
}

/* One-sided Clopper-Pearson upper bound: the p with
 * P[Binomial(n, p) <= k] = alpha, i.e. I_p(k + 1, n - k) = 1 - alpha. */
static double
cp_upper(long k, long n, double alpha)
{
	long double lo = (long double)k / n, hi = 1;

	if (k >= n)
		return 1;
	for (int i = 0; i < 200 && hi - lo > 1e-17L; i++) {
		long double mid = (lo + hi) / 2;

		if (ibeta(k + 1, n - k, mid) < 1 - alpha)
			lo = mid;
		else
			hi = mid;
	}
	return (double)hi;		/* the upper end: never below the bound */
}

static double
phi(double x)
{
	return 0.5 * erfc(-x / sqrt(2.0));
}

/* Phi^-1 by bisection (Phi is monotone; 200 halvings of [-40, 40]). */
static double
phi_inv(double u)
{
	double lo = -40, hi = 40;

	if (u <= 0)
		return -INFINITY;
	if (u >= 1)
		return INFINITY;
	for (int i = 0; i < 200; i++) {
		double mid = (lo + hi) / 2;

		if (phi(mid) < u)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/* Wilson score upper bound (for choosing a threshold only). */
static double
wilson_upper(long kl, long nl, double z)
{
	double k = (double)kl, n = (double)nl, p = k / n, z2 = z * z, den = 1 + z2 / n;

	return (p + z2 / (2 * n) + z * sqrt(p * (1 - p) / n + z2 / (4.0 * n * n))) / den;
}

static double
eps_of(double fpr, double fnr, double delta)
{
	double e = 0, t1 = (1 - delta - fnr) / fpr, t2 = (1 - delta - fpr) / fnr;

	if (t1 > 0 && log(t1) > e)
		e = log(t1);
	if (t2 > 0 && log(t2) > e)
		e = log(t2);
	return e;
}

static double
mu_of(double fpr, double fnr)
{
	double m = phi_inv(1 - fpr) - phi_inv(fnr);

	return m > 0 ? m : 0;
}

/* ---- input ---- */

struct sample {
	double *v;
	long n, cap;
};

static void
read_samples(const char *path, struct sample *s)
{
	const char *label;
	FILE *fp = cli_open_in(path, &label);
	char line[512];
	long lineno = 0;

	while (fgets(line, sizeof line, fp) != NULL) {
		char *end;
		double x;

		lineno++;
		errno = 0;
		x = strtod(line, &end);
		while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
			end++;
		if (end == line || *end != '\0' || errno == ERANGE || !isfinite(x))
			cli_die(EX_DATAERR, "%s:%ld: not a finite number", label, lineno);
		if (s->n == s->cap) {
			s->cap = s->cap ? 2 * s->cap : 4096;
			if ((s->v = realloc(s->v, (size_t)s->cap * sizeof *s->v)) == NULL)
				cli_die(EX_OSERR, "out of memory");
		}
		s->v[s->n++] = x;
	}
	if (ferror(fp))
		cli_die(EX_IOERR, "%s: %s", label, strerror(errno));
	cli_close_in(fp);
	if (s->n < 2)
		cli_die(EX_DATAERR, "%s: fewer than 2 samples", label);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Number of sorted values v[0..n-1] <= t, and < t. */
static long
count_le(const double *v, long n, double t)
{
	long lo = 0, hi = n;

	while (lo < hi) {
		long mid = lo + (hi - lo) / 2;

		if (v[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static long
count_lt(const double *v, long n, double t)
{
	long lo = 0, hi = n;

	while (lo < hi) {
		long mid = lo + (hi - lo) / 2;

		if (v[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* False positives and negatives of the test on sorted samples. */
static void
errors(const double *d, long nd, const double *d2, long nd2, double t,
    int below, long *fp, long *fn)
{
	if (below) {
		*fp = count_lt(d, nd, t);
		*fn = nd2 - count_lt(d2, nd2, t);
	} else {
		*fp = nd - count_le(d, nd, t);
		*fn = count_le(d2, nd2, t);
	}
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "alpha", required_argument, NULL, 'a' },
		{ "below", no_argument, NULL, 'B' },
		{ "cp", no_argument, NULL, 'c' },
		{ "delta", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "objective", required_argument, NULL, 'o' },
		{ "threshold", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	struct {
		double alpha, delta, threshold;
		int below, cp, mu, fixed;
	} o = { 0.025, 0, 0, 0, 0, 0, 0 };
	struct sample a = { 0 }, b = { 0 };
	const double *ea, *eb;
	long na, nb, fp, fn;
	double fpr_hi, fnr_hi;
	int ch;

	cli_init("dp-audit", argc, argv);
	while ((ch = getopt_long(argc, argv, "Ba:cd:ho:t:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'B':
			o.below = 1;
			break;
		case 'a':
			o.alpha = cli_double("--alpha", optarg, 1e-300, 0.5);
			break;
		case 'c':
			o.cp = 1;
			break;
		case 'd':
			o.delta = cli_double("--delta", optarg, 0, 1);
			break;
		case 'h':
			usage(0);
			break;
		case 'o':
			if (strcmp(optarg, "eps") == 0)
				o.mu = 0;
			else if (strcmp(optarg, "mu") == 0)
				o.mu = 1;
			else
				cli_usage_error("invalid --objective '%s': not eps or mu",
				    optarg);
			break;
		case 't':
			o.threshold = cli_double("--threshold", optarg, -INFINITY, INFINITY);
			o.fixed = 1;
			break;
		default:
			usage(EX_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 2 || (o.below && !o.fixed))
		usage(EX_USAGE);
	if (o.cp) {
		long long k = cli_ll("k", argv[0], 0, 1LL << 40);
		long long n = cli_ll("n", argv[1], 1, 1LL << 40);

		if (k > n)
			cli_usage_error("k %lld exceeds n %lld", k, n);
		printf("%.17g\n", cp_upper((long)k, (long)n, o.alpha));
		return 0;
	}
	read_samples(argv[0], &a);
	read_samples(argv[1], &b);

	if (o.fixed) {
		qsort(a.v, (size_t)a.n, sizeof *a.v, cmp_double);
		qsort(b.v, (size_t)b.n, sizeof *b.v, cmp_double);
		ea = a.v, na = a.n, eb = b.v, nb = b.n;
	} else {
		/* First halves choose, second halves evaluate.  The samples
		 * are i.i.d., so a split by position is a random split. */
		long ha = a.n / 2, hb = b.n / 2, m = ha + hb;
		double z = phi_inv(1 - o.alpha), best = -1, *pool;

		qsort(a.v, (size_t)ha, sizeof *a.v, cmp_double);
		qsort(b.v, (size_t)hb, sizeof *b.v, cmp_double);
		qsort(a.v + ha, (size_t)(a.n - ha), sizeof *a.v, cmp_double);
		qsort(b.v + hb, (size_t)(b.n - hb), sizeof *b.v, cmp_double);
		if ((pool = malloc((size_t)m * sizeof *pool)) == NULL)
			cli_die(EX_OSERR, "out of memory");
		memcpy(pool, a.v, (size_t)ha * sizeof *pool);
		memcpy(pool + ha, b.v, (size_t)hb * sizeof *pool);
		qsort(pool, (size_t)m, sizeof *pool, cmp_double);
		for (long i = 0; i < m; i += m / 1000 + 1) {
			for (int below = 0; below < 2; below++) {
				double f1, f2, val;

				errors(a.v, ha, b.v, hb, pool[i], below, &fp, &fn);
				f1 = wilson_upper(fp, ha, z);
				f2 = wilson_upper(fn, hb, z);
				val = o.mu ? mu_of(f1, f2) : eps_of(f1, f2, o.delta);
				if (val > best) {
					best = val;
					o.threshold = pool[i];
					o.below = below;
				}
			}
		}
		free(pool);
		ea = a.v + ha, na = a.n - ha, eb = b.v + hb, nb = b.n - hb;
	}
	errors(ea, na, eb, nb, o.threshold, o.below, &fp, &fn);
	fpr_hi = cp_upper(fp, na, o.alpha);
	fnr_hi = cp_upper(fn, nb, o.alpha);
	printf("n_d\t%ld\nn_d2\t%ld\n", na, nb);
	printf("threshold\t%.17g\ndirection\t%s\n", o.threshold,
	    o.below ? "below" : "above");
	printf("fp\t%ld\nfn\t%ld\n", fp, fn);
	printf("fpr\t%.6g\nfnr\t%.6g\n", (double)fp / (double)na,
	    (double)fn / (double)nb);
	printf("fpr_hi\t%.6g\nfnr_hi\t%.6g\n", fpr_hi, fnr_hi);
	printf("confidence\t%.17g\n", 1 - 2 * o.alpha);
	printf("eps_lb\t%.9g\nmu_lb\t%.9g\n", eps_of(fpr_hi, fnr_hi, o.delta),
	    mu_of(fpr_hi, fnr_hi));
	free(a.v);
	free(b.v);
	if (fflush(stdout) != 0 || ferror(stdout) || fclose(stdout) != 0)
		cli_die(EX_IOERR, "<stdout>: %s", strerror(errno));
	return 0;
}
