#!/usr/bin/env bats
# gmm-fit: Gaussian mixtures by EM and DP-EM, and sampling.  Models are
# read back with tests/vectors/specread.py (an independent reader written
# from the spec) and checked against numpy and scikit-learn.  The data of
# the known mixture is drawn by numpy with a fixed seed in setup_file.
# Statistical tests fix their seeds; each states its false-failure rate
# (at most 1e-6 in all), the audits 2e-7 each (tests/audit.bash).

load test_helper
load audit

FX="$DATA/gmm"

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	# A known mixture: 3 components in 3 dimensions, 3000 rows, the
	# label of each row its component.
	$PY - <<'EOF'
import numpy as np
rng = np.random.default_rng(20240601)
W = np.array([0.5, 0.3, 0.2])
M = np.array([[0.0, 0.0, 0.0], [6.0, 1.0, -2.0], [-4.0, 5.0, 2.0]])
C = np.array([[[1.0, 0.3, 0.0], [0.3, 0.8, -0.2], [0.0, -0.2, 0.5]],
              [[0.6, 0.0, 0.1], [0.0, 1.5, 0.4], [0.1, 0.4, 1.0]],
              [[2.0, -0.5, 0.0], [-0.5, 1.0, 0.0], [0.0, 0.0, 0.3]]])
z = rng.choice(3, 3000, p=W)
X = np.array([rng.multivariate_normal(M[k], C[k]) for k in z])
np.savez("truth.npz", W=W, M=M, C=C)
with open("mix.csv", "w") as f:
    f.write("a,b,c,label\n")
    for x, k in zip(X, z):
        f.write("%.17g,%.17g,%.17g,%d\n" % (x[0], x[1], x[2], k))
EOF
	featurize -q --label label --dtype f64 --dataset mix mix.csv > mix.tns
	featurize -q --label label --dtype f64 --dataset sm "$FX/small.csv" > small.tns
	featurize -q --no-label --dtype f64 --header no --dataset init "$FX/init2.csv" > init2.tns
	# Load a stream: T[name] = numpy array, M[name] = tensor metadata,
	# S = stream metadata, E = the fields of its one ledger entry.
	cat > load.py <<EOF
import subprocess, sys
import numpy as np
sys.path.insert(0, "$TOP/tests/vectors")
import fpsum
from tnsload import read, release
def load(path):
    T, M, S = read(path); return T, M, S, release(S)
def mix():
    d = np.loadtxt("mix.csv", delimiter=",", skiprows=1)
    return d[:, :3], d[:, 3].astype(int)
def small():
    d = np.loadtxt("$FX/small.csv", delimiter=",", skiprows=1)
    return d[:, :2], d[:, 2].astype(int)
def clip(X, B):
    n = np.linalg.norm(X, axis=1)
    return X * np.minimum(1, B / np.maximum(n, 1e-300))[:, None]
EOF
}

setup() {
	cd "$BATS_FILE_TMPDIR"
	export PYTHONPATH="$BATS_FILE_TMPDIR"
}

# ---- the battery ----

@test "gmm-fit --help prints the usage on stdout and exits 0" {
	run -0 --separate-stderr gmm-fit --help
	[[ ${lines[0]} == "usage: gmm-fit "* ]]
	[[ $output == *"--covariance TYPE"* ]]
	[[ $output == *"gmm-fit sample "* ]]
	[ -z "$stderr" ]
}

@test "gmm-fit --help synopsis matches the man page" {
	synopsis_matches gmm-fit
}

@test "gmm-fit --version prints the version" {
	run -0 gmm-fit --version
	[[ $output == "gmm-fit (privada) "[0-9]* ]]
}

@test "gmm-fit rejects an unknown option with 64 and usage on stderr" {
	run -64 --separate-stderr gmm-fit --bogus --sigma 0 mix.tns
	refute_output
	[[ $stderr == *"usage: gmm-fit "* ]]
	run -64 --separate-stderr gmm-fit sample --bogus
	refute_output
	[[ $stderr == *"usage: gmm-fit "* ]]
}

@test "gmm-fit refuses to spend budget without privacy parameters" {
	run -64 --separate-stderr gmm-fit -k 2 mix.tns
	refute_output
	[[ $stderr == "gmm-fit: no privacy parameters: give --epsilon and --delta, or --sigma"* ]]
	run -64 --separate-stderr gmm-fit --epsilon 1 --clip 1 mix.tns
	refute_output
	[[ $stderr == "gmm-fit: --epsilon and --delta go together"* ]]
	run -64 --separate-stderr gmm-fit --epsilon 1 --delta 1e-5 mix.tns
	refute_output
	[[ $stderr == "gmm-fit: --clip is required"* ]]
}

@test "gmm-fit quotes a bad option value" {
	run -64 --separate-stderr gmm-fit --epsilon 0,5 --delta 1e-5 --clip 1 mix.tns
	refute_output
	[[ $stderr == "gmm-fit: invalid --epsilon '0,5'"* ]]
	run -64 --separate-stderr gmm-fit --sigma 0 --covariance tied mix.tns
	refute_output
	[[ $stderr == "gmm-fit: invalid --covariance 'tied': expected full, diag or spherical"* ]]
	run -64 --separate-stderr gmm-fit --sigma 0 -k 0 mix.tns
	refute_output
	[[ $stderr == "gmm-fit: invalid --components '0'"* ]]
	run -64 --separate-stderr gmm-fit --sigma 1 --clip 1 --split 1,0,1 mix.tns
	refute_output
	[[ $stderr == "gmm-fit: invalid --split '1,0,1'"* ]]
	run -64 --separate-stderr gmm-fit sample --model x.tns --n 0
	refute_output
	[[ $stderr == "gmm-fit: invalid --n '0'"* ]]
}

