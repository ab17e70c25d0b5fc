#!/usr/bin/env bats
# psdshrink: positive semi-definite recovery of covariance blocks.  Inputs
# are built from the .npy fixtures of tests/data/coral/ref.py (numpy,
# fixed seed) with tns from-npy and tns cat, in covest's layout; results
# are checked against scipy's generalised eigenproblem and a numpy
# bisection (ref.py).

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
	mk noisy.tns cov/0=noisy0.npy subspace/0=psub0.npy cov/1=noisy1.npy \
		subspace/1=psub1.npy count=count.npy
	mk target.tns cov/0=tgt0.npy subspace/0=psub0.npy cov/1=tgt1.npy \
		subspace/1=psub1.npy
	mk pd.tns cov/0=pd.npy
	mk singular.tns cov/0=singular.npy
	mk small.tns cov/0=small.npy
	mk indef.tns cov/0=indef.npy
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	F=$BATS_FILE_TMPDIR
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

# npy FILE TENSOR OUT: a tensor of a stream as .npy.
npy() {
	tns to-npy --tensor "$2" -o "$3" "$1"
}

# ---- the battery ----

@test "psdshrink --help prints the usage and options on stdout and exits 0" {
	run -0 --separate-stderr psdshrink --help
	[[ $output == "usage: psdshrink "* ]]
	[[ $output == *"--target TARGET"* ]]
	[ -z "$stderr" ]
}

@test "psdshrink --help synopsis equals the man page SYNOPSIS" {
	synopsis_matches psdshrink
}

@test "the psdshrink man page is clean under mandoc -Tlint" {
	run -0 mandoc -Tlint -W warning "$TOP/man/psdshrink.1"
	[ -z "$output" ]
}

@test "psdshrink -V prints the version" {
	run -0 psdshrink -V
	[[ $output == "psdshrink (privada) "[0-9]* ]]
}

@test "psdshrink rejects an unknown option with 64, usage on stderr, empty stdout" {
	run -64 --separate-stderr psdshrink --bogus "$F/noisy.tns"
	[ -z "$output" ]
	[[ $stderr == *"usage: psdshrink"* ]]
}

@test "psdshrink rejects a bad --tol, quoting it" {
	run -64 --separate-stderr psdshrink --tol 0,5 "$F/noisy.tns"
	[ -z "$output" ]
	[[ $stderr == *"--tol"*"'0,5'"* ]]
	run -64 --separate-stderr psdshrink --tol 0 "$F/noisy.tns"
	[ -z "$output" ]
}

@test "psdshrink rejects --floor without eigclip and --target with eigclip" {
	run -64 --separate-stderr psdshrink --floor 0.1 "$F/noisy.tns"
	[ -z "$output" ]
	[[ $stderr == *"--floor applies to --method eigclip"* ]]
	run -64 --separate-stderr psdshrink --method eigclip --target diag "$F/noisy.tns"
	[ -z "$output" ]
	[[ $stderr == *"--target applies to --method shrink"* ]]
}

@test "psdshrink rejects an unknown --method, listing the choices" {
	run -64 --separate-stderr psdshrink --method clip "$F/noisy.tns"
	[ -z "$output" ]
	[[ $stderr == *"'clip'"*shrink*eigclip*none* ]]
}

@test "psdshrink rejects garbage with 65, the position, and empty stdout" {
	printf 'not a tensor stream\n' > junk
	run -65 --separate-stderr psdshrink junk
	[ -z "$output" ]
	[[ $stderr == "psdshrink: junk: "* ]]
}

@test "psdshrink rejects a truncated stream with 65 and empty stdout" {
	head -c 100 "$F/noisy.tns" > cut.tns
	run -65 --separate-stderr psdshrink cut.tns
	[ -z "$output" ]
	[[ $stderr == "psdshrink: cut.tns: "* ]]
}

@test "psdshrink rejects an f32 covariance with 65, naming the tensor" {
	$PY -c "import numpy as np; np.save('c.npy', np.eye(3, dtype=np.float32))"
	mk c.tns cov/0=c.npy
	run -65 --separate-stderr psdshrink c.tns
	[ -z "$output" ]
	[[ $stderr == *"c.tns: tensor 'cov/0': expected an f64 [k, k]"* ]]
}

@test "psdshrink rejects a non-square or an asymmetric covariance with 65" {
	$PY -c "import numpy as np; np.save('r.npy', np.ones((2, 3)))"
	mk r.tns cov/0=r.npy
	run -65 --separate-stderr psdshrink r.tns
	[ -z "$output" ]
	[[ $stderr == *"tensor 'cov/0': expected an f64 [k, k]"* ]]
	$PY -c "import numpy as np; np.save('a.npy', np.array([[1., 2.], [2.1, 1.]]))"
	mk a.tns cov/0=a.npy
	run -65 --separate-stderr psdshrink a.tns
	[ -z "$output" ]
	[[ $stderr == *"'cov/0' is not symmetric"* ]]
}

