#!/usr/bin/env bats
# covest: differentially private covariance.  Outputs are read back with
# tests/vectors/specread.py (an independent reader written from the spec)
# and compared with numpy.  Statistical tests fix their seeds; the false
# failure rate of each is stated next to it (at most 1e-6 in all).

load test_helper
load audit

FX="$DATA/covest"

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	featurize --no-label --dataset cv --dtype f64 "$FX/x.csv" > x.tns
	featurize --no-label --dataset cv "$FX/x.csv" > x32.tns
	featurize --no-label --header no --dataset priv --dtype f64 "$FX/priv8.csv" > p8.tns
	featurize --no-label --header no --dataset pub --dtype f64 "$FX/pub.csv" > pub.tns
	tns from-csv --name mean "$FX/mean.csv" > mean.tns
	# Load a covest output: T[name] = numpy array, M[name] = tensor
	# metadata, S = stream metadata, E = the ledger entry's fields.
	cat > load.py <<EOF
import subprocess, sys
import numpy as np
sys.path.insert(0, "$TOP/tests/vectors")
import fpsum
from tnsload import read, release
def load(path):
    T, M, S = read(path); return T, M, S, release(S)
def X(path="$FX/x.csv", skip=1):
    return np.loadtxt(path, delimiter=",", skiprows=skip, ndmin=2)
def clip(X, C):
    n = np.linalg.norm(X, axis=1)
    return X * np.minimum(1, C / np.maximum(n, 1e-300))[:, None]
def rel(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)
EOF
}

setup() {
	cd "$BATS_FILE_TMPDIR"
	export PYTHONPATH="$BATS_FILE_TMPDIR"
}

# ---- the battery ----

@test "covest --help prints the usage on stdout and exits 0" {
	run -0 --separate-stderr covest --help
	[[ ${lines[0]} == "usage: covest "* ]]
	[[ $output == *"--subspaces HOW"* ]]
	[ -z "$stderr" ]
}

@test "covest --help synopsis matches the man page" {
	synopsis_matches covest
}

@test "covest --version prints the version" {
	run -0 covest --version
	[[ $output == "covest (privada) "[0-9]* ]]
}

@test "covest rejects an unknown option with 64 and usage on stderr" {
	run -64 --separate-stderr covest --bogus --sigma 1 --clip 1 x.tns
	refute_output
	[[ $stderr == *"usage: covest "* ]]
}

@test "covest refuses to spend budget without privacy parameters" {
	run -64 --separate-stderr covest --clip 1 x.tns
	refute_output
	[[ $stderr == "covest: no privacy parameters: give --epsilon and --delta, or --sigma"* ]]
	run -64 --separate-stderr covest --epsilon 1 --clip 1 x.tns
	refute_output
	[[ $stderr == "covest: --epsilon and --delta go together"* ]]
	run -64 --separate-stderr covest --epsilon 1 --delta 1e-5 x.tns
	refute_output
	[[ $stderr == "covest: --clip is required"* ]]
}

@test "covest quotes a bad option value" {
	run -64 --separate-stderr covest --epsilon 0,5 --delta 1e-5 --clip 1 x.tns
	refute_output
	[[ $stderr == "covest: invalid --epsilon '0,5'"* ]]
	run -64 --separate-stderr covest --sigma 1 --clip -1 x.tns
	refute_output
	[[ $stderr == "covest: invalid --clip '-1'"* ]]
	run -64 --separate-stderr covest --sigma 1 --clip 1 --subspaces random:x x.tns
	refute_output
	run -64 --separate-stderr covest --sigma 1 --clip 1 --subspaces blocks x.tns
	refute_output
	[[ $stderr == "covest: invalid --subspaces 'blocks': expected none, random:M[:SEED], from:FILE or select[:K]"* ]]
	run -64 --separate-stderr covest --sigma 1 --clip 1 --subspaces random:2:-1 x.tns
	refute_output
	[[ $stderr == "covest: invalid --subspaces 'random:2:-1': SEED must be an unsigned 64-bit integer"* ]]
	run -64 --separate-stderr covest --sigma 1 --clip 1 --subspaces random:0:1 x.tns
	[[ $stderr == "covest: invalid --subspaces 'random:0:1': M must be an integer from 1 to 16384"* ]]
	run -64 --separate-stderr covest --sigma 1 --clip 1 --subspaces from:- x.tns
	refute_output
	[[ $stderr == "covest: invalid --subspaces 'from:-': from: needs a file, not stdin"* ]]
	run -64 --separate-stderr covest --epsilon 1 --delta 1 --clip 1 x.tns
	refute_output
	run -64 --separate-stderr covest --sigma 1 --clip 1 --sampler foo x.tns
	refute_output
	[[ $stderr == "covest: invalid --sampler 'foo': expected exact or fast"* ]]
}

@test "covest rejects inconsistent options with 64" {
	run -64 --separate-stderr covest --sigma 1 --epsilon 1 --delta 1e-5 --clip 1 x.tns
	[[ $stderr == "covest: --epsilon and --sigma exclude each other"* ]]
	run -64 --separate-stderr covest --sigma 1 --clip 1 --select-on pub.tns x.tns
	[[ $stderr == "covest: --select-on needs --subspaces select"* ]]
	run -64 --separate-stderr covest --sigma 1 --clip 1 --split 1,1,0 x.tns
	[[ $stderr == "covest: invalid --split: the count is released and needs a positive weight"* ]]
	run -64 --separate-stderr covest --sigma 1 --clip 1 --mean zero --split 1,1,1 x.tns
	[[ $stderr == "covest: invalid --split: the sum is not released"* ]]
	run -64 --separate-stderr covest --sigma 1 --clip 1 --subspaces random:7 x.tns
	[[ $stderr == "covest: invalid --subspaces 'random:7': X has only 6 features"* ]]
	run -64 --separate-stderr covest --sigma 1 --calibration agm --clip 1 x.tns
	refute_output
}

@test "covest refuses --select-on the private input itself" {
	run -64 --separate-stderr covest --sigma 1 --clip 1 --subspaces select --select-on x.tns x.tns
	refute_output
	[[ $stderr == *"'x.tns' is the input itself"* ]]
}

@test "covest rejects garbage and truncated input with 65 and empty stdout" {
	printf 'not a tensor stream\n' > garbage.tns
	run -65 --separate-stderr covest --sigma 1 --clip 1 garbage.tns
	refute_output
	[[ $stderr == "covest: garbage.tns: offset 0: "* ]]
	head -c 300 x.tns > cut.tns
	run -65 --separate-stderr covest --sigma 1 --clip 1 cut.tns
	refute_output
	[[ $stderr == "covest: cut.tns: "* ]]
}

@test "covest rejects a wrong dtype, shape or a missing tensor with 65" {
	printf '1,2\n3,4\n' > i.csv
	tns from-csv --dtype i32 --name X i.csv > i32.tns
	run -65 --separate-stderr covest --sigma 1 --clip 1 --dataset cv i32.tns
	refute_output
	[ "$stderr" = "covest: i32.tns: tensor 'X' is i32: covest reads f32 or f64" ]
	run -65 --separate-stderr covest --sigma 1 --clip 1 --tensor y x.tns
	refute_output
	[ "$stderr" = "covest: x.tns: no tensor 'y' (name the rows with --tensor)" ]
	run -65 --separate-stderr covest --sigma 1 --clip 1 --mean mean.tns p8.tns
	refute_output
	[ "$stderr" = "covest: mean.tns: --mean: tensor 'mean' must hold the 8 values of the mean" ]
}

