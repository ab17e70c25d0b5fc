/* dppg.c: DP-PG and DP-PGP (see dppg.h). */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dppg.h"
#include "nn.h"
#include "noise.h"
#include "pverr.h"
#include "rdp.h"

#define TILE 64				/* parameters transposed at once */

struct dppg {
	struct dppg_params p;
	struct dppg_calib c;
	struct kde_grid g;
	int rule;			/* KDE_SILVERMAN, KDE_SCOTT or 0 */
	float kinv;			/* fixed bandwidth: 1 / b */
	double norm;			/* U = norm * (sum of kernel masses) */
	uint64_t cn;			/* EM rate c = cn / 2^DEN_BITS per q */
};

/* Work shared by the threads of one attempt. */
struct job {
	const struct dppg *d;
	float *const *par;		/* par[m][j] */
	size_t nm, np;
	float *out;
	uint64_t attempt;
	atomic_size_t next;
	atomic_int err;
	atomic_size_t drawn;		/* parameters published so far */
	pthread_t caller;		/* the thread that reports progress */
};

const char *
dppg_check_params(const struct dppg_params *p)
{
	if (!(p->eps > 0 && p->eps <= DPPG_EPS_MAX))
		return "eps must lie in (0, 1e4]";
	if (!(p->delta > 0 && p->delta < 1))
		return "delta must lie in (0, 1)";
	if (!(p->range > 0 && p->range <= DPPG_RANGE_MAX))
		return "range must lie in (0, 1e6]";
	if (!(p->step > 0 && isfinite(p->step)) || !(p->window > 0 &&
	    isfinite(p->window)))
		return "step and window must be positive";
	if (p->points < 1 || p->points > DPPG_MAX_GRID)
		return "the grid must have 1 to 2^20 points";
	if (p->bw == DPPG_BW_VALUE) {
		if (!(p->bw_value > 0 && p->bw_value <= DPPG_RANGE_MAX))
			return "the bandwidth must lie in (0, 1e6]";
	} else if (p->bw == DPPG_BW_SILVERMAN || p->bw == DPPG_BW_SCOTT) {
		if (!(p->bw_min > 0 && isfinite(p->bw_min)))
			return "bw_min must be positive";
	} else {
		return "unknown bandwidth rule";
	}
	if (!(p->ratio >= 0 && p->ratio <= 1))
		return "the group ratio must lie in [0, 1]";
	if (p->ratio > 0 && (p->k == 0 || !(p->group_eps > 0 &&
	    p->group_eps <= DPPG_EPS_MAX)))
		return "grouping needs k >= 1 and group_eps in (0, 1e4]";
	if (p->attempts == 0)
		return "at least one attempt is charged";
	if (p->threads < 1 || p->threads > DPPG_MAX_THREADS)
		return "threads must lie in [1, 64]";
	if (p->seeded && p->work_item == NULL)
		return "a seeded run needs a work item";
	return NULL;
}

/* The Laplace scale for offsets: the mean of values clipped to [-R, R]
 * moves by at most 2R/M when one model is replaced; the rounding to the
 * noise grid adds gamma (noise_sens_l1). */
static void
group_init(struct dppg_calib *c, const struct dppg_params *p, size_t nm)
{
	double d = 2 * p->range / (double)nm, gamma;

	c->group_b = d / p->group_eps;
	for (int i = 0; i < 4; i++) {
		gamma = noise_grid(c->group_b);
		c->group_sens = noise_sens_l1(d, gamma, 1);
		c->group_b = c->group_sens / p->group_eps;
	}
	gamma = noise_grid(c->group_b);
	c->group_sens = noise_sens_l1(d, gamma, 1);
	c->group_eps_used = c->group_sens / c->group_b;
	if (c->group_eps_used > p->group_eps * (1 + 1e-12))
		c->group_b = c->group_sens / p->group_eps * (1 + 1e-9);
	c->group_eps_used = c->group_sens / c->group_b;
}

