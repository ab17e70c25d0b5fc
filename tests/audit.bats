#!/usr/bin/env bats
# The privacy audit harness (tests/audit.bash, tests/helpers/dp-audit.c)
# on the reference mechanisms of tests/helpers/mech.c, which use the exact
# lib/noise samplers: the correct ones pass, the half-noise ones are caught.
#
# Every audit uses 200000 releases per input (100000 choose the
# threshold, 100000 evaluate it), fixed seeds, and Clopper-Pearson bounds
# at alpha = 1e-7 each: a correct mechanism fails a check with probability
# at most 2e-7 for a fresh seed.

load test_helper
load audit

N=200000

@test "dp-audit's Clopper-Pearson bound equals scipy's beta quantile" {
	# scipy.stats.beta.ppf(1 - alpha, k + 1, n - k), computed independently
	run -0 dp-audit --alpha 1e-7 --cp 5 100
	audit_le "$(awk -v x="$output" 'BEGIN { d = x - 0.2514572110489265; print (d < 0 ? -d : d) }')" 1e-12
	run -0 dp-audit --alpha 0.025 --cp 731 50000
	audit_le "$(awk -v x="$output" 'BEGIN { d = x - 0.015710701224007223; print (d < 0 ? -d : d) }')" 1e-12
	run -0 dp-audit --alpha 1e-7 --cp 3 100000
	audit_le "$(awk -v x="$output" 'BEGIN { d = x - 0.0002398371572582983; print (d < 0 ? -d : d) }')" 1e-15
	run -0 dp-audit --cp 100 100
	[ "$output" = 1 ]
}

@test "dp-audit's bound for zero events is 1 - alpha^(1/n)" {
	run -0 dp-audit --alpha 0.001 --cp 0 250
	audit_le "$(awk -v x="$output" 'BEGIN { d = x - (1 - exp(log(0.001) / 250)); print (d < 0 ? -d : d) }')" 1e-13
}

@test "dp-audit counts the errors of a fixed threshold test" {
	seq 1 10 > "$BATS_TEST_TMPDIR/d"
	seq 6 15 > "$BATS_TEST_TMPDIR/d2"
	audit_run "$BATS_TEST_TMPDIR/d" "$BATS_TEST_TMPDIR/d2" --threshold 7
	[ "$(audit_get fp)" = 3 ]	# 8 9 10
	[ "$(audit_get fn)" = 2 ]	# 6 7
	[ "$(audit_get n_d)" = 10 ]
	audit_run "$BATS_TEST_TMPDIR/d" "$BATS_TEST_TMPDIR/d2" --threshold 7 --below
	[ "$(audit_get fp)" = 6 ]	# 1..6
	[ "$(audit_get fn)" = 9 ]	# 7..15
	[ "$(audit_get direction)" = below ]
}

@test "the Laplace mechanism's epsilon lower bound stays at or below its epsilon" {
	# value 0 vs 1, sensitivity 1, scale 1: epsilon 1
	audit_samples "$BATS_TEST_TMPDIR/d" mech -m laplace -x 0 -s 1 -n $N -S 11
	audit_samples "$BATS_TEST_TMPDIR/d2" mech -m laplace -x 1 -s 1 -n $N -S 12
	run -0 --separate-stderr audit_eps_lb "$BATS_TEST_TMPDIR/d" "$BATS_TEST_TMPDIR/d2" 0
	audit_le "$output" 1
	audit_gt "$output" 0.5		# and the test is not vacuous
}

@test "the audit catches a Laplace mechanism with half the noise" {
	audit_samples "$BATS_TEST_TMPDIR/d" mech --broken -m laplace -x 0 -s 1 -n $N -S 13
	audit_samples "$BATS_TEST_TMPDIR/d2" mech --broken -m laplace -x 1 -s 1 -n $N -S 14
	run -0 --separate-stderr audit_eps_lb "$BATS_TEST_TMPDIR/d" "$BATS_TEST_TMPDIR/d2" 0
	audit_gt "$output" 1
}

