/* model.c: a dense classifier and its tensor-stream form (see model.h). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static int
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int
model_init(struct nn_model *m, const size_t *w, size_t nlayers)
{
	size_t end;
	int rc;

	memset(m, 0, sizeof *m);
	if ((rc = nn_net_init(&m->net, w, nlayers, NN_ACT_IDENTITY, 0,
	    &end)) != 0)
		return rc;
	if (end > SIZE_MAX / sizeof(float) ||
	    (m->param = calloc(end ? end : 1, sizeof(float))) == NULL) {
		memset(m, 0, sizeof *m);
		return NN_E_NOMEM;
	}
	m->nparam = end;
	return 0;
}

int
model_init_cnn(struct nn_model *m, size_t h, size_t w, size_t c,
    const struct nn_spec *sp, size_t n, int act, const float *ts)
{
	size_t end;
	int rc;

	memset(m, 0, sizeof *m);
	if (act != NN_ACT_RELU && act != NN_ACT_TANH &&
	    (act != NN_ACT_TSIG || ts == NULL))
		return NN_E_RANGE;
	if ((rc = nn_net_init_spec(&m->net, h, w, c, sp, n, act,
	    NN_ACT_IDENTITY, 0, &end)) != 0)
		return rc;
	if (act == NN_ACT_TSIG) {
		if ((rc = nn_net_set_tsig(&m->net, ts[0], ts[1], ts[2])) != 0)
			return rc;
		memcpy(m->ts, ts, sizeof m->ts);
	}
	if (end > SIZE_MAX / sizeof(float) ||
	    (m->param = calloc(end ? end : 1, sizeof(float))) == NULL) {
		memset(m, 0, sizeof *m);
		return NN_E_NOMEM;
	}
	m->nparam = end;
	m->cnn = 1;
	m->h = h;
	m->w = w;
	m->c = c;
	m->act = act;
	return 0;
}

/* A decimal number of at most CONV_MAX_DIM (or NN_MAX_WIDTH) at *p. */
static int
number(const char **p, size_t max, size_t *v)
{
	size_t x = 0;
	const char *s = *p;

	while (*s >= '0' && *s <= '9') {
		x = x * 10 + (size_t)(*s - '0');
		if (x > max)
			return -1;
		s++;
	}
	if (s == *p)
		return -1;
	*p = s;
	*v = x;
	return 0;
}

int
model_parse_shape(const char *s, size_t *h, size_t *w, size_t *c, char *err,
    size_t errlen)
{
	const char *p = s;

	if (number(&p, CONV_MAX_DIM, h) != 0 || *p++ != 'x' ||
	    number(&p, CONV_MAX_DIM, w) != 0 || *p++ != 'x' ||
	    number(&p, CONV_MAX_DIM, c) != 0 || *p != '\0' || *h == 0 ||
	    *w == 0 || *c == 0)
		return fail(err, errlen, "'%.64s': expected HxWxC, three "
		    "integers from 1 to %d", s, CONV_MAX_DIM);
	return 0;
}

