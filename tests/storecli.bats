#!/usr/bin/env bats
# The budget store's surface (issue 18): --budget-store on every DP tool,
# rdp-account ledger --store, rdp-account store solve, crashes and bad
# stores.

load test_helper

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	featurize --no-label --dataset cv --dtype f64 "$DATA/covest/x.csv" > x.tns
	featurize --label label --dataset blobs "$DATA/dpsgd/blobs.csv" > b.tns
	tns from-csv --dtype i32 --name votes "$DATA/teacher-vote/votes.csv" > raw.tns
	tns meta set --unsafe-ledger -i raw.tns -o votes.tns dp.raw.priv=row-local
	# kde-publish's input: eight models trained without privacy on the
	# parts of dataset toy (as tests/kde-publish.bats makes them).
	"$PY" - <<'EOF'
import numpy as np
rng = np.random.default_rng(18)
for m in range(8):
    np.save("p%d_W1.npy" % m, rng.normal(0, 0.1, (2, 2)).astype(np.float32))
    np.save("p%d_b1.npy" % m, rng.normal(0, 0.1, 2).astype(np.float32))
EOF
	for m in 0 1 2 3 4 5 6 7; do
		tns from-npy -q --name model/fc1/W -o W.tns p${m}_W1.npy
		tns from-npy -q --name model/fc1/b -o bb.tns p${m}_b1.npy
		tns cat -q W.tns bb.tns | tns meta set -q --unsafe-ledger -o p$m.tns \
			model.arch=logreg:2-2 model.classes=2 dp.raw.toy=aggregate \
			split.raw.toy=row-local split.part=$m/8 \
			split.parent=0123456789abcdef split.id=cafe
	done
}

setup() {
	cd "$BATS_FILE_TMPDIR"
	unset PRIVADA_BUDGET_STORE
}

# spent STORE DATASET: the composed epsilon the store reports (%.17g).
spent() {
	rdp-account store status --format tsv "$1" | awk -F'\t' -v d="$2" '$1 == "dataset" && $2 == d { print $5 }'
}

# ids STORE: the release ids the store holds, sorted.
ids() {
	rdp-account store status --format tsv "$1" | awk -F'\t' '$1 == "release" { print $3 }' | sort
}

# stream_ids FILE...: the release ids of the streams' ledgers, sorted.
stream_ids() {
	tns info --format json "$@" | grep -o '"dp\.release\.[0-9a-f]*\.tool"' | sed 's/"dp\.release\.//;s/\.tool"//' | sort -u
}

# charges DATASET OUT CMD...: CMD (a DP tool's command line, writing OUT,
# with --budget-store s.db) charges the store: the store's one release
# is the stream's; then, with the budget set to what is spent, the same
# run is refused: exit 77, no OUT, nothing on stdout, nothing charged.
charges() {
	local ds=$1 out=$2 before
	shift 2
	rm -f s.db "$out"
	rdp-account store init s.db
	rdp-account store set s.db --dataset "$ds" --epsilon 1000 --delta 1e-5
	run -0 "$@"
	[ -s "$out" ]
	[ "$(ids s.db | wc -l)" = 1 ]
	[ "$(ids s.db)" = "$(stream_ids "$out")" ]
	before=$(spent s.db "$ds")
	rdp-account store set s.db --dataset "$ds" --epsilon "$before" --delta 1e-5
	rm -f "$out"
	run -77 "$@"
	[[ $output == *"over its budget"*"nothing was released"* ]]
	[ ! -e "$out" ]
	! ls ."$out"* 2>/dev/null
	[ "$(spent s.db "$ds")" = "$before" ]
	[ "$(ids s.db | wc -l)" = 1 ]
}

# to_stdout CMD...: the refused run writes nothing on standard output.
to_stdout_empty() {
	run -77 --separate-stderr "$@"
	[ -z "$output" ]
}

@test "covest --budget-store charges the store; over the budget it writes nothing (77)" {
	charges cv o.tns covest -q -e 1 -d 1e-5 --clip 1 --budget-store s.db -o o.tns x.tns
	to_stdout_empty covest -q -e 1 -d 1e-5 --clip 1 --budget-store s.db x.tns
}

