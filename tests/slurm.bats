#!/usr/bin/env bats
# The pipelines on Slurm (issue 20; pipelines/README.md, "Running at
# scale"): a private single-node cluster (tests/slurm/cluster: its own
# munged, slurmctld and slurmd in a temporary directory, stopped by pid in
# teardown_file, also when a test fails), the miniature of each pipeline
# (tests/slurm/miniatures.bash: the parameters of its own bats file) made
# locally and under SLURM=1, a failing job, TERM while jobs are queued,
# and the two ways to run inside one allocation (salloc, the pipelines'
# sbatch script).
#
# Needs Debian's slurmctld, slurmd, slurm-client and munge (make
# deps-slurm; .ci/run installs them).  When the cluster cannot start, the
# tests are skipped with the reason, except under CI=true, where that is
# a failure.
#
# The same seeds give the same results: the rows of the NOT private runs
# (seeded) compare whole, wall_s aside.  A DP run draws fresh noise on
# every run (its --seed would make it NOT private), so its row compares
# on what does not depend on the noise: task, method, epsilon, reps,
# eps_spent, verdict, acc_private.  pate-t's exact vote breaks ties at
# random (lib/mech/pate.c), so its rows compare like DP rows.

load test_helper
load slurm/miniatures

BIN=$(cd "${PRIVADA_BIN:-$TOP/build/bin}" && pwd)
EXPS="demo prima dpda gmm-uda pate-t dp-pg dp-vision"
# dp-vision's miniature featurizes the ScatterNet of all 70,000 images
# (two minutes on 2 cores): the Slurm test keeps its pixel model.
ARGS_dp_vision=(METHODS=pixels-lr)
# The cluster's directory: short, as the munge socket's path must be
# (108 bytes), so not under BATS_FILE_TMPDIR.
cluster_dir() {
	cat "$BATS_FILE_TMPDIR/cluster-dir"
}

next_job() {
	scontrol show config | awk '$1 == "NEXT_JOB_ID" { print $3 }'
}

setup_file() {
	local why e a before
	export BATS_NO_PARALLELIZE_WITHIN_FILE=true
	C=$(mktemp -d /tmp/privada-slurm.XXXXXX)
	echo "$C" > "$BATS_FILE_TMPDIR/cluster-dir"
	if ! why=$("$TOP/tests/slurm/cluster" start "$C" 2>&1); then
		rm -rf "$C"
		if [ "${CI:-}" = true ]; then
			echo "slurm.bats: CI=true and the Slurm cluster did not start: $why" >&2
			return 1
		fi
		echo "no Slurm cluster: $why" > "$BATS_FILE_TMPDIR/skip"
		rm "$BATS_FILE_TMPDIR/cluster-dir"
		return 0
	fi
	. "$C/env"
	for e in $EXPS; do
		a="ARGS_${e//-/_}[@]"
		miniature "$e" "$BATS_FILE_TMPDIR/local/$e" -j2 "${!a}" \
			> "$BATS_FILE_TMPDIR/local-$e.log" 2>&1
		echo $? > "$BATS_FILE_TMPDIR/local-$e.status"
		before=$(next_job)
		miniature "$e" "$BATS_FILE_TMPDIR/slurm/$e" -j2 SLURM=1 "${!a}" \
			> "$BATS_FILE_TMPDIR/slurm-$e.log" 2>&1
		echo $? > "$BATS_FILE_TMPDIR/slurm-$e.status"
		echo $(($(next_job) - before)) > "$BATS_FILE_TMPDIR/slurm-$e.jobs"
	done
}

teardown_file() {
	local c
	[ -e "$BATS_FILE_TMPDIR/cluster-dir" ] || return 0
	c=$(cluster_dir)
	"$TOP/tests/slurm/cluster" stop "$c"
	rm -rf "$c"
}

