/*
 * Unit tests of lib/mech/pateio: the votes of teacher-vote's inputs, a
 * tensor 'votes' or one teacher's 'y_pred', and the messages of bad
 * inputs (labels outside the classes, a second tensor, queries that
 * differ, no tensor at all).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pateio.h"
#include "tap.h"

/* A stream of one i32 tensor name [dims] holding v (or none: name NULL). */
static char *
stream(const char *name, int ndim, uint64_t d0, uint64_t d1,
    const int32_t *v, size_t *len)
{
	char *buf = NULL;
	FILE *fp = open_memstream(&buf, len);
	struct ts_writer *w = ts_writer_open(fp, "mem", 1, 0);
	uint64_t dims[2] = { d0, d1 };
	struct tensor t;
	int rc = 0;

	if (name != NULL) {
		tensor_init(&t, name, TS_I32, ndim, dims);
		t.data = (void *)(uintptr_t)v;
		rc = ts_write_tensor(w, &t);
		t.data = NULL;
		tensor_free(&t);
	}
	if (rc == 0)
		rc = ts_writer_finish(w);
	ts_writer_close(w);
	fclose(fp);
	return rc == 0 ? buf : NULL;
}

/* Read the stream into v; the code, *kind and msg. */
static int
rd(const char *name, int ndim, uint64_t d0, uint64_t d1, const int32_t *x,
    struct pate_votes *v, int want, int *kind, char msg[PATEIO_MSG])
{
	size_t len;
	char *buf = stream(name, ndim, d0, d1, x, &len);
	FILE *fp = fmemopen(buf, len, "rb");
	struct ts_reader *r = ts_reader_open(fp, "in");
	int rc = pateio_read(r, v, want, "in", kind, msg);

	ts_reader_close(r);
	fclose(fp);
	free(buf);
	return rc;
}

int
main(void)
{
	/* 2 teachers, 3 queries */
	const int32_t votes[6] = { 0, 1, 2, 1, 1, 0 };
	const int32_t bad[3] = { 0, 3, 1 };
	const int32_t y4[4] = { 0, 0, 0, 0 };
	struct pate_votes v = { .k = 3 };
	char msg[PATEIO_MSG];
	int kind;

	ok(rd("votes", 2, 2, 3, votes, &v, -1, &kind, msg) == 0 &&
	    kind == 1 && v.n == 2 && v.q == 3, "a votes tensor");
	ok(v.count[0 * 3 + 0] == 1 && v.count[0 * 3 + 1] == 1 &&
	    v.count[1 * 3 + 1] == 2 && v.count[2 * 3 + 2] == 1 &&
	    v.count[2 * 3 + 0] == 1, "the histograms");
	pate_votes_free(&v);

	v = (struct pate_votes){ .k = 3 };
	ok(rd("y_pred", 1, 3, 0, votes, &v, 0, &kind, msg) == 0 &&
	    kind == 0 && v.n == 1, "a teacher");
	ok(rd("y_pred", 2, 3, 1, votes + 3, &v, 0, &kind, msg) == 0 &&
	    v.n == 2, "a second teacher, [queries, 1]");
	ok(rd("y_pred", 1, 4, 0, y4, &v, 0, &kind, msg) == PV_E_FORMAT &&
	    strcmp(msg, "in: tensor 'y_pred' has 4 queries, the first "
	    "teacher 3: teachers must answer the same queries") == 0,
	    "queries differ: %s", msg);
	ok(rd("y_pred", 1, 3, 0, bad, &v, 0, &kind, msg) == PV_E_RANGE &&
	    strstr(msg, "label 3 outside [0, 3) (--classes 3)") != NULL,
	    "label outside the classes: %s", msg);
	pate_votes_free(&v);

	v = (struct pate_votes){ .k = 3 };
	ok(rd("votes", 2, 2, 3, votes, &v, 0, &kind, msg) == PV_E_FORMAT &&
	    strstr(msg, "expected the predictions 'y_pred'") != NULL,
	    "votes where a teacher is wanted");
	pate_votes_free(&v);
	v = (struct pate_votes){ .k = 3 };
	ok(rd("votes", 1, 6, 0, votes, &v, -1, &kind, msg) == PV_E_FORMAT &&
	    strstr(msg, "expected i32 of 2 dimensions") != NULL,
	    "votes of 1 dimension");
	pate_votes_free(&v);
	v = (struct pate_votes){ .k = 3 };
	ok(rd(NULL, 0, 0, 0, NULL, &v, -1, &kind, msg) == PV_E_FORMAT &&
	    strncmp(msg, "in: no tensor 'votes'", 21) == 0, "no tensor");
	pate_votes_free(&v);
	return tap_done();
}
