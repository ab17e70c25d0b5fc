# row.awk: one line of results.tsv from predict's TSV report (the first
# file) and the .sec files of the method's stages (the others, summed).
# -v s, t, m, e (epsilon or "-"), spent (the ledger's epsilon or "-").
BEGIN { OFS = "\t" }
FNR == 1 { nf++ }
nf == 1 && $1 == "all" { acc = $2 }
nf > 1 { sec += $1 }
END {
	if (acc == "") {
		print "row.awk: no 'all' row in " ARGV[1] > "/dev/stderr"
		exit 1
	}
	print s, t, m, e, acc, (spent == "" ? "-" : spent), sprintf("%.1f", sec)
}
