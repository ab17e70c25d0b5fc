/* info.c: tns info: describe streams (tensors, metadata, privacy
 * ledger) in text or JSON. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "emit.h"
#include "tensor.h"
#include "tns.h"
#include "tstream.h"
#include "tsvalue.h"

/* JSON strings: UTF-8 passes through (the reader checked it), control
 * characters are escaped; bytes of a file name that are not UTF-8 become
 * '?'. */
#define JSTR (EMIT_J_SHORT | EMIT_J_UTF8)

static void
read_info(struct finfo *fi, FILE *fp, const char *label, int want_stats,
    struct cli_rowbuf *b)
{
	struct ts_reader *r = cli_reader(fp, label);
	struct tensor hdr;
	int rc, major, minor;

	memset(fi, 0, sizeof *fi);
	fi->label = label;
	while ((rc = ts_read_next(r, &hdr)) == 1) {
		struct tinfo *ti;
		uint64_t rb = ts_reader_row_bytes(r), rows = 0, n;
		int done = 0;

		fi->t = cli_reallocarray(fi->t, fi->nt + 1, sizeof *fi->t);
		ti = &fi->t[fi->nt++];
		memset(ti, 0, sizeof *ti);
		memcpy(ti->name, hdr.name, sizeof ti->name);
		ti->dtype = hdr.dtype;
		ti->ndim = hdr.ndim;
		memcpy(ti->dims, hdr.dims, sizeof ti->dims);
		ti->streamed = hdr.ndim > 0 && hdr.dims[0] == TS_UNKNOWN_ROWS;
		ti->meta = hdr.meta;
		memset(&hdr.meta, 0, sizeof hdr.meta);
		if (want_stats) {
			uint64_t cap = cli_rowbuf_rows(b, rb, &hdr);
			uint64_t per = rb / ts_dtype_size(ti->dtype);
			while (!done) {
				n = cli_fill_rows(r, b->p, rb, cap, &done);
				ts_stats_update(&ti->st, ti->dtype, b->p, n * per);
				rows += n;
			}
		} else {
			int64_t k;
			while ((k = ts_read_rows(r, NULL, UINT64_MAX)) > 0)
				rows += (uint64_t)k;
			if (k < 0)
				cli_rdie(r, (int)k);
		}
		if (ti->ndim > 0)
			ti->dims[0] = rows;
		/* rows * rb was checked by the reader as rows arrived. */
		ti->bytes = rows * rb;
		tensor_free(&hdr);
	}
	if (rc < 0)
		cli_rdie(r, rc);
	if (ts_reader_version(r, &major, &minor) == 0)
		snprintf(fi->version, sizeof fi->version, "%d.%d", major, minor);
	else
		snprintf(fi->version, sizeof fi->version, "?");
	fi->digest = ts_reader_digest(r);
	if (ts_meta_merge(&fi->meta, ts_reader_meta(r), "", NULL) != 0)
		cli_die(EX_OSERR, "out of memory");
	ts_reader_close(r);
}

void
finfo_free(struct finfo *fi)
{
	for (size_t i = 0; i < fi->nt; i++)
		ts_meta_free(&fi->t[i].meta);
	free(fi->t);
	ts_meta_free(&fi->meta);
}

static void
fmt_shape(char *buf, size_t len, const struct tinfo *t)
{
	size_t k = 0;

	k += (size_t)snprintf(buf, len, "(");
	for (int i = 0; i < t->ndim; i++)
		k += (size_t)snprintf(buf + k, len - k, "%s%llu", i ? ", " : "",
		    (unsigned long long)t->dims[i]);
	snprintf(buf + k, len - k, t->ndim == 1 ? ",)" : ")");
}

/* Text output shortens long values (a ledger RDP curve, feature names)
 * unless -v; JSON always has them whole. */
static int show_full;
#define SHOW_MAX 72

