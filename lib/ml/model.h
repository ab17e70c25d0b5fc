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
 * A convolutional model (model_init_cnn) has
 *   model.arch        "cnn:28x28x1:c16k8s2p3,m2s2,c32k4s2p0,m2s2,d32,d10": the
 *                     input shape H x W x C (channel last, conv.h), then its
 *                     layers: c<N>k<K>s<S>p<P> a convolution of N channels,
 *                     kernel K, stride S, padding P; a<K>s<S> and m<K>s<S>
 *                     average and max pooling of K x K windows at stride S
 *                     (S defaults to K in --arch); g<G> a group
 *                     normalisation of G groups (per example); d<N> a
 *                     dense layer of N units (the input flattened as
 *                     stored); the last is d<classes>
 *   model.activation  "relu", "tanh" or "tsigmoid:S:T:O" (the tempered
 *                     sigmoid S sigmoid(T x) - O, S and T > 0; floats
 *                     with 9 significant digits), after every conv and
 *                     dense layer but the last
 * and for layer k (1-based, pools counted) a convolution's
 *   model/conv<k>/W f32 [K K C_in, N] (row (ky K + kx) C_in + c_in)
 *   model/conv<k>/b f32 [N]
 * a group normalisation's model/gn<k>/W f32 [1, C] (gamma) and
 * model/gn<k>/b f32 [C] (beta), or a dense layer's model/fc<k>/W and /b
 * as above.
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
	int cnn;			/* built by model_init_cnn */
	size_t h, w, c;			/* its input shape */
	int act;			/* its hidden activation (enum nn_act) */
	float ts[3];			/* NN_ACT_TSIG: s, T, o */
};

/* A model of nlayers layers of widths w[0..nlayers] with zeroed
 * parameters.  @return 0, NN_E_RANGE (bad widths) or NN_E_NOMEM. */
int model_init(struct nn_model *m, const size_t *w, size_t nlayers);
void model_free(struct nn_model *m);

/* A model of image and dense layers (nn_net_init_spec) on inputs h x w x
 * c, hidden activation act (NN_ACT_RELU, NN_ACT_TANH or NN_ACT_TSIG:
 * then ts, s T o, as nn_net_set_tsig takes them, else NULL), with zeroed
 * parameters; its model.arch is "cnn:".  @return 0, NN_E_RANGE or
 * NN_E_NOMEM. */
int model_init_cnn(struct nn_model *m, size_t h, size_t w, size_t c,
    const struct nn_spec *sp, size_t n, int act, const float *ts);

/* Parse a hidden activation: "relu", "tanh" or "tsigmoid:S:T:O" (the
 * tempered sigmoid S sigmoid(T x) - O; S and T in (0, NN_TSIG_MAX], O in
 * [-NN_TSIG_MAX, NN_TSIG_MAX], decimal, kept as floats) into *act and ts
 * (3 floats, set for tsigmoid).  @return 0 or -1 with a message. */
int model_parse_act(const char *s, int *act, float *ts, char *err,
    size_t errlen);
/* Format m's activation as model_parse_act reads it (MODEL_MAX_ACT bytes
 * suffice; floats printed with 9 significant digits, which read back
 * exactly). */
#define MODEL_MAX_ACT 64
void model_act_str(const struct nn_model *m, char *buf, size_t len);

/* "conv", "gn" or "fc": the name of layer L's tensors. */
const char *model_layer_name(const struct nn_layer *L);

/* Parse layers "c16k8s2p3,m2,a2,g4,d32" (conv.h, model.arch "cnn:" below)
 * into sp (NN_MAX_LAYERS entries) and *n; an input shape "28x28x1" into
 * *h, *w, *c.  @return 0 or -1 with a message naming the item. */
int model_parse_layers(const char *s, struct nn_spec *sp, size_t *n,
    char *err, size_t errlen);
int model_parse_shape(const char *s, size_t *h, size_t *w, size_t *c,
    char *err, size_t errlen);

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
