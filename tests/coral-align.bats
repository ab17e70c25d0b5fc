#!/usr/bin/env bats
# coral-align: CORAL and subspace alignment per feature block.  Inputs are
# built from the .npy fixtures of tests/data/coral/ref.py (numpy, fixed
# seed) with tns from-npy and tns cat, in covest's layout (two blocks
# over 5 of 7 features); aligned rows are checked against numpy
# (eigh-based matrix square roots, ref.py) to 1e-10.

load test_helper

REF="$DATA/coral/ref.py"

# mk OUT NAME=FILE.npy ...: a stream of those tensors, in that order.
mk() {
	local out=$1 n=0 a parts=()
	shift
	for a in "$@"; do
		tns from-npy --name "${a%%=*}" "${a#*=}" > "$out.part$n" || return
		parts+=("$out.part$n")
		n=$((n + 1))
	done
	tns cat "${parts[@]}" > "$out" || return
	rm -f "${parts[@]}"
}

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	$PY "$REF" gen .
	mk cs.tns cov/0=cs0.npy subspace/0=sub0.npy cov/1=cs1.npy \
		subspace/1=sub1.npy count=count.npy
	mk ct.tns cov/0=ct0.npy subspace/0=sub0.npy cov/1=ct1.npy \
		subspace/1=sub1.npy
	mk ctbad.tns cov/0=ct0.npy subspace/0=sub0.npy cov/1=ct1.npy \
		subspace/1=subbad1.npy
	mk ct1.tns cov/0=ct0.npy subspace/0=sub0.npy
	mk xraw.tns X=xs.npy y=y.npy
	tns meta set --unsafe-ledger -i xraw.tns -o xs.tns dp.raw.src=row-local
	mk xs32.tns X=xs32.npy y=y.npy
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	F=$BATS_FILE_TMPDIR
	COVS=(--source-cov "$F/cs.tns" --target-cov "$F/ct.tns")
}

# meta FILE KEY [TENSOR]: print a stream (or tensor) metadata value.
meta() {
	tns info --format json "$1" > info.json || return
	$PY - "$2" "${3-}" <<'EOF'
import json, sys
d = json.load(open("info.json"))
key, t = sys.argv[1], sys.argv[2]
m = d["metadata"] if not t else \
    next(x for x in d["tensors"] if x["name"] == t)["metadata"]
print(m.get(key, "(absent)"))
EOF
}

# ---- the battery ----

@test "coral-align --help prints the usage and options on stdout and exits 0" {
	run -0 --separate-stderr coral-align --help
	[[ $output == "usage: coral-align "* ]]
	[[ $output == *"--source-cov FILE"* ]]
	[ -z "$stderr" ]
}

@test "coral-align --help synopsis equals the man page SYNOPSIS" {
	synopsis_matches coral-align
}

@test "the coral-align man page is clean under mandoc -Tlint" {
	run -0 mandoc -Tlint -W warning "$TOP/man/coral-align.1"
	[ -z "$output" ]
}

@test "coral-align -V prints the version" {
	run -0 coral-align -V
	[[ $output == "coral-align (privada) "[0-9]* ]]
}

@test "coral-align rejects an unknown option with 64, usage on stderr, empty stdout" {
	run -64 --separate-stderr coral-align --bogus "${COVS[@]}" "$F/xs.tns"
	[ -z "$output" ]
	[[ $stderr == *"usage: coral-align"* ]]
}

@test "coral-align needs both covariance streams" {
	run -64 --separate-stderr coral-align --source-cov "$F/cs.tns" "$F/xs.tns"
	[ -z "$output" ]
	[[ $stderr == *"--source-cov and --target-cov are required"* ]]
	run -64 --separate-stderr coral-align --source-cov - --target-cov "$F/ct.tns" "$F/xs.tns"
	[ -z "$output" ]
}

@test "coral-align rejects options that do not apply to the method" {
	run -64 --separate-stderr coral-align --method sa "${COVS[@]}" "$F/xs.tns"
	[ -z "$output" ]
	[[ $stderr == *"--method sa needs --dim"* ]]
	run -64 --separate-stderr coral-align --dim 2 "${COVS[@]}" "$F/xs.tns"
	[ -z "$output" ]
	[[ $stderr == *"--dim applies to --method sa only"* ]]
	run -64 --separate-stderr coral-align --method sa --dim 2 --reg 1 "${COVS[@]}" "$F/xs.tns"
	[ -z "$output" ]
	[[ $stderr == *"--reg applies to --method coral only"* ]]
}

