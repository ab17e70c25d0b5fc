#!/usr/bin/env bats
# SQLite budget stores on a network filesystem are refused (lib/dp/store.c,
# statfs f_type); PRIVADA_STORE_FSTYPE stands in for statfs here.

load test_helper

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	featurize --no-label --dataset cv --dtype f64 "$DATA/covest/x.csv" > x.tns
	rdp-account store init s.db
	rdp-account store set s.db --dataset cv --epsilon 5 --delta 1e-5
}

setup() {
	cd "$BATS_FILE_TMPDIR"
	unset PRIVADA_BUDGET_STORE PRIVADA_STORE_FSTYPE
}

@test "a store on a local disk opens (statfs says so)" {
	run -0 rdp-account store status s.db
}

@test "a store on NFS, CIFS, 9P, FUSE is refused: exit 74, pointing to PostgreSQL, nothing written" {
	for fs in nfs cifs smb2 9p fuse lustre; do
		rm -f n.tns
		PRIVADA_STORE_FSTYPE=$fs run -74 covest -q -e 1 -d 1e-5 --clip 1 --budget-store s.db -o n.tns x.tns
		[[ $output == *"network filesystem ($fs)"*"postgresql://"*"nothing was released"* ]]
		[ ! -e n.tns ]
	done
	PRIVADA_STORE_FSTYPE=nfs run -74 rdp-account store status s.db
	PRIVADA_STORE_FSTYPE=nfs run -74 rdp-account store init new.db
	[ ! -e new.db ]
	[ "$(rdp-account store status --format tsv s.db | grep -c '^release')" = 0 ]
}

@test "PRIVADA_STORE_FSTYPE=local lifts the refusal; an unknown name is a usage error" {
	PRIVADA_STORE_FSTYPE=local run -0 covest -q -e 1 -d 1e-5 --clip 1 --budget-store s.db -o l.tns x.tns
	[ -s l.tns ]
	PRIVADA_STORE_FSTYPE=bogus run -64 covest -q -e 1 -d 1e-5 --clip 1 --budget-store s.db -o b.tns x.tns
	[ ! -e b.tns ]
	PRIVADA_STORE_FSTYPE=bogus run -64 rdp-account store status s.db
	# Without a store the variable is not read.
	PRIVADA_STORE_FSTYPE=bogus run -0 covest -q -e 1 -d 1e-5 --clip 1 -o w.tns x.tns
}
