# audit.bash: the empirical privacy audit harness for bats tests of DP tools.
#
#   load test_helper
#   load audit
#
# A DP claim is checked from the outside: run the mechanism many times on
# two neighbouring inputs D and D', reduce each release to one number (a
# "projection": any fixed function of one release, e.g. one coordinate of
# a noisy mean, a chosen index, a norm), write one number per line to two
# files, and ask dp-audit for a lower bound on the privacy loss.  The
# bound holds with probability >= 1 - 2*AUDIT_ALPHA (two exact one-sided
# Clopper-Pearson bounds), so:
#   - for a correct mechanism, audit_eps_lb / audit_mu_lb must stay at or
#     below the claimed epsilon / mu (a failure is a real bug, or a
#     1-in-5-million accident for a fresh seed);
#   - for a deliberately broken variant (e.g. half the noise) the bound
#     must exceed the claim: that shows the audit has the power to see it.
# Use >= 100000 releases per input (half choose the threshold, half
# evaluate it), fixed seeds, and DIFFERENT seeds (or work items) for D and
# D': with one seed both runs draw the same noise, and the audit measures
# nothing but the shift.
#
# The --audit-repeat N convention (every DP tool, for these tests):
#   TOOL --audit-repeat N [its usual options] < input > out
# parses and validates the input once, then performs N independent
# releases from it, each with fresh noise exactly as in N separate runs
# (in seeded mode release i uses the work item "<work item>/audit/<i>",
# so releases are independent and reproducible).  Output:
#   - tensor output: one stream holding tensors NAME/0 .. NAME/<N-1> for
#     each tensor NAME a single run would write (same dtype and dims);
#   - text output (e.g. rdp-account-like reports, a chosen index): N
#     records, one per line, release 0 first.
# The output's ledger records N releases of the mechanism and is marked
# dp.audit = N: audit output is a test artifact, never a release.  The
# accountant therefore charges all N releases if it is ever fed one.
# N is capped by the tool (say 10^6); the option is documented in the
# tool's man page under CAVEATS as a test aid.
#
# Helpers live in build/tests-bin (built from tests/helpers/*.c):
#   dp-audit  the bounds;  mech  a reference Laplace/Gaussian mechanism.

AUDIT_BIN="${PRIVADA_BIN:-$TOP/build/bin}/../tests-bin"
export PATH="$AUDIT_BIN:$PATH"
# Failure probability of each one-sided bound: joint confidence 1 - 2e-7.
AUDIT_ALPHA=${AUDIT_ALPHA:-1e-7}

# audit_run FILE_D FILE_D2 [dp-audit options]: run dp-audit; its key/value
# report goes to $BATS_TEST_TMPDIR/audit.out (shown on failure).
audit_run() {
	local d=$1 d2=$2
	shift 2
	[[ -x $AUDIT_BIN/dp-audit ]] || {
		echo "audit: $AUDIT_BIN/dp-audit is missing (make tests-bin)" >&2
		return 1
	}
	dp-audit --alpha "$AUDIT_ALPHA" "$@" "$d" "$d2" > "$BATS_TEST_TMPDIR/audit.out" || {
		echo "audit: dp-audit failed on $d $d2" >&2
		return 1
	}
}

# audit_get KEY: a value from the last audit_run.
audit_get() {
	awk -F '\t' -v k="$1" '$1 == k { print $2; f = 1 } END { exit !f }' \
		"$BATS_TEST_TMPDIR/audit.out"
}

# audit_eps_lb FILE_D FILE_D2 DELTA: print a lower bound on epsilon at
# DELTA (threshold chosen to maximise it).
audit_eps_lb() {
	audit_run "$1" "$2" --delta "$3" --objective eps && audit_get eps_lb
}

# audit_mu_lb FILE_D FILE_D2: print a lower bound on mu (Gaussian DP).
audit_mu_lb() {
	audit_run "$1" "$2" --objective mu && audit_get mu_lb
}

# audit_le A B / audit_gt A B: numeric comparisons that explain a failure.
audit_le() {
	awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }' || {
		echo "audit: lower bound $1 exceeds the claim $2" >&2
		cat "$BATS_TEST_TMPDIR/audit.out" >&2 2>/dev/null
		return 1
	}
}
audit_gt() {
	awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 > b + 0) }' || {
		echo "audit: lower bound $1 does not exceed $2 (no power)" >&2
		cat "$BATS_TEST_TMPDIR/audit.out" >&2 2>/dev/null
		return 1
	}
}

# audit_samples OUT CMD [ARGS...]: run a mechanism writing one number per
# line to OUT; fails if it exits non-zero or writes nothing.
audit_samples() {
	local out=$1
	shift
	"$@" > "$out" || { echo "audit: '$*' failed" >&2; return 1; }
	[[ -s $out ]] || { echo "audit: '$*' wrote nothing" >&2; return 1; }
}