@test "gmm-fit rejects options that do not go together with 64" {
	run -64 --separate-stderr gmm-fit --sigma 1 --clip 1 --tol 1e-4 mix.tns
	[[ $stderr == "gmm-fit: --tol and --max-iter stop on the data"* ]]
	run -64 --separate-stderr gmm-fit --sigma 1 --clip 1 --restarts 3 mix.tns
	[[ $stderr == "gmm-fit: --restarts picks the best start on the data"* ]]
	run -64 --separate-stderr gmm-fit --sigma 1 --clip 1 --reg 0 mix.tns
	[[ $stderr == "gmm-fit: --reg must be positive with privacy"* ]]
	run -64 --separate-stderr gmm-fit --sigma 0 --stats mix.tns
	[[ $stderr == "gmm-fit: --stats writes released statistics"* ]]
	run -64 --separate-stderr gmm-fit --sigma 0 --audit-repeat 2 mix.tns
	[[ $stderr == "gmm-fit: --audit-repeat needs noise"* ]]
	run -64 --separate-stderr gmm-fit --sigma 0 --iters 5 --tol 1e-3 mix.tns
	[[ $stderr == "gmm-fit: --iters runs a fixed number of iterations"* ]]
	run -64 --separate-stderr gmm-fit --sigma 0 --classes 3 mix.tns
	[[ $stderr == "gmm-fit: --classes applies to --by-label"* ]]
	run -64 --separate-stderr gmm-fit --sigma 0 --init-means mix.tns mix.tns
	refute_output
	[[ $stderr == *"'mix.tns' is the input itself"* ]]
	run -64 --separate-stderr gmm-fit sample --n 3
	[[ $stderr == "gmm-fit: sample: --model is required"* ]]
	run -64 --separate-stderr gmm-fit --sigma 0 --init dp mix.tns
	[[ $stderr == "gmm-fit: --init dp releases a noisy start: it needs privacy"* ]]
	run -64 --separate-stderr gmm-fit --sigma 1 --clip 1 --init dp --init-means init2.tns small.tns
	[[ $stderr == "gmm-fit: --init dp and --init-means are two starts"* ]]
	run -64 --separate-stderr gmm-fit --sigma 1 --clip 1 --init kmeans small.tns
	[[ $stderr == *"--init"*"kmeans"* ]]
}

@test "DP-EM --by-label refuses a label set learnt from the rows without --classes" {
	# mix.tns: integer labels, no --label-map or --classes at featurize.
	run -65 --separate-stderr gmm-fit --sigma 1 --clip 1 --by-label mix.tns
	refute_output
	[[ $stderr == "gmm-fit: mix.tns: the label set of 'y' was learnt from the rows (label.source=data)"*"--classes K"* ]]
}

@test "gmm-fit rejects garbage and truncated input with 65 and empty stdout" {
	printf 'not a tensor stream\n' > garbage.tns
	run -65 --separate-stderr gmm-fit -q --sigma 0 garbage.tns
	refute_output
	[[ $stderr == "gmm-fit: garbage.tns: offset 0: "* ]]
	head -c 300 mix.tns > cut.tns
	run -65 --separate-stderr gmm-fit -q --sigma 0 cut.tns
	refute_output
	[[ $stderr == "gmm-fit: cut.tns: "* ]]
}

@test "gmm-fit rejects a wrong dtype or a missing tensor with 65" {
	printf '1,2\n3,4\n' > i.csv
	tns from-csv --dtype i32 --name X i.csv > i32.tns
	run -65 --separate-stderr gmm-fit -q --sigma 0 --dataset x i32.tns
	refute_output
	[ "$stderr" = "gmm-fit: i32.tns: tensor 'X': expected f32 or f64 of 2 dimensions, got i32 of 2" ]
	tns pick -i mix.tns -o xonly.tns X
	run -65 --separate-stderr gmm-fit -q --sigma 0 --by-label xonly.tns
	refute_output
	[ "$stderr" = "gmm-fit: xonly.tns: no tensor 'y' of labels (--by-label)" ]
	run -65 --separate-stderr gmm-fit -q --sigma 0 -k 3 --init-means init2.tns mix.tns
	refute_output
	[ "$stderr" = "gmm-fit: init2.tns: --init-means: tensor 'X' must be 3 x 3 (components x features)" ]
	run -65 --separate-stderr gmm-fit sample --model mix.tns --n 3
	refute_output
	[[ $stderr == "gmm-fit: mix.tns: --model: no gmm.covariance, gmm.classes or gmm.priors"* ]]
}

@test "gmm-fit reports a missing input with 66 and /dev/full with 74" {
	run -66 --separate-stderr gmm-fit -q --sigma 0 no-such.tns
	refute_output
	[ "$stderr" = "gmm-fit: no-such.tns: No such file or directory" ]
	run -66 --separate-stderr gmm-fit sample --model no-such.tns --n 2
	refute_output
	run -74 --separate-stderr bash -c 'gmm-fit -q --sigma 0 small.tns > /dev/full'
	[[ $stderr == *"gmm-fit: "* ]]
}

@test "gmm-fit refuses to write to a terminal" {
	command -v script > /dev/null || skip "no script(1)"
	run -64 script -qec "gmm-fit --sigma 0 $BATS_FILE_TMPDIR/small.tns" /dev/null
}

