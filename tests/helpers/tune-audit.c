/*
 * tune-audit: a test-only repeat-and-select mechanism, cheap enough to run
 * hundreds of thousands of times for the audit harness (tests/audit.bash).
 *
 * One trial Q is randomized response on the bit "the canary is in the
 * dataset" (0 for D, 1 for D' = D + canary, add/remove neighbours): it
 * outputs the bit with probability e^eps / (1 + e^eps), else its
 * negation (exact Bernoulli from lib/dp/noise), and scores its output by
 * the output itself.  The tuned mechanism draws K ~ DIST (lib/dp/tune),
 * runs K trials and releases the best output (1 if any trial said 1; -1
 * when K = 0, Poisson only).  Each release is one line on stdout.
 *
 * Q is eps-DP, so its RDP curve is rdp_pure(a, eps) (Bun and Steinke);
 * the claim, on stderr as "claim_eps E" at --delta, is the epsilon of
 * tune_rdp's curve over it -- or, with --per-trial-only, the epsilon of
 * Q's curve alone: the under-charge an audit must catch (the event "no
 * trial said 1" has probability E[(e^eps / (1 + e^eps))^K] under D and
 * E[(1 / (1 + e^eps))^K] under D', a ratio far above e^eps).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "noise.h"
#include "rdp.h"
#include "rng.h"
#include "tune.h"

static void
usage(int status)
{
	FILE *fp = status ? stderr : stdout;

	fprintf(fp, "usage: tune-audit [-cp] [-d delta] [-S seed] -e eps "
	    "-k dist -n count\n");
	if (status == 0)
		fprintf(fp, "\n"
		    "  -c, --canary         D' (the canary is in): the bit is 1\n"
		    "  -d, --delta D        the claim's delta (1e-5)\n"
		    "  -e, --epsilon E      each trial's randomized response\n"
		    "  -k, --trials DIST    K's distribution (tune.h)\n"
		    "  -n, --count N        independent releases\n"
		    "  -p, --per-trial-only claim the trial's cost only "
		    "(wrong)\n"
		    "  -S, --seed N         reproducible, NOT private stream\n");
	exit(status);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "canary", no_argument, NULL, 'c' },
		{ "delta", required_argument, NULL, 'd' },
		{ "epsilon", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ "trials", required_argument, NULL, 'k' },
		{ "count", required_argument, NULL, 'n' },
		{ "per-trial-only", no_argument, NULL, 'p' },
		{ "seed", required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 }
	};
	struct tune_dist d;
	struct rng *r;
	const double *ord;
	double rdp[RDP_DEFAULT_NORDERS], out[RDP_DEFAULT_NORDERS];
	double eps = 0, delta = 1e-5, claim;
	long long count = 0;
	uint64_t seed = 0, num, den = 1ull << 40;
	size_t no;
	int ch, canary = 0, per_trial = 0, have_seed = 0, have_dist = 0;
	char err[256];

	cli_init(argv[0], argc, argv);
	while ((ch = getopt_long(argc, argv, "cd:e:hk:n:pS:", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'c':
			canary = 1;
			break;
		case 'd':
			delta = cli_double("--delta", optarg, 1e-300, 0.5);
			break;
		case 'e':
			eps = cli_double("--epsilon", optarg, 1e-6, 20);
			break;
		case 'h':
			usage(0);
			break;
		case 'k':
			if (tune_dist_parse(optarg, &d, err, sizeof err) != 0)
				cli_usage_error("invalid --trials %s", err);
			have_dist = 1;
			break;
		case 'n':
			count = cli_ll("--count", optarg, 1, 100000000);
			break;
		case 'p':
			per_trial = 1;
			break;
		case 'S':
			seed = (uint64_t)cli_ll("--seed", optarg, 0, 1LL << 62);
			have_seed = 1;
			break;
		default:
			usage(EX_USAGE);
		}
	}
	if (!(eps > 0) || count == 0 || !have_dist || optind != argc)
		usage(EX_USAGE);

	ord = rdp_default_orders(&no);
	for (size_t i = 0; i < no; i++)
		rdp[i] = rdp_pure(ord[i], eps);
	if (!per_trial && tune_rdp(&d, ord, rdp, no, out) != 0)
		cli_die(EX_SOFTWARE, "tune_rdp failed");
	if (rdp_to_epsilon(ord, per_trial ? rdp : out, no, delta,
	    RDP_CONV_IMPROVED, &claim, NULL) != 0)
		cli_die(EX_SOFTWARE, "rdp_to_epsilon failed");
	fprintf(stderr, "claim_eps\t%.17g\n", claim);

	if (have_seed ? rng_new_seeded(&r, seed, "tune-audit") != 0 :
	    rng_new(&r) != 0)
		cli_die(EX_OSERR, "no randomness");
	/* P[the true bit] = e^eps / (1 + e^eps) as num / 2^40, rounded
	 * down: the ratio num / (2^40 - num) stays at most e^eps. */
	num = (uint64_t)floor(ldexp(1 / (1 + exp(-eps)), 40));
	for (long long i = 0; i < count; i++) {
		uint64_t k;
		int best = -1;

		if (tune_sample(&d, r, &k) != 0)
			cli_die(EX_SOFTWARE, "tune_sample failed");
		for (uint64_t t = 0; t < k; t++) {
			int keep = noise_bernoulli(r, num, den);
			int y = keep ? canary : !canary;

			if (y > best)
				best = y;
		}
		printf("%d\n", best);
	}
	rng_free(r);
	return fflush(stdout) == 0 ? 0 : EX_IOERR;
}