/*
 * The constants of the exponential mechanism (see the man page, section
 * SENSITIVITY).  One model's kernel puts mass g(t) in [0, p] into the
 * window of candidate t, p = erf(wmax / (2 sqrt 2 b)) (a window of width
 * wmax centred on the kernel holds the most).
 *  - fixed bandwidth: U(t) = sum over models of g(t); one model more,
 *    less or replaced moves U(t) by at most p: sens = p;
 *  - data-dependent bandwidth b >= bw_min: every kernel changes with b, so
 *    the sum has no small sensitivity; U(t) = (1/M) sum g(t) (the KDE's
 *    window mass, paper eq. 5) lies in [0, p(bw_min)] for both
 *    neighbours: sens = p(bw_min).
 * U is computed within eta, then rounded down to the grid gamma: the
 * rounded scores of two neighbours differ by less than sens + 2 eta +
 * gamma, which is what the mechanism is calibrated to.  The rate c =
 * eps gamma / (2 sens_eff) per unit of q is rounded down to cn / 2^40:
 * the mechanism spends eps_used <= eps.
 */
int
dppg_new(struct dppg **out, const struct dppg_params *p, size_t nm)
{
	struct dppg *d = calloc(1, sizeof *d);
	struct dppg_calib *c;
	double b, z, lg, dm = (double)nm, eta, rate;
	int rc = 0;

	*out = NULL;
	if (d == NULL)
		return PV_E_NOMEM;
	d->p = *p;
	c = &d->c;
	if (kde_grid_init(&d->g, -p->range, p->step, p->points,
	    p->window) != 0) {
		rc = PV_E_RANGE;
		goto fail;
	}
	c->candidates = d->g.n;
	if (p->bw == DPPG_BW_VALUE) {
		d->rule = 0;
		d->kinv = (float)(1.0 / p->bw_value);
		b = 1.0 / (double)d->kinv;
		d->norm = 1;
	} else {
		d->rule = p->bw == DPPG_BW_SCOTT ? KDE_SCOTT : KDE_SILVERMAN;
		/* b >= bw_min gives kinv = fl(1/b) <= fl(1/bw_min). */
		b = 1.0 / (double)(float)(1.0 / p->bw_min);
		d->norm = 1 / dm;
	}
	if (!(b > 0) || !isfinite(b)) {
		rc = PV_E_NUMERIC;
		goto fail;
	}
	z = d->g.wmax / (2 * M_SQRT2 * b);
	c->p = fmin(1, erf(z) * (1 + 1e-12));
	c->sens = c->p;
	/* kde_util's bound for m kernels, scaled like U (plus the rounding
	 * of the product by norm). */
	eta = 2 * dm * KDE_PHI_ERR + (2 * dm * dm + dm) * 0x1p-52;
	c->eta = eta * d->norm * (1 + 0x1p-50) + 0x1p-60;
	lg = floor(log2(c->sens)) - 24;
	c->gamma = ldexp(1, (int)lg);
	c->sens_eff = (c->sens + 2 * c->eta + c->gamma) * (1 + 0x1p-50);
	rate = p->eps * c->gamma / (2 * c->sens_eff);
	d->cn = (uint64_t)floor(ldexp(rate, DPPG_DEN_BITS));
	c->eps_used = 2 * c->sens_eff * ldexp((double)d->cn, -DPPG_DEN_BITS) /
	    c->gamma;
	if (d->cn == 0) {
		rc = PV_E_SIZE;
		goto fail;
	}
	if (p->ratio > 0)
		group_init(c, p, nm);
	*out = d;
	return 0;
fail:
	dppg_free(d);
	return rc;
}

void
dppg_free(struct dppg *d)
{
	if (d == NULL)
		return;
	kde_grid_free(&d->g);
	free(d);
}

const struct dppg_calib *
dppg_calib(const struct dppg *d)
{
	return &d->c;
}

/* ---- DP-PG ---- */

