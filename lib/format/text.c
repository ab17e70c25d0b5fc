/* text.c: token and bigram counts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "xxh64.h"

int
text_tok_char(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
	    ch == '\'';
}

int
text_tokenize(char *s, size_t n, size_t **tok, size_t *cap, size_t *nt)
{
	*nt = 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] >= 'A' && s[i] <= 'Z')
			s[i] = (char)(s[i] - 'A' + 'a');
	for (size_t i = 0; i < n; ) {
		if (!text_tok_char((unsigned char)s[i])) {
			i++;
			continue;
		}
		size_t st = i;
		while (i < n && text_tok_char((unsigned char)s[i]))
			i++;
		if (strtab_grow((void **)tok, cap, 2 * *nt + 2,
		    sizeof **tok) != 0)
			return PV_E_NOMEM;
		(*tok)[2 * *nt] = st;
		(*tok)[2 * *nt + 1] = i - st;
		(*nt)++;
	}
	return 0;
}

int
text_vocab_entry_ok(const char *s)
{
	int toks = 0;

	while (*s) {
		if (!text_tok_char((unsigned char)*s))
			return 0;
		while (text_tok_char((unsigned char)*s))
			s++;
		toks++;
		if (*s == ' ' && toks == 1 && s[1] != '\0')
			s++;
		else if (*s != '\0')
			return 0;
	}
	return toks >= 1;
}

int
text_read_line(FILE *fp, char **line, size_t *cap, size_t *len, size_t max)
{
	size_t n = 0;
	int ch = EOF;

	while ((ch = getc_unlocked(fp)) != EOF) {
		if (ch != '\n' && n == max) {
			*len = n;
			return PV_E_LIMIT;
		}
		if (n + 2 > *cap) {
			size_t nc = *cap < 256 ? 256 : *cap * 2;
			char *p;

			if (nc > max + 2)
				nc = max + 2;
			if ((p = realloc(*line, nc)) == NULL)
				return PV_E_NOMEM;
			*line = p;
			*cap = nc;
		}
		(*line)[n++] = (char)ch;
		if (ch == '\n')
			break;
	}
	*len = n;
	if (ch == EOF && ferror(fp))
		return PV_E_IO;
	if (n == 0)
		return 0;
	(*line)[n] = '\0';
	return 1;
}

int
text_field(char *line, size_t len, uint64_t k, char **start, char **end)
{
	char *p = line, *e;

	for (uint64_t i = 0; i < k; i++) {
		if ((p = memchr(p, '\t', (size_t)(line + len - p))) == NULL)
			return -1;
		p++;
	}
	e = memchr(p, '\t', (size_t)(line + len - p));
	*start = p;
	*end = e ? e : line + len;
	return 0;
}

int
text_label(char *line, size_t len, uint64_t k, char **start, char **end,
    char msg[TEXT_MSG])
{
	if (memchr(line, '\t', len) == NULL) {
		snprintf(msg, TEXT_MSG, "no tab separator between the label "
		    "(field %llu) and the document", (unsigned long long)k);
		return PV_E_FORMAT;
	}
	if (text_field(line, len, k, start, end) != 0) {
		snprintf(msg, TEXT_MSG, "no label: fewer than %llu "
		    "tab-separated fields", (unsigned long long)k + 1);
		return PV_E_FORMAT;
	}
	if (*end == *start) {
		snprintf(msg, TEXT_MSG, "field %llu: missing label",
		    (unsigned long long)k);
		return 1;
	}
	return 0;
}

/* Count a unigram or bigram key: a vocabulary column, or a bucket. */
static int
count_key(struct text_counter *c, const char *k, size_t n, double *row)
{
	size_t col;

	if (c->vocab) {
		long long i = strtab_find(c->vocab, k, n);
		if (i < 0)
			return 0;
		col = (size_t)i;
	} else {
		col = (size_t)(ts_xxh64(k, n, TEXT_HASH_SEED) % c->d);
	}
	if (row[col] == 0) {
		if (strtab_grow((void **)&c->touched, &c->ttcap,
		    c->ntouch + 1,
		    sizeof *c->touched) != 0)
			return PV_E_NOMEM;
		c->touched[c->ntouch++] = col;
	}
	row[col] += 1;
	return 0;
}

int
text_count(struct text_counter *c, char *doc, size_t n, double *row)
{
	size_t nt;

	c->ntouch = 0;
	if (text_tokenize(doc, n, &c->tok, &c->tcap, &nt) != 0)
		return PV_E_NOMEM;
	for (size_t t = 0; t < nt; t++) {
		size_t a = c->tok[2 * t], al = c->tok[2 * t + 1], b, bl;
		if (count_key(c, doc + a, al, row) != 0)
			return PV_E_NOMEM;
		if (t + 1 == nt)
			break;
		b = c->tok[2 * t + 2];
		bl = c->tok[2 * t + 3];
		if (strtab_grow((void **)&c->bg, &c->bgcap, al + bl + 2,
		    1) != 0)
			return PV_E_NOMEM;
		memcpy(c->bg, doc + a, al);
		c->bg[al] = ' ';
		memcpy(c->bg + al + 1, doc + b, bl);
		c->bg[al + 1 + bl] = '\0';
		if (count_key(c, c->bg, al + 1 + bl, row) != 0)
			return PV_E_NOMEM;
	}
	return 0;
}

void
text_clear(struct text_counter *c, double *row)
{
	for (size_t t = 0; t < c->ntouch; t++)
		row[c->touched[t]] = 0;
	c->ntouch = 0;
}

void
text_counter_free(struct text_counter *c)
{
	free(c->tok);
	free(c->touched);
	free(c->bg);
	c->tok = c->touched = NULL;
	c->bg = NULL;
	c->tcap = c->ttcap = c->bgcap = c->ntouch = 0;
}
