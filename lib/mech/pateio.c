/* pateio.c: the votes of teacher-vote's inputs (see pateio.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck.h"
#include "pateio.h"
#include "tensor.h"

#define ROW_BYTES (1u << 20)		/* bytes of votes read at once */

static int
nomem(char msg[PATEIO_MSG])
{
	snprintf(msg, PATEIO_MSG, "out of memory");
	return PV_E_NOMEM;
}

/* Allocate the histograms once the number of queries is known. */
static int
votes_alloc(struct pate_votes *v, uint64_t q, const char *label,
    char msg[PATEIO_MSG])
{
	int rc = pate_votes_alloc(v, q);

	if (rc == PV_E_LIMIT)
		snprintf(msg, PATEIO_MSG, "%s: %" PRIu64 " queries of %zu "
		    "classes: more than %" PRIu64 " vote counts", label, q,
		    v->k, PATE_MAX_COUNTS);
	else if (rc != 0)
		return nomem(msg);
	return rc;
}

/* Add the votes of one teacher (or rows teachers) to the histograms. */
static int
add_votes(struct pate_votes *v, const int32_t *lab, size_t rows,
    const char *label, const char *tname, char msg[PATEIO_MSG])
{
	uint64_t n0 = v->n;
	size_t q = 0;
	int rc = pate_votes_add(v, lab, rows, &q);

	if (rc == PV_E_LIMIT)
		snprintf(msg, PATEIO_MSG, "%s: more than %" PRIu32 " teachers",
		    label, PATE_MAX_TEACHERS);
	else if (rc != 0)
		snprintf(msg, PATEIO_MSG, "%s: tensor '%s': teacher %" PRIu64
		    ", query %zu: label %" PRId32 " outside [0, %zu) "
		    "(--classes %zu)", label, tname, v->n, q,
		    lab[(size_t)(v->n - n0) * v->q + q], v->k, v->k);
	return rc;
}

static const char *
dtype_name(int dtype)
{
	const char *s = ts_dtype_name(dtype);

	return s != NULL ? s : "?";
}

/* The tensor 'votes' (i32 [teachers, queries]), read by chunks of rows. */
static int
read_votes(struct ts_reader *r, const struct tensor *h,
    struct pate_votes *v, const char *label, char msg[PATEIO_MSG])
{
	size_t cap, bytes;
	int32_t *buf;
	int64_t got;
	int rc;

	if (h->dtype != TS_I32 || h->ndim != 2) {
		snprintf(msg, PATEIO_MSG, "%s: tensor 'votes': expected i32 "
		    "of 2 dimensions [teachers, queries], not %s of %d", label,
		    dtype_name(h->dtype), h->ndim);
		return PV_E_FORMAT;
	}
	if ((rc = votes_alloc(v, h->dims[1], label, msg)) != 0)
		return rc;
	cap = v->q == 0 ? 1 : ROW_BYTES / 4 / v->q;
	cap = cap ? cap : 1;
	if (ck_mul_size(cap, v->q ? v->q * 4 : 4, &bytes) != 0 ||
	    (buf = malloc(bytes)) == NULL)
		return nomem(msg);
	while ((got = ts_read_rows(r, buf, cap)) > 0)
		if ((rc = add_votes(v, buf, (size_t)got, label, "votes",
		    msg)) != 0)
			break;
	free(buf);
	return rc != 0 ? rc : got < 0 ? (int)got : 0;
}

/* One teacher's 'y_pred' (i32 [queries] or [queries, 1]). */
static int
read_ypred(struct ts_reader *r, const struct tensor *h,
    struct pate_votes *v, const char *label, char msg[PATEIO_MSG])
{
	int32_t *lab = NULL, *nl;
	size_t n = 0, cap = 0;
	int64_t got;
	int rc;

	if (h->dtype != TS_I32 || !(h->ndim == 1 || (h->ndim == 2 &&
	    h->dims[1] == 1))) {
		snprintf(msg, PATEIO_MSG, "%s: tensor 'y_pred': expected i32 "
		    "labels [queries], not %s of %d dimensions", label,
		    dtype_name(h->dtype), h->ndim);
		return PV_E_FORMAT;
	}
	for (;;) {
		if (n == cap) {
			cap = cap ? 2 * cap : 4096;
			nl = reallocarray(lab, cap, sizeof *lab);
			if (nl == NULL) {
				free(lab);
				return nomem(msg);
			}
			lab = nl;
		}
		if ((got = ts_read_rows(r, lab + n, cap - n)) <= 0)
			break;
		n += (size_t)got;
	}
	if (got < 0)
		rc = (int)got;
	else if (v->count == NULL)
		rc = votes_alloc(v, n, label, msg);
	else if (n != v->q) {
		snprintf(msg, PATEIO_MSG, "%s: tensor 'y_pred' has %zu "
		    "queries, the first teacher %zu: teachers must answer the "
		    "same queries", label, n, v->q);
		rc = PV_E_FORMAT;
	} else
		rc = 0;
	if (rc == 0)
		rc = add_votes(v, lab, 1, label, "y_pred", msg);
	free(lab);
	return rc;
}

int
pateio_read(struct ts_reader *r, struct pate_votes *v, int want,
    const char *label, int *kind, char msg[PATEIO_MSG])
{
	struct tensor h;
	int rc;

	msg[0] = '\0';
	*kind = -1;
	while ((rc = ts_read_next(r, &h)) == 1) {
		int is_votes = strcmp(h.name, "votes") == 0;

		if (!is_votes && strcmp(h.name, "y_pred") != 0) {
			tensor_free(&h);
			continue;
		}
		if (*kind >= 0)
			snprintf(msg, PATEIO_MSG, "%s: a second tensor '%s': "
			    "an input holds one 'votes' or one 'y_pred'", label,
			    h.name);
		else if (want >= 0 && is_votes != want)
			snprintf(msg, PATEIO_MSG, "%s: tensor '%s': %s", label,
			    h.name, want ? "a stream of 'votes' is the only "
			    "input" : "expected the predictions 'y_pred' of a "
			    "teacher, as the other inputs");
		if (msg[0] != '\0') {
			tensor_free(&h);
			return PV_E_FORMAT;
		}
		*kind = is_votes;
		rc = is_votes ? read_votes(r, &h, v, label, msg) :
		    read_ypred(r, &h, v, label, msg);
		tensor_free(&h);
		if (rc != 0)
			return rc;
	}
	if (rc < 0)
		return rc;
	if (*kind < 0) {
		snprintf(msg, PATEIO_MSG, "%s: no tensor 'votes' (i32 "
		    "[teachers, queries]) or 'y_pred' (a teacher's labels, "
		    "from predict)", label);
		return PV_E_FORMAT;
	}
	return 0;
}
