# summarize.awk: the lines of runrow (one per run) to results.tsv, the
# common shape of every experiment's results (see README.md):
#   task method epsilon reps accuracy accuracy_sd eps_spent wall_s verdict
#   acc_private
# one line per task, method and epsilon in the order of their first run;
# accuracy the mean (percent) and accuracy_sd the sample standard
# deviation over the repeats (0 with one); eps_spent the largest accounted
# epsilon of each dataset over the repeats; wall_s the mean wall time of a
# run; verdict "private" only when every repeat is; acc_private "no" when
# some repeat's accuracy was computed on rows of a protected dataset (NOT
# private: runrow), else "yes".
BEGIN { FS = OFS = "\t" }

NF != 9 {
	printf "summarize.awk: %s:%d: %d fields, not 9\n", FILENAME, FNR, NF > "/dev/stderr"
	bad = 1
	exit 1
}

{
	k = $1 SUBSEP $2 SUBSEP $3
	if (!(k in n))
		order[++nk] = k
	n[k]++
	s[k] += $5
	ss[k] += $5 * $5
	w[k] += $7
	if ($8 != "private" && !(k in v))
		v[k] = $8
	if ($9 != "yes")
		accno[k] = 1
	m = split($6, part, ",")
	for (i = 1; i <= m; i++) {
		split(part[i], dv, "=")
		if (!((k, dv[1]) in e)) {
			ds[k] = ds[k] (ds[k] == "" ? "" : SUBSEP) dv[1]
			e[k, dv[1]] = dv[2]
		} else if (dv[2] == "-" || e[k, dv[1]] != "-" && dv[2] + 0 > e[k, dv[1]] + 0)
			e[k, dv[1]] = dv[2]
	}
}

END {
	if (bad)
		exit 1
	print "task", "method", "epsilon", "reps", "accuracy", "accuracy_sd",
	    "eps_spent", "wall_s", "verdict", "acc_private"
	for (i = 1; i <= nk; i++) {
		k = order[i]
		split(k, f, SUBSEP)
		mean = s[k] / n[k]
		var = n[k] > 1 ? (ss[k] - n[k] * mean * mean) / (n[k] - 1) : 0
		m = split(ds[k], d, SUBSEP)
		spent = ""
		for (j = 1; j <= m; j++)
			spent = spent (j > 1 ? "," : "") d[j] "=" e[k, d[j]]
		printf "%s\t%s\t%s\t%d\t%.2f\t%.2f\t%s\t%.2f\t%s\t%s\n", f[1], f[2], f[3],
		    n[k], mean, sqrt(var > 0 ? var : 0), spent, w[k] / n[k],
		    (k in v) ? v[k] : "private", (k in accno) ? "no" : "yes"
	}
}