@test "gmm-fit: a non-finite row is an error without privacy and a zero row with it" {
	{ cat "$FX/small.csv"; printf 'nan,1,0\n'; } > nf.csv
	tns from-csv --header --name X nf.csv > nf.tns
	run -65 --separate-stderr gmm-fit -q --sigma 0 --dataset nf nf.tns
	refute_output
	[ "$stderr" = "gmm-fit: nf.tns: tensor 'X': row 20 has a non-finite value" ]
	run -0 --separate-stderr gmm-fit --sigma 1 --clip 3 --dataset nf --assume-raw nf.tns -o o.tns
	[[ $stderr != *non-finite* ]]
}

# ---- maximum likelihood, known answers ----

@test "plain EM recovers the means, covariances and weights of a known mixture" {
	run -0 --separate-stderr gmm-fit --sigma 0 -k 3 --restarts 3 -S 1 mix.tns -o o.tns
	[[ $stderr == *"--sigma 0: plain EM without noise: the output is NOT private"* ]]
	# Tolerances: about 4 standard errors of the estimates from 3000
	# rows (at least 600 per component): means 0.25, covariance entries
	# 0.3, weights 0.03.
	$PY - <<'EOF'
from load import *
T, M, S, E = load("o.tns")
t = np.load("truth.npz")
m, c, w = T["gmm/0/means"], T["gmm/0/covs"], T["gmm/0/weights"]
assert m.shape == (3, 3) and c.shape == (3, 3, 3) and w.shape == (3,)
order = [int(np.argmin(((m - mu) ** 2).sum(1))) for mu in t["M"]]
assert sorted(order) == [0, 1, 2], order
assert np.abs(m[order] - t["M"]).max() < 0.25, m[order] - t["M"]
assert np.abs(c[order] - t["C"]).max() < 0.3, c[order] - t["C"]
assert np.abs(w[order] - t["W"]).max() < 0.03, w[order]
assert abs(w.sum() - 1) < 1e-12
assert S["gmm.covariance"] == "full" and S["gmm.classes"] == "0"
assert S["gmm.priors"] == "1" and S["gmm.components"] == "3"
EOF
}

@test "plain EM's log-likelihood never decreases between iterations" {
	# --reg 0: exact EM, which never lowers the likelihood (Dempster,
	# Laird and Rubin 1977); a bad start makes it climb for a while.
	printf '0,0,0\n0.5,0,0\n0,0.5,0\n' > bad.csv
	tns from-csv --name X bad.csv > bad.tns
	run -0 --separate-stderr gmm-fit -q -v --sigma 0 -k 3 --reg 0 --tol 1e-10 --max-iter 300 --init-means bad.tns mix.tns -o o.tns
	grep -c 'iteration [0-9]*: log-likelihood' <<< "$stderr" > n
	[ "$(cat n)" -gt 10 ]
	sed -n 's/^gmm-fit: class 0: iteration [0-9]*: log-likelihood //p' <<< "$stderr" > ll.txt
	$PY - <<'EOF'
from load import *
ll = np.loadtxt("ll.txt")
d = np.diff(ll)
assert (d >= -1e-12 * np.abs(ll[1:])).all(), d.min()
assert ll[-1] - ll[0] > 1, (ll[0], ll[-1])
T, M, S, E = load("o.tns")
# the metadata's log-likelihood is that of the final model, at least the
# last E-step's
assert float(M["gmm/0/weights"]["gmm.log_likelihood"]) >= ll[-1] - 1e-12
EOF
}

# sklearn_compare TYPE: gmm-fit and scikit-learn's GaussianMixture from
# the same start (the hard assignment of the rows to --init-means, which
# gmm-fit makes, rebuilt here) agree.
sklearn_compare() {
	$PY -c 'import importlib.util as u, sys; sys.exit(u.find_spec("sklearn") is None)' ||
		skip "no scikit-learn"
	printf '1,1,1\n5,0,-1\n-3,4,1\n' > m0.csv
	tns from-csv --name M m0.csv > m0.tns
	gmm-fit -q --sigma 0 -k 3 --covariance "$1" --init-means m0.tns --tol 1e-8 mix.tns > o.tns
	$PY - "$1" <<'EOF'
import sys, warnings
from load import *
from sklearn.mixture import GaussianMixture
typ = sys.argv[1]
X, _ = mix()
M0 = np.loadtxt("m0.csv", delimiter=",")
K, reg = 3, 1e-6
lab = ((X[:, None, :] - M0[None]) ** 2).sum(2).argmin(1)
nk = np.bincount(lab, minlength=K) + 10 * np.finfo(float).eps
P = []
for k in range(K):
    Xk = X[lab == k]
    D = Xk - Xk.sum(0) / nk[k]
    C = D.T @ D / nk[k] + reg * np.eye(3)
    P.append({"full": np.linalg.inv(C), "diag": 1 / np.diag(C),
              "spherical": 1 / np.diag(C).mean()}[typ])
gm = GaussianMixture(K, covariance_type=typ, tol=1e-8, reg_covar=reg,
                     max_iter=1000, weights_init=nk / nk.sum(),
                     means_init=M0, precisions_init=np.array(P)).fit(X)
T, Mt, S, E = load("o.tns")
w, m, c = T["gmm/0/weights"], T["gmm/0/means"], T["gmm/0/covs"]
assert np.abs(m - gm.means_).max() < 1e-8, np.abs(m - gm.means_).max()
assert np.abs(c - gm.covariances_).max() < 1e-8
assert np.abs(w - gm.weights_).max() < 1e-10
meta = Mt["gmm/0/weights"]
ll = float(meta["gmm.log_likelihood"])
assert abs(ll - gm.score(X)) < 1e-10, (ll, gm.score(X))
assert abs(float(meta["gmm.bic"]) / gm.bic(X) - 1) < 1e-10
assert abs(float(meta["gmm.aic"]) / gm.aic(X) - 1) < 1e-10
assert int(meta["gmm.iterations"]) == gm.n_iter_, (meta, gm.n_iter_)
assert meta["gmm.converged"] == "true"
EOF
}

