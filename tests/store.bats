#!/usr/bin/env bats
# The persistent privacy budget store: rdp-account store init|set|status,
# and DP tools charging it (--budget-store, PRIVADA_BUDGET_STORE).

load test_helper

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	featurize --no-label --dataset cv --dtype f64 "$DATA/covest/x.csv" > x.tns
}

setup() {
	cd "$BATS_FILE_TMPDIR"
	unset PRIVADA_BUDGET_STORE
}

# spent STORE: the composed epsilon the store reports for dataset cv.
spent() {
	rdp-account store status --format tsv "$1" | awk -F'\t' '$1 == "dataset" && $2 == "cv" { print $5 }'
}

@test "store init creates a store of mode 0600 and refuses an existing file" {
	rm -f i.db
	run -0 rdp-account store init i.db
	[ "$(stat -c %a i.db)" = 600 ]
	run -73 rdp-account store init i.db
	run -66 rdp-account store status nothere.db
	[ ! -e nothere.db ]
}

@test "store set and status: budget, spent, remaining in text, tsv and json" {
	rm -f s.db
	rdp-account store init s.db
	run -0 rdp-account store set s.db --dataset cv --epsilon 2.5 --delta 1e-5
	run -0 rdp-account store status s.db
	[[ $output == "dataset cv: budget epsilon 2.5 at delta 1e-05, spent 0, remaining 2.5, 0 releases" ]]
	run -0 rdp-account store status --format tsv s.db
	[ "$output" = "$(printf 'dataset\tcv\t2.5\t1.0000000000000001e-05\t0\t2.5\t0')" ]
	run -0 rdp-account store status --format json s.db
	$PY -c 'import json,sys; d=json.loads(sys.argv[1])["datasets"][0]; assert d["dataset"]=="cv" and d["budget"]==2.5 and d["releases"]==[]' "$output"
	run -64 rdp-account store set s.db --dataset cv --epsilon 1
	run -64 rdp-account store frob s.db
	run -64 rdp-account store status --dataset cv s.db
}

@test "a file that is not a store, or of another version, is refused" {
	printf 'not a database at all %.0s' {1..20} > junk.db
	run -65 rdp-account store status junk.db
	rm -f v.db
	rdp-account store init v.db
	sqlite3 v.db 'PRAGMA user_version = 9'
	run -65 rdp-account store status v.db
	[[ $output == *"version 9"* ]]
}

@test "covest charges the store; status matches rdp-account ledger; the ids are the ledger's" {
	rm -f c.db c1.tns c2.tns
	rdp-account store init c.db
	rdp-account store set c.db --dataset cv --epsilon 5 --delta 1e-5
	run -0 covest -q -e 1 -d 1e-5 --clip 1 --budget-store c.db -o c1.tns x.tns
	PRIVADA_BUDGET_STORE=c.db run -0 covest -q -e 0.5 -d 1e-5 --clip 1 -o c2.tns x.tns
	s=$(spent c.db)
	l=$(rdp-account ledger --format json -d 1e-5 c1.tns c2.tns | $PY -c 'import json,sys; print(repr(json.load(sys.stdin)["datasets"][0]["epsilon"]))')
	$PY -c "import sys; s,l=float('$s'),float('$l'); sys.exit(0 if abs(s-l) <= 1e-9 else 1)"
	# The same release ids in the store and the streams.
	ids=$(rdp-account store status --format tsv c.db | awk -F'\t' '$1 == "release" { print $3 }' | sort)
	sids=$(tns info --format json c1.tns c2.tns | grep -o '"dp\.release\.[0-9a-f]*\.tool"' | sed 's/"dp\.release\.//;s/\.tool"//' | sort -u)
	[ -n "$ids" ] && [ "$ids" = "$sids" ]
	# Each release's own epsilon, the tool, the arguments.
	run -0 rdp-account store status c.db
	[[ $output == *"covest"*"epsilon 1 "*"'-e' '1'"* ]]
	[[ $output == *"epsilon 0.5 "*"'-e' '0.5'"* ]]
}

