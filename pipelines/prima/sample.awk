# sample.awk -v per=20 -v seed=S: keep `per` rows of each class (all of a
# class that has fewer), drawn uniformly with awk's generator from seed S
# (a public trial seed).  CSV with a header and a column "label".
BEGIN { FS = OFS = "," ; srand(seed) }
NR == 1 { for (i = 1; i <= NF; i++) if ($i == "label") lab = i; print; next }
{ c = $lab; k = ++cnt[c]; row[c, k] = $0 }
END {
	for (c in cnt) {
		n = cnt[c]
		for (i = 1; i <= n && i <= per; i++) {
			j = i + int(rand() * (n - i + 1))
			t = row[c, i]; row[c, i] = row[c, j]; row[c, j] = t
			print row[c, i]
		}
	}
}
