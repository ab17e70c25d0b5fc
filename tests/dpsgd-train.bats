#!/usr/bin/env bats
# dpsgd-train: DP-SGD and plain training.  Models are read back with
# tests/vectors/specread.py (an independent reader written from the spec)
# and checked against answers computed by hand or with numpy.  The audit
# tests fix their seeds; each bound fails for a correct mechanism with
# probability at most 2e-7 (tests/audit.bash).  The Fashion-MNIST tests
# take most of this file's time (about 3 s to featurize, 2 s and 7 s to
# train on a quiet machine).

load test_helper
load audit

FX="$DATA/dpsgd"
FM=/usr/share/datasets/fashion-mnist

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	featurize --label label --dataset tiny "$FX/tiny.csv" > tiny.tns
	featurize --label label --dataset blobs "$FX/blobs.csv" > blobs.tns
	featurize --label label --dataset canary "$FX/audit-d.csv" > d.tns
	featurize --label label --dataset canary "$FX/audit-d2.csv" > d2.tns
	DN="$DATA/dann"
	featurize --label label --dataset src "$DN/source.csv" > dsrc.tns
	featurize --no-label --dataset tgt "$DN/target.csv" > dtgt.tns
	featurize --label label --dataset tgt_test "$DN/target-test.csv" > dtest.tns
	featurize --label label --dataset src "$DN/step-source.csv" > ssrc.tns
	featurize --no-label --dataset tgt "$DN/step-target.csv" > stgt.tns
	featurize --no-label --dataset tgt "$DN/step-target-out.csv" > stgt2.tns
	featurize --format idx --dataset fmnist --labels \
		"$FM/train-labels-idx1-ubyte.gz" "$FM/train-images-idx3-ubyte.gz" > fm-train.tns
	featurize --format idx --dataset fmnist_test --labels \
		"$FM/t10k-labels-idx1-ubyte.gz" "$FM/t10k-images-idx3-ubyte.gz" > fm-test.tns
	# load(path) -> T (name -> numpy array), S (stream metadata),
	# E (the fields of the one ledger release, without its id).
	cat > load.py <<EOF
import subprocess, sys
import numpy as np
sys.path.insert(0, "$TOP/tests/vectors")
from tnsload import read, release
def load(path):
    T, M, S = read(path); return T, S, release(S)
EOF
}

setup() {
	cd "$BATS_FILE_TMPDIR"
	export PYTHONPATH="$BATS_FILE_TMPDIR"
}

# ---- the battery ----

@test "dpsgd-train --help prints the usage on stdout and exits 0" {
	run -0 --separate-stderr dpsgd-train --help
	[[ ${lines[0]} == "usage: dpsgd-train "* ]]
	[[ $output == *"--unsafe-test-no-clip"* ]]
	[ -z "$stderr" ]
}

@test "dpsgd-train's --help synopsis matches its man page" {
	synopsis_matches dpsgd-train
}

@test "dpsgd-train rejects an unknown option with usage on stderr" {
	run -64 --separate-stderr dpsgd-train --bogus tiny.tns
	refute_output
	[[ $stderr == *"usage: dpsgd-train"* ]]
}

@test "dpsgd-train without --epsilon, --sigma or --no-dp is a usage error" {
	run -64 --separate-stderr dpsgd-train --epochs 1 --classes 2 tiny.tns
	refute_output
	[[ $stderr == *"missing privacy parameters"* ]]
}

@test "dpsgd-train --epsilon without --delta is a usage error" {
	run -64 --separate-stderr dpsgd-train -e 1 --epochs 1 --classes 2 tiny.tns
	refute_output
	[[ $stderr == *"--epsilon needs --delta"* ]]
}

@test "dpsgd-train --no-dp refuses privacy options" {
	run -64 --separate-stderr dpsgd-train --no-dp --sigma 1 --epochs 1 tiny.tns
	refute_output
	[[ $stderr == *"--no-dp"* ]]
}

@test "dpsgd-train refuses --val without --val-public" {
	run -64 --separate-stderr dpsgd-train --no-dp --epochs 1 --val tiny.tns tiny.tns
	refute_output
	[[ $stderr == *"--val-public"* ]]
}

@test "dpsgd-train refuses --unsafe-test-no-clip outside tests" {
	run -64 --separate-stderr dpsgd-train --unsafe-test-no-clip --sigma 1 \
		--epochs 1 --classes 2 tiny.tns
	refute_output
	[[ $stderr == *"PRIVADA_TEST_UNSAFE=1"* ]]
}

@test "dpsgd-train with privacy refuses a label set learnt from the rows without --classes" {
	# tiny.tns: integer labels, no --label-map or --classes at featurize.
	run -65 --separate-stderr dpsgd-train --sigma 1 --epochs 1 --public-records 2 tiny.tns
	refute_output
	[[ $stderr == "dpsgd-train: tiny.tns: the label set of 'y' was learnt from the rows (label.source=data)"*"--classes K"* ]]
}

@test "dpsgd-train rejects garbage input with 65 and empty stdout" {
	printf 'not a tensor stream\n' > garbage
	run -65 --separate-stderr dpsgd-train --no-dp --epochs 1 < garbage
	refute_output
	[[ $stderr == "dpsgd-train: <stdin>: "* ]]
}

@test "dpsgd-train rejects a truncated stream" {
	head -c 60 blobs.tns > trunc.tns
	run -65 --separate-stderr dpsgd-train --no-dp --epochs 1 trunc.tns
	refute_output
	[[ $stderr == "dpsgd-train: trunc.tns: "* ]]
}

@test "dpsgd-train rejects X of a wrong dtype, naming the tensor" {
	printf '1,2\n3,4\n' > x.csv
	tns from-csv --dtype i32 --name X x.csv > xi.tns
	run -65 --separate-stderr dpsgd-train --no-dp --epochs 1 xi.tns
	refute_output
	[[ $stderr == *"tensor 'X': expected f32 or f64"* ]]
}

