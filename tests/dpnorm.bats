#!/usr/bin/env bats
# dpsgd-train --normalize dp:SIGMA[:C]: DP input normalisation
# (lib/mech/dpnorm.h).  The released means and standard deviations are
# checked against numpy's statistics of the clipped rows and the planned
# noise; the affine map folded into the first layer against numpy (raw
# rows through the output model score as standardised rows through the
# unfolded one); the ledger's second entry against the closed form and
# rdp-account's total against numpy's composition of both curves.

load test_helper

FX="$DATA/ncm"

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	featurize -q --label label --dataset blobs "$FX/train.csv" > tr.tns
	cat > load.py <<EOF
import subprocess, sys
import numpy as np
sys.path.insert(0, "$TOP/tests/vectors")
from tnsload import read, releases
def load(path):
    T, M, S = read(path); return T, S, releases(S)
def raw():
    d = np.loadtxt("$FX/train.csv", delimiter=",", skiprows=1)
    return d[:, :-1].astype(np.float32).astype(np.float64), d[:, -1].astype(int)
EOF
}

setup() {
	cd "$BATS_FILE_TMPDIR"
	export PYTHONPATH="$BATS_FILE_TMPDIR"
}

@test "--normalize dp: the released means and sds are the clipped rows' statistics plus the planned noise, folded into the first layer" {
	run -0 --separate-stderr dpsgd-train -q --normalize dp:0.5:1.5 --sigma 1 \
		--epochs 5 --clip 1 --classes 3 --public-records 60 -S 3 -o m.tns tr.tns
	run -0 --separate-stderr predict -q --model m.tns --report-format tsv \
		--report rep.tsv -o /dev/null tr.tns
	run -0 $PY - <<'EOF'
import numpy as np
from load import load, raw
T, S, R = load("m.tns")
X, y = raw()
N, C = 60, 1.5
Xc = X * np.minimum(1, C / np.linalg.norm(X, axis=1))[:, None]
s, q = Xc.sum(0), (Xc * Xc).sum(0)
m, sd = T["normalize/mean"], T["normalize/sd"]
E = [r for r in R if "param.features" in r]
assert len(E) == 1 and len(R) == 2, R
E = E[0]
ss, sq = float(E["param.sigma_sum"]), float(E["param.sigma_sq"])
# shares of mu^2 one half each: sigma = sqrt(2) z sensitivity
assert abs(ss / (np.sqrt(2) * 0.5 * C) - 1) < 0.01, ss
assert abs(sq / (np.sqrt(2) * 0.5 * C * C) - 1) < 0.01, sq
zs = (m * N - s) / ss
zq = ((sd ** 2 + m ** 2) * N - q) / sq
assert np.all(abs(zs) < 5) and np.all(abs(zq) < 5), (zs, zq)
# the noise is there: not the exact statistics
assert abs(zs).max() > 1e-3, zs
# the fold: raw rows through the output = standardised rows through the
# unfolded layer
W, b = T["model/fc1/W"].astype(float), T["model/fc1/b"].astype(float)
Wn, bn = W * sd[:, None], b + m @ W
raw_scores = X @ W + b
norm_scores = ((X - m) / sd) @ Wn + bn
assert np.allclose(raw_scores, norm_scores, rtol=1e-5, atol=1e-4), abs(raw_scores - norm_scores).max()
acc = np.mean(raw_scores.argmax(1) == y)
a = [l.split("\t")[1] for l in open("rep.tsv") if l.startswith("all\t")][0]
assert abs(float(a) - acc) < 1e-6, (a, acc)
print(zs, zq, acc)
EOF
}

@test "--normalize dp: its own ledger entry, alpha / (2 z^2), composed with the training's in rdp-account's total" {
	run -0 --separate-stderr dpsgd-train --normalize dp:3 -e 1 -d 1e-5 \
		--batch full --epochs 10 --clip 1 --classes 3 --public-records 60 \
		-o m.tns tr.tns
	[[ $stderr == *"--normalize: its release adds to the training's --epsilon"* ]]
	run -0 --separate-stderr rdp-account ledger --format tsv --delta 1e-5 m.tns
	run -0 awk -F '\t' '$1 == "blobs" { print $2, $3 }' <<< "$output"
	read -r rel eps <<< "$output"
	[ "$rel" = 2 ]
	run -0 $PY - "$eps" <<'EOF'
import sys
import numpy as np
from load import load
T, S, R = load("m.tns")
E = [r for r in R if "param.features" in r][0]
z = float(E["param.noise_multiplier"])
assert abs(z - 3) < 1e-6, z
o = np.array(E["orders"].split(","), float)
rn = np.array(E["rdp"].split(","), float)
assert np.allclose(rn, o / (2 * z * z), rtol=1e-12)
assert E["neighbours"] == "add_remove" and E["dataset"] == "blobs", E
r = sum(np.array(e["rdp"].split(","), float) for e in R)
a = o > 1.01
eps = (r[a] + np.log1p(-1 / o[a]) - np.log(1e-5 * o[a]) / (o[a] - 1)).min()
got = float(sys.argv[1])
assert abs(got - eps) < 1e-9 * eps and got > 1.05, (got, eps)
print(got, eps)
EOF
}

@test "--normalize: refused without privacy, with other modes, --init, --audit-repeat and bad values" {
	run -64 --separate-stderr dpsgd-train --normalize dp:1 --no-dp --epochs 1 tr.tns
	[[ $stderr == *"--normalize dp needs privacy"* ]]
	run -64 --separate-stderr dpsgd-train --normalize dp:1 --mode ncm --sigma 1 \
		--classes 3 tr.tns
	[[ $stderr == *"--normalize does not apply with --mode ncm"* ]]
	run -64 --separate-stderr dpsgd-train --normalize dp:1 --sigma 1 --epochs 1 \
		--classes 3 --public-records 60 --audit-repeat 2 tr.tns
	[[ $stderr == *"--normalize and --audit-repeat"* ]]
	run -64 --separate-stderr dpsgd-train --normalize z:1 --sigma 1 --epochs 1 \
		--classes 3 --public-records 60 tr.tns
	[[ $stderr == *"expected dp:SIGMA[:C]"* ]]
	run -64 --separate-stderr dpsgd-train --normalize dp:0 --sigma 1 --epochs 1 \
		--classes 3 --public-records 60 tr.tns
	[[ $stderr == *"SIGMA must be in"* ]]
}
