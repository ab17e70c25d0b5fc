# order.awk: the best order of rdp-account --format tsv's "order" line,
# written as teacher-vote --ss-order takes it: one of rdp-account's
# default orders (1.1 to 10.9 by 0.1, then integers).
BEGIN { FS = "\t" }
$1 == "order" { o = $2 + 0; if (o < 11) printf "%.1f\n", o; else printf "%d\n", o + 0.5; found = 1 }
END { if (!found) { print "order.awk: no order line" > "/dev/stderr"; exit 1 } }