@test "dpsgd-train --budget-store charges the store; over the budget it writes nothing (77)" {
	charges blobs o.tns dpsgd-train -q --sigma 1 --epochs 1 --batch 8 --classes 3 \
		--public-records 60 --budget-store s.db -o o.tns b.tns
	to_stdout_empty dpsgd-train -q --sigma 1 --epochs 1 --batch 8 --classes 3 \
		--public-records 60 --budget-store s.db b.tns
}

@test "gmm-fit --budget-store charges the store; over the budget it writes nothing (77)" {
	charges cv o.tns gmm-fit -q --clip 20 -e 1 -d 1e-5 --budget-store s.db -o o.tns x.tns
	to_stdout_empty gmm-fit -q --clip 20 -e 1 -d 1e-5 --budget-store s.db x.tns
}

@test "kde-publish --budget-store charges the store; over the budget it writes nothing (77)" {
	charges toy o.tns kde-publish -q -e 1 -d 1e-5 --bandwidth 0.05 --budget-store s.db \
		-o o.tns p0.tns p1.tns p2.tns p3.tns p4.tns p5.tns p6.tns p7.tns
	to_stdout_empty kde-publish -q -e 1 -d 1e-5 --bandwidth 0.05 --budget-store s.db \
		p0.tns p1.tns p2.tns p3.tns p4.tns p5.tns p6.tns p7.tns
}

@test "teacher-vote --budget-store charges the store; over the budget it writes nothing (77)" {
	charges priv o.tns teacher-vote -q --classes 4 --gamma 1 --budget-store s.db -o o.tns votes.tns
	to_stdout_empty teacher-vote -q --classes 4 --gamma 1 --budget-store s.db votes.tns
}

@test "--budget-store wins over PRIVADA_BUDGET_STORE; an empty path is a usage error" {
	rm -f w.db o.tns
	rdp-account store init w.db
	rdp-account store set w.db --dataset cv --epsilon 5 --delta 1e-5
	PRIVADA_BUDGET_STORE=missing.db run -0 covest -q -e 1 -d 1e-5 --clip 1 \
		--budget-store w.db -o o.tns x.tns
	[ "$(ids w.db)" = "$(stream_ids o.tns)" ]
	[ ! -e missing.db ]
	run -64 covest -q -e 1 -d 1e-5 --clip 1 --budget-store '' -o o2.tns x.tns
	[ ! -e o2.tns ]
}

# ledger_eps DATASET FILE...: rdp-account ledger's composed epsilon (%.17g).
ledger_eps() {
	local ds=$1
	shift
	rdp-account ledger --format json -d 1e-5 "$@" | $PY -c 'import json,sys; print(repr([d["epsilon"] for d in json.load(sys.stdin)["datasets"] if d["dataset"] == sys.argv[1]][0]))' "$ds"
}

# close A B TOL: |A - B| <= TOL max(1, |B|)
close() {
	$PY -c "import sys; a,b,t=float('$1'),float('$2'),float('$3'); sys.exit(0 if abs(a-b) <= t*max(1,abs(b)) else 1)" || { echo "not close: $1 $2"; return 1; }
}

@test "the store's epsilon after each of a sequence of releases equals rdp-account ledger's to 1e-12" {
	rm -rf seq && mkdir seq && cd seq
	rdp-account store init s.db
	rdp-account store set s.db --dataset cv --epsilon 100 --delta 1e-5
	files=()
	i=0
	for cmd in "covest -e 1 -d 1e-5 --clip 1" "gmm-fit --clip 20 -e 0.7 -d 1e-5" \
	    "covest --sigma 3 --clip 1" "covest -e 0.2 -d 1e-5 --clip 1 --audit-repeat 3" \
	    "gmm-fit -k 2 --clip 20 --sigma 4 --iters 5"; do
		i=$((i + 1))
		$cmd -q --budget-store s.db -o r$i.tns ../x.tns
		files+=(r$i.tns)
		close "$(spent s.db cv)" "$(ledger_eps cv "${files[@]}")" 1e-12
	done
	[ "$(ids s.db)" = "$(stream_ids "${files[@]}")" ]
	run -0 rdp-account ledger -d 1e-5 --store s.db "${files[@]}"
}

