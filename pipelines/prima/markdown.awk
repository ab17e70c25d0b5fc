# markdown.awk: results.md from the data's README.md (for the published
# accuracies) and results.tsv (summarize.awk).  -v eps: the epsilons in
# column order ("np" is the non-private reference); -v delta, -v reps and
# -v params (NAME=VALUE ...) describe the run.
BEGIN { FS = "\t"; OFS = "\t" }

# The README's tables: a header "| | A→C | A→D | ..." and rows "| NAME | ...".
FNR == NR {
	if ($0 !~ /^\|/)
		next
	nf = split($0, c, "|")
	for (i = 2; i < nf; i++)
		gsub(/^ +| +$/, "", c[i])
	if (c[2] == "") {
		for (i = 3; i < nf; i++)
			col[i] = c[i]
	} else if (c[2] ~ /^NN \(JDA/ || c[2] ~ /^CORAL \(AAAI/) {
		ref = (c[2] ~ /^NN/) ? "nn" : "coral"
		for (i = 3; i < nf; i++)
			pub[ref, col[i]] = c[i]
	}
	next
}

FNR == 1 { next }

{
	k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4
	acc[k] = $6; sd[k] = $7; es[k] = $8; et[k] = $9; verdict[k] = $10
	if (!(($2, $3) in istask)) {
		istask[$2, $3] = 1
		task[++nt] = $2 SUBSEP $3
	}
	if (!($2 in isdom)) { isdom[$2] = 1; dom[++nd] = $2 }
	if (!($3 in isdom)) { isdom[$3] = 1; dom[++nd] = $3 }
	nreps = $5
}

function label(s, t) {
	return toupper(substr(s, 1, 1)) "→" toupper(substr(t, 1, 1))
}

function head(e) { return e == "np" ? "σ = 0 (NOT private)" : "ε = " e }

function table(m, title,    i, j, st, line, sum, cnt, p, havepub) {
	printf "## %s\n\n", title
	line = "| task |"
	for (j = 1; j <= ne; j++)
		line = line " " head(e[j]) " |"
	print line " CORAL (published) | NN (published) |"
	line = "|---|"
	for (j = 1; j <= ne + 2; j++)
		line = line "---:|"
	print line
	for (i = 1; i <= nt; i++) {
		split(task[i], st, SUBSEP)
		line = "| " label(st[1], st[2]) " |"
		for (j = 1; j <= ne; j++) {
			k = m SUBSEP st[1] SUBSEP st[2] SUBSEP e[j]
			line = line sprintf(" %.1f ± %.1f |", acc[k], sd[k])
			sum[j] += acc[k]
		}
		for (p = 1; p <= 2; p++) {
			r = p == 1 ? "coral" : "nn"
			if ((r, label(st[1], st[2])) in pub) {
				line = line " " pub[r, label(st[1], st[2])] " |"
				sum[ne + p] += pub[r, label(st[1], st[2])]
				cnt[p]++
			} else
				line = line " |"
		}
		print line
	}
	line = "| **mean** |"
	for (j = 1; j <= ne; j++)
		line = line sprintf(" **%.1f** |", sum[j] / nt)
	for (p = 1; p <= 2; p++)
		line = line (cnt[p] == nt ? sprintf(" %.1f |", sum[ne + p] / nt) : " |")
	print line
	print ""
}

function maxe(a, b) {
	if (a == "" || a == "-")
		return b
	if (b == "-" || b == "")
		return a
	return (b + 0 > a + 0) ? b : a
}

END {
	ne = split(eps, e, " ")
	print "# PRIMA on Office-Caltech10 (SURF, 800-d): results"
	print ""
	print "Written by `make -C pipelines/prima` (`make run`); do not edit."
	printf "Accuracy (%%) of a multinomial logistic regression on all rows of the target domain, "
	printf "mean ± standard deviation over %d repeat(s) with fresh noise. ", nreps
	printf "Each dataset's budget is (ε, %s); the source splits it between its covariance and ", delta
	print "the classifier, the target spends it on its covariance."
	printf "The column σ = 0 is the same pipeline without noise: **NOT private** "
	print "(for PRIMA, it is non-private CORAL; for no adaptation, a plain logistic regression)."
	print ""
	print "Parameters (params.mk): " params "."
	print ""
	print "Published references, from `data/office-caltech10-surf/README.md` (non-private, other protocols: "
	print "per-domain z-scored features, linear SVM or 1-NN): CORAL = Sun, Feng and Saenko, AAAI 2016, "
	print "Table 1 (via a compilation); NN = Long et al., ICCV 2013 (JDA), Table 2."
	print ""
	table("prima", "PRIMA: DP covariances (random subspaces, shrinking), CORAL, DP-SGD")
	table("noadapt", "No adaptation: DP-SGD on the raw source")
	printf "## Privacy spent, as accounted by `rdp-account ledger` (δ = %s)\n\n", delta
	print "The largest epsilon over tasks and repeats, per dataset and role. Every run's ledger "
	print "was checked with `--budget ε` by make, so no run overspent."
	print ""
	print "| ε asked | dataset | PRIMA, as source | PRIMA, as target | no adaptation, as source |"
	print "|---:|---|---:|---:|---:|"
	for (j = 1; j <= ne; j++) {
		for (d = 1; d <= nd; d++) {
			ps = pt = na = "-"
			src = tgt = 0
			for (i = 1; i <= nt; i++) {
				split(task[i], st, SUBSEP)
				k = "prima" SUBSEP st[1] SUBSEP st[2] SUBSEP e[j]
				n2 = "noadapt" SUBSEP st[1] SUBSEP st[2] SUBSEP e[j]
				if (st[1] == dom[d]) {
					src = 1
					ps = maxe(ps, es[k])
					na = maxe(na, es[n2])
				}
				if (st[2] == dom[d]) {
					tgt = 1
					pt = maxe(pt, et[k])
				}
			}
			if (e[j] == "np") {
				ps = na = src ? "NOT private" : "-"
				pt = tgt ? "NOT private" : "-"
			}
			printf "| %s | %s | %s | %s | %s |\n", e[j] == "np" ? "σ = 0" : e[j],
			    dom[d], ps, pt, na
		}
	}
}
