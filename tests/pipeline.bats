#!/usr/bin/env bats
# pipelines/prima end to end on a reduced parameter set (one task, one
# epsilon, one repeat, two epochs: parameters overridden on the make
# command line), in a scratch output directory.  The run itself takes
# about two seconds; it is made once, in setup_file, and its exit status
# and output are checked by the first test.

load test_helper

PRIMA="$TOP/pipelines/prima"
BIN="${PRIVADA_BIN:-$TOP/build/bin}"
SMALL=(TASKS=amazon:dslr EPS=2 REPS=1 EPOCHS=2)

# prima DIR ARGS...: make the experiment into DIR/out, hermetically.
prima() {
	local dir=$1
	shift
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$PRIMA" \
		--no-print-directory OUT="$dir/out" B="$BIN" "${SMALL[@]}" "$@"
}

setup_file() {
	local dir="$BATS_FILE_TMPDIR"
	prima "$dir" > "$dir/make.out" 2> "$dir/make.err"
	echo $? > "$dir/make.status"
}

setup() {
	OUT="$BATS_FILE_TMPDIR/out"
}

@test "make runs the PRIMA pipeline on one task and writes a row per method and epsilon" {
	run -0 cat "$BATS_FILE_TMPDIR/make.status"
	assert_output 0
	run -0 cut -f 1-5 "$OUT/results.tsv"
	assert_output "method	source	target	epsilon	reps
prima	amazon	dslr	2	1
prima	amazon	dslr	np	1
noadapt	amazon	dslr	2	1
noadapt	amazon	dslr	np	1"
}

@test "every accuracy of the run is a percentage read from predict's report" {
	run -0 awk -F '\t' 'NR > 1 && !($6 >= 0 && $6 <= 100 && $6 != "") { print "bad: " $0 }' \
		"$OUT/results.tsv"
	refute_output
	# The run's accuracy is the "all" line of its report, in percent.
	run -0 awk -F '\t' '$1 == "all" { printf "%.2f\n", 100 * $2 }' \
		"$OUT/pred/prima-amazon-dslr-2-r1.report.tsv"
	want=$output
	run -0 awk -F '\t' '$1 == "prima" && $4 == "2" { print $6 }' "$OUT/results.tsv"
	assert_output "$want"
}

@test "the ledger check passes and the accounted epsilons compose both releases of the source" {
	run -0 cat "$OUT/ledger/prima-amazon-dslr-2-r1.tsv"
	assert_line --partial "private: ("
	refute_output --partial "over budget"
	# Source: covest at 0.5 and dpsgd-train at 1.5, composed by RDP:
	# more than either release alone, at most the budget of 2.  Target:
	# covest at 2.  No adaptation: dpsgd-train at 2.
	run -0 awk -F '\t' '$4 == "2" {
		ok = $10 == "private" && $8 <= 2 && \
		    ($1 == "prima" ? $8 > 1.55 && $9 > 1.999 && $9 <= 2 : $8 > 1.999 && $9 == "-")
		print $1, ok ? "ok" : "bad: " $0 }' "$OUT/results.tsv"
	assert_output "prima ok
noadapt ok"
}

@test "the sigma 0 reference is accounted as NOT private" {
	run -0 awk -F '\t' '$4 == "np" { print $1, $8, $9, $10 }' "$OUT/results.tsv"
	assert_output "prima - - not_private
noadapt - - not_private"
	run -0 grep -c "NOT private" "$OUT/results.md"
	[ "$output" -ge 3 ]
}

@test "the report has the task's row with the published references and the plot is well-formed SVG" {
	run -0 grep '^| A→D |' "$OUT/results.md"
	assert_line --index 0 --regexp '\| 39\.5 \| 25\.48 \|$'
	run -0 "$PY" -c 'import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
print(r.tag, len(r.findall("{http://www.w3.org/2000/svg}polyline")))' "$OUT/accuracy.svg"
	assert_output "{http://www.w3.org/2000/svg}svg 2"
}

@test "a rebuilt predict reruns only the predictions and the report" {
	# A real run: GNU make 4.3 does not propagate a grouped target's
	# update to its dependents under -n.
	run -0 prima "$BATS_FILE_TMPDIR" -W "$BIN/predict"
	assert_line --partial "$BIN/predict "
	assert_line --partial "summarize.awk"
	refute_output --partial "$BIN/covest "
	refute_output --partial "$BIN/dpsgd-train "
	refute_output --partial "$BIN/coral-align "
	refute_output --partial "$BIN/rdp-account "
}

@test "make -n shows every step of the experiment and runs nothing" {
	run -0 prima "$BATS_TEST_TMPDIR" -n
	for step in featurize covest psdshrink coral-align dpsgd-train predict "rdp-account ledger"; do
		assert_line --partial "$BIN/$step "
	done
	[ ! -e "$BATS_TEST_TMPDIR/out" ]
}

@test "an overspending configuration stops make at the ledger check" {
	run -2 --separate-stderr prima "$BATS_TEST_TMPDIR" TGT_SHARE=1.5
	[[ $stderr == *"rdp-account: dataset dslr: over budget: epsilon 3 > 2"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/out/ledger/prima-amazon-dslr-2-r1.tsv" ]
	[ ! -e "$BATS_TEST_TMPDIR/out/results.tsv" ]
}
