#!/usr/bin/env bats
# The option layer every tool shares (tools/common/cli.c): messages start
# with the program's name, and prov.args records the command as typed.
# Issue 14: both failed on 4319d45 (getopt printed the path the tool was
# run by, and recorded the arguments in the order getopt left them).

load test_helper

setup() {
	cd "$BATS_TEST_TMPDIR"
}

@test "getopt's messages start with the program name, not its path" {
	for t in featurize tns rdp-account psdshrink coral-align covest dpsgd-train \
	    predict teacher-vote gmm-fit kde-publish mia-eval; do
		sub=
		[ $t = tns ] && sub=info
		[ $t = rdp-account ] && sub=ledger
		run -64 --separate-stderr "${PRIVADA_BIN:-$TOP/build/bin}/$t" $sub --no-such-option
		[[ ${stderr_lines[0]} == "$t: unrecognized option '--no-such-option'" ]] ||
			{ echo "$t: ${stderr_lines[0]}"; return 1; }
	done
}

@test "prov.args records the arguments as typed, before getopt permutes them" {
	printf '1,2\n3,4\n' > x.csv
	tns from-csv x.csv -o o.tns -q
	[ "$(tns info -v o.tns | awk '$1 == "prov.args" { $1 = ""; print substr($0, 2) }')" = \
	  "'from-csv' 'x.csv' '-o' 'o.tns' '-q'" ]
	featurize --no-label --dataset d x.csv -q -o f.tns
	[ "$(tns info -v f.tns | awk '$1 == "prov.args" { $1 = ""; print substr($0, 2) }')" = \
	  "'--no-label' '--dataset' 'd' 'x.csv' '-q' '-o' 'f.tns'" ]
}