@test "a release over the budget exits 77, writes nothing and charges nothing" {
	rm -f r.db r1.tns r2.tns
	rdp-account store init r.db
	rdp-account store set r.db --dataset cv --epsilon 1.2 --delta 1e-5
	run -0 covest -q -e 1 -d 1e-5 --clip 1 --budget-store r.db -o r1.tns x.tns
	before=$(spent r.db)
	run -77 covest -q -e 1 -d 1e-5 --clip 1 --budget-store r.db -o r2.tns x.tns
	[[ $output == *"over its budget"*"nothing was released"* ]]
	[ ! -e r2.tns ]
	! ls .r2.tns* 2>/dev/null
	# Standard output: no byte written.
	run -77 --separate-stderr covest -q -e 1 -d 1e-5 --clip 1 --budget-store r.db x.tns
	[ -z "$output" ]
	[ "$(spent r.db)" = "$before" ]
	[ "$(rdp-account store status --format tsv r.db | grep -c '^release')" = 1 ]
}

@test "no budget for the dataset exits 78; a missing store 74; nothing written" {
	rm -f n.db n1.tns
	rdp-account store init n.db
	run -78 covest -q -e 1 -d 1e-5 --clip 1 --budget-store n.db -o n1.tns x.tns
	[ ! -e n1.tns ]
	run -74 covest -q -e 1 -d 1e-5 --clip 1 --budget-store missing.db -o n1.tns x.tns
	[ ! -e n1.tns ] && [ ! -e missing.db ]
}

@test "a read-only store is refused, nothing written" {
	[ "$(id -u)" != 0 ] || skip "root writes read-only files"
	rm -f ro.db o.tns
	rdp-account store init ro.db
	rdp-account store set ro.db --dataset cv --epsilon 5 --delta 1e-5
	chmod 0400 ro.db
	run -74 covest -q -e 1 -d 1e-5 --clip 1 --budget-store ro.db -o o.tns x.tns
	[ ! -e o.tns ]
}

@test "30 concurrent releases on a budget of exactly 10: 10 outputs, 20 refused, the total exact" {
	rm -rf conc && mkdir conc && cd conc
	# The budget: halfway between the composition of 10 and of 11
	# releases, measured on a scratch store with room for all.
	rdp-account store init scratch.db
	rdp-account store set scratch.db --dataset cv --epsilon 1000 --delta 1e-5
	for i in $(seq 11); do
		covest -q -e 0.3 -d 1e-5 --clip 1 --budget-store scratch.db -o /dev/null ../x.tns
		[ "$i" != 10 ] || s10=$(spent scratch.db)
	done
	s11=$(spent scratch.db)
	budget=$($PY -c "print(repr(($s10 + $s11) / 2))")
	rdp-account store init b.db
	rdp-account store set b.db --dataset cv --epsilon "$budget" --delta 1e-5
	for i in $(seq 30); do
		# (set -e: the status is written by both branches.)
		( if covest -q -e 0.3 -d 1e-5 --clip 1 --budget-store b.db \
		    -o "o$i.tns" ../x.tns 2> "e$i.txt"; then echo 0; else
		    echo $?; fi > "rc$i" ) &
	done
	wait
	[ "$(cat rc* | grep -cx 0)" = 10 ]
	[ "$(cat rc* | grep -cx 77)" = 20 ]
	[ "$(ls o*.tns | wc -l)" = 10 ]
	! ls .o*.tns* 2>/dev/null
	for i in $(seq 30); do
		if [ "$(cat rc$i)" = 77 ]; then [ ! -e "o$i.tns" ]; else [ -s "o$i.tns" ]; fi
	done
	# The store holds exactly the 10 releases the outputs carry, and its
	# total equals rdp-account ledger's composition of those outputs.
	[ "$(rdp-account store status --format tsv b.db | grep -c '^release')" = 10 ]
	s=$(spent b.db)
	l=$(rdp-account ledger --format json -d 1e-5 o*.tns | $PY -c 'import json,sys; print(repr(json.load(sys.stdin)["datasets"][0]["epsilon"]))')
	$PY -c "import sys; s,l,t=float('$s'),float('$l'),float('$s10'); sys.exit(0 if abs(s-l) <= 1e-9 and abs(s-t) <= 1e-12 else 1)"
	[ "$(sqlite3 b.db 'PRAGMA integrity_check')" = ok ]
}

@test "without a store nothing changes: an empty PRIVADA_BUDGET_STORE is none" {
	PRIVADA_BUDGET_STORE= run -0 covest -q -e 1 -d 1e-5 --clip 1 -o e.tns x.tns
	[ -s e.tns ]
}
