# zscore.awk: CSV (header, features then the column "label") to the same
# CSV with each row divided by its sum (L1; the features are counts) and
# then every feature z-scored over the file's rows (population standard
# deviation; a constant feature becomes 0): the CORAL paper's preparation,
# which uses statistics of the whole domain (NOT private).
BEGIN { FS = OFS = "," }
NR == 1 {
	for (i = 1; i <= NF; i++) if ($i == "label") lab = i
	if (!lab) { print "zscore.awk: no column 'label'" > "/dev/stderr"; exit 1 }
	print; next
}
{
	n++; s = 0
	for (i = 1; i <= NF; i++) if (i != lab) s += $i
	for (i = 1; i <= NF; i++) {
		v[n, i] = (i == lab) ? $i : (s > 0 ? $i / s : 0)
		if (i != lab) { m[i] += v[n, i]; q[i] += v[n, i] * v[n, i] }
	}
	nf = NF
}
END {
	for (i = 1; i <= nf; i++) if (i != lab) {
		m[i] /= n; sd[i] = q[i] / n - m[i] * m[i]; sd[i] = sd[i] > 0 ? sqrt(sd[i]) : 0
	}
	for (r = 1; r <= n; r++) {
		line = ""
		for (i = 1; i <= nf; i++)
			line = line (i > 1 ? "," : "") (i == lab ? v[r, i] : \
			    (sd[i] > 0 ? sprintf("%.6g", (v[r, i] - m[i]) / sd[i]) : 0))
		print line
	}
}
