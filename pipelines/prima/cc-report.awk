# cc-report.awk: trials.tsv of coral-check (task trial method accuracy
# weight_decay) to Markdown: per task the mean ± sd over the subsampled
# trials of no adaptation and CORAL, the published CORAL number (-v refs,
# refs.awk's lines), and the whole-source run (trial 0).
BEGIN {
	FS = OFS = "\t"
	while ((getline line < refs) > 0) {
		split(line, f, "\t")
		if (f[3] ~ /^CORAL/) pub[f[1]] = f[4]
		if (f[3] ~ /^NN/) nn[f[1]] = f[4]
	}
}
{
	if (!($1 in seen)) { seen[$1] = 1; task[++nt] = $1 }
	if ($2 == 0) { full[$1, $3] = $4; next }
	n[$1, $3]++; s[$1, $3] += $4; ss[$1, $3] += $4 * $4
}
function mean(k) { return s[k] / n[k] }
function sd(k,    m, v) { m = mean(k); v = n[k] > 1 ? (ss[k] - n[k] * m * m) / (n[k] - 1) : 0; return sqrt(v > 0 ? v : 0) }
function lab(t) { gsub(/->/, "→", t); return t }
END {
	print "# Non-private CORAL under the CORAL paper's protocol (Office-Caltech10 SURF)"
	print ""
	print "Written by `make -C pipelines/prima coral-check`; do not edit.  **NOT private**: a check of covest + coral-align against the published numbers.  Protocol (Sun, Feng and Saenko, AAAI 2016): each domain L1-normalised and z-scored over the whole domain; in each of " trials " trials, " per " labelled source rows per class (all of a class that has fewer); CORAL with λ = 1 (covest --sigma 0 --mean released --subspaces none, coral-align --reg 1); a linear classifier trained on the source, its L2 weight decay chosen in {" grid "} by 2-fold cross-validation on the source (dpsgd-train --no-dp: multinomial logistic regression by SGD, 50 epochs, where the paper used LIBSVM's linear SVM); accuracy on the whole target.  The last two columns train on the whole source (one run): the setting where alignment stops helping."
	print ""
	print "| task | no adaptation | CORAL | gain | CORAL (published) | NN (published) | whole source: no adaptation | whole source: CORAL |"
	print "|---|---:|---:|---:|---:|---:|---:|---:|"
	for (i = 1; i <= nt; i++) {
		t = task[i]
		a = mean(t SUBSEP "noadapt"); c = mean(t SUBSEP "coral")
		printf "| %s | %.1f ± %.1f | %.1f ± %.1f | %+.1f | %s | %s | %.1f | %.1f |\n", lab(t), a,
		    sd(t SUBSEP "noadapt"), c, sd(t SUBSEP "coral"), c - a, pub[t], nn[t],
		    full[t, "noadapt"], full[t, "coral"]
		A += a; C += c; P += pub[t]; N += nn[t]; FA += full[t, "noadapt"]; FC += full[t, "coral"]
		if (c > a) wins++
	}
	printf "| **mean** | **%.1f** | **%.1f** | %+.1f | %.1f | %.1f | %.1f | %.1f |\n", A / nt, C / nt,
	    (C - A) / nt, P / nt, N / nt, FA / nt, FC / nt
	print ""
	printf "CORAL beats no adaptation on %d of %d tasks with %d source rows per class.\n", wins, nt, per
}
