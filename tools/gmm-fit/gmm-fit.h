/*
 * gmm-fit.h: the parts of gmm-fit: tools/gmm-fit.c holds the options and
 * main; under tools/gmm-fit/, input.c reads the rows, fit.c fits or
 * releases the mixtures and writes them, sample.c is gmm-fit sample.
 * CLI glue: these print and exit like cli.h.
 */
#ifndef PRIVADA_GMM_FIT_H
#define PRIVADA_GMM_FIT_H

#include <stddef.h>
#include <stdint.h>

#include "dpem.h"
#include "gmmfit.h"
#include "gmmio.h"
#include "labels.h"
#include "opts.h"
#include "rng.h"
#include "tstream.h"

#define MAX_K GMMIO_MAX_K		/* --components */
#define MAX_FEATURES GMMIO_MAX_D	/* columns of X */
#define MAX_CLASSES GMMIO_MAX_CLASSES	/* --classes */
#define MAX_ITER 100000			/* --iters, --max-iter */
#define MAX_RESTARTS 1000
#define MAX_AUDIT 1000000
#define MAX_SAMPLE ((long long)INT32_MAX)	/* rows of gmm-fit sample */
#define SAMPLE_BLOCK 4096		/* rows written at once */
#define CLIP_MIN 1e-50
#define CLIP_MAX 1e50
#define SIGMA_MIN 1e-6
#define SIGMA_MAX 1e6
#define EPS_MAX 100
#define WORK_ITEM "gmm-fit"

enum {
	OPT_ASSUME_RAW = OPTS_FIRST_TOOL, OPT_AUDIT, OPT_BY_LABEL, OPT_CLASSES,
	OPT_CLIP, OPT_COVARIANCE, OPT_INIT, OPT_INIT_MEANS, OPT_ITERS,
	OPT_MAX_ITER, OPT_MODEL, OPT_N, OPT_REG, OPT_RESTARTS, OPT_SIGMA,
	OPT_SPLIT, OPT_STATS, OPT_TOL, OPT_UNSAFE
};

struct opts {
	struct opts_common c;	/* -d -e -f -o -q -S -v --dataset --level */
	const char *init_means;
	int by_label, cov, stats, unsafe, init_dp, assume_raw;
	int has_sigma, has_clip, has_split, has_iters;
	int has_tol, has_max_iter, has_restarts, has_classes, dp;
	double sigma, clip, reg, tol, split[DPEM_NPARTS];
	size_t k, iters, max_iter, restarts, classes;
	uint64_t audit;
};

struct data {
	const char *label;
	size_t n, d, nclass;
	double *X;			/* n x d, grouped by class */
	size_t *start;			/* nclass + 1 row offsets */
	int32_t *y;			/* labels as read, or NULL */
	struct label_set lset;		/* y's label set */
	char *label_names;		/* lset.names (owned), or NULL */
	int names_ok;			/* label_names may be published */
	uint64_t nonfinite, dropped;
};

/* The output stream: with --audit-repeat, each release's tensors under
 * their own names (gmmio_put_tensor). */
struct out {
	struct ts_writer *w;
	uint64_t audit;			/* 0, or --audit-repeat */
};

/* A class's maximum-likelihood fit. */
struct fit {
	struct gmmfit_result r;
	double secs;			/* in the fit */
};

/* The usage message (status 0: with the options, on stdout), then exit. */
__attribute__((noreturn)) void usage(int status);

/* input.c */
/* Read the rows of tensor X (and y with need_y) into dt, checked (dp:
 * non-finite values taken as zero, else refused). */
void read_input(struct ts_reader *r, struct data *dt, int need_y, int dp);
/* Group the rows by class (--by-label), or one class of every row. */
void group_rows(struct data *dt, const struct opts *o);
/* The K x d start of --init-means, read from its first tensor. */
double *read_init_means(struct ts_reader *r, const char *label, size_t k,
    size_t d);

/* fit.c */
/* Fit every class's mixture by EM (--sigma 0) and write it; priors[c] is
 * class c's share of the rows. */
void fit_classes(struct out *ot, const struct opts *o, struct rng *rng,
    struct data *dt, const double *init, int threads, struct fit *f,
    double *priors);
/* DP-EM: plan the noise into dp and pl, write every release; priors from
 * the last release's counts. */
void release_classes(struct out *ot, const struct opts *o,
    struct rng *rng, const struct data *dt, const double *init,
    int threads, struct dpem_params *dp, struct dpem_plan *pl,
    double *priors);
/* The ledger entry of the DP-EM release, into the stream metadata m. */
void record_release(struct ts_meta *m, struct rng *rng, const char *dataset,
    const struct dpem_params *p, const struct dpem_plan *pl);

/* sample.c */
/* gmm-fit sample: argv[0] is "sample".  @return the exit status. */
int sample_main(int argc, char **argv);

#endif
