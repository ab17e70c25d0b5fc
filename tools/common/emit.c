/* emit.c: the pieces of the tools' text, TSV and JSON reports (see
 * emit.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "emit.h"
#include "tensor.h"

void
emit_num(FILE *fp, int fmt, double v)
{
	if (isfinite(v))
		fprintf(fp, "%.17g", v);
	else if (fmt == EMIT_JSON)
		fputs("null", fp);
	else
		fputs(isnan(v) ? "nan" : v > 0 ? "inf" : "-inf", fp);
}

void
emit_jstr_flags(FILE *fp, const char *s, unsigned flags)
{
	int utf8 = !(flags & EMIT_J_UTF8) || ts_utf8_valid(s, strlen(s));
	int shrt = (flags & EMIT_J_SHORT) != 0;

	fputc('"', fp);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(fp, "\\%c", *p);
		else if (shrt && *p == '\n')
			fputs("\\n", fp);
		else if (shrt && *p == '\t')
			fputs("\\t", fp);
		else if (*p < 0x20 || (shrt && *p == 0x7f))
			fprintf(fp, "\\u%04x", *p);
		else if (*p >= 0x80 && !utf8)
			fputc('?', fp);
		else
			fputc(*p, fp);
	}
	fputc('"', fp);
}

void
emit_jstr(FILE *fp, const char *s)
{
	emit_jstr_flags(fp, s, 0);
}

void
emit_jkey(FILE *fp, int *first, const char *key)
{
	fprintf(fp, "%s\"%s\":", *first ? "" : ",", key);
	*first = 0;
}

void
emit_jnum(FILE *fp, int *first, const char *key, double v)
{
	emit_jkey(fp, first, key);
	emit_num(fp, EMIT_JSON, v);
}

void
emit_jbool(FILE *fp, int *first, const char *key, int v)
{
	emit_jkey(fp, first, key);
	fputs(v ? "true" : "false", fp);
}

void
emit_tstr(FILE *fp, const char *s)
{
	for (const char *p = s; *p; p++) {
		if (*p == '\t')
			fputs("\\t", fp);
		else if (*p == '\n')
			fputs("\\n", fp);
		else if (*p == '\r')
			fputs("\\r", fp);
		else if (*p == '\\')
			fputs("\\\\", fp);
		else
			fputc(*p, fp);
	}
}

char *
emit_escape(const char *s)
{
	size_t n = strlen(s), k = 0;
	char *out = cli_reallocarray(NULL, n + 1, 4);

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '\n')
			k += (size_t)sprintf(out + k, "\\n");
		else if (c == '\t')
			k += (size_t)sprintf(out + k, "\\t");
		else if (c < 0x20 || c == 0x7f)
			k += (size_t)sprintf(out + k, "\\x%02x", c);
		else
			out[k++] = (char)c;
	}
	out[k] = '\0';
	return out;
}

size_t
emit_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			w++;
	return w;
}

void
emit_table_add(struct emit_table *t, char **row)
{
	t->cell = cli_reallocarray(t->cell, (t->nrows + 1) * t->ncols,
	    sizeof *t->cell);
	for (size_t j = 0; j < t->ncols; j++)
		t->cell[t->nrows * t->ncols + j] = emit_escape(row[j] ?
		    row[j] : "");
	t->nrows++;
}

void
emit_table_print(FILE *fp, struct emit_table *t, const char *indent)
{
	size_t w[EMIT_MAX_COLS] = { 0 };

	for (size_t i = 0; i < t->nrows; i++)
		for (size_t j = 0; j < t->ncols; j++) {
			size_t x = emit_width(t->cell[i * t->ncols + j]);
			if (x > w[j])
				w[j] = x;
		}
	for (size_t i = 0; i < t->nrows; i++) {
		size_t last = t->ncols;
		while (last > 1 && t->cell[i * t->ncols + last - 1][0] == '\0')
			last--;
		fputs(indent, fp);
		for (size_t j = 0; j < last; j++) {
			const char *c = t->cell[i * t->ncols + j];
			fputs(c, fp);
			if (j + 1 < last)
				fprintf(fp, "%*s", (int)(w[j] -
				    emit_width(c) + 2), "");
		}
		fputc('\n', fp);
	}
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cell[i]);
	free(t->cell);
	t->cell = NULL;
	t->nrows = 0;
}
