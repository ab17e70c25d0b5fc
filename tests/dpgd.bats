#!/usr/bin/env bats
# dpsgd-train --batch full: full-batch DP gradient descent (q = 1).  No
# subsampling, so no amplification: the ledger must hold T steps of the
# plain Gaussian mechanism, T alpha / (2 sigma^2), which is checked
# against the closed form; rdp-account's total against -e.  A few seconds.

load test_helper

FX="$DATA/ncm"

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	featurize -q --label label --dataset blobs "$FX/train.csv" > tr.tns
}

setup() {
	cd "$BATS_FILE_TMPDIR"
}

# entry FILE: the ledger release's fields, one "field<TAB>value" a line.
entry() {
	tns info --format json "$1" | $PY -c '
import json, sys
m = json.load(sys.stdin)["metadata"]
for k, v in m.items():
    if k.startswith("dp.release."):
        print(k.split(".", 3)[3] + "\t" + v)
    elif k == "train.batch":
        print("train.batch\t" + v)'
}

@test "--batch full: q = 1 and the RDP curve is T alpha / (2 sigma^2), the plain Gaussian composed T times" {
	run -0 --separate-stderr dpsgd-train -q --batch full --public-records 100 \
		--sigma 1.7 --epochs 7 --clip 1 --classes 3 -o m.tns tr.tns
	entry m.tns > e.tsv
	run -0 $PY - <<'EOF'
import numpy as np
E = dict(l.rstrip("\n").split("\t") for l in open("e.tsv"))
assert E["param.q"] == "1" and E["param.steps"] == "7", E
assert E["train.batch"] == "100" and E["param.public_records"] == "100", E
s = float(E["param.sigma"])
assert s == 1.7, s
o = np.array(E["orders"].split(","), float)
r = np.array(E["rdp"].split(","), float)
assert np.allclose(r, 7 * o / (2 * s * s), rtol=1e-13, atol=0), abs(r / (7 * o / (2 * s * s)) - 1).max()
print("ok")
EOF
	# the same steps with subsampling cost less: the accountant tells q = 1 apart
	run -0 --separate-stderr dpsgd-train -q --batch 50 --public-records 100 \
		--sigma 1.7 --epochs 3.5 --clip 1 --classes 3 -o h.tns tr.tns
	entry h.tns > h.tsv
	run -0 $PY - <<'EOF'
import numpy as np
E = dict(l.rstrip("\n").split("\t") for l in open("h.tsv"))
F = dict(l.rstrip("\n").split("\t") for l in open("e.tsv"))
assert E["param.steps"] == "7" and E["param.q"] == "0.5", E
r = np.array(E["rdp"].split(","), float)
f = np.array(F["rdp"].split(","), float)
assert np.all(r < f), (r[:3], f[:3])
EOF
}

@test "--batch full -e 2 -d 1e-5: rdp-account ledger reports at most 2, tightly" {
	run -0 --separate-stderr dpsgd-train -q --batch full --public-records 60 \
		-e 2 -d 1e-5 --epochs 20 --clip 1 --classes 3 -o m.tns tr.tns
	run -0 --separate-stderr rdp-account ledger --format tsv --delta 1e-5 m.tns
	run -0 awk -F '\t' '$1 == "blobs" { print $3 }' <<< "$output"
	awk -v e="$output" 'BEGIN { exit !(e <= 2 && e > 1.99) }'
	entry m.tns > e.tsv
	run -0 $PY - <<'EOF'
import numpy as np
E = dict(l.rstrip("\n").split("\t") for l in open("e.tsv"))
s = float(E["param.sigma"])
o = np.array(E["orders"].split(","), float)
r = np.array(E["rdp"].split(","), float)
assert np.allclose(r, 20 * o / (2 * s * s), rtol=1e-13, atol=0)
# the improved conversion of the closed form at delta 1e-5 is 2
a = o[o > 1.01]; ra = 20 * a / (2 * s * s)
eps = (ra + np.log1p(-1 / a) - np.log(1e-5 * a) / (a - 1)).min()
assert 1.99 < eps <= 2, eps
EOF
}