@test "coral-align rejects a bad --reg, quoting it" {
	run -64 --separate-stderr coral-align --reg=-1 "${COVS[@]}" "$F/xs.tns"
	[ -z "$output" ]
	[[ $stderr == *"--reg"*"'-1'"* ]]
	run -64 --separate-stderr coral-align --reg 1x "${COVS[@]}" "$F/xs.tns"
	[ -z "$output" ]
	[[ $stderr == *"'1x'"* ]]
}

@test "coral-align rejects garbage rows with 65, the position, and empty stdout" {
	printf 'not a tensor stream\n' > junk
	run -65 --separate-stderr coral-align "${COVS[@]}" junk
	[ -z "$output" ]
	[[ $stderr == "coral-align: junk: "* ]]
}

@test "coral-align rejects a garbage covariance stream with 65, naming it" {
	printf 'not a tensor stream\n' > junk
	run -65 --separate-stderr coral-align --source-cov junk --target-cov "$F/ct.tns" "$F/xs.tns"
	[ -z "$output" ]
	[[ $stderr == "coral-align: junk: "* ]]
}

@test "coral-align rejects truncated rows with 65 and empty stdout" {
	head -c 200 "$F/xs.tns" > cut.tns
	run -65 --separate-stderr coral-align "${COVS[@]}" cut.tns
	[ -z "$output" ]
	[[ $stderr == "coral-align: cut.tns: "* ]]
}

@test "coral-align rejects X of the wrong dtype with 65" {
	$PY -c "import numpy as np; np.save('x.npy', np.ones((3, 7), dtype=np.int32))"
	mk x.tns X=x.npy
	run -65 --separate-stderr coral-align "${COVS[@]}" x.tns
	[ -z "$output" ]
	[[ $stderr == *"x.tns: tensor 'X': expected f32 or f64 rows"* ]]
}

@test "coral-align rejects a stream without X with 65" {
	mk y.tns y="$F/y.npy"
	run -65 --separate-stderr coral-align "${COVS[@]}" y.tns
	[ -z "$output" ]
	[[ $stderr == *"y.tns: no tensor 'X'"* ]]
}

@test "coral-align rejects a subspace beyond the columns of X with 65" {
	$PY -c "import numpy as np; np.save('x.npy', np.ones((3, 6)))"
	mk x.tns X=x.npy
	run -65 --separate-stderr coral-align "${COVS[@]}" x.tns
	[ -z "$output" ]
	[[ $stderr == *"subspace/1 names feature 6, but X has 6 columns"* ]]
}

@test "source and target covariances with other subspaces give 65" {
	run -65 --separate-stderr coral-align --source-cov "$F/cs.tns" --target-cov "$F/ctbad.tns" "$F/xs.tns"
	[ -z "$output" ]
	[[ $stderr == *"have different subspaces"*"other indices"* ]]
	run -65 --separate-stderr coral-align --source-cov "$F/cs.tns" --target-cov "$F/ct1.tns" "$F/xs.tns"
	[ -z "$output" ]
	[[ $stderr == *"has 2 covariance blocks"*"has 1"* ]]
}

@test "overlapping subspaces give 65" {
	mk c.tns cov/0="$F/cs0.npy" subspace/0="$F/sub0.npy" cov/1="$F/cs0.npy" subspace/1="$F/sub0.npy"
	run -65 --separate-stderr coral-align --source-cov c.tns --target-cov c.tns "$F/xs.tns"
	[ -z "$output" ]
	[[ $stderr == *"c.tns: feature 0 is in two subspaces"* ]]
}

