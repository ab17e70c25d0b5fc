#!/usr/bin/env bats
# Private hyper-parameter tuning by repeat and select (lib/dp/tune.h,
# dpsgd-train --tune).  The audit: the helper tune-audit runs the tuned
# mechanism with a tiny trial (randomized response, eps 1, scored by its
# own output) on D and D' = D + canary, 200000 times each; the lower bound
# on epsilon stays at or below the claim of tune_rdp (the paper's bound),
# and a claim of the trial's cost alone (the mutation: tuning charged as
# one training) is below the bound.  Fixed seeds, Clopper-Pearson at
# alpha = 1e-7 per side.

load test_helper
load audit

# tune_audit DIST [-p]: the two release files and the claim.
tune_audit() {
	local k=$1
	shift
	tune-audit "$@" -e 1 -k "$k" -n 200000 -S 31 > a.p 2> claim
	tune-audit "$@" -c -e 1 -k "$k" -n 200000 -S 32 > a2.p 2>/dev/null
	awk '$1 == "claim_eps" { print $2 }' claim
}

@test "tune audit, geometric:10: the eps lower bound stays at or below the tuned claim" {
	# Measured: eps_lb 1.694 against the claim 3.008.
	cd "$BATS_TEST_TMPDIR"
	claim=$(tune_audit geometric:10)
	run -0 --separate-stderr audit_eps_lb a.p a2.p 1e-5
	audit_le "$output" "$claim"
	audit_gt "$output" 1.2		# above e^eps: tuning did cost more
}

@test "tune audit, geometric:10: the audit catches the per-trial charge" {
	# The claim of one trial, 1.0035; measured eps_lb 1.694.
	cd "$BATS_TEST_TMPDIR"
	claim=$(tune_audit geometric:10 -p)
	run -0 --separate-stderr audit_eps_lb a.p a2.p 1e-5
	audit_gt "$output" "$claim"
}

@test "tune audit, poisson:10: the bound stays at or below the claim and catches the per-trial charge" {
	# Measured: eps_lb 3.854 against the claim 6.603 and the trial's
	# 1.0035.
	cd "$BATS_TEST_TMPDIR"
	claim=$(tune_audit poisson:10)
	run -0 --separate-stderr audit_eps_lb a.p a2.p 1e-5
	lb=$output
	audit_le "$lb" "$claim"
	claim1=$(tune-audit -p -e 1 -k poisson:10 -n 1 -S 1 2>&1 >/dev/null |
	    awk '$1 == "claim_eps" { print $2 }')
	audit_gt "$lb" "$claim1"
}

@test "tune audit, logarithmic:10: the bound stays at or below the claim and catches the per-trial charge" {
	# Measured: eps_lb 1.329 against the claim 2.008 and the trial's
	# 1.0035.
	cd "$BATS_TEST_TMPDIR"
	claim=$(tune_audit logarithmic:10)
	run -0 --separate-stderr audit_eps_lb a.p a2.p 1e-5
	lb=$output
	audit_le "$lb" "$claim"
	claim1=$(tune-audit -p -e 1 -k logarithmic:10 -n 1 -S 1 2>&1 >/dev/null |
	    awk '$1 == "claim_eps" { print $2 }')
	audit_gt "$lb" "$claim1"
}

# ---- dpsgd-train --tune ----

# tune_run [options]: tune a logistic regression on the 60 blobs rows.
tune_run() {
	dpsgd-train -q -d 1e-5 --classes 3 --public-records 60 --batch 32 \
		--tune 'lr=0.1,1;epochs=5,10' --tune-trials geometric:5 \
		--val-fraction 0.2 "$@" "$BATS_FILE_TMPDIR/blobs.tns"
}

setup_file() {
	featurize -q --label label --dataset blobs "$DATA/dpsgd/blobs.csv" \
		> "$BATS_FILE_TMPDIR/blobs.tns"
}

@test "dpsgd-train --tune -e 2: one repeat_select release whose tuned total is 2" {
	cd "$BATS_TEST_TMPDIR"
	run -0 tune_run -e 2 -o m.tns
	run -0 tns info --format json m.tns
	echo "$output" > info.json
	run -0 "$PY" - info.json <<'EOF2'
import json, sys
m = json.load(open(sys.argv[1]))["metadata"]
rel = sorted({k.split(".")[2] for k in m if k.startswith("dp.release.")})
assert len(rel) == 1, rel
p = "dp.release.%s." % rel[0]
assert m[p + "mechanism"] == "repeat_select"
assert m[p + "neighbours"] == "add_remove"
assert float(m[p + "param.trials_mean"]) == 5.0 or abs(float(m[p + "param.trials_mean"]) - 5) < 1e-12
assert m[p + "param.configurations"] == "4"
assert float(m[p + "param.trial_epsilon"]) < 2
assert m["tune.config"].startswith("lr=") and "epochs=" in m["tune.config"]
assert abs(float(m["tune.epsilon"]) - 2) < 1e-6
# Nothing about the number of trials or the other trials leaves the tool.
assert not any("trials_drawn" in k or k.startswith("tune.k") for k in m)
assert "train.epsilon" not in m
EOF2
	run -0 rdp-account ledger --delta 1e-5 --format tsv m.tns
	eps=$(echo "$output" | awk -F '\t' 'NR == 2 { for (i = 1; i <= NF; i++) if (h[i] == "epsilon") print $i } NR == 1 { for (i = 1; i <= NF; i++) h[i] = $i }')
	[ -n "$eps" ]
	awk -v e="$eps" 'BEGIN { exit !(e <= 2 && e > 1.999) }'
	run -0 predict --model m.tns "$BATS_FILE_TMPDIR/blobs.tns"
}