@test "dpsgd-train reports a write error on /dev/full with 74" {
	run -74 --separate-stderr bash -c 'dpsgd-train --no-dp --epochs 1 tiny.tns > /dev/full'
}

# ---- known answers ----

@test "one step without privacy is lr times the mean gradient (by hand)" {
	# Zero start, softmax (1/2, 1/2): g1 = (-1/2, 1/2) for x1 = (1, 0),
	# g2 = (1/2, -1/2) for x2 = (0, 2); the mean of x g^T is
	# [[-1/4, 1/4], [1/2, -1/2]], the bias gradient is 0; W = -lr mean.
	dpsgd-train --no-dp --batch 2 --epochs 1 --lr 0.5 -S 1 tiny.tns > m.tns
	run -0 tns to-csv --tensor model/fc1/W m.tns
	[ "$output" = $'0.125,-0.125\n-0.25,0.25' ]
	run -0 tns to-csv --tensor model/fc1/b m.tns
	[ "$output" = $'0\n0' ]
}

@test "one clipped step without noise matches the clipped sum over B (by hand)" {
	# C = 0.5: example 1's gradient has norm sqrt((1 + 1) 1/2) = 1, weight
	# 1/2; example 2's sqrt((4 + 1) 1/2) = 1.5811, weight 0.31623.  W =
	# -(lr / B) (w1 x1 g1^T + w2 x2 g2^T), b likewise with g alone; the
	# rows are clipped at C' = C / (1 + margin), a margin below 1e-3.
	run -0 --separate-stderr dpsgd-train --sigma 0 --clip 0.5 --batch 2 \
		--epochs 1 --lr 0.5 --classes 2 --public-records 2 -S 1 tiny.tns -o c.tns
	[[ $stderr == *"--sigma 0: no noise: the model is NOT private"* ]]
	run -0 $PY -c '
from load import load
import numpy as np
T, S, E = load("c.tns")
w2 = 0.5 / np.sqrt(2.5)
W = -0.25 * np.array([[-0.25, 0.25], [w2, -w2]])
b = -0.25 * (0.5 * np.array([-0.5, 0.5]) + w2 * np.array([0.5, -0.5]))
got = np.concatenate([T["model/fc1/W"].ravel(), T["model/fc1/b"]])
want = np.concatenate([W.ravel(), b])
assert np.all(np.abs(got) <= np.abs(want)) and np.abs(got - want).max() < 1e-3 * np.abs(want).max(), (got, want)
assert S["dp.raw.tiny"] == "aggregate" and not E, S
assert S["train.mode"] == "clip_only"
print("ok")'
	[ "$output" = ok ]
}

@test "the same seed gives the same output (up to the release id)" {
	dpsgd-train --sigma 1 --epochs 2 --batch 8 --classes 3 --hidden 4 --public-records 60 -S 7 blobs.tns > a.tns 2>/dev/null
	dpsgd-train --sigma 1 --epochs 2 --batch 8 --classes 3 --hidden 4 --public-records 60 -S 7 blobs.tns > b.tns 2>/dev/null
	same_but_ids a.tns b.tns
	dpsgd-train --sigma 1 --epochs 2 --batch 8 --classes 3 --hidden 4 --public-records 60 -S 8 blobs.tns > c.tns 2>/dev/null
	! same_but_ids a.tns c.tns 2> /dev/null
}

@test "the noise does not depend on the CPUs allowed: one CPU (no noise workers) gives the model of all CPUs" {
	# 2,000+ parameters: the noise is drawn in two segments, by workers
	# when there is a CPU for them, else by the training thread.
	dpsgd-train --sigma 1 --epochs 2 --batch 8 --classes 3 --hidden 1024 --public-records 60 -S 7 blobs.tns > a.tns 2>/dev/null
	taskset -c 0 dpsgd-train --sigma 1 --epochs 2 --batch 8 --classes 3 --hidden 1024 --public-records 60 -S 7 blobs.tns > b.tns 2>/dev/null
	same_but_ids a.tns b.tns
	taskset -c 0 dpsgd-train --sigma 1 --epochs 2 --batch 8 --classes 3 --hidden 1024 --public-records 60 -S 8 blobs.tns > c.tns 2>/dev/null
	! same_but_ids a.tns c.tns 2> /dev/null
}

@test "a seeded DP-SGD model carries a release entry marked seeded" {
	run -0 --separate-stderr dpsgd-train --sigma 1.5 --clip 2 --epochs 2 --batch 10 \
		--classes 3 --public-records 60 -S 3 blobs.tns -o m.tns
	[[ $stderr == *"--seed 3"*"NOT private"* ]]
	run -0 $PY -c '
from load import load
from math import isclose
T, S, E = load("m.tns")
assert E["mechanism"] == "subsampled_gaussian" and E["seeded"] == "true", E
assert E["dataset"] == "blobs" and E["neighbours"] == "add_remove"
q = 10 / 60
assert isclose(float(E["param.q"]), q) and float(E["param.sigma"]) == 1.5
assert float(E["param.steps"]) == 12 and float(E["param.clip"]) == 2
assert float(E["param.noise_std"]) >= 3 and float(E["param.noise_std"]) < 3.001
assert "dp.raw.blobs" not in S, "the row-local mark must be dropped"
assert len(E["rdp"].split(",")) == 156
assert S["model.arch"] == "logreg:2-3" and S["model.classes"] == "3"
assert T["model/fc1/W"].shape == (2, 3) and T["model/fc1/b"].shape == (3,)
print("ok")'
	[ "$output" = ok ]
}

