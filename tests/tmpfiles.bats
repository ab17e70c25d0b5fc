#!/usr/bin/env bats
# Output temporary files (issue 15): a tool killed by a catchable signal
# mid-write leaves no temporary file (tools/common/cli.c removes it in a
# signal handler, then re-raises), and tns split commits its parts all or
# nothing.  Every test here fails on the tools before issue 15 (d8f2bef),
# which left NAME.tmpXXXXXX behind on any fatal signal.
load test_helper

setup() {
	cd "$BATS_TEST_TMPDIR"
	awk 'BEGIN { for (r = 0; r < 2000; r++) print r "," r * 7 % 13 }' > x.csv
	tns from-csv --name X -o x.tns x.csv
}

# killed_mid_write SIG: tns cat writes out/o.tns while reading half a
# stream from a FIFO; SIG kills it there.  The tool runs with SIG's default
# disposition restored (a background job of a script ignores SIGINT).
killed_mid_write() {
	local sig=$1 n=0 pid
	mkdir out
	mkfifo in.fifo
	env --default-signal="$sig" tns cat -o out/o.tns in.fifo 3>&- &
	pid=$!
	exec 7> in.fifo
	head -c 200 x.tns >&7
	# The temporary output exists once the tool has opened it.
	while [ -z "$(ls -A out)" ] && [ $n -lt 100 ]; do sleep 0.05; n=$((n + 1)); done
	[ -n "$(ls -A out)" ] || { echo "no temporary file appeared"; exec 7>&-; return 1; }
	kill -s "$sig" "$pid"
	run wait "$pid"
	exec 7>&-
	echo "status $status"
	[ "$status" -gt 128 ]
	ls -A out
	[ -z "$(ls -A out)" ]
}

@test "SIGTERM mid-write leaves no temporary file" {
	killed_mid_write TERM
}

@test "SIGHUP mid-write leaves no temporary file" {
	killed_mid_write HUP
}

@test "SIGINT mid-write leaves no temporary file" {
	killed_mid_write INT
}

@test "SIGPIPE mid-write leaves no temporary file" {
	killed_mid_write PIPE
}

@test "the temporary file is named .NAME.privada-tmp.XXXXXX beside NAME" {
	local n=0 pid
	mkdir out
	mkfifo in.fifo
	tns cat -o out/o.tns in.fifo 3>&- &
	pid=$!
	exec 7> in.fifo
	while [ -z "$(ls -A out)" ] && [ $n -lt 100 ]; do sleep 0.05; n=$((n + 1)); done
	run ls -A out
	exec 7>&-
	wait "$pid" || true
	[[ "$output" =~ ^\.o\.tns\.privada-tmp\.[A-Za-z0-9]{6}$ ]]
}

@test "tns split killed by a file-size limit midway leaves no part" {
	# Part 0 (10% of the rows) fits under the limit, part 1 does not:
	# SIGXFSZ kills the split while it writes part 1.
	awk 'BEGIN { srand(1); for (r = 0; r < 100000; r++) print rand() "," rand() }' > big.csv
	tns from-csv --name X -o big.tns big.csv
	mkdir out
	run bash -c 'ulimit -f 400 && exec tns split --fractions 0.1,0.9 -S 1 --prefix out/part- big.tns'
	[ "$status" -gt 128 ]
	ls -A out
	[ -z "$(ls -A out)" ]
}

@test "tns split refuses --parts greater than the row count unless --allow-empty" {
	printf '1\n2\n3\n' > s.csv
	tns from-csv -o s.tns s.csv
	run tns split --parts 5 -S 1 s.tns
	[ "$status" -eq 65 ]
	[[ "$output" == *"--allow-empty"* ]]
	[ ! -e part-0.tns ]
	run tns split --parts 5 -S 1 --allow-empty s.tns
	[ "$status" -eq 0 ]
	for i in 0 1 2 3 4; do [ -e part-$i.tns ]; done
}