@test "the Gaussian mechanism's mu lower bound stays at or below its mu" {
	# value 0 vs 1, sensitivity 1, sigma 1: mu = 1
	audit_samples "$BATS_TEST_TMPDIR/d" mech -m gaussian -x 0 -s 1 -n $N -S 15
	audit_samples "$BATS_TEST_TMPDIR/d2" mech -m gaussian -x 1 -s 1 -n $N -S 16
	run -0 --separate-stderr audit_mu_lb "$BATS_TEST_TMPDIR/d" "$BATS_TEST_TMPDIR/d2"
	audit_le "$output" 1
	audit_gt "$output" 0.5
}

@test "the audit catches a Gaussian mechanism with half the noise" {
	audit_samples "$BATS_TEST_TMPDIR/d" mech --broken -m gaussian -x 0 -s 1 -n $N -S 17
	audit_samples "$BATS_TEST_TMPDIR/d2" mech --broken -m gaussian -x 1 -s 1 -n $N -S 18
	run -0 --separate-stderr audit_mu_lb "$BATS_TEST_TMPDIR/d" "$BATS_TEST_TMPDIR/d2"
	audit_gt "$output" 1
}

@test "the Gaussian mechanism's epsilon lower bound stays below its (eps, delta) curve" {
	# mu = 1 is (4.3772, 1e-5)-DP (delta(eps) = Phi(-eps/mu + mu/2)
	# - e^eps Phi(-eps/mu - mu/2), solved with scipy)
	audit_samples "$BATS_TEST_TMPDIR/d" mech -m gaussian -x 0 -s 1 -n $N -S 19
	audit_samples "$BATS_TEST_TMPDIR/d2" mech -m gaussian -x 1 -s 1 -n $N -S 20
	run -0 --separate-stderr audit_eps_lb "$BATS_TEST_TMPDIR/d" "$BATS_TEST_TMPDIR/d2" 1e-5
	audit_le "$output" 4.3772
}

@test "mech gives the same releases for the same seed" {
	mech -m gaussian -x 3.25 -s 0.5 -n 1000 -S 7 > "$BATS_TEST_TMPDIR/a"
	mech -m gaussian -x 3.25 -s 0.5 -n 1000 -S 7 > "$BATS_TEST_TMPDIR/b"
	mech -m gaussian -x 3.25 -s 0.5 -n 1000 -S 8 > "$BATS_TEST_TMPDIR/c"
	cmp "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b"
	! cmp -s "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/c"
}

@test "dp-audit rejects a line that is not a number" {
	printf '1\n2\nabc\n' > "$BATS_TEST_TMPDIR/d"
	seq 1 5 > "$BATS_TEST_TMPDIR/d2"
	run -65 --separate-stderr dp-audit "$BATS_TEST_TMPDIR/d" "$BATS_TEST_TMPDIR/d2"
	refute_output
	[[ $stderr == "dp-audit: $BATS_TEST_TMPDIR/d:3: not a finite number" ]]
}

@test "dp-audit rejects infinite samples" {
	printf '1\ninf\n' > "$BATS_TEST_TMPDIR/d"
	seq 1 5 > "$BATS_TEST_TMPDIR/d2"
	run -65 --separate-stderr dp-audit "$BATS_TEST_TMPDIR/d" "$BATS_TEST_TMPDIR/d2"
	refute_output
	[[ $stderr == *"d:2: not a finite number" ]]
}

@test "dp-audit exits 66 on a missing file and 64 on a bad option" {
	seq 1 5 > "$BATS_TEST_TMPDIR/d2"
	run -66 --separate-stderr dp-audit "$BATS_TEST_TMPDIR/none" "$BATS_TEST_TMPDIR/d2"
	refute_output
	run -64 --separate-stderr dp-audit --alpha 0.9 "$BATS_TEST_TMPDIR/d2" "$BATS_TEST_TMPDIR/d2"
	refute_output
	run -64 --separate-stderr dp-audit "$BATS_TEST_TMPDIR/d2"
	refute_output
	[[ $stderr == usage:* ]]
}

@test "mech refuses a missing scale" {
	run -64 --separate-stderr mech -m laplace -x 0 -n 10
	refute_output
	[[ $stderr == usage:* ]]
}