# Issue 13, item 3: under add/remove neighbours the number of records N is
# private, so no output may depend on it.  Fails on 7b23f82: there the
# models of D (60 rows) and D plus one row carry param.records 60 and 61,
# and param.q, train.q, param.steps, train.steps and (with --epsilon)
# param.sigma, param.noise_std, train.sigma are all solved from q = B / N
# (and --public-records is an unknown option).  Keys left out: the release
# ids, and the input digest prov.input.*.xxh64 (issue 13 item 4).
same_meta() {
	$PY - "$1" "$2" <<'EOF'
import re, sys
from load import load
def norm(path):
    S = load(path)[1]
    out = {}
    for k, v in S.items():
        if re.fullmatch(r"prov\.input\.\d+\.xxh64|split\.parent", k):
            continue
        out[re.sub(r"^dp\.release\.[0-9a-f]{32}\.", "dp.release.ID.", k)] = v
    return out
a, b = norm(sys.argv[1]), norm(sys.argv[2])
diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
assert not diff, [(k, a.get(k), b.get(k)) for k in diff]
assert not any(k.endswith(".param.records") for k in a), a
print("same")
EOF
}

# featurize OPTS DATASET CSV NAME ROW: the input in d0/NAME, and with ROW
# added in d1/NAME (the same file names: prov.args stays equal).
plus_one() {
	mkdir -p d0 d1
	featurize $1 --dataset $2 "$3" > d0/$4
	{ cat "$3"; echo "$5"; } > d1.csv
	featurize $1 --dataset $2 d1.csv > d1/$4
}

@test "DP-SGD on D and on D plus one row: no metadata key differs because of N" {
	plus_one "--label label" blobs "$FX/blobs.csv" b.tns "0.5,0.5,1"
	for d in d0 d1; do
		(cd $d && dpsgd-train -q -e 2 -d 1e-5 --epochs 2 --batch 8 --classes 3 \
			--hidden 4 --public-records 60 -S 7 b.tns > m.tns)
		(cd $d && dpsgd-train -q --sigma 1 --audit-repeat 3 --epochs 1 --batch 8 \
			--classes 3 --public-records 60 -S 7 b.tns > a.tns)
	done
	run -0 same_meta d0/m.tns d1/m.tns
	run -0 same_meta d0/a.tns d1/a.tns
	run -0 $PY -c '
from load import load
E = load("d1/m.tns")[2]
assert E["param.public_records"] == "60" and float(E["param.q"]) == 8 / 60, E
assert E["param.steps"] == "15", E
print("ok")'
	[ "$output" = ok ]
}

@test "DANN on a source or target plus one row: no metadata key differs because of N" {
	head -n 201 "$DATA/dann/target.csv" > t200.csv
	{ cat t200.csv; echo "0.25,-0.5"; } > t201.csv
	plus_one "--label label" src "$DATA/dann/source.csv" s.tns "0.5,-0.25,1"
	mkdir -p d2
	featurize --no-label --dataset tgt t200.csv > d0/t.tns
	cp d0/t.tns d1/t.tns
	cp d0/s.tns d2/s.tns
	featurize --no-label --dataset tgt t201.csv > d2/t.tns
	for d in d0 d1 d2; do
		(cd $d && dpsgd-train -q --mode dann --target t.tns --protect both \
			-e 1 -d 1e-5 --hidden 8 --epochs 2 --batch 40 --classes 2 \
			--public-records 400 --target-public-records 200 -S 4 s.tns > g.tns)
	done
	run -0 same_meta d0/g.tns d1/g.tns
	run -0 same_meta d0/g.tns d2/g.tns
}

@test "DP-SGD needs --public-records, and refuses it without DP-SGD" {
	run -64 --separate-stderr dpsgd-train --sigma 1 --epochs 1 --classes 3 blobs.tns
	refute_output
	[[ $stderr == *"needs --public-records N: the number of its records, declared public"* ]]
	run -64 --separate-stderr dpsgd-train --no-dp --epochs 1 --public-records 60 blobs.tns
	[[ $stderr == *"--public-records applies to the rows that DP-SGD protects"* ]]
	run -64 --separate-stderr dpsgd-train --mode dann --target dtgt.tns --protect source \
		--sigma 1 --hidden 3 --epochs 1 --classes 2 --public-records 400 \
		--target-public-records 400 dsrc.tns
	[[ $stderr == *"--target-public-records applies to"* ]]
	run -64 --separate-stderr dpsgd-train --mode dann --target dtgt.tns --protect both \
		--sigma 1 --hidden 3 --epochs 1 --classes 2 --public-records 400 dsrc.tns
	[[ $stderr == *"the --target rows needs --target-public-records N"* ]]
	run -64 --separate-stderr dpsgd-train --sigma 1 --epochs 1 --classes 3 \
		--public-records 0 blobs.tns
}

@test "a declared size other than the rows read is warned about, on stderr only" {
	run -0 --separate-stderr dpsgd-train --sigma 1 --epochs 1 --batch 10 --classes 3 \
		--public-records 100 blobs.tns -o m.tns
	[[ $stderr == *"blobs.tns: 60 records, but --public-records declares 100"* ]]
	run -0 $PY -c '
from load import load
T, S, E = load("m.tns")
assert float(E["param.q"]) == 0.1 and E["param.steps"] == "10", E
assert not any(v == "60" for v in S.values()), S
print("ok")'
	[ "$output" = ok ]
}

@test "--epsilon and --delta pick sigma: the accountant confirms the budget" {
	dpsgd-train -e 2 -d 1e-5 --epochs 3 --batch 10 --classes 3 --public-records 60 blobs.tns > m.tns
	run -0 rdp-account ledger --delta 1e-5 --format tsv m.tns
	eps=$(awk -F '\t' 'NR == 2 { print $3 }' <<< "$output")
	awk -v e="$eps" 'BEGIN { exit !(e <= 2 && e > 1.99) }'
}

