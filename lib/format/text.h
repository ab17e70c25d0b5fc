/*
 * text.h: bag-of-words features of featurize --format text.  A token is
 * a maximal run of [a-z0-9'] after ASCII lowercasing; a document's
 * features are the counts of its tokens and of its bigrams (two
 * consecutive tokens joined by one space), each in a column: its entry
 * in a vocabulary, or bucket XXH64(key, TEXT_HASH_SEED) mod d.
 *
 * Ownership: a text_counter borrows its vocabulary and owns its scratch
 * buffers (text_counter_free); rows are the caller's.  Nothing here
 * prints, exits or reads the environment.  Errors: PV_E_NOMEM.
 */
#ifndef PRIVADA_TEXT_H
#define PRIVADA_TEXT_H

#include "pverr.h"

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "strtab.h"

#define TEXT_HASH_SEED 0	/* XXH64 seed of the hashed columns */
#define TEXT_MAX_LINE ((size_t)1 << 28)	/* bytes in one line, as a CSV field */

/* Whether byte ch belongs to a token: [a-z0-9']. */
int text_tok_char(int ch);

/*
 * Lowercase s[0..n) in place (ASCII) and store its tokens as (start,
 * length) pairs in (*tok)[0..2 * *nt), growing *tok (capacity *cap, in
 * entries).  @return 0 or PV_E_NOMEM.
 */
int text_tokenize(char *s, size_t n, size_t **tok, size_t *cap, size_t *nt);

/* Whether s is a vocabulary entry: one token, or two joined by a space. */
int text_vocab_entry_ok(const char *s);

/*
 * Field k (from 0) of the tab-separated line[0..len): *start and *end
 * bound it (excluded tab).  @return 0, or -1 when the line has fewer than
 * k + 1 fields.
 */
int text_field(char *line, size_t len, uint64_t k, char **start,
    char **end);

/*
 * Read one line of fp, its '\n' included if present, into *line
 * (capacity *cap, grown as the data arrives), NUL-terminated, its length
 * in *len; at most max bytes before the '\n', the buffer never larger
 * than max + 2.  @return 1 (a line), 0 (end of input), PV_E_LIMIT (more
 * than max bytes: the rest of the line is not read), PV_E_IO (ferror) or PV_E_NOMEM.
 */
int text_read_line(FILE *fp, char **line, size_t *cap, size_t *len,
    size_t max);

#define TEXT_MSG 128			/* bytes of a text_label message */

/*
 * The label of a labelled document, the tab-separated line[0..len):
 * field k (from 0), the rest is the document.  *start and *end bound it.
 * A line without a tab has no label (the document is never taken for
 * it).  @return 0; 1 when the field is empty (a missing label); or
 * PV_E_FORMAT when there is no tab or fewer than k + 1 fields; but for
 * 0, with a message in msg (without the line's name).
 */
int text_label(char *line, size_t len, uint64_t k, char **start,
    char **end, char msg[TEXT_MSG]);

struct text_counter {
	const struct strtab *vocab;	/* columns, or NULL: hashed */
	size_t d;			/* columns (vocab->n when vocab) */
	/* scratch, owned */
	size_t *tok, tcap;
	size_t *touched, ntouch, ttcap;
	char *bg;
	size_t bgcap;
};

/*
 * Add the counts of doc (n bytes, lowercased in place) to row[0..d),
 * which must be zero on the columns not yet touched.  Keys outside a
 * vocabulary are not counted.  @return 0 or PV_E_NOMEM.
 */
int text_count(struct text_counter *c, char *doc, size_t n, double *row);

/* Zero the entries of row that the last text_count touched. */
void text_clear(struct text_counter *c, double *row);

void text_counter_free(struct text_counter *c);

#endif