@test "psdshrink rejects a covariance with a NaN with 65" {
	$PY -c "import numpy as np; np.save('n.npy', np.array([[1., np.nan], [np.nan, 1.]]))"
	mk n.tns cov/0=n.npy
	run -65 --separate-stderr psdshrink n.tns
	[ -z "$output" ]
	[[ $stderr == *"'cov/0': an entry is not finite"* ]]
}

@test "psdshrink rejects a stream without cov/<i> with 65" {
	mk x.tns X="$F/xs.npy"
	run -65 --separate-stderr psdshrink x.tns
	[ -z "$output" ]
	[[ $stderr == *"x.tns: no cov/<i> tensor"* ]]
}

@test "psdshrink reports a missing input with 66" {
	run -66 --separate-stderr psdshrink missing.tns
	[ -z "$output" ]
	[[ $stderr == *missing.tns* ]]
	run -66 --separate-stderr psdshrink --target missing.tns "$F/noisy.tns"
	[ -z "$output" ]
}

@test "psdshrink > /dev/full gives 74" {
	run -74 --separate-stderr bash -c "psdshrink '$F/noisy.tns' > /dev/full"
	[[ $stderr == *"psdshrink: "*"write"* ]]
}

@test "psdshrink refuses to write to a terminal without -f" {
	command -v script > /dev/null || skip "no script(1)"
	run -64 script -qec "psdshrink '$F/noisy.tns'" /dev/null
	[[ $output == *terminal* ]]
}

@test "psdshrink gives the same bytes on every run" {
	psdshrink "$F/noisy.tns" > a.tns
	psdshrink "$F/noisy.tns" > b.tns
	cmp a.tns b.tns
}

@test "psdshrink -o writes the file and nothing on stdout" {
	run -0 --separate-stderr psdshrink -o out.tns "$F/noisy.tns"
	[ -z "$output" ]
	run -0 tns verify out.tns
}

# ---- known answers ----

@test "shrinking towards identity gives alpha within tol of the generalised eigenproblem's" {
	psdshrink "$F/noisy.tns" > out.tns
	tns info --format json out.tns > info.json
	for i in 0 1; do
		npy out.tns cov/$i got$i.npy
		run -0 $PY "$REF" alpha "$F/noisy$i.npy" cov/$i identity info.json got$i.npy 1e-6
	done
	[ "$(meta out.tns psd.method cov/0)" = shrink ]
	[ "$(meta out.tns psd.target cov/1)" = identity ]
}

@test "the known-answer check fails on a wrong alpha" {
	psdshrink --tol 0.25 "$F/noisy.tns" > out.tns
	tns info --format json out.tns > info.json
	npy out.tns cov/0 got.npy
	run -1 $PY "$REF" alpha "$F/noisy0.npy" cov/0 identity info.json got.npy 1e-6
	[[ $output == *"not in [exact"* ]]
}

@test "a smaller --tol brings alpha within 1e-10 of the exact value" {
	psdshrink --tol 1e-10 "$F/noisy.tns" > out.tns
	tns info --format json out.tns > info.json
	npy out.tns cov/1 got.npy
	run -0 $PY "$REF" alpha "$F/noisy1.npy" cov/1 identity info.json got.npy 1e-10
}

@test "shrinking towards diag agrees with numpy" {
	psdshrink --target diag "$F/noisy.tns" > out.tns
	tns info --format json out.tns > info.json
	for i in 0 1; do
		npy out.tns cov/$i got$i.npy
		run -0 $PY "$REF" alpha "$F/noisy$i.npy" cov/$i diag info.json got$i.npy 1e-6
	done
	[ "$(meta out.tns psd.target cov/0)" = diag ]
}

@test "shrinking towards the blocks of a target file agrees with numpy" {
	psdshrink --target "$F/target.tns" "$F/noisy.tns" > out.tns
	tns info --format json out.tns > info.json
	for i in 0 1; do
		npy out.tns cov/$i got$i.npy
		run -0 $PY "$REF" alpha "$F/noisy$i.npy" cov/$i file info.json got$i.npy 1e-6 "$F/tgt$i.npy"
	done
	[ "$(meta out.tns psd.target cov/0)" = file ]
	[ "$(meta out.tns prov.input.0.name)" = "$F/target.tns" ]
	[ "$(meta out.tns prov.input.1.name)" = "$F/noisy.tns" ]
}