@test "--batch full: refused with other modes; under privacy it needs --public-records; --no-dp takes every row" {
	run -64 --separate-stderr dpsgd-train --batch full --mode dann --no-dp tr.tns
	[[ $stderr == *"--batch full goes with --mode classify only"* ]]
	run -64 --separate-stderr dpsgd-train --batch full --sigma 1 --epochs 2 --classes 3 tr.tns
	[[ $stderr == *"--public-records"* ]]
	run -0 --separate-stderr dpsgd-train -q --batch full --no-dp --epochs 2 \
		--classes 3 -o m.tns tr.tns
	entry m.tns > e.tsv
	grep -qx "train.batch	60" e.tsv
}

# ---- the converged non-private reference ----

@test "--no-dp --batch full converges: SURF amazon, the optimum of scikit-learn's LogisticRegression (C = 1/(n wd)), loss and caltech accuracy" {
	$PY -c 'import importlib.util as u, sys; sys.exit(u.find_spec("sklearn") is None)' ||
		skip "no scikit-learn"
	local S="$TOP/data/office-caltech10-surf"
	featurize -q --label label --dataset amazon --normalize l2 --clip 1 "$S/amazon.csv.zst" > a.tns
	featurize -q --label label --dataset caltech --normalize l2 --clip 1 "$S/caltech.csv.zst" > c.tns
	# Full-batch gradient descent: mean cross-entropy + wd/2 ||theta||^2
	# (the bias included), lr 2 below 1/L (L <= 1/2 + wd for rows of norm
	# 1), 500 steps: a contraction by (1 - 2 wd)^500 ~ e^-20.
	run -0 --separate-stderr dpsgd-train -q --no-dp --batch full --epochs 500 \
		--lr 2 --weight-decay 1e-2 --classes 10 -S 1 -o lr.tns a.tns
	for t in a c; do
		tns to-npy -q --tensor X -o X$t.npy $t.tns
		tns to-npy -q --tensor y -o y$t.npy $t.tns
	done
	tns to-npy -q --tensor model/fc1/W -o W.npy lr.tns
	tns to-npy -q --tensor model/fc1/b -o b.npy lr.tns
	run -0 $PY - <<'EOF'
import numpy as np
from sklearn.linear_model import LogisticRegression
X = np.load("Xa.npy").astype(float); y = np.load("ya.npy").astype(int).ravel()
Xt = np.load("Xc.npy").astype(float); yt = np.load("yc.npy").astype(int).ravel()
n, wd = len(y), 1e-2
def obj(W, b):
    Z = X @ W + b
    Z -= Z.max(1, keepdims=True)
    ce = -(Z[np.arange(n), y] - np.log(np.exp(Z).sum(1))).mean()
    return ce + wd / 2 * ((W ** 2).sum() + (b ** 2).sum())
# sklearn minimises ||theta||^2 / 2 + C sum CE: ours times 1 / wd with
# C = 1 / (n wd); a column of ones penalises the bias like the weights.
m = LogisticRegression(C=1 / (n * wd), fit_intercept=False, tol=1e-10,
                       max_iter=10000).fit(np.hstack([X, np.ones((n, 1))]), y)
Ws, bs = m.coef_[:, :-1].T, m.coef_[:, -1]
W = np.load("W.npy").astype(float); b = np.load("b.npy").astype(float).ravel()
fs, f = obj(Ws, bs), obj(W, b)
acc = lambda W, b: np.mean(np.argmax(Xt @ W + b, 1) == yt)
assert abs(f - fs) < 1e-6 * fs, (f, fs)
assert abs(W - Ws).max() < 1e-3, abs(W - Ws).max()
assert abs(acc(W, b) - acc(Ws, bs)) < 0.005, (acc(W, b), acc(Ws, bs))
print(f, fs, acc(W, b), acc(Ws, bs))
EOF
}