@test "covest reports a missing input with 66 and /dev/full with 74" {
	run -66 --separate-stderr covest --sigma 1 --clip 1 no-such.tns
	refute_output
	[[ $stderr == "covest: no-such.tns: No such file or directory" ]]
	run -74 --separate-stderr bash -c 'covest --sigma 1 --clip 1 x.tns > /dev/full'
}

@test "covest refuses to write to a terminal" {
	command -v script > /dev/null || skip "no script(1)"
	run -64 script -qec "covest --sigma 1 --clip 1 $BATS_FILE_TMPDIR/x.tns" /dev/null
}

# ---- known answers, without noise ----

@test "covest --sigma 0 equals numpy: covariance, mean, count" {
	run -0 --separate-stderr covest --sigma 0 x.tns -o o.tns
	[[ $stderr == *"--sigma 0: no noise: the output is NOT private"* ]]
	$PY - <<'EOF'
from load import *
T, M, S, E = load("o.tns")
x = X()
assert sorted(T) == ["count", "cov/0", "mean/0", "subspace/0"], sorted(T)
assert T["count"] == 40
assert (T["subspace/0"] == np.arange(6)).all()
assert rel(T["mean/0"], x.mean(0)) < 1e-10
C = np.cov(x, rowvar=False, bias=True)
assert rel(T["cov/0"], C) < 1e-10, rel(T["cov/0"], C)
assert M["cov/0"]["cov.centred"] == "true" and M["cov/0"]["cov.divisor"] == "40"
EOF
}

@test "covest --sigma 0 writes no release and marks the output aggregate" {
	covest -q --sigma 0 x.tns > o.tns
	$PY - <<'EOF'
from load import *
T, M, S, E = load("o.tns")
assert S["dp.raw.cv"] == "aggregate", S
assert not E, E
EOF
}

@test "covest reads f32 rows" {
	covest -q --sigma 0 x32.tns > o.tns
	$PY - <<'EOF'
from load import *
T, M, S, E = load("o.tns")
x = X().astype(np.float32).astype(np.float64)
assert rel(T["cov/0"], np.cov(x, rowvar=False, bias=True)) < 1e-10
assert rel(T["mean/0"], x.mean(0)) < 1e-10
EOF
}

@test "covest clips rows to norm C before accumulating" {
	covest -q --sigma 0 --clip 12 x.tns > o.tns
	$PY - <<'EOF'
from load import *
T, M, S, E = load("o.tns")
x = X()
n = np.linalg.norm(x, axis=1)
assert (n > 12).any() and (n < 12).any()     # the test clips some rows
c = clip(x, 12)
assert rel(T["cov/0"], np.cov(c, rowvar=False, bias=True)) < 1e-10
assert rel(T["mean/0"], c.mean(0)) < 1e-10
EOF
}

@test "covest --mean zero gives the second moments" {
	covest -q --sigma 0 --clip 12 --mean zero x.tns > o.tns
	$PY - <<'EOF'
from load import *
T, M, S, E = load("o.tns")
c = clip(X(), 12)
assert "mean/0" not in T
assert rel(T["cov/0"], c.T @ c / 40) < 1e-10
assert M["cov/0"]["cov.centred"] == "false"
EOF
}

@test "covest --mean FILE centres on a public mean before clipping" {
	covest -q --sigma 0 --clip 4 --mean mean.tns x.tns > o.tns
	$PY - <<'EOF'
from load import *
T, M, S, E = load("o.tns")
m0 = np.array([1, -2, 0.5, 3, 0, 10.0])
c = clip(X() - m0, 4)
assert rel(T["cov/0"], c.T @ c / 40) < 1e-10
assert (T["mean/0"] == m0).all()
assert M["cov/0"]["cov.centred"] == "true"
EOF
}

@test "covest --subspaces random:M gives near-equal blocks and their covariances" {
	covest -q --sigma 0 --clip 12 --subspaces random:4 -S 11 x.tns > o.tns
	covest -q --sigma 0 --clip 12 --subspaces random:4 -S 12 x.tns > o2.tns
	$PY - <<'EOF'
from load import *
T, M, S, E = load("o.tns")
c = clip(X(), 12)
C, m = np.cov(c, rowvar=False, bias=True), c.mean(0)
idx = [T["subspace/%d" % i] for i in range(4)]
assert sorted(len(i) for i in idx) == [1, 1, 2, 2]
assert sorted(np.concatenate(idx)) == list(range(6))
for i, ix in enumerate(idx):
    assert (np.diff(ix) > 0).all()
    assert rel(T["cov/%d" % i], C[np.ix_(ix, ix)]) < 1e-10
    assert rel(T["mean/%d" % i], m[ix]) < 1e-10
T2 = load("o2.tns")[0]
assert any((T2["subspace/%d" % i].shape != idx[i].shape or
            (T2["subspace/%d" % i] != idx[i]).any()) for i in range(4))
EOF
}

# partition FILE: the blocks of a covest stream, as a Python list of lists.
partition() {
	$PY -c 'import sys
from load import *
T = load(sys.argv[1])[0]
n = len([k for k in T if k.startswith("subspace/")])
print([list(map(int, T["subspace/%d" % i])) for i in range(n)])' "$1"
}

@test "covest --subspaces random:M:SEED draws one public partition for every input" {
	# No --seed: the noise is private, only the partition is fixed.
	covest -q --sigma 1 --clip 4 --subspaces random:3:17 p8.tns > a.tns
	covest -q --sigma 1 --clip 4 --subspaces random:3:17 pub.tns > b.tns
	covest -q --sigma 0 --clip 4 --subspaces random:3 -S 17 p8.tns > c.tns 2> /dev/null
	covest -q --sigma 1 --clip 4 --subspaces random:3:18 p8.tns > d.tns
	pa=$(partition a.tns)
	[ "$(partition b.tns)" = "$pa" ]
	[ "$(partition c.tns)" = "$pa" ]	# as --seed 17 draws it
	[ "$(partition d.tns)" != "$pa" ]
	$PY - "$pa" <<'EOF'
import sys
from load import *
p = eval(sys.argv[1])
assert sorted(map(len, p)) == [2, 3, 3] and sorted(sum(p, [])) == list(range(8))
T, M, S, E = load("a.tns")
assert E["seeded"] == "false" and S["cov.subspaces"] == "random:3:17", (E, S)
EOF
}

