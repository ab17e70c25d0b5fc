/*
 * report.h: the classification report of predict: confusion matrix,
 * per-class precision, recall, F1 and support, accuracy and macro
 * averages.  Rows without a prediction (a non-finite input or score,
 * predicted label -1) count as wrong: in their class's support and in
 * n, never in a predicted column.
 *
 * Ownership: a struct report owns its arrays (report_free; a zeroed
 * report may be freed).  Nothing here prints, exits or reads the
 * environment.  Errors: PV_E_NOMEM, PV_E_RANGE (a true label outside
 * [0, k), a predicted one outside [-1, k), or k = 0).
 */
#ifndef PRIVADA_REPORT_H
#define PRIVADA_REPORT_H

#include <stddef.h>
#include <stdint.h>

struct report {
	size_t k;			/* classes */
	uint64_t n;			/* rows */
	uint64_t right;			/* rows predicted right */
	uint64_t none;			/* rows without a prediction */
	uint64_t *cm;			/* k x (k + 1): row true class, column
					 * predicted class, column k none */
	uint64_t *pred;			/* k: rows predicted as each class */
	uint64_t *support;		/* k: rows of each true class */
	double *precision, *recall, *f1;	/* k each; 0 when undefined */
	double accuracy;		/* right / n, 0 when n = 0 */
	double macro_p, macro_r, macro_f;	/* unweighted class means */
};

/* The report of n rows with true labels y and predictions pred (-1: no
 * prediction) over k classes.  @return 0 or a PV_E_* code. */
int report_compute(struct report *r, const int64_t *y, const int32_t *pred,
    size_t n, size_t k);
void report_free(struct report *r);

#endif