@test "a block without its subspace, or of the wrong size, gives 65" {
	mk c.tns cov/0="$F/cs0.npy" subspace/0="$F/sub0.npy" cov/1="$F/cs1.npy"
	run -65 --separate-stderr coral-align --source-cov c.tns --target-cov c.tns "$F/xs.tns"
	[ -z "$output" ]
	[[ $stderr == *"c.tns: no tensor 'subspace/1' for cov/1"* ]]
	mk d.tns cov/0="$F/cs0.npy" subspace/0="$F/sub1.npy"
	run -65 --separate-stderr coral-align --source-cov d.tns --target-cov d.tns "$F/xs.tns"
	[ -z "$output" ]
	[[ $stderr == *"d.tns: tensor 'subspace/0': expected i64 [3]"* ]]
}

@test "an asymmetric covariance gives 65" {
	$PY -c "import numpy as np; np.save('a.npy', np.array([[1., 2.], [2.1, 1.]]))"
	mk a.tns cov/0=a.npy
	run -65 --separate-stderr coral-align --source-cov a.tns --target-cov a.tns "$F/xs.tns"
	[ -z "$output" ]
	[[ $stderr == *"a.tns: tensor 'cov/0' is not symmetric"* ]]
}

@test "coral-align reports missing inputs with 66" {
	run -66 --separate-stderr coral-align "${COVS[@]}" missing.tns
	[ -z "$output" ]
	run -66 --separate-stderr coral-align --source-cov missing.tns --target-cov "$F/ct.tns" "$F/xs.tns"
	[ -z "$output" ]
	[[ $stderr == *missing.tns* ]]
}

@test "coral-align > /dev/full gives 74" {
	run -74 --separate-stderr bash -c "coral-align --source-cov '$F/cs.tns' --target-cov '$F/ct.tns' '$F/xs.tns' > /dev/full"
	[[ $stderr == *"coral-align: "*"write"* ]]
}

@test "coral-align gives the same bytes on every run" {
	coral-align "${COVS[@]}" "$F/xs.tns" > a.tns
	coral-align "${COVS[@]}" "$F/xs.tns" > b.tns
	cmp a.tns b.tns
}

# ---- known answers ----

@test "CORAL on f64 rows agrees with numpy to 1e-10" {
	coral-align "${COVS[@]}" "$F/xs.tns" > out.tns
	tns to-npy --tensor X -o got.npy out.tns
	run -0 $PY "$REF" coral "$F" got.npy source 1
	[ "$(meta out.tns align.method X)" = coral ]
	[ "$(meta out.tns align.widths X)" = 3,2 ]
}

@test "with two BLAS threads (both eigensolvers at once) CORAL still agrees with numpy" {
	OPENBLAS_NUM_THREADS=2 coral-align "${COVS[@]}" "$F/xs.tns" > out.tns
	tns to-npy --tensor X -o got.npy out.tns
	run -0 $PY "$REF" coral "$F" got.npy source 1
	OPENBLAS_NUM_THREADS=2 coral-align --reg 0.5 "${COVS[@]}" "$F/xs.tns" > out.tns
	tns to-npy --tensor X -o got.npy out.tns
	run -1 $PY "$REF" coral "$F" got.npy source 1
	run -0 $PY "$REF" coral "$F" got.npy source 0.5
}

@test "the CORAL check fails when the regulariser differs" {
	coral-align --reg 0.5 "${COVS[@]}" "$F/xs.tns" > out.tns
	tns to-npy --tensor X -o got.npy out.tns
	run -1 $PY "$REF" coral "$F" got.npy source 1
	run -0 $PY "$REF" coral "$F" got.npy source 0.5
}

@test "CORAL without regulariser agrees with numpy to 1e-10" {
	coral-align --reg 0 "${COVS[@]}" "$F/xs.tns" > out.tns
	tns to-npy --tensor X -o got.npy out.tns
	run -0 $PY "$REF" coral "$F" got.npy source 0
}

@test "CORAL on f32 rows writes f32 and agrees with numpy to 1e-6" {
	coral-align "${COVS[@]}" "$F/xs32.tns" > out.tns
	tns info out.tns > info.txt
	grep -q '^  X  *f32  *(40, 5)' info.txt
	tns to-npy --tensor X -o got.npy out.tns
	run -0 $PY "$REF" coral "$F" got.npy source 1 f32
}

@test "CORAL on target rows only selects the block columns" {
	coral-align --apply-target "${COVS[@]}" "$F/xs.tns" > out.tns
	tns to-npy --tensor X -o got.npy out.tns
	run -0 $PY "$REF" coral "$F" got.npy target 1
	[ "$(meta out.tns align.side X)" = target ]
}