@test "--epsilon, --delta and --sigma pick the number of steps" {
	dpsgd-train -e 1 -d 1e-5 --sigma 2 --batch 6 --classes 3 --public-records 60 blobs.tns > m.tns
	run -0 rdp-account ledger --delta 1e-5 --format tsv m.tns
	eps=$(awk -F '\t' 'NR == 2 { print $3 }' <<< "$output")
	awk -v e="$eps" 'BEGIN { exit !(e <= 1 && e > 0.9) }'
	# one more step would exceed the budget
	steps=$($PY -c 'from load import load; print(int(float(load("m.tns")[2]["param.steps"])))')
	run -0 rdp-account --delta 1e-5 --format tsv sgm --q 0.1 --sigma 2 --steps $((steps + 1))
	[[ $output == *$'\t'* ]]
	eps2=$(awk -F '\t' 'NR == 2 { print $2 }' <<< "$output")
	awk -v e="$eps2" 'BEGIN { exit !(e > 1) }'
}

@test "--no-dp marks the model as raw-derived, with no release" {
	dpsgd-train --no-dp --epochs 1 blobs.tns > m.tns
	run -0 $PY -c '
from load import load
T, S, E = load("m.tns")
assert S["dp.raw.blobs"] == "aggregate" and not E and S["train.mode"] == "no_dp"
print("ok")'
	[ "$output" = ok ]
}

@test "an input already aggregated without privacy gets a NOT private warning" {
	printf '1,2\n-1,0\n0,3\n3,1\n' > ax.csv
	tns from-csv --dtype f32 --name X ax.csv > ax.tns
	$PY -c 'import numpy as np; np.save("y.npy", np.array([0, 1, 1, 0], dtype=np.int32))'
	tns from-npy --name y y.npy > ay.tns
	tns cat ax.tns ay.tns > a0.tns
	tns meta set --unsafe-ledger -i a0.tns dp.raw.agg=aggregate > agg.tns
	run -0 --separate-stderr dpsgd-train --sigma 1 --epochs 1 --classes 2 --public-records 4 agg.tns -o m.tns
	[[ $stderr == *"NOT private for agg"* ]]
	run -0 $PY -c 'from load import load; T, S, E = load("m.tns"); print(S["dp.raw.agg"], E["dataset"])'
	[ "$output" = "aggregate agg" ]
}

@test "non-finite rows are no error under DP, and counted only without privacy" {
	printf '1,2\ninf,0\n0,nan\n3,1\n' > nfx.csv
	tns from-csv --dtype f32 --name X nfx.csv > nfx.tns
	$PY -c 'import numpy as np; np.save("y.npy", np.array([0, 1, 1, 0], dtype=np.int32))'
	tns from-npy --name y y.npy > nfy.tns
	tns cat nfx.tns nfy.tns > nf0.tns
	tns meta set -i nf0.tns data.name=nf > nf.tns
	run -0 --separate-stderr dpsgd-train --sigma 1 --epochs 1 --batch 4 --classes 2 --public-records 4 -S 1 --dataset nf --assume-raw nf.tns -o m.tns
	[[ $stderr != *"non-finite"* ]]
	run -0 $PY -c 'from load import load; import numpy as np; T = load("m.tns")[0]; print(np.isfinite(T["model/fc1/W"]).all())'
	[ "$output" = True ]
	run -0 --separate-stderr dpsgd-train --no-dp --epochs 1 nf.tns -o m.tns
	[[ $stderr == *"2 rows with non-finite values were taken as zero rows"* ]]
}

@test "a label outside the classes is an error without privacy only" {
	printf 'a,label\n1,0\n2,5\n' > bad.csv
	featurize --label label --dataset bad bad.csv > bad.tns
	run -65 --separate-stderr dpsgd-train --no-dp --epochs 1 --classes 2 bad.tns
	refute_output
	[[ $stderr == *"row 1: label outside [0, 2)"* ]]
	run -0 dpsgd-train --sigma 1 --epochs 1 --classes 2 --public-records 2 -q bad.tns -o m.tns
}

# Issue 15: under privacy rows labelled outside --classes were dropped
# in silence.  Fails on the code before it (no warning at all).
@test "under privacy --classes without a public label set warns that rows outside are dropped" {
	W="dpsgd-train: warning: --classes 2: rows labelled outside 0..1 are dropped without a count (under privacy the count is private)"
	printf 'a,label\n1,0\n2,5\n3,1\n' > bad.csv
	featurize --label label --dataset bad bad.csv > bad.tns
	printf 'a,label\n1,0\n2,1\n3,1\n' > good.csv
	featurize --label label --dataset good good.csv > good.tns
	# The same line whether or not a row is outside: it says nothing
	# about the data.
	for f in bad good; do
		run -0 --separate-stderr dpsgd-train --sigma 1 --epochs 1 --classes 2 \
			--public-records 3 -S 1 $f.tns -o m.tns
		[[ $stderr == *"$W"* ]]
		[ "$(grep -c 'outside' <<< "$stderr")" -eq 1 ]
	done
	run -0 --separate-stderr dpsgd-train -e 1 -d 1e-5 --epochs 1 --classes 2 \
		--public-records 3 bad.tns -o m.tns
	[[ $stderr == *"$W"* ]]
	# -q silences it.
	run -0 --separate-stderr dpsgd-train -q --sigma 1 --epochs 1 --classes 2 \
		--public-records 3 bad.tns -o m.tns
	[ -z "$stderr" ]
	# A public label set of that size fixes the classes: no warning.
	featurize --classes 2 --label label --dataset good good.csv > pub.tns
	run -0 --separate-stderr dpsgd-train --sigma 1 --epochs 1 --classes 2 \
		--public-records 3 -S 1 pub.tns -o m.tns
	[[ $stderr != *"outside"* ]]
	run -0 --separate-stderr dpsgd-train --sigma 1 --epochs 1 \
		--public-records 3 -S 1 pub.tns -o m.tns
	[[ $stderr != *"outside"* ]]
	# Without privacy such a row is an error, not a drop: no warning.
	run -0 --separate-stderr dpsgd-train --no-dp --epochs 1 --classes 2 good.tns -o m.tns
	[[ $stderr != *"outside"* ]]
}

