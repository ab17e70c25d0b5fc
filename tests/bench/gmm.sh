#!/usr/bin/env bash
# gmm.sh SCRATCHDIR: seconds per EM iteration of gmm-fit (K = 10 full
# covariances) on Fashion-MNIST's 60000 training images reduced to 50
# dimensions, against scikit-learn's GaussianMixture in the same run (run
# by tests/bench/run as `bash tests/bench/gmm.sh SCRATCHDIR`).
#
# The reduction is a PCA computed by numpy (the top 50 right singular
# vectors of the centred images).  gmm-fit's figure is its own timing of
# the EM loop (-v: E-step, statistics and M-step; reading the input and
# the k-means++ start excluded); scikit-learn's is the same loop body,
# _e_step then _m_step, timed after fit() has initialised the model, so
# its k-means initialisation is excluded too.  Best of 3 runs each.
#
# Both are measured at each thread count of GMM_BENCH_THREADS (default
# "1 2"), set as OPENBLAS_NUM_THREADS: gmm-fit splits its passes into
# row blocks over that many threads, numpy's BLAS calls use that many.
# GMM_BIN names another build's bin directory to time instead (the
# before/after comparisons of an optimisation).
# Not a test: nothing here asserts a time.
set -euo pipefail
cd "$(dirname "$0")/../.."
W=${1:?usage: gmm.sh SCRATCHDIR}
B=build/bin
G=${GMM_BIN:-$B}
PY=/usr/bin/python3
F=/usr/share/datasets/fashion-mnist
ITERS=${GMM_BENCH_ITERS:-10}
export LC_ALL=C

echo "== gmm-fit: Fashion-MNIST 60000 x 50 (PCA), K=10 full"
$B/featurize -q --format idx --dataset fmnist "$F/train-images-idx3-ubyte.gz" > "$W/gmm-fm.tns"
$B/tns to-npy --tensor X -o "$W/gmm-fm.npy" "$W/gmm-fm.tns"
$PY - "$W/gmm-fm.npy" "$W/gmm-fm50.npy" <<'PYEOF'
import sys
import numpy as np
X = np.load(sys.argv[1]).astype(np.float64)
X -= X.mean(0)
_, _, Vt = np.linalg.svd(X, full_matrices=False)
np.save(sys.argv[2], X @ Vt[:50].T)
PYEOF
$B/tns from-npy --name X -o "$W/gmm-fm50.tns" "$W/gmm-fm50.npy"
rm -f "$W/gmm-fm.tns" "$W/gmm-fm.npy"

for th in ${GMM_BENCH_THREADS:-1 2}; do
	export OPENBLAS_NUM_THREADS=$th
	best=999999
	for _ in 1 2 3; do
		$G/gmm-fit -q -v --sigma 0 -k 10 --iters "$ITERS" -S 1 --dataset fmnist \
			-o "$W/gmm-model.tns" "$W/gmm-fm50.tns" 2> "$W/gmm-err"
		t=$(sed -n 's/.* \([0-9.]*\) s per iteration$/\1/p' "$W/gmm-err")
		best=$(awk -v a="$t" -v m="$best" 'BEGIN { print (a < m ? a : m) }')
	done
	ll=$(sed -n 's/.*log-likelihood \([-0-9.e]*\), BIC.*/\1/p' "$W/gmm-err")

	read -r t_sk ll_sk < <($PY - "$W/gmm-fm50.npy" "$ITERS" <<'PYEOF'
import sys, time, warnings
import numpy as np
from sklearn.mixture import GaussianMixture
warnings.simplefilter("ignore")
X = np.load(sys.argv[1])
iters = int(sys.argv[2])
gm = GaussianMixture(10, covariance_type="full", max_iter=1,
                     init_params="k-means++", random_state=1).fit(X)
best = 1e9
for _ in range(3):
    t = time.perf_counter()
    for _ in range(iters):
        lpn, lr = gm._e_step(X)
        gm._m_step(X, lr)
    best = min(best, (time.perf_counter() - t) / iters)
print(best, gm.score(X))
PYEOF
)
	echo "-- OPENBLAS_NUM_THREADS=$th"
	printf '%-50s %8.4f s\n' "gmm-fit EM iteration (E-step, statistics, M-step)" "$best"
	printf '%-50s %8.4f s\n' "scikit-learn GaussianMixture _e_step + _m_step" "$t_sk"
	printf '%-50s %8.2f\n' "ratio scikit-learn / gmm-fit (aim: 5)" \
		"$(awk -v a="$t_sk" -v b="$best" 'BEGIN { print a / b }')"
	printf '%-50s %8.3f / %.3f\n' "mean log-likelihood after $ITERS iterations" "$ll" "$ll_sk"
done
rm -f "$W/gmm-fm50.npy" "$W/gmm-fm50.tns" "$W/gmm-model.tns" "$W/gmm-err"