@test "covest --subspaces from:FILE releases the blocks of another stream" {
	covest -q --epsilon 1 --delta 1e-5 --clip 4 --subspaces random:3:5 pub.tns > src.tns
	psdshrink -q src.tns > src.psd.tns
	covest -q --sigma 0 --clip 4 --subspaces from:src.psd.tns p8.tns > t0.tns 2> /dev/null
	covest -q --epsilon 1 --delta 1e-5 --clip 4 --subspaces from:src.psd.tns p8.tns > t1.tns
	[ "$(partition t0.tns)" = "$(partition src.tns)" ]
	[ "$(partition t1.tns)" = "$(partition src.tns)" ]
	$PY - "$FX/priv8.csv" <<'EOF'
import sys
from load import *
T, M, S, E = load("t0.tns")
c = clip(X(sys.argv[1], 0), 4)
C, m = np.cov(c, rowvar=False, bias=True), c.mean(0)
for i in range(3):
    ix = T["subspace/%d" % i]
    assert rel(T["cov/%d" % i], C[np.ix_(ix, ix)]) < 1e-10
    assert rel(T["mean/%d" % i], m[ix]) < 1e-10
assert S["cov.subspaces"] == "from:src.psd.tns"
# The source's release comes along with its partition.
ids = lambda S: {k.split(".")[2] for k in S if k.startswith("dp.release.")}
src, t1 = ids(load("src.tns")[2]), ids(load("t1.tns")[2])
assert len(src) == 1 and len(t1) == 2 and src < t1, (src, t1)
EOF
	# ... and is composed once: pub spends epsilon 1, not 2.
	run -0 --separate-stderr rdp-account ledger --format tsv --delta 1e-5 src.tns t1.tns
	[ "$(awk -F '\t' '$1 == "pub" { print $2 }' <<< "$output")" = 1 ]
	awk -F '\t' '$1 == "pub" || $1 == "priv" { n++; if ($3 > 1 + 1e-9) bad = 1 }
	    END { exit bad || n != 2 }' <<< "$output"
}

@test "covest --subspaces from: keeps a partition's order and may leave features out" {
	$PY -c 'import numpy as np
np.save("s0.npy", np.array([5, 1, 3], dtype=np.int64))
np.save("s1.npy", np.array([0, 6], dtype=np.int64))'
	tns from-npy --name subspace/0 s0.npy > s0.tns
	tns from-npy --name subspace/1 s1.npy > s1.tns
	tns cat s0.tns s1.tns > part.tns
	covest -q --sigma 0 --clip 4 --subspaces from:part.tns p8.tns > o.tns 2> /dev/null
	$PY - "$FX/priv8.csv" <<'EOF'
import sys
from load import *
T, M, S, E = load("o.tns")
assert sorted(T) == ["count", "cov/0", "cov/1", "mean/0", "mean/1",
                     "subspace/0", "subspace/1"], sorted(T)
c = clip(X(sys.argv[1], 0), 4)
C = np.cov(c, rowvar=False, bias=True)
for i, ix in enumerate(([5, 1, 3], [0, 6])):
    assert list(T["subspace/%d" % i]) == ix
    assert rel(T["cov/%d" % i], C[np.ix_(ix, ix)]) < 1e-10
    assert (T["cov/%d" % i] == T["cov/%d" % i].T).all()
EOF
}

# mkpart OUT DTYPE BLOCK...: a stream of subspace/<i> tensors, one per
# BLOCK (comma-separated indices), of numpy dtype DTYPE.
mkpart() {
	local out=$1 dt=$2 i=0 b
	shift 2
	for b in "$@"; do
		$PY -c "import numpy as np; np.save('b.npy', np.array([$b], dtype=np.$dt))"
		tns from-npy --name "subspace/$i" b.npy > "b$i.tns"
		i=$((i + 1))
	done
	tns cat $(seq -f 'b%g.tns' 0 $((i - 1))) > "$out"
}

@test "covest --subspaces from: refuses blocks that do not fit the input" {
	mkpart wide.tns int64 0,1 2,8
	run -65 --separate-stderr covest --sigma 1 --clip 1 --subspaces from:wide.tns p8.tns
	refute_output
	[ "$stderr" = "covest: wide.tns: subspace/1 names feature 8, but X has 8 columns" ]
	mkpart twice.tns int64 0,1 1,2
	run -65 --separate-stderr covest --sigma 1 --clip 1 --subspaces from:twice.tns p8.tns
	refute_output
	[ "$stderr" = "covest: twice.tns: feature 1 is in two subspaces" ]
	mkpart f64.tns float64 0,1
	run -65 --separate-stderr covest --sigma 1 --clip 1 --subspaces from:f64.tns p8.tns
	refute_output
	[ "$stderr" = "covest: f64.tns: tensor 'subspace/0' is f64 with 1 dimensions: expected an i64 vector of columns" ]
	mkpart gap.tns int64 0 1 2
	tns pick -i gap.tns -o gap2.tns 'subspace/0' 'subspace/2'
	run -65 --separate-stderr covest --sigma 1 --clip 1 --subspaces from:gap2.tns p8.tns
	refute_output
	[[ $stderr == "covest: gap2.tns: no tensor 'subspace/1'"* ]]
	run -65 --separate-stderr covest --sigma 1 --clip 1 --subspaces from:pub.tns p8.tns
	refute_output
	[ "$stderr" = "covest: pub.tns: no subspace/<i> tensor (expected a covest or psdshrink stream)" ]
	# The partition of a wider input: p8's 8 features, x's 6 columns.
	covest -q --sigma 1 --clip 4 --subspaces random:2:3 p8.tns > p8.cov.tns
	run -65 --separate-stderr covest --sigma 1 --clip 4 --subspaces from:p8.cov.tns x.tns
	refute_output
	[[ $stderr == "covest: p8.cov.tns: subspace/"[01]" names feature "[67]", but X has 6 columns" ]]
	run -66 --separate-stderr covest --sigma 1 --clip 1 --subspaces from:no-such.tns p8.tns
	refute_output
}

@test "covest maps rows with non-finite values to zero rows" {
	{ cat "$FX/x.csv"; printf 'nan,1,2,3,4,5\n1,inf,1,1,1,1\n'; } > nf.csv
	tns from-csv --header --name X nf.csv > nf.tns
	run -0 --separate-stderr covest --sigma 0 --clip 12 --dataset cv nf.tns -o o.tns
	[[ $stderr == *"2 rows with non-finite values were taken as zero rows"* ]]
	$PY - <<'EOF'
from load import *
T, M, S, E = load("o.tns")
c = np.vstack([clip(X(), 12), np.zeros((2, 6))])
assert T["count"] == 42
assert rel(T["cov/0"], np.cov(c, rowvar=False, bias=True)) < 1e-10
EOF
	# With noise the number of such rows is private: never shown.
	run -0 --separate-stderr covest --sigma 1 --clip 12 --dataset cv --assume-raw nf.tns -o o.tns
	[[ $stderr != *non-finite* ]]
}

@test "covest checks --count-public against the rows and divides by it" {
	run -65 --separate-stderr covest -q --sigma 0 --count-public 41 x.tns
	refute_output
	[ "$stderr" = "covest: x.tns: tensor 'X' does not have the --count-public 41 rows" ]
	covest -q --sigma 0 --count-public 40 x.tns > o.tns
	$PY - <<'EOF'
from load import *
T, M, S, E = load("o.tns")
assert T["count"] == 40
assert rel(T["cov/0"], np.cov(X(), rowvar=False, bias=True)) < 1e-10
EOF
}