@test "--freeze keeps the first layers of --init unchanged" {
	dpsgd-train --no-dp --hidden 5 --epochs 1 -S 1 blobs.tns > m0.tns
	dpsgd-train --no-dp --init m0.tns --freeze 1 --epochs 2 -S 2 blobs.tns > m1.tns
	run -0 $PY -c '
from load import load
import numpy as np
a, b = load("m0.tns")[0], load("m1.tns")[0]
assert np.array_equal(a["model/fc1/W"], b["model/fc1/W"])
assert np.array_equal(a["model/fc1/b"], b["model/fc1/b"])
assert not np.array_equal(a["model/fc2/W"], b["model/fc2/W"])
print("ok")'
	[ "$output" = ok ]
	run -64 --separate-stderr dpsgd-train --no-dp --hidden 5 --freeze 2 --epochs 1 blobs.tns
}

@test "-v prints a line per epoch, without the training loss under DP" {
	run -0 --separate-stderr dpsgd-train -v --sigma 1 --epochs 2 --batch 30 --classes 3 --public-records 60 blobs.tns -o m.tns
	[[ $stderr == *"epoch 2/2"* ]]
	[[ $stderr != *"loss"* ]]
	run -0 --separate-stderr dpsgd-train -v --no-dp --epochs 2 --batch 30 blobs.tns -o m.tns
	[[ $stderr == *"epoch 2/2, loss "* ]]
}

@test "--val-public picks the best epoch on public data" {
	run -0 --separate-stderr dpsgd-train -v --no-dp --epochs 3 --batch 30 \
		--classes 3 --val blobs.tns --val-public tiny.tns -o m.tns
	[[ $stderr == *"val accuracy"* ]]
	run -0 $PY -c 'from load import load; S = load("m.tns")[1]; print(S["dp.raw.blobs"], S["train.best_epoch"])'
	[[ $output == "aggregate "[123] ]]
	run -65 --separate-stderr dpsgd-train --no-dp --epochs 1 --val blobs.tns --val-public blobs.tns
	[[ $stderr == *"derives from the protected dataset blobs"* ]]
}

# ---- domain-adversarial training (--mode dann) ----

@test "dann options need --mode dann, and --mode dann needs --target" {
	run -64 --separate-stderr dpsgd-train --no-dp --epochs 1 --target dtgt.tns dsrc.tns
	refute_output
	[[ $stderr == *"need --mode dann"* ]]
	run -64 --separate-stderr dpsgd-train --mode dann --no-dp --hidden 4 --epochs 1 dsrc.tns
	refute_output
	[[ $stderr == *"--mode dann needs --target"* ]]
}

@test "--mode dann with privacy needs --protect, and --protect refuses --no-dp" {
	run -64 --separate-stderr dpsgd-train --mode dann --target dtgt.tns --sigma 1 \
		--hidden 4 --epochs 1 --classes 2 dsrc.tns
	refute_output
	[[ $stderr == *"needs --protect target, source or both"* ]]
	run -64 --separate-stderr dpsgd-train --mode dann --target dtgt.tns --no-dp \
		--protect target --hidden 4 --epochs 1 dsrc.tns
	refute_output
	[[ $stderr == *"--protect does not apply"* ]]
	run -64 --separate-stderr dpsgd-train --mode dann --target dtgt.tns --protect all \
		--sigma 1 --hidden 4 --epochs 1 dsrc.tns
	refute_output
}

@test "--mode dann needs a feature extractor and --epochs" {
	run -64 --separate-stderr dpsgd-train --mode dann --target dtgt.tns --no-dp --epochs 1 dsrc.tns
	refute_output
	[[ $stderr == *"needs a feature extractor"* ]]
	run -64 --separate-stderr dpsgd-train --mode dann --target dtgt.tns -e 1 -d 1e-5 \
		--sigma 1 --protect target --hidden 4 --classes 2 dsrc.tns
	refute_output
	[[ $stderr == *"--mode dann needs --epochs"* ]]
}

@test "--mode dann rejects a target of other width or of the source's dataset" {
	featurize --no-label --dataset src "$DATA/dann/step-target.csv" > same.tns
	run -65 --separate-stderr dpsgd-train --mode dann --target same.tns --no-dp \
		--hidden 4 --epochs 1 ssrc.tns
	refute_output
	[[ $stderr == *"belong to dataset src"*"needs two datasets"* ]]
	printf 'a,b,c\n1,2,3\n' > w3.csv
	featurize --no-label --dataset w3 w3.csv > w3.tns
	run -65 --separate-stderr dpsgd-train --mode dann --target w3.tns --no-dp \
		--hidden 4 --epochs 1 ssrc.tns
	refute_output
	[[ $stderr == *"w3.tns: 3 features, ssrc.tns has 2"* ]]
}

# One step (q = 1 for the target, one source batch, lr 1, B = 16, SGD),
# without noise, on target data D and on D' = D + an outlier: the models
# differ by (lr / B) times the outlier's clipped contribution (the source
# step and the other target rows are the same), so 16 times the parameter
# difference has norm <= C = 1 over F (model/fc1) and D (domain/*), and
# the label head (model/fc2) does not move.
joint_norm() {
	$PY -c '
import sys
from load import load
import numpy as np
a, b = load(sys.argv[1])[0], load(sys.argv[2])[0]
d = {k: (b[k].astype(np.float64) - a[k]).ravel() * 16 for k in a}
F = np.concatenate([d["model/fc1/W"], d["model/fc1/b"]])
H = np.concatenate([d["model/fc2/W"], d["model/fc2/b"]])
D = np.concatenate([d[k] for k in sorted(d) if k.startswith("domain/")])
print(np.linalg.norm(np.concatenate([F, D])), np.linalg.norm(F) > 0.05,
      np.linalg.norm(D) > 0.05, np.linalg.norm(H) == 0)' "$1" "$2"
}