/* One parameter: its slice x[0..nm) to a published value. */
static int
publish_one(const struct dppg *d, const float *x, size_t nm, double *u,
    uint64_t *q, float *scratch, struct rng *r, float *out)
{
	float kinv = d->kinv;
	size_t k, k0, k1;
	int rc;

	if (d->rule) {
		double b = kde_bandwidth(d->rule, x, nm);
		/* NaN (all equal) and tiny bandwidths take the floor. */
		if (!(b >= d->p.bw_min))
			b = d->p.bw_min;
		kinv = (float)(1.0 / b);
	}
	(void)kde_util(&d->g, x, nm, kinv, u, scratch, &k0, &k1);
	/* Outside [k0, k1) every score is exactly 0. */
	for (size_t j = k0; j < k1; j++) {
		double v = floor(u[j] * d->norm / d->c.gamma);
		q[j] = v > 0 ? (uint64_t)v : 0;
	}
	if ((rc = kde_em_sample_range(r, q, d->g.n, k0, k1, d->cn,
	    DPPG_DEN_BITS, &k)) != 0)
		return rc;
	*out = d->g.t[k];
	return 0;
}

static struct rng *
block_rng(const struct dppg_params *p, uint64_t attempt, size_t block)
{
	struct rng *r;
	char item[96];

	snprintf(item, sizeof item, "%s/attempt/%" PRIu64 "/block/%zu",
	    p->work_item, attempt, block);
	if (rng_new_seeded(&r, p->seed, item) != 0)
		return NULL;
	return r;
}

static void *
worker(void *arg)
{
	struct job *jb = arg;
	const struct dppg *d = jb->d;
	size_t nb = (jb->np + DPPG_BLOCK - 1) / DPPG_BLOCK, blk;
	float *buf, *x, *scratch;
	double *u;
	uint64_t *q;
	struct rng *own = NULL;

	buf = malloc(jb->nm * TILE * sizeof *buf);
	x = malloc(jb->nm * sizeof *x);
	scratch = malloc(kde_scratch_floats(&d->g) * sizeof *scratch);
	u = malloc(d->g.n * sizeof *u);
	q = malloc(d->g.n * sizeof *q);
	if (buf == NULL || x == NULL || scratch == NULL || u == NULL ||
	    q == NULL) {
		atomic_store(&jb->err, PV_E_NOMEM);
		goto out;
	}
	if (!d->p.seeded && rng_new(&own) != 0) {
		atomic_store(&jb->err, PV_E_NOMEM);
		goto out;
	}
	while ((blk = atomic_fetch_add(&jb->next, 1)) < nb &&
	    atomic_load(&jb->err) == 0) {
		size_t j0 = blk * DPPG_BLOCK, n = jb->np - j0 < DPPG_BLOCK ?
		    jb->np - j0 : DPPG_BLOCK;
		struct rng *r = d->p.seeded ? block_rng(&d->p, jb->attempt,
		    blk) : own;

		if (r == NULL) {
			atomic_store(&jb->err, PV_E_NOMEM);
			break;
		}
		/* Slices by tiles of TILE parameters: the tile of every
		 * model stays in the cache while it is transposed. */
		for (size_t t0 = 0; t0 < n; t0 += TILE) {
			size_t tn = n - t0 < TILE ? n - t0 : TILE;
			int rc = 0;

			for (size_t m = 0; m < jb->nm; m++)
				memcpy(buf + m * TILE, jb->par[m] + j0 + t0,
				    tn * sizeof *buf);
			for (size_t j = 0; j < tn && rc == 0; j++) {
				for (size_t m = 0; m < jb->nm; m++)
					x[m] = buf[m * TILE + j];
				rc = publish_one(d, x, jb->nm, u, q, scratch,
				    r, jb->out + j0 + t0 + j);
			}
			if (rc != 0) {
				atomic_store(&jb->err, rc);
				break;
			}
		}
		if (d->p.seeded)
			rng_free(r);
		atomic_fetch_add(&jb->drawn, n);
		if (d->p.progress != NULL &&
		    pthread_equal(pthread_self(), jb->caller))
			d->p.progress(d->p.progress_ctx,
			    atomic_load(&jb->drawn), jb->np);
	}
out:
	rng_free(own);
	free(buf);
	free(x);
	free(scratch);
	free(u);
	free(q);
	return NULL;
}