@test "plain EM matches scikit-learn's GaussianMixture with full covariances" {
	sklearn_compare full
}

@test "plain EM matches scikit-learn's GaussianMixture with diagonal covariances" {
	sklearn_compare diag
}

@test "plain EM matches scikit-learn's GaussianMixture with spherical covariances" {
	sklearn_compare spherical
}

@test "--restarts keeps the start with the best log-likelihood" {
	# The first start of both runs is the same k-means++ draw.
	gmm-fit -q --sigma 0 -k 6 -S 4 --covariance diag mix.tns > a.tns
	gmm-fit -q --sigma 0 -k 6 -S 4 --covariance diag --restarts 6 -v mix.tns > b.tns 2> err
	grep -q 'class 0: start 6: iteration 1:' err
	$PY - <<'EOF'
from load import *
a = float(load("a.tns")[1]["gmm/0/weights"]["gmm.log_likelihood"])
b = float(load("b.tns")[1]["gmm/0/weights"]["gmm.log_likelihood"])
assert b >= a - 1e-9, (a, b)
EOF
}

@test "--by-label fits one mixture per class and keeps the class priors" {
	gmm-fit -q --sigma 0 --by-label -k 1 --reg 0.01 mix.tns > o.tns
	# With one component per class, EM is the class's mean and
	# covariance (divided by n) plus reg, after one iteration.
	$PY - <<'EOF'
from load import *
T, M, S, E = load("o.tns")
X, y = mix()
assert S["gmm.classes"] == "0,1,2"
pri = np.array(S["gmm.priors"].split(","), float)
assert np.abs(pri - np.bincount(y) / len(y)).max() < 1e-15
for c in range(3):
    Xc = X[y == c]
    assert np.abs(T["gmm/%d/means" % c][0] - Xc.mean(0)).max() < 1e-10
    C = np.cov(Xc, rowvar=False, bias=True) + 0.01 * np.eye(3)
    assert np.abs(T["gmm/%d/covs" % c][0] - C).max() < 1e-10
    assert M["gmm/%d/weights" % c]["gmm.rows"] == str((y == c).sum())
EOF
}

@test "--clip scales rows down before plain EM" {
	$PY -c '
from load import *
X, y = mix()
np.save("xc.npy", clip(X, 4))'
	tns from-npy --name X xc.npy > xc.tns
	gmm-fit -q --sigma 0 -k 2 -S 3 --clip 4 mix.tns > a.tns
	gmm-fit -q --sigma 0 -k 2 -S 3 --dataset mix xc.tns > b.tns
	$PY - <<'EOF'
from load import *
A, B = load("a.tns")[0], load("b.tns")[0]
for k in ("means", "covs", "weights"):
    assert np.abs(A["gmm/0/" + k] - B["gmm/0/" + k]).max() < 1e-9, k
EOF
}

@test "plain EM writes no release and marks the output aggregate" {
	gmm-fit -q --sigma 0 -k 2 small.tns > o.tns
	$PY - <<'EOF'
from load import *
T, M, S, E = load("o.tns")
assert S["dp.raw.sm"] == "aggregate", S
assert not E, E
assert "gmm.bic" in S and "gmm.aic" in S and "gmm.log_likelihood" in S
EOF
}

@test "gmm-fit gives the same bytes for the same seed, whatever the threads" {
	OPENBLAS_NUM_THREADS=1 gmm-fit -q --sigma 0 -k 4 -S 9 mix.tns > a.tns 2> /dev/null
	OPENBLAS_NUM_THREADS=2 gmm-fit -q --sigma 0 -k 4 -S 9 mix.tns > b.tns 2> /dev/null
	OPENBLAS_NUM_THREADS=2 gmm-fit -q --sigma 0 -k 4 -S 10 mix.tns > c.tns 2> /dev/null
	cmp a.tns b.tns
	! cmp -s a.tns c.tns
	OPENBLAS_NUM_THREADS=1 gmm-fit -q --sigma 1 --clip 5 -k 4 -S 9 mix.tns > d.tns 2> /dev/null
	OPENBLAS_NUM_THREADS=2 gmm-fit -q --sigma 1 --clip 5 -k 4 -S 9 mix.tns > e.tns 2> /dev/null
	same_but_ids d.tns e.tns
}

# ---- DP-EM ----

