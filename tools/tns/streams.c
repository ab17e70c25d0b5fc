/* streams.c: tns verify, cat, pick and meta set: check streams, join
 * them, select tensors, set metadata. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cpus.h"
#include "ledger.h"
#include "tensor.h"
#include "tns.h"
#include "tstream.h"

/* Done with input idx, read to its end: the output inherits its metadata
 * and records its digest; then close it. */
static void
input_done(struct ts_reader *r, FILE *in, const char *label, int idx,
    struct ts_meta *meta, struct ts_meta *prov)
{
	cli_inherit(meta, ts_reader_meta(r), label);
	cli_prov_input(prov, idx, label, ts_reader_digest(r),
	    ts_reader_meta(r));
	ts_reader_close(r);
	cli_close_in(in);
}

/* ---- verify ---- */

int
cmd_verify(struct opts *o, int argc, char **argv)
{
	const char **labels;
	int n, status = 0;
	FILE **fps = open_inputs(argc, argv, &labels, &n);
	struct tensor hdr;

	for (int i = 0; i < n; i++) {
		struct ts_reader *r = tns_reader(fps[i], labels[i]);
		int rc;

		/* ts_read_next skips unread rows by decompressing them, so
		 * every byte is checked without holding a tensor in memory. */
		while ((rc = ts_read_next(r, &hdr)) == 1)
			tensor_free(&hdr);
		if (rc < 0) {
			if (rc == TS_E_NOMEM || rc == TS_E_USAGE)
				cli_rdie(r, rc);
			fprintf(stderr, "%s: %s\n", cli_prog(),
			    ts_reader_errmsg(r));
			if (status == 0)
				status = rc == TS_E_IO ? EX_IOERR : EX_DATAERR;
		} else if (o->c.verbose) {
			printf("%s: ok\n", labels[i]);
		}
		ts_reader_close(r);
		cli_close_in(fps[i]);
	}
	free(fps);
	free(labels);
	cli_out_commit();
	return status;
}

/* ---- cat ---- */

int
cmd_cat(struct opts *o, int argc, char **argv)
{
	const char **labels;
	int n;
	FILE **fps = open_inputs(argc, argv, &labels, &n);
	struct ts_writer *w = cli_writer(cli_out_open(o->c.output, o->c.force),
	    o->c.level);
	struct ts_meta meta = { 0 }, prov = { 0 };
	struct names seen = { 0 };
	struct cli_rowbuf b = { NULL, 0 };
	struct tensor hdr;

	/* Compression overlaps decompression when a second CPU is free;
	 * the bytes are the same either way. */
	if (pv_cpus() > 1)
		(void)ts_writer_set_async(w, 1);
	for (int i = 0; i < n; i++) {
		struct ts_reader *r = tns_reader(fps[i], labels[i]);
		int rc;

		while ((rc = ts_read_next(r, &hdr)) == 1) {
			long j = names_find(&seen, hdr.name);
			if (j >= 0)
				cli_die(EX_DATAERR, "%s: tensor '%s' is also in "
				    "%s (names must be unique; rename with "
				    "'tns pick --rename')", labels[i], hdr.name,
				    labels[seen.src[j]]);
			names_add(&seen, hdr.name, i);
			cli_pass_tensor(r, w, &hdr, &b);
			tensor_free(&hdr);
		}
		if (rc < 0)
			cli_rdie(r, rc);
		input_done(r, fps[i], labels[i], i, &meta, &prov);
	}
	cli_progress_done();
	if (o->c.verbose)
		fprintf(stderr, "%s: %zu tensors from %d streams\n", cli_prog(),
		    seen.n, n);
	finish_stream(w, &meta, &prov);
	ts_meta_free(&prov);
	names_free(&seen);
	cli_rowbuf_free(&b);
	free(fps);
	free(labels);
	return 0;
}

/* ---- pick ---- */

