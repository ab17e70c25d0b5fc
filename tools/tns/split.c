/* split.c: tns split: partition the rows into disjoint, shuffled parts,
 * each marked as a part of one split in the ledger. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "cli.h"
#include "dpcli.h"
#include "pverr.h"
#include "split.h"
#include "tensor.h"
#include "tns.h"
#include "tstream.h"

int
cmd_split(struct opts *o, int argc, char **argv)
{
	const char *label;
	FILE *in;
	struct ts_reader *r;
	struct tensor *t = NULL, hdr;
	size_t nt = 0, nparts;
	struct names all = { 0 }, want = { 0 };
	uint64_t rows = 0, seed, *perm, *size, start = 0, digest;
	const char *seed_source;
	uint64_t parent, split_id;
	const char *bad;
	int width = 1, rc;

	one_operand(argc, "split");
	if ((o->parts != 0) == (o->nfractions != 0))
		cli_usage_error("split needs exactly one of --parts and "
		    "--fractions");
	nparts = o->parts ? (size_t)o->parts : o->nfractions;
	if (o->tensors != NULL) {
		char *list = cli_strdup(o->tensors);
		for (char *s = list, *tok; (tok = strsep(&s, ",")) != NULL;) {
			if (*tok == '\0' || ts_check_name(tok) != NULL)
				cli_usage_error("invalid --tensors: '%s' is not "
				    "a tensor name", tok);
			if (names_find(&want, tok) < 0)
				names_add(&want, tok, 0);
		}
		free(list);
	}
	if (o->c.seed != NULL) {
		seed = dpcli_seed_arg(o->c.seed);
		seed_source = "seed";
	} else {
		unsigned char b[8];
		ssize_t got = getrandom(b, sizeof b, 0);
		if (got != (ssize_t)sizeof b)
			cli_die(EX_OSERR, "no secure randomness: getrandom: %s",
			    got < 0 ? strerror(errno) : "short read");
		seed = 0;
		for (int i = 0; i < 8; i++)
			seed |= (uint64_t)b[i] << (8 * i);
		seed_source = "getrandom";
	}
	in = cli_open_in(argc ? argv[0] : NULL, &label);
	r = cli_reader(in, label);
	/* The rows are held in memory: a part's rows come from anywhere in
	 * the input. */
	while ((rc = ts_read_next(r, &hdr)) == 1) {
		names_add(&all, hdr.name, 0);
		if (want.n > 0 && names_find(&want, hdr.name) < 0) {
			tensor_free(&hdr);
			continue;
		}
		if (hdr.ndim == 0)
			cli_die(EX_DATAERR, "%s: tensor '%s' is a scalar: it has "
			    "no rows to split (select others with --tensors)",
			    label, hdr.name);
		if ((rc = ts_read_data(r, &hdr)) != 0)
			cli_rdie(r, rc);
		if (nt > 0 && hdr.dims[0] != rows)
			cli_die(EX_DATAERR, "%s: tensor '%s' has %llu rows, '%s' "
			    "has %llu: split needs equal row counts (select "
			    "tensors with --tensors)", label, hdr.name,
			    (unsigned long long)hdr.dims[0], t[0].name,
			    (unsigned long long)rows);
		rows = hdr.dims[0];
		t = cli_reallocarray(t, nt + 1, sizeof *t);
		t[nt++] = hdr;
	}
	if (rc < 0)
		cli_rdie(r, rc);
	for (size_t k = 0; k < want.n; k++)
		if (names_find(&all, want.v[k]) < 0)
			cli_die(EX_DATAERR, "%s: --tensors: no tensor '%s'; the "
			    "stream has: %s", label, want.v[k], names_list(&all));
	if (nt == 0)
		cli_die(EX_DATAERR, "%s: no tensor to split", label);
	digest = ts_reader_digest(r);

	size = cli_reallocarray(NULL, nparts, sizeof *size);
	split_sizes(rows, nparts, o->parts ? NULL : o->fractions, size);
	/* A part with no rows is most likely a mistake (--parts 10 of a
	 * 3-row file): refused unless asked for. */
	for (size_t i = 0; i < nparts && !o->allow_empty; i++)
		if (size[i] == 0)
			cli_die(EX_DATAERR, "%s: %llu rows leave part %zu of %zu "
			    "empty (--allow-empty to write it)", label,
			    (unsigned long long)rows, i, nparts);
	if (split_permutation(rows, seed, &perm) != 0)
		cli_die(EX_OSERR, "out of memory");
	/* The split's identity, the same in every part and fresh on every
	 * run, seeded or not: parts of two runs may overlap (teacher-vote
	 * and kde-publish check).  Random, never a digest of the input: an
	 * unkeyed digest of the rows would let anyone who knows the other
	 * records test whether one was in them (tensor-stream.md, 10.2). */
	if (split_new_ids(&parent, &split_id) != 0)
		cli_die(EX_OSERR, "no secure randomness: %s", strerror(errno));
	for (size_t x = nparts - 1; x >= 10; x /= 10)
		width++;
	for (size_t i = 0; i < nparts; i++) {
		struct ts_meta meta = { 0 }, prov = { 0 };
		struct ts_writer *w;
		char *path;
		FILE *fp;

		if (asprintf(&path, "%s%0*zu.tns", o->prefix, width, i) < 0)
			cli_die(EX_OSERR, "out of memory");
		fp = cli_out_open_path(path);
		w = cli_writer_label(fp, path, o->c.level);
		for (size_t j = 0; j < nt; j++) {
			struct tensor h = t[j];
			uint64_t rb;
			const unsigned char *d = t[j].data;

			tensor_row_bytes(&t[j], &rb);
			h.dims[0] = size[i];
			if ((rc = ts_write_begin(w, &h)) != 0)
				cli_wdie(w, rc);
			for (uint64_t k = start; k < start + size[i]; k++)
				if ((rc = ts_write_rows(w, d + perm[k] * rb, 1))
				    != 0)
					cli_wdie(w, rc);
			if ((rc = ts_write_end(w)) != 0)
				cli_wdie(w, rc);
		}
		cli_inherit(&meta, ts_reader_meta(r), label);
		rc = split_mark(&meta, i, nparts, seed_source, parent, split_id,
		    &bad);
		if (rc == PV_E_LIMIT)
			cli_die(EX_DATAERR, "%s: ledger key '%s' is too long to "
			    "record in split.raw", label, bad);
		if (rc != 0)
			cli_die(EX_OSERR, "out of memory");
		cli_prov_input(&prov, 0, label, digest, ts_reader_meta(r));
		cli_out_finish(w, &meta, &prov);
		/* Closed now, to bound the open files; renamed into place
		 * by cli_out_commit, so parts appear only when all were
		 * written, and all of them or none. */
		cli_out_close(fp);
		ts_meta_free(&meta);
		ts_meta_free(&prov);
		if (o->c.verbose)
			fprintf(stderr, "%s: %s: %llu rows\n", cli_prog(),
			    path, (unsigned long long)size[i]);
		free(path);
		start += size[i];
	}
	ts_reader_close(r);
	cli_close_in(in);
	for (size_t j = 0; j < nt; j++)
		tensor_free(&t[j]);
	free(t);
	free(perm);
	free(size);
	names_free(&all);
	names_free(&want);
	cli_out_commit();
	return 0;
}