@test "covest --subspaces select without noise keeps one block" {
	covest -q --sigma 0 --subspaces select -S 5 x.tns > o.tns
	$PY - <<'EOF'
from load import *
T, M, S, E = load("o.tns")
assert (T["subspace/0"] == np.arange(6)).all() and "cov/1" not in T
assert rel(T["cov/0"], np.cov(X(), rowvar=False, bias=True)) < 1e-10
assert sorted(map(int, S["subspace.order"].split(","))) == list(range(6))
EOF
}

@test "forward selection on public data equals PRIMA's criterion with projections" {
	run -0 --separate-stderr covest --sigma 0.3 --clip 4 --subspaces select -S 3 --select-on pub.tns p8.tns -o o.tns
	[[ $stderr == *"--select-on pub.tns: the subspaces depend on this data, which is declared public"* ]]
	$PY - "$FX/pub.csv" <<'EOF'
import sys
from load import *
T, M, S, E = load("o.tns")
order = list(map(int, S["subspace.order"].split(",")))
tau = float(M["cov/0"]["cov.noise_sd"])
# tau is the noise sd of one covariance entry: sigma / released count
assert abs(tau - float(E["param.sigma"]) / T["count"]) <= 1e-12 * tau
P = clip(np.loadtxt(sys.argv[1], delimiter=","), 4)
P = P - P.mean(0)
n = len(P)
def err(B):          # criterion (3) per row: ||X - P_B X||_F^2 / n + |B| tau
    if not B:
        return (P ** 2).sum() / n
    A = P[:, B]
    Proj = A @ np.linalg.pinv(A.T @ A) @ A.T      # n x n, as in the paper
    return ((P - Proj @ P) ** 2).sum() / n + len(B) * tau
sizes, B = [], []
for f in order:
    if B and err(B + [f]) > err(B):
        sizes.append(len(B)); B = []
    B.append(f)
sizes.append(len(B))
got = [len(T["subspace/%d" % i]) for i in range(len(sizes))]
assert got == sizes and "subspace/%d" % len(sizes) not in T, (got, sizes)
assert 1 < len(sizes) < 8, sizes     # the test exercises both outcomes
o = 0
for i, k in enumerate(sizes):
    assert (T["subspace/%d" % i] == sorted(order[o:o + k])).all()
    o += k
EOF
}

@test "covest --subspaces select on the released covariance partitions the features" {
	covest -q --sigma 0.5 --clip 4 --subspaces select -S 9 p8.tns > o.tns
	covest -q --sigma 0.5 --clip 4 --subspaces select -S 9 p8.tns > o2.tns
	same_but_ids o.tns o2.tns
	$PY - <<'EOF'
from load import *
T, M, S, E = load("o.tns")
idx = [T[k] for k in sorted(T) if k.startswith("subspace/")]
assert sorted(np.concatenate(idx)) == list(range(8))
for k in T:
    if k.startswith("cov/"):
        i = k.split("/")[1]
        assert T[k].shape == (len(T["subspace/" + i]),) * 2
        assert (T[k] == T[k].T).all()
EOF
}

# ---- the release and its ledger ----

@test "covest gives the same output for the same seed and marks it seeded" {
	covest -q --sigma 1 --clip 12 -S 7 x.tns > a.tns 2> err
	# loud even with --quiet: it is about privacy
	grep -q -- "--seed 7: the noise is reproducible and this output is NOT private" err
	covest -q --sigma 1 --clip 12 -S 7 x.tns > b.tns 2> /dev/null
	covest -q --sigma 1 --clip 12 -S 8 x.tns > c.tns 2> /dev/null
	same_but_ids a.tns b.tns
	! same_but_ids a.tns c.tns 2> /dev/null
	covest -q --sigma 1 --clip 12 x.tns > d.tns
	$PY - <<'EOF'
from load import *
assert load("a.tns")[3]["seeded"] == "true"
assert load("d.tns")[3]["seeded"] == "false"
EOF
}

@test "covest's seeded noise does not depend on the number of threads" {
	# 800 features: the block's 320400 values are drawn in runs with
	# their own generators, early (while reading) or late, by 1 or more
	# threads.
	$PY -c 'import numpy as np; np.save("w.npy", np.random.default_rng(5).standard_normal((10, 800)))'
	tns from-npy --name X w.npy > w.tns
	set -- --clip 3 --mean zero --count-public 10 --dataset w --assume-raw
	OPENBLAS_NUM_THREADS=1 covest -q --sigma 1 "$@" -S 3 w.tns > a.tns 2> /dev/null
	OPENBLAS_NUM_THREADS=2 covest -q --sigma 1 "$@" -S 3 w.tns > b.tns 2> /dev/null
	same_but_ids a.tns b.tns
	covest -q --sigma 1 "$@" -S 4 w.tns > c.tns 2> /dev/null
	! same_but_ids a.tns c.tns 2> /dev/null
	covest -q --sigma 0 "$@" w.tns > e.tns 2> /dev/null
	# The noise of the 320400 values has sd sqrt(2) C^2 = 9 sqrt(2)
	# (--count-public: replace-one; the grid adds a relative 2e-5), by
	# chi-square and mean checks, each failing with probability 2e-8
	# when it is right.
	tns to-npy --tensor cov/0 -o a.npy a.tns
	tns to-npy --tensor cov/0 -o e.npy e.tns
	$PY - <<'EOF2'
import numpy as np
from scipy.stats import chi2
z = (np.load("a.npy") - np.load("e.npy")) * 10
v = z[np.triu_indices(800)]
n = v.size
q = (v ** 2).sum() / 162
assert chi2.ppf(1e-8, n) <= q <= chi2.isf(1e-8, n), q / n
assert abs(v.mean()) / (9 * 2 ** 0.5 / n ** 0.5) < 5.7
EOF2
}

@test "covest records the noise and the sensitivity in its ledger entry" {
	covest -q --sigma 2 --clip 3 --mean zero --count-public 40 x.tns > o.tns
	$PY - <<'EOF'
from load import *
T, M, S, E = load("o.tns")
assert "dp.raw.cv" not in S, S          # the row-local mark is released
assert E["dataset"] == "cv" and E["mechanism"] == "gaussian"
assert E["neighbours"] == "replace_one" and E["tool"] == "covest"
sens, sig = float(E["param.l2_sensitivity"]), float(E["param.sigma"])
s9 = 2 ** 0.5 * 9                       # --count-public: replace-one
assert s9 <= sens <= s9 * (1 + 1e-6), sens        # sqrt(2) C^2 plus the grid
assert abs(sig / (2 * sens) - 1) < 1e-9, sig
nm = float(E["param.noise_multiplier"])
assert 2 <= nm <= 2 * (1 + 1e-8), nm
o = np.array(E["orders"].split(","), float)
r = np.array(E["rdp"].split(","), float)
assert len(o) == 156 and np.allclose(r, o / (2 * nm ** 2), rtol=1e-12)
assert "param.sigma_count" not in E and "param.sigma_sum" not in E
assert T["count"] == 40
EOF
}