int
cmd_pick(struct opts *o, int argc, char **argv)
{
	const char *label;
	FILE *in;
	struct ts_reader *r;
	struct ts_writer *w;
	struct ts_meta meta = { 0 }, prov = { 0 };
	struct names all = { 0 }, out = { 0 };
	struct cli_rowbuf b = { NULL, 0 };
	struct tensor hdr;
	char *matched, *renamed;
	int rc;

	if (argc < 1)
		cli_usage_error("pick needs at least one tensor name (the "
		    "input is -i FILE or stdin)");
	for (size_t k = 0; k < o->nrenames; k++) {
		char *eq = strchr(o->renames[k], '=');
		const char *bad;
		if (eq == NULL || eq == o->renames[k])
			cli_usage_error("invalid --rename '%s': expected "
			    "OLD=NEW", o->renames[k]);
		if ((bad = ts_check_name(eq + 1)) != NULL)
			cli_usage_error("invalid --rename '%s': %s",
			    o->renames[k], bad);
	}
	matched = cli_malloc((size_t)argc);
	memset(matched, 0, (size_t)argc);
	renamed = cli_malloc(o->nrenames);
	memset(renamed, 0, o->nrenames);
	in = cli_open_in(o->input, &label);
	w = cli_writer(cli_out_open(o->c.output, o->c.force), o->c.level);
	r = cli_reader(in, label);
	while ((rc = ts_read_next(r, &hdr)) == 1) {
		int hit = 0;

		names_add(&all, hdr.name, 0);
		for (int k = 0; k < argc; k++)
			if (fnmatch(argv[k], hdr.name, 0) == 0)
				hit = matched[k] = 1;
		if (hit) {
			for (size_t k = 0; k < o->nrenames; k++) {
				char *eq = strchr(o->renames[k], '=');
				if ((size_t)(eq - o->renames[k]) ==
				    strlen(hdr.name) && strncmp(o->renames[k],
				    hdr.name, strlen(hdr.name)) == 0) {
					snprintf(hdr.name, sizeof hdr.name,
					    "%s", eq + 1);
					renamed[k] = 1;
					break;
				}
			}
			if (names_find(&out, hdr.name) >= 0)
				cli_usage_error("tensor name '%s' would appear "
				    "twice in the output (check --rename)",
				    hdr.name);
			names_add(&out, hdr.name, 0);
			cli_pass_tensor(r, w, &hdr, &b);
		}
		tensor_free(&hdr);
	}
	if (rc < 0)
		cli_rdie(r, rc);
	for (int k = 0; k < argc; k++)
		if (!matched[k])
			cli_die(EX_DATAERR, "%s: no tensor matches '%s'; the "
			    "stream has: %s", label, argv[k], names_list(&all));
	for (size_t k = 0; k < o->nrenames; k++)
		if (!renamed[k])
			cli_die(EX_DATAERR, "%s: --rename '%s': no picked tensor "
			    "has that name; the stream has: %s", label,
			    o->renames[k], names_list(&all));
	cli_progress_done();
	input_done(r, in, label, 0, &meta, &prov);
	if (o->c.verbose)
		fprintf(stderr, "%s: picked %zu of %zu tensors\n", cli_prog(),
		    out.n, all.n);
	finish_stream(w, &meta, &prov);
	ts_meta_free(&prov);
	names_free(&all);
	names_free(&out);
	free(matched);
	free(renamed);
	cli_rowbuf_free(&b);
	return 0;
}

/* ---- meta set ---- */

int
cmd_meta(struct opts *o, int argc, char **argv)
{
	const char *label;
	FILE *in;
	struct ts_reader *r;
	struct ts_writer *w;
	struct ts_meta meta = { 0 }, prov = { 0 }, set = { 0 };
	struct cli_rowbuf b = { NULL, 0 };
	struct tensor hdr;
	int rc;

	if (argc < 1 || strcmp(argv[0], "set") != 0)
		cli_usage_error(argc < 1 ? "meta needs a command: set" :
		    "unknown meta command '%s' (known: set)", argv[0]);
	if (argc < 2)
		cli_usage_error("meta set needs at least one KEY=VALUE");
	for (int k = 1; k < argc; k++) {
		/* A copy: argv stays as typed for prov.args. */
		char *key = cli_strdup(argv[k]), *eq = strchr(key, '=');
		const char *bad;

		if (eq == NULL)
			cli_usage_error("invalid metadata '%s': expected "
			    "KEY=VALUE", argv[k]);
		*eq = '\0';
		if ((bad = ts_check_key(key)) != NULL)
			cli_usage_error("invalid metadata key '%s': %s", key,
			    bad);
		if (strncmp(key, "prov.", 5) == 0)
			cli_usage_error("metadata key '%s': prov.* keys are "
			    "written by the tools", key);
		if (strncmp(key, "dp.", 3) == 0 && !o->unsafe_ledger)
			cli_usage_error("refusing to set ledger key '%s': dp.* "
			    "keys are written by the DP tools "
			    "(--unsafe-ledger is for tests)", key);
		if (!ts_utf8_valid(eq + 1, strlen(eq + 1)))
			cli_usage_error("metadata '%s': value is not UTF-8",
			    key);
		cli_meta_set(&set, key, eq + 1);
		free(key);
	}
	in = cli_open_in(o->input, &label);
	w = cli_writer(cli_out_open(o->c.output, o->c.force), o->c.level);
	r = cli_reader(in, label);
	while ((rc = ts_read_next(r, &hdr)) == 1) {
		cli_pass_tensor(r, w, &hdr, &b);
		tensor_free(&hdr);
	}
	if (rc < 0)
		cli_rdie(r, rc);
	cli_progress_done();
	input_done(r, in, label, 0, &meta, &prov);
	/* A test that forges a ledger forges all of it: the mark of rows
	 * imported without one goes (unless set again). */
	if (o->unsafe_ledger)
		ts_meta_del(&meta, LEDGER_PROVENANCE_KEY);
	for (size_t k = 0; k < set.n; k++) {
		const char *old = ts_meta_get(&meta, set.kv[k].key);
		/* tns adds ledger entries on request but never changes or
		 * removes one. */
		if (old != NULL && strncmp(set.kv[k].key, "dp.", 3) == 0 &&
		    strcmp(old, set.kv[k].val) != 0)
			cli_die(EX_DATAERR, "%s: ledger entry '%s' exists with "
			    "another value; tns never changes ledger entries",
			    label, set.kv[k].key);
		cli_meta_set(&meta, set.kv[k].key, set.kv[k].val);
	}
	finish_stream(w, &meta, &prov);
	ts_meta_free(&prov);
	ts_meta_free(&set);
	cli_rowbuf_free(&b);
	return 0;
}