static void
table_add_kv(struct emit_table *t, const struct ts_kv *kv)
{
	char *row[2] = { kv->key, kv->val }, *cut = NULL;
	size_t n = strlen(kv->val);

	if (!show_full && n > SHOW_MAX) {
		int k = SHOW_MAX - 12;
		while (k > 0 && ((unsigned char)kv->val[k] & 0xC0) == 0x80)
			k--;	/* cut between UTF-8 sequences */
		cut = cli_malloc(SHOW_MAX + 48);
		snprintf(cut, SHOW_MAX + 48, "%.*s... (%zu bytes; -v shows all)",
		    k, kv->val, n);
		row[1] = cut;
	}
	emit_table_add(t, row);
	free(cut);
}

static void
meta_table(FILE *fp, const struct ts_meta *m, const char *indent)
{
	struct emit_table t = { NULL, 2, 0 };

	for (size_t i = 0; i < m->n; i++)
		table_add_kv(&t, &m->kv[i]);
	emit_table_print(fp, &t, indent);
}

/* The ledger groups of dp.* keys other than dp.raw.*: "dp.A.B" from the
 * second and third dotted segments (or "dp.A" for a two-segment key), in
 * order of first appearance.  The ledger's semantics belong to the DP
 * tools; info only shows what is there. */
static size_t
ledger_group(const char *key, char *grp, size_t len)
{
	const char *p = key + 3, *dot = strchr(p, '.');
	size_t n;

	if (dot != NULL && (dot = strchr(dot + 1, '.')) != NULL)
		n = (size_t)(dot - key);
	else
		n = strlen(key);
	if (n >= len)
		n = len - 1;
	memcpy(grp, key, n);
	grp[n] = '\0';
	return n;
}

static int
is_raw_key(const char *key)
{
	return strncmp(key, "dp.raw.", 7) == 0 && key[7] != '\0';
}

/* Is key a ledger entry (dp.*, not dp.raw.*) of group grp? */
static int
in_group(const char *key, const char *grp)
{
	char g[TS_MAX_KEY + 1];

	if (strncmp(key, "dp.", 3) != 0 || is_raw_key(key))
		return 0;
	ledger_group(key, g, sizeof g);
	return strcmp(g, grp) == 0;
}

/* Does the i-th key of m open a ledger group (its first entry)?  Then
 * grp is set to the group. */
static int
group_first(const struct ts_meta *m, size_t i, char *grp, size_t len)
{
	const char *k = m->kv[i].key;

	if (strncmp(k, "dp.", 3) != 0 || is_raw_key(k))
		return 0;
	ledger_group(k, grp, len);
	for (size_t j = 0; j < i; j++)
		if (in_group(m->kv[j].key, grp))
			return 0;
	return 1;
}

