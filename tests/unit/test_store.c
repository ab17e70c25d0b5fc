/* Unit tests of the budget store (lib/dp/store.c): schema, budgets,
 * charges composed as ledger_total composes them, refusals, bad files. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "ledger.h"
#include "pverr.h"
#include "rdp.h"
#include "store.h"
#include "tap.h"

/* A Gaussian release of noise multiplier sigma: RDP a / (2 sigma^2). */
static void
entry(struct ledger_entry *e, unsigned char idbyte, const char *ds,
    double sigma)
{
	unsigned char b[16];

	memset(e, 0, sizeof *e);
	memset(b, idbyte, sizeof b);
	ledger_format_id(e->id, b);
	snprintf(e->dataset, sizeof e->dataset, "%s", ds);
	strcpy(e->mechanism, "gaussian");
	strcpy(e->tool, "covest");
	e->relation = LEDGER_ADD_REMOVE;
	e->epsilon = -1;
	e->norders = 40;
	for (size_t i = 0; i < e->norders; i++) {
		e->orders[i] = 1.5 + 0.5 * (double)i;
		e->rdp[i] = e->orders[i] / (2 * sigma * sigma);
	}
}

/* The epsilon of k such releases at delta, by the closed form of the
 * Gaussian's composed curve a k / (2 sigma^2) through rdp_eps_from_curve
 * is what the ledger does; here: through ledger_total of k entries. */
static double
ledger_eps(int k, double sigma, double delta)
{
	struct ledger l = { 0 };
	struct ledger_total t;
	char err[200];
	double eps;

	l.e = calloc((size_t)k, sizeof *l.e);
	l.n = (size_t)k;
	for (int i = 0; i < k; i++)
		entry(&l.e[i], (unsigned char)(i + 1), "d", sigma);
	eps = ledger_total(&l, "d", delta, RDP_CONV_IMPROVED, &t, err,
	    sizeof err) == 0 ? t.epsilon : NAN;
	ledger_free(&l);
	return eps;
}

