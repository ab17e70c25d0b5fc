/*
 * opts.h: the options every tool shares, parsed once (tools only: these
 * print usage errors and exit like cli.h).
 *
 *   struct opts_common c = OPTS_COMMON_INIT;
 *   static const struct option longopts[] = {
 *           OPTS_COMMON_LONG, { "tol", required_argument, NULL, OPT_TOL },
 *           { NULL, 0, NULL, 0 } };
 *   while ((ch = getopt_long(argc, argv, "fho:qVv" ..., longopts, NULL))
 *       != -1) {
 *           if (opts_common(&c, ch, optarg, usage))
 *                   continue;
 *           switch (ch) { case OPT_TOL: ...; default: usage(EX_USAGE); }
 *   }
 *
 * The shared options mean the same in every tool (privada(7),
 * "Conventions"): -f --force, -h --help, -o --output FILE, -q --quiet,
 * -S --seed SEED, -V --version, -v --verbose, -e --epsilon, -d --delta,
 * --level N, --dataset NAME, --budget-store PATH (dpcli_budget_store).  A tool lists in its getopt string and long
 * options only those it takes; opts_common handles whichever arrive.
 * Tool-specific long options use codes from OPTS_FIRST_TOOL on.
 */
#ifndef PRIVADA_OPTS_H
#define PRIVADA_OPTS_H

#include <getopt.h>

/* Long-only shared options. */
enum {
	OPTS_LEVEL = 0x1000,
	OPTS_DATASET,
	OPTS_BUDGET_STORE,
	OPTS_FIRST_TOOL = 0x1100	/* a tool's own long options from here */
};

struct opts_common {
	int force, quiet, verbose;
	const char *output;	/* -o: NULL for stdout */
	const char *seed;	/* -S as given (dpcli_rng parses it), or NULL */
	const char *level;	/* --level as given, or NULL */
	const char *dataset;	/* --dataset, checked, or NULL */
	double epsilon, delta;	/* -e, -d when has_epsilon, has_delta */
	int has_epsilon, has_delta;
	double epsilon_max;	/* the largest -e the tool accepts */
};

#define OPTS_COMMON_INIT { .epsilon_max = 1e6 }

/* The shared long options, for a tool's option table. */
#define OPTS_COMMON_LONG \
	{ "force", no_argument, NULL, 'f' }, \
	{ "help", no_argument, NULL, 'h' }, \
	{ "output", required_argument, NULL, 'o' }, \
	{ "quiet", no_argument, NULL, 'q' }, \
	{ "seed", required_argument, NULL, 'S' }, \
	{ "version", no_argument, NULL, 'V' }, \
	{ "verbose", no_argument, NULL, 'v' }, \
	{ "epsilon", required_argument, NULL, 'e' }, \
	{ "delta", required_argument, NULL, 'd' }, \
	{ "level", required_argument, NULL, OPTS_LEVEL }, \
	{ "dataset", required_argument, NULL, OPTS_DATASET }, \
	{ "budget-store", required_argument, NULL, OPTS_BUDGET_STORE }

/*
 * If ch is a shared option, record it in c (arg is getopt's optarg) and
 * return 1; -h calls usage(0) and -V prints the version, neither returns.
 * Bad values are usage errors (exit 64).  @return 0 for any other ch.
 */
int opts_common(struct opts_common *c, int ch, const char *arg,
    void (*usage)(int));

/*
 * The gate of the test-only options that break a privacy guarantee
 * (--unsafe-test-*): a usage error naming option unless the environment
 * has PRIVADA_TEST_UNSAFE=1.  Call it when such an option is given.
 */
void opts_unsafe_gate(const char *option);

#endif
