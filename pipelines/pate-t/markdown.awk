# markdown.awk: results.md, the table of results.tsv (columns found by
# their names in its header) with paper 004's
# Table 1 (paper004-table1.tsv) as the reference shape.  Variables: delta,
# reps, share, students, params (a line of the hyperparameters).
BEGIN {
	FS = "\t"
	n = split(students, S, " ")
	slist = ""
	for (i = 1; i <= n; i++)
		slist = slist (i > 1 ? ", " : "") "`" S[i] "`"
}
function pct(v) { return v == "-" ? "-" : sprintf("%.1f", 100 * v) }
FILENAME ~ /paper004/ {
	if ($0 ~ /^#/ || $1 == "dataset")
		next
	pr[++npr] = "| " $1 " | " $2 " | " $3 " | " $4 " | " $5 " | " $6 " |"
	next
}
function notp(v) { return v == "yes" ? "" : " **NOT private**" }
FNR == 1 {
	for (i = 1; i <= NF; i++)
		c[$i] = i
	if ($1 != "task" || !("data_dependent_released" in c) ||
	    !("acc_private" in c)) {
		print "markdown.awk: " FILENAME ": not pate-t's results.tsv" > "/dev/stderr"
		bad = 1
		exit 1
	}
	next
}
{ row[++nr] = $0 }
END {
	if (bad)
		exit 1
	print "# PATE-T: MNIST teachers, USPS student"
	print ""
	printf "Teachers trained without privacy on disjoint parts of 10,000 MNIST " \
	    "digits (16x16) label %s USPS queries through `teacher-vote`; each " \
	    "student (%s) learns from the same released labels and is tested on " \
	    "the held-out USPS rows: `classify` is logistic regression on the " \
	    "labelled queries, `assoc` an MLP trained by associative domain " \
	    "adaptation (`dpsgd-train --mode assoc`) with the training half of " \
	    "USPS as unlabelled target (it leaves out the queries confident " \
	    "GNMax did not answer, which it still sees as target rows).  " \
	    "Epsilon: the guarantee for MNIST at delta = %s that the student's " \
	    "ledger carries (`rdp-account ledger --public usps`): the " \
	    "data-independent bound, plus the cost of the smooth-sensitivity " \
	    "release where there is one; the same in every repeat.  " \
	    "Data-dependent epsilon: the sanitised data-dependent bound " \
	    "(Papernot et al. 2018) released with smooth sensitivity " \
	    "(`teacher-vote --data-dependent`), mean over the repeats, an " \
	    "estimate with noise, NOT a guarantee; `released` says in how many " \
	    "repeats teacher-vote could release it (it refuses when the bound " \
	    "can never beat the data-independent one for that many teachers).  " \
	    "Accuracies are means over %s repeats (fresh vote noise each; sd " \
	    "over the repeats).  Rows without an epsilon are NOT private for " \
	    "MNIST.  Student accuracies marked NOT private are computed without " \
	    "privacy on test rows of a dataset not declared public (results.tsv " \
	    "acc_private).\n\n", share, slist, delta, reps
	print "| teachers | mechanism | noise | student | epsilon (guarantee) | data-dependent epsilon (sanitised) | released | answered | label acc. % | student acc. % (sd) | mean teacher acc. % | wall s |"
	print "|---|---|---|---|---|---|---|---|---|---|---|---|"
	for (i = 1; i <= nr; i++) {
		split(row[i], f, "\t")
		e = f[c["epsilon"]]
		if (e == "-")
			e = (f[c["verdict"]] == "-") ? "(no MNIST)" : "NOT private"
		else if (f[c["mechanism"]] == "no-teachers-dpsgd")
			e = e " (ledger: " f[c["eps_spent"]] ")"
		printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s (%s)%s | %s | %s |\n",
		    f[c["teachers"]], f[c["mechanism"]], f[c["noise"]], f[c["student"]], e,
		    f[c["epsilon_data_dependent"]], f[c["data_dependent_released"]],
		    f[c["answered"]], pct(f[c["label_acc"]]), f[c["accuracy"]],
		    f[c["accuracy_sd"]], notp(f[c["acc_private"]]),
		    pct(f[c["teacher_acc"]]), f[c["wall_s"]]
	}

	print ""
	print "Baselines: `no-teachers` trains one model on all 10,000 labelled " \
	    "MNIST digits (without privacy, or by DP-SGD at the given epsilon) " \
	    "and tests it on the same USPS rows; `usps-true-labels` trains the " \
	    "student on the queries' true labels (the ceiling of the student " \
	    "with perfect teachers); `exact` is the noiseless plurality vote."
	print ""
	print "Hyperparameters: " params
	print ""
	print "## Paper 004, Table 1 (reference shape, not a like-for-like target)"
	print ""
	print "Its epsilon is the per-query Laplace parameter (noise Lap(1/epsilon) " \
	    "on each count, teacher-vote's gamma), not a total cost; MNIST rows " \
	    "are MNIST teachers with an MNIST-M student, SVHN rows SVHN " \
	    "teachers with an MNIST student, with convolutional networks."
	print ""
	print "| dataset | per-query epsilon | share | non-private % | PATE-T % | PATE-G % |"
	print "|---|---|---|---|---|---|"
	for (i = 1; i <= npr; i++)
		print pr[i]
}
