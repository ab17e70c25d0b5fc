# collect.awk: results.tsv, one row per method, from the per-method files
# out/acc/M.tsv (predict's TSV report), out/mia/M.tsv (mia-eval's TSV
# report), out/ledger/M.tsv (rdp-account ledger --format tsv) and
# out/time/M.s (wall seconds).  -v methods: the method names in row order.
# Columns: the common shape of pipelines/README.md, task method epsilon
# reps accuracy accuracy_sd eps_spent wall_s verdict (task "fmnist";
# method single, all, dpsgd, dp-pg, dpsgd-matched; epsilon the one its
# tool was given, "-" for none: kde-publish's is per parameter,
# dpsgd-matched's the dp-pg epsilon it matches; one repeat: sd 0;
# eps_spent dataset=epsilon of the ledger, "dataset=-" when not private;
# verdict the ledger's; acc_private "no" when predict's report names raw
# marks of the test rows: the accuracy is computed without privacy on
# records of a protected dataset), then: epsilon_record, the record-level epsilon
# of the ledger at the pipeline's delta ("inf" when rdp-account's
# verdict is not "private"); neighbours, the ledger's neighbouring
# relation (add_remove, replace_one, none); the loss attack's AUC,
# two-fold, best (in-sample) and mean-loss (Yeom) balanced accuracies,
# the largest two-fold accuracy of a class and that class (paper 002's
# figure 12 is per class).
BEGIN { FS = "\t"; OFS = "\t" }
FNR == 1 {
	n = split(FILENAME, p, "/")
	kind = p[n - 1]
	m = p[n]
	sub(/\.(tsv|s)$/, "", m)
	seen[kind, m] = 1
}
kind == "acc" && FNR == 1 { accraw[m] = $NF == "raw" }
kind == "acc" && $1 == "all" { acc[m] = $2; accp[m] = accraw[m] && $NF == "-" ? "yes" : "no" }
kind == "mia" && $2 == "all" {
	auc[m] = $7; best[m] = $8; half[m] = $9; mean[m] = $10
}
kind == "mia" && $2 ~ /^[0-9]+$/ && $9 != "-" && (!((m) in cmax) || $9 + 0 > cmax[m] + 0) {
	cmax[m] = $9; cwhich[m] = $2
}
kind == "ledger" && FNR == 2 {
	if ($11 == "private") eps[m] = $3
	else eps[m] = "inf"
	verdict[m] = $11
	nb[m] = $7
}
kind == "ledger" && FNR > 1 {
	spent[m] = spent[m] (spent[m] == "" ? "" : ",") $1 "=" \
	    ($11 == "private" ? sprintf("%.4g", $3) : "-")
	if ($11 != "private" && !(m in vfirst))
		vfirst[m] = $11
}
kind == "time" { wall[m] = $1 }
END {
	print "task", "method", "epsilon", "reps", "accuracy", "accuracy_sd",
	    "eps_spent", "wall_s", "verdict", "acc_private", "epsilon_record",
	    "neighbours",
	    "mia_auc", "mia_acc_half", "mia_acc_best", "mia_acc_mean", \
	    "mia_acc_half_max_class", "max_class"
	n = split(methods, M, " ")
	for (i = 1; i <= n; i++) {
		m = M[i]
		for (k = 1; k <= 4; k++) {
			split("acc mia ledger time", K, " ")
			if (!((K[k], m) in seen)) {
				printf "collect.awk: no %s file for %s\n", K[k], m > "/dev/stderr"
				exit 1
			}
		}
		if (acc[m] == "" || auc[m] == "" || verdict[m] == "") {
			printf "collect.awk: incomplete reports for %s\n", m > "/dev/stderr"
			exit 1
		}
		name = m; given = "-"
		if (m ~ /^dpsgd-e/) { name = "dpsgd"; given = substr(m, 8) }
		else if (m ~ /^kde-e/) { name = "dp-pg"; given = substr(m, 6) }
		else if (m ~ /^dpsgd-kde/) { name = "dpsgd-matched"; given = substr(m, 10) }
		print "fmnist", name, given, 1, sprintf("%.2f", 100 * acc[m]), "0.00",
		    spent[m], sprintf("%.2f", wall[m]),
		    (m in vfirst) ? vfirst[m] : "private", accp[m], eps[m], nb[m], auc[m],
		    half[m], best[m], mean[m], cmax[m], cwhich[m]
	}
}