int
model_parse_layers(const char *s, struct nn_spec *sp, size_t *n, char *err,
    size_t errlen)
{
	const char *p = s;
	size_t k = 0;

	for (;;) {
		struct nn_spec x = { 0, 0, 0, 1, 0 };
		const char *item = p;
		int kind = *p++, bad = 0;

		if (k >= NN_MAX_LAYERS)
			return fail(err, errlen, "'%.64s': more than %d layers",
			    s, NN_MAX_LAYERS);
		if (kind == 'c') {
			x.kind = NN_CONV;
			bad = number(&p, CONV_MAX_DIM, &x.out) != 0 ||
			    *p++ != 'k' || number(&p, CONV_MAX_DIM, &x.k) != 0;
			if (!bad && *p == 's') {
				p++;
				bad = number(&p, CONV_MAX_DIM, &x.s) != 0;
			}
			if (!bad && *p == 'p') {
				p++;
				bad = number(&p, CONV_MAX_DIM, &x.p) != 0;
			}
			bad = bad || x.out == 0 || x.k == 0 || x.s == 0 ||
			    x.p >= x.k;
		} else if (kind == 'a' || kind == 'm') {
			x.kind = kind == 'a' ? NN_AVGPOOL : NN_MAXPOOL;
			bad = number(&p, CONV_MAX_DIM, &x.k) != 0 || x.k == 0;
			x.s = x.k;
			if (!bad && *p == 's') {
				p++;
				bad = number(&p, CONV_MAX_DIM, &x.s) != 0 ||
				    x.s == 0;
			}
		} else if (kind == 'g') {
			x.kind = NN_GROUPNORM;
			bad = number(&p, CONV_MAX_DIM, &x.out) != 0 ||
			    x.out == 0;
		} else if (kind == 'd') {
			x.kind = NN_DENSE;
			bad = number(&p, NN_MAX_WIDTH, &x.out) != 0 ||
			    x.out == 0;
		} else {
			bad = 1;
		}
		if (bad || (*p != ',' && *p != '\0'))
			return fail(err, errlen, "'%.64s': bad layer '%.*s': "
			    "expected c<N>k<K>[s<S>][p<P>] (P < K), a<K>[s<S>], "
			    "m<K>[s<S>], g<G> or d<N>, positive, separated by ','", s,
			    (int)(strcspn(item, ",") < 32 ? strcspn(item, ",") :
			    32), item);
		sp[k++] = x;
		if (*p == '\0')
			break;
		p++;
	}
	*n = k;
	return 0;
}

const char *
model_layer_name(const struct nn_layer *L)
{
	return L->kind == NN_CONV ? "conv" : L->kind == NN_GROUPNORM ? "gn" :
	    "fc";
}

/* The layers of m as model_parse_layers reads them. */
static void
cnn_arch(const struct nn_model *m, char *buf, size_t len)
{
	size_t k = (size_t)snprintf(buf, len, "cnn:%zux%zux%zu:", m->h, m->w,
	    m->c);

	for (size_t l = 0; l < m->net.nlayers && k < len; l++) {
		const struct nn_layer *L = &m->net.layer[l];
		const char *sep = l ? "," : "";

		if (L->kind == NN_CONV)
			k += (size_t)snprintf(buf + k, len - k,
			    "%sc%zuk%zus%zup%zu", sep, L->g.co, L->g.k,
			    L->g.s, L->g.p);
		else if (L->kind == NN_DENSE)
			k += (size_t)snprintf(buf + k, len - k, "%sd%zu", sep,
			    L->out);
		else if (L->kind == NN_GROUPNORM)
			k += (size_t)snprintf(buf + k, len - k, "%sg%zu", sep,
			    L->g.k);
		else
			k += (size_t)snprintf(buf + k, len - k, "%s%c%zus%zu",
			    sep, L->kind == NN_AVGPOOL ? 'a' : 'm', L->g.k,
			    L->g.s);
	}
}

void
model_free(struct nn_model *m)
{
	if (m == NULL)
		return;
	free(m->param);
	memset(m, 0, sizeof *m);
}

size_t
model_inputs(const struct nn_model *m)
{
	return m->net.layer[0].in;
}

size_t
model_classes(const struct nn_model *m)
{
	return m->net.layer[m->net.nlayers - 1].out;
}

void
model_arch(const struct nn_model *m, char *buf, size_t len)
{
	size_t k;

	if (m->cnn) {
		cnn_arch(m, buf, len);
		return;
	}
	k = (size_t)snprintf(buf, len, "%s:%zu", m->net.nlayers == 1 ?
	    "logreg" : "mlp", m->net.layer[0].in);
	for (size_t l = 0; l < m->net.nlayers && k < len; l++)
		k += (size_t)snprintf(buf + k, len - k, "-%zu",
		    m->net.layer[l].out);
}