@test "a target file must have every block, of the same shape" {
	run -65 --separate-stderr psdshrink --target "$F/pd.tns" "$F/noisy.tns"
	[ -z "$output" ]
	[[ $stderr == *"pd.tns: target 'cov/0' is 5 x 5, the input's is 6 x 6"* ]]
	mk t0.tns cov/0="$F/tgt0.npy"
	run -65 --separate-stderr psdshrink --target t0.tns "$F/noisy.tns"
	[ -z "$output" ]
	[[ $stderr == *"t0.tns: the target has no tensor 'cov/1'"* ]]
}

@test "a target file must be positive definite" {
	run -65 --separate-stderr psdshrink --target "$F/singular.tns" "$F/singular.tns"
	[ -z "$output" ]
	[[ $stderr == *"target 'cov/0' is not positive definite"* ]]
}

@test "a target file with other subspaces is refused with 65" {
	$PY -c "import numpy as np; np.save('s.npy', np.arange(4, dtype=np.int64) + 7)"
	mk t.tns cov/0="$F/tgt0.npy" subspace/0="$F/psub0.npy" cov/1="$F/tgt1.npy" subspace/1=s.npy
	run -65 --separate-stderr psdshrink --target t.tns "$F/noisy.tns"
	[ -z "$output" ]
	[[ $stderr == *"t.tns: 'subspace/1' differs from the input's"* ]]
}

@test "an already positive definite block gives alpha 0 and stays bit for bit" {
	psdshrink "$F/pd.tns" > out.tns
	[ "$(meta out.tns psd.alpha cov/0)" = 0 ]
	npy out.tns cov/0 got.npy
	npy "$F/pd.tns" cov/0 want.npy
	cmp got.npy want.npy
}

@test "a singular positive semi-definite block gives alpha 0 and stays bit for bit" {
	psdshrink "$F/singular.tns" > out.tns
	[ "$(meta out.tns psd.alpha cov/0)" = 0 ]
	npy out.tns cov/0 got.npy
	npy "$F/singular.tns" cov/0 want.npy
	cmp got.npy want.npy
}

@test "a violated Theorem 2 condition is recorded and warned about" {
	run -0 --separate-stderr psdshrink "$F/small.tns"
	[[ $stderr == *"warning: 1 of 1 covariances were shrunk although PRIMA's Theorem 2 condition"*"violated (worst cov/0: ||Sigma||_F"* ]]
	psdshrink "$F/small.tns" 2>/dev/null > out.tns
	[ "$(meta out.tns psd.theorem2 cov/0)" = false ]
	tns info --format json out.tns > info.json
	npy out.tns cov/0 got.npy
	run -0 $PY "$REF" alpha "$F/small.npy" cov/0 identity info.json got.npy 1e-6
}

# Issue 15: one run printed 160+ warning lines, one per block.  Fails on
# the code before it (three lines, no count, no worst value).
@test "violated Theorem 2 blocks give one summary warning: the count and the worst" {
	tns from-npy --name cov/0 "$F/small.npy" > p0
	tns from-npy --name cov/1 "$F/small.npy" > p1
	tns from-npy --name cov/2 "$F/pd.npy" > p2
	tns from-npy --name cov/3 "$F/small.npy" > p3
	tns cat p0 p1 p2 p3 > m.tns
	run -0 --separate-stderr psdshrink -o out.tns m.tns
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == "psdshrink: warning: 3 of 4 covariances were shrunk although PRIMA's Theorem 2 condition ||Sigma||_F < ||C||_F is violated (worst cov/0: ||Sigma||_F 1.73205 >= ||C||_F 0.0134139, ratio 129): "*"(try --target diag)" ]]
	for i in 0 1 3; do
		[ "$(meta out.tns psd.theorem2 cov/$i)" = false ]
	done
	[ "$(meta out.tns psd.theorem2 cov/2)" = true ]
	# -v still reports each block, and the summary comes once.
	run -0 --separate-stderr psdshrink -v -o out.tns m.tns
	[ "$(grep -c 'Theorem 2 condition violated$' <<< "$stderr")" -eq 3 ]
	[ "$(grep -c 'warning:' <<< "$stderr")" -eq 1 ]
}

@test "the Theorem 2 warning is silenced by -q, and -v reports each block" {
	run -0 --separate-stderr psdshrink -q -o out.tns "$F/small.tns"
	[ -z "$stderr" ]
	run -0 --separate-stderr psdshrink -v -o out.tns "$F/noisy.tns"
	[[ $stderr == *"cov/0: k 6, alpha "*"Cholesky attempts"*"Theorem 2 condition holds"* ]]
	[[ $stderr == *"cov/1: k 4, alpha "* ]]
	[ "$(meta out.tns psd.theorem2 cov/0)" = true ]
}

