/*
 * mech: a test-only mechanism that releases one value COUNT times with
 * independent discrete Laplace or discrete Gaussian noise on the
 * lib/noise grid, one release per line (for the audit harness,
 * tests/audit.bash).  --broken halves the noise scale, a deliberately
 * wrong mechanism that the audit must catch.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "cli.h"
#include "noise.h"
#include "rng.h"

static void
usage(int status)
{
	FILE *fp = status ? stderr : stdout;

	fprintf(fp, "usage: mech [-b] [-S seed] -m laplace|gaussian -n count "
	    "-s scale -x value\n");
	if (status == 0)
		fprintf(fp, "\n"
		    "  -b, --broken         halve the noise scale (a wrong mechanism)\n"
		    "  -m, --mechanism M    laplace (scale b) or gaussian (sigma)\n"
		    "  -n, --count N        number of independent releases\n"
		    "  -S, --seed N         reproducible, NOT private stream\n"
		    "  -s, --scale S        noise scale (> 0)\n"
		    "  -x, --value X        the exact query answer\n");
	exit(status);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "broken", no_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ "mechanism", required_argument, NULL, 'm' },
		{ "count", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 'S' },
		{ "scale", required_argument, NULL, 's' },
		{ "value", required_argument, NULL, 'x' },
		{ NULL, 0, NULL, 0 }
	};
	struct {
		int broken, gauss, have_seed, have_mech, have_x;
		long long count;
		uint64_t seed;
		double scale, x;
	} o = { 0 };
	struct rng *r;
	double *v;
	int ch, rc;

	cli_init("mech", argc, argv);
	o.count = -1;
	o.scale = NAN;
	while ((ch = getopt_long(argc, argv, "bhm:n:S:s:x:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'b':
			o.broken = 1;
			break;
		case 'h':
			usage(0);
			break;
		case 'm':
			if (strcmp(optarg, "laplace") == 0)
				o.gauss = 0;
			else if (strcmp(optarg, "gaussian") == 0)
				o.gauss = 1;
			else
				cli_usage_error("invalid --mechanism '%s': not laplace or gaussian",
				    optarg);
			o.have_mech = 1;
			break;
		case 'n':
			o.count = cli_ll("--count", optarg, 1, 100000000);
			break;
		case 'S':
			o.seed = cli_u64("--seed", optarg);
			o.have_seed = 1;
			break;
		case 's':
			o.scale = cli_double("--scale", optarg, 0x1p-1000, 0x1p1000);
			break;
		case 'x':
			o.x = cli_double("--value", optarg, -1e300, 1e300);
			o.have_x = 1;
			break;
		default:
			usage(EX_USAGE);
		}
	}
	argc -= optind;
	if (argc != 0 || !o.have_mech || o.count < 0 || isnan(o.scale) || !o.have_x)
		usage(EX_USAGE);
	if (o.have_seed)
		rc = rng_new_seeded(&r, o.seed, "mech");
	else
		rc = rng_new(&r);
	if (rc != 0)
		cli_die(EX_OSERR, "%s: %s", rng_strerror(rc), strerror(errno));
	if ((v = malloc((size_t)o.count * sizeof *v)) == NULL)
		cli_die(EX_OSERR, "out of memory");
	for (long long i = 0; i < o.count; i++)
		v[i] = o.x;
	if (o.broken)
		o.scale /= 2;
	rc = o.gauss ? noise_add_dgauss(r, v, (size_t)o.count, o.scale, 0) :
	    noise_add_dlaplace(r, v, (size_t)o.count, o.scale, 0);
	if (rc != 0)
		cli_die(rc == NOISE_E_NOMEM ? EX_OSERR : EX_DATAERR, "noise: %s",
		    noise_strerror(rc));
	for (long long i = 0; i < o.count; i++)
		printf("%.17g\n", v[i]);
	free(v);
	rng_free(r);
	if (fflush(stdout) != 0 || ferror(stdout) || fclose(stdout) != 0)
		cli_die(EX_IOERR, "<stdout>: %s", strerror(errno));
	return 0;
}
