/* common.c: what the commands of tns share: names of tensors, inputs,
 * finishing an output stream. */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cpus.h"
#include "tns.h"

#define MAX_LISTED 20			/* tensor names listed in a message */

struct ts_reader *
tns_reader(FILE *fp, const char *label)
{
	struct ts_reader *r = cli_reader(fp, label);
	struct stat st;

	/* Only a regular file: closing waits for a pending read, which a
	 * pipe might never complete.  The results are the same either way. */
	if (pv_cpus() > 1 && fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode))
		(void)ts_reader_set_async(r, 1);
	return r;
}

/* Write the stream metadata (inherited keys, then prov.*) as one record
 * at the end, finish the stream and commit the output. */
void
finish_stream(struct ts_writer *w, struct ts_meta *meta,
    const struct ts_meta *inputs)
{
	int rc;

	cli_prov(meta);
	if (inputs != NULL && ts_meta_merge(meta, inputs, "", NULL) != 0)
		cli_die(EX_OSERR, "out of memory");
	if ((rc = ts_write_meta(w, meta)) != 0 ||
	    (rc = ts_writer_finish(w)) != 0)
		cli_wdie(w, rc);
	ts_writer_close(w);
	ts_meta_free(meta);
	cli_out_commit();
}

void
names_add(struct names *s, const char *name, int src)
{
	s->v = cli_reallocarray(s->v, s->n + 1, sizeof *s->v);
	s->src = cli_reallocarray(s->src, s->n + 1, sizeof *s->src);
	s->v[s->n] = cli_strdup(name);
	s->src[s->n++] = src;
}

long
names_find(const struct names *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], name) == 0)
			return (long)i;
	return -1;
}

/* "a, b, c" (at most MAX_LISTED names) in a static buffer. */
const char *
names_list(const struct names *s)
{
	static char buf[MAX_LISTED * (TS_MAX_NAME + 2) + 64];
	size_t len = 0;

	if (s->n == 0)
		return "no tensors";
	buf[0] = '\0';
	for (size_t i = 0; i < s->n && i < MAX_LISTED; i++)
		len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s",
		    i ? ", " : "", s->v[i]);
	if (s->n > MAX_LISTED)
		snprintf(buf + len, sizeof buf - len, ", ... (%zu in all)", s->n);
	return buf;
}

void
names_free(struct names *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	free(s->src);
	memset(s, 0, sizeof *s);
}

/* Open each operand (none: stdin) before reading any. */
FILE **
open_inputs(int argc, char **argv, const char ***labels, int *n)
{
	FILE **fps;

	*n = argc > 0 ? argc : 1;
	fps = cli_reallocarray(NULL, (size_t)*n, sizeof *fps);
	*labels = cli_reallocarray(NULL, (size_t)*n, sizeof **labels);
	for (int i = 0; i < *n; i++)
		fps[i] = cli_open_in(argc > 0 ? argv[i] : NULL, &(*labels)[i]);
	return fps;
}

void
one_operand(int argc, const char *cmd)
{
	if (argc > 1)
		cli_usage_error("%s takes at most one input file", cmd);
}
