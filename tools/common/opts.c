/* opts.c: the options every tool shares (see opts.h). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dpcli.h"
#include "ledger.h"
#include "opts.h"

#define UNSAFE_ENV "PRIVADA_TEST_UNSAFE"

int
opts_common(struct opts_common *c, int ch, const char *arg,
    void (*usage)(int))
{
	const char *bad;

	switch (ch) {
	case 'f':
		c->force = 1;
		return 1;
	case 'h':
		usage(0);
		return 1;
	case 'o':
		c->output = arg;
		return 1;
	case 'q':
		c->quiet = 1;
		cli_set_quiet(1);
		return 1;
	case 'S':
		(void)dpcli_seed_arg(arg);	/* checked now, parsed later */
		c->seed = arg;
		return 1;
	case 'V':
		cli_version();
	case 'v':
		c->verbose = 1;
		return 1;
	case 'e':
		c->epsilon = dpcli_epsilon_arg("--epsilon", arg,
		    c->epsilon_max > 0 ? c->epsilon_max : 1e6);
		c->has_epsilon = 1;
		return 1;
	case 'd':
		c->delta = dpcli_delta_arg("--delta", arg);
		c->has_delta = 1;
		dpcli_target_delta(c->delta);
		return 1;
	case OPTS_LEVEL:
		c->level = cli_level_arg(arg);
		return 1;
	case OPTS_DATASET:
		if ((bad = ledger_check_dataset(arg)) != NULL)
			cli_usage_error("invalid --dataset '%s': %s", arg, bad);
		c->dataset = arg;
		return 1;
	case OPTS_BUDGET_STORE:
		dpcli_budget_store(arg);
		return 1;
	default:
		return 0;
	}
}

void
opts_unsafe_gate(const char *option)
{
	const char *e = getenv(UNSAFE_ENV);

	if (e == NULL || strcmp(e, "1") != 0)
		cli_usage_error("%s is refused unless %s=1: it breaks the "
		    "privacy guarantee (tests only)", option, UNSAFE_ENV);
}
