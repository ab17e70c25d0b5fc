/*
 * dpnorm-audit: the audit of lib/mech/dpnorm (dpsgd-train --normalize),
 * for tests/audit-mech.bats.  The rows are two zero rows of 2 features,
 * and with -c a canary (1000, 0), clipped to C = 4; COUNT releases of
 * the noisy sums and sums of squares with multiplier -z, seeded from -S,
 * one line per release: the likelihood-ratio projection 4 s_0 / sigma_s^2
 * + 16 q_0 / sigma_q^2, whose shift in noise standard deviations is the
 * release's mu.  The plan's claim 1 / z goes to the standard error as
 * "claim_mu <value>".  -b calibrates the sums of squares to C, not C^2
 * (the mutation control).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dpnorm.h"
#include "rng.h"

int
main(int argc, char **argv)
{
	float X[6] = { 0, 0, 0, 0, 1000, 0 };
	double stats[4];
	struct dpnorm p;
	struct rng *r = NULL;
	char msg[256];
	long count = 0;
	double z = 1;
	unsigned long long seed = 1;
	int ch, canary = 0, broken = 0;

	while ((ch = getopt(argc, argv, "bcn:S:z:")) != -1) {
		switch (ch) {
		case 'b':
			broken = 1;
			break;
		case 'c':
			canary = 1;
			break;
		case 'n':
			count = strtol(optarg, NULL, 10);
			break;
		case 'S':
			seed = strtoull(optarg, NULL, 10);
			break;
		case 'z':
			z = strtod(optarg, NULL);
			break;
		default:
			fprintf(stderr, "usage: dpnorm-audit [-bc] -n count "
			    "[-S seed] [-z sigma]\n");
			return 64;
		}
	}
	if (count <= 0 || dpnorm_plan(&p, z, 4, 1000, 2, broken, msg,
	    sizeof msg) != 0 || rng_new_seeded(&r, seed, "dpnorm-audit") !=
	    0) {
		fprintf(stderr, "dpnorm-audit: bad arguments\n");
		return 64;
	}
	fprintf(stderr, "claim_mu %.17g\n", p.mu);
	for (long i = 0; i < count; i++) {
		if (dpnorm_release(&p, r, X, canary ? 3 : 2, 2, stats, msg,
		    sizeof msg) != 0) {
			fprintf(stderr, "dpnorm-audit: %s\n", msg);
			return 70;
		}
		printf("%.17g\n", 4 * stats[0] / (p.part[0].sigma *
		    p.part[0].sigma) + 16 * stats[2] / (p.part[1].sigma *
		    p.part[1].sigma));
	}
	rng_free(r);
	return 0;
}
