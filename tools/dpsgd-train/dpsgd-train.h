/*
 * dpsgd-train.h: the parts of dpsgd-train: tools/dpsgd-train.c holds the
 * usage, the options and main; under tools/dpsgd-train/, train.c runs
 * DP-SGD (every --mode but ncm), ncm.c runs --mode ncm, norm.c is
 * --normalize dp.  CLI glue: these print and exit like cli.h.
 */
#ifndef PRIVADA_DPSGD_TRAIN_H
#define PRIVADA_DPSGD_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "dpnorm.h"
#include "dpsgd.h"
#include "dpsgdopt.h"
#include "nn.h"
#include "opts.h"
#include "rng.h"
#include "tstream.h"
#include "xycli.h"


enum {
	OPT_ASSUME_RAW = OPTS_FIRST_TOOL, OPT_AUDIT, OPT_BATCH, OPT_BETA1,
	OPT_BETA2, OPT_BETA3, OPT_BETA_ADV, OPT_BETA_IM, OPT_BETA_KD,
	OPT_CLASSES, OPT_CLIP, OPT_DOMAIN_HIDDEN, OPT_EPOCHS, OPT_EXACT,
	OPT_FEATURE_LAYER, OPT_FREEZE, OPT_GRL_MAX, OPT_HIDDEN, OPT_INIT,
	OPT_KD_TEMP, OPT_LR, OPT_NORMALIZE, OPT_SCHEDULE, OPT_MODE, OPT_MOMENTUM,
	OPT_NESTEROV, OPT_NODP, OPT_OPTIMIZER, OPT_PATIENCE, OPT_PROTECT,
	OPT_PUBLIC_RECORDS, OPT_SIGMA, OPT_SOURCE_FEATURES, OPT_TARGET,
	OPT_TARGET_PUBLIC_RECORDS, OPT_UNSAFE, OPT_UNSAFE_HALF, OPT_VAL, OPT_VAL_PUBLIC, OPT_WD,
	OPT_ARCH, OPT_INPUT_SHAPE, OPT_ACTIVATION,
	OPT_TUNE, OPT_TUNE_TRIALS, OPT_VAL_FRACTION, OPT_TUNE_SCORE_SIGMA,
	OPT_TUNE_SPLIT_SEED
};

struct opts {
	struct opts_common c;		/* every shared option */
	struct dpsgd_params p;		/* the trainer's, filled as parsed */
	struct dpsgd_given g;		/* for dpsgd_check_options */
	const char *init, *val, *target;
	const char *src_feat;		/* gmm-uda: --source-features */
	const char *sched_arg;		/* --lr-schedule as given */
	int assume_raw, has_lr;
	int dann;			/* --mode dann */
	int ncm;			/* --mode ncm */
	int unsafe_half;		/* --unsafe-test-half-sensitivity */
	int batch_full;			/* --batch full */
	double norm_sigma, norm_clip;	/* --normalize dp:SIGMA[:C]; 0: none */
	const char *sgd_opt;		/* an option of (DP-)SGD only */
	size_t feature_layer;		/* gmm-uda: 0 = the last hidden */
	size_t classes, freeze, nhidden, ndh;
	size_t hidden[NN_MAX_LAYERS], dh[NN_MAX_LAYERS];
	const char *arch;		/* --arch as given */
	struct nn_spec spec[NN_MAX_LAYERS];	/* its layers */
	size_t nspec;
	size_t shape[3];		/* --input-shape, or 0 */
	int act;			/* --activation (enum nn_act) */
	float ts[3];			/* --activation tsigmoid:S:T:O */
	int has_act;
	const char *tune;		/* --tune GRID, or NULL */
	const char *tune_trials;	/* --tune-trials DIST */
	double val_fraction;		/* --val-fraction F */
	int has_val_fraction;
	double score_sigma;		/* --tune-score-sigma (default 10) */
	uint64_t split_seed;		/* --tune-split-seed (default 0) */
	int has_tune_extra;		/* either of the two above */
	size_t tshape[3];		/* --tune --arch: the input images */
};

/* --arch, --input-shape, --activation: their combinations with the other
 * options (usage errors). */
void arch_check(const struct opts *o);
/* The input shape of the --arch model for the rows of tr: --input-shape,
 * else H x W x C of X's features.shape C,H,W when features.layout is hwc
 * (featurize --scatter --layout hwc; a usage error when channel major),
 * else X's image.height x image.width x 1 when the rows are those
 * pixels.  Exit otherwise. */
void arch_shape(const struct opts *o, const struct xyset *tr,
    size_t *shape);

/* --mode's names, by enum dpsgd_adapt, then "ncm". */
extern const char *const modes[];

/* train.c */
/* dpsgd_setup_model's error: usage, data or system. */
__attribute__((noreturn)) void setup_die(int rc, const char *err);
/* Warn that rows labelled outside --classes are dropped (under privacy). */
void warn_dropped(const struct opts *o, const struct xyset *tr, int dp);
/* Write the f64 tensor name: [rows, len], or [len] when rows is 0. */
void write_f64(struct ts_writer *w, const char *name, const double *v,
    uint64_t rows, size_t len);
/* Every --mode but ncm; t_start is when the tool started.  @return the
 * exit status. */
int run_train(struct opts *o, int argc, char **argv, double t_start);

/* ncm.c */
/* Whether the tool's own option ch goes with --mode ncm. */
int ncm_option(int ch);
/* --mode ncm: the nearest class mean.  @return the exit status. */
int run_ncm(struct opts *o, int argc, char **argv);

/* tune.c */
/* --tune: private hyper-parameter tuning by repeat and select.
 * @return the exit status. */
int run_tune(struct opts *o, int argc, char **argv);

/* norm.c */
/* --normalize dp:SIGMA[:C] into o. */
void parse_normalize(struct opts *o, const char *arg);
/* --normalize: its combinations with the other options. */
void normalize_check(const struct opts *o);
/* Release the DP means and variances of tr's rows and standardise them. */
void normalize_rows(const struct opts *o, struct xyset *tr, struct rng *rng,
    struct dpnorm *nrm, double **mean, double **sd);
/* The normalisation's release entry, into the stream metadata. */
void record_normalize(struct ts_meta *meta, struct rng *rng,
    const struct dpnorm *nrm, size_t d, const char *dataset);

#endif
