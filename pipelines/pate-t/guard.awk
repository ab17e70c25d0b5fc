# guard.awk: the budget check of one student model, on the output of
# rdp-account ledger --budget --format tsv (passed through unchanged).
#
# The student is trained without privacy on USPS, the public domain, so
# its stream is marked dp.raw.usps = aggregate and rdp-account --budget
# exits 1 for usps whatever MNIST spent: the ledger has no way to declare
# a dataset public.  This script accepts a not_private verdict only for
# the datasets of -v public (a list), and requires the -v protected one
# to be "private" (within the budget rdp-account checked).  With -v np=1
# (the exact vote, NOT private by design) it only passes the table on.
BEGIN {
	FS = OFS = "\t"
	n = split(public, P, " ")
	for (i = 1; i <= n; i++)
		pub[P[i]] = 1
}
NR == 1 {
	if ($1 != "dataset" || $11 != "verdict") {
		print "guard.awk: not an rdp-account ledger table" > "/dev/stderr"
		bad = 1
		exit 1
	}
	print
	next
}
{
	print
	seen[$1] = 1
	if (np)
		next
	if ($1 == protected && $11 != "private") {
		printf "guard.awk: %s: %s\n", $1, $12 > "/dev/stderr"
		bad = 1
	} else if ($1 != protected && !($1 in pub) && $11 != "private") {
		printf "guard.awk: %s (not declared public): %s\n", $1, $12 > "/dev/stderr"
		bad = 1
	}
}
END {
	if (!bad && !np && !(protected in seen)) {
		printf "guard.awk: no release for %s\n", protected > "/dev/stderr"
		bad = 1
	}
	exit bad
}