@test "one DANN step: a protected target example moves F and D jointly by at most C" {
	for t in stgt stgt2; do
		dpsgd-train --mode dann --target $t.tns --protect target --sigma 0 --clip 1 \
			--hidden 3 --domain-hidden 3 --batch 16 --epochs 1 --lr 1 --classes 2 --target-public-records 9 \
			-S 1 -q ssrc.tns > j-$t.tns
	done
	run -0 joint_norm j-stgt.tns j-stgt2.tns
	read -r n f d h <<< "$output"
	# about 0.9996 (C' < C); the outlier is clipped, F and D both move
	awk -v n="$n" 'BEGIN { exit !(n <= 1 && n > 0.99) }'
	[ "$f $d $h" = "True True True" ]
	# without clipping the same step moves them by far more: the check can fail
	export PRIVADA_TEST_UNSAFE=1
	for t in stgt stgt2; do
		dpsgd-train --mode dann --target $t.tns --protect target --sigma 0 --clip 1 \
			--unsafe-test-no-clip --hidden 3 --domain-hidden 3 --batch 16 --epochs 1 \
			--lr 1 --classes 2 --target-public-records 9 -S 1 -q ssrc.tns > u-$t.tns
	done
	run -0 joint_norm u-stgt.tns u-stgt2.tns
	read -r n f d h <<< "$output"
	awk -v n="$n" 'BEGIN { exit !(n > 10) }'
}

@test "DPDA: the target's noise covers F and D, never the label head" {
	# one step with and without noise, same seed: only the source
	# (trained normally) moves the label head
	dpsgd-train --mode dann --target stgt.tns --protect target --sigma 0 --hidden 3 \
		--batch 16 --epochs 1 --lr 1 --classes 2 --target-public-records 8 -S 2 -q ssrc.tns > n0.tns
	dpsgd-train --mode dann --target stgt.tns --protect target --sigma 1 --hidden 3 \
		--batch 16 --epochs 1 --lr 1 --classes 2 --target-public-records 8 -S 2 -q ssrc.tns > n1.tns
	run -0 $PY -c '
from load import load
import numpy as np
a, b = load("n0.tns")[0], load("n1.tns")[0]
same = [k for k in sorted(a) if np.array_equal(a[k], b[k])]
print(" ".join(same))'
	[ "$output" = "model/fc2/W model/fc2/b" ]
}

@test "DPDA: one ledger entry for the target, the source marked aggregate, both reported" {
	run -0 --separate-stderr dpsgd-train --mode dann --target dtgt.tns --protect target \
		-e 2 -d 1e-5 --hidden 8 --epochs 2 --batch 40 --classes 2 --target-public-records 400 dsrc.tns -o dpda.tns
	run -0 $PY -c '
from load import load
T, S, E = load("dpda.tns")
assert E["dataset"] == "tgt" and E["mechanism"] == "subsampled_gaussian", E
assert float(E["param.q"]) == 0.1 and float(E["param.steps"]) == 20, E
assert float(E["param.public_records"]) == 400
assert S["dp.raw.src"] == "aggregate" and "dp.raw.tgt" not in S, S
assert S["train.adapt"] == "dann" and S["train.protect"] == "target"
assert S["train.domain_arch"] == "logreg:8-2" and "train.source.q" not in S
assert T["domain/fc1/W"].shape == (8, 2) and T["model/fc2/W"].shape == (8, 2)
print("ok")'
	[ "$output" = ok ]
	run -0 rdp-account ledger --delta 1e-5 --format tsv dpda.tns
	src=$(awk -F '\t' '$1 == "src" { print $9, $11 }' <<< "$output")
	tgt=$(awk -F '\t' '$1 == "tgt" { print $2, $11 }' <<< "$output")
	eps=$(awk -F '\t' '$1 == "tgt" { print $3 }' <<< "$output")
	[ "$src" = "aggregate not_private" ]
	[ "$tgt" = "1 private" ]
	awk -v e="$eps" 'BEGIN { exit !(e <= 2 && e > 1.99) }'
	# predict reads the classifier and ignores the domain head
	run -0 --separate-stderr predict --model dpda.tns --report-format tsv dtest.tns -o p.tns
	[[ $stderr == *all* ]]
}

@test "G-DPDA: one entry per dataset, each with its own q and sigma for the budget" {
	head -n 201 "$DATA/dann/target.csv" > t200.csv
	featurize --no-label --dataset tgt t200.csv > t200.tns
	dpsgd-train --mode dann --target t200.tns --protect both -e 1 -d 1e-5 --hidden 8 \
		--epochs 2 --batch 40 --classes 2 --public-records 400 --target-public-records 200 -S 4 -q dsrc.tns > g.tns 2>/dev/null
	run -0 $PY -c '
from load import load
T, S, E = load("g.tns")
rel = {}
for k, v in S.items():
    if k.startswith("dp.release."):
        _, _, i, f = k.split(".", 3)
        rel.setdefault(i, {})[f] = v
by = {r["dataset"]: r for r in rel.values()}
assert sorted(by) == ["src", "tgt"], by.keys()
assert float(by["src"]["param.q"]) == 0.1 and float(by["tgt"]["param.q"]) == 0.2
assert by["src"]["param.steps"] == by["tgt"]["param.steps"] == "20"
assert float(by["tgt"]["param.sigma"]) > float(by["src"]["param.sigma"])
assert all(r["seeded"] == "true" for r in rel.values())
assert not any(k.startswith("dp.raw.") for k in S), S
assert S["train.source.dataset"] == "src" and S["train.target.dataset"] == "tgt"
print("ok")'
	[ "$output" = ok ]
	run -0 rdp-account ledger --allow-seeded --budget 1 --delta 1e-5 --format tsv g.tns
	[ "$(awk -F '\t' 'NR > 1 { n++ } END { print n }' <<< "$output")" = 2 ]
	# the same seed gives the same output (up to the release ids)
	dpsgd-train --mode dann --target t200.tns --protect both -e 1 -d 1e-5 --hidden 8 \
		--epochs 2 --batch 40 --classes 2 --public-records 400 --target-public-records 200 -S 4 -q dsrc.tns > g2.tns 2>/dev/null
	same_but_ids g.tns g2.tns
}