int
model_parse_arch(const char *s, size_t *w, size_t *nlayers, char *err,
    size_t errlen)
{
	const char *p;
	size_t n = 0;
	int logreg;

	if (strncmp(s, "mlp:", 4) == 0) {
		logreg = 0;
		p = s + 4;
	} else if (strncmp(s, "logreg:", 7) == 0) {
		logreg = 1;
		p = s + 7;
	} else {
		return fail(err, errlen, "model.arch '%.64s': expected "
		    "'mlp:' or 'logreg:' and widths", s);
	}
	for (;;) {
		unsigned long long v = 0;
		const char *start = p;

		while (*p >= '0' && *p <= '9') {
			v = v * 10 + (unsigned long long)(*p - '0');
			if (v > NN_MAX_WIDTH)
				break;
			p++;
		}
		if (p == start || v == 0 || v > NN_MAX_WIDTH)
			return fail(err, errlen, "model.arch '%.64s': widths "
			    "must be integers from 1 to %u", s, NN_MAX_WIDTH);
		if (n > NN_MAX_LAYERS)
			return fail(err, errlen, "model.arch '%.64s': more "
			    "than %d layers", s, NN_MAX_LAYERS);
		w[n++] = (size_t)v;
		if (*p == '\0')
			break;
		if (*p++ != '-')
			return fail(err, errlen, "model.arch '%.64s': widths "
			    "are separated by '-'", s);
	}
	if (n < 2 || (logreg && n != 2))
		return fail(err, errlen, "model.arch '%.64s': %s", s, logreg ?
		    "logreg has exactly two widths" : "at least two widths");
	*nlayers = n - 1;
	return 0;
}

int
model_parse_act(const char *s, int *act, float *ts, char *err,
    size_t errlen)
{
	const char *p = s + 9;

	if (strcmp(s, "relu") == 0 || strcmp(s, "tanh") == 0) {
		*act = s[0] == 'r' ? NN_ACT_RELU : NN_ACT_TANH;
		return 0;
	}
	if (strncmp(s, "tsigmoid:", 9) != 0)
		return fail(err, errlen, "'%.64s': relu, tanh or "
		    "tsigmoid:S:T:O", s);
	for (int k = 0; k < 3; k++) {
		char *q;
		double v;

		errno = 0;
		v = strtod(p, &q);
		if (q == p || errno != 0 || *q != (k < 2 ? ':' : '\0') ||
		    !(k < 2 ? v > 0 && v <= NN_TSIG_MAX : fabs(v) <=
		    NN_TSIG_MAX) || strchr("+-.0123456789", *p) == NULL)
			return fail(err, errlen, "'%.64s': tsigmoid:S:T:O "
			    "takes decimal S and T in (0, %g] and O in [-%g, "
			    "%g] (the tempered sigmoid S sigmoid(T x) - O)",
			    s, NN_TSIG_MAX, NN_TSIG_MAX, NN_TSIG_MAX);
		ts[k] = (float)v;
		p = q + 1;
	}
	if (!(ts[0] > 0 && ts[1] > 0))		/* below the least float */
		return fail(err, errlen, "'%.64s': S and T round to 0", s);
	*act = NN_ACT_TSIG;
	return 0;
}

void
model_act_str(const struct nn_model *m, char *buf, size_t len)
{
	if (m->cnn && m->act == NN_ACT_TSIG)
		snprintf(buf, len, "tsigmoid:%.9g:%.9g:%.9g", (double)m->ts[0],
		    (double)m->ts[1], (double)m->ts[2]);
	else
		snprintf(buf, len, "%s", m->cnn && m->act == NN_ACT_TANH ?
		    "tanh" : "relu");
}

int
model_put_meta(const struct nn_model *m, struct ts_meta *meta)
{
	char arch[MODEL_MAX_ARCH], act[MODEL_MAX_ACT];

	model_arch(m, arch, sizeof arch);
	model_act_str(m, act, sizeof act);
	if (ts_meta_set(meta, "model.arch", arch) != 0 ||
	    ts_meta_set(meta, "model.activation", act) != 0 ||
	    ts_meta_setf(meta, "model.classes", "%zu", model_classes(m)) != 0)
		return -1;
	return 0;
}

/* A header for a parameter tensor of 1 or 2 dims pointing at data. */
static int
param_tensor(struct tensor *t, const char *name, size_t d0, size_t d1,
    float *data)
{
	uint64_t dims[2] = { d0, d1 };

	if (tensor_init(t, name, TS_F32, d1 ? 2 : 1, dims) != 0)
		return TS_E_USAGE;
	t->data = data;
	return 0;
}

