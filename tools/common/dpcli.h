/*
 * dpcli.h: what every DP tool does the same way (tools only, like cli.h:
 * these print warnings and exit on failure).
 *
 *   struct rng *rng = dpcli_rng(o.seed, "covest");   // before any output
 *   ... compute, add noise from rng ...
 *   struct ledger_entry e;  dpcli_entry(&e, rng, dataset, "gaussian");
 *   e.norders / e.rdp / params ...;  dpcli_release(&out_meta, &e);
 *
 * Ownership: the returned rng is the caller's (rng_free).  dpcli_entry
 * initialises e (free its params with ts_meta_free after dpcli_release).
 */
#ifndef PRIVADA_DPCLI_H
#define PRIVADA_DPCLI_H

#include "ledger.h"
#include "rng.h"
#include "tensor.h"

/* Parse a --seed value (an unsigned 64-bit integer), exit 64 if bad. */
uint64_t dpcli_seed_arg(const char *arg);

/* The tool's randomness: seeded from seed_opt (NULL: from getrandom)
 * with work_item naming the unit of work.  A seeded run warns loudly on
 * stderr (even with --quiet: it is about privacy).  Exit 71 when no
 * secure randomness can be had. */
struct rng *dpcli_rng(const char *seed_opt, const char *work_item);

/* The same without the warning, for randomness that does not touch
 * privacy (post-processing, a run without privacy) and for the
 * sub-generators of a seeded run.  Exit 71 as dpcli_rng. */
struct rng *dpcli_rng_quiet(const char *seed_opt, const char *work_item);

/* The generator of repeat rep of an audit (--audit-repeat): seeded
 * from seed_opt and "<work_item>/audit/<rep>", or rng itself when
 * seed_opt is NULL.  Free it with rng_free when it is not rng. */
struct rng *dpcli_rng_audit(const char *seed_opt, const char *work_item,
    uint64_t rep, struct rng *rng);

/* --assume-raw (with --dataset, given as dataset; NULL is a usage
 * error): the user declares that the main input's rows, of unknown
 * provenance (dp.provenance, formats/tensor-stream.md 10.1), are raw
 * records of dataset, one per row.  dpcli_dataset then accepts such an
 * input for that name, dpcli_entry marks the dataset's entry
 * assumed_raw, and dpcli_release drops the dp.provenance mark.  Call
 * after option parsing, before dpcli_dataset. */
void dpcli_assume_raw(const char *dataset);

/* The protected dataset of an input's stream metadata: the one dataset
 * with a dp.raw.<d> mark, else data.name.  Exit 65 (naming label) when
 * none or several candidates exist and name is NULL; when name is given
 * (--dataset), it is checked and returned.  An input of unknown
 * provenance (dp.provenance) is noted: dpcli_release refuses to release
 * from it unless name is the dataset declared by dpcli_assume_raw (a run
 * without a release may read it, its output keeps the mark); without a
 * dataset name it is refused here.  The declaration is refused (exit 65)
 * for an input whose provenance is known. */
const char *dpcli_dataset(const struct ts_meta *in, const char *name,
    const char *label);

/* Start a ledger entry: a fresh id from getrandom (never from rng, even
 * seeded), seeded flag from rng, the dataset, mechanism, the tool name,
 * add/remove neighbours, no cost yet, assumed_raw when dataset is the one
 * declared by dpcli_assume_raw. */
void dpcli_entry(struct ledger_entry *e, struct rng *rng, const char *dataset,
    const char *mechanism);

/* Set the mechanism parameter e->params[key] to v (%.17g).  Exit 71 when
 * out of memory. */
void dpcli_param(struct ledger_entry *e, const char *key, double v);

/* --budget-store PATH: charge every release of this run to the budget
 * store at path (lib/dp/store.h).  Without it, the environment variable
 * PRIVADA_BUDGET_STORE (when set and not empty) names the store. */
void dpcli_budget_store(const char *path);