@test "covest charges the floating-point error of its sums to the sensitivity" {
	# fails on 7b23f82: the ledger charged exactly C (plus the grid) for
	# the sum, but the computed sums of the neighbours D and D' below
	# (tests/vectors/fpsum.py) differ by C + 1991 ulp(C): their float
	# rounding depends on the other rows (Casacuberta et al., CCS 2022).
	$PY - <<'EOF'
from load import fpsum
d, d2 = fpsum.neighbours()
for name, rows in (("adv", d), ("adv2", d2)):
    open(name + ".csv", "w").write("".join("%r\n" % x for x in rows))
EOF
	featurize -q --no-label --header no --dtype f64 --dataset adv adv.csv > adv.tns
	featurize -q --no-label --header no --dtype f64 --dataset adv adv2.csv > adv2.tns
	covest -q --sigma 0 --clip 1 adv.tns > n1.tns
	covest -q --sigma 0 --clip 1 adv2.tns > n2.tns
	covest -q --sigma 1 --clip 1 adv.tns > dp.tns
	covest -q --sigma 1 --clip 1 --count-public 4001 adv.tns > cp.tns
	$PY - <<'EOF'
from load import *
from fractions import Fraction as F
d, d2 = fpsum.neighbours()
s1 = fpsum.serial_sum(fpsum.clip_row(x, 1.0) for x in d)
s2 = fpsum.serial_sum(fpsum.clip_row(x, 1.0) for x in d2)
gap = F(s2) - F(s1)
assert gap == 1 + F(1991, 2 ** 52), gap      # the attack: more than C
# covest computes those sums: its means times the counts show the gap
# (up to the few ulps of the division and the product).
(T1, _, _, _), (T2, _, _, _) = load("n1.tns"), load("n2.tns")
assert T1["count"] == 4001 and T2["count"] == 4002
shown = F(float(T2["mean/0"][0]) * 4002) - F(float(T1["mean/0"][0]) * 4001)
assert abs(shown - gap) < F(1, 2 ** 49), float(shown - gap)
for f, n in (("dp.tns", fpsum.ROWS), ("cp.tns", 4001)):
    E = load(f)[3]
    e = fpsum.margin(n, 2)
    # the sensitivity charged before the grid (noise_sens_l2: delta2 +
    # grid sqrt(values), one value each here) covers the attack and the
    # margin of n rows
    for part in ("_sum", ""):
        d2c = F(float(E["param.l2_sensitivity" + part])) - \
            F(float(E["param.grid" + part]))
        assert d2c > gap and d2c >= 1 + e, (f, part, float(d2c))
    assert float(E["param.rows_bound"]) == n
    assert F(float(E["param.fp_margin"])) >= e
EOF
}

@test "covest refuses more rows than the public bound of its float margin" {
	# The bound is public (FPSUM_MAX_ROWS, or --count-public): more rows
	# would break the margin charged.  2^22 + 1 rows of one value.
	$PY -c 'import numpy as np; np.save("big.npy", np.zeros((2 ** 22 + 1, 1)))'
	tns from-npy --name X big.npy > big.tns
	run -65 --separate-stderr covest -q --sigma 1 --clip 1 --dataset big big.tns
	refute_output
	[[ $stderr == "covest: big.tns: tensor 'X' has more than 4194304 rows"* ]]
	# Without noise there is nothing to bound.
	covest -q --sigma 0 --clip 1 --dataset big big.tns > o.tns
}

@test "covest splits one Gaussian budget over second moments, sum and count" {
	covest -q --sigma 2 --clip 3 x.tns > o.tns
	covest -q --sigma 2 --clip 3 --split 2,1,1 x.tns > o2.tns
	$PY - <<'EOF'
from load import *
for f, w in (("o.tns", (0.8, 0.1, 0.1)), ("o2.tns", (0.5, 0.25, 0.25))):
    E = load(f)[3]
    mu2 = 0
    # second moments and sum carry the float margin of 2^22 rows (fpsum.py)
    e = float(fpsum.margin(fpsum.ROWS, 2))
    for part, sens0, wp in (("", 9 * (1 + e), w[0]), ("_sum", 3 * (1 + e), w[1]), ("_count", 1, w[2])):
        s = float(E["param.l2_sensitivity" + part])
        sig = float(E["param.sigma" + part])
        assert sens0 <= s <= sens0 * (1 + 1e-6)
        assert abs(float(E["param.weight" + ("_cov" if not part else part)]) - wp) < 1e-15
        # each part gets the share w of mu^2 = 1 / sigma^2
        assert abs((s / sig) ** 2 / (wp / 4) - 1) < 1e-8
        mu2 += (s / sig) ** 2
    assert abs(mu2 * 4 - 1) < 1e-8
EOF
}

# Issue 13, item 3: --count-public releases the exact count, which
# add/remove neighbours keep private; it is a replace-one release.  Fails
# on 7b23f82: the entry says add_remove with sensitivities C^2 and C.
# The sensitivities are recomputed here: sqrt(2) C^2 (1 + 2^-50) and 2 C,
# each widened by its grid g = 2^(floor(log2 sigma) - 24) times the square
# root of the number of values noised (21 and 6), and the parts' mu^2 add
# up to 1 / z^2.
@test "covest --count-public is a replace-one release, for D and for D plus one row" {
	{ cat "$FX/x.csv"; echo "1,2,3,4,5,6"; } > x41.csv
	featurize --no-label --dataset cv --dtype f64 x41.csv > x41.tns
	covest -q --sigma 2 --clip 3 --count-public 40 x.tns > o40.tns
	covest -q --sigma 2 --clip 3 --count-public 41 x41.tns > o41.tns
	run -65 --separate-stderr covest -q --sigma 2 --clip 3 --count-public 40 x41.tns
	refute_output
	[ "$stderr" = "covest: x41.tns: tensor 'X' does not have the --count-public 40 rows" ]
	run -64 --separate-stderr covest -q --sigma 2 --clip 3 --count-public 40 \
		--neighbours add-remove x.tns
	[[ $stderr == *"--count-public releases the exact count"*"implies --neighbours replace-one"* ]]
	$PY - <<'EOF'
from load import *
import math
for f, n in (("o40.tns", 40), ("o41.tns", 41)):
    T, M, S, E = load(f)
    assert E["neighbours"] == "replace_one", E
    assert T["count"] == n
    C, z = 3.0, 2.0
    mu2 = 0
    e = float(fpsum.margin(n, 2))	# the float margin for n public rows
    assert float(E["param.rows_bound"]) == n
    for part, d2, nent in (("", (math.sqrt(2) * (1 + 2 ** -50) + e) * C * C, 21),
                           ("_sum", (2 + e) * C, 6)):
        sig = float(E["param.sigma" + part])
        g = float(E["param.grid" + part])
        assert g == 2.0 ** (math.floor(math.log2(sig)) - 24), (g, sig)
        sens = float(E["param.l2_sensitivity" + part])
        want = d2 + g * math.sqrt(nent)
        assert want <= sens <= want * (1 + 1e-12), (part, sens, want)
        mu2 += (sens / sig) ** 2
    assert abs(mu2 * z * z - 1) < 1e-9, mu2
    assert "param.sigma_count" not in E
a, b = load("o40.tns")[3], load("o41.tns")[3]
# The same parameters for both sizes, equal but for the float margin (and
# what it widens), which comes from the declared count.
pa = {k for k in a if k.startswith("param.")}
assert pa == {k for k in b if k.startswith("param.")}
for k in pa - {"param.fp_margin", "param.rows_bound"}:
    x, y = float(a[k]), float(b[k])
    assert abs(x - y) <= 1e-9 * abs(x), (k, x, y)
EOF
}