@test "DP-EM records one Gaussian release of T composed iterations" {
	gmm-fit -q --epsilon 2 --delta 1e-5 --clip 3 -k 2 --iters 8 small.tns > o.tns
	$PY - <<'EOF'
from load import *
T, M, S, E = load("o.tns")
assert "dp.raw.sm" not in S, S             # the row-local mark is released
assert E["dataset"] == "sm" and E["mechanism"] == "gaussian"
assert E["neighbours"] == "add_remove" and E["tool"] == "gmm-fit"
assert E["seeded"] == "false" and E["param.steps"] == "8"
z = float(E["param.noise_multiplier"])
mu2 = 0
e = float(fpsum.margin(fpsum.ROWS, 2 + 2 + 8))   # float margin: k + d + 8
for part, sens0 in (("_count", 1), ("_sum", 3), ("", 9)):
    s, sig = float(E["param.l2_sensitivity" + part]), float(E["param.sigma" + part])
    assert sens0 * (1 + e) <= s <= sens0 * (1 + e) * (1 + 1e-5), (part, s)
    mu2 += (s / sig) ** 2
    # default split: a third of mu^2 each
    assert abs((s / sig) ** 2 * z * z * 3 - 1) < 1e-8
assert abs(mu2 * z * z - 1) < 1e-8
o = np.array(E["orders"].split(","), float)
r = np.array(E["rdp"].split(","), float)
assert len(o) == 156 and np.allclose(r, 8 * o / (2 * z * z), rtol=1e-12)
assert "gmm.log_likelihood" not in S and "gmm.bic" not in S
assert S["gmm.iterations"] == "8"
EOF
}

@test "DP-EM charges the floating-point error of its sums to the sensitivity" {
	# fails on 7b23f82: the ledger charged exactly B (plus the grid) for
	# the sums, but the computed sums of the start of --init dp on the
	# neighbours D and D' of tests/vectors/fpsum.py (rows summed one by
	# one) differ by B + 1991 ulp(B) (Casacuberta et al., CCS 2022).
	$PY - <<'EOF'
from load import fpsum
d, d2 = fpsum.neighbours()
open("adv.csv", "w").write("".join("%r\n" % x for x in d))
EOF
	featurize -q --no-label --header no --dtype f64 --dataset adv adv.csv > adv.tns
	gmm-fit -q --sigma 2 --clip 1 -k 1 --iters 2 --init dp adv.tns > o.tns
	$PY - <<'EOF'
from load import *
from fractions import Fraction as F
d, d2 = fpsum.neighbours()
gap = F(fpsum.serial_sum(fpsum.clip_row(x, 1.0) for x in d2)) - \
    F(fpsum.serial_sum(fpsum.clip_row(x, 1.0) for x in d))
assert gap > 1, gap                       # the attack: more than B
E = load("o.tns")[3]
e = fpsum.margin(fpsum.ROWS, 1 + 1 + 8)   # k + d + 8 roundings a term
# before the grid (noise_sens_l2: delta2 + grid sqrt(values), one value
# each here): the attack and the margin are covered
for part, b in (("_sum", 1), ("", 1), ("_count", 1)):
    d2c = F(float(E["param.l2_sensitivity" + part])) - \
        F(float(E["param.grid" + part]))
    assert d2c > gap and d2c >= b * (1 + e), (part, float(d2c))
assert F(float(E["param.fp_margin"])) >= e
assert float(E["param.rows_bound"]) == fpsum.ROWS
EOF
}

@test "DP-EM refuses more rows than the public bound of its float margin" {
	$PY -c 'import numpy as np; np.save("big.npy", np.zeros((2 ** 22 + 1, 1)))'
	tns from-npy --name X big.npy > big.tns
	run -65 --separate-stderr gmm-fit -q --sigma 1 --clip 1 -k 1 --iters 1 --dataset big big.tns
	refute_output
	[[ $stderr == "gmm-fit: big.tns: tensor 'X' has more than 4194304 rows"* ]]
}

@test "rdp-account reads the epsilon that gmm-fit was asked for" {
	command -v rdp-account > /dev/null || skip "rdp-account is not built"
	gmm-fit -q --epsilon 0.9 --delta 1e-6 --clip 3 -k 2 --iters 5 small.tns > o.tns
	run -0 --separate-stderr rdp-account ledger --format tsv --delta 1e-6 o.tns
	eps=$(awk -F '\t' '$1 == "sm" { print $3 }' <<< "$output")
	awk -v e="$eps" 'BEGIN { exit !(e <= 0.9 * (1 + 1e-12) && e >= 0.9 * (1 - 1e-6)) }'
}

@test "--init dp is one more release: T + 1 Gaussian mechanisms in the ledger" {
	command -v rdp-account > /dev/null || skip "rdp-account is not built"
	gmm-fit -q --epsilon 0.9 --delta 1e-6 --clip 3 -k 2 --iters 5 --init dp small.tns > o.tns
	run -0 --separate-stderr rdp-account ledger --format tsv --delta 1e-6 o.tns
	eps=$(awk -F '\t' '$1 == "sm" { print $3 }' <<< "$output")
	awk -v e="$eps" 'BEGIN { exit !(e <= 0.9 * (1 + 1e-12) && e >= 0.9 * (1 - 1e-6)) }'
	gmm-fit -q --sigma 2 --clip 3 -k 2 --iters 5 --init dp small.tns > s.tns
	gmm-fit -q --sigma 2 --clip 3 -k 2 --iters 5 small.tns > b.tns
	$PY - <<'EOF'
from load import *
for f in ("o.tns", "s.tns"):
    T, M, S, E = load(f)
    assert E["param.steps"] == "5" and E["param.init_releases"] == "1", E
    z = float(E["param.noise_multiplier"])
    o = np.array(E["orders"].split(","), float)
    r = np.array(E["rdp"].split(","), float)
    assert np.allclose(r, 6 * o / (2 * z * z), rtol=1e-12)
assert float(load("s.tns")[3]["param.noise_multiplier"]) == 2
E = load("b.tns")[3]
assert E["param.init_releases"] == "0", E
EOF
	# The ledger's epsilon of the start and 5 iterations is that of 6
	# Gaussian mechanisms of multiplier 2.
	run -0 --separate-stderr rdp-account ledger --format tsv --delta 1e-5 s.tns
	e1=$(awk -F '\t' '$1 == "sm" { print $3 }' <<< "$output")
	run -0 --separate-stderr rdp-account --format tsv --delta 1e-5 gaussian --sigma 2 --count 6
	e2=$(awk -F '\t' '$1 == "epsilon" { print $2 }' <<< "$output")
	awk -v a="$e1" -v b="$e2" 'BEGIN { exit !(a <= b * (1 + 1e-9) && a >= b * (1 - 1e-6)) }'
}

