/* accuracy.c: the accuracy of a classifier (see accuracy.h). */
#include "accuracy.h"
#include "nn.h"
#include "pverr.h"

int
accuracy_model(const struct nn_model *m, const float *param, float *x,
    const int32_t *y, size_t n, double *out)
{
	struct nn_ws ws;
	size_t K = model_classes(m), d = model_inputs(m), right = 0;

	if (nn_ws_init(&ws, &m->net, ACCURACY_ROWS) != 0)
		return PV_E_NOMEM;
	for (size_t i = 0; i < n; i += ACCURACY_ROWS) {
		size_t nb = n - i < ACCURACY_ROWS ? n - i : ACCURACY_ROWS;
		const float *z;

		nn_forward(&m->net, param, &ws, x + i * d, nb);
		z = ws.a[m->net.nlayers];
		for (size_t r = 0; r < nb; r++) {
			size_t b = 0;
			for (size_t j = 1; j < K; j++)
				if (z[r * K + j] > z[r * K + b])
					b = j;
			right += (int32_t)b == y[i + r];
		}
	}
	nn_ws_free(&ws);
	*out = (double)right / (double)n;
	return 0;
}