@test "covest --neighbours replace-one doubles the sensitivity and keeps the count" {
	covest -q --sigma 2 --clip 3 --neighbours replace-one x.tns > o.tns
	$PY - <<'EOF'
from load import *
T, M, S, E = load("o.tns")
assert E["neighbours"] == "replace_one"
e = float(fpsum.margin(fpsum.ROWS, 2))
s = float(E["param.l2_sensitivity"])
assert (2 ** 0.5 + e) * 9 <= s <= (2 ** 0.5 + e) * 9 * (1 + 1e-6), s
assert (2 + e) * 3 <= float(E["param.l2_sensitivity_sum"]) <= (2 + e) * 3 * (1 + 1e-6)
assert "param.sigma_count" not in E and T["count"] == 40
EOF
}

@test "rdp-account reads the epsilon that covest was asked for" {
	command -v rdp-account > /dev/null || skip "rdp-account is not built"
	covest -q --epsilon 0.7 --delta 1e-6 --clip 3 --subspaces random:2 x.tns > o.tns
	run -0 --separate-stderr rdp-account ledger --format tsv --delta 1e-6 o.tns
	eps=$(awk -F '\t' '$1 == "cv" { print $3 }' <<< "$output")
	awk -v e="$eps" 'BEGIN { exit !(e <= 0.7 * (1 + 1e-12) && e >= 0.7 * (1 - 1e-6)) }'
}

@test "covest --calibration agm uses the analytic Gaussian noise multiplier" {
	covest -q --epsilon 1 --delta 1e-5 --calibration agm --clip 3 --mean zero --count-public 40 x.tns > o.tns
	$PY - <<'EOF'
from load import *
from scipy.stats import norm
from scipy.optimize import brentq
E = load("o.tns")[3]
# Balle and Wang 2018, Theorem 8: the smallest sigma with delta(eps) <= 1e-5
d = lambda s: norm.cdf(1 / (2 * s) - s) - np.e * norm.cdf(-1 / (2 * s) - s) - 1e-5
s = brentq(d, 0.1, 100, xtol=1e-14)
assert abs(float(E["param.noise_multiplier"]) / s - 1) < 1e-7, (E["param.noise_multiplier"], s)
EOF
}

@test "covest --sampler fast records its total variation and charges it on delta" {
	command -v rdp-account > /dev/null || skip "rdp-account is not built"
	covest -q --epsilon 1 --delta 1e-5 --clip 3 --sampler fast x.tns > f.tns
	covest -q --epsilon 1 --delta 1e-5 --clip 3 --mean zero --count-public 40 --sampler fast x.tns > g.tns
	covest -q --epsilon 60 --delta 1e-5 --clip 3 --sampler fast x.tns > h.tns
	covest -q --epsilon 1 --delta 1e-5 --clip 3 x.tns > e.tns
	covest -q --sigma 2 --clip 3 --audit-repeat 3 --sampler fast x.tns > a.tns
	$PY - <<'EOF'
import math
from fractions import Fraction
from load import *
from mpmath import mp, mpf, exp
mp.prec = 200
# The TV bound per value of lib/dp/noise_fast.h, recomputed from its
# construction: L tables (L - 1 of width 3K, one of width b, the largest
# K >= 2 with 3 K^L <= s, b^2 = (s^2 - 9 K^2 sum_{j<L-1} K^2j) / K^2(L-1)),
# each within T 2^-127 + 6 T^2 (T + 1) 2^-192, T = ceil(14 c) + 1 (the
# tails and the convolution terms are below 2^-127 and dropped; the C
# code rounds up by 1 + 2^-20), plus 4096 / 2^129 a value for the
# AES-CTR bits ("Random bits").
def table(c):
    T = math.ceil(14 * c) + 1
    return T * 2.0 ** -127 + 6 * T * T * (T + 1) * 2.0 ** -192
def tau(s):
    for L in range(2, 6):
        K = int((s / 3) ** (1 / L)) + 2
        while 3 * K ** L > s:
            K -= 1
        b2 = (Fraction(s) ** 2 - 9 * K * K * sum(Fraction(K) ** (2 * j)
            for j in range(L - 1))) / Fraction(K) ** (2 * (L - 1))
        if K >= 2 and 3 * K <= 2400 and math.sqrt(b2) <= 2400:
            return ((L - 1) * table(3 * K) + table(math.sqrt(b2)) +
                4096 * 2.0 ** -129)
# every value noised is charged at its part's scale S = ceil(sigma / grid)
def want_tv(E, parts, reps=1):
    return reps * sum(n * tau(math.ceil(float(E["param.sigma" + p]) /
        float(E["param.grid" + p]))) for p, n in parts)
def check_tv(E, parts, reps=1):
    w, tv = want_tv(E, parts, reps), float(E["tv"])
    assert w <= tv <= w * (1 + 1e-5), (tv, w)
E = load("f.tns")[3]
tv, te, dl = float(E["tv"]), float(E["tv_epsilon"]), float(E["delta"])
# 21 second moments, 6 sums, the count, each about 2^-112
check_tv(E, (("", 21), ("_sum", 6), ("_count", 1)))
assert 28 * 2.0 ** -114 < tv < 28 * 2.0 ** -110, tv
assert te == 32, te                     # at least NOISE_FAST_EPS_REF
want = (1 + exp(mpf(te))) * mpf(tv)
assert want <= dl <= want * (1 + 1e-12), (dl, want)
G = load("g.tns")[3]                    # the 21 second moments alone
check_tv(G, (("", 21),))
H = load("h.tns")[3]                    # charged at the epsilon asked for
assert float(H["tv_epsilon"]) == 60, H["tv_epsilon"]
A = load("a.tns")[3]                    # every release of an audit
check_tv(A, (("", 21), ("_sum", 6), ("_count", 1)), 3)
X = load("e.tns")[3]                    # exact: no TV, no delta
assert "tv" not in X and float(X.get("delta", 0)) == 0, X
EOF
	# the accountant adds the charge to the releases' delta, and the
	# calibration at delta less it still gives the epsilon asked for
	run -0 --separate-stderr rdp-account ledger --format tsv --delta 1e-5 f.tns
	line=$(awk -F '\t' '$1 == "cv"' <<< "$output")
	awk -F '\t' '{ exit !($6 > 0 && $3 <= 1 * (1 + 1e-12) && $3 >= 1 - 1e-6) }' <<< "$line"
	run -0 --separate-stderr rdp-account ledger --format tsv --delta 1e-5 e.tns
	awk -F '\t' '$1 == "cv" { exit !($6 == 0) }' <<< "$output"
	# a charge that reaches delta is refused: e^100 2^-107 > 1e-5
	run -64 --separate-stderr covest --epsilon 100 --delta 1e-5 --clip 3 --sampler fast x.tns
	refute_output
	[[ $stderr == "covest: --sampler fast: its charge "*" on delta exceeds --delta 1e-05"* ]]
}