@test "--init dp releases the count, sums and sums of squares with the stated noise" {
	# 3000 releases of the start's statistics of small.tns (one class,
	# clipped to B = 3), fixed seed, minus the exact values computed here:
	# each of the 5 chi-square checks fails with probability 2e-8 and each
	# of the 5 mean checks with 2e-9 when the noise is right: 1.1e-7 in all.
	gmm-fit -q --sigma 0.7 --clip 3 -k 2 --iters 1 --init dp --stats --audit-repeat 3000 -S 41 small.tns > a.tns 2> /dev/null
	$PY - <<'EOF'
from load import *
from scipy.stats import chi2
T, M, S, E = load("a.tns")
X, _ = small()
X = clip(X, 3 * (1 - 10 * 2.0 ** -52))
want = np.concatenate([[len(X)], X.sum(0), (X * X).sum(0)])
N = 3000
Z = np.array([T["gmm/0/init_stats/%d" % i] for i in range(N)]) - want
sd = np.array([float(E["param.sigma_count"])] + [float(E["param.sigma_sum"])] * 2
              + [float(E["param.sigma"])] * 2)
lo, hi = chi2.ppf(1e-8, N), chi2.isf(1e-8, N)
for j in range(5):
    v = Z[:, j] / sd[j]
    q = (v ** 2).sum()
    assert lo <= q <= hi, (j, q / N)
    assert abs(v.mean()) * N ** 0.5 < 6, (j, v.mean())
EOF
}

@test "--init dp with little noise releases the class statistics, and EM goes on from there" {
	# mix.tns as one class, clipped to 20 (no row is scaled), noise
	# multiplier 1e-4: the start's statistics are exact to about 1e-3
	# (sd 1e-4 x 20^2 x sqrt(3) on the sums of squares, over 3000 rows).
	# K = 1: every responsibility is 1, so one iteration later the model
	# holds the rows' mean and covariance, whatever the start.
	gmm-fit -q --sigma 1e-4 --clip 20 -k 1 --iters 1 --init dp --stats --reg 1e-6 -S 5 mix.tns > o.tns 2> /dev/null
	$PY - <<'EOF'
from load import *
T, M, S, E = load("o.tns")
X, _ = mix()
st = T["gmm/0/init_stats"]
assert abs(st[0] - len(X)) < 0.05, st[0]
assert np.abs(st[1:4] / st[0] - X.mean(0)).max() < 1e-3
assert np.abs(st[4:7] / st[0] - (X * X).mean(0)).max() < 1e-3
m = T["gmm/0/means"][0]
assert np.abs(m - X.mean(0)).max() < 1e-3, m
C = T["gmm/0/covs"][0]
assert np.abs(C - np.cov(X.T, bias=True)).max() < 1e-2, C
EOF
}

@test "DP-EM's model is a valid mixture inside the clipping ball" {
	gmm-fit -q --sigma 0.5 --clip 3 -k 3 --iters 6 --reg 1e-3 mix.tns > o.tns
	gmm-fit -q --sigma 0.5 --clip 3 -k 3 --iters 6 --covariance diag --reg 1e-3 mix.tns > d.tns
	$PY - <<'EOF'
from load import *
T, M, S, E = load("o.tns")
w, m, c = T["gmm/0/weights"], T["gmm/0/means"], T["gmm/0/covs"]
assert abs(w.sum() - 1) < 1e-12 and (w > 0).all()
assert (np.linalg.norm(m, axis=1) <= 3 * (1 + 1e-12)).all()
for C in c:
    assert (C == C.T).all()
    ev = np.linalg.eigvalsh(C)
    assert ev.min() >= 1e-3 * (1 - 1e-9) and ev.max() <= 9 + 1e-3 + 1e-9, ev
v = load("d.tns")[0]["gmm/0/covs"]
assert v.shape == (3, 3) and (v >= 1e-3).all() and (v <= 9 + 1e-3 + 1e-12).all()
EOF
}

@test "DP-EM --by-label releases every class and priors near the class frequencies" {
	gmm-fit -q --sigma 0.5 --clip 8 -k 2 --iters 4 --by-label --classes 3 --stats mix.tns > o.tns
	# The priors come from released counts with noise of sd about 0.9
	# per count: within 0.01 of the frequencies (far beyond 6 sd).
	$PY - <<'EOF'
from load import *
T, M, S, E = load("o.tns")
X, y = mix()
pri = np.array(S["gmm.priors"].split(","), float)
assert np.abs(pri - np.bincount(y) / len(y)).max() < 0.01, pri
for c in range(3):
    assert T["gmm/%d/stats" % c].shape == (4, 2, 1 + 3 + 6)
    assert T["gmm/%d/covs" % c].shape == (2, 3, 3)
EOF
}