@test "rdp-account ledger --store flags releases that are not in the store, elsewhere or with another curve" {
	rm -rf lg && mkdir lg && cd lg
	rdp-account store init s.db
	rdp-account store set s.db --dataset cv --epsilon 100 --delta 1e-5
	rdp-account store set s.db --dataset other --epsilon 100 --delta 1e-5
	covest -q -e 1 -d 1e-5 --clip 1 --budget-store s.db -o a.tns ../x.tns
	covest -q -e 1 -d 1e-5 --clip 1 -o b.tns ../x.tns
	run -0 --separate-stderr rdp-account ledger -d 1e-5 --store s.db a.tns
	[ -z "$stderr" ]
	# The report on stdout is the one without --store.
	[ "$output" = "$(rdp-account ledger -d 1e-5 a.tns)" ]
	run -0 --separate-stderr rdp-account ledger -v -d 1e-5 --budget-store s.db a.tns
	[[ $stderr == *"all 1 release of the streams are charged"* ]]
	idb=$(stream_ids b.tns)
	run -1 --separate-stderr rdp-account ledger -d 1e-5 --store s.db a.tns b.tns
	[ "$stderr" = "rdp-account: release $idb (covest, dataset cv) is not in the budget store s.db" ]
	# Another curve, another dataset (edited behind the tools' back).
	ida=$(stream_ids a.tns)
	cp s.db c.db
	sqlite3 c.db "UPDATE releases SET rdp = replace(rdp, '0.', '0.9') WHERE id = '$ida'"
	run -1 --separate-stderr rdp-account ledger -d 1e-5 --store c.db a.tns
	[[ $stderr == *"release $ida (covest, dataset cv) is charged to the budget store c.db with another RDP curve" ]]
	cp s.db d.db
	sqlite3 d.db "UPDATE releases SET dataset = 'other' WHERE id = '$ida'"
	run -1 --separate-stderr rdp-account ledger -d 1e-5 --store d.db a.tns
	[[ $stderr == *"is charged to dataset other in the budget store d.db, the stream says dataset cv" ]]
	# --store is the ledger's; a missing store is 66.
	run -64 rdp-account --store s.db -d 1e-5 gaussian --sigma 1
	run -66 rdp-account ledger -d 1e-5 --store nothere.db a.tns
	[ ! -e nothere.db ]
}

@test "store solve gaussian: covest with the solved noise multiplier lands on the budget, never above" {
	rm -f g.db o1.tns o2.tns
	rdp-account store init g.db
	rdp-account store set g.db --dataset cv --epsilon 2 --delta 1e-5
	covest -q -e 0.5 -d 1e-5 --clip 1 --budget-store g.db -o o1.tns x.tns
	run -0 rdp-account store solve g.db --dataset cv --format tsv gaussian
	m=$(echo "$output" | awk -F'\t' 'NR == 2 { print $8 }')
	t=$(echo "$output" | awk -F'\t' 'NR == 2 { print $12 }')
	run -0 covest -q --sigma "$m" --clip 1 --budget-store g.db -o o2.tns x.tns
	s=$(spent g.db cv)
	close "$s" "$t" 1e-12
	$PY -c "import sys; s=float('$s'); sys.exit(0 if 2*(1-1e-9) <= s <= 2 else 1)"
	# The sensitivity scales the noise: sigma = sensitivity x multiplier.
	rdp-account store set g.db --dataset cv2 --epsilon 2 --delta 1e-5
	a=$(rdp-account store solve g.db --dataset cv2 --format tsv gaussian --count 3 | awk -F'\t' 'NR == 2 { print $7 }')
	b=$(rdp-account store solve g.db --dataset cv2 --format tsv gaussian --count 3 --sensitivity 2.5 | awk -F'\t' 'NR == 2 { print $7 }')
	close "$b" "$($PY -c "print(repr(2.5 * $a))")" 1e-11
	# Nothing left: exit 1.
	run -1 rdp-account store solve g.db --dataset cv gaussian
	[[ $output == *"fits the "*" left" ]]
}

