#!/usr/bin/env bats
# tns: verify, info, cat, pick, split, to-csv/from-csv, to-npy/from-npy,
# meta set.  Known answers come from numpy, awk, sort and an independent
# Python XXH64 (tests/data/tns/keyperm.py).
load test_helper

setup() {
	cd "$BATS_TEST_TMPDIR"
	# X row r is "r,10r" and y row r is "r": rows identify themselves.
	awk 'BEGIN { for (r = 0; r < 10; r++) print r "," 10 * r }' > x.csv
	awk 'BEGIN { for (r = 0; r < 10; r++) print r }' > y.csv
	tns from-csv --name X --dtype i32 -o x.tns x.csv
	tns from-csv --name y --dtype i32 -o y.tns y.csv
	printf 'not a tensor stream\n' > garbage.tns
}

# json_get FILE EXPR: evaluate a Python expression over the JSON in FILE
# (bound to j).
json_get() {
	"$PY" -c 'import json, sys; j = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# mknpy FILE DICT: a .npy 1.0 file with header DICT (padded to 128 bytes)
# and no data.
mknpy() {
	printf '\x93NUMPY\x01\x00\x76\x00%-117s\n' "$2" > "$1"
}

# --- the battery -----------------------------------------------------------

@test "tns --help lists every command on stdout and exits 0" {
	run -0 --separate-stderr tns --help
	for c in verify info cat pick split to-csv from-csv to-npy to-npz from-npy "meta set"; do
		assert_output --partial "tns $c ["
	done
	[ -z "$stderr" ]
}

@test "tns COMMAND --help prints the same usage on stdout" {
	run -0 --separate-stderr tns split --help
	assert_line --index 0 --partial "usage: tns verify"
	[ -z "$stderr" ]
}

@test "tns --help synopsis equals the man page SYNOPSIS" {
	synopsis_matches tns
}

@test "the tns man page is clean under mandoc -Tlint" {
	run -0 mandoc -Tlint -W warning "$TOP/man/tns.1"
	refute_output
}

@test "tns -V prints the version" {
	run -0 --separate-stderr tns -V
	assert_output --regexp '^tns \(privada\) [0-9]+\.[0-9]+\.[0-9]+$'
}

@test "tns without a command gives 64 with usage on stderr" {
	run -64 --separate-stderr tns
	refute_output
	[[ $stderr == "usage: tns verify"* ]]
}

@test "tns rejects an unknown command with 64" {
	run -64 --separate-stderr tns frobnicate x.tns
	refute_output
	[[ $stderr == *"tns: unknown command 'frobnicate'"* ]]
}

@test "tns rejects an unknown option with 64, usage on stderr, empty stdout" {
	run -64 --separate-stderr tns cat --bogus x.tns
	refute_output
	[[ $stderr == *"usage: tns verify"* ]]
}

@test "tns rejects an option that does not apply to the command" {
	run -64 --separate-stderr tns verify --level 3 x.tns
	refute_output
	[[ $stderr == *"option --level does not apply to 'tns verify'"* ]]
}

@test "tns rejects a bad --level, quoting it" {
	run -64 --separate-stderr tns cat --level 3x x.tns
	refute_output
	[[ $stderr == *"invalid --level '3x'"* ]]
}

@test "tns split needs exactly one of --parts and --fractions" {
	run -64 --separate-stderr tns split x.tns
	refute_output
	[[ $stderr == *"exactly one of --parts and --fractions"* ]]
	run -64 --separate-stderr tns split --parts 2 --fractions 0.5,0.5 x.tns
}

@test "tns split rejects fractions that do not sum to 1, quoting them" {
	run -64 --separate-stderr tns split --fractions 0.5,0.3 x.tns
	[[ $stderr == *"invalid --fractions '0.5,0.3'"*"not 1"* ]]
	run -64 --separate-stderr tns split --fractions 0.5,abc x.tns
	[[ $stderr == *"'abc' is not a number"* ]]
	run -64 --separate-stderr tns split --parts 0 x.tns
	[ ! -e part-0.tns ]
}

@test "every command rejects garbage with 65, the position, and empty stdout" {
	for c in verify info cat to-csv to-npy to-npz "split --parts 2"; do
		run -65 --separate-stderr tns $c garbage.tns
		refute_output
		[[ $stderr == "tns: garbage.tns: offset 0: "* ]] || { echo "$c: $stderr"; false; }
	done
	for c in "pick X" "meta set a=b"; do
		run -65 --separate-stderr tns $c -i garbage.tns
		refute_output
		[[ $stderr == "tns: garbage.tns: offset 0: "* ]]
	done
}

@test "tns reports a missing input file with 66" {
	run -66 --separate-stderr tns verify no-such.tns
	refute_output
	[[ $stderr == "tns: no-such.tns: No such file or directory" ]]
}

@test "tns reads standard input for -" {
	run -0 --separate-stderr tns verify -v - < x.tns
	assert_output "<stdin>: ok"
}

# --- verify ----------------------------------------------------------------

@test "tns verify accepts a good stream silently, or says ok with -v" {
	run -0 --separate-stderr tns verify x.tns y.tns
	refute_output
	[ -z "$stderr" ]
	run -0 --separate-stderr tns verify -v x.tns y.tns
	assert_output $'x.tns: ok\ny.tns: ok'
}

@test "tns verify rejects garbage with 65 and the reader's message" {
	run -65 --separate-stderr tns verify garbage.tns
	refute_output
	[[ $stderr == "tns: garbage.tns: offset 0: input byte 0: not zstd-compressed"* ]]
}

@test "tns verify rejects a stream cut at any of several offsets" {
	tns meta set -i x.tns data.name=cut -o whole.tns
	size=$(stat -c %s whole.tns)
	for n in 0 1 4 5 12 $((size / 3)) $((size / 2)) $((size - 9)) $((size - 1)); do
		head -c "$n" whole.tns > cut.tns
		run -65 --separate-stderr tns verify cut.tns
		refute_output
		[[ $stderr == "tns: cut.tns: offset "[0-9]*": "* ]]
	done
}

@test "tns verify checks every file and fails when one is bad" {
	run -65 --separate-stderr tns verify -v x.tns garbage.tns y.tns
	assert_output $'x.tns: ok\ny.tns: ok'
	[[ $stderr == "tns: garbage.tns: offset 0: "* ]]
}

@test "tns verify accepts every good vector and rejects every bad one with its message" {
	shopt -s nullglob
	good=("$GOOD"/*.tns) bad=("$BAD"/*.tns)
	[ ${#good[@]} -gt 0 ] || skip "no test vectors in formats/testdata"
	for f in "${good[@]}"; do
		run -0 tns verify "$f"
	done
	for f in "${bad[@]}"; do
		run -65 --separate-stderr tns verify "$f"
		refute_output
		[[ $stderr == "tns: $f: offset "*"$(cat "${f%.tns}.err")"* ]] ||
			{ echo "$f: $stderr"; false; }
	done
}

# --- info ------------------------------------------------------------------

@test "tns info reports version, dtype, shape with counted rows and bytes" {
	tns cat -o xy.tns x.tns y.tns
	run -0 --separate-stderr tns info --format json xy.tns
	echo "$output" > info.json
	[ "$(json_get info.json 'j["version"]')" = 1.0 ]
	[ "$(json_get info.json '[(t["name"], t["dtype"], t["shape"], t["bytes"], t["streamed"]) for t in j["tensors"]]')" = \
	  "[('X', 'i32', [10, 2], 80, True), ('y', 'i32', [10, 1], 40, True)]" ]
}

@test "tns info text output is aligned" {
	run -0 --separate-stderr tns info x.tns
	assert_line --index 0 "x.tns"
	assert_line --index 1 "  version  1.0"
	assert_line --index 3 "  tensors  1"
	assert_line --index 4 "  name  dtype  shape    bytes  rows"
	assert_line --index 5 "  X     i32    (10, 2)  80     streamed"
}

@test "tns info --stats gives min, max and mean as numpy computes them" {
	"$PY" -c 'import numpy as np; np.save("a.npy", np.array([[0.1, -2.5], [7.25, 1e-3], [np.nan, 3.0]]))'
	tns from-npy --name a -o a.tns a.npy
	run -0 --separate-stderr tns info --stats --format json a.tns
	echo "$output" > info.json
	want=$("$PY" -c 'import numpy as np; a = np.load("a.npy"); print(repr((float(np.nanmin(a)), float(np.nanmax(a)), float(np.nanmean(a)), 5, 1)))')
	got=$(json_get info.json 'repr(tuple(j["tensors"][0]["stats"][k] for k in ("min", "max", "mean", "count", "nan")))')
	[ "$got" = "$want" ]
}

@test "tns info reports the minor version of a newer stream" {
	[ -e "$GOOD/minor-version.tns" ] || skip "no vector minor-version.tns"
	run -0 --separate-stderr tns info --format json "$GOOD/minor-version.tns"
	[[ $output == *'"version":"1.7"'* ]]
}

@test "tns info summarises the ledger: raw marks and dp keys by group" {
	tns meta set --unsafe-ledger -i x.tns -o l.tns dp.raw.adult=row-local \
		dp.release.abc.epsilon=0.5 dp.release.abc.mechanism=gaussian \
		dp.release.def.epsilon=1
	run -0 --separate-stderr tns info l.tns
	assert_output --partial "$(printf '%s\n' \
		'  ledger' \
		'    raw-derived from dataset adult (row-local): NOT private' \
		'    dp.release.abc.*' \
		'      dp.release.abc.epsilon    0.5' \
		'      dp.release.abc.mechanism  gaussian' \
		'    dp.release.def.*' \
		'      dp.release.def.epsilon  1')"
}

@test "tns info escapes control characters of metadata" {
	tns meta set -i x.tns -o e.tns "note=red"$'\e'"[31m"$'\n'"x"
	run -0 --separate-stderr tns info e.tns
	assert_output --partial 'red\x1b[31m\nx'
	[[ $output != *$'\e'* ]]
}

@test "tns info prints nothing when a later input is bad" {
	run -65 --separate-stderr tns info x.tns garbage.tns
	refute_output
	[[ $stderr == "tns: garbage.tns: offset 0: "* ]]
}

@test "tns info > /dev/full gives 74" {
	run -74 --separate-stderr bash -c 'tns info x.tns > /dev/full'
	[[ $stderr == *"write error"* ]]
}

# --- cat and pick ----------------------------------------------------------

@test "tns cat joins two streams and pick takes them apart again" {
	tns cat -o xy.tns x.tns y.tns
	run -0 tns info --format json xy.tns
	[[ $output == *'"name":"X"'*'"name":"y"'* ]]
	tns pick -i xy.tns -o px.tns X
	run -0 --separate-stderr tns to-csv px.tns
	assert_output "$(cat x.csv)"
	run -0 --separate-stderr tns to-csv --tensor y xy.tns
	assert_output "$(cat y.csv)"
}

@test "tns cat refuses a tensor name in two inputs, naming both" {
	run -65 --separate-stderr tns cat -o out.tns x.tns y.tns x.tns
	[[ $stderr == "tns: x.tns: tensor 'X' is also in x.tns"* ]]
	[ ! -e out.tns ]
}

@test "tns cat re-encodes one stream at another level with the same content" {
	awk 'BEGIN { for (r = 0; r < 3000; r++) print r % 7 "," r % 5 "," 1 }' > big.csv
	tns from-csv --name b -o b1.tns big.csv
	tns cat --level 19 -o b19.tns b1.tns
	! cmp -s b1.tns b19.tns
	tns verify b19.tns
	tns to-csv -o b1.csv b1.tns
	tns to-csv -o b19.csv b19.tns
	cmp b1.csv b19.csv
}

@test "tns cat keeps the metadata of each tensor" {
	[ -e "$GOOD/example.tns" ] || skip "no vector example.tns"
	tns cat -o c.tns "$GOOD/example.tns" x.tns
	run -0 tns info --format json c.tns
	echo "$output" > info.json
	[ "$(json_get info.json '[t["metadata"] for t in j["tensors"]]')" = \
	  "[{}, {'classes': '2'}, {}]" ]
}

@test "tns cat records the name and digest of each input" {
	# y.tns comes from tns from-csv: of unknown provenance, it may be raw
	# records, and gets no digest; the same rows with that mark removed
	# (tests only) do.
	tns meta set --unsafe-ledger -i y.tns -o ypub.tns data.name=y
	tns pick -i y.tns --rename y=y2 -o y2.tns y
	tns cat -o xy.tns x.tns ypub.tns y2.tns
	run -0 tns info --format json ypub.tns
	echo "$output" > y.json
	run -0 tns info --format json xy.tns
	echo "$output" > xy.json
	[ "$(json_get xy.json 'j["metadata"]["prov.input.1.name"]')" = ypub.tns ]
	[ "$(json_get xy.json 'j["metadata"]["prov.input.1.xxh64"]')" = "$(json_get y.json 'j["xxh64"]')" ]
	[ "$(json_get xy.json 'j["metadata"]["prov.input.2.name"]')" = y2.tns ]
	[ "$(json_get xy.json '"prov.input.2.xxh64" in j["metadata"]')" = False ]
	[ "$(json_get xy.json 'j["metadata"]["prov.args"]')" = "'cat' '-o' 'xy.tns' 'x.tns' 'ypub.tns' 'y2.tns'" ]
}

@test "tns cat refuses inputs whose ledgers conflict" {
	id=0123456789abcdef0123456789abcdef
	tns meta set --unsafe-ledger -i x.tns -o a.tns dp.release.$id.epsilon=1
	tns meta set --unsafe-ledger -i y.tns -o b.tns dp.release.$id.epsilon=2
	run -65 --separate-stderr tns cat -o out.tns a.tns b.tns
	[[ $stderr == "tns: b.tns: ledger entry 'dp.release.$id.epsilon' conflicts with another input" ]]
	[ ! -e out.tns ]
}

@test "tns cat merges raw-taint marks by strength: aggregate wins" {
	tns meta set --unsafe-ledger -i x.tns -o a.tns dp.raw.d=row-local
	tns meta set --unsafe-ledger -i y.tns -o b.tns dp.raw.d=aggregate
	tns cat -o out.tns a.tns b.tns
	run -0 --separate-stderr tns info out.tns
	assert_output --partial "raw-derived from dataset d (aggregate)"
	tns cat -o out2.tns b.tns a.tns
	run -0 --separate-stderr tns info out2.tns
	assert_output --partial "raw-derived from dataset d (aggregate)"
}

@test "tns cat of different parts marks split.part mixed; equal split keys stay" {
	tns meta set -i x.tns -o a.tns split.part=0/5 split.parent=00aa split.id=11bb
	tns meta set -i y.tns -o b.tns split.part=1/5 split.parent=00aa split.id=11bb
	tns meta set -i y.tns -o c.tns split.part=0/5 split.parent=00aa split.id=22cc
	tns meta set -i y.tns -o d.tns split.part=0/5 split.parent=00aa split.id=11bb
	for pair in "a b" "b a" "a c"; do
		set -- $pair
		tns cat -o out.tns $1.tns $2.tns
		run -0 --separate-stderr tns info --format json out.tns
		[[ $output == *'"split.part":"mixed"'* ]]
		rm out.tns
	done
	tns cat -o out.tns a.tns d.tns
	run -0 --separate-stderr tns info --format json out.tns
	[[ $output == *'"split.part":"0/5"'* && $output == *'"split.id":"11bb"'* ]]
}

@test "tns cat, pick and split keep every dp.* ledger key" {
	tns meta set --unsafe-ledger -i x.tns -o a.tns data.name=demo \
		dp.raw.demo=row-local dp.release.r1.epsilon=2
	tns meta set --unsafe-ledger -i y.tns -o b.tns dp.raw.other=aggregate
	tns cat -o c.tns a.tns b.tns
	tns pick -i c.tns -o p.tns y
	tns split --parts 2 --seed 1 --prefix s- c.tns
	for f in c.tns p.tns s-0.tns s-1.tns; do
		run -0 tns info --format json "$f"
		echo "$output" > m.json
		[ "$(json_get m.json 'sorted((k, v) for k, v in j["metadata"].items() if k.startswith("dp."))')" = \
		  "[('dp.raw.demo', 'row-local'), ('dp.raw.other', 'aggregate'), ('dp.release.r1.epsilon', '2')]" ]
	done
}

@test "tns cat > /dev/full gives 74" {
	run -74 --separate-stderr bash -c 'tns cat x.tns > /dev/full'
	[[ $stderr == *"write error"* ]]
}

@test "tns cat leaves a stream without its end when an input is bad" {
	run -65 --separate-stderr bash -c 'tns cat x.tns garbage.tns > out.tns'
	run -65 tns verify out.tns
}

@test "tns pick matches glob patterns and keeps input order" {
	tns pick -i x.tns --rename X=model/w -o w.tns X
	tns pick -i y.tns --rename y=data/y -o d.tns y
	tns pick -i x.tns --rename X=model/b -o b.tns X
	tns cat -o all.tns w.tns d.tns b.tns
	tns pick -i all.tns -o m.tns 'model/b' 'model/*'
	run -0 tns info --format json m.tns
	echo "$output" > m.json
	[ "$(json_get m.json '[t["name"] for t in j["tensors"]]')" = "['model/w', 'model/b']" ]
}

@test "tns pick --rename renames a picked tensor" {
	tns pick -i x.tns --rename X=features -o f.tns X
	run -0 tns to-csv --tensor features f.tns
	assert_output "$(cat x.csv)"
}

@test "tns pick names what the stream has when a name is absent" {
	tns cat -o xy.tns x.tns y.tns
	run -65 --separate-stderr tns pick -i xy.tns -o out.tns X nope
	[[ $stderr == "tns: xy.tns: no tensor matches 'nope'; the stream has: X, y" ]]
	[ ! -e out.tns ]
}

@test "tns pick refuses a rename that makes two tensors one name" {
	tns cat -o xy.tns x.tns y.tns
	run -64 --separate-stderr tns pick -i xy.tns --rename X=y -o out.tns X y
	[[ $stderr == *"tensor name 'y' would appear twice"* ]]
	[ ! -e out.tns ]
}

@test "tns pick needs a name operand" {
	run -64 --separate-stderr tns pick -i x.tns
	refute_output
}

# --- split -----------------------------------------------------------------

@test "tns split --parts gives disjoint parts of near-equal size whose union is the input" {
	tns split --parts 3 --seed 5 --prefix p- x.tns
	: > all.csv
	for i in 0 1 2; do
		tns to-csv -o "p$i.csv" "p-$i.tns"
		cat "p$i.csv" >> all.csv
		wc -l < "p$i.csv" >> sizes
	done
	sort all.csv > got
	sort x.csv > want
	cmp got want
	[ "$(sort -n sizes | tr '\n' ' ')" = "3 3 4 " ]
}

@test "tns split keeps the rows of X and y together" {
	tns cat -o xy.tns x.tns y.tns
	tns split --parts 2 --prefix p- xy.tns
	for i in 0 1; do
		tns to-csv --tensor X -o x$i.csv p-$i.tns
		tns to-csv --tensor y -o y$i.csv p-$i.tns
		cut -d, -f1 x$i.csv > k$i
		cmp k$i y$i.csv
	done
}

@test "tns split follows the documented keyed permutation" {
	awk 'BEGIN { for (r = 0; r < 50; r++) print r }' > r.csv
	tns from-csv --dtype i64 --name r -o r.tns r.csv
	tns split --parts 3 --seed 123456789 --prefix p- r.tns
	"$PY" "$DATA/tns/keyperm.py" 123456789 50 17 17 16 > want
	: > got
	for i in 0 1 2; do
		tns to-csv -o p$i.csv p-$i.tns
		tr '\n' ' ' < p$i.csv | sed 's/ $//' >> got
		echo >> got
	done
	cmp got want
}

@test "tns split with the same seed gives the same rows, in a new split" {
	mkdir a b
	(cd a && tns split --parts 2 --seed 99 ../x.tns)
	(cd b && tns split --parts 2 --seed 99 ../x.tns)
	for i in 0 1; do
		tns to-csv -o a$i.csv a/part-$i.tns
		tns to-csv -o b$i.csv b/part-$i.tns
		cmp a$i.csv b$i.csv
		# split.parent and split.id are fresh on every run: parts of
		# two runs must not pass for parts of one split.
		[ "$(json_get <(tns info --format json a/part-$i.tns) 'j["metadata"]["split.parent"]')" != \
		  "$(json_get <(tns info --format json b/part-$i.tns) 'j["metadata"]["split.parent"]')" ]
	done
}

@test "tns split without --seed draws a fresh permutation from getrandom" {
	# 100 rows in two parts: equal outputs have probability 1/C(100,50),
	# below 1e-28.
	awk 'BEGIN { for (r = 0; r < 100; r++) print r }' > r.csv
	tns from-csv --name r -o r.tns r.csv
	tns split --parts 2 --prefix a- r.tns
	tns split --parts 2 --prefix b- r.tns
	tns to-csv -o a.csv a-0.tns
	tns to-csv -o b.csv b-0.tns
	! cmp -s a.csv b.csv
	run -0 tns info --format json a-0.tns
	[[ $output == *'"split.seed_source":"getrandom"'* ]]
}

@test "tns split records the part, the seed source and a random parent, not a digest" {
	tns meta set --unsafe-ledger -i x.tns -o n.tns data.name=demo dp.raw.demo=row-local
	tns split --parts 3 --seed 1 --prefix p- n.tns
	run -0 tns info --format json n.tns
	echo "$output" > n.json
	run -0 tns info --format json p-1.tns
	echo "$output" > p.json
	[ "$(json_get p.json 'j["metadata"]["split.part"]')" = 1/3 ]
	[ "$(json_get p.json 'j["metadata"]["split.seed_source"]')" = seed ]
	[ "$(json_get p.json 'j["metadata"]["data.name"]')" = demo ]
	# fails on 7b23f82: split.parent was the XXH64 of the input, so
	# anyone knowing the other rows could test one row's membership.
	parent=$(json_get p.json 'j["metadata"]["split.parent"]')
	[[ $parent =~ ^[0-9a-f]{16}$ ]]
	[ "$parent" != "$(json_get n.json 'j["xxh64"]')" ]
	[ "$(json_get <(tns info --format json p-0.tns) 'j["metadata"]["split.parent"]')" = "$parent" ]
	# Nor is the input's digest in prov.input.0.xxh64: it is protected.
	run -0 tns info --format json p-1.tns
	refute_output --partial "$(json_get n.json 'j["xxh64"]')"
	refute_output --partial '"prov.input.0.xxh64"'
	assert_output --partial '"prov.input.0.name":"n.tns"'
	# An input without raw marks (nor unknown provenance) keeps its
	# digest.
	tns meta set --unsafe-ledger -i x.tns -o xpub.tns data.name=x
	tns split --parts 3 --seed 1 --prefix q- xpub.tns
	run -0 tns info --format json xpub.tns
	echo "$output" > x.json
	run -0 tns info --format json q-0.tns
	assert_output --partial "\"prov.input.0.xxh64\":\"$(json_get x.json 'j["xxh64"]')\""
}

@test "tns split --fractions floors the sizes and gives the remainder to the last part" {
	tns split --fractions 0.25,0.25,0.5 --seed 3 --prefix f- x.tns
	for i in 0 1 2; do
		run -0 tns info --format json f-$i.tns
		echo "$output" > f.json
		json_get f.json 'j["tensors"][0]["shape"][0]' >> sizes
	done
	[ "$(tr '\n' ' ' < sizes)" = "2 2 6 " ]
}

@test "tns split numbers the parts with zero padding" {
	# 11 parts of 10 rows: the last is empty, asked for with --allow-empty.
	mkdir d
	tns split --parts 11 --allow-empty --seed 1 --prefix d/p x.tns
	[ "$(ls d | tr '\n' ' ')" = "p00.tns p01.tns p02.tns p03.tns p04.tns p05.tns p06.tns p07.tns p08.tns p09.tns p10.tns " ]
}

@test "tns split cannot create parts in a missing directory: 73 and nothing left" {
	run -73 --separate-stderr tns split --parts 2 --prefix nodir/p x.tns
	[[ $stderr == "tns: nodir/p0.tns: No such file or directory" ]]
}

@test "tns split refuses tensors with different row counts" {
	head -n 4 y.csv > y4.csv
	tns from-csv --name y --dtype i32 -o y4.tns y4.csv
	tns cat -o xy4.tns x.tns y4.tns
	run -65 --separate-stderr tns split --parts 2 --prefix p- xy4.tns
	[[ $stderr == "tns: xy4.tns: tensor 'y' has 4 rows, 'X' has 10: split needs equal row counts"* ]]
	[ ! -e p-0.tns ]
	tns split --parts 2 --tensors X --prefix q- xy4.tns
	run -0 tns info --format json q-0.tns
	[[ $output == *'"name":"X"'* && $output != *'"name":"y"'* ]]
}

@test "tns split names what the stream has when --tensors names an absent tensor" {
	run -65 --separate-stderr tns split --parts 2 --tensors X,Z --prefix p- x.tns
	[ "$stderr" = "tns: x.tns: --tensors: no tensor 'Z'; the stream has: X" ]
	[ ! -e p-0.tns ]
}

@test "tns split leaves no part when the input is bad" {
	run -65 --separate-stderr tns split --parts 2 --prefix p- garbage.tns
	[ -z "$(ls -A | grep -e "^p-" -e "^\.p-")" ]
}

# --- CSV -------------------------------------------------------------------

@test "tns to-csv writes f64 with 17 digits, f32 with 9 and integers exactly" {
	"$PY" -c '
import numpy as np
v = [0.1, -1/3, 1e300, 5e-324, 2.5]
np.save("d.npy", np.array(v, dtype="<f8"))
np.save("f.npy", np.array(v[:2] + [3.4e38, 1e-45, 2.5], dtype="<f4"))
np.save("i.npy", np.array([-2**63, 2**63 - 1, 0], dtype="<i8"))
with open("want", "w") as o:
    for x in np.load("d.npy"): print("%.17g" % x, file=o)
    for x in np.load("f.npy"): print("%.9g" % float(x), file=o)
    for x in np.load("i.npy"): print(int(x), file=o)
'
	: > got
	for t in d f i; do
		tns from-npy -o $t.tns $t.npy
		tns to-csv $t.tns >> got
	done
	cmp got want
}

@test "tns to-csv --header names the columns" {
	run -0 --separate-stderr tns to-csv --header x.tns
	assert_line --index 0 "X_0,X_1"
	assert_line --index 1 "0,0"
}

@test "tns to-csv refuses a 3-D tensor" {
	"$PY" -c 'import numpy as np; np.save("c.npy", np.zeros((2, 2, 2)))'
	tns from-npy --name cube -o c.tns c.npy
	run -65 --separate-stderr tns to-csv c.tns
	refute_output
	[[ $stderr == "tns: c.tns: tensor 'cube' has 3 dimensions"* ]]
}

@test "tns to-csv names what the stream has when --tensor is absent" {
	run -65 --separate-stderr tns to-csv --tensor Z x.tns
	refute_output
	[[ $stderr == "tns: x.tns: no tensor 'Z'; the stream has: X" ]]
}

@test "tns to-csv > /dev/full gives 74" {
	run -74 --separate-stderr bash -c 'tns to-csv x.tns > /dev/full'
	[[ $stderr == *"write error"* ]]
}

@test "tns from-csv then to-csv gives back the values" {
	printf '1.5,-2,1e-300\nnan,inf,-inf\n0.1,3,7\n' > v.csv
	tns from-csv -o v.tns v.csv
	run -0 --separate-stderr tns to-csv v.tns
	assert_output $'1.5,-2,1e-300\nnan,inf,-inf\n0.10000000000000001,3,7'
}

@test "tns from-csv names FILE:LINE for a field that is not a number" {
	printf '1,2\n3,4\n5,abc\n' > bad.csv
	run -65 --separate-stderr tns from-csv -o out.tns bad.csv
	refute_output
	[ "$stderr" = "tns: bad.csv:3: field 2 'abc' is not a number" ]
	[ ! -e out.tns ]
}

@test "tns from-csv rejects a line with another number of fields" {
	printf '1,2\n3\n' > bad.csv
	run -65 --separate-stderr tns from-csv -o out.tns bad.csv
	[ "$stderr" = "tns: bad.csv:2: 1 fields, expected 2 like the first line" ]
}

@test "tns from-csv rejects an integer out of the dtype's range" {
	printf '255\n256\n' > bad.csv
	run -65 --separate-stderr tns from-csv --dtype u8 -o out.tns bad.csv
	[ "$stderr" = "tns: bad.csv:2: field 1 '256' is out of range for u8" ]
	printf '1.5\n' > f.csv
	run -65 --separate-stderr tns from-csv --dtype i32 -o out.tns f.csv
	[ "$stderr" = "tns: f.csv:1: field 1 '1.5' is not an integer" ]
}

@test "tns from-csv --header skips the first line and keeps its width" {
	printf 'a,b,c\n' > h.csv
	tns from-csv --header -o h.tns h.csv
	run -0 tns info --format json h.tns
	[[ $output == *'"shape":[0,3]'* ]]
}

@test "tns from-csv rejects a bad --dtype and --name" {
	run -64 --separate-stderr tns from-csv --dtype f16 x.csv
	[[ $stderr == *"invalid --dtype 'f16'"* ]]
	run -64 --separate-stderr tns from-csv --name .x x.csv
	[[ $stderr == *"invalid --name '.x'"* ]]
}

# --- NumPy -----------------------------------------------------------------

@test "tns from-npy then to-npy is byte-identical to np.save for each dtype and shape" {
	"$PY" -c '
import numpy as np
rng = np.random.default_rng(7)
for dt in ("<f4", "<f8", "<i4", "<i8", "|u1"):
    for k, shape in enumerate([(7,), (5, 3), (2, 3, 4), (0, 3), (0,), ()]):
        np.save("a%s%d.npy" % (dt[1:], k), (rng.standard_normal(shape) * 50).astype(dt))
'
	n=0
	for f in a*.npy; do
		tns from-npy -o "${f%.npy}.tns" "$f"
		tns to-npy -o "${f%.npy}.out.npy" "${f%.npy}.tns"
		cmp "$f" "${f%.npy}.out.npy"
		n=$((n + 1))
	done
	[ "$n" -eq 30 ]
}

@test "a stream written by from-npy reads back in numpy equal to the array" {
	"$PY" -c 'import numpy as np; np.save("m.npy", np.arange(12, dtype="<i8").reshape(4, 3) * 7 - 20)'
	tns from-npy --name m -o m.tns m.npy
	tns to-csv -o m.csv m.tns
	"$PY" -c 'import numpy as np; assert np.array_equal(np.loadtxt("m.csv", delimiter=",", dtype="<i8"), np.load("m.npy"))'
}

@test "tns to-npz: every tensor equal in numpy.load, and the metadata and ledger in privada.json" {
	"$PY" -c '
import numpy as np
rng = np.random.default_rng(3)
for dt in ("<f4", "<f8", "<i4", "<i8", "|u1"):
    np.save("t%s.npy" % dt[1:], (rng.standard_normal((4, 3)) * 50).astype(dt))
'
	for f in t*.npy; do tns from-npy --name "${f%.npy}" -o "${f%.npy}.tns" "$f"; done
	tns cat -o all.tns t*.tns "$GOOD/f32-streamed.tns" "$GOOD/scalar.tns" "$GOOD/zero-rows.tns"
	tns to-npz -o all.npz all.tns
	tns to-npz all.tns > again.npz
	cmp all.npz again.npz
	tns info --format json all.tns > info.json
	"$PY" - <<'PYEOF'
import json, subprocess, zipfile
import numpy as np
z = np.load("all.npz")
info = json.load(open("info.json"))
names = [t["name"] for t in info["tensors"]]
assert z.files == names + ["privada.json"], z.files
assert zipfile.ZipFile("all.npz").testzip() is None
for t in info["tensors"]:
    npy = subprocess.run(["tns", "to-npy", "-f", "--tensor", t["name"], "all.tns"],
                         check=True, capture_output=True).stdout
    assert zipfile.ZipFile("all.npz").read(t["name"] + ".npy") == npy, t["name"]
    assert list(z[t["name"]].shape) == t["shape"], t
j = json.loads(z["privada.json"])
del j["file"], info["file"]
assert j == info, (j, info)
assert j["metadata"]["dp.provenance"] == "unknown"
PYEOF
}

@test "tns to-npz refuses a bad stream with 65 and writes nothing" {
	run -65 --separate-stderr tns to-npz -o out.npz "$BAD/bad-checksum.tns"
	[ ! -e out.npz ]
	run -64 --separate-stderr tns to-npz a.tns b.tns
}

@test "tns from-npy reads format 2.0 and 3.0 headers" {
	"$PY" -c '
import numpy as np
a = np.arange(6, dtype="<f8").reshape(2, 3)
for v in (2, 3):
    with open("v%d.npy" % v, "wb") as f:
        np.lib.format.write_array(f, a, version=(v, 0))
np.save("v1.npy", a)
'
	for v in 2 3; do
		tns from-npy -o v$v.tns v$v.npy
		tns to-npy -o v$v.out.npy v$v.tns
		cmp v1.npy v$v.out.npy
	done
}

@test "tns from-npy refuses Fortran order" {
	"$PY" -c 'import numpy as np; np.save("f.npy", np.asfortranarray(np.zeros((2, 3))))'
	run -65 --separate-stderr tns from-npy -o out.tns f.npy
	[[ $stderr == "tns: f.npy: offset 10: fortran_order True is not supported"* ]]
	[ ! -e out.tns ]
}

@test "tns from-npy refuses big-endian data" {
	"$PY" -c 'import numpy as np; np.save("b.npy", np.zeros(3, dtype=">f8"))'
	run -65 --separate-stderr tns from-npy -o out.tns b.npy
	[[ $stderr == "tns: b.npy: offset 10: header 'descr': unsupported dtype"* ]]
}

@test "tns from-npy refuses truncated data and trailing bytes" {
	"$PY" -c 'import numpy as np; np.save("a.npy", np.zeros((4, 2)))'
	head -c -1 a.npy > short.npy
	run -65 --separate-stderr tns from-npy -o out.tns short.npy
	[[ $stderr == "tns: short.npy: truncated: array data ends inside row 3 of 4" ]]
	cp a.npy long.npy
	printf 'x' >> long.npy
	run -65 --separate-stderr tns from-npy -o out.tns long.npy
	[[ $stderr == "tns: long.npy: trailing bytes after the array data" ]]
	[ ! -e out.tns ]
}

@test "tns from-npy refuses a shape whose size overflows" {
	mknpy o.npy "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }"
	run -65 --separate-stderr tns from-npy -o out.tns o.npy
	[ "$stderr" = "tns: o.npy: offset 10: header 'shape': the size overflows" ]
	mknpy o2.npy "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999, 1), }"
	run -65 --separate-stderr tns from-npy -o out.tns o2.npy
	[ "$stderr" = "tns: o2.npy: offset 10: header 'shape': dimension overflows" ]
	[ ! -e out.tns ]
}

@test "tns from-npy enforces the element limit but allows a huge empty shape" {
	mknpy big.npy "{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627777, 1), }"
	run -65 --separate-stderr tns from-npy -o out.tns big.npy
	[ "$stderr" = "tns: big.npy: offset 10: header 'shape': 1099511627777 elements exceed the limit 1099511627776" ]
	mknpy empty.npy "{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776, 0, 3), }"
	tns from-npy -o empty.tns empty.npy
	run -0 tns info --format json empty.tns
	[[ $output == *'"shape":[1099511627776,0,3],'* ]]
	# More rows than the format's row limit (2^40), even empty ones.
	mknpy e2.npy "{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627777, 0, 3), }"
	run -65 --separate-stderr tns from-npy -o out2.tns e2.npy
	[[ $stderr == *"rows exceed the limit 1099511627776"* ]]
	[ ! -e out2.tns ]
}

@test "tns from-npy parses the header dict strictly" {
	for d in "{'descr': '<f8', 'fortran_order': False, 'shape': (3), }" \
		"{'descr': '<f8', 'fortran_order': False, }" \
		"{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'x': 1}" \
		"{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (), }" \
		"{'descr': '<f8', 'fortran_order': 0, 'shape': (1,), }" \
		"{'descr': '<f8', 'fortran_order': False, 'shape': (-1,), }" \
		"{'descr': '<f8', 'fortran_order': False, 'shape': (01,), }" \
		"{'descr': '<f8', 'fortran_order': False, 'shape': (1,), } x"; do
		mknpy h.npy "$d"
		run -65 --separate-stderr tns from-npy -o out.tns h.npy
		[[ $stderr == "tns: h.npy: offset 10: "* ]] || { echo "$d: $stderr"; false; }
	done
	mknpy ok.npy "{\"shape\": (0,), \"descr\": '<i4', 'fortran_order': False}"
	tns from-npy -o ok.tns ok.npy
}

@test "tns from-npy refuses a bad magic and an oversized header" {
	run -65 --separate-stderr tns from-npy -o out.tns x.csv
	[[ $stderr == "tns: x.csv: offset 0: not a .npy file (bad magic)" ]]
	printf '\x93NUMPY\x02\x00\x00\x00\x10\x00' > huge.npy
	run -65 --separate-stderr tns from-npy -o out.tns huge.npy
	[[ $stderr == "tns: huge.npy: offset 8: header length 1048576 exceeds the limit 65536" ]]
}

@test "tns to-npy > /dev/full gives 74" {
	run -74 --separate-stderr bash -c 'tns to-npy x.tns > /dev/full'
	[[ $stderr == *"write error"* ]]
}

# --- meta set --------------------------------------------------------------

@test "tns meta set adds stream metadata and keeps the tensors" {
	tns meta set -i x.tns -o m.tns data.name=adult data.split=train
	run -0 tns to-csv m.tns
	assert_output "$(cat x.csv)"
	run -0 tns info --format json m.tns
	[[ $output == *'"data.name":"adult","data.split":"train"'* ]]
}

@test "tns meta set refuses dp.* keys without --unsafe-ledger" {
	run -64 --separate-stderr tns meta set -i x.tns -o m.tns dp.raw.x=row-local
	refute_output
	[[ $stderr == *"refusing to set ledger key 'dp.raw.x'"* ]]
	[ ! -e m.tns ]
}

@test "tns meta set refuses prov.* keys and bad keys" {
	run -64 --separate-stderr tns meta set -i x.tns -o m.tns prov.tool=me
	[[ $stderr == *"prov.* keys are written by the tools"* ]]
	run -64 --separate-stderr tns meta set -i x.tns -o m.tns Bad=1
	[[ $stderr == *"invalid metadata key 'Bad'"* ]]
}

@test "tns meta set never changes an existing ledger entry" {
	tns meta set --unsafe-ledger -i x.tns -o a.tns dp.raw.d=row-local
	run -65 --separate-stderr tns meta set --unsafe-ledger -i a.tns -o b.tns dp.raw.d=aggregate
	[[ $stderr == "tns: a.tns: ledger entry 'dp.raw.d' exists with another value"* ]]
	[ ! -e b.tns ]
}

@test "tns info shortens long metadata values in text, -v and JSON show them whole" {
	printf '1,2\n3,4\n' > x.csv
	tns from-csv -o x.tns x.csv
	long=$(printf 'v%.0s' $(seq 1 300))
	tns meta set -i x.tns -o l.tns "note.long=$long"
	run -0 --separate-stderr tns info l.tns
	assert_output --partial "... (300 bytes; -v shows all)"
	refute_output --partial "$long"
	run -0 --separate-stderr tns info -v l.tns
	assert_output --partial "$long"
	run -0 --separate-stderr tns info --format json l.tns
	assert_output --partial "$long"
}

@test "tns -o writes a device in place and never replaces it" {
	printf '1,2\n' > x.csv
	run -0 --separate-stderr tns from-csv -o /dev/null x.csv
	[ -c /dev/null ]
	run -74 --separate-stderr tns from-csv -o /dev/full x.csv
	[ -c /dev/full ]
	[[ $stderr == *"No space left on device"* ]]
	mkdir d.tns
	run -73 --separate-stderr tns from-csv -o d.tns x.csv
	[[ $stderr == "tns: d.tns: is a directory" ]]
}

@test "tns split stamps one split.id on every part, different across unseeded runs" {
	printf '%s\n' 1 2 3 4 5 6 > x.csv
	tns from-csv -o x.tns x.csv
	tns split --parts 3 --prefix a- x.tns
	tns split --parts 3 --prefix b- x.tns
	ids() { for f in "$@"; do tns info --format json "$f" | grep -o '"split.id":"[0-9a-f]*"'; done | sort -u; }
	run -0 ids a-0.tns a-1.tns a-2.tns
	[ "${#lines[@]}" -eq 1 ]
	a=$output
	run -0 ids b-0.tns b-1.tns b-2.tns
	[ "${#lines[@]}" -eq 1 ]
	[ "$output" != "$a" ]
}

@test "tns split records the raw marks the input had (split.raw)" {
	printf '%s\n' 1 2 3 4 > x.csv
	tns from-csv -o x.tns x.csv
	tns meta set --unsafe-ledger -i x.tns -o m.tns dp.raw.adult=aggregate dp.raw.kids=row-local
	tns split --parts 2 --seed 3 --prefix p- m.tns
	run -0 --separate-stderr tns info --format json p-1.tns
	assert_output --partial '"split.raw.adult":"aggregate"'
	assert_output --partial '"split.raw.kids":"row-local"'
}