/* The environment variable PRIVADA_STORE_FSTYPE, when set and not empty:
 * the filesystem every SQLite store is taken to be on (store_assume_fstype;
 * "local" lifts the network filesystem refusal); an unknown name is a
 * usage error.  Called before a store is opened. */
void dpcli_store_env(void);

/* The run's target delta (-d, --delta; opts_common notes it): a budget
 * store whose dataset is accounted at another delta refuses the release
 * (exit 65, nothing charged, nothing written), since the epsilon the run
 * reports would be at another delta than the store's. */
void dpcli_target_delta(double delta);

/* Record the release in out (stream metadata being built, already holding
 * the inherited ledger): write the entry, drop the row-local raw mark of
 * the protected dataset (its rows are now released values), keep an
 * aggregate mark and warn that the release is not private for it (see
 * formats/tensor-stream.md, section 10.1.2).  A dp.provenance mark is
 * dropped when the user declared the main input (dpcli_assume_raw) and
 * no other input of unknown provenance was read; otherwise nothing is
 * released (exit 65).  With a budget store (dpcli_budget_store), the
 * release is charged first, in one transaction: a refusal exits
 * CLI_EX_BUDGET (77) before any output is committed, a store without a
 * budget for the dataset 78, a store that cannot be used 74 (65 for
 * another version).  Exit 65/71 on failure. */
void dpcli_release(struct ts_meta *out, const struct ledger_entry *e);

/* The ledger of a side input whose every row the output depends on (a
 * public validation set, initial means, another stream's partition):
 * its partition merges as any input's (cli_inherit_split), its release
 * entries are merged, its raw marks become aggregate.  Exit 65 on a
 * conflict or a bad mark.  A side input of unknown provenance
 * (dp.provenance) cannot be declared: dpcli_release refuses to release
 * from it. */
void dpcli_inherit_side(struct ts_meta *out, const struct ts_meta *src,
    const char *label);

/* After the inputs' ledgers are in out: every dataset other than the
 * protected one whose rows went into the release is now aggregated
 * without protection (dp.raw.<d> = aggregate).  Exit 65 on failure. */
void dpcli_aggregate_others(struct ts_meta *out, const char *dataset,
    const char *label);

/* A release that is not private for dataset (no noise, or a test-only
 * unsafe option): its output is an aggregate of the raw rows, so mark
 * dp.raw.<dataset> = aggregate.  Exit 65 on a bad name. */
void dpcli_not_private(struct ts_meta *out, const char *dataset,
    const char *label);

/* With --audit-repeat N (N > 0), record dp.audit = N: the stream holds N
 * releases, and its ledger entry composes all of them. */
void dpcli_audit_mark(struct ts_meta *out, uint64_t n);

/* The one dataset marked dp.raw.<d> = aggregate in m (as a model trained
 * without privacy on its part of a split carries), or NULL; *n receives
 * how many datasets are so marked. */
const char *dpcli_aggregate_dataset(const struct ts_meta *m, int *n);

/* Merge an input's metadata into out (cli_inherit), less its split.*
 * keys (an output computed from several parts is not one of them), the
 * keys starting with skip_prefix (when not NULL) and the key drop (when
 * not NULL).  An input of unknown provenance (dp.provenance) is noted
 * as a side input's is (dpcli_inherit_side). */
void dpcli_carry(struct ts_meta *out, const struct ts_meta *in,
    const char *skip_prefix, const char *drop, const char *label);

/* Exit (71 on NOISE_E_NOMEM, else 70) for a failed sampler, saying that
 * nothing was released. */
__attribute__((noreturn)) void dpcli_noise_die(int rc);

/* The value of a --delta option: a number strictly between 0 and 1
 * (usage error, exit 64, otherwise). */
double dpcli_delta_arg(const char *opt, const char *arg);

/* The value of an --epsilon option: a positive number at most max (usage
 * error, exit 64, otherwise). */
double dpcli_epsilon_arg(const char *opt, const char *arg, double max);

#endif
