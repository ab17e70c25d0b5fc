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
import specread
NP = {1: "<f4", 2: "<f8", 3: "<i4", 4: "<i8", 5: "u1"}
def load(path):
    raw = subprocess.run(["zstd", "-dcq", path], capture_output=True,
                         check=True).stdout
    out, S = specread.read(raw)
    T = {}
    for name, dtype, dims, streamed, rowbytes, rows, data, tmeta in out:
        if streamed:
            dims = [rows] + list(dims[1:])
        T[name] = np.frombuffer(bytes(data), dtype=NP[dtype]).reshape(dims)
    E = {}
    for k, v in S.items():
        if k.startswith("dp.release."):
            E[k.split(".", 3)[3]] = v
    return T, S, E
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

@test "dpsgd-train with privacy needs --classes when y has no label.names" {
	run -64 --separate-stderr dpsgd-train --sigma 1 --epochs 1 tiny.tns
	refute_output
	[[ $stderr == *"--classes is required"* ]]
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
		--epochs 1 --lr 0.5 --classes 2 -S 1 tiny.tns -o c.tns
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

@test "the same seed gives the same bytes" {
	dpsgd-train --sigma 1 --epochs 2 --batch 8 --classes 3 --hidden 4 -S 7 blobs.tns > a.tns 2>/dev/null
	dpsgd-train --sigma 1 --epochs 2 --batch 8 --classes 3 --hidden 4 -S 7 blobs.tns > b.tns 2>/dev/null
	cmp a.tns b.tns
	dpsgd-train --sigma 1 --epochs 2 --batch 8 --classes 3 --hidden 4 -S 8 blobs.tns > c.tns 2>/dev/null
	! cmp -s a.tns c.tns
}

@test "a seeded DP-SGD model carries a release entry marked seeded" {
	run -0 --separate-stderr dpsgd-train --sigma 1.5 --clip 2 --epochs 2 --batch 10 \
		--classes 3 -S 3 blobs.tns -o m.tns
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

@test "--epsilon and --delta pick sigma: the accountant confirms the budget" {
	dpsgd-train -e 2 -d 1e-5 --epochs 3 --batch 10 --classes 3 blobs.tns > m.tns
	run -0 rdp-account ledger --delta 1e-5 --format tsv m.tns
	eps=$(awk -F '\t' 'NR == 2 { print $3 }' <<< "$output")
	awk -v e="$eps" 'BEGIN { exit !(e <= 2 && e > 1.99) }'
}

@test "--epsilon, --delta and --sigma pick the number of steps" {
	dpsgd-train -e 1 -d 1e-5 --sigma 2 --batch 6 --classes 3 blobs.tns > m.tns
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
	run -0 --separate-stderr dpsgd-train --sigma 1 --epochs 1 --classes 2 agg.tns -o m.tns
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
	run -0 --separate-stderr dpsgd-train --sigma 1 --epochs 1 --batch 4 --classes 2 -S 1 nf.tns -o m.tns
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
	run -0 dpsgd-train --sigma 1 --epochs 1 --classes 2 -q bad.tns -o m.tns
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
	run -0 --separate-stderr dpsgd-train -v --sigma 1 --epochs 2 --batch 30 --classes 3 blobs.tns -o m.tns
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

# ---- the audit ----

@test "--audit-repeat stacks the trainings and charges them all" {
	dpsgd-train --audit-repeat 5 --sigma 1 --batch 16 --epochs 1 --lr 1 --classes 2 -S 1 d.tns > a.tns 2>/dev/null
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
		--lr 1 --classes 2 -S 11 d.tns > a1.tns 2>/dev/null
	dpsgd-train --audit-repeat 100000 --sigma 1 --clip 1 --batch 16 --epochs 1 \
		--lr 1 --classes 2 -S 12 d2.tns > a2.tns 2>/dev/null
	project a1.tns p1
	project a2.tns p2
	run -0 --separate-stderr audit_mu_lb p1 p2
	audit_le "$output" 1
	audit_gt "$output" 0.8		# the audit has power
}

@test "the audit catches DP-SGD without clipping" {
	export PRIVADA_TEST_UNSAFE=1
	dpsgd-train --unsafe-test-no-clip --audit-repeat 20000 --sigma 1 --clip 1 \
		--batch 16 --epochs 1 --lr 1 --classes 2 -S 13 d.tns > a1.tns 2>/dev/null
	dpsgd-train --unsafe-test-no-clip --audit-repeat 20000 --sigma 1 --clip 1 \
		--batch 16 --epochs 1 --lr 1 --classes 2 -S 14 d2.tns > a2.tns 2>/dev/null
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
