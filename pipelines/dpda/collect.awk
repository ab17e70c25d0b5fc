# collect.awk: the target accuracy of each model, from predict's TSV
# reports out/<source>-<target>/<method>[-e<epsilon>].acc, as one table:
# source, target, method, epsilon ("-" without privacy), accuracy.
BEGIN {
	OFS = "\t"
	print "source", "target", "method", "epsilon", "accuracy"
}
FNR == 1 {
	n = split(FILENAME, part, "/")
	split(part[n - 1], pair, "-")
	method = part[n]
	sub(/\.acc$/, "", method)
	eps = "-"
	if (match(method, /-e[0-9.]+$/)) {
		eps = substr(method, RSTART + 2)
		method = substr(method, 1, RSTART - 1)
	}
}
$1 == "all" {
	print pair[1], pair[2], method, eps, $2
	nfound++
}
END {
	if (nfound != ARGC - 1) {
		print "collect.awk: a report has no 'all' row" > "/dev/stderr"
		exit 1
	}
}
