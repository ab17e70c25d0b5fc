#!/usr/bin/env bash
# Called by tests/bench/run with a scratch directory as $1 (from the top of
# the tree): the speed of one subsampled-Gaussian epsilon query (q = 0.01,
# sigma = 1.1, 10000 steps, delta = 1e-5, the 156 default orders), as a
# fresh process and in process.  Ratios are taken only against baselines
# measured here, in this run; the peer figures are quoted as context.
set -euo pipefail
W=${1:?usage: rdp.sh scratch-dir}
B=build/bin
N=${BENCH_RDP_RUNS:-200}
QUERY=(sgm --q 0.01 --sigma 1.1 --steps 10000 --delta 1e-5)

# runs_ms CMD...: wall milliseconds per run of N fresh runs of CMD, the
# best of 3 batches (the machine is shared).
runs_ms() {
	local t0 t1 best=
	for _ in 1 2 3; do
		t0=$(date +%s.%N)
		for ((i = 0; i < N; i++)); do
			"$@" > /dev/null
		done
		t1=$(date +%s.%N)
		best=$(awk -v a="$t0" -v b="$t1" -v n="$N" -v m="$best" \
			'BEGIN { d = (b - a) * 1000 / n; printf "%.3f", (m == "" || d < m) ? d : m }')
	done
	echo "$best"
}

echo "== rdp-account: one sgm epsilon query (q 0.01, sigma 1.1, 10000 steps, delta 1e-5)"
t_acct=$(runs_ms "$B/rdp-account" "${QUERY[@]}")
t_true=$(runs_ms /bin/true)
printf '%-52s %9s ms\n' "rdp-account, fresh process (best of 3 x $N runs)" "$t_acct"
printf '%-52s %9s ms\n' "baseline: /bin/true, fresh process" "$t_true"
printf '%-52s %9s\n' "ratio rdp-account / /bin/true" \
	"$(awk -v a="$t_acct" -v b="$t_true" 'BEGIN { printf "%.3f", a / b }')"
if [ -x /usr/bin/python3 ]; then
	t_py=$(runs_ms /usr/bin/python3 -c pass)
	printf '%-52s %9s ms\n' "baseline: python3 -c pass, fresh process" "$t_py"
	printf '%-52s %9s\n' "ratio rdp-account / python3 -c pass" \
		"$(awk -v a="$t_acct" -v b="$t_py" 'BEGIN { printf "%.3f", a / b }')"
fi
# In process: the hidden --repeat runs the whole computation (accountant,
# RDP at every order, conversion) many times and reports CPU time per run.
"$B/rdp-account" --repeat 2000 "${QUERY[@]}" > "$W/rdp.out" 2> "$W/rdp.err"
cpu=$(sed -n 's/.*: \([0-9.]*\) ms CPU each$/\1/p' "$W/rdp.err")
printf '%-52s %9s ms\n' "rdp-account, in process (CPU, mean of 2000)" "$cpu"
printf '%-52s %s\n' "epsilon" "$(sed -n 's/^epsilon \([^ ]*\) .*RDP.*/\1/p' "$W/rdp.out")"
cat <<'EOF'
context, measured by tests/data/accounting/README.md on this class of
machine (not in this run, so no ratio is taken against them):
  dp_accounting RdpAccountant   15.3 ms in process, 0.251 s fresh process
  Opacus RDPAccountant           7.4 ms in process, 0.189 s fresh process
EOF
