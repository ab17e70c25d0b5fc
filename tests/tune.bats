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
