/*
 * ledger.h: the privacy ledger carried in stream metadata under "dp."
 * (formats/tensor-stream.md, section "Privacy ledger").
 *
 * A DP release is one entry, stored as keys dp.release.<id>.<field>
 * where <id> is 32 lowercase hex digits (128 random bits).  Raw-data
 * taint is dp.raw.<dataset> = "row-local" | "aggregate".  Rows imported
 * from a format without a ledger carry dp.provenance = "unknown": nothing
 * is known about them, and no accountant may call them private.
 * Composition is
 * over the union of entries by id, so outputs derived from one release
 * (post-processing) are never counted twice.
 *
 * Ownership: struct ledger owns its entries (ledger_free accepts NULL).
 * Functions return 0, or -1 with a message in the caller's err buffer.
 * Nothing here prints or exits.
 */
#ifndef PRIVADA_LEDGER_H
#define PRIVADA_LEDGER_H

#include <stddef.h>

#include "tensor.h"

#define LEDGER_ID_HEX 32
#define LEDGER_MAX_NAME 64		/* dataset names: [a-z0-9_], 1..64 */
#define LEDGER_MAX_ORDERS 256

/* Neighbouring relations. */
enum ledger_rel { LEDGER_ADD_REMOVE = 1, LEDGER_REPLACE_ONE = 2 };
/* Raw taint kinds. */
enum ledger_raw { LEDGER_ROW_LOCAL = 1, LEDGER_AGGREGATE = 2 };

struct ledger_entry {
	char id[LEDGER_ID_HEX + 1];
	char dataset[LEDGER_MAX_NAME + 1];
	char mechanism[48];		/* gaussian, subsampled_gaussian, ... */
	char tool[48];
	int relation;			/* enum ledger_rel */
	int seeded;			/* noise from --seed: NOT private */
	int data_dependent;		/* PATE data-dependent analysis */
	int assumed_raw;		/* the rows were of unknown provenance;
					 * the user declared them raw records
					 * of the dataset (--assume-raw) */
	double epsilon;			/* pure or (eps, delta) cost, or -1 */
	double delta;			/* delta outside RDP (approximate
					 * samplers, (eps, delta) entries) */
	double tv;			/* total variation distance of an
					 * approximate sampler's output from
					 * the exact mechanism's, or 0 */
	double tv_epsilon;		/* the epsilon at which delta charges
					 * it: delta >= (1 + e^tv_epsilon) tv */
	size_t norders;			/* 0: no RDP curve */
	double orders[LEDGER_MAX_ORDERS];
	double rdp[LEDGER_MAX_ORDERS];
	struct ts_meta params;		/* mechanism parameters, as text */
};

struct ledger_raw_mark {
	char dataset[LEDGER_MAX_NAME + 1];
	int kind;			/* enum ledger_raw */
};

struct ledger {
	size_t n;
	struct ledger_entry *e;
	size_t nraw;
	struct ledger_raw_mark *raw;
	int unknown;			/* some stream had dp.provenance */
};

/* The key and value marking rows of unknown provenance. */
#define LEDGER_PROVENANCE_KEY "dp.provenance"
#define LEDGER_PROVENANCE_UNKNOWN "unknown"

/* @return NULL if name is a valid dataset name, else a message. */
const char *ledger_check_dataset(const char *name);

/* Set dp.raw.<dataset> in m.  A stronger mark wins: aggregate over
 * row-local.  @return 0 or -1 (bad name, out of memory). */
int ledger_mark_raw(struct ts_meta *m, const char *dataset, int kind,
    char *err, size_t errlen);

/* Whether m carries a dp.raw.* mark: the stream derives from raw records
 * of some dataset, row by row or through a non-private aggregate.  Such
 * a stream is protected: nothing computed from its bytes without privacy
 * (a digest, a count) may leave a tool (tensor-stream.md, 10.2). */
int ledger_has_raw(const struct ts_meta *m);

/* Format 16 random bytes as an entry id. */
void ledger_format_id(char out[LEDGER_ID_HEX + 1], const unsigned char b[16]);

/* Write entry e into m as dp.release.<id>.* keys. */
int ledger_put(struct ts_meta *m, const struct ledger_entry *e, char *err,
    size_t errlen);

/* Parse every dp.* key of m into *out (appending; entries with an id
 * already present must agree).  Unknown dp.release.<id>.<field> fields
 * are kept in params; malformed entries are errors. */
int ledger_parse(const struct ts_meta *m, struct ledger *out, char *err,
    size_t errlen);
void ledger_free(struct ledger *l);

/* The privacy spent on one dataset. */
struct ledger_total {
	size_t releases;	/* entries for the dataset */
	int seeded;		/* some release used --seed: NOT private */
	int data_dependent;	/* some release uses a data-dependent bound */
	int assumed_raw;	/* some release's rows were declared raw */
	int raw;		/* enum ledger_raw of the taint, or 0 */
	int mixed;		/* add/remove and replace-one entries mixed */
	int relation;		/* the relation when not mixed */
	size_t norders;		/* orders common to every RDP entry */
	double eps_rdp;		/* from the composed RDP curve, at delta_rdp */
	double order;		/* its optimal order (0 without RDP entries) */
	double eps_basic;	/* sum of epsilons of non-RDP entries */
	double delta_extra;	/* sum of the entries' own deltas, the TV
				 * charges at the composed epsilon */
	int tv_recharged;	/* some TV charge was raised to it */
	double delta_rdp;	/* delta - delta_extra, used for the conversion */
	double epsilon;		/* total: eps_rdp + eps_basic (inf if mixed) */
};

/* Compose every entry of dataset: RDP curves summed at the orders common
 * to all of them and converted at delta minus the entries' own deltas
 * (conv: enum rdp_conv), plus basic composition of entries without RDP.
 * An entry with a TV distance (tv > 0) is charged (1 + e^E) tv on delta
 * at the composed epsilon E when E exceeds its tv_epsilon, iterated to a
 * fixed point (more delta charged, less left for the conversion, larger
 * E).  Seeded and data-dependent releases are counted and flagged, never
 * hidden.  @return 0, or -1 (delta not larger than the entries' own
 * deltas, no common order, a TV charge that does not settle below delta)
 * with a message. */
int ledger_total(const struct ledger *l, const char *dataset, double delta,
    int conv, struct ledger_total *t, char *err, size_t errlen);
/* Names of the datasets the ledger mentions (releases or raw marks), in
 * first-seen order, without repeats; *n set.  The array is the caller's
 * (free), the strings point into l. */
const char **ledger_datasets(const struct ledger *l, size_t *n);

#endif
