/*
 * emit.h: the pieces of the tools' text, TSV and JSON reports
 * (rdp-account's accounts and ledger totals, tns info).  Tools only:
 * these write to a stream and never fail on their own (the caller checks
 * the stream, as cli_out_commit does).
 */
#ifndef PRIVADA_EMIT_H
#define PRIVADA_EMIT_H

#include <stdio.h>

enum emit_fmt { EMIT_TEXT, EMIT_TSV, EMIT_JSON };

/* A number as %.17g; a non-finite one as null in JSON, otherwise "inf",
 * "-inf" or "nan". */
void emit_num(FILE *fp, int fmt, double v);

/* JSON string literals.  emit_jstr: '"' and '\\' escaped, control
 * characters as \u00XX.  With EMIT_J_SHORT, \n and \t have their short
 * escapes and DEL is escaped too; with EMIT_J_UTF8, the bytes >= 0x80
 * of a string that is not UTF-8 (a file name) become '?'. */
#define EMIT_J_SHORT	1u
#define EMIT_J_UTF8	2u
void emit_jstr(FILE *fp, const char *s);
void emit_jstr_flags(FILE *fp, const char *s, unsigned flags);

/* A JSON member: the separator (none before the first) and the key. */
void emit_jkey(FILE *fp, int *first, const char *key);
void emit_jnum(FILE *fp, int *first, const char *key, double v);
void emit_jbool(FILE *fp, int *first, const char *key, int v);

/* A string in a TSV field or a text line: tab, newline, carriage return
 * and backslash escaped, so one record stays one line. */
void emit_tstr(FILE *fp, const char *s);

/* Text for a terminal: control characters escaped (\n, \t, \xNN), so
 * data cannot drive it.  The result is malloc'd (exits 71 when out of
 * memory). */
char *emit_escape(const char *s);
/* Display width of UTF-8 text: its code points. */
size_t emit_width(const char *s);

/* A table printed with its columns aligned two spaces apart; empty
 * trailing cells are not padded.  At most EMIT_MAX_COLS columns. */
#define EMIT_MAX_COLS 16
struct emit_table {
	char **cell;
	size_t ncols, nrows;
};

/* Add a row of ncols cells (NULL: empty), escaped with emit_escape. */
void emit_table_add(struct emit_table *t, char **row);
/* Print the rows, each after indent, and empty the table. */
void emit_table_print(FILE *fp, struct emit_table *t,
    const char *indent);

#endif