int
model_write_net(struct ts_writer *w, const struct nn_net *net,
    const float *param, const char *prefix)
{
	for (size_t l = 0; l < net->nlayers; l++) {
		const struct nn_layer *L = &net->layer[l];
		/* The writer only reads the data (tensor.data is not const). */
		float *W = (float *)(param + L->off);
		struct tensor t;
		char name[96];
		int rc;

		size_t r, c;
		const char *kind = model_layer_name(L);

		if (strlen(prefix) > 48)
			return TS_E_USAGE;
		nn_layer_wdims(L, &r, &c);
		if (r == 0)		/* a pool */
			continue;
		snprintf(name, sizeof name, "%s/%s%zu/W", prefix, kind, l + 1);
		if ((rc = param_tensor(&t, name, r, c, W)) != 0 ||
		    (rc = ts_write_tensor(w, &t)) != 0)
			return rc;
		snprintf(name, sizeof name, "%s/%s%zu/b", prefix, kind, l + 1);
		if ((rc = param_tensor(&t, name, c, 0, W + r * c)) != 0 ||
		    (rc = ts_write_tensor(w, &t)) != 0)
			return rc;
	}
	return 0;
}

int
model_write(struct ts_writer *w, const struct nn_model *m)
{
	return model_write_net(w, &m->net, m->param, "model");
}

/* The tensor named name among t[0..nt-1], or NULL. */
static const struct tensor *
find(const struct tensor *t, size_t nt, const char *name)
{
	for (size_t i = 0; i < nt; i++)
		if (strcmp(t[i].name, name) == 0)
			return &t[i];
	return NULL;
}

/* Check one parameter tensor and copy it to dst. */
static int
take(const struct tensor *t, size_t nt, const char *name, size_t d0,
    size_t d1, float *dst, char *err, size_t errlen)
{
	const struct tensor *x = find(t, nt, name);
	int ndim = d1 ? 2 : 1;

	if (x == NULL)
		return fail(err, errlen, "tensor '%s' is missing", name);
	if (x->dtype != TS_F32)
		return fail(err, errlen, "tensor '%s': dtype %s, expected f32",
		    name, ts_dtype_name(x->dtype) ? ts_dtype_name(x->dtype) :
		    "?");
	if (x->ndim != ndim || x->dims[0] != d0 || (d1 && x->dims[1] != d1))
	{
		char want[64];

		if (d1)
			snprintf(want, sizeof want, "(%zu, %zu)", d0, d1);
		else
			snprintf(want, sizeof want, "(%zu,)", d0);
		return fail(err, errlen, "tensor '%s': shape does not match "
		    "model.arch (expected %s)", name, want);
	}
	memcpy(dst, x->data, d0 * (d1 ? d1 : 1) * sizeof *dst);
	/* A NaN or infinite parameter makes every score it touches NaN or
	 * infinite: no tool may train on, apply or release such a model. */
	for (size_t i = 0; i < d0 * (d1 ? d1 : 1); i++)
		if (!isfinite(dst[i]))
			return fail(err, errlen, "tensor '%s': parameter %zu is "
			    "not finite", name, i);
	return 0;
}

