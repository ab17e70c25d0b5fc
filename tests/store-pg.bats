#!/usr/bin/env bats
# The budget store on PostgreSQL (lib/dp/store_pg.c): a private server
# (tests/pgserver.bash) started for this file and stopped by its pid in
# teardown_file; the same tests as tests/store.bats against a URI, and the
# same results as an SQLite store.

load test_helper
load pgserver

PG_SKIP_FILE=$BATS_FILE_TMPDIR/pg.skip
PG_STATE_FILE=$BATS_FILE_TMPDIR/pg.env

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	featurize --no-label --dataset cv --dtype f64 "$DATA/covest/x.csv" > x.tns
	pg_start
}

teardown_file() {
	pg_stop
}

setup() {
	cd "$BATS_FILE_TMPDIR"
	unset PRIVADA_BUDGET_STORE
	pg_skip_check
	read -r PGDIR PGPID < pg.env
	PGBINDIR=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
}

# newdb NAME: a fresh database NAME; prints its URI.
newdb() {
	pg_psql postgres "DROP DATABASE IF EXISTS $1" && pg_psql postgres "CREATE DATABASE $1"
	pg_uri "$1"
}

# spent STORE: the composed epsilon the store reports for dataset cv.
spent() {
	rdp-account store status --format tsv "$1" | awk -F'\t' '$1 == "dataset" && $2 == "cv" { print $5 }'
}

@test "store init on a URI creates the schema, version 1; a second init is refused" {
	u=$(newdb i)
	run -0 rdp-account store init "$u"
	[ "$(pg_psql i 'COPY (SELECT version FROM store_version) TO STDOUT')" = 1 ]
	run -73 rdp-account store init "$u"
	[[ $output == *"already holds a budget store"* ]]
	run -0 rdp-account store status "$u"
	[ -z "$output" ]
	# postgres:// is the same.
	run -0 rdp-account store status "${u/postgresql:/postgres:}"
}

@test "a database without a store, or of another version, is refused; nothing charged" {
	u=$(newdb v)
	run -65 rdp-account store status "$u"
	[[ $output == *"holds no budget store"* ]]
	run -65 covest -q -e 1 -d 1e-5 --clip 1 --budget-store "$u" -o v.tns x.tns
	[ ! -e v.tns ]
	rdp-account store init "$u"
	rdp-account store set "$u" --dataset cv --epsilon 5 --delta 1e-5
	pg_psql v 'UPDATE store_version SET version = 9'
	run -65 rdp-account store status "$u"
	[[ $output == *"version 9"* ]]
	run -65 covest -q -e 1 -d 1e-5 --clip 1 --budget-store "$u" -o v.tns x.tns
	[ ! -e v.tns ]
	[ "$(pg_psql v 'COPY (SELECT count(*) FROM releases) TO STDOUT')" = 0 ]
}

@test "a server that cannot be reached: exit 74, a clear message, nothing written" {
	u="postgresql://privada@/x?host=$BATS_FILE_TMPDIR/nosuchdir"
	run -74 covest -q -e 1 -d 1e-5 --clip 1 --budget-store "$u" -o d.tns x.tns
	[[ $output == *"cannot connect"*"nothing was released"* ]]
	[ ! -e d.tns ]
	run -74 rdp-account store status "$u"
	run -74 rdp-account store init "$u"
	# A database that does not exist.
	run -74 rdp-account store status "$(pg_uri nosuchdb)"
	[[ $output == *nosuchdb* ]]
}

@test "a URI with a password is refused (it would be recorded in the arguments)" {
	run -64 rdp-account store status "postgresql://privada:secret@/x?host=$PGDIR"
	[[ $output == *"PGPASSWORD"* ]]
	run -64 covest -q -e 1 -d 1e-5 --clip 1 --budget-store "postgresql:///x?host=$PGDIR&password=secret" -o p.tns x.tns
	[ ! -e p.tns ]
}