/* DP-PG: every parameter through the exponential mechanism, by blocks
 * shared among the threads (the blocks, not the threads, name the seeded
 * streams, so the output does not depend on the number of threads). */
static int
dp_pg(const struct dppg *d, float *const *par, size_t nm, size_t np,
    float *out, uint64_t attempt)
{
	struct job jb = { .d = d, .par = par, .nm = nm, .np = np,
	    .out = out, .attempt = attempt };
	pthread_t th[DPPG_MAX_THREADS];
	size_t nt = d->p.threads, started = 0;

	atomic_init(&jb.next, 0);
	atomic_init(&jb.err, 0);
	atomic_init(&jb.drawn, 0);
	jb.caller = pthread_self();
	if (d->p.progress != NULL)
		d->p.progress(d->p.progress_ctx, 0, np);
	for (size_t t = 1; t < nt; t++) {
		if (pthread_create(&th[started], NULL, worker, &jb) != 0)
			break;
		started++;
	}
	worker(&jb);
	for (size_t t = 0; t < started; t++)
		pthread_join(th[t], NULL);
	if (d->p.progress != NULL && atomic_load(&jb.err) == 0)
		d->p.progress(d->p.progress_ctx, np, np);
	return atomic_load(&jb.err);
}

/* ---- DP-PGP ---- */

static int
abs_desc(const void *a, const void *b)
{
	float x = fabsf(**(float *const *)a), y = fabsf(**(float *const *)b);

	if (x != y)
		return x < y ? 1 : -1;
	return *(float *const *)a < *(float *const *)b ? -1 :
	    *(float *const *)a > *(float *const *)b;
}

/*
 * One layer of nl_par parameters at out[0..nl_par) (the models' at
 * par[m][off..]): the top ratio of the published values by magnitude (a
 * function of the DP-PG release: free), grouped by k-means on those
 * published values (also free: the release is already private), from
 * centroids evenly spaced over [-R, R]; then each grouped parameter is
 * published as its centroid c minus the Laplace-perturbed offset c -
 * mean_j + Lap(b) (paper eq. 7), i.e. the clipped mean over the models
 * plus Laplace noise.
 */
static int
pgp_layer(const struct dppg *d, float *const *par, size_t nm, float *out,
    size_t off, size_t nl_par, size_t nsel, struct rng *r)
{
	const struct dppg_params *p = &d->p;
	size_t kk = (size_t)p->k < nsel ? (size_t)p->k : nsel;
	float **ord = malloc(nl_par * sizeof *ord);
	double *c = malloc(kk * sizeof *c), *s = malloc(kk * sizeof *s);
	double *mean = malloc(nsel * sizeof *mean);
	size_t *cnt = malloc(kk * sizeof *cnt), *cl = malloc(nsel * sizeof *cl);
	int rc = PV_E_NOMEM;

	if (ord == NULL || c == NULL || s == NULL || mean == NULL ||
	    cnt == NULL || cl == NULL)
		goto out;
	for (size_t j = 0; j < nl_par; j++)
		ord[j] = out + off + j;
	qsort(ord, nl_par, sizeof *ord, abs_desc);
	for (size_t i = 0; i < kk; i++)
		c[i] = kk == 1 ? 0 : -p->range + 2 * p->range *
		    (double)i / (double)(kk - 1);
	for (uint64_t it = 0; it <= p->iters; it++) {
		for (size_t i = 0; i < kk; i++) {
			s[i] = 0;
			cnt[i] = 0;
		}
		for (size_t j = 0; j < nsel; j++) {
			double v = *ord[j], bd = INFINITY;
			for (size_t i = 0; i < kk; i++)
				if (fabs(v - c[i]) < bd) {
					bd = fabs(v - c[i]);
					cl[j] = i;
				}
			s[cl[j]] += v;
			cnt[cl[j]]++;
		}
		if (it == p->iters)
			break;
		for (size_t i = 0; i < kk; i++)
			if (cnt[i])
				c[i] = s[i] / (double)cnt[i];
	}
	/* The offsets: o_j = c - mean_j + Lap(b); published c - o_j. */
	for (size_t j = 0; j < nsel; j++) {
		size_t idx = (size_t)(ord[j] - out);
		double sm = 0;
		for (size_t m = 0; m < nm; m++) {
			double v = par[m][idx];
			sm += v < -p->range ? -p->range : v > p->range ?
			    p->range : v;
		}
		mean[j] = c[cl[j]] - sm / (double)nm;
	}
	if ((rc = noise_add_dlaplace(r, mean, nsel, d->c.group_b, 0)) != 0)
		goto out;
	for (size_t j = 0; j < nsel; j++)
		*ord[j] = (float)(c[cl[j]] - mean[j]);
out:
	free(ord);
	free(c);
	free(s);
	free(cnt);
	free(cl);
	free(mean);
	return rc;
}