@test "store solve sgm: dpsgd-train with the solved sigma, then the solved steps, lands on the budget" {
	rm -f d.db m1.tns m2.tns m3.tns
	rdp-account store init d.db
	rdp-account store set d.db --dataset blobs --epsilon 3 --delta 1e-5
	train="dpsgd-train -q --exact-noise --batch 8 --classes 3 --public-records 60 --budget-store d.db"
	$train --sigma 2 --epochs 1 -o m1.tns b.tns
	run -0 rdp-account store solve d.db --dataset blobs --format json sgm --batch 8 --records 60 --epochs 2
	m=$($PY -c 'import json,sys; print(repr(json.loads(sys.argv[1])["sigma"]))' "$output")
	t=$($PY -c 'import json,sys; print(repr(json.loads(sys.argv[1])["total"]))' "$output")
	$PY -c 'import json,sys; j=json.loads(sys.argv[1]); assert j["steps"] == 15 and abs(j["q"] - 8/60) < 1e-16' "$output"
	run -0 $train --sigma "$m" --epochs 2 -o m2.tns b.tns
	s=$(spent d.db blobs)
	close "$s" "$t" 1e-12
	$PY -c "import sys; s=float('$s'); sys.exit(0 if 3*(1-1e-9) <= s <= 3 else 1)"
	# Steps: raise the budget, solve the steps at sigma 3, train them;
	# then not one more step fits (one more step composes as T + 1).
	rdp-account store set d.db --dataset blobs --epsilon 5 --delta 1e-5
	run -0 rdp-account store solve d.db --dataset blobs --format tsv sgm --q 0.13333333333333333 --sigma 3
	T=$(echo "$output" | awk -F'\t' 'NR == 2 { print $9 }')
	E=$(echo "$output" | awk -F'\t' 'NR == 2 { print $10 }')
	[ "$T" -gt 10 ]
	run -0 $train --sigma 3 --epochs "$E" -o m3.tns b.tns
	[ "$(tns info -v m3.tns | awk '$1 ~ /\.param\.steps$/ { print $2 }' | sort -u | tail -1)" = "$T" ]
	s=$(spent d.db blobs)
	$PY -c "import sys; s=float('$s'); sys.exit(0 if s <= 5 else 1)"
	run -1 rdp-account store solve d.db --dataset blobs sgm --q 0.13333333333333333 --sigma 3
	[[ $output == *"not even one step fits"* ]]
	[ "$(ids d.db)" = "$(stream_ids m1.tns m2.tns m3.tns)" ]
}

@test "store solve: the store from --budget-store, the operand or PRIVADA_BUDGET_STORE; bad plans are usage errors" {
	rm -f v.db
	rdp-account store init v.db
	rdp-account store set v.db --dataset cv --epsilon 1 --delta 1e-5
	a=$(rdp-account store solve v.db --dataset cv gaussian)
	[ "$(rdp-account store solve --budget-store v.db --dataset cv gaussian)" = "$a" ]
	[ "$(PRIVADA_BUDGET_STORE=v.db rdp-account store solve --dataset cv gaussian)" = "$a" ]
	[ "$(PRIVADA_BUDGET_STORE=v.db rdp-account store status)" = "$(rdp-account store status v.db)" ]
	run -64 rdp-account store solve --budget-store v.db v.db --dataset cv gaussian
	run -64 rdp-account store solve v.db gaussian
	run -64 rdp-account store solve v.db --dataset cv laplace
	run -64 rdp-account store solve v.db --dataset cv sgm --q 0.1
	run -64 rdp-account store solve v.db --dataset cv sgm --q 0.1 --batch 8 --records 60 --steps 3
	run -64 rdp-account store solve v.db --dataset cv sgm --q 0.1 --steps 3 --sigma 1
	run -64 rdp-account store solve v.db --dataset cv gaussian --steps 3
	run -64 rdp-account store status --q 0.1 v.db
	run -78 rdp-account store solve v.db --dataset nobudget gaussian
	run -66 rdp-account store solve nothere.db --dataset cv gaussian
	[ ! -e nothere.db ]
}