@test "subspace alignment of source rows agrees with numpy to 1e-10" {
	coral-align --method sa --dim 2 "${COVS[@]}" "$F/xs.tns" > out.tns
	tns to-npy --tensor X -o got.npy out.tns
	run -0 $PY "$REF" sa "$F" got.npy source 2
	[ "$(meta out.tns align.widths X)" = 2,2 ]
	[ "$(meta out.tns align.dim X)" = 2 ]
}

@test "subspace alignment of target rows maps them by Pt" {
	coral-align --method sa --dim 1 --apply-target "${COVS[@]}" "$F/xs.tns" > out.tns
	tns to-npy --tensor X -o got.npy out.tns
	run -0 $PY "$REF" sa "$F" got.npy target 1
	run -1 $PY "$REF" sa "$F" got.npy source 1
}

@test "--emit blocks writes X/<i> equal to the slices of the concatenation" {
	coral-align "${COVS[@]}" "$F/xs.tns" > cat.tns
	coral-align --emit blocks "${COVS[@]}" "$F/xs.tns" > blk.tns
	tns to-npy --tensor X -o cat.npy cat.tns
	tns to-npy --tensor X/0 -o b0.npy blk.tns
	tns to-npy --tensor X/1 -o b1.npy blk.tns
	run -0 $PY -c "
import numpy as np, sys
c, b0, b1 = np.load('cat.npy'), np.load('b0.npy'), np.load('b1.npy')
sys.exit(0 if np.array_equal(c[:, :3], b0) and np.array_equal(c[:, 3:], b1) else 1)"
	[ "$(meta blk.tns align.block X/1)" = 1 ]
}

@test "--emit blocks spools rows over several chunks correctly" {
	# 5000 rows: more than one chunk of 4096, so the spool's chunk layout
	# is exercised; f32 to keep the file small.
	$PY -c "
import numpy as np
r = np.random.default_rng(7)
np.save('x.npy', r.normal(size=(5000, 7)).astype(np.float32))"
	mk x.tns X=x.npy
	coral-align "${COVS[@]}" x.tns > cat.tns
	coral-align --emit blocks "${COVS[@]}" x.tns > blk.tns
	tns to-npy --tensor X -o cat.npy cat.tns
	tns to-npy --tensor X/0 -o b0.npy blk.tns
	tns to-npy --tensor X/1 -o b1.npy blk.tns
	run -0 $PY -c "
import numpy as np, sys
c, b0, b1 = np.load('cat.npy'), np.load('b0.npy'), np.load('b1.npy')
sys.exit(0 if np.array_equal(c[:, :3], b0) and np.array_equal(c[:, 3:], b1) else 1)"
}

@test "y and the other tensors are copied bit for bit" {
	coral-align "${COVS[@]}" "$F/xs.tns" > out.tns
	tns to-npy --tensor y -o got.npy out.tns
	tns to-npy --tensor y -o want.npy "$F/xs.tns"
	cmp got.npy want.npy
}

@test "one covariance block without subspaces covers every column" {
	$PY -c "
import numpy as np
x = np.load('$F/xs.npy')[:, :3]
np.save('x.npy', x)"
	mk x.tns X=x.npy
	mk s.tns cov/0="$F/cs0.npy"
	mk t.tns cov/0="$F/ct0.npy"
	coral-align --source-cov s.tns --target-cov t.tns x.tns > out.tns
	tns to-npy --tensor X -o got.npy out.tns
	run -0 $PY -c "
import numpy as np, sys
def sq(c, p):
    w, v = np.linalg.eigh(c + np.eye(3)); return (v * w ** p) @ v.T
x = np.load('x.npy')
want = x @ sq(np.load('$F/cs0.npy'), -0.5) @ sq(np.load('$F/ct0.npy'), 0.5)
sys.exit(0 if np.max(np.abs(np.load('got.npy') - want)) < 1e-10 else 1)"
}