@test "covest --sampler fast: seeded output repeats, and the noise is N(0, sigma^2)" {
	# 800 features: 320400 second moments drawn in runs by several
	# threads, as the threads test below for the exact sampler.
	$PY -c 'import numpy as np; np.save("w.npy", np.random.default_rng(5).standard_normal((10, 800)))'
	tns from-npy --name X w.npy > w.tns
	set -- --clip 3 --mean zero --count-public 10 --dataset w --assume-raw
	OPENBLAS_NUM_THREADS=1 covest -q --sigma 1 --sampler fast "$@" -S 3 w.tns > a.tns 2> /dev/null
	OPENBLAS_NUM_THREADS=2 covest -q --sigma 1 --sampler fast "$@" -S 3 w.tns > b.tns 2> /dev/null
	same_but_ids a.tns b.tns
	covest -q --sigma 1 --sampler fast "$@" -S 4 w.tns > c.tns 2> /dev/null
	! same_but_ids a.tns c.tns 2> /dev/null
	covest -q --sigma 1 "$@" -S 3 w.tns > xs.tns 2> /dev/null
	! same_but_ids a.tns xs.tns 2> /dev/null   # another sampler
	covest -q --sigma 0 "$@" w.tns > e.tns 2> /dev/null
	tns to-npy --tensor cov/0 -o a.npy a.tns
	tns to-npy --tensor cov/0 -o e.npy e.tns
	# (noised - clean) / sd, sd = sqrt(2) C^2 (replace-one), against
	# N(0, 1) by scipy: a chi-square of the variance, the mean and a KS
	# test of the shape, each failing with probability 1e-8 when it is
	# right.  The mutation: the same statistics on the noise rescaled by
	# 3% must fail (the variance's chi-square does, by about 17 sd).
	$PY - <<'EOF2'
import numpy as np
from scipy.stats import chi2, kstest
z = (np.load("a.npy") - np.load("e.npy")) * 10
v = z[np.triu_indices(800)] / (9 * 2 ** 0.5)
n = v.size
def ok(v):
    q = (v ** 2).sum()
    return (chi2.ppf(1e-8, n) <= q <= chi2.isf(1e-8, n) and
        abs(v.mean()) * n ** 0.5 < 5.73 and kstest(v, "norm").pvalue > 1e-8)
assert ok(v), ((v ** 2).mean(), v.mean(), kstest(v, "norm"))
assert not ok(v * 1.03) and not ok(v / 1.03)
EOF2
}

# ---- the noise ----

@test "the noise of the second moments has variance sigma^2 C^4, independent and symmetric" {
	# Fixed seed, 21 upper entries.  Each chi-square check fails with
	# probability 2e-8 and each of the 210 correlation and 21 mean checks
	# with 2e-9 when the noise is right: at most 9e-7 in all.
	covest -q --sigma 0.5 --clip 2 --mean zero --count-public 40 --audit-repeat 15000 -S 21 x.tns > a.tns 2> /dev/null
	covest -q --sigma 0 --clip 2 --mean zero x.tns > exact.tns
	$PY - <<'EOF'
from load import *
from scipy.stats import chi2
T, M, S, E = load("a.tns")
ex = load("exact.tns")[0]["cov/0"] * 40
N = 15000
Z = np.array([T["cov/0/%d" % r] * 40 - ex for r in range(N)])
assert all((T["cov/0/%d" % r] == T["cov/0/%d" % r].T).all() for r in range(N))
iu = np.triu_indices(6)
V = Z[:, iu[0], iu[1]]                # N x 21 upper entries
sd = 0.5 * 2 ** 0.5 * 2 ** 2          # sigma sqrt(2) C^2 (replace-one)
lo, hi = chi2.ppf(1e-8, N - 1), chi2.isf(1e-8, N - 1)
for j in range(V.shape[1]):
    q = ((V[:, j] - V[:, j].mean()) ** 2).sum() / sd ** 2
    assert lo <= q <= hi, (j, q / (N - 1))
    assert abs(V[:, j].mean()) / (sd / N ** 0.5) < 6
R = np.corrcoef(V.T)
off = R[np.triu_indices(21, 1)]
assert (np.abs(off) * (N - 1) ** 0.5 < 6).all(), np.abs(off).max()
assert S["dp.audit"] == "15000" and E["param.audit_releases"] == "15000"
o = np.array(E["orders"].split(","), float)
r = np.array(E["rdp"].split(","), float)
assert np.allclose(r, N * o / (2 * float(E["param.noise_multiplier"]) ** 2), rtol=1e-12)
EOF
}

@test "--audit-repeat writes every tensor once per release" {
	covest -q --sigma 1 --clip 3 --subspaces random:2 --audit-repeat 3 -S 4 x.tns > a.tns 2> /dev/null
	$PY - <<'EOF'
from load import *
T, M, S, E = load("a.tns")
want = {"%s/%d" % (n, r) for r in range(3) for n in
        ("count", "subspace/0", "subspace/1", "mean/0", "mean/1", "cov/0", "cov/1")}
assert set(T) == want, sorted(set(T) ^ want)
assert (T["subspace/0/0"] == T["subspace/0/2"]).all()   # one partition
assert (T["cov/0/0"] != T["cov/0/1"]).any()             # fresh noise
EOF
}

# ---- the privacy audit (tests/audit.bash) ----

# project FILE FEATURE...: for each release of an audit stream, the sum of
# the noisy second moments S[j][j] = cov[j][j] * count over the features j,
# wherever the release's subspaces put them.
project() {
	$PY - "$@" <<'EOF'
import sys
from load import *
T, M, S, E = load(sys.argv[1])
feats = list(map(int, sys.argv[2:]))
for r in range(int(S["dp.audit"])):
    n, tot = float(T["count/%d" % r]), 0.0
    for j in feats:
        i = 0
        while j not in T["subspace/%d/%d" % (i, r)]:
            i += 1
        k = list(T["subspace/%d/%d" % (i, r)]).index(j)
        tot += T["cov/%d/%d" % (i, r)][k, k] * n
    print(repr(tot))
EOF
}

# canary_audit [OPTION...]: D: two zero rows; D': the same and a row
# 1000 C long (add/remove neighbours).  Clipped to C, it moves S[0][0] by
# C^2, so mu is sqrt(0.999) / noise multiplier: the count, noised too,
# takes 0.001 of mu^2 (project multiplies cov by the released count: S +
# noise).
canary_audit() {
	printf '0,0\n0,0\n' > d.csv
	printf '0,0\n0,0\n1000,0\n' > d2.csv
	featurize --no-label --header no --dataset can --dtype f64 d.csv > d.tns
	featurize --no-label --header no --dataset can --dtype f64 d2.csv > d2.tns
	covest -q --sigma 1 --clip 1 --mean zero --split 0.999,0,0.001 --audit-repeat 16000 -S 31 "$@" d.tns > a.tns 2> /dev/null
	covest -q --sigma 1 --clip 1 --mean zero --split 0.999,0,0.001 --audit-repeat 16000 -S 32 "$@" d2.tns > a2.tns 2> /dev/null
	project a.tns 0 > p
	project a2.tns 0 > p2
	mu=$($PY -c 'from load import *; print(1 / float(load("a.tns")[3]["param.noise_multiplier"]))')
	run -0 --separate-stderr audit_mu_lb p p2
	audit_le "$output" "$mu"
	audit_gt "$output" 0.5		# and the audit is not vacuous
}

