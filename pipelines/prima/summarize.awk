# summarize.awk: runs.tsv (collect.awk) to results.tsv, one line per
# method, task and epsilon: the mean and the sample standard deviation of
# the accuracy (%) over the repeats, the largest accounted epsilon of the
# source and of the target over the repeats, and the verdict ("private"
# only when every repeat is).  Lines come in the order of -v tasks
# ("src:tgt ...") and -v eps ("0.5 1 ... np"), PRIMA first.
BEGIN { FS = OFS = "\t" }

NR == 1 { next }

{
	k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4
	n[k]++
	s[k] += 100 * $6
	ss[k] += (100 * $6) ^ 2
	es[k] = maxeps(es[k], $7)
	et[k] = maxeps(et[k], $8)
	if ($9 != "private")
		v[k] = $9
}

function maxeps(a, b) {
	if (a == "" || a == "-" && b != "-")
		return b
	if (b == "-")
		return a
	return (b + 0 > a + 0) ? b : a
}

END {
	print "method", "source", "target", "epsilon", "reps", "accuracy",
	    "accuracy_sd", "eps_source", "eps_target", "verdict"
	nt = split(tasks, t, " ")
	ne = split(eps, e, " ")
	nm = split("prima noadapt", m, " ")
	for (i = 1; i <= nm; i++)
		for (j = 1; j <= nt; j++)
			for (l = 1; l <= ne; l++) {
				split(t[j], st, ":")
				k = m[i] SUBSEP st[1] SUBSEP st[2] SUBSEP e[l]
				if (!(k in n)) {
					printf "summarize.awk: no run of %s %s %s\n",
					    m[i], t[j], e[l] > "/dev/stderr"
					exit 1
				}
				mean = s[k] / n[k]
				var = n[k] > 1 ? (ss[k] - n[k] * mean ^ 2) / (n[k] - 1) : 0
				printf "%s\t%s\t%s\t%s\t%d\t%.2f\t%.2f\t%s\t%s\t%s\n",
				    m[i], st[1], st[2], e[l], n[k], mean,
				    sqrt(var > 0 ? var : 0), fmt(es[k]), fmt(et[k]),
				    (k in v) ? v[k] : "private"
			}
}

function fmt(x) { return x == "-" ? x : sprintf("%.4g", x) }
