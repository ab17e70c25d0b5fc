/*
 * storecli.h: rdp-account's questions to a budget store (tools only:
 * these print and exit like cli.h).
 *
 *   path = storecli_path(opt, operand);      // --budget-store, operand, env
 *   flagged = storecli_check(path, &ledger, verbose);
 *   storecli_solve(path, dataset, &plan, format);
 */
#ifndef PRIVADA_STORECLI_H
#define PRIVADA_STORECLI_H

#include "ledger.h"
#include "storeplan.h"

/* The store a command names: --budget-store opt or the operand (not
 * both: usage error), else PRIVADA_BUDGET_STORE when set and not empty,
 * else a usage error. */
const char *storecli_path(const char *opt, const char *operand);

/* Whether every release of l is in the store at path with the same id,
 * dataset and RDP curve (orders and values bit for bit, delta, TV): each
 * one that is not is named on stderr.  @return how many were flagged.
 * Exit 66 (no such store), 65 (not a store, another version), 74. */
size_t storecli_check(const char *path, const struct ledger *l, int verbose);

/* Solve plan p for dataset against the store at path and print the
 * answer on stdout (format 0 text, 1 tsv, 2 json).  Exit 1 when nothing
 * in range fits (the budget is spent), 78 when the dataset has no budget,
 * 66, 65, 74 as storecli_check. */
void storecli_solve(const char *path, const char *dataset,
    const struct store_plan *p, int format);

#endif