@test "--protect source charges the source and marks the target aggregate" {
	run -0 --separate-stderr dpsgd-train --mode dann --target stgt.tns --protect source \
		--sigma 1 --hidden 3 --batch 2 --epochs 1 --classes 2 --public-records 4 ssrc.tns -o ps.tns
	run -0 $PY -c '
from load import load
T, S, E = load("ps.tns")
assert E["dataset"] == "src" and float(E["param.q"]) == 0.5, E
assert float(E["param.steps"]) == 2 and float(E["param.public_records"]) == 4
assert S["dp.raw.tgt"] == "aggregate" and "dp.raw.src" not in S, S
assert S["train.protect"] == "source" and "train.target.q" not in S
print("ok")'
	[ "$output" = ok ]
}

# The fixture (tests/data/dann/gen.py) has a spurious source feature that
# is noise in the target.  Over three seeds DANN averages 0.778 on the
# target test rows and source-only training 0.658 (per seed: +9 to +13
# points); the test asks for +5 points on average.
@test "DANN without privacy beats source-only training on a shifted target" {
	for s in 1 2 3; do
		dpsgd-train --no-dp --hidden 16 --epochs 100 --batch 32 --lr 0.05 --momentum 0.9 \
			-S $s -q dsrc.tns > so$s.tns
		dpsgd-train --mode dann --target dtgt.tns --domain-hidden 16 --no-dp --hidden 16 \
			--epochs 100 --batch 32 --lr 0.05 --momentum 0.9 -S $s -q dsrc.tns > da$s.tns
		predict --model so$s.tns --report-format tsv --report so$s.txt dtest.tns > /dev/null
		predict --model da$s.tns --report-format tsv --report da$s.txt dtest.tns > /dev/null
	done
	so=$(awk -F '\t' '$1 == "all" { s += $2 } END { print s / 3 }' so[123].txt)
	da=$(awk -F '\t' '$1 == "all" { s += $2 } END { print s / 3 }' da[123].txt)
	echo "source-only $so, dann $da"
	awk -v a="$so" -v b="$da" 'BEGIN { exit !(b >= a + 0.05 && a > 0.55) }'
	run -0 $PY -c 'from load import load; S = load("da1.tns")[1]; print(S["dp.raw.src"], S["dp.raw.tgt"], S["train.protect"])'
	[ "$output" = "aggregate aggregate none" ]
}

# ---- the audit ----

@test "--audit-repeat stacks the trainings and charges them all" {
	dpsgd-train --audit-repeat 5 --sigma 1 --batch 16 --epochs 1 --lr 1 --classes 2 --public-records 10 -S 1 d.tns > a.tns 2>/dev/null
	run -0 $PY -c '
from load import load
T, S, E = load("a.tns")
assert T["model/fc1/W"].shape == (5, 4) and T["model/fc1/b"].shape == (5, 2)
assert S["dp.audit"] == "5" and float(E["param.audit_releases"]) == 5
# q = 1, one step: RDP a / (2 sigma^2) per training, five trainings
r = [float(x) for x in E["rdp"].split(",")]
o = [float(x) for x in E["orders"].split(",")]
assert all(abs(ri - 5 * oi / 2) < 1e-9 * ri for ri, oi in zip(r, o)), r[:3]
print("ok")'
	[ "$output" = ok ]
}

# D has nine rows x = 0 (no gradient on W), D' adds the canary x = (1000,
# 0) with label 0.  After one full-batch step (q = 1, B = 16, lr 1) from
# W = 0, (W[0,0] - W[0,1]) B / sqrt(2) is N(0, s^2) on D and N(c, s^2)
# on D', c <= C': mu <= 1/sigma = 1.
project() {
	tns to-csv --tensor model/fc1/W "$1" > w.csv
	awk -F, '{ print ($1 - $2) * 16 / sqrt(2) }' w.csv > "$2"
}

@test "one-step DP-SGD: the audit's mu lower bound stays at or below 1/sigma" {
	dpsgd-train --audit-repeat 100000 --sigma 1 --clip 1 --batch 16 --epochs 1 \
		--lr 1 --classes 2 --public-records 10 -S 11 d.tns > a1.tns 2>/dev/null
	dpsgd-train --audit-repeat 100000 --sigma 1 --clip 1 --batch 16 --epochs 1 \
		--lr 1 --classes 2 --public-records 10 -S 12 d2.tns > a2.tns 2>/dev/null
	project a1.tns p1
	project a2.tns p2
	run -0 --separate-stderr audit_mu_lb p1 p2
	audit_le "$output" 1
	audit_gt "$output" 0.8		# the audit has power
}