@test "store solve gaussian agrees with numpy: composition with the charged curve, improved conversion, the smallest sigma" {
	rm -f n.db n1.tns
	rdp-account store init n.db
	rdp-account store set n.db --dataset cv --epsilon 1.5 --delta 1e-5
	covest -q -e 0.5 -d 1e-5 --clip 1 --budget-store n.db -o n1.tns x.tns
	m=$(rdp-account store solve n.db --dataset cv --format tsv gaussian --count 2 --sensitivity 0.5 | awk -F'\t' 'NR == 2 { print $7 }')
	tns info -v n1.tns | awk '$1 ~ /\.orders$/ { print $2; exit }' > orders
	tns info -v n1.tns | awk '$1 ~ /\.rdp$/ { print $2; exit }' > rdp
	$PY - "$m" <<'PYEOF'
import sys, numpy as np
sigma = float(sys.argv[1])
a = np.array(open("orders").read().strip().split(","), float)
r0 = np.array(open("rdp").read().strip().split(","), float)
delta, budget = 1e-5, 1.5
def eps(s):
    r = r0 + 2 * a * 0.5**2 / (2 * s * s)
    ok = a > 1.01
    e = r[ok] + np.log1p(-1 / a[ok]) - np.log(delta * a[ok]) / (a[ok] - 1)
    return max(e.min(), 0.0)
assert eps(sigma) <= budget, (sigma, eps(sigma))
assert eps(sigma * (1 - 1e-9)) > budget, (sigma, eps(sigma * (1 - 1e-9)))
PYEOF
}

# refused CODE MESSAGE CMD...: CMD exits CODE saying MESSAGE, writes no
# o.tns (nor a temporary of it) and nothing on stdout.
refused() {
	local code=$1 msg=$2
	shift 2
	rm -f o.tns
	run "-$code" "$@" -o o.tns
	[[ $output == *"$msg"* ]] || { echo "$output"; return 1; }
	[ ! -e o.tns ]
	! ls .o.tns* 2>/dev/null
	run "-$code" --separate-stderr "$@"
	[ -z "$output" ]
}

@test "bad stores: another version, corrupt, no budget, another delta, read-only: a clear error, nothing charged, nothing written" {
	rm -rf bad && mkdir bad && cd bad
	cov="covest -q -e 1 -d 1e-5 --clip 1 --budget-store"
	rdp-account store init good.db
	rdp-account store set good.db --dataset cv --epsilon 50 --delta 1e-5
	$cov good.db -o first.tns ../x.tns
	# Another version.
	cp good.db v9.db
	sqlite3 v9.db 'PRAGMA user_version = 9'
	refused 65 "budget store version 9, this privada reads version 1" $cov v9.db ../x.tns
	[ "$(sqlite3 v9.db 'SELECT count(*) FROM releases')" = 1 ]
	# Not a database at all; a database whose pages are overwritten.
	printf 'not a database at all %.0s' {1..200} > junk.db
	refused 65 "not a budget store" $cov junk.db ../x.tns
	cp good.db corrupt.db
	size=$(stat -c %s corrupt.db)
	dd if=/dev/urandom of=corrupt.db bs=1 seek=$((size / 2)) count=$((size / 2)) conv=notrunc 2>/dev/null
	rm -f o.tns
	run covest -q -e 1 -d 1e-5 --clip 1 --budget-store corrupt.db -o o.tns ../x.tns
	[ "$status" = 74 ] || [ "$status" = 65 ]
	[[ $output == *"budget store corrupt.db"*"nothing was released"* ]]
	[ ! -e o.tns ]
	# A dataset without a budget.
	rdp-account store init empty.db
	refused 78 "dataset cv has no budget in the store" $cov empty.db ../x.tns
	# A delta that differs from the store's: the tool's, and store set's.
	before=$(spent good.db cv)
	refused 65 "dataset cv is accounted at delta 1e-05, this run's --delta is 1e-06" \
		covest -q -e 1 -d 1e-6 --clip 1 --budget-store good.db ../x.tns
	run -65 rdp-account store set good.db --dataset cv --epsilon 50 --delta 1e-6
	[[ $output == *"its delta cannot change"* ]]
	[ "$(spent good.db cv)" = "$before" ]
	[ "$(ids good.db | wc -l)" = 1 ]
	# A read-only store file.
	if [ "$(id -u)" != 0 ]; then
		cp good.db ro.db
		chmod 0400 ro.db
		refused 74 "budget store ro.db" $cov ro.db ../x.tns
		[ "$(sqlite3 ro.db 'SELECT count(*) FROM releases')" = 1 ]
	fi
	[ "$(sqlite3 good.db 'PRAGMA integrity_check')" = ok ]
}