static void
info_text(FILE *fp, const struct finfo *fi, int want_stats)
{
	struct emit_table t = { NULL, want_stats ? 9u : 5u, 0 };
	char shape[TS_MAX_NDIM * 22 + 4], bytes[24], mn[32], mx[32], mean[32],
	    nans[24];
	char *head[9] = { "name", "dtype", "shape", "bytes", "rows", "min",
	    "max", "mean", "nan" };
	const struct ts_meta *m = &fi->meta;
	int any = 0;

	fprintf(fp, "%s\n", fi->label);
	fprintf(fp, "  version  %s\n", fi->version);
	fprintf(fp, "  xxh64    %016llx\n", (unsigned long long)fi->digest);
	fprintf(fp, "  tensors  %zu\n", fi->nt);
	if (fi->nt > 0) {
		fputc('\n', fp);
		emit_table_add(&t, head);
	}
	for (size_t i = 0; i < fi->nt; i++) {
		const struct tinfo *ti = &fi->t[i];
		const struct ts_stats *s = &ti->st;
		char *row[9] = { (char *)ti->name,
		    (char *)ts_dtype_name(ti->dtype), shape, bytes,
		    ti->streamed ? "streamed" : "declared", mn, mx, mean, nans };

		fmt_shape(shape, sizeof shape, ti);
		snprintf(bytes, sizeof bytes, "%llu",
		    (unsigned long long)ti->bytes);
		if (s->count > 0) {
			ts_stat_format(mn, sizeof mn, ti->dtype, s->min,
			    s->imin, 1);
			ts_stat_format(mx, sizeof mx, ti->dtype, s->max,
			    s->imax, 1);
			ts_stat_format(mean, sizeof mean, ti->dtype,
			    ts_stats_mean(s), 0, 0);
		} else {
			strcpy(mn, "-");
			strcpy(mx, "-");
			strcpy(mean, "-");
		}
		snprintf(nans, sizeof nans, "%llu", (unsigned long long)s->nans);
		emit_table_add(&t, row);
	}
	emit_table_print(fp, &t, "  ");
	for (size_t i = 0; i < fi->nt; i++) {
		if (fi->t[i].meta.n == 0)
			continue;
		fprintf(fp, "\n  tensor %s metadata\n", fi->t[i].name);
		meta_table(fp, &fi->t[i].meta, "    ");
	}
	fprintf(fp, "\n  stream metadata\n");
	if (m->n == 0)
		fprintf(fp, "    (none)\n");
	meta_table(fp, m, "    ");
	fprintf(fp, "\n  ledger\n");
	for (size_t i = 0; i < m->n; i++) {
		if (!is_raw_key(m->kv[i].key))
			continue;
		char *ds = emit_escape(m->kv[i].key + 7),
		    *kind = emit_escape(m->kv[i].val);
		fprintf(fp, "    raw-derived from dataset %s (%s): NOT private\n",
		    ds, kind);
		free(ds);
		free(kind);
		any = 1;
	}
	for (size_t i = 0; i < m->n; i++) {
		char grp[TS_MAX_KEY + 1];
		struct emit_table gt = { NULL, 2, 0 };

		if (!group_first(m, i, grp, sizeof grp))
			continue;
		fprintf(fp, "    %s%s\n", grp, strcmp(grp, m->kv[i].key) ?
		    ".*" : "");
		for (size_t j = i; j < m->n; j++)
			if (in_group(m->kv[j].key, grp))
				table_add_kv(&gt, &m->kv[j]);
		emit_table_print(fp, &gt, "      ");
		any = 1;
	}
	if (!any)
		fprintf(fp, "    (no dp.* entries)\n");
}

/* A JSON number; NaN and infinities (not JSON numbers) as strings. */
static void
json_num(FILE *fp, int dtype, double v, int64_t iv, int exact_int)
{
	char buf[32];

	if (isnan(v) && !(exact_int && ts_dtype_is_int(dtype)))
		fputs("\"nan\"", fp);
	else if (isinf(v) && !(exact_int && ts_dtype_is_int(dtype)))
		fputs(v > 0 ? "\"inf\"" : "\"-inf\"", fp);
	else {
		ts_stat_format(buf, sizeof buf, dtype, v, iv, exact_int);
		fputs(buf, fp);
	}
}

static void
json_meta(FILE *fp, const struct ts_meta *m)
{
	fputc('{', fp);
	for (size_t i = 0; i < m->n; i++) {
		if (i)
			fputc(',', fp);
		emit_jstr_flags(fp, m->kv[i].key, JSTR);
		fputc(':', fp);
		emit_jstr_flags(fp, m->kv[i].val, JSTR);
	}
	fputc('}', fp);
}