int
main(void)
{
	char dir[] = "/tmp/test_store.XXXXXX", path[256], err[512];
	struct store *s = NULL;
	struct store_status st;
	struct ledger_entry e;
	struct stat sb;
	double spent, e3, e4;
	sqlite3 *db;
	FILE *fp;
	int rc;

	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(path, sizeof path, "%s/s.db", dir);
	ok(store_init(path, err, sizeof err) == 0, "init: %s", err);
	ok(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600,
	    "the store is mode 0600");
	ok(store_init(path, err, sizeof err) == PV_E_IO,
	    "init refuses an existing file");
	ok(store_open(path, 0, &s, err, sizeof err) == 0, "open");
	entry(&e, 1, "d", 3);
	ok(store_charge(s, &e, "a", &spent, err, sizeof err) == PV_E_NOBUDGET,
	    "no budget: refused (%s)", err);
	ok(store_set(s, "d", 0, 1e-5, err, sizeof err) == PV_E_RANGE,
	    "a budget of epsilon 0 is refused");
	ok(store_set(s, "Bad-Name", 1, 1e-5, err, sizeof err) == PV_E_RANGE,
	    "a bad dataset name is refused");
	/* A budget between 3 and 4 releases. */
	e3 = ledger_eps(3, 3, 1e-5);
	e4 = ledger_eps(4, 3, 1e-5);
	ok(isfinite(e3) && e4 > e3, "ledger: 3 releases %.6g, 4 %.6g", e3, e4);
	ok(store_set(s, "d", (e3 + e4) / 2, 1e-5, err, sizeof err) == 0,
	    "set: %s", err);
	for (unsigned char i = 1; i <= 3; i++) {
		entry(&e, i, "d", 3);
		rc = store_charge(s, &e, "args", &spent, err, sizeof err);
		ok(rc == 0, "charge %d: %s", i, rc ? err : "ok");
		ok(fabs(spent - ledger_eps(i, 3, 1e-5)) <= 1e-12,
		    "spent after %d equals ledger_total's (%.17g)", i, spent);
	}
	entry(&e, 2, "d", 3);
	ok(store_charge(s, &e, "again", &spent, err, sizeof err) == 0 &&
	    fabs(spent - e3) <= 1e-12, "the same release again: not charged "
	    "twice");
	e.rdp[0] *= 2;
	ok(store_charge(s, &e, "x", NULL, err, sizeof err) == PV_E_FORMAT,
	    "the same id with another curve is refused");
	entry(&e, 4, "d", 3);
	rc = store_charge(s, &e, "4th", &spent, err, sizeof err);
	ok(rc == PV_E_BUDGET && fabs(spent - e4) <= 1e-12,
	    "the 4th release is refused (%s)", err);
	ok(store_set(s, "d", e3 / 2, 1e-5, err, sizeof err) == PV_E_BUDGET,
	    "the budget cannot drop below what is spent");
	ok(store_set(s, "d", 10, 1e-6, err, sizeof err) == PV_E_RANGE,
	    "delta cannot change once charged");
	ok(store_status(s, &st, err, sizeof err) == 0 && st.n == 1 &&
	    st.d[0].nrel == 3 && fabs(st.d[0].spent - e3) <= 1e-12 &&
	    strcmp(st.d[0].rel[0].args, "args") == 0 &&
	    fabs(st.d[0].rel[1].epsilon - ledger_eps(1, 3, 1e-5)) <= 1e-12,
	    "status: 3 releases, spent as the ledger, each its own epsilon");
	store_status_free(&st);
	/* A larger budget admits the 4th; nothing was refunded. */
	ok(store_set(s, "d", e4, 1e-5, err, sizeof err) == 0 &&
	    store_charge(s, &e, "4th", &spent, err, sizeof err) == 0 &&
	    fabs(spent - e4) <= 1e-12, "after raising the budget: charged");
	store_close(s);

	/* Another version. */
	ok(sqlite3_open(path, &db) == SQLITE_OK && sqlite3_exec(db,
	    "PRAGMA user_version = 2", NULL, NULL, NULL) == SQLITE_OK,
	    "set user_version 2");
	sqlite3_close(db);
	ok(store_open(path, 0, &s, err, sizeof err) == PV_E_VERSION,
	    "another version is refused (%s)", err);
	/* Not a database. */
	snprintf(path, sizeof path, "%s/junk.db", dir);
	fp = fopen(path, "w");
	fputs("this is not an SQLite database, not at all, no it is not....."
	    "..............................................................",
	    fp);
	fclose(fp);
	rc = store_open(path, 0, &s, err, sizeof err);
	ok(rc == PV_E_VERSION || rc == PV_E_STORE, "a junk file is refused "
	    "(%d: %s)", rc, err);
	unlink(path);
	snprintf(path, sizeof path, "%s/missing.db", dir);
	ok(store_open(path, 0, &s, err, sizeof err) == PV_E_IO,
	    "a missing store is not created");
	snprintf(path, sizeof path, "%s/s.db", dir);

	/* Network filesystems: the f_type magics of statfs(2), and the
	 * refusal (through store_assume_fstype, as statfs would say). */
	ok(store_fstype_name(0x6969) != NULL &&
	    strcmp(store_fstype_name(0x6969), "nfs") == 0 &&
	    strcmp(store_fstype_name(0xff534d42UL), "cifs") == 0 &&
	    strcmp(store_fstype_name(0xfe534d42UL), "smb2") == 0 &&
	    strcmp(store_fstype_name(0x01021997), "9p") == 0 &&
	    strcmp(store_fstype_name(0x65735546), "fuse") == 0 &&
	    strcmp(store_fstype_name(0x0bd00bd0), "lustre") == 0,
	    "network filesystem magics");
	ok(store_fstype_name(0xef53) == NULL &&
	    store_fstype_name(0x01021994) == NULL &&
	    store_fstype_name(0x9123683e) == NULL,
	    "ext4, tmpfs, btrfs are local");
	ok(store_assume_fstype("bogus") == PV_E_RANGE, "an unknown name");
	ok(store_assume_fstype("nfs") == 0, "assume nfs");
	ok(store_open(path, 1, &s, err, sizeof err) == PV_E_STORE &&
	    strstr(err, "network filesystem (nfs)") != NULL &&
	    strstr(err, "postgresql://") != NULL,
	    "a store on NFS is refused (%s)", err);
	snprintf(path, sizeof path, "%s/n.db", dir);
	ok(store_init(path, err, sizeof err) == PV_E_STORE &&
	    access(path, F_OK) != 0, "init on NFS: refused, no file left");
	ok(store_assume_fstype("local") == 0 &&
	    store_init(path, err, sizeof err) == 0, "\"local\" lifts it");
	unlink(path);
	ok(store_assume_fstype(NULL) == 0, "statfs again");
	ok(store_is_uri("postgresql://u@h/db") && store_is_uri("postgres:///d")
	    && !store_is_uri("postgresql:x") && !store_is_uri("s.db"),
	    "URIs");
	ok(store_open("postgresql://u:pw@/db", 0, &s, err, sizeof err) ==
	    PV_E_OPTION && store_open("postgres:///db?password=x", 0, &s, err,
	    sizeof err) == PV_E_OPTION && store_init("postgresql://u:pw@h/db",
	    err, sizeof err) == PV_E_OPTION, "a password in the URI is refused");

	snprintf(path, sizeof path, "%s/s.db", dir);
	unlink(path);
	rmdir(dir);
	return tap_done();
}
