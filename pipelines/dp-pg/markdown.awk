# markdown.awk: results.md from results.tsv (collect.awk).  -v m, delta,
# resize, have_kde (1 or 0), sgd_eps_max, kde_opts, part_opts, sgd_opts and all_opts
# describe the run.
function f3(v) { return (v == "-" || v == "") ? "–" : sprintf("%.3f", v) }
function eps(v) {
	if (v == "inf") return "∞ (not private)"
	return (v + 0 >= 100) ? sprintf("%.0f", v) : sprintf("%.3g", v)
}
function nbr(v) {
	return v == "replace_one" ? " (replace one)" : v == "add_remove" ? \
	    " (add/remove)" : ""
}
BEGIN { FS = "\t" }
NR == 1 {
	if ($1 != "task" || $10 != "acc_private" || $11 != "epsilon_record" || $13 != "mia_auc") {
		print "markdown.awk: " FILENAME ": not dp-pg's results.tsv" > "/dev/stderr"
		exit 1
	}
	next
}
{ row[++n] = $0 }
END {
	print "# dp-pg: DP-PG (paper 002) on Fashion-MNIST, with membership inference"
	print ""
	if (stamp != "") {
		print "_" stamp "_"
		print ""
	}
	printf "M = %d logistic-regression models on disjoint partitions of the " \
	    "training rows (images %s); test accuracy on the test split; " \
	    "membership inference by `mia-eval --attack loss` (members: the " \
	    "training rows, partition 0's for *single*; non-members: the test " \
	    "rows); ε of `rdp-account ledger` at δ = %s.\n\n", m,
	    resize == "" ? "28x28" : resize, delta
	print "| method | ε given | ε (ledger) | test acc. | test acc. private | MIA AUC | MIA acc. (2-fold) | MIA acc. (best, in-sample) | MIA acc. (Yeom) | MIA acc. (2-fold), most exposed class | wall s |"
	print "|---|---|---|---|---|---|---|---|---|---|---|"
	for (i = 1; i <= n; i++) {
		split(row[i], c, "\t")
		printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s (class %s) | %s |\n",
		    c[2], c[3] == "-" ? "–" : c[3], eps(c[11]) nbr(c[12]), f3(c[5] / 100),
		    c[10] == "yes" ? "yes" : "**no** (test rows of a protected dataset)",
		    f3(c[13]), f3(c[14]), f3(c[15]), f3(c[16]), f3(c[17]), c[18], c[8]
	}
	print ""
	print "*single*: partition 0's model (non-private); *all*: one model on " \
	    "all training rows (non-private); *dpsgd*: DP-SGD on all rows at " \
	    "the record-level ε given; *dp-pg*: `kde-publish -e` ε_j (per " \
	    "parameter, paper eq. 6) over the M models, whose ledger holds the " \
	    "composed total; *dpsgd-matched*: DP-SGD at that total (ε given: " \
	    "the dp-pg ε_j it matches; " \
	    "run at most at ε = " sgd_eps_max ", with the exact noise sampler). MIA accuracies are balanced, " \
	    "(TPR + TNR) / 2; 0.5 is guessing; the most exposed class is " \
	    "the largest of ten noisy estimates, so it is biased upward " \
	    "(about two standard errors under no leakage). The neighbouring " \
	    "relations differ: kde-publish's guarantee is for replacing one " \
	    "record (it changes one model of the collection), DP-SGD's for " \
	    "adding or removing one; an add/remove ε gives at most 2ε for " \
	    "replace-one, so the matched DP-SGD is, if anything, favoured by " \
	    "at most a factor 2 in ε. Wall time of dp-pg: the M " \
	    "trainings plus publishing."
	if (have_kde != 1) {
		print ""
		print "**kde-publish was not in the build directory: the dp-pg and " \
		    "dpsgd-matched rows are missing.**"
	}
	print ""
	print "Options: models `" part_opts "`; all `" all_opts "`; DP-SGD `" \
	    sgd_opts "`; kde-publish `" kde_opts "`."
}