@test "DP-EM's released statistics carry noise of the stated variance" {
	# K = 2, one iteration from public means: the exact statistics are
	# computed here from the start (weights 1/2, those means, covariances
	# B^2/d I) and subtracted.  4000 releases, fixed seed; each of the 12
	# chi-square checks fails with probability 2e-8 and each of the 12
	# mean checks with 2e-9 when the noise is right: 3e-7 in all.
	gmm-fit -q --sigma 0.7 --clip 3 -k 2 --iters 1 --init-means init2.tns --stats --audit-repeat 4000 -S 21 small.tns > a.tns 2> /dev/null
	$PY - <<'EOF'
from load import *
from scipy.stats import chi2
from scipy.special import logsumexp
T, M, S, E = load("a.tns")
X, _ = small()
B = 3.0
X = clip(X, B * (1 - 10 * 2.0 ** -52))
M0 = np.array([[1.0, 1.0], [-1.0, -1.0]])
var = B * B / 2
lp = -((X[:, None, :] - M0[None]) ** 2).sum(2) / (2 * var)   # common terms cancel
R = np.exp(lp - logsumexp(lp, axis=1)[:, None])
want = []
for k in range(2):
    r = R[:, k]
    S2 = (r[:, None, None] * X[:, :, None] * X[:, None, :]).sum(0)
    want.append(np.concatenate([[r.sum()], r @ X, S2[np.triu_indices(2)]]))
want = np.array(want)                                   # 2 x 6
N = 4000
Z = np.array([T["gmm/0/stats/%d" % i][0] for i in range(N)]) - want
sd = np.array([float(E["param.sigma_count"])] + [float(E["param.sigma_sum"])] * 2
              + [float(E["param.sigma"])] * 3)
lo, hi = chi2.ppf(1e-8, N), chi2.isf(1e-8, N)
for k in range(2):
    for j in range(6):
        v = Z[:, k, j] / sd[j]
        q = (v ** 2).sum()
        assert lo <= q <= hi, (k, j, q / N)
        assert abs(v.mean()) * N ** 0.5 < 6, (k, j, v.mean())
assert S["dp.audit"] == "4000" and E["param.audit_releases"] == "4000"
o = np.array(E["orders"].split(","), float)
r = np.array(E["rdp"].split(","), float)
assert np.allclose(r, N * o / (2 * float(E["param.noise_multiplier"]) ** 2), rtol=1e-12)
EOF
}

# ---- the privacy audit (tests/audit.bash) ----

# canary_audit [OPTION...]: D is two zero rows, D' the same and a canary
# 1000 B long, clipped to B = 4 along the first feature.  One iteration
# of one component (responsibilities 1, whatever the start) releases the
# count, the sums and the upper triangle of the second moments; the
# canary moves them by 1, (B, 0) and (B^2, 0, 0).  The projection is the
# likelihood-ratio statistic sum_p v_p . x_p / sigma_p^2, whose shift in
# standard deviations is the mechanism's mu.
canary_audit() {
	featurize -q --no-label --dataset can "$FX/canary-d.csv" > d.tns
	featurize -q --no-label --dataset can "$FX/canary-d2.csv" > d2.tns
	gmm-fit -q --sigma 1 --clip 4 -k 1 --iters 1 --stats --audit-repeat 10000 -S 31 "$@" d.tns > a.tns 2> /dev/null
	gmm-fit -q --sigma 1 --clip 4 -k 1 --iters 1 --stats --audit-repeat 10000 -S 32 "$@" d2.tns > a2.tns 2> /dev/null
	for f in a a2; do
		$PY - $f.tns > $f.p <<'EOF'
import sys
from load import *
T, M, S, E = load(sys.argv[1])
sc, ss, sm = (float(E["param.sigma" + p]) for p in ("_count", "_sum", ""))
B = 4.0
for r in range(int(S["dp.audit"])):
    x = T["gmm/0/stats/%d" % r][0, 0]
    print(repr(x[0] / sc ** 2 + B * x[1] / ss ** 2 + B * B * x[3] / sm ** 2))
EOF
	done
}

@test "the per-iteration canary passes the Gaussian audit" {
	canary_audit
	mu=$($PY -c 'from load import *; print(1 / float(load("a.tns")[3]["param.noise_multiplier"]))')
	run -0 --separate-stderr audit_mu_lb a.p a2.p
	audit_le "$output" "$mu"
	audit_gt "$output" 0.5		# and the audit is not vacuous
}

@test "the audit catches second moments calibrated to B instead of B^2" {
	# The broken variant's ledger still claims mu = 1; its true mu is
	# sqrt(1/3 + 1/3 + 16/3) = 2.45.
	PRIVADA_TEST_UNSAFE=1 canary_audit --unsafe-test-miscalibrate moments-b
	run -0 --separate-stderr audit_mu_lb a.p a2.p
	audit_gt "$output" 1
}

@test "gmm-fit refuses --unsafe-test-miscalibrate without PRIVADA_TEST_UNSAFE=1" {
	run -64 --separate-stderr gmm-fit --sigma 1 --clip 1 --unsafe-test-miscalibrate moments-b small.tns
	refute_output
	[[ $stderr == "gmm-fit: --unsafe-test-miscalibrate is refused unless PRIVADA_TEST_UNSAFE=1"* ]]
}

