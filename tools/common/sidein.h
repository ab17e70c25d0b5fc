/*
 * sidein.h: side inputs declared public (covest --mean and --select-on,
 * gmm-fit --init-means): a file, never stdin, never the private input
 * itself (tools only: usage errors exit 64 like cli.h).
 */
#ifndef PRIVADA_SIDEIN_H
#define PRIVADA_SIDEIN_H

#include <stdio.h>

/*
 * Open the side input path of option opt (as cli_open_in, *label set
 * likewise) next to the main input in (already open).  A usage error
 * when path is "-" ("OPT needs a file, not stdin") or the same regular
 * file as in: its private rows cannot be declared public.
 */
FILE *sidein_open(FILE *in, const char *opt, const char *path,
    const char **label);

#endif