@test "dpsgd-train --tune --sigma: the ledger's curve is Theorem 2 over the trial's (q = 1: Gaussian steps), as numpy computes it" {
	# 60 rows, 12 declared validation rows: the training part's declared
	# size is 48, so --batch 48 makes q = 1 and a step the Gaussian
	# mechanism; epochs 2 and 3 are 2 and 3 steps.
	cd "$BATS_TEST_TMPDIR"
	run -0 dpsgd-train -q -d 1e-5 --classes 3 --public-records 60 \
		--batch 48 --sigma 5 --tune 'lr=0.5,1;epochs=2,3' \
		--tune-trials geometric:5 --tune-score-sigma 10 \
		--val-fraction 0.2 -o m.tns "$BATS_FILE_TMPDIR/blobs.tns"
	run -0 tns info --format json m.tns
	echo "$output" > info.json
	run -0 "$PY" - info.json <<EOF2
import json, sys
import numpy as np
sys.path.insert(0, "$TOP/tests/ref")
import tune_ref
m = json.load(open(sys.argv[1]))["metadata"]
rel = {k.split(".")[2] for k in m if k.startswith("dp.release.")}
p = "dp.release.%s." % rel.pop()
o = np.array(m[p + "orders"].split(","), float)
r = np.array(m[p + "rdp"].split(","), float)
assert np.array_equal(o, tune_ref.ORDERS)
assert float(m[p + "param.trial_q_max"]) == 1
assert m[p + "param.trial_steps_max"] == "3"
trial = 3 * o / (2 * 5.0 ** 2) + o / (2 * 10.0 ** 2)
want = tune_ref.tuned("geometric", 1, 5.0, trial)
rel = np.max(np.abs(r - want) / want)
print("worst relative error", rel)
assert rel < 1e-12, rel
EOF2
}

@test "dpsgd-train --tune: a budget store charges the tuning once, and refuses a second one over budget before writing" {
	cd "$BATS_TEST_TMPDIR"
	rdp-account store init st.db
	rdp-account store set st.db --dataset blobs --epsilon 3 --delta 1e-5
	run -0 tune_run -e 2 --budget-store st.db -o m.tns
	run -0 rdp-account store status st.db --format tsv
	[ "$(echo "$output" | grep -c dpsgd-train)" -eq 1 ]
	run -77 tune_run -e 2 --budget-store st.db -o m2.tns
	[ ! -e m2.tns ]
}

@test "dpsgd-train --tune: the same seed gives the same model" {
	cd "$BATS_TEST_TMPDIR"
	tune_run -e 2 -S 7 > a.tns 2>/dev/null
	tune_run -e 2 -S 7 > b.tns 2>/dev/null
	run -0 same_but_ids a.tns b.tns
}

@test "dpsgd-train --tune: usage errors" {
	cd "$BATS_TEST_TMPDIR"
	b="$BATS_FILE_TMPDIR/blobs.tns"
	run -64 dpsgd-train -e 2 -d 1e-5 --classes 3 --public-records 60 \
		--tune 'lr=1' --val-fraction 0.2 "$b"
	[[ $output == *"--tune-trials"* ]]
	run -64 tune_run -e 2 --mode ncm
	run -64 tune_run -e 2 --val "$b" --val-public
	run -64 tune_run -e 2 --sigma 1
	run -64 dpsgd-train -e 2 -d 1e-5 --classes 3 --public-records 60 \
		--tune 'mu=1' --tune-trials geometric:5 --val-fraction 0.2 "$b"
	run -64 dpsgd-train -e 2 -d 1e-5 --classes 3 --public-records 60 \
		--tune 'lr=1' --tune-trials geometric:0.5 --val-fraction 0.2 "$b"
	run -64 dpsgd-train -e 2 -d 1e-5 --classes 3 --public-records 60 \
		--epochs 5 --tune-trials geometric:5 "$b"
	run -64 dpsgd-train -e 2 -d 1e-5 --classes 3 --public-records 60 \
		--epochs 5 --tune-score-sigma 3 "$b"
	run -64 dpsgd-train -d 1e-5 --classes 3 --tune 'lr=1;epochs=5' \
		--sigma 1 --tune-trials geometric:5 --val-fraction 0.2 "$b"
}

@test "dpsgd-train --tune: a Poisson draw of no trial writes nothing, exits 65, and is charged all the same" {
	cd "$BATS_TEST_TMPDIR"
	rdp-account store init st.db
	rdp-account store set st.db --dataset blobs --epsilon 100 --delta 1e-5
	# Seed 3 draws K = 0 from poisson:1 (probability e^-1).
	run -65 --separate-stderr dpsgd-train -q -d 1e-5 --classes 3 \
		--public-records 60 --batch 32 --tune 'lr=1;epochs=5' \
		--tune-trials poisson:1 --val-fraction 0.2 --sigma 2 -S 3 \
		--budget-store st.db -o m.tns "$BATS_FILE_TMPDIR/blobs.tns"
	[[ $stderr == *"drew no trial"* ]]
	[ ! -e m.tns ]
	run -0 rdp-account store status st.db --format tsv
	[ "$(echo "$output" | grep -c dpsgd-train)" -eq 1 ]
}