@test "SIGKILL at random points of 200 charges: the store opens, passes integrity_check, and holds every output's release" {
	rm -rf kill && mkdir kill && cd kill
	rdp-account store init k.db
	rdp-account store set k.db --dataset cv --epsilon 1000000 --delta 1e-5
	$PY -c 'import random; random.seed(18); print("\n".join("%.4f" % random.uniform(0, 0.1) for _ in range(200)))' > delays
	i=0
	while read -r d; do
		i=$((i + 1))
		covest -q -e 0.01 -d 1e-5 --clip 1 --budget-store k.db -o o$i.tns ../x.tns 2>/dev/null &
		pid=$!
		sleep "$d"
		kill -9 "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		# Every 20 kills: the store opens and is whole.
		if [ $((i % 20)) = 0 ]; then
			[ "$(sqlite3 k.db 'PRAGMA integrity_check')" = ok ]
			rdp-account store status k.db > /dev/null
		fi
	done < delays
	[ "$(sqlite3 k.db 'PRAGMA integrity_check')" = ok ]
	n=$(ls o*.tns 2>/dev/null | wc -l)
	c=$(ids k.db | wc -l)
	echo "# outputs $n, charges $c of 200" >&3
	# Some runs were killed before their output, some charged.
	[ "$n" -lt 200 ] && [ "$c" -gt 0 ]
	# Every output's release is charged (a charge without an output is
	# allowed: fail closed), so the store never shows less spent.
	[ "$c" -ge "$n" ]
	if [ "$n" -gt 0 ]; then
		missing=$(comm -13 <(ids k.db) <(stream_ids o*.tns))
		[ -z "$missing" ]
	fi
	if [ "$n" -gt 0 ]; then
		$PY -c "import sys; sys.exit(0 if float('$(spent k.db cv)') >= float('$(ledger_eps cv o*.tns)') else 1)"
		run -0 rdp-account ledger -d 1e-5 --store k.db o*.tns
	fi
	# The store still charges.
	run -0 covest -q -e 0.01 -d 1e-5 --clip 1 --budget-store k.db -o last.tns ../x.tns
}

@test "a release whose RDP curve is infinite at some orders (PATE's data-dependent bound) reads back; a NaN is a clear error, not a crash" {
	rm -f inf.db i1.tns i2.tns
	rdp-account store init inf.db
	rdp-account store set inf.db --dataset cv --epsilon 100 --delta 1e-5
	covest -q -e 1 -d 1e-5 --clip 1 --budget-store inf.db -o i1.tns x.tns
	id=$(ids inf.db)
	# The last order's value made +inf, as teacher-vote's smooth
	# sensitivity release records it (tests/pate-t.bats charges one).
	sqlite3 inf.db "UPDATE releases SET rdp = rtrim(rdp, '0123456789.e+-') || 'inf' WHERE id = '$id'"
	[[ $(sqlite3 inf.db "SELECT rdp FROM releases") == *",inf" ]]
	run -0 rdp-account store status inf.db
	[[ $output == *"1 release"* ]]
	run -0 covest -q -e 1 -d 1e-5 --clip 1 --budget-store inf.db -o i2.tns x.tns
	sqlite3 inf.db "UPDATE releases SET rdp = rtrim(rdp, 'inf') || 'nan' WHERE id = '$id'"
	run -74 rdp-account store status inf.db
	[[ $output == *"release $id: malformed RDP curve"* ]]
	run -74 covest -q -e 1 -d 1e-5 --clip 1 --budget-store inf.db -o i3.tns x.tns
	[ ! -e i3.tns ]
}
