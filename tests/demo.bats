#!/usr/bin/env bats
# pipelines/demo in miniature: both MNIST -> USPS domains featurized into
# a scratch directory, verified and summarised.

load test_helper

BIN="${PRIVADA_BIN:-$TOP/build/bin}"

demo() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$TOP/pipelines/demo" \
		--no-print-directory OUT="$BATS_TEST_TMPDIR/out" B="$BIN" "$@"
}

@test "the demo featurizes both domains into verified streams and summarises them" {
	run -0 demo
	assert_output --partial "mnist"
	assert_output --partial "usps"
	run -0 "$BIN/tns" verify "$BATS_TEST_TMPDIR/out/mnist.tns" "$BATS_TEST_TMPDIR/out/usps.tns"
	# Every row has L2 norm at most 1 (CLIP = 1), checked independently.
	run -0 "$BIN/tns" to-csv -o "$BATS_TEST_TMPDIR/usps.csv" "$BATS_TEST_TMPDIR/out/usps.tns"
	run -0 awk -F , '{ s = 0; for (i = 1; i <= NF; i++) s += $i * $i; if (s > 1 + 1e-5) bad++ } END { print (NR > 0 && !bad) }' "$BATS_TEST_TMPDIR/usps.csv"
	assert_output 1
	# Built: make has nothing left to run but the summary's display.
	run -0 demo -n
	refute_output --partial "$BIN/"
}
