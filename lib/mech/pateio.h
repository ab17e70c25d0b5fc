/*
 * pateio.h: the votes of teacher-vote's inputs.  An input holds one
 * tensor 'votes' (i32 [teachers, queries]: a stream of votes) or one
 * teacher's 'y_pred' (i32 [queries] or [queries, 1], from predict); other
 * tensors are skipped.  The votes go into the histograms of
 * pate_votes (pate.h), whose k the caller sets.
 *
 * Nothing here prints, exits or reads the environment.
 */
#ifndef PRIVADA_PATEIO_H
#define PRIVADA_PATEIO_H

#include "pverr.h"

#include "pate.h"
#include "tstream.h"

#define PATEIO_MSG 1024		/* bytes of a message */

/*
 * Read the input of r (label names it in messages) into v: want 1 takes
 * only 'votes', 0 only 'y_pred', -1 either; *kind says which it was (1
 * votes, 0 y_pred).  Every y_pred after the first must answer as many
 * queries.  @return 0; with msg empty, r's error code (its message says
 * why); with msg set, PV_E_FORMAT, PV_E_LIMIT or PV_E_RANGE (bad data)
 * or PV_E_NOMEM.
 */
int pateio_read(struct ts_reader *r, struct pate_votes *v, int want,
    const char *label, int *kind, char msg[PATEIO_MSG]);

#endif