/* DP-PGP over the layers of shape (the weights and biases of fc<k>). */
static int
dp_pgp(const struct dppg *d, const struct nn_model *shape, float *const *par,
    size_t nm, float *out, struct rng *r, size_t *nsel_out)
{
	size_t nl = shape->net.nlayers, off = 0, nsel_all = 0;
	int rc;

	for (size_t l = 0; l < nl; l++) {
		size_t nl_par = nn_layer_params(&shape->net.layer[l]);
		size_t nsel = (size_t)ceil(d->p.ratio * (double)nl_par);

		if (nsel > nl_par)
			nsel = nl_par;
		if (nsel > 0 && (rc = pgp_layer(d, par, nm, out, off, nl_par,
		    nsel, r)) != 0)
			return rc;
		nsel_all += nsel;
		off += nl_par;
	}
	*nsel_out = nsel_all;
	return 0;
}

int
dppg_run(const struct dppg *d, const struct nn_model *shape,
    float *const *par, size_t nm, uint64_t attempt, struct rng *r,
    float *out, size_t *nsel)
{
	int rc;

	if ((rc = dp_pg(d, par, nm, shape->nparam, out, attempt)) != 0)
		return rc;
	*nsel = 0;
	if (d->p.ratio > 0)
		return dp_pgp(d, shape, par, nm, out, r, nsel);
	return 0;
}

/* ---- the models' parts ---- */

int
dppg_part_read(struct dppg_part *p, const struct ts_meta *m,
    const char *dataset)
{
	char key[16 + LEDGER_MAX_NAME];
	const char *s;
	int rc;

	memset(p, 0, sizeof *p);
	if ((rc = part_read(&p->sp, m)) != PART_OK)
		return rc;
	snprintf(key, sizeof key, "split.raw.%s", dataset);
	s = ts_meta_get(m, key);
	/* A part that was already an aggregate of the dataset when split is
	 * not a disjoint piece of its records. */
	p->has = !(s != NULL && strcmp(s, "aggregate") == 0);
	return PART_OK;
}

/* Disjoint parts of one split, by lib/dp/parts.h. */
int
dppg_parts_disjoint(const struct dppg_part *p, size_t n, size_t *a,
    size_t *b)
{
	const struct split_part **pp;
	int rc;

	for (size_t t = 0; t < n; t++)
		if (!p[t].has) {
			*a = *b = t;
			return DPPG_PARTS_NO_PART;
		}
	if ((pp = calloc(n ? n : 1, sizeof *pp)) == NULL)
		return DPPG_PARTS_NOMEM;
	for (size_t t = 0; t < n; t++)
		pp[t] = &p[t].sp;
	rc = parts_disjoint(pp, n, a, b);
	free(pp);
	switch (rc) {
	case PARTS_DISJOINT:
		return DPPG_PARTS_DISJOINT;
	case PARTS_SAME:
		return DPPG_PARTS_SAME;
	case PARTS_NOMEM:
		return DPPG_PARTS_NOMEM;
	default:
		return DPPG_PARTS_OTHER_SPLIT;
	}
}

