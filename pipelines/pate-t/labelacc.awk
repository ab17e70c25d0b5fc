# labelacc.awk: the accuracy of released labels against the true ones.
# Input: lines "released<TAB>true" (paste of the two y columns, one query
# a line; -1 = unanswered).  Output (tsv, with a header): queries,
# answered, correct, label_acc (correct / answered; "-" if none answered).
BEGIN { FS = OFS = "\t" }
NF != 2 || $1 == "" || $2 == "" {
	printf "labelacc.awk: line %d: expected two labels\n", NR > "/dev/stderr"
	bad = 1
	exit 1
}
{
	q++
	if ($1 != -1) {
		a++
		c += ($1 == $2)
	}
}
END {
	if (bad)
		exit 1
	if (q == 0) {
		print "labelacc.awk: no queries" > "/dev/stderr"
		exit 1
	}
	print "queries", "answered", "correct", "label_acc"
	print q, a + 0, c + 0, a ? sprintf("%.6f", c / a) : "-"
}
