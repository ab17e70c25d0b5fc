/*
 * optim.h: first-order optimisers on a flat f32 parameter vector, with
 * learning-rate schedules and weight decay.
 *
 *   SGD with momentum (PyTorch's form): v <- mu v + g,  p <- p - lr v;
 *   Nesterov: p <- p - lr (g + mu v).
 *   Adam (Kingma and Ba 2015): m <- b1 m + (1 - b1) g,
 *   v <- b2 v + (1 - b2) g^2,  p <- p - lr mhat / (sqrt(vhat) + eps)
 *   with the bias corrections mhat = m / (1 - b1^t), vhat = v / (1 - b2^t).
 * Weight decay wd adds wd * p to the gradient (L2 regularisation).
 * Schedules give the learning rate of step t (from 0) of T:
 *   constant: lr;  step: lr gamma^floor(t / every);
 *   cosine: lr (1 + cos(pi t / T)) / 2.
 *
 * Applied to a DP-SGD gradient, all of this is post-processing: it reads
 * only the released noisy gradients and public hyperparameters.
 *
 * Ownership: struct optim is opaque (optim_new / optim_free, which
 * accepts NULL) and owns its moment buffers; parameters and gradients are
 * the caller's.  Nothing here prints, exits or reads the environment.
 */
#ifndef PRIVADA_OPTIM_H
#define PRIVADA_OPTIM_H

#include <stddef.h>
#include <stdint.h>

enum optim_kind { OPTIM_SGD = 0, OPTIM_ADAM = 1 };
enum optim_sched { OPTIM_CONSTANT = 0, OPTIM_STEP = 1, OPTIM_COSINE = 2 };

struct optim_cfg {
	int kind;		/* enum optim_kind */
	double lr;		/* > 0 */
	double momentum;	/* SGD: 0 <= mu < 1 */
	int nesterov;		/* SGD: Nesterov momentum */
	double beta1, beta2;	/* Adam: in [0, 1) */
	double eps;		/* Adam: > 0 */
	double weight_decay;	/* >= 0 */
	int sched;		/* enum optim_sched */
	uint64_t every;		/* step schedule: steps between decays, >= 1 */
	double gamma;		/* step schedule: factor, in (0, 1] */
	uint64_t total;		/* cosine schedule: T, >= 1 */
};

/* Defaults: SGD, lr 0.1, no momentum, Adam betas 0.9 and 0.999, eps
 * 1e-8, no weight decay, constant schedule. */
void optim_defaults(struct optim_cfg *c);

/* @return NULL if c is valid, else a static message naming the field. */
const char *optim_check(const struct optim_cfg *c);

/* The learning rate of step t (0-based). */
double optim_lr(const struct optim_cfg *c, uint64_t t);

struct optim;

/* An optimiser for n parameters (moments zeroed, step 0).
 * @return NULL when out of memory or c is invalid. */
struct optim *optim_new(const struct optim_cfg *c, size_t n);
void optim_free(struct optim *o);

/* Update param[lo..hi-1] from grad[lo..hi-1] at the current step.  Call
 * it for each trained range of the vector, then optim_next once. */
void optim_update(struct optim *o, float *param, const float *grad,
    size_t lo, size_t hi);
/* Advance to the next step. */
void optim_next(struct optim *o);
/* The current step (the number of optim_next calls). */
uint64_t optim_steps(const struct optim *o);

#endif
