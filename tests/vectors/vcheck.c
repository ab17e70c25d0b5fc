/*
 * vcheck.c: read tensor streams completely and report the first error,
 * as `tns verify` does; used by tests/vectors/regen to check the vectors
 * independently of the tools.
 *
 * Usage: vcheck FILE...  Each file is read twice: row by row into a small
 * buffer, then whole with ts_read_all.  Exit 0 when every file is valid,
 * else the exit code of the first failure (65 for bad data), with
 * "vcheck: MESSAGE" on stderr.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

static unsigned char buf[1 << 16];

/* @return 0 or a negative TS_E* code. */
static int
by_rows(struct ts_reader *r)
{
	struct tensor t;
	int rc;

	while ((rc = ts_read_next(r, &t)) == 1) {
		uint64_t rb = ts_reader_row_bytes(r);
		uint64_t max = rb ? sizeof buf / rb : UINT64_MAX;
		int64_t n;

		tensor_free(&t);
		if (max == 0)	/* rows larger than buf: ts_read_next skips */
			continue;
		while ((n = ts_read_rows(r, buf, max)) > 0)
			;
		if (n < 0)
			return (int)n;
	}
	return rc;
}

static int
whole(struct ts_reader *r)
{
	struct tensor *v;
	size_t n;
	int rc = ts_read_all(r, &v, &n);

	if (rc == 0) {
		for (size_t i = 0; i < n; i++)
			tensor_free(&v[i]);
		free(v);
	}
	return rc;
}

int
main(int argc, char **argv)
{
	cli_init("vcheck", argc, argv);
	for (int i = 1; i < argc; i++) {
		for (int pass = 0; pass < 2; pass++) {
			const char *label;
			FILE *fp = cli_open_in(argv[i], &label);
			struct ts_reader *r = cli_reader(fp, label);
			int rc = pass == 0 ? by_rows(r) : whole(r);

			if (rc < 0)
				cli_rdie(r, rc);
			ts_reader_close(r);
			cli_close_in(fp);
		}
	}
	return 0;
}
