/*
 * accuracy.h: the accuracy of a classifier (lib/ml/model.h) on labelled
 * rows: the fraction whose largest logit (the first on ties) is the label.
 *
 * Ownership: everything is borrowed; the function allocates its own work
 * space and frees it.  Errors: 0 or PV_E_NOMEM (lib/common/pverr.h).
 * Nothing here prints, exits or reads the environment.
 */
#ifndef PRIVADA_ACCURACY_H
#define PRIVADA_ACCURACY_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

#define ACCURACY_ROWS 1024		/* rows through the net at once */

/* The accuracy of m's net with parameters param (m->nparam floats, m's
 * own or another vector of its shape) on the n > 0 rows x (n x
 * model_inputs(m), row-major; not written, but nn_forward takes it as
 * its a[0]) labelled y, into *out. */
int accuracy_model(const struct nn_model *m, const float *param,
    float *x, const int32_t *y, size_t n, double *out);

#endif
