/*
 * modelcli.h: tool helpers for the streams a model is applied to (like
 * cli.h, these print and exit on error): reading a model stream, the
 * labels y, and the rows X in blocks as f32.  Used by predict, mia-eval,
 * kde-publish and dpsgd-train.
 */
#ifndef PRIVADA_MODELCLI_H
#define PRIVADA_MODELCLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model.h"
#include "tensor.h"
#include "tstream.h"

/* Read the model stream path ("-" or NULL: stdin) into m.  With meta,
 * its metadata is merged in; with digest, the stream's digest is stored;
 * *label receives the name errors use.  Exit 65 on a stream that is not
 * a model. */
void mcli_read_model(const char *path, struct nn_model *m,
    struct ts_meta *meta, uint64_t *digest, const char **label);

/* As mcli_read_model, from fp opened by the caller (cli_open_in, with
 * label): closed here. */
void mcli_read_model_fp(FILE *fp, const char *label, struct nn_model *m,
    struct ts_meta *meta, uint64_t *digest);

/* The labels tensor hdr (i32, i64 or u8 of one dimension), read whole as
 * int64 values into a new array of *n.  Exit 65 on another shape. */
int64_t *mcli_read_labels(struct ts_reader *r, struct tensor *hdr,
    const char *label, size_t *n);

/* Check that hdr is X for a model of d inputs: f32 or f64 of 2
 * dimensions, d columns.  Exit 65 otherwise. */
void mcli_check_x(const struct tensor *hdr, size_t d, const char *label);

/* The next block of at most rows rows of X (checked by mcli_check_x) into
 * xb (rows x d floats), through the f64 scratch *xd when X is f64
 * (allocated on first use; the caller frees it).  @return the rows read,
 * 0 at the end of X; exit on a read error. */
size_t mcli_read_rows(struct ts_reader *r, const struct tensor *hdr,
    float *xb, double **xd, size_t rows, size_t d);

/* A list of hidden widths for option opt (--hidden, --domain-hidden):
 * "256,256", or "" or "none" for none, into w[0..*n) (w holds
 * NN_MAX_LAYERS).  Exit 64 on a bad width or more than NN_MAX_LAYERS - 1
 * of them. */
void mcli_parse_widths(const char *opt, const char *arg, size_t *w,
    size_t *n);

/* The test hook PRIVADA_TEST_CONV_PATH: one letter per convolution of
 * net, in order, forcing its norms and clipped sum to g(host), d(irect)
 * or a(uto, the cost model of nn_conv_ghost); unset or empty: all auto.
 * Both paths are private (lib/ml/nn.c, "Convolutions"); the hook exists
 * so that tests exercise each.  Exit 64 on another letter or count. */
void mcli_conv_paths(struct nn_net *net);

#endif