@test "the clipping canary passes the Gaussian audit" {
	canary_audit
}

@test "the clipping canary passes the Gaussian audit with --sampler fast" {
	# Its TV, 2^-112 a value, is far below what an audit can see: the
	# audit checks that the fast noise has the scale and the independence
	# of the exact noise (the mutation control is the per-block test).
	canary_audit --sampler fast
	$PY -c 'from load import *; assert float(load("a.tns")[3]["tv"]) > 0'
}

# block_audit [OPTION...]: 8 features in 4 random blocks of 2 (the
# partition of seed 41).  D: two zero rows; D': the same and a canary row
# with C at one feature of each block.  Whole-row clipping scales it to
# C/2 per block, so the sum of the 4 diagonal entries moves by C^2 with
# noise of sd 2 sigma C^2 / sqrt(0.999) (the count's share): mu = 0.5.  PRIMA's per-block accounting clips
# each block to C on its own and keeps one sigma per block: the sum moves
# by 4 C^2, mu = 2, twice the mu = 1 its ledger claims.
block_audit() {
	printf '0,0,0,0,0,0,0,0\n0,0,0,0,0,0,0,0\n' > d.csv
	featurize --no-label --header no --dataset can --dtype f64 d.csv > x8.tns
	covest -q --sigma 0 --subspaces random:4 -S 41 x8.tns > part.tns 2> /dev/null
	feats=$($PY -c 'from load import *
T = load("part.tns")[0]
print(*[T["subspace/%d" % i][0] for i in range(4)])')
	$PY -c 'import sys; r = [0] * 8
for j in sys.argv[1:]: r[int(j)] = 1
print(",".join(map(str, r)))' $feats > row.csv
	cat d.csv row.csv > d2.csv
	featurize --no-label --header no --dataset can --dtype f64 d2.csv > x8b.tns
	covest -q --sigma 1 --clip 1 --mean zero --split 0.999,0,0.001 --subspaces random:4 --audit-repeat 7000 -S 42 "$@" x8.tns > a.tns 2> /dev/null
	covest -q --sigma 1 --clip 1 --mean zero --split 0.999,0,0.001 --subspaces random:4 --audit-repeat 7000 -S 41 "$@" x8b.tns > a2.tns 2> /dev/null
	project a.tns $feats > p
	project a2.tns $feats > p2
}

@test "the block-diagonal canary passes the Gaussian audit" {
	block_audit
	run -0 --separate-stderr audit_mu_lb p p2
	audit_le "$output" 1
}

@test "the audit catches blocks calibrated as if each had its own budget" {
	PRIVADA_TEST_UNSAFE=1 block_audit --unsafe-test-miscalibrate per-block
	run -0 --separate-stderr audit_mu_lb p p2
	audit_gt "$output" 1
}

@test "covest refuses --unsafe-test-miscalibrate without PRIVADA_TEST_UNSAFE=1" {
	run -64 --separate-stderr covest --sigma 1 --clip 1 --subspaces random:2 --unsafe-test-miscalibrate per-block x.tns
	refute_output
	[[ $stderr == "covest: --unsafe-test-miscalibrate is refused unless PRIVADA_TEST_UNSAFE=1"* ]]
}

@test "rows laundered through to-npy and from-npy cannot pass for raw records" {
	# Issue 13, item 5.  Fails on 7b23f82: the covariance computed without
	# privacy came back from NPY without its ledger, covest --dataset cv
	# released it as if its rows were raw records, and rdp-account
	# --budget called the result private (exit 0).
	covest -q --sigma 0 --clip 12 -o agg.tns x.tns
	tns to-npy --tensor cov/0 -o agg.npy agg.tns
	tns from-npy --name X -o back.tns agg.npy
	run -65 --separate-stderr covest -q -e 1 -d 1e-6 --clip 12 --dataset cv back.tns -o lo.tns
	[ ! -e lo.tns ]
	[[ $stderr == "covest: back.tns: of unknown provenance (dp.provenance)"*"--assume-raw"* ]]
	run -1 --separate-stderr rdp-account ledger --budget 10 --delta 1e-5 back.tns
	[[ $stderr == *"unknown provenance"* ]]
	# A side input of unknown provenance cannot be declared.
	run -65 --separate-stderr covest -q -e 1 -d 1e-6 --clip 12 --mean mean.tns --dataset cv --assume-raw back.tns -o lo.tns
	[[ $stderr == "covest: mean.tns: of unknown provenance"* ]]
	# The honest version: the user declares the rows, and the ledger says so.
	run -0 --separate-stderr covest -q -e 1 -d 1e-6 --clip 12 --dataset cv --assume-raw back.tns -o lo.tns
	run -0 $PY -c 'from load import load; T, M, S, E = load("lo.tns"); print(E["assumed_raw"], E["dataset"], "dp.provenance" in S)'
	[ "$output" = "true cv False" ]
	run -0 --separate-stderr rdp-account ledger --budget 10 --delta 1e-5 lo.tns
	assert_output --partial "assumed raw     yes (declared by the user: --assume-raw)"
	# --assume-raw needs --dataset and an input of unknown provenance.
	run -64 --separate-stderr covest -q -e 1 -d 1e-6 --clip 12 --assume-raw back.tns
	[[ $stderr == *"--assume-raw needs --dataset NAME"* ]]
	run -65 --separate-stderr covest -q -e 1 -d 1e-6 --clip 12 --dataset cv --assume-raw x.tns
	[[ $stderr == *"drop --assume-raw"* ]]
}

# ---- progress (issue 15) ----
# Fail on the code before issue 15: covest showed the rows accumulated but
# nothing of the noise step after them.

@test "covest shows the entries noised on a terminal" {
	# (No rate here: with 6 columns the noise is drawn while the rows
	# are read, before the step is shown.)
	run -0 on_tty covest --sigma 1 --clip 12 -S 1 --dataset cv -o o.tns x.tns
	[[ $output == *"covest: noise: entries noised 21/21 (100%)"* ]]
}

@test "covest shows no noise progress with -q, when stderr is not a terminal, or within --audit-repeat" {
	run -0 on_tty covest -q --sigma 1 --clip 12 -S 1 --dataset cv -o o.tns x.tns
	[[ $output != *"entries noised"* ]]
	run -0 --separate-stderr covest --sigma 1 --clip 12 -S 1 --dataset cv -o o.tns x.tns
	[[ $stderr != *"entries noised"* ]]
	run -0 on_tty covest --sigma 1 --clip 12 -S 1 --audit-repeat 3 --dataset cv -o o.tns x.tns
	[[ $output != *"entries noised"* ]]
	[[ $output == *"covest: releases 3/3 (100%)"* ]]
}
