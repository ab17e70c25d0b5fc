# adapt.awk: does adaptation pay under DP?  Reads results.tsv (the common
# shape, pipelines/README.md) and alpha.tsv (file block alpha: psdshrink's
# choice for every block of every DP covariance, file names
# DS-DOMAIN-{src,tgt}[-to-T]-EPS-rREP) and writes a Markdown section: per
# dataset and epsilon, PRIMA minus no adaptation (mean over the tasks, and
# on how many tasks PRIMA is ahead), and the shrinkage chosen (median and
# the share of blocks at alpha = 1, the diagonal target alone), then a
# plain sentence.
#
#   awk -f adapt.awk results.tsv alpha.tsv
BEGIN { FS = OFS = "\t" }
FNR == 1 { file++; next }
file == 1 {
	if ($2 !~ /^(prima|noadapt)(-[a-z-]+)?$/)
		next
	ds = ($1 ~ /^(amazon|caltech|dslr|webcam)->/) ? "surf" : "amz"
	arm = $2; sub(/-.*/, "", arm)
	clf = $2; if (!sub(/^[a-z]+-/, "", clf)) clf = "sgd"
	acc[ds, $1, arm, clf, $3] = $5
	if (!((ds, $3) in seen)) { seen[ds, $3] = 1; epsl[ds, ++ne[ds]] = $3 }
	if (!(clf in cseen)) { cseen[clf] = 1; clfl[++nc] = clf }
	if (!((ds, $1) in tseen)) { tseen[ds, $1] = 1; task[ds, ++nt[ds]] = $1 }
	if (!(ds in dseen)) { dseen[ds] = 1; dsl[++nd] = ds }
	next
}
{
	n = split($1, p, "-")
	ds = p[1]; e = p[n - 1]
	a[ds, e, ++na[ds, e]] = $3 + 0
	if ($3 + 0 >= 0.999) one[ds, e]++
}
function median(ds, e,    i, j, t, m) {
	m = na[ds, e]
	for (i = 1; i <= m; i++) v[i] = a[ds, e, i]
	for (i = 2; i <= m; i++)
		for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
	return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
}
END {
	cname["sgd"] = "DP-SGD"; cname["gd"] = "full-batch DP-GD"; cname["ncm"] = "DP nearest class mean"; cname["sgd-tuned"] = "DP-SGD tuned privately"
	print "## Does adaptation pay under DP?"
	print ""
	print "PRIMA spends part of each budget on covariances; psdshrink then mixes each noisy covariance block with its diagonal, choosing the smallest α that makes it positive definite (α = 1: the noisy covariance is replaced by the diagonal alone, the noise dominates the signal).  The table gives PRIMA minus no adaptation (percentage points, mean over the tasks; in brackets, on how many tasks PRIMA is ahead) and the α chosen over every block of every DP covariance (median; share of blocks at α = 1)."
	print ""
	print "| data | classifier | ε | PRIMA − no adaptation (points) | tasks where PRIMA is ahead | median α | blocks at α = 1 |"
	print "|---|---|---|---:|---:|---:|---:|"
	for (d = 1; d <= nd; d++)
	for (k = 1; k <= nc; k++) {
		ds = dsl[d]; cl = clfl[k]
		for (j = 1; j <= ne[ds]; j++) {
			e = epsl[ds, j]
			s = 0; c = 0; w = 0
			for (i = 1; i <= nt[ds]; i++) {
				t = task[ds, i]
				if (!((ds, t, "prima", cl, e) in acc) || !((ds, t, "noadapt", cl, e) in acc))
					continue
				dd = acc[ds, t, "prima", cl, e] - acc[ds, t, "noadapt", cl, e]
				s += dd; c++; if (dd > 0) w++
			}
			if (!c)
				continue
			al = (e == "np" || !((ds, e) in na)) ? "–" : sprintf("%.3g", median(ds, e))
			fr = (e == "np" || !((ds, e) in na)) ? "–" : sprintf("%d / %d", one[ds, e] + 0, na[ds, e])
			printf "| %s | %s | %s | %+.1f | %d / %d | %s | %s |\n", ds, cname[cl], (e == "np" ? "σ = 0 (NOT private)" : e), s / c, w, c, al, fr
			if (k == 1 && e != "np" && (ds, e) in na) { tot += na[ds, e]; tone += one[ds, e] }
		}
	}
	print ""
	if (tot > 0 && tone >= 0.9 * tot)
		printf "In plain words: %s of the %d noisy covariance blocks were shrunk all the way to their diagonal (α = 1): at these sample sizes the noise of a DP covariance is larger than the correlations PRIMA needs, so the aligned source carries little more than a per-feature rescaling, and the budget PRIMA spends on covariances is taken from the classifier.  Where the difference is negative, that budget would have been worth more to the classifier; adaptation pays only where the non-private column shows a gain and the budget is large enough for α to fall below 1.\n", (tone == tot ? "all" : tone ""), tot
	else if (tot > 0)
		printf "In plain words: %d of the %d noisy covariance blocks kept some of their correlations (α < 1); where PRIMA is ahead of no adaptation at a given ε, the covariance carried signal through the noise; where it is behind, the budget spent on covariances would have been worth more to the classifier.\n", tot - tone, tot
}