@test "covest charges a URI store; status matches rdp-account ledger; the ids are the ledger's" {
	u=$(newdb c)
	rdp-account store init "$u"
	rdp-account store set "$u" --dataset cv --epsilon 5 --delta 1e-5
	rm -f c1.tns c2.tns
	run -0 covest -q -e 1 -d 1e-5 --clip 1 --budget-store "$u" -o c1.tns x.tns
	PRIVADA_BUDGET_STORE=$u run -0 covest -q -e 0.5 -d 1e-5 --clip 1 -o c2.tns x.tns
	s=$(spent "$u")
	l=$(rdp-account ledger --format json -d 1e-5 c1.tns c2.tns | $PY -c 'import json,sys; print(repr(json.load(sys.stdin)["datasets"][0]["epsilon"]))')
	$PY -c "import sys; s,l=float('$s'),float('$l'); sys.exit(0 if abs(s-l) <= 1e-12 else 1)"
	ids=$(rdp-account store status --format tsv "$u" | awk -F'\t' '$1 == "release" { print $3 }' | sort)
	sids=$(tns info --format json c1.tns c2.tns | grep -o '"dp\.release\.[0-9a-f]*\.tool"' | sed 's/"dp\.release\.//;s/\.tool"//' | sort -u)
	[ -n "$ids" ] && [ "$ids" = "$sids" ]
}

@test "the same releases on SQLite and PostgreSQL: the same status to 1e-12" {
	u=$(newdb q)
	rm -f q.db
	rdp-account store init "$u"
	rdp-account store init q.db
	for st in "$u" q.db; do
		rdp-account store set "$st" --dataset cv --epsilon 9 --delta 1e-5
		rdp-account store set "$st" --dataset aa --epsilon 1 --delta 1e-6
		for e in 0.3 1 0.7 2; do
			covest -q -e $e -d 1e-5 --clip 1 --budget-store "$st" -o /dev/null x.tns
		done
	done
	sl=$(rdp-account store status --format tsv q.db)
	pg=$(rdp-account store status --format tsv "$u")
	$PY - "$sl" "$pg" <<'PYEOF'
import sys
def rows(text):
    out = []
    for line in text.split("\n"):
        f = line.split("\t")
        if f[0] == "dataset":
            out.append(("d", f[1], [float(x) for x in f[2:6]], int(f[6])))
        else:
            out.append(("r", f[1] + " " + f[3], [float(f[5])], 0))
    return out
a, b = rows(sys.argv[1]), rows(sys.argv[2])
assert len(a) == len(b) == 6, (len(a), len(b))
assert [r[1] for r in a if r[0] == "d"] == ["aa", "cv"], a
for x, y in zip(a, b):
    assert x[0] == y[0] and x[1] == y[1] and x[3] == y[3], (x, y)
    for p, q in zip(x[2], y[2]):
        assert abs(p - q) <= 1e-12, (x, y)
PYEOF
}

@test "a release over the budget exits 77, writes nothing and charges nothing" {
	u=$(newdb r)
	rdp-account store init "$u"
	rdp-account store set "$u" --dataset cv --epsilon 1.2 --delta 1e-5
	rm -f r1.tns r2.tns
	run -0 covest -q -e 1 -d 1e-5 --clip 1 --budget-store "$u" -o r1.tns x.tns
	before=$(spent "$u")
	run -77 covest -q -e 1 -d 1e-5 --clip 1 --budget-store "$u" -o r2.tns x.tns
	[[ $output == *"over its budget"*"nothing was released"* ]]
	[ ! -e r2.tns ]
	run -77 --separate-stderr covest -q -e 1 -d 1e-5 --clip 1 --budget-store "$u" x.tns
	[ -z "$output" ]
	[ "$(spent "$u")" = "$before" ]
	[ "$(pg_psql r 'COPY (SELECT count(*) FROM releases) TO STDOUT')" = 1 ]
}

