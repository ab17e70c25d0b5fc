#!/usr/bin/env bats
# The PRIMA path end to end on shipped data (MNIST -> USPS, 256-d, rows
# normalised to L2 norm 1): featurize both domains, release each one's
# covariance with covest in the same public random subspaces (the source's
# partition reused on the target with --subspaces from:), make them
# positive semi-definite with psdshrink, align the source rows with
# coral-align, and check the shapes, the effect of the alignment and the
# privacy ledger.  The noise is unseeded (a private run); the one
# statistical check has a wide margin (see it).

load test_helper

MU="$TOP/data/mnist-usps"

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	featurize -q --label label --dataset mnist --normalize l2 --clip-rows 1 \
		-o src.tns "$MU/mnist.csv.zst"
	featurize -q --label label --dataset usps --normalize l2 --clip-rows 1 \
		-o tgt.tns "$MU/usps.csv.zst"
	covest -q --epsilon 1 --delta 1e-5 --clip 1 --subspaces random:4:7 \
		-o src.cov.tns src.tns
	covest -q --epsilon 1 --delta 1e-5 --clip 1 --subspaces from:src.cov.tns \
		-o tgt.cov.tns tgt.tns
	psdshrink -q -o src.psd.tns src.cov.tns
	psdshrink -q -o tgt.psd.tns tgt.cov.tns
	# CORAL's --reg 1 barely moves covariances of rows of norm 1 (their
	# eigenvalues are far below 1): align with a regulariser near them.
	coral-align -q --reg 0.01 --source-cov src.psd.tns --target-cov tgt.psd.tns \
		-o aligned.tns src.tns
	for f in src tgt aligned; do
		tns to-npy -q --tensor X -o "$f.X.npy" "$f.tns"
		tns to-npy -q --tensor y -o "$f.y.npy" "$f.tns"
	done
	for f in src.cov tgt.cov tgt.psd; do
		for i in 0 1 2 3; do
			tns to-npy -q --tensor "subspace/$i" -o "$f.sub$i.npy" "$f.tns"
			tns to-npy -q --tensor "cov/$i" -o "$f.cov$i.npy" "$f.tns"
		done
	done
}

setup() {
	cd "$BATS_FILE_TMPDIR"
}

@test "the aligned source has the source's rows, labels and four 64-wide blocks" {
	run -0 --separate-stderr tns info aligned.tns
	[[ $output == *"X     f32    (2000, 256)"* ]]
	[[ $output == *"align.widths  64,64,64,64"* ]]
	$PY - <<'EOF'
import numpy as np
X, A = np.load("src.X.npy"), np.load("aligned.X.npy")
assert A.shape == X.shape == (2000, 256), A.shape
assert (np.load("aligned.y.npy") == np.load("src.y.npy")).all()
assert np.isfinite(A).all() and np.abs(A - X).max() > 1e-3   # it moved
EOF
}

@test "the target's covariance is released in the source's public subspaces" {
	$PY - <<'EOF'
import numpy as np
subs = [np.load("src.cov.sub%d.npy" % i) for i in range(4)]
assert sorted(np.concatenate(subs)) == list(range(256))
assert [len(s) for s in subs] == [64] * 4
for i in range(4):
    assert (np.load("tgt.cov.sub%d.npy" % i) == subs[i]).all()
    assert (np.load("tgt.psd.sub%d.npy" % i) == subs[i]).all()
EOF
	run -0 --separate-stderr tns info -v tgt.cov.tns
	[[ $output == *"cov.subspaces"*"from:src.cov.tns"* ]]
}

@test "alignment moves the source's covariance towards the target's released one" {
	# Per block, the Frobenius distance from the covariance of the source
	# rows (numpy) to the target's released covariance, before and after
	# alignment: covest's release and psdshrink's (the one coral-align
	# used).  In 16 private runs the ratio after / before was 0.956-0.960
	# and 0.977-0.982 (standard deviation 0.0013 for both): the bound of
	# 0.995 is more than 11 standard deviations away.
	$PY - <<'EOF'
import numpy as np
X, A = np.load("src.X.npy").astype(float), np.load("aligned.X.npy").astype(float)
for rel in ("tgt.cov", "tgt.psd"):
    before = after = 0.0
    o = 0
    for i in range(4):
        ix = np.load("%s.sub%d.npy" % (rel, i))
        Ct = np.load("%s.cov%d.npy" % (rel, i))
        k = len(ix)
        before += np.linalg.norm(np.cov(X[:, ix], rowvar=False, bias=True) - Ct) ** 2
        after += np.linalg.norm(np.cov(A[:, o:o + k], rowvar=False, bias=True) - Ct) ** 2
        o += k
    assert after < before * 0.995 ** 2, (rel, after ** .5, before ** .5)
EOF
}

@test "the aligned rows carry both releases at epsilon 1 and stay raw for the source" {
	run -0 --separate-stderr rdp-account ledger --delta 1e-5 --format tsv aligned.tns
	$PY - "$output" <<'EOF'
import sys
rows = [l.split("\t") for l in sys.argv[1].splitlines()]
head, rows = rows[0], {r[0]: dict(zip(rows[0], r)) for r in rows[1:]}
assert sorted(rows) == ["mnist", "usps"], rows
for d in ("mnist", "usps"):
    assert rows[d]["releases"] == "1", rows[d]
    assert rows[d]["seeded"] == "0"
# usps is private at 1; mnist, used without privacy, has no finite epsilon
assert abs(float(rows["usps"]["epsilon"]) - 1) <= 1e-6, rows["usps"]
assert rows["mnist"]["epsilon"] == "inf", rows["mnist"]
# the aligned rows are the source's own rows, transformed one by one
assert rows["mnist"]["raw"] == "row-local" and rows["mnist"]["verdict"] == "not_private"
assert rows["usps"]["raw"] == "none" and rows["usps"]["verdict"] == "private"
EOF
}

@test "the two covariance releases fit a budget of 1.5, each counted once" {
	# tgt.cov.tns carries the source's release too (its partition came
	# from src.cov.tns): composed by id, it is not counted twice.
	run -0 --separate-stderr rdp-account ledger --delta 1e-5 --budget 1.5 src.cov.tns tgt.cov.tns
	run -1 --separate-stderr rdp-account ledger --delta 1e-5 --budget 0.9 src.cov.tns tgt.cov.tns
	[[ $stderr == *"dataset mnist: over budget"* ]]
	[[ $stderr == *"dataset usps: over budget"* ]]
	# the aligned rows are not private for the source at any budget
	run -1 --separate-stderr rdp-account ledger --delta 1e-5 --budget 1.5 aligned.tns
	[[ $stderr == *"dataset mnist: NOT private"* ]]
}