/* ---- accounting ---- */

/*
 * RDP of one parameter's exponential mechanism at order a: pure eps-DP
 * gives min(eps, a eps^2 / 2) (Bun and Steinke 2016), and the exponential
 * mechanism is eps-bounded-range, which gives eps^2 / 8-zCDP (Cesar and
 * Rogers 2021, Lemma 3.2 with Durfee and Rogers 2019): min(eps, a eps^2/8).
 */
double
dppg_rdp_em(double a, double eps)
{
	return fmin(eps, a * eps * eps / 8);
}

/* Every attempt the loop could make is charged (the cap, not the
 * attempts made: the number made depends on the data). */
int
dppg_account(const struct dppg *d, size_t np, size_t nsel,
    struct dppg_account *ac)
{
	const double *ord = rdp_default_orders(&ac->no);
	double eps_pg = d->p.eps, eps_g, b_g;

	ac->attempts = (double)d->p.attempts;
	ac->np = (double)np;
	ac->nsel = (double)nsel;
	eps_g = d->p.ratio > 0 ? d->c.group_eps_used : 0;
	b_g = d->p.ratio > 0 ? d->c.group_b / d->c.group_sens : 1;
	for (size_t i = 0; i < ac->no; i++) {
		ac->orders[i] = ord[i];
		ac->rdp[i] = ac->attempts * (ac->np * dppg_rdp_em(ord[i],
		    eps_pg) + (ac->nsel > 0 ? ac->nsel *
		    rdp_laplace(ord[i], b_g) : 0));
	}
	ac->basic = ac->attempts * (ac->np * eps_pg + ac->nsel * eps_g);
	ac->zcdp = ac->attempts * (ac->np * eps_pg * eps_pg / 8 +
	    ac->nsel * eps_g * eps_g / 2);
	if (rdp_to_epsilon(ac->orders, ac->rdp, ac->no, d->p.delta,
	    RDP_CONV_IMPROVED, &ac->eps_rdp, &ac->order) != 0)
		return PV_E_NUMERIC;
	return 0;
}

static int
param(struct ledger_entry *e, const char *key, double v)
{
	return ts_meta_setf(&e->params, key, "%.17g", v) != 0 ? PV_E_NOMEM : 0;
}

int
dppg_ledger(const struct dppg *d, const struct dppg_account *ac, size_t nm,
    int per_record, struct ledger_entry *e)
{
	const struct dppg_calib *c = &d->c;
	int rc = 0;

	e->relation = LEDGER_REPLACE_ONE;
	e->epsilon = ac->basic;
	e->norders = ac->no;
	for (size_t i = 0; i < ac->no; i++) {
		e->orders[i] = ac->orders[i];
		e->rdp[i] = ac->rdp[i];
	}
	rc |= param(e, "eps_per_parameter", d->p.eps);
	rc |= param(e, "eps_per_parameter_used", c->eps_used);
	rc |= param(e, "parameters", ac->np);
	rc |= param(e, "models", (double)nm);
	rc |= param(e, "utility_sensitivity", c->sens);
	rc |= param(e, "sensitivity_charged", c->sens_eff);
	rc |= param(e, "grid", c->gamma);
	rc |= param(e, "utility_error", c->eta);
	rc |= param(e, "candidates", (double)c->candidates);
	rc |= param(e, "per_record", per_record);
	rc |= param(e, "attempts_charged", ac->attempts);
	if (d->p.ratio > 0) {
		rc |= param(e, "grouped_parameters", ac->nsel);
		rc |= param(e, "eps_per_grouped_offset", c->group_eps_used);
		rc |= param(e, "scale", c->group_b);
		rc |= param(e, "l1_sensitivity", c->group_sens);
	}
	if (d->p.audit)
		rc |= param(e, "audit_releases", (double)d->p.audit);
	return rc ? PV_E_NOMEM : 0;
}
