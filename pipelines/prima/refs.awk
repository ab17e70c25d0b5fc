# refs.awk: the published accuracies of data/office-caltech10-surf/README.md
# as markdown.awk's refs: "task method label value" lines for the rows
# "NN (JDA ...)" and "CORAL (AAAI ...)" of its tables (columns A→C ...).
BEGIN {
	OFS = "\t"
	dom["A"] = "amazon"; dom["C"] = "caltech"; dom["D"] = "dslr"; dom["W"] = "webcam"
}
/^\|/ {
	nf = split($0, c, "|")
	for (i = 2; i < nf; i++)
		gsub(/^ +| +$/, "", c[i])
	if (c[2] == "") {
		for (i = 3; i < nf; i++)
			col[i] = c[i]
		next
	}
	lab = c[2] ~ /^NN \(JDA/ ? "NN, 1-NN (published)" : \
	    c[2] ~ /^CORAL \(AAAI/ ? "CORAL, SVM (published)" : ""
	if (lab == "")
		next
	for (i = 3; i < nf; i++) {
		n = split(col[i], st, "→")
		if (n == 2 && (st[1] in dom) && (st[2] in dom)) {
			print dom[st[1]] "->" dom[st[2]], "*", lab, c[i]
			found++
		}
	}
}
END {
	if (found != 24) {
		printf "refs.awk: found %d published numbers, not 24\n", found > "/dev/stderr"
		exit 1
	}
}