@test "negative eigenvalues after --reg are clamped with a warning" {
	$PY -c "
import numpy as np
np.save('x.npy', np.ones((2, 2)))
np.save('i.npy', np.diag([1.0, -0.5]))"
	mk x.tns X=x.npy
	mk c.tns cov/0=i.npy
	run -0 --separate-stderr coral-align --reg 0 --source-cov c.tns --target-cov c.tns -o out.tns x.tns
	[[ $stderr == *"warning: block 0: 1 negative eigenvalues of the source covariance plus --reg (smallest -0.5) clamped to 0"* ]]
	[[ $stderr == *"warning: block 0: the source covariance plus --reg is singular: 1 directions dropped"* ]]
	[[ $stderr == *"warning: block 0: 1 negative eigenvalues of the target covariance"* ]]
	tns to-npy --tensor X -o got.npy out.tns
	# Cs^(-1/2) Ct^(1/2) = diag(1, 0) diag(1, 0): rows (1, 1) become (1, 0).
	run -0 $PY -c "import numpy as np; print(np.load('got.npy').tolist())"
	[ "$output" = "[[1.0, 0.0], [1.0, 0.0]]" ]
}

# ---- the ledger ----

@test "the output keeps X's row-local mark and copies the covariances' releases" {
	id=0123456789abcdef0123456789abcdef
	tns meta set --unsafe-ledger -i "$F/ct.tns" -o t.tns \
		dp.release.$id.dataset=tgt dp.release.$id.mechanism=gaussian
	run -0 --separate-stderr coral-align --source-cov "$F/cs.tns" --target-cov t.tns -o out.tns "$F/xs.tns"
	[ -z "$stderr" ]
	[ "$(meta out.tns dp.raw.src)" = row-local ]
	[ "$(meta out.tns dp.release.$id.dataset)" = tgt ]
	[ "$(meta out.tns prov.input.2.name)" = "$F/xs.tns" ]
}

@test "a source covariance that is not private for X's dataset marks the output aggregate and warns" {
	tns meta set --unsafe-ledger -i "$F/cs.tns" -o s.tns dp.raw.src=aggregate
	run -0 --separate-stderr coral-align --source-cov s.tns --target-cov "$F/ct.tns" -o out.tns "$F/xs.tns"
	[[ $stderr == *"warning: the source covariance is not differentially private for dataset 'src'"* ]]
	[ "$(meta out.tns dp.raw.src)" = aggregate ]
	run -0 --separate-stderr coral-align -q --source-cov s.tns --target-cov "$F/ct.tns" -o out.tns "$F/xs.tns"
	[ -z "$stderr" ]
}

@test "an aggregate mark for another dataset is carried without a warning" {
	tns meta set --unsafe-ledger -i "$F/ct.tns" -o t.tns dp.raw.tgt=aggregate
	run -0 --separate-stderr coral-align --source-cov "$F/cs.tns" --target-cov t.tns -o out.tns "$F/xs.tns"
	[ -z "$stderr" ]
	[ "$(meta out.tns dp.raw.tgt)" = aggregate ]
	[ "$(meta out.tns dp.raw.src)" = row-local ]
}

@test "coral-align reads the rows from standard input without an operand" {
	coral-align "${COVS[@]}" "$F/xs.tns" > a.tns
	coral-align "${COVS[@]}" < "$F/xs.tns" > b.tns
	tns to-npy --tensor X -o a.npy a.tns
	tns to-npy --tensor X -o b.npy b.tns
	cmp a.npy b.npy
	[ "$(meta b.tns prov.input.2.name)" = "<stdin>" ]
}

@test "with covest --sigma 0 on the same rows, the output is aggregate-derived and warned about" {
	command -v covest > /dev/null || skip "covest is not built"
	mk xt.tns X="$F/xt.npy"
	tns meta set --unsafe-ledger -i xt.tns -o xtm.tns dp.raw.tgt=row-local
	covest -q --sigma 0 --clip 100 -o s.tns "$F/xs.tns"
	covest -q --sigma 0 --clip 100 -o t.tns xtm.tns
	run -0 --separate-stderr coral-align --source-cov s.tns --target-cov t.tns -o out.tns "$F/xs.tns"
	[[ $stderr == *"warning: the source covariance is not differentially private for dataset 'src'"* ]]
	[ "$(meta out.tns dp.raw.src)" = aggregate ]
	[ "$(meta out.tns dp.raw.tgt)" = aggregate ]
}
