#!/usr/bin/env bats
# dpsgd-train --mode ncm: DP nearest class mean (lib/mech/ncm.h).  The
# model without noise is recomputed with numpy from the rows (clipped
# class sums, their directions); the noise is checked statistically on
# --audit-repeat releases against the exact sums; the ledger's curve
# against the closed form; rdp-account against -e.  The privacy audit
# with its mutation control is in audit-mech.bats.  A few seconds.

load test_helper

FX="$DATA/ncm"

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	featurize -q --label label --dataset blobs "$FX/train.csv" > tr.tns
	cat > load.py <<EOF
import subprocess, sys
import numpy as np
sys.path.insert(0, "$TOP/tests/vectors")
from tnsload import read, release
def load(path):
    T, M, S = read(path); return T, S, release(S)
# The rows of the fixture as float32 (what featurize keeps), clipped.
def rows(clip):
    d = np.loadtxt("$FX/train.csv", delimiter=",", skiprows=1)
    X = d[:, :-1].astype(np.float32).astype(np.float64)
    y = d[:, -1].astype(int)
    nrm = np.sqrt((X * X).sum(1))
    X = X * np.minimum(1, clip / nrm)[:, None]
    return X, y
def sums(clip, K=3):
    X, y = rows(clip)
    return np.stack([X[y == k].sum(0) for k in range(K)])
EOF
}

setup() {
	cd "$BATS_FILE_TMPDIR"
	export PYTHONPATH="$BATS_FILE_TMPDIR"
}

@test "ncm --sigma 0: the model is the directions of the clipped class sums, as numpy computes them" {
	run -0 --separate-stderr dpsgd-train --mode ncm --sigma 0 --clip 1.5 \
		--classes 3 -o m.tns tr.tns
	[[ $stderr == *"no noise: the model is NOT private"* ]]
	run -0 $PY - <<'EOF'
import numpy as np
from load import load, sums, rows
T, S, E = load("m.tns")
W, b = T["model/fc1/W"].astype(float), T["model/fc1/b"]
S3 = sums(1.5)
U = S3 / np.linalg.norm(S3, axis=1, keepdims=True)
assert W.shape == (5, 3) and np.all(b == 0), (W.shape, b)
assert np.allclose(W, U.T, rtol=0, atol=1e-6), abs(W - U.T).max()
# clipping matters here: the unclipped directions differ
X, y = rows(np.inf)
V = np.stack([X[y == k].sum(0) for k in range(3)])
V /= np.linalg.norm(V, axis=1, keepdims=True)
assert abs(V - U).max() > 1e-2, abs(V - U).max()
assert S["train.mode"] == "clip_only" and S["train.adapt"] == "ncm", S
assert S["dp.raw.blobs"] == "aggregate", S
assert not E, E
print("ok")
EOF
	# predict needs nothing new: its accuracy is numpy's argmax
	run -0 --separate-stderr predict -q --model m.tns --report-format tsv \
		--report rep.tsv -o /dev/null tr.tns
	run -0 $PY -c "
import numpy as np
from load import sums
d = np.loadtxt('$FX/train.csv', delimiter=',', skiprows=1)
X, y = d[:, :-1].astype(np.float32).astype(float), d[:, -1].astype(int)
S3 = sums(1.5)
acc = np.mean(np.argmax(X @ (S3 / np.linalg.norm(S3, axis=1, keepdims=True)).T, 1) == y)
a = [l.split('\t')[1] for l in open('rep.tsv') if l.startswith('all\t')][0]
assert abs(float(a) - acc) < 1e-6, (a, acc)
assert acc > 0.8, acc
print(acc)"
}

@test "ncm --no-dp: the rows are not clipped" {
	run -0 --separate-stderr dpsgd-train --mode ncm --no-dp --classes 3 \
		-o m.tns tr.tns
	run -0 $PY - <<'EOF'
import numpy as np
from load import load, sums
T, S, E = load("m.tns")
S3 = sums(np.inf)
U = S3 / np.linalg.norm(S3, axis=1, keepdims=True)
assert np.allclose(T["model/fc1/W"], U.T, rtol=0, atol=1e-6)
assert S["train.mode"] == "no_dp" and S["dp.raw.blobs"] == "aggregate", S
assert not E, E
EOF
}

