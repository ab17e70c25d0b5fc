/*
 * mkbig: write a tensor stream of about MB megabytes of f32 rows by
 * repeating the rows of the first tensor of a featurize-written stream
 * (stdin).  Used only by `make bench`.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int
main(int argc, char **argv)
{
	struct ts_reader *r;
	struct ts_writer *w;
	struct tensor t;
	uint64_t target, rb, written = 0, rows;
	int rc;

	cli_init(argv[0], argc, argv);
	if (argc != 2)
		cli_usage_error("usage: mkbig MB < featurized.tns > big.tns");
	target = cli_u64("MB", argv[1]) << 20;
	r = cli_reader(stdin, "<stdin>");
	if ((rc = ts_read_next(r, &t)) != 1 || (rc = ts_read_data(r, &t)) != 0)
		cli_rdie(r, rc < 0 ? rc : TS_E_FORMAT);
	if (t.dtype != TS_F32 || t.ndim != 2)
		cli_die(EX_DATAERR, "first tensor must be 2-D f32");
	rows = t.dims[0];
	tensor_row_bytes(&t, &rb);
	w = cli_writer(cli_out_open(NULL, 0), NULL);
	t.dims[0] = TS_UNKNOWN_ROWS;
	if ((rc = ts_write_begin(w, &t)) != 0)
		cli_wdie(w, rc);
	while (written < target) {
		if ((rc = ts_write_rows(w, t.data, rows)) != 0)
			cli_wdie(w, rc);
		written += rows * rb;
	}
	if ((rc = ts_write_end(w)) != 0 || (rc = ts_writer_finish(w)) != 0)
		cli_wdie(w, rc);
	ts_writer_close(w);
	ts_reader_close(r);
	tensor_free(&t);
	cli_out_commit();
	return 0;
}