@test "the audit catches DP-SGD without clipping" {
	export PRIVADA_TEST_UNSAFE=1
	dpsgd-train --unsafe-test-no-clip --audit-repeat 20000 --sigma 1 --clip 1 \
		--batch 16 --epochs 1 --lr 1 --classes 2 --public-records 10 -S 13 d.tns > a1.tns 2>/dev/null
	dpsgd-train --unsafe-test-no-clip --audit-repeat 20000 --sigma 1 --clip 1 \
		--batch 16 --epochs 1 --lr 1 --classes 2 --public-records 10 -S 14 d2.tns > a2.tns 2>/dev/null
	project a1.tns p1
	project a2.tns p2
	run -0 --separate-stderr audit_mu_lb p1 p2
	audit_gt "$output" 1
	run -0 $PY -c 'from load import load; S = load("a1.tns")[1]; print(S["dp.raw.canary"])'
	[ "$output" = aggregate ]
}

# ---- Fashion-MNIST ----

@test "Fashion-MNIST: logistic regression without privacy reaches 84% (about 2 s)" {
	# 84.5% with this seed
	dpsgd-train --no-dp --batch 64 --lr 0.05 --momentum 0.9 --epochs 5 \
		--lr-schedule cosine -S 1 fm-train.tns > lr.tns
	run -0 --separate-stderr predict --model lr.tns --report-format tsv fm-test.tns -o pred.tns
	acc=$(awk -F '\t' '$1 == "all" { print $2 }' <<< "$stderr")
	awk -v a="$acc" 'BEGIN { exit !(a >= 0.84) }'
}

@test "Fashion-MNIST: an MLP 784-256-10 without privacy reaches 88% (about 7 s)" {
	# 88.3% with this seed on this machine's OpenBLAS kernels
	dpsgd-train --no-dp --hidden 256 --optimizer adam --lr 0.002 --batch 128 \
		--epochs 6 --lr-schedule cosine -S 2 fm-train.tns > mlp.tns
	run -0 --separate-stderr predict --model mlp.tns --report-format tsv fm-test.tns -o pred.tns
	acc=$(awk -F '\t' '$1 == "all" { print $2 }' <<< "$stderr")
	awk -v a="$acc" 'BEGIN { exit !(a >= 0.88) }'
}

@test "the fast sampler's TV is charged at the composed epsilon, not at 32" {
	# Issue 13, item 10.  Fails on 7b23f82: the entry's delta charged
	# the sampler's total variation tv at epsilon 32, (1 + e^32) tv, and
	# rdp-account kept that charge when the dataset's composed epsilon
	# was far larger (here about 45): delta was under-charged by a factor
	# of about e^13.
	run -0 --separate-stderr dpsgd-train -q -e 4 -d 1e-5 --clip 1 --epochs 1 --batch 8 --classes 2 --public-records 2 tiny.tns -o tv.tns
	# A second release of tiny (pure epsilon 40, hand-written: tests
	# only) composes with it.
	tns meta set --unsafe-ledger -i tv.tns -o tv2.tns \
		dp.release.0123456789abcdef0123456789abcdef.dataset=tiny \
		dp.release.0123456789abcdef0123456789abcdef.mechanism=laplace \
		dp.release.0123456789abcdef0123456789abcdef.neighbours=add_remove \
		dp.release.0123456789abcdef0123456789abcdef.seeded=false \
		dp.release.0123456789abcdef0123456789abcdef.tool=test \
		dp.release.0123456789abcdef0123456789abcdef.epsilon=40
	run -0 --separate-stderr rdp-account ledger --format json --delta 1e-5 tv2.tns
	echo "$output" > tv.json
	# tv from the entry's own delta (charged at epsilon 32), independent
	# of the new fields: the composed delta must cover (1 + e^eps) tv.
	run -0 $PY - <<'PY'
import json, math
from load import load
T, S, E = load("tv.tns")
d0 = float(E["delta"])
tv = d0 / (1 + math.exp(32))
assert d0 > 0, d0
j = json.load(open("tv.json"))["datasets"][0]
eps, extra = j["epsilon"], j["delta_extra"]
need = (1 + math.exp(eps)) * tv
assert eps > 40, eps
assert extra >= need * (1 - 1e-9), (extra, need, d0)
assert extra <= 1e-5 and j["verdict"] == "private", j
print("ok", eps, extra / d0)
PY
	[[ $output == "ok "* ]]
	run -0 $PY -c 'from load import load; T, S, E = load("tv.tns"); print(E["tv_epsilon"], float(E["tv"]) > 0)'
	[ "$output" = "32 True" ]
}

# ---- progress (issue 15) ----
# Fail on the code before issue 15: the steps had no rate, no ETA, no loss.

@test "dpsgd-train --no-dp shows the steps with a rate, an ETA and the loss on a terminal" {
	run -0 on_tty dpsgd-train --no-dp --epochs 2 --batch 8 --classes 3 -S 7 -o m.tns blobs.tns
	[[ $output == *"dpsgd-train: steps "*"/s ETA "*" loss "* ]]
	[[ $output == *"(100%) "*"/s ETA 0:00 loss "* ]]
}

@test "dpsgd-train under DP shows a rate and an ETA but never the loss" {
	run -0 on_tty dpsgd-train --sigma 1 --epochs 2 --batch 8 --classes 3 --public-records 60 -S 7 -o m.tns blobs.tns
	[[ $output == *"dpsgd-train: steps "*"(100%) "*"/s ETA 0:00"* ]]
	[[ $output != *"loss"* ]]
}

@test "dpsgd-train shows no progress with -q or when stderr is not a terminal" {
	run -0 on_tty dpsgd-train -q --no-dp --epochs 2 --batch 8 --classes 3 -S 7 -o m.tns blobs.tns
	[[ $output != *"steps "* ]]
	run -0 --separate-stderr dpsgd-train --no-dp --epochs 2 --batch 8 --classes 3 -S 7 -o m.tns blobs.tns
	[[ $stderr != *"steps "* ]]
}
