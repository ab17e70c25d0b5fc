/*
 * Unit tests of lib/format/strtab and lib/format/text: the string table
 * keeps insertion order and finds every key after many rehashes; the
 * tokenizer and the vocabulary check on hand-made cases; unigram and
 * bigram counts of a small document against counts written out by hand,
 * in a vocabulary and in hashed buckets (the buckets of the hand-listed
 * keys), text_clear leaving a zero row, and tab-separated fields.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strtab.h"
#include "tap.h"
#include "text.h"
#include "xxh64.h"

int
main(void)
{
	struct strtab t = { 0 };
	size_t idx, *tok = NULL, cap = 0, nt;
	int added, allfound = 1, order = 1;
	char key[32];

	/* strtab: 5000 keys, many rehashes. */
	for (int i = 0; i < 5000; i++) {
		int n = snprintf(key, sizeof key, "k%d", i * 7919);
		if (strtab_add(&t, key, (size_t)n, &idx, &added) != 0 ||
		    !added || idx != (size_t)i)
			order = 0;
	}
	ok(order && t.n == 5000, "5000 distinct keys get indices in "
	    "insertion order");
	for (int i = 0; i < 5000; i++) {
		int n = snprintf(key, sizeof key, "k%d", i * 7919);
		allfound &= strtab_find(&t, key, (size_t)n) == i;
	}
	ok(allfound, "every key is found at its index");
	ok(strtab_add(&t, "k7919", 5, &idx, &added) == 0 && !added &&
	    idx == 1 && t.n == 5000, "adding a key again finds it");
	ok(strtab_find(&t, "k79", 3) == -1 && strtab_find(&t, "k7919x", 6) ==
	    -1, "a prefix or an extension of a key is not the key");
	ok(strtab_find(&t, "k7919x", 5) == 1, "len bounds the key");
	strtab_free(&t);
	ok(t.n == 0 && strtab_find(&t, "k0", 2) == -1, "freed: empty");

	{
		int *a = NULL;
		size_t c = 0;
		ok(strtab_grow((void **)&a, &c, 1, sizeof *a) == 0 && c == 16 &&
		    strtab_grow((void **)&a, &c, 17, sizeof *a) == 0 && c == 32 &&
		    strtab_grow((void **)&a, &c, 5, sizeof *a) == 0 && c == 32,
		    "grow: 16, doubling, never shrinking");
		ok(strtab_grow((void **)&a, &c, SIZE_MAX / 2, sizeof *a) ==
		    PV_E_NOMEM && c == 32, "grow: an impossible size fails, "
		    "the array unchanged");
		free(a);
	}

	/* Tokens: runs of [a-z0-9'] after lowercasing. */
	{
		char s[] = "Don't STOP--me now,42times";
		ok(text_tokenize(s, strlen(s), &tok, &cap, &nt) == 0 &&
		    nt == 5, "5 tokens");
		ok(strcmp(s, "don't stop--me now,42times") == 0,
		    "lowercased in place");
		ok(tok[0] == 0 && tok[1] == 5 && tok[2] == 6 && tok[3] == 4 &&
		    tok[4] == 12 && tok[5] == 2 && tok[6] == 15 && tok[7] == 3 &&
		    tok[8] == 19 && tok[9] == 7,
		    "starts and lengths: don't stop me now 42times");
		char e[] = " ,.;";
		ok(text_tokenize(e, strlen(e), &tok, &cap, &nt) == 0 && nt == 0,
		    "no tokens in punctuation");
	}
	ok(text_vocab_entry_ok("cat") && text_vocab_entry_ok("cat dog") &&
	    text_vocab_entry_ok("it's"), "good vocabulary entries");
	ok(!text_vocab_entry_ok("") && !text_vocab_entry_ok("Cat") &&
	    !text_vocab_entry_ok("a b c") && !text_vocab_entry_ok("a  b") &&
	    !text_vocab_entry_ok("a ") && !text_vocab_entry_ok(" a") &&
	    !text_vocab_entry_ok("a-b"), "bad entries: empty, uppercase, "
	    "three tokens, two spaces, edge spaces, other characters");

	/* Counts in a vocabulary. */
	{
		static const char *voc[] = { "the", "cat", "the cat", "sat",
		    "cat sat", "dog" };
		struct strtab v = { 0 };
		struct text_counter c = { 0 };
		double row[6] = { 0 };
		/* tokens: the cat sat the cat ; bigrams: the cat, cat sat,
		 * sat the, the cat */
		double want[6] = { 2, 2, 2, 1, 1, 0 };
		char doc[] = "The cat sat; the CAT.";
		int same = 1, zero = 1;

		for (int i = 0; i < 6; i++)
			strtab_add(&v, voc[i], strlen(voc[i]), &idx, &added);
		c.vocab = &v;
		c.d = v.n;
		ok(text_count(&c, doc, strlen(doc), row) == 0, "count");
		for (int i = 0; i < 6; i++)
			same &= row[i] == want[i];
		ok(same, "vocabulary counts: the 2, cat 2, 'the cat' 2, sat 1, "
		    "'cat sat' 1, dog 0");
		ok(c.ntouch == 5, "5 columns touched");
		text_clear(&c, row);
		for (int i = 0; i < 6; i++)
			zero &= row[i] == 0;
		ok(zero, "text_clear zeroes the row");
		text_counter_free(&c);
		strtab_free(&v);
	}

	/* Hashed counts: the buckets of the keys listed by hand. */
	{
		struct text_counter c = { .d = 7 };
		double row[7] = { 0 }, want[7] = { 0 };
		char doc[] = "A b a";
		int same = 1;

		/* tokens a, b, a; bigrams "a b", "b a" */
		static const char *k2[] = { "a", "b", "a", "a b", "b a" };
		for (int i = 0; i < 5; i++)
			want[ts_xxh64(k2[i], strlen(k2[i]), TEXT_HASH_SEED) %
			    7] += 1;
		ok(text_count(&c, doc, strlen(doc), row) == 0,
		    "hashed count");
		for (int i = 0; i < 7; i++)
			same &= row[i] == want[i];
		ok(same, "hashed counts: a twice, b, 'a b', 'b a' in "
		    "XXH64(key, 0) mod 7");
		{
			double tot = 0;
			for (int i = 0; i < 7; i++)
				tot += row[i];
			ok(tot == 5, "3 tokens and 2 bigrams: 5 counts in all");
		}
		text_counter_free(&c);
	}
	/* Tab-separated fields. */
	{
		char line[] = "pos\tgood film\t\tend";
		size_t n = strlen(line);
		char *p, *e;
		ok(text_field(line, n, 0, &p, &e) == 0 && p == line &&
		    e == line + 3, "field 0: 'pos'");
		ok(text_field(line, n, 1, &p, &e) == 0 && p == line + 4 &&
		    e == line + 13, "field 1: 'good film'");
		ok(text_field(line, n, 2, &p, &e) == 0 && p == e &&
		    p == line + 14, "field 2: empty");
		ok(text_field(line, n, 3, &p, &e) == 0 && p == line + 15 &&
		    e == line + n, "field 3: 'end', to the end of the line");
		ok(text_field(line, n, 4, &p, &e) == -1, "no field 4");
		ok(text_field(line, 4, 1, &p, &e) == 0 && p == e &&
		    p == line + 4, "a trailing tab leaves an empty last field");
	}
	/* The label of a labelled line: a field, never the document. */
	{
		char line[] = "pos\tgood film\t\tend", doc[] = "no tab here";
		char msg[TEXT_MSG];
		size_t n = strlen(line);
		char *p, *e;
		ok(text_label(line, n, 0, &p, &e, msg) == 0 && p == line &&
		    e == line + 3, "label field 0: 'pos'");
		ok(text_label(line, n, 2, &p, &e, msg) == 1 &&
		    strcmp(msg, "field 2: missing label") == 0, "%s", msg);
		ok(text_label(line, n, 4, &p, &e, msg) == PV_E_FORMAT &&
		    strcmp(msg, "no label: fewer than 5 tab-separated "
		    "fields") == 0, "%s", msg);
		ok(text_label(doc, strlen(doc), 0, &p, &e, msg) ==
		    PV_E_FORMAT && strcmp(msg, "no tab separator between the "
		    "label (field 0) and the document") == 0, "%s", msg);
	}
	free(tok);
	return tap_done();
}
