#!/usr/bin/env bats
# pipelines/plot and plot.gp (issue 15, plots) on hand-written results
# tables.  Fails on e565835 (the main issue 15 started from): legends
# carried the raw method names (noadapt, gmmuda), the error bars were
# the bare sd whatever the repeats, the y range was gnuplot's autoscale
# plus 5% (above 100% for accuracies near 100), a one-point series was
# a line plot of one point, dp-pg drew epsilon per parameter and per
# record on one axis, and plot took no -x/-p nor PLOT_KEEP.

load test_helper

PLOT="$TOP/pipelines/plot"

setup() {
	T=$BATS_TEST_TMPDIR
	printf 'task\tmethod\tepsilon\treps\taccuracy\taccuracy_sd\n' > "$T/r.tsv"
	{
		printf 'a->b\tnoadapt\t-\t3\t97.00\t1.00\n'
		printf 'a->b\tgmmuda\t1\t3\t95.00\t2.00\n'
		printf 'a->b\tgmmuda\t4\t3\t99.50\t3.00\n'
		printf 'c->d\tgmmuda\t1\t3\t96.00\t2.00\n'
		printf 'c->d\tgmmuda\t4\t3\t99.00\t1.00\n'
		printf 'a->b\tprima\t2\t3\t98.00\t0.50\n'
	} >> "$T/r.tsv"
}

@test "plot: human names, 95% error bars, a y range within [0, 100], a one-point series as points" {
	PLOT_KEEP="$T/k" run -0 "$PLOT" "$T/r.tsv" "$T/acc" "a title"
	[ -s "$T/acc.png" ] && [ -s "$T/acc.svg" ]
	# Human names in the legend, not the method ids.
	grep -qF '>GMM-UDA (paper 003)<' "$T/acc.svg"
	grep -qF '>no adaptation (not private)<' "$T/acc.svg"
	grep -qF '>PRIMA (paper 001)<' "$T/acc.svg"
	run -1 grep -e '>gmmuda<' -e '>noadapt' "$T/acc.svg"
	# Error bars: 1.96 sd / sqrt(3) per task, averaged over the tasks.
	run -0 sed -n '/^# gmmuda/,/^$/p' "$T/k/data"
	assert_line --index 1 "1 95.5000 2.2632"
	assert_line --index 2 "4 99.2500 2.2632"
	run -0 grep -F 'error bars: 95% interval over the repeats' "$T/k/vars.gp"
	# The y range fits the data, capped at 100.
	run -0 grep '^ylo' "$T/k/vars.gp"
	assert_output "ylo = 92.24; yhi = 100.00"
	# gmmuda (two epsilons) is a line with bars, prima (one) bars only.
	run -0 grep '^styles1' "$T/k/vars.gp"
	assert_output 'styles1 = "yerrorlines yerrorbars"'
	run -0 grep '^nblocks2' "$T/k/vars.gp"
	assert_output 'nblocks2 = 0; blocks2 = ""'
}

@test "plot -p: two kinds of epsilon in two panels, never on one axis" {
	PLOT_KEEP="$T/k" run -0 "$PLOT" -x "per record" -p "prima=per parameter" \
		"$T/r.tsv" "$T/acc" "a title"
	run -0 grep -e '^nblocks' -e '^xlabel' "$T/k/vars.gp"
	assert_line 'nblocks1 = 1; blocks1 = "0"'
	assert_line 'nblocks2 = 1; blocks2 = "1"'
	assert_line 'xlabel1 = "per record"; xlabel2 = "per parameter"'
	grep -qF '>per record<' "$T/acc.svg"
	grep -qF '>per parameter<' "$T/acc.svg"
}

@test "plot: one repeat gives sd bars; no private row is an error" {
	sed -i 's/\t3\t/\t1\t/' "$T/r.tsv"
	PLOT_KEEP="$T/k" run -0 "$PLOT" "$T/r.tsv" "$T/acc" "t"
	run -0 grep -F 'error bars: standard deviation' "$T/k/vars.gp"
	run -0 sed -n '/^# prima/,/^$/p' "$T/k/data"
	assert_line --index 1 "2 98.0000 0.5000"
	printf 'task\tmethod\tepsilon\treps\taccuracy\taccuracy_sd\nx\tnn\t-\t1\t50\t0\n' > "$T/np.tsv"
	run -1 --separate-stderr "$PLOT" "$T/np.tsv" "$T/acc" "t"
	[ "$stderr" = "plot: $T/np.tsv: no private rows to plot" ]
}
