/* optim.c: SGD with momentum, Adam, schedules (see optim.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "optim.h"
#include "simd.h"

struct optim {
	struct optim_cfg c;
	size_t n;
	uint64_t t;
	float *m, *v;		/* momentum / Adam moments (v: Adam only) */
};

void
optim_defaults(struct optim_cfg *c)
{
	c->kind = OPTIM_SGD;
	c->lr = 0.1;
	c->momentum = 0;
	c->nesterov = 0;
	c->beta1 = 0.9;
	c->beta2 = 0.999;
	c->eps = 1e-8;
	c->weight_decay = 0;
	c->sched = OPTIM_CONSTANT;
	c->every = 1;
	c->gamma = 1;
	c->total = 1;
}

const char *
optim_check(const struct optim_cfg *c)
{
	if (c->kind != OPTIM_SGD && c->kind != OPTIM_ADAM)
		return "unknown optimiser";
	if (!(c->lr > 0) || !isfinite(c->lr))
		return "the learning rate must be finite and positive";
	if (!(c->momentum >= 0 && c->momentum < 1))
		return "the momentum must be in [0, 1)";
	if (!(c->beta1 >= 0 && c->beta1 < 1) || !(c->beta2 >= 0 &&
	    c->beta2 < 1))
		return "the Adam betas must be in [0, 1)";
	if (!(c->eps > 0) || !isfinite(c->eps))
		return "the Adam epsilon must be finite and positive";
	if (!(c->weight_decay >= 0) || !isfinite(c->weight_decay))
		return "the weight decay must be finite and >= 0";
	if (c->sched < OPTIM_CONSTANT || c->sched > OPTIM_COSINE)
		return "unknown schedule";
	if (c->every == 0 || !(c->gamma > 0 && c->gamma <= 1))
		return "the step schedule needs every >= 1 and gamma in (0, 1]";
	if (c->total == 0)
		return "the cosine schedule needs at least one step";
	return NULL;
}

double
optim_lr(const struct optim_cfg *c, uint64_t t)
{
	switch (c->sched) {
	case OPTIM_STEP:
		return c->lr * pow(c->gamma, (double)(t / c->every));
	case OPTIM_COSINE:
		if (t >= c->total)
			return 0;
		return c->lr * (1 + cos(M_PI * (double)t / (double)c->total)) / 2;
	default:
		return c->lr;
	}
}

struct optim *
optim_new(const struct optim_cfg *c, size_t n)
{
	struct optim *o;

	if (optim_check(c) != NULL || (o = calloc(1, sizeof *o)) == NULL)
		return NULL;
	o->c = *c;
	o->n = n;
	o->m = calloc(n ? n : 1, sizeof *o->m);
	if (c->kind == OPTIM_ADAM)
		o->v = calloc(n ? n : 1, sizeof *o->v);
	if (o->m == NULL || (c->kind == OPTIM_ADAM && o->v == NULL)) {
		optim_free(o);
		return NULL;
	}
	return o;
}

void
optim_free(struct optim *o)
{
	if (o == NULL)
		return;
	free(o->m);
	free(o->v);
	free(o);
}

/*
 * SGD with momentum in blocks of 8 copied to local arrays, a form GCC's
 * -O2 vectoriser accepts (a plain loop would need an epilogue, which its
 * cheapest cost model refuses); the scalar tail does the rest.
 */
#define VB 8

PV_CLONES static void
sgd_momentum(struct optim *o, float *param, const float *grad, size_t lo,
    size_t hi, float lr, float wd)
{
	float mu = (float)o->c.momentum, nest = o->c.nesterov ? 1.0f : 0.0f;
	size_t i = lo;

	for (; i + VB <= hi; i += VB) {
		float p[VB], g[VB], m[VB];

		memcpy(p, param + i, sizeof p);
		memcpy(g, grad + i, sizeof g);
		memcpy(m, o->m + i, sizeof m);
		for (size_t j = 0; j < VB; j++) {
			g[j] += wd * p[j];
			m[j] = mu * m[j] + g[j];
			p[j] -= lr * (nest * (g[j] + mu * m[j]) +
			    (1 - nest) * m[j]);
		}
		memcpy(param + i, p, sizeof p);
		memcpy(o->m + i, m, sizeof m);
	}
	for (; i < hi; i++) {
		float g = grad[i] + wd * param[i];
		o->m[i] = mu * o->m[i] + g;
		param[i] -= lr * (o->c.nesterov ? g + mu * o->m[i] : o->m[i]);
	}
}

/* Plain SGD, in the same VB blocks (the same float operations). */
PV_CLONES static void
sgd_plain(float *param, const float *grad, size_t lo, size_t hi, float lr,
    float wd)
{
	size_t i = lo;

	for (; i + VB <= hi; i += VB) {
		float p[VB], g[VB];

		memcpy(p, param + i, sizeof p);
		memcpy(g, grad + i, sizeof g);
		for (size_t j = 0; j < VB; j++)
			p[j] -= lr * (g[j] + wd * p[j]);
		memcpy(param + i, p, sizeof p);
	}
	for (; i < hi; i++)
		param[i] -= lr * (grad[i] + wd * param[i]);
}

void
optim_update(struct optim *o, float *param, const float *grad, size_t lo,
    size_t hi)
{
	const struct optim_cfg *c = &o->c;
	float lr = (float)optim_lr(c, o->t), wd = (float)c->weight_decay;

	if (hi > o->n)
		hi = o->n;
	if (c->kind == OPTIM_ADAM) {
		float b1 = (float)c->beta1, b2 = (float)c->beta2;
		float eps = (float)c->eps;
		double t = (double)o->t + 1;
		/* Bias corrections folded into the step size. */
		float c1 = (float)(1 / (1 - pow(c->beta1, t)));
		float c2 = (float)(1 / (1 - pow(c->beta2, t)));

		for (size_t i = lo; i < hi; i++) {
			float g = grad[i] + wd * param[i];
			o->m[i] = b1 * o->m[i] + (1 - b1) * g;
			o->v[i] = b2 * o->v[i] + (1 - b2) * g * g;
			param[i] -= lr * (o->m[i] * c1) /
			    (sqrtf(o->v[i] * c2) + eps);
		}
		return;
	}
	if (c->momentum == 0) {
		sgd_plain(param, grad, lo, hi, lr, wd);
		return;
	}
	sgd_momentum(o, param, grad, lo, hi, lr, wd);
}

void
optim_next(struct optim *o)
{
	o->t++;
}

uint64_t
optim_steps(const struct optim *o)
{
	return o->t;
}