void
info_json(FILE *fp, const struct finfo *fi, int want_stats)
{
	const struct ts_meta *m = &fi->meta;
	int first = 1;

	fputs("{\"file\":", fp);
	emit_jstr_flags(fp, fi->label, JSTR);
	fprintf(fp, ",\"version\":\"%s\",\"xxh64\":\"%016llx\",\"tensors\":[",
	    fi->version, (unsigned long long)fi->digest);
	for (size_t i = 0; i < fi->nt; i++) {
		const struct tinfo *ti = &fi->t[i];
		const struct ts_stats *s = &ti->st;

		fprintf(fp, "%s{\"name\":", i ? "," : "");
		emit_jstr_flags(fp, ti->name, JSTR);
		fprintf(fp, ",\"dtype\":\"%s\",\"shape\":[",
		    ts_dtype_name(ti->dtype));
		for (int d = 0; d < ti->ndim; d++)
			fprintf(fp, "%s%llu", d ? "," : "",
			    (unsigned long long)ti->dims[d]);
		fprintf(fp, "],\"streamed\":%s,\"bytes\":%llu,\"metadata\":",
		    ti->streamed ? "true" : "false",
		    (unsigned long long)ti->bytes);
		json_meta(fp, &ti->meta);
		if (want_stats) {
			fprintf(fp, ",\"stats\":{\"count\":%llu,\"nan\":%llu",
			    (unsigned long long)s->count,
			    (unsigned long long)s->nans);
			if (s->count > 0) {
				fputs(",\"min\":", fp);
				json_num(fp, ti->dtype, s->min, s->imin, 1);
				fputs(",\"max\":", fp);
				json_num(fp, ti->dtype, s->max, s->imax, 1);
				fputs(",\"mean\":", fp);
				json_num(fp, ti->dtype, ts_stats_mean(s), 0, 0);
			} else {
				fputs(",\"min\":null,\"max\":null,\"mean\":null",
				    fp);
			}
			fputc('}', fp);
		}
		fputc('}', fp);
	}
	fputs("],\"metadata\":", fp);
	json_meta(fp, m);
	fputs(",\"ledger\":{\"raw\":[", fp);
	for (size_t i = 0; i < m->n; i++) {
		if (!is_raw_key(m->kv[i].key))
			continue;
		fprintf(fp, "%s{\"dataset\":", first ? "" : ",");
		emit_jstr_flags(fp, m->kv[i].key + 7, JSTR);
		fputs(",\"kind\":", fp);
		emit_jstr_flags(fp, m->kv[i].val, JSTR);
		fputs(",\"private\":false}", fp);
		first = 0;
	}
	fputs("],\"groups\":[", fp);
	first = 1;
	for (size_t i = 0; i < m->n; i++) {
		char grp[TS_MAX_KEY + 1];
		int f2 = 1;

		if (!group_first(m, i, grp, sizeof grp))
			continue;
		fprintf(fp, "%s{\"group\":", first ? "" : ",");
		emit_jstr_flags(fp, grp, JSTR);
		fputs(",\"entries\":{", fp);
		for (size_t j = i; j < m->n; j++) {
			const char *kj = m->kv[j].key;
			if (!in_group(kj, grp))
				continue;
			if (!f2)
				fputc(',', fp);
			emit_jstr_flags(fp, kj, JSTR);
			fputc(':', fp);
			emit_jstr_flags(fp, m->kv[j].val, JSTR);
			f2 = 0;
		}
		fputs("}}", fp);
		first = 0;
	}
	fputs("]}}\n", fp);
}

int
cmd_info(struct opts *o, int argc, char **argv)
{
	const char **labels;
	int n;
	FILE **fps = open_inputs(argc, argv, &labels, &n);
	struct cli_rowbuf b = { NULL, 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *mem;

	show_full = o->c.verbose;

	/* Everything is read before anything is printed: a bad stream
	 * leaves stdout empty. */
	if ((mem = open_memstream(&text, &len)) == NULL)
		cli_die(EX_OSERR, "out of memory");
	for (int i = 0; i < n; i++) {
		struct finfo fi;

		read_info(&fi, fps[i], labels[i], o->stats, &b);
		cli_close_in(fps[i]);
		if (o->json) {
			info_json(mem, &fi, o->stats);
		} else {
			if (i > 0)
				fputc('\n', mem);
			info_text(mem, &fi, o->stats);
		}
		finfo_free(&fi);
	}
	if (fclose(mem) != 0)
		cli_die(EX_OSERR, "out of memory");
	fwrite(text, 1, len, stdout);
	free(text);
	cli_rowbuf_free(&b);
	free(fps);
	free(labels);
	cli_out_commit();
	return 0;
}