@test "no budget exits 78; the delta of a charged dataset cannot change; as on SQLite" {
	u=$(newdb n)
	rm -f n.db n1.tns
	rdp-account store init "$u"
	rdp-account store init n.db
	run -78 covest -q -e 1 -d 1e-5 --clip 1 --budget-store "$u" -o n1.tns x.tns
	[ ! -e n1.tns ]
	for st in "$u" n.db; do
		rdp-account store set "$st" --dataset cv --epsilon 5 --delta 1e-5
		covest -q -e 1 -d 1e-5 --clip 1 --budget-store "$st" -o /dev/null x.tns
		run rdp-account store set "$st" --dataset cv --epsilon 5 --delta 1e-6
		echo "$status" >> n.rc
		[[ $output == *"delta cannot change"* ]]
		run rdp-account store set "$st" --dataset cv --epsilon 0.5 --delta 1e-5
		echo "$status" >> n.rc
		[[ $output == *"cannot drop"* ]]
	done
	# The same exit statuses on both, and nonzero.
	[ "$(sed -n 1p n.rc)" = "$(sed -n 3p n.rc)" ] && [ "$(sed -n 2p n.rc)" = "$(sed -n 4p n.rc)" ]
	! grep -qx 0 n.rc
	[ "$(pg_psql n 'COPY (SELECT epsilon, delta FROM datasets) TO STDOUT')" = "$(printf '5\t1e-05')" ]
}

@test "a read-only role: status works, a charge exits 74, nothing written or charged" {
	u=$(newdb o)
	rdp-account store init "$u"
	rdp-account store set "$u" --dataset cv --epsilon 5 --delta 1e-5
	pg_psql o "DROP ROLE IF EXISTS reader; CREATE ROLE reader LOGIN; GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader"
	ro="postgresql://reader@/o?host=$PGDIR"
	run -0 rdp-account store status "$ro"
	rm -f o.tns
	run -74 covest -q -e 1 -d 1e-5 --clip 1 --budget-store "$ro" -o o.tns x.tns
	[[ $output == *"permission denied"*"nothing was released"* ]]
	[ ! -e o.tns ]
	run -74 rdp-account store set "$ro" --dataset cv --epsilon 6 --delta 1e-5
	[ "$(pg_psql o 'COPY (SELECT count(*) FROM releases) TO STDOUT')" = 0 ]
}

@test "30 concurrent releases on a budget of exactly 10: 10 outputs, 20 refused, the total exact" {
	rm -rf conc && mkdir conc && cd conc
	s=$(newdb scratch)
	rdp-account store init "$s"
	rdp-account store set "$s" --dataset cv --epsilon 1000 --delta 1e-5
	for i in $(seq 11); do
		covest -q -e 0.3 -d 1e-5 --clip 1 --budget-store "$s" -o /dev/null ../x.tns
		[ "$i" != 10 ] || s10=$(spent "$s")
	done
	s11=$(spent "$s")
	budget=$($PY -c "print(repr(($s10 + $s11) / 2))")
	u=$(newdb b)
	rdp-account store init "$u"
	rdp-account store set "$u" --dataset cv --epsilon "$budget" --delta 1e-5
	for i in $(seq 30); do
		( if covest -q -e 0.3 -d 1e-5 --clip 1 --budget-store "$u" \
		    -o "o$i.tns" ../x.tns 2> "e$i.txt"; then echo 0; else
		    echo $?; fi > "rc$i" ) &
	done
	wait
	cat e*.txt | grep -v "over its budget" || true
	[ "$(cat rc* | grep -cx 0)" = 10 ]
	[ "$(cat rc* | grep -cx 77)" = 20 ]
	[ "$(ls o*.tns | wc -l)" = 10 ]
	! ls .o*.tns* 2>/dev/null
	for i in $(seq 30); do
		if [ "$(cat rc$i)" = 77 ]; then [ ! -e "o$i.tns" ]; else [ -s "o$i.tns" ]; fi
	done
	[ "$(pg_psql b 'COPY (SELECT count(*) FROM releases) TO STDOUT')" = 10 ]
	t=$(spent "$u")
	l=$(rdp-account ledger --format json -d 1e-5 o*.tns | $PY -c 'import json,sys; print(repr(json.load(sys.stdin)["datasets"][0]["epsilon"]))')
	$PY -c "import sys; t,l,s=float('$t'),float('$l'),float('$s10'); sys.exit(0 if abs(t-l) <= 1e-9 and abs(t-s) <= 1e-12 else 1)"
}