/* model_read of a "cnn:" model.arch. */
static int
read_cnn(struct nn_model *m, const struct ts_meta *meta, const char *arch,
    const struct tensor *t, size_t nt, char *err, size_t errlen)
{
	struct nn_spec sp[NN_MAX_LAYERS];
	char shape[64], name[64];
	const char *v = ts_meta_get(meta, "model.activation"), *colon;
	size_t h, w, c, n, len;
	int act = NN_ACT_RELU, rc;
	float ts[3];
	char aerr[256];

	colon = strchr(arch + 4, ':');
	len = colon ? (size_t)(colon - arch - 4) : 0;
	if (colon == NULL || len >= sizeof shape)
		return fail(err, errlen, "model.arch '%.64s': expected "
		    "'cnn:HxWxC:' and layers", arch);
	memcpy(shape, arch + 4, len);
	shape[len] = '\0';
	if (model_parse_shape(shape, &h, &w, &c, err, errlen) != 0 ||
	    model_parse_layers(colon + 1, sp, &n, err, errlen) != 0)
		return -1;
	if (v != NULL && model_parse_act(v, &act, ts, aerr, sizeof aerr) != 0)
		return fail(err, errlen, "model.activation %s", aerr);
	if ((v = ts_meta_get(meta, "model.classes")) != NULL) {
		char buf[32];

		snprintf(buf, sizeof buf, "%zu", sp[n - 1].out);
		if (strcmp(v, buf) != 0)
			return fail(err, errlen, "model.classes '%.64s' "
			    "disagrees with model.arch '%.64s'", v, arch);
	}
	if ((rc = model_init_cnn(m, h, w, c, sp, n, act, ts)) != 0)
		return fail(err, errlen, "%s", rc == NN_E_NOMEM ?
		    "out of memory" : "model.arch: the layers do not fit the "
		    "input shape");
	for (size_t l = 0; l < n; l++) {
		const struct nn_layer *L = &m->net.layer[l];
		const char *kind = model_layer_name(L);
		float *W = m->param + L->off;
		size_t r, q;

		nn_layer_wdims(L, &r, &q);
		if (r == 0)
			continue;
		snprintf(name, sizeof name, "model/%s%zu/W", kind, l + 1);
		if (take(t, nt, name, r, q, W, err, errlen) != 0)
			goto bad;
		snprintf(name, sizeof name, "model/%s%zu/b", kind, l + 1);
		if (take(t, nt, name, q, 0, W + r * q, err, errlen) != 0)
			goto bad;
	}
	return 0;
bad:
	model_free(m);
	return -1;
}

int
model_read(struct nn_model *m, const struct ts_meta *meta,
    const struct tensor *t, size_t nt, char *err, size_t errlen)
{
	size_t w[NN_MAX_LAYERS + 2], nl;
	const char *arch = ts_meta_get(meta, "model.arch"), *v;
	char name[64];
	int rc;

	memset(m, 0, sizeof *m);
	if (arch == NULL)
		return fail(err, errlen, "no model.arch key: not a model "
		    "stream");
	if (strncmp(arch, "cnn:", 4) == 0)
		return read_cnn(m, meta, arch, t, nt, err, errlen);
	if (model_parse_arch(arch, w, &nl, err, errlen) != 0)
		return -1;
	if ((v = ts_meta_get(meta, "model.activation")) != NULL &&
	    strcmp(v, "relu") != 0)
		return fail(err, errlen, "model.activation '%.64s': only relu "
		    "is supported", v);
	if ((v = ts_meta_get(meta, "model.classes")) != NULL) {
		char buf[32];

		snprintf(buf, sizeof buf, "%zu", w[nl]);
		if (strcmp(v, buf) != 0)
			return fail(err, errlen, "model.classes '%.64s' "
			    "disagrees with model.arch '%.64s'", v, arch);
	}
	if ((rc = model_init(m, w, nl)) != 0)
		return fail(err, errlen, "%s", rc == NN_E_NOMEM ?
		    "out of memory" : "model.arch: bad widths");
	for (size_t l = 0; l < nl; l++) {
		const struct nn_layer *L = &m->net.layer[l];
		float *W = m->param + L->off;

		snprintf(name, sizeof name, "model/fc%zu/W", l + 1);
		if (take(t, nt, name, L->in, L->out, W, err, errlen) != 0)
			goto bad;
		snprintf(name, sizeof name, "model/fc%zu/b", l + 1);
		if (take(t, nt, name, L->out, 0, W + L->in * L->out, err,
		    errlen) != 0)
			goto bad;
	}
	/* A layer beyond model.arch means the stream is inconsistent. */
	for (size_t i = 0; i < nt; i++) {
		unsigned long long k;
		char tail[8];

		if (sscanf(t[i].name, "model/fc%llu/%7s", &k, tail) == 2 &&
		    (k == 0 || k > nl)) {
			fail(err, errlen, "tensor '%s' is not a layer of "
			    "model.arch '%.64s'", t[i].name, arch);
			goto bad;
		}
	}
	return 0;
bad:
	model_free(m);
	return -1;
}
