/*
 * tns.h: the parts of tns (tools/tns/, one program): its options, its
 * commands and what they share.  main.c parses; info.c, streams.c,
 * split.c and convert.c run the commands; common.c holds the helpers.
 */
#ifndef PRIVADA_TNS_H
#define PRIVADA_TNS_H

#include <stdint.h>
#include <stdio.h>

#include "opts.h"
#include "tstats.h"
#include "tstream.h"

struct opts {
	struct opts_common c;		/* -f -o -q -S -v --level */
	const char *input, *prefix, *tensor, *name, *tensors;
	int json, stats, header, unsafe_ledger, dtype, allow_empty;
	uint64_t parts;
	double *fractions;
	size_t nfractions;
	char **renames;			/* "OLD=NEW" */
	size_t nrenames;
};

/* The commands: argc and argv are the operands; return the exit status. */
int cmd_verify(struct opts *o, int argc, char **argv);
int cmd_info(struct opts *o, int argc, char **argv);
int cmd_cat(struct opts *o, int argc, char **argv);
int cmd_pick(struct opts *o, int argc, char **argv);
int cmd_meta(struct opts *o, int argc, char **argv);
int cmd_split(struct opts *o, int argc, char **argv);
int cmd_to_csv(struct opts *o, int argc, char **argv);
int cmd_from_csv(struct opts *o, int argc, char **argv);
int cmd_to_npy(struct opts *o, int argc, char **argv);
int cmd_from_npy(struct opts *o, int argc, char **argv);
int cmd_to_npz(struct opts *o, int argc, char **argv);

/* Write the stream metadata (inherited keys, then prov.*) as one record
 * at the end, finish the stream and commit the output. */
void finish_stream(struct ts_writer *w, struct ts_meta *meta,
    const struct ts_meta *inputs);

/* Names of the tensors of a stream, for "the stream has ..." messages;
 * src is the input each came from. */
struct names {
	char **v;
	int *src;
	size_t n;
};

void names_add(struct names *s, const char *name, int src);
/* The index of name, or -1. */
long names_find(const struct names *s, const char *name);
/* "a, b, c" (at most 20 names) in a static buffer. */
const char *names_list(const struct names *s);
void names_free(struct names *s);

/* Open each operand (none: stdin) before reading any. */
FILE **open_inputs(int argc, char **argv, const char ***labels, int *n);
/* A reader on fp (cli_reader) that reads a regular file ahead in a helper
 * thread when this process may use more than one CPU. */
struct ts_reader *tns_reader(FILE *fp, const char *label);
/* A usage error when cmd has more than one operand. */
void one_operand(int argc, const char *cmd);

/* What tns info says of a stream (info.c); to-npz writes its JSON too. */
struct tinfo {
	char name[TS_MAX_NAME + 1];
	int dtype, ndim, streamed;
	uint64_t dims[TS_MAX_NDIM];
	uint64_t bytes;
	struct ts_meta meta;
	struct ts_stats st;
};

struct finfo {
	const char *label;
	char version[16];
	uint64_t digest;
	struct tinfo *t;
	size_t nt;
	struct ts_meta meta;
};

/* The JSON object of tns info --format json, with a newline. */
void info_json(FILE *fp, const struct finfo *fi, int want_stats);
void finfo_free(struct finfo *fi);

#endif