@test "DP-EM gives the same output for the same seed and marks it seeded" {
	gmm-fit -q --sigma 1 --clip 3 -k 2 -S 7 small.tns > a.tns 2> err
	grep -q -- "--seed 7: the noise is reproducible and this output is NOT private" err
	gmm-fit -q --sigma 1 --clip 3 -k 2 -S 7 small.tns > b.tns 2> /dev/null
	gmm-fit -q --sigma 1 --clip 3 -k 2 -S 8 small.tns > c.tns 2> /dev/null
	same_but_ids a.tns b.tns
	! same_but_ids a.tns c.tns 2> /dev/null
	$PY -c 'from load import *; assert load("a.tns")[3]["seeded"] == "true"'
}

# ---- sampling ----

@test "gmm-fit sample draws labelled rows with the model's classes, means and covariances" {
	gmm-fit -q --sigma 0 --by-label -k 1 mix.tns > model.tns
	gmm-fit sample --model model.tns --n 30000 -S 5 > s.tns
	# 30000 rows: class frequencies within 6 binomial standard errors,
	# class means within 6 standard errors per coordinate, covariance
	# entries within 0.1 (about 6 standard errors): 1e-7 in all.
	$PY - <<'EOF'
from load import *
T, M, S, E = load("s.tns")
mod = load("model.tns")
X, y = T["X"], T["y"]
assert X.dtype == np.float32 and X.shape == (30000, 3) and y.dtype == np.int32
pri = np.array(mod[2]["gmm.priors"].split(","), float)
f = np.bincount(y, minlength=3) / 30000
assert (np.abs(f - pri) < 6 * np.sqrt(pri * (1 - pri) / 30000)).all(), (f, pri)
for c in range(3):
    Xc = X[y == c].astype(float)
    m, C = mod[0]["gmm/%d/means" % c][0], mod[0]["gmm/%d/covs" % c][0]
    se = np.sqrt(np.diag(C) / len(Xc))
    assert (np.abs(Xc.mean(0) - m) < 6 * se).all(), c
    assert np.abs(np.cov(Xc, rowvar=False) - C).max() < 0.1, c
assert S["dp.raw.mix"] == "aggregate"          # the model's ledger, copied
assert S["prov.tool"] == "gmm-fit"
EOF
}

@test "gmm-fit sample copies a DP model's ledger without a new release" {
	gmm-fit -q --sigma 1 --clip 4 -k 2 --by-label --classes 3 mix.tns > model.tns
	gmm-fit sample --model model.tns --n 100 -S 1 > a.tns
	gmm-fit sample --model model.tns --n 100 -S 1 > b.tns
	gmm-fit sample --model model.tns --n 100 -S 2 > c.tns
	cmp a.tns b.tns
	! cmp -s a.tns c.tns
	$PY - <<'EOF'
from load import *
Sm = load("model.tns")[2]
Ss = load("a.tns")[2]
rel = lambda S: {k: v for k, v in S.items() if k.startswith("dp.")}
assert rel(Sm) == rel(Ss) and rel(Sm), (rel(Sm), rel(Ss))
assert set(load("a.tns")[0]["y"]) <= {0, 1, 2}
EOF
}

# Issue 15: fails on d8f2bef, which said "gmm.label_names and gmm.classes
# disagree" of a value that is not JSON at all.
@test "gmm-fit sample reports a malformed gmm.label_names as malformed" {
	tns from-csv --header --name X "$FX/small.csv" > s.tns
	run -0 gmm-fit -q --sigma 0 -k 1 --dataset s --assume-raw -o m.tns s.tns
	run -0 tns meta set -i m.tns -o bad.tns 'gmm.label_names=["a",'
	run -65 --separate-stderr gmm-fit sample --model bad.tns --n 2 -o o.tns
	refute_output
	[ "$stderr" = "gmm-fit: bad.tns: --model: gmm.label_names is malformed: not a JSON array of strings" ]
}

# ---- progress (issue 15) ----
# Fail on the code before issue 15: gmm-fit showed no progress at all.

@test "gmm-fit shows EM progress on a terminal, with a rate, an ETA and the log-likelihood" {
	run -0 on_tty gmm-fit --sigma 0 --by-label -k 2 --iters 30 -S 1 -o m.tns mix.tns
	[[ $output == *"gmm-fit: class 0: EM iterations 30/30 (100%) "*"/s ETA 0:00 log-likelihood "* ]]
	[[ $output == *"class 2: EM iterations"* ]]
}

@test "gmm-fit shows the progress of every --restarts start" {
	run -0 on_tty gmm-fit --sigma 0 -k 2 --restarts 2 -S 1 -o m.tns small.tns
	[[ $output == *"class 0: start 1/2: EM iterations "* ]]
	[[ $output == *"class 0: start 2/2: EM iterations "* ]]
}

@test "gmm-fit shows DP-EM progress with a rate and an ETA but no statistic" {
	run -0 on_tty gmm-fit -k 2 --iters 10 --clip 20 -e 1 -d 1e-5 -S 1 -o m.tns mix.tns
	[[ $output == *"gmm-fit: DP-EM iterations 10/10 (100%) "*"/s ETA 0:00"* ]]
	[[ $output != *"log-likelihood"* ]]
	[[ $output != *"loss"* ]]
}

@test "gmm-fit shows no progress with -q or when stderr is not a terminal" {
	run -0 on_tty gmm-fit -q --sigma 0 -k 2 --iters 30 -S 1 -o m.tns mix.tns
	[[ $output != *"EM iterations"* ]]
	run -0 --separate-stderr gmm-fit --sigma 0 -k 2 --iters 30 -S 1 -o m.tns mix.tns
	[[ $stderr != *"EM iterations"* ]]
}