setup() {
	[ ! -e "$BATS_FILE_TMPDIR/skip" ] || skip "$(cat "$BATS_FILE_TMPDIR/skip")"
	. "$(cluster_dir)/env"
	cd "$BATS_TEST_TMPDIR"
}

# digest STREAM TENSOR: the md5 of the tensor's bytes; fails when the
# stream has no such tensor.
digest() {
	tns to-npy -f --tensor "$2" "$1" > digest.npy && md5sum < digest.npy
}

# rows FILE: results.tsv with wall_s blanked, and a DP row (verdict not
# not_private, or pate-t's exact vote) reduced to the columns its noise
# does not reach.
rows() {
	awk -F '\t' -v OFS='\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; print; next }
		{ $c["wall_s"] = "" }
		$c["verdict"] != "not_private" || $c["method"] ~ /^exact-/ {
			print $1, $2, $3, $4, $c["eps_spent"], $c["verdict"], $c["acc_private"], "(noise)"; next }
		{ print }' "$1"
}

# same_results EXP: the local and the Slurm miniature of EXP ran, the
# Slurm one as jobs, and their results agree.
same_results() {
	local e=$1 l="$BATS_FILE_TMPDIR/local/$1/out" s="$BATS_FILE_TMPDIR/slurm/$1/out"
	run -0 cat "$BATS_FILE_TMPDIR/local-$e.status"
	assert_output 0
	run -0 cat "$BATS_FILE_TMPDIR/slurm-$e.status"
	assert_output 0
	run -0 cat "$BATS_FILE_TMPDIR/slurm-$e.jobs"
	[ "$output" -gt 0 ] || fail "$e under SLURM=1 submitted no job"
	run -0 rows "$l/results.tsv"
	local want=$output
	[ "$(printf '%s\n' "$want" | wc -l)" -gt 1 ] || fail "$l/results.tsv: no row"
	run -0 rows "$s/results.tsv"
	assert_output "$want"
	# At least one row compares whole (a NOT private, seeded run).
	run -0 bash -c "$(declare -f rows); rows '$s/results.tsv' | grep -vc '(noise)'"
	[ "$output" -ge 2 ] || fail "no row compared whole"
}

@test "slurm: the demo under SLURM=1 (featurize as jobs) writes the same streams" {
	local e=demo l="$BATS_FILE_TMPDIR/local/demo/out" s="$BATS_FILE_TMPDIR/slurm/demo/out" f t a b
	run -0 cat "$BATS_FILE_TMPDIR/slurm-$e.status"
	assert_output 0
	run -0 cat "$BATS_FILE_TMPDIR/slurm-$e.jobs"
	assert_output 2
	for f in mnist usps; do
		for t in X y; do
			a=$(digest "$l/$f.tns" $t) || fail "$l/$f.tns: no $t"
			b=$(digest "$s/$f.tns" $t) || fail "$s/$f.tns: no $t"
			[ "$a" = "$b" ] || fail "$f.tns: tensor $t differs"
		done
	done
}

@test "slurm: prima's miniature under SLURM=1 gives the local results" {
	same_results prima
}

@test "slurm: dpda's miniature under SLURM=1 gives the local results" {
	same_results dpda
}

@test "slurm: gmm-uda's miniature under SLURM=1 gives the local results" {
	same_results gmm-uda
}

@test "slurm: pate-t's miniature under SLURM=1 gives the local results, the same teachers" {
	same_results pate-t
	local l="$BATS_FILE_TMPDIR/local/pate-t/out" s="$BATS_FILE_TMPDIR/slurm/pate-t/out" f
	local n=0 a b
	for f in "$l"/n5/part-*.teacher.tns; do
		a=$(digest "$f" model/fc1/W) || fail "$f: no model/fc1/W"
		b=$(digest "$s/n5/${f##*/}" model/fc1/W) || fail "${f##*/}: no model/fc1/W"
		[ "$a" = "$b" ] || fail "${f##*/} differs"
		n=$((n + 1))
	done
	[ "$n" -eq 5 ] || fail "$n teachers"
}

