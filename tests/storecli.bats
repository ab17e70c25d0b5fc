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
