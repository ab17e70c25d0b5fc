# markdown.awk: results.tsv (summarize.awk) to a Markdown report, one
# table per method: a row per task, a column per epsilon (mean ± the
# half-width of a 95% Student-t interval over the repeats), then the published numbers of -v refs, then a mean row,
# the largest epsilon accounted by rdp-account over the datasets and
# tasks, whether the accuracies are private (results.tsv acc_private: "no"
# when computed without privacy on rows of a protected dataset), and the
# mean wall time of a run.
#
#   awk -v title=T [-v stamp=S] [-v intro=FILE] [-v refs=FILE] [-v names=FILE] -f markdown.awk results.tsv
#
# stamp: the version and commit line (common.mk RESULT_STAMP), printed
# under the title.
# intro: Markdown copied after the title.  refs: tsv lines "task method
# label value" (method * for every method; lines starting with # skipped):
# a column "label" per distinct label.  names: tsv lines "method heading"
# (the table's heading; default the method's name).
BEGIN {
	FS = OFS = "\t"
	# t quantiles of 0.975 for 1 .. 30 degrees of freedom; 1.96 beyond.
	split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 " \
	    "2.201 2.179 2.160 2.145 2.131 2.120 2.110 2.101 2.093 2.086 " \
	    "2.080 2.074 2.069 2.064 2.060 2.056 2.052 2.048 2.045 2.042", tq, " ")
	if (refs != "") {
		while ((r = getline line < refs) > 0) {
			if (line ~ /^#/ || line == "")
				continue
			split(line, f, "\t")
			if (!(f[3] in isref)) {
				isref[f[3]] = 1
				reflab[++nref] = f[3]
			}
			ref[f[1], f[2], f[3]] = f[4]
		}
		if (r < 0) {
			printf "markdown.awk: cannot read %s\n", refs > "/dev/stderr"
			exit 2
		}
	}
	if (names != "")
		while ((getline line < names) > 0) {
			split(line, f, "\t")
			heading[f[1]] = f[2]
		}
}

NR == 1 {
	if ($1 != "task" || $5 != "accuracy" || $9 != "verdict") {
		print "markdown.awk: not a results.tsv" > "/dev/stderr"
		exit 2
	}
	next
}

{
	if (!($2 in ism)) { ism[$2] = 1; meth[++nm] = $2 }
	if (!($1 in ist)) { ist[$1] = 1; task[++nt] = $1 }
	if (!(($2, $3) in ise)) { ise[$2, $3] = 1; eps[$2, ++ne[$2]] = $3 }
	acc[$1, $2, $3] = $5
	sd[$1, $2, $3] = $6
	reps[$2, $3] = $4
	sum[$2, $3] += $5
	cnt[$2, $3]++
	wall[$2, $3] += $8
	if ($9 != "private")
		np[$2, $3] = 1
	if ($10 != "yes")
		accno[$2, $3] = 1
	m = split($7, part, ",")
	for (i = 1; i <= m; i++) {
		split(part[i], dv, "=")
		if (dv[2] != "-" && (!(($2, $3) in spent) || dv[2] + 0 > spent[$2, $3] + 0))
			spent[$2, $3] = dv[2]
	}
}

function half95(sd, n) { return (n > 31 ? 1.96 : tq[n - 1]) * sd / sqrt(n) }
function label(t) { gsub(/->/, "→", t); return t }
function mean_ref(mt, lab,    i, s, c, k) {
	for (i = 1; i <= nt; i++) {
		k = refof(task[i], mt, lab)
		if (k != "") { s += k; c++ }
	}
	return c ? sprintf("%.1f", s / c) : ""
}
function refof(t, mt, lab) {
	if ((t, mt, lab) in ref) return ref[t, mt, lab]
	if ((t, "*", lab) in ref) return ref[t, "*", lab]
	return ""
}
function used(mt, lab,    i) {
	for (i = 1; i <= nt; i++)
		if (refof(task[i], mt, lab) != "") return 1
	return 0
}

END {
	if (NR < 2)
		exit 2
	print "# " title
	print ""
	if (stamp != "") {
		print "_" stamp "; accuracy: mean ± half-width of the 95% interval over the repeats (Student t)._"
		print ""
	}
	if (intro != "") {
		while ((getline line < intro) > 0)
			print line
		print ""
	}
	for (a = 1; a <= nm; a++) {
		mt = meth[a]
		print "## " ((mt in heading) ? heading[mt] : mt)
		print ""
		h = "| task"; sep = "|---"
		for (j = 1; j <= ne[mt]; j++) {
			e = eps[mt, j]
			h = h " | " (e == "np" || e == "-" ? "σ = 0 or no DP (**NOT private**)" : "ε = " e)
			sep = sep "|---:"
		}
		nl = 0
		for (j = 1; j <= nref; j++)
			if (used(mt, reflab[j])) {
				lab[++nl] = reflab[j]
				h = h " | " reflab[j]
				sep = sep "|---:"
			}
		print h " |"
		print sep "|"
		for (i = 1; i <= nt; i++) {
			t = task[i]
			row = "| " label(t)
			any = 0
			for (j = 1; j <= ne[mt]; j++) {
				e = eps[mt, j]
				if ((t, mt, e) in acc) {
					any = 1
					row = row sprintf(" | %.1f", acc[t, mt, e]) \
					    (reps[mt, e] > 1 ? sprintf(" ± %.1f", half95(sd[t, mt, e], reps[mt, e])) : "")
				} else
					row = row " | "
			}
			if (!any)
				continue
			for (j = 1; j <= nl; j++)
				row = row " | " refof(t, mt, lab[j])
			print row " |"
		}
		row = "| **mean**"
		for (j = 1; j <= ne[mt]; j++)
			row = row sprintf(" | **%.1f**", sum[mt, eps[mt, j]] / cnt[mt, eps[mt, j]])
		for (j = 1; j <= nl; j++)
			row = row " | " mean_ref(mt, lab[j])
		print row " |"
		row = "| ε spent (largest protected dataset, rdp-account)"
		for (j = 1; j <= ne[mt]; j++) {
			e = eps[mt, j]
			row = row " | " ((mt, e) in np ? "NOT private" : \
			    ((mt, e) in spent ? sprintf("%.3g", spent[mt, e]) : "-"))
		}
		for (j = 1; j <= nl; j++)
			row = row " | "
		print row " |"
		row = "| accuracy private (rdp-account, predict)"
		for (j = 1; j <= ne[mt]; j++)
			row = row " | " ((mt, eps[mt, j]) in accno ? \
			    "**no**: computed on protected rows" : "yes")
		for (j = 1; j <= nl; j++)
			row = row " | "
		print row " |"
		row = "| wall s / run"
		for (j = 1; j <= ne[mt]; j++)
			row = row sprintf(" | %.2f", wall[mt, eps[mt, j]] / cnt[mt, eps[mt, j]])
		for (j = 1; j <= nl; j++)
			row = row " | "
		print row " |"
		print ""
	}
}