@test "ncm: the noise of the class sums is N(0, sigma^2) with the ledger's sigma, independent between releases" {
	# 4000 releases of 15 sums: 60000 noise values; mean within 5
	# standard errors, sd within 2 % (its standard error is 0.3 %).
	run -0 --separate-stderr dpsgd-train -q --mode ncm --sigma 2 --clip 1.5 \
		--classes 3 --audit-repeat 4000 -S 7 -o a.tns tr.tns
	run -0 $PY - <<'EOF'
import numpy as np
from load import load, sums
T, S, E = load("a.tns")
A = T["ncm/sums"]
assert A.shape == (4000, 15), A.shape
N = A - sums(1.5).reshape(1, 15)
sig = float(E["param.sigma"])
z = float(E["param.noise_multiplier"])
sens = float(E["param.l2_sensitivity"])
assert abs(sig / sens - z) < 1e-9 * z and 2 <= z < 2.0001, (sig, sens, z)
assert 1.5 < sens < 1.51, sens
m, s = N.mean(), N.std()
assert abs(m) < 5 * sig / np.sqrt(N.size), (m, sig)
assert abs(s / sig - 1) < 0.02, (s, sig)
c = np.corrcoef(N[:-1].ravel(), N[1:].ravel())[0, 1]
assert abs(c) < 5 / np.sqrt(N.size), c
# the ledger: 4000 Gaussian mechanisms of multiplier z, add/remove
o = np.array(E["orders"].split(","), float)
r = np.array(E["rdp"].split(","), float)
assert np.allclose(r, 4000 * o / (2 * z * z), rtol=1e-12), r[:3]
assert E["neighbours"] == "add_remove" and E["mechanism"] == "gaussian", E
assert E["param.classes"] == "3" and S["dp.audit"] == "4000", S
print(m, s, sig)
EOF
}

@test "ncm -e 2 -d 1e-5: rdp-account ledger reports at most 2, and the release for the dataset" {
	run -0 --separate-stderr dpsgd-train -q --mode ncm -e 2 -d 1e-5 \
		--classes 3 -o m.tns tr.tns
	run -0 --separate-stderr rdp-account ledger --format tsv --delta 1e-5 m.tns
	run -0 awk -F '\t' '$1 == "blobs" { print $2, $3, $7, $11 }' <<< "$output"
	read -r rel eps nb verdict <<< "$output"
	[ "$rel" = 1 ] && [ "$nb" = add_remove ] && [ "$verdict" = private ]
	awk -v e="$eps" 'BEGIN { exit !(e <= 2 && e > 1.999) }'
	run -0 $PY -c 'from load import load; T, S, E = load("m.tns"); print(S["train.mode"], "dp.raw.blobs" in S)'
	[ "$output" = "dp_ncm False" ]
}

@test "ncm: options of DP-SGD, a missing budget and learnt classes are refused" {
	run -64 --separate-stderr dpsgd-train --mode ncm --sigma 1 --classes 3 \
		--hidden 4 tr.tns
	[[ $stderr == *"--hidden does not apply with --mode ncm"* ]]
	run -64 --separate-stderr dpsgd-train --mode ncm --sigma 1 --classes 3 \
		--epochs 3 tr.tns
	[[ $stderr == *"--epochs does not apply with --mode ncm"* ]]
	run -64 --separate-stderr dpsgd-train --mode ncm --classes 3 tr.tns
	[[ $stderr == *"needs --epsilon and --delta, --sigma or --no-dp"* ]]
	run -64 --separate-stderr dpsgd-train --mode ncm --no-dp --sigma 1 tr.tns
	[[ $stderr == *"--no-dp goes with none of"* ]]
	run -64 --separate-stderr dpsgd-train --mode ncm --unsafe-test-half-sensitivity \
		--sigma 1 --classes 3 tr.tns
	[[ $stderr == *"PRIVADA_TEST_UNSAFE"* ]]
	# the label set of the rows is learnt: DP needs --classes
	run --separate-stderr dpsgd-train --mode ncm --sigma 1 tr.tns
	[ "$status" -ne 0 ]
	[[ $stderr == *"--classes"* ]]
}