@test "eigclip gives the nearest positive semi-definite matrix" {
	psdshrink --method eigclip "$F/noisy.tns" > out.tns
	for i in 0 1; do
		npy out.tns cov/$i got$i.npy
		run -0 $PY "$REF" eigclip "$F/noisy$i.npy" got$i.npy 0
	done
	[ "$(meta out.tns psd.method cov/0)" = eigclip ]
	[ "$(meta out.tns psd.alpha cov/0)" = 0 ]
	[ "$(meta out.tns psd.clipped cov/0)" -ge 1 ]
}

@test "eigclip with --floor raises the eigenvalues to the floor" {
	psdshrink --method eigclip --floor 0.25 "$F/noisy.tns" > out.tns
	npy out.tns cov/1 got.npy
	run -0 $PY "$REF" eigclip "$F/noisy1.npy" got.npy 0.25
	[ "$(meta out.tns psd.floor cov/1)" = 0.25 ]
}

@test "eigclip leaves a block without negative eigenvalues bit for bit" {
	psdshrink --method eigclip "$F/pd.tns" > out.tns
	[ "$(meta out.tns psd.clipped cov/0)" = 0 ]
	npy out.tns cov/0 got.npy
	npy "$F/pd.tns" cov/0 want.npy
	cmp got.npy want.npy
}

@test "--method none labels the blocks and changes nothing else" {
	psdshrink --method none "$F/noisy.tns" > out.tns
	[ "$(meta out.tns psd.method cov/1)" = none ]
	for t in cov/0 cov/1; do
		npy out.tns $t got.npy
		npy "$F/noisy.tns" $t want.npy
		cmp got.npy want.npy
	done
}

@test "other tensors are copied bit for bit and in order" {
	psdshrink "$F/noisy.tns" > out.tns
	tns info --format json out.tns > info.json
	run -0 $PY -c "import json; print(*[t['name'] for t in json.load(open('info.json'))['tensors']])"
	[ "$output" = "cov/0 subspace/0 cov/1 subspace/1 count" ]
	for t in subspace/0 subspace/1 count; do
		npy out.tns $t got.npy
		npy "$F/noisy.tns" $t want.npy
		cmp got.npy want.npy
	done
}

@test "the ledger is copied as it is, with no new release" {
	id=0123456789abcdef0123456789abcdef
	tns meta set --unsafe-ledger -i "$F/noisy.tns" -o led.tns \
		dp.release.$id.dataset=tgt dp.release.$id.mechanism=gaussian \
		dp.release.$id.epsilon=1 dp.raw.other=aggregate
	psdshrink led.tns > out.tns
	tns info --format json out.tns > info.json
	run -0 $PY -c "import json; m = json.load(open('info.json'))['metadata']; print(*sorted(k for k in m if k.startswith('dp.')))"
	[ "$output" = "dp.raw.other dp.release.$id.dataset dp.release.$id.epsilon dp.release.$id.mechanism" ]
	[ "$(meta out.tns dp.raw.other)" = aggregate ]
	[ "$(meta out.tns prov.tool)" = psdshrink ]
}

@test "a target file's ledger is merged, raw marks by strength" {
	tns meta set --unsafe-ledger -i "$F/noisy.tns" -o a.tns dp.raw.tgt=row-local
	tns meta set --unsafe-ledger -i "$F/target.tns" -o b.tns dp.raw.tgt=aggregate
	psdshrink --target b.tns a.tns > out.tns
	[ "$(meta out.tns dp.raw.tgt)" = aggregate ]
}

@test "a block indefinite beyond rounding is shrunk even when alpha* < tol" {
	$PY -c "
import numpy as np
c = np.load('$F/pd.npy')
np.save('c.npy', c - (np.linalg.eigvalsh(c)[0] + 1e-9) * np.eye(5))"
	mk c.tns cov/0=c.npy
	psdshrink c.tns > out.tns
	tns info --format json out.tns > info.json
	tns to-npy --tensor cov/0 -o got.npy out.tns
	run -0 $PY "$REF" alpha c.npy cov/0 identity info.json got.npy 1e-6
	[ "$(meta out.tns psd.alpha cov/0)" != 0 ]
}

@test "psdshrink reads standard input without an operand or with -" {
	psdshrink "$F/noisy.tns" > a.tns
	psdshrink < "$F/noisy.tns" > b.tns
	psdshrink - < "$F/noisy.tns" > c.tns
	npy a.tns cov/0 a.npy
	npy b.tns cov/0 b.npy
	npy c.tns cov/0 c.npy
	cmp a.npy b.npy
	cmp a.npy c.npy
	[ "$(meta b.tns prov.input.0.name)" = "<stdin>" ]
}