@test "slurm: dp-pg's miniature under SLURM=1 gives the local results" {
	same_results dp-pg
}

@test "slurm: dp-vision's miniature (pixels) under SLURM=1 gives the local results" {
	same_results dp-vision
}

@test "slurm: a failing job stops make with its status and leaves no partial target" {
	run -2 --separate-stderr make -s -f "$TOP/tests/slurm/jobs.mk" OUT=o SLURM=1 o/fail.job
	assert [ ! -e o/fail.job ]
	[[ $stderr == *"Deleting file 'o/fail.job'"* ]] || fail "$stderr"
	# The same recipe as a job writes its target in Slurm (the failure's
	# side is real): a job id, no local run.
	run -0 make -s -f "$TOP/tests/slurm/jobs.mk" OUT=o SLURM=1 N=1
	run -0 cat o/1.job
	assert_output --regexp '^[0-9]+ 0$'
}

@test "slurm: TERM to make cancels its queued and running jobs" {
	local pid st=0 i
	# Two CPUs per job on the 2-CPU node: one runs, three wait.
	make -s -f "$TOP/tests/slurm/jobs.mk" OUT=o SLURM=1 SLURM_CPUS="$(nproc)" N=4 SLEEP=60 -j4 \
		> make.log 2>&1 3>&- &
	pid=$!
	for i in $(seq 100); do
		[ "$(squeue -h -t PD | wc -l)" -ge 3 ] && [ "$(squeue -h -t R | wc -l)" -ge 1 ] && break
		sleep 0.1
	done
	run -0 squeue -h
	[ "${#lines[@]}" -eq 4 ] || fail "not 4 jobs queued: $output"
	kill -TERM "$pid"
	wait "$pid" || st=$?
	[ "$st" -ne 0 ] || fail "make exited 0 after TERM"
	for i in $(seq 50); do
		[ -z "$(squeue -h)" ] && break
		sleep 0.2
	done
	run -0 squeue -h
	assert_output ""
	assert [ ! -e o/1.job ]
	run -0 bash -c 'ls o/*.job 2> /dev/null | wc -l'
	assert_output 0
}

@test "slurm: inside salloc the recipes are steps of the one allocation" {
	local before
	before=$(next_job)
	run -0 salloc -n2 --quiet make -s -f "$TOP/tests/slurm/jobs.mk" OUT=o SLURM=1 N=4 -j2
	[ $(($(next_job) - before)) -eq 1 ] || fail "more than one job"
	run -0 bash -c 'cut -d " " -f 1 o/*.job | sort -u | wc -l'
	assert_output 1
	run -0 bash -c 'cut -d " " -f 2 o/*.job | sort -u | wc -l'
	assert_output 4
}

@test "slurm: pipelines/slurm.sbatch makes an experiment as steps of one batch job" {
	local before f a b
	before=$(next_job)
	run -0 bash -c "cd '$TOP' && sbatch --wait --quiet -n2 -o '$BATS_TEST_TMPDIR/sb.out' pipelines/slurm.sbatch demo \
		OUT='$BATS_TEST_TMPDIR/out' B='$BIN'"
	[ $(($(next_job) - before)) -eq 1 ] || fail "more than one job: $(cat sb.out)"
	run -0 cat sb.out
	assert_output --partial usps
	for f in mnist usps; do
		a=$(digest out/$f.tns X) || fail "out/$f.tns: no X"
		b=$(digest "$BATS_FILE_TMPDIR/local/demo/out/$f.tns" X) || fail "$f: no X"
		[ "$a" = "$b" ] || fail "$f differs"
	done
	run -66 bash -c "cd '$TOP' && sbatch --wait --quiet -n1 -o '$BATS_TEST_TMPDIR/sb2.out' pipelines/slurm.sbatch no-such-exp"
	run -0 cat sb2.out
	assert_output --partial "no such experiment"
}
