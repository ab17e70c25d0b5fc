/*
 * logreg.h: class-balanced, L2-penalised logistic regression on
 * standardised features, fitted by Newton's method (the attack model of
 * mia-eval's shadow attack; Shokri et al. 2017).
 *
 * Ownership: a fitted struct logreg owns mu, sd and w (logreg_free; a
 * zeroed struct may be freed).  The caller owns the data.  Nothing here
 * prints, exits or reads the environment.  Errors: PV_E_NOMEM, PV_E_NOTPD
 * (the Hessian is singular), PV_E_RANGE (fewer than one row of a class).
 */
#ifndef PRIVADA_LOGREG_H
#define PRIVADA_LOGREG_H

#include <stddef.h>

struct logreg {
	size_t d;			/* features; w has d + 1 entries */
	double *mu, *sd, *w;		/* w[d]: intercept */
};

/* Fit a to the n rows of F (n x d) with labels lab (nonzero: positive):
 * the two classes weighted to equal total weight, features standardised
 * (sd 1 where a feature is constant), penalty lambda * n * |w|^2 / 2 on
 * the weights (not the intercept), at most iters Newton steps, stopping
 * when no weight moves by 1e-10.  On error a may hold partial state
 * (logreg_free it).  @return 0 or a PV_E_* code. */
int logreg_fit(struct logreg *a, const double *F, const int *lab, size_t n,
    size_t d, double lambda, int iters);
/* P(positive) of the d features f. */
double logreg_apply(const struct logreg *a, const double *f);
void logreg_free(struct logreg *a);

#endif
