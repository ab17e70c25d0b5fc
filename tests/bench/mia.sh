#!/usr/bin/env bash
# mia-eval on Fashion-MNIST (784 features): a logistic regression, members
# = the 60,000 training rows, non-members = the 10,000 test rows, the loss
# attack; next to numpy + sklearn doing the same in the same run (forward
# pass, log-softmax, roc_auc_score, the best threshold by a sorted sweep,
# the two-fold estimate, per class).  Wall-clock times of whole processes,
# best of 3; numpy reads .npy files (no decompression), mia-eval zstd
# tensor streams.  Called by tests/bench/run as `bash tests/bench/mia.sh
# SCRATCHDIR`.  Not a test: nothing asserts a time.
set -euo pipefail
cd "$(dirname "$0")/../.."
W=${1:?usage: mia.sh SCRATCHDIR}/mia
B=build/bin
PY=/usr/bin/python3
FM=/usr/share/datasets/fashion-mnist
export OPENBLAS_NUM_THREADS=1 LC_ALL=C
mkdir -p "$W"

best3() {	# best3 CMD: the smallest wall seconds of three bash -c runs
	local best=999999 t0 t1
	for _ in 1 2 3; do
		t0=$(date +%s.%N)
		bash -c "$1" > /dev/null
		t1=$(date +%s.%N)
		best=$(awk -v a="$t0" -v b="$t1" -v m="$best" 'BEGIN { d = b - a; print (d < m ? d : m) }')
	done
	echo "$best"
}

echo "== mia-eval --attack loss, 60,000 members and 10,000 non-members, 784 features"
$B/featurize -q --dataset fmnist --labels $FM/train-labels-idx1-ubyte.gz -o "$W/train.tns" $FM/train-images-idx3-ubyte.gz
$B/featurize -q --dataset fmnist_test --labels $FM/t10k-labels-idx1-ubyte.gz -o "$W/test.tns" $FM/t10k-images-idx3-ubyte.gz
$B/dpsgd-train -q --no-dp -S 1 --classes 10 --epochs 2 --batch 256 --lr 0.5 -o "$W/m.tns" "$W/train.tns" 2> /dev/null
for s in train test; do
	$B/tns to-npy -q --tensor X -o "$W/$s.X.npy" "$W/$s.tns"
	$B/tns to-npy -q --tensor y -o "$W/$s.y.npy" "$W/$s.tns"
done
$B/tns to-npy -q --tensor model/fc1/W -o "$W/W.npy" "$W/m.tns"
$B/tns to-npy -q --tensor model/fc1/b -o "$W/b.npy" "$W/m.tns"
cat > "$W/base.py" <<'PYEOF'
import sys
import numpy as np
from scipy.special import logsumexp
from sklearn.metrics import roc_auc_score
w = sys.argv[1]
W, b = np.load(w + "/W.npy").astype(np.float64), np.load(w + "/b.npy").astype(np.float64)
def score(s):
    X, y = np.load(w + "/%s.X.npy" % s), np.load(w + "/%s.y.npy" % s)
    Z = X.astype(np.float64) @ W + b
    return Z[np.arange(len(y)), y] - logsumexp(Z, axis=1), y
def best(m, s):
    o = np.argsort(-s, kind="stable")
    tp, fp = np.cumsum(m[o]), np.cumsum(~m[o])
    last = np.r_[s[o][1:] != s[o][:-1], True]
    a = (tp / m.sum() + 1 - fp / (~m).sum()) / 2
    i = np.argmax(np.where(last, a, 0))
    return a[i], s[o][i]
def bacc(m, s, t):
    return ((s[m] >= t).mean() + (s[~m] < t).mean()) / 2
si, yi = score("train")
so, yo = score("test")
s = np.r_[si, so]; m = np.r_[np.ones(len(si), bool), np.zeros(len(so), bool)]
y = np.r_[yi, yo]; idx = np.r_[np.arange(len(si)), np.arange(len(so))]
for c in [None] + list(range(10)):
    sel = np.ones(len(s), bool) if c is None else y == c
    mm, ss, ii = m[sel], s[sel], idx[sel]
    auc = roc_auc_score(mm, ss)
    a, t = best(mm, ss)
    h = []
    for f in (0, 1):
        A, B = ii % 2 == f, ii % 2 != f
        h.append(bacc(mm[B], ss[B], best(mm[A], ss[A])[1]))
    print(c, auc, a, np.mean(h), bacc(mm, ss, ss[mm].mean()))
PYEOF
t_mia=$(best3 "$B/mia-eval --model $W/m.tns --members $W/train.tns --nonmembers $W/test.tns --report-format tsv")
t_np=$(best3 "$PY $W/base.py $W")
# The two must agree: the AUC of all rows.
a1=$($B/mia-eval --model "$W/m.tns" --members "$W/train.tns" --nonmembers "$W/test.tns" --report-format tsv | awk -F '\t' '$2 == "all" { print $7 }')
a2=$($PY "$W/base.py" "$W" | awk '$1 == "None" { printf "%.6g", $2 }')
printf '%-44s %8.2f s  (AUC %s)\n' "mia-eval" "$t_mia" "$a1"
printf '%-44s %8.2f s  (AUC %s)\n' "baseline: numpy + sklearn" "$t_np" "$a2"
printf '%-44s %8s\n' "ratio mia-eval / baseline (speed-up)" "$(awk -v a="$t_np" -v b="$t_mia" 'BEGIN { printf "%.2f", a / b }')"
rm -rf "$W"
