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

# Issue 15: a stream that declares one row of 2^33 f32 (32 GiB) in a
# 65-byte file.  Fails before issue 15: tns cat, psdshrink, dpsgd-train,
# kde-publish, predict, mia-eval and coral-align allocated the declared
# row and exited 71 "out of memory"; the reader now buffers the first row
# as it arrives (spec section 11) and the stream is truncated: 65.
@test "a stream declaring a huge row in a tiny file exits 65 in every tool, not 71" {
	printf '\x93TNS\r\n\x1a\n\x01\x00\x00\x00''\x02\x00\x00\x00\x00\x00\x00\x00\x1b\x00\x00\x00\x00\x00\x00\x00''\x01\x00X\x01\x02\x00\x00''\x01\x00\x00\x00\x00\x00\x00\x00''\x00\x00\x00\x00\x02\x00\x00\x00''\x00\x00\x00\x00''\x03\x00\x00\x00\x00\x00\x00\x00\x08\x00\x00\x00\x08\x00\x00\x00''\x01\x00\x00\x00\x00\x00\x00\x00' |
		zstd -q -c > huge.tns
	local cmd
	while read -r cmd; do
		run -65 --separate-stderr $cmd
		[[ $stderr == *"huge.tns: offset "*"(truncated"* ]] ||
			fail "$cmd: $stderr"
	done <<'CMDS'
tns verify huge.tns
tns cat -o o.tns huge.tns
tns split --parts 2 huge.tns
psdshrink -o o.tns huge.tns
dpsgd-train --no-dp --epochs 1 -o o.tns huge.tns
gmm-fit -e 1 -d 1e-5 --clip 1 -k 2 -o o.tns huge.tns
covest -e 1 -d 1e-5 --clip 1 -o o.tns huge.tns
teacher-vote --classes 2 --gamma 1 -o o.tns huge.tns
kde-publish -e 1 -d 1e-5 -o o.tns huge.tns huge.tns
predict --model huge.tns -o o.tns huge.tns
mia-eval --model huge.tns --members huge.tns --nonmembers huge.tns
coral-align --source-cov huge.tns --target-cov huge.tns -o o.tns huge.tns
CMDS
}

# Issue 15: option values out of range were internal errors (70) or out
# of memory (71) before; each fails on d8f2bef and is a usage error now.
@test "out-of-range option values exit 64 with a usage message, not 70 or 71" {
	printf 'a,b\n1,2\n3,1\n2,5\n4,4\n0,1\n5,2\n' > x.csv
	printf 'y,a,b\n0,1,2\n1,3,1\n0,2,5\n1,4,4\n0,0,1\n1,5,2\n' > xy.csv
	tns from-csv --header --name X x.csv > x.tns
	featurize --label y -o xy.tns xy.csv
	local cmd
	while read -r cmd; do
		run -64 --separate-stderr $cmd
		refute_output
		[[ ${stderr_lines[0]} == *"--"* && ${stderr_lines[1]} == "Try '"*" --help' for more information." ]] ||
			fail "$cmd: $stderr"
	done <<'CMDS'
gmm-fit -q --sigma 1 --clip 1e20 --dataset s --assume-raw -o o.tns x.tns
gmm-fit -q --sigma 1 --clip 1 --split 1e308,1e308,1e308 --dataset s --assume-raw -o o.tns x.tns
covest -q --sigma 1 --clip 1 --split 1e308,1e308,1e308 --dataset s --assume-raw -o o.tns x.tns
rdp-account --delta 1e-5 gaussian --sigma 1e-300
rdp-account --delta 1e-5 gaussian --sigma 1e300
rdp-account --delta 1e-5 sgm --q 0.01 --steps 100 --sigma 1e300
dpsgd-train --no-dp --epochs 1 --lr-schedule step:1e20:0.5 -o o.tns xy.tns
CMDS
}
