/*
 * model.h: a dense classifier and its tensor-stream form.
 *
 * A model is a chain of L dense layers (lib/ml/nn.h: ReLU between layers,
 * logits out) with its flat f32 parameter vector.  In a stream
 * (formats/tensor-stream.md) it is, in this order, the tensors
 *   model/fc<k>/W   f32 [in, out]   (k = 1..L, row-major, x W + b)
 *   model/fc<k>/b   f32 [out]
 * and the stream metadata keys
 *   model.arch        "mlp:784-256-10": the widths from input to classes
 *                     ("logreg:784-10" when L = 1)
 *   model.activation  "relu" (between layers; none after the last)
 *   model.classes     the number of classes, the last width.
 * Other tensors (heads of other tools, such as a domain classifier) are
 * left to their tools (model_write_net writes them in the same form):
 * model_read ignores names outside model/fc<k>/.
 *
 * Ownership: a struct nn_model owns its parameter vector (model_free
 * accepts a zeroed model).  Nothing here prints, exits or reads the
 * environment.  Errors: model_read and model_parse_arch return -1 with a
 * message in err; model_write returns a negative TS_E* code (the
 * writer's message says more).
 */
#ifndef PRIVADA_MODEL_H
#define PRIVADA_MODEL_H

#include <stddef.h>

#include "nn.h"
#include "tensor.h"
#include "tstream.h"

#define MODEL_MAX_ARCH 1024		/* bytes of a model.arch value */

struct nn_model {
	struct nn_net net;
	size_t nparam;
	float *param;
};

/* A model of nlayers layers of widths w[0..nlayers] with zeroed
 * parameters.  @return 0, NN_E_RANGE (bad widths) or NN_E_NOMEM. */
int model_init(struct nn_model *m, const size_t *w, size_t nlayers);
void model_free(struct nn_model *m);

/* Input width and number of classes. */
size_t model_inputs(const struct nn_model *m);
size_t model_classes(const struct nn_model *m);

/* Format the model.arch value into buf (MODEL_MAX_ARCH bytes suffice). */
void model_arch(const struct nn_model *m, char *buf, size_t len);
/* Parse a model.arch value: "mlp:" or "logreg:" then at least two
 * decimal widths in [1, NN_MAX_WIDTH] separated by '-' (exactly two for
 * logreg), at most NN_MAX_LAYERS + 1.  w receives the widths and *nlayers
 * their count minus one.  @return 0 or -1 with a message. */
int model_parse_arch(const char *s, size_t *w, size_t *nlayers, char *err,
    size_t errlen);

/* Set model.arch, model.activation and model.classes in meta.
 * @return 0 or -1 (out of memory). */
int model_put_meta(const struct nn_model *m, struct ts_meta *meta);

/* Write the tensors model/fc<k>/W and model/fc<k>/b.
 * @return 0 or a negative TS_E* code. */
int model_write(struct ts_writer *w, const struct nn_model *m);
/* Write the layers of any net with parameters in param as tensors
 * <prefix>/fc<k>/W and <prefix>/fc<k>/b (k = 1..nlayers), in the form of
 * model_write (which is this with prefix "model"); a prefix is at most 48
 * bytes.  @return 0 or a negative TS_E* code. */
int model_write_net(struct ts_writer *w, const struct nn_net *net,
    const float *param, const char *prefix);

/* Build *m from the stream metadata meta and the nt tensors t (as
 * ts_read_all returns them): model.arch gives the shape, the tensors
 * must all be present with dtype f32, the shapes it implies and finite
 * values, and model.classes and model.activation, when present, must
 * agree.
 * @return 0, or -1 with a message naming the key or tensor (m zeroed). */
int model_read(struct nn_model *m, const struct ts_meta *meta,
    const struct tensor *t, size_t nt, char *err, size_t errlen);

#endif
