# collect.awk: one line per run of the PRIMA experiment, from the files
# predict --report-format tsv and rdp-account ledger --format tsv wrote.
# Their names carry the run: pred/METHOD-SRC-TGT-EPS-rREP.report.tsv,
# ledger/prima-SRC-TGT-EPS-rREP.tsv and ledger/noadapt-SRC-EPS-rREP.tsv.
# Output (tsv, with a header): method source target epsilon rep accuracy
# eps_source eps_target verdict, where eps_* are the accounted epsilons
# ("-" for a dataset the method does not touch or that is not private) and
# verdict is "private" when every dataset of the run is.
BEGIN { FS = OFS = "\t" }

FNR == 1 {
	base = FILENAME
	sub(/.*\//, "", base)
	kind = sub(/\.report\.tsv$/, "", base) ? "report" : "ledger"
	sub(/\.tsv$/, "", base)
	n = split(base, f, "-")
	if (f[1] == "noadapt" && kind == "ledger") {
		f[5] = f[4]; f[4] = f[3]; f[3] = ""; n++
	}
	if (n != 5 || f[5] !~ /^r[0-9]+$/) {
		printf "collect.awk: %s: unexpected file name\n", FILENAME > "/dev/stderr"
		bad = 1
		exit 1
	}
	method = f[1]; src = f[2]; tgt = f[3]; eps = f[4]; rep = substr(f[5], 2)
	key = method SUBSEP src SUBSEP tgt SUBSEP eps SUBSEP rep
	if (kind == "report") {
		order[++nruns] = key
		run[key] = method OFS src OFS tgt OFS eps OFS rep
	}
	next
}

kind == "report" && $1 == "all" { acc[key] = $2 }

kind == "ledger" && $1 != "dataset" {
	lkey = method SUBSEP src SUBSEP eps SUBSEP rep
	if (method == "prima")
		lkey = lkey SUBSEP tgt
	leps[lkey, $1] = ($11 == "private") ? $3 : "-"
	if ($11 != "private" && !((lkey) in lverdict))
		lverdict[lkey] = $11
	seen[lkey] = 1
}

END {
	if (bad)
		exit 1
	print "method", "source", "target", "epsilon", "rep", "accuracy",
	    "eps_source", "eps_target", "verdict"
	for (i = 1; i <= nruns; i++) {
		split(order[i], k, SUBSEP)
		lkey = k[1] SUBSEP k[2] SUBSEP k[4] SUBSEP k[5]
		if (k[1] == "prima")
			lkey = lkey SUBSEP k[3]
		if (!(order[i] in acc) || !(lkey in seen)) {
			printf "collect.awk: run %s %s-%s eps %s rep %s: no %s\n",
			    k[1], k[2], k[3], k[4], k[5],
			    (order[i] in acc) ? "ledger" : "accuracy" > "/dev/stderr"
			exit 1
		}
		es = ((lkey, k[2]) in leps) ? leps[lkey, k[2]] : "-"
		et = (k[1] == "prima" && (lkey, k[3]) in leps) ? leps[lkey, k[3]] : "-"
		print run[order[i]], acc[order[i]], es, et,
		    (lkey in lverdict) ? lverdict[lkey] : "private"
	}
}
