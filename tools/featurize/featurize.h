/*
 * featurize.h: the parts of featurize: tools/featurize.c holds the usage,
 * the options and main; under tools/featurize/, out.c writes the rows
 * and labels, scat.c is --scatter (images batched through the
 * scattering transform), run.c reads CSV, IDX and text.  CLI glue: these
 * print and exit like cli.h.
 */
#ifndef PRIVADA_FEATURIZE_H
#define PRIVADA_FEATURIZE_H

#include <stddef.h>
#include <stdint.h>

#include "feat.h"
#include "infile.h"
#include "labcol.h"
#include "ledger.h"
#include "opts.h"
#include "scale.h"
#include "scatter.h"
#include "tstream.h"

#define MAX_FEATURES (UINT64_C(1) << 24)	/* columns of X */
#define MAX_SIDE 4096				/* --resize height and width */
#define MAX_DATASET LEDGER_MAX_NAME		/* bytes in a dataset name */
#define DEFAULT_HASH_DIM 1024
#define PROGRESS_EVERY 4096
#define FEAT_CLIP_MIN 1e-50	/* --clip range, as covest and gmm-fit */
#define FEAT_CLIP_MAX 1e50
#define SCAT_BATCH 256		/* images transformed together */
#define WHERE 600
#define CROP_MARGIN 0		/* --crop-bbox: pixels around the box */

struct opts {
	struct opts_common c;	/* -f -o -q, --level, --dataset */
	struct feat_params p;	/* what feat_check_params checks */
	const char *clip_arg;
	int dtype, header, missing, normalize;
	double scale_lo, scale_hi, clip;
	uint64_t hash_dim, rh, rw;
	int sj, sl;		/* --scatter J:L, or 0 */
	uint64_t ih, iw;	/* --image HxW, or 0 */
	size_t groups;		/* --group-norm G, or 0 */
	int hwc;		/* --layout hwc: rows channel last */
	int threads;		/* --threads N, or 0: the online cores */
	unsigned crop_thr;	/* --crop-bbox=T */
};

/* Everything about the output. */
struct out {
	const struct opts *o;
	struct ts_writer *w;
	size_t d;
	double *row;
	float *frow;
	struct scale sc;	/* --scale, --normalize, --clip, --dtype */
	uint64_t rows, total;
	struct labcol lab;
	const char *map_label;	/* the label map's file name */
	int has_y;
	size_t cap;		/* --scatter: images a batch holds */
	/* --scatter: images are scaled by isc, batched, transformed. */
	struct scatter *st;
	struct scale isc;	/* --scale or --scale-from, on pixels */
	size_t hw, nb;		/* pixels of an image; images batched */
	float *img;		/* SCAT_BATCH x hw */
	double *feat;		/* SCAT_BATCH x d */
	char (*where)[WHERE];
};

/* out.c */
/* An error of a feat reader on s (usage, read or data), then exit. */
__attribute__((noreturn)) void feat_die(struct infile *s, int rc,
    const char *msg);
/* Scale, normalize, clip, convert and write one row. */
void put_row(struct out *ou, const char *where);
/* Put the current row's label: len bytes of s, or with s NULL the
 * integer v.  @return 1 when the row is kept, 0 when it is dropped. */
int put_label(struct out *ou, const char *s, size_t len, int32_t v,
    const char *where);
/* Begin X with d features; meta are X's tensor metadata (moved). */
void begin_x(struct out *ou, size_t d, struct ts_meta *meta);
/* End X, write y (when there are labels) and the closing metadata. */
void finish(struct out *ou, struct infile **inputs, int ninputs,
    const char *what);
/* The column names (names[idx[i]], or names[i]) into m. */
void set_names_meta(struct ts_meta *m, char **names, const size_t *idx,
    size_t d);

/* scat.c */
/* --scatter J[:L] into o. */
void parse_scatter(struct opts *o, const char *arg);
/* Set up the transform of h x w images and its metadata in xm.
 * @return the features of a row. */
size_t scat_begin(struct out *ou, size_t h, size_t w, const char *what,
    struct ts_meta *xm);
/* After begin_x: a row holds an image's pixels, then its features. */
void scat_rows(struct out *ou);
/* Transform, GroupNorm and write the batched images. */
void scat_flush(struct out *ou);
/* A row of the input: an image to batch, or a row to write. */
void take_row(struct out *ou, const char *where);

/* run.c: each reads its input and writes the stream (finish). */
void run_csv(struct out *ou, const struct opts *o, struct infile *in,
    struct infile *pub, struct infile **inputs, int ninputs);
void run_idx(struct out *ou, const struct opts *o, struct infile *in,
    struct infile *lab, struct infile **inputs, int ninputs);
void run_text(struct out *ou, const struct opts *o, struct infile *in,
    struct infile *vsrc, struct infile **inputs, int ninputs);

#endif
