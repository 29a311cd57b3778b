/* SPDX-License-Identifier: MIT */
/*
 * Splitting a JSON program text so that its big arrays can be parsed one
 * element at a time (json_read.c): the root object's arrays under the
 * given keys become element spans of the text, and a skeleton -- the text
 * with those arrays emptied -- holds everything else.  Only syntax this
 * file can follow is split (a root object whose keys are plain strings);
 * it checks little, and the reader falls back to parsing the whole text
 * whenever anything about a split input fails, so that errors are always
 * those of the whole text.
 */
#ifndef ARENACERT_JSON_SPLIT_H
#define ARENACERT_JSON_SPLIT_H

#include <stddef.h>
#include <stdint.h>

/* The text of one element: text[at, at + len). */
struct json_span {
	size_t at, len;
};

struct json_split_array {
	const char *key;          /* one of the keys asked for */
	struct json_span *e;      /* elements in order */
	uint64_t n, cap;
};

#define JSON_SPLIT_MAX 8

struct json_split {
	char *skeleton;           /* the text, split arrays as "[]" */
	size_t skeleton_len;
	struct json_split_array arrays[JSON_SPLIT_MAX];
	unsigned n_arrays;
};

/*
 * A reader of one element in place, tried by the splitter on each element
 * of one split array before it skips the element itself, so that the
 * element's bytes are walked once: element i starts at `at` (its first
 * byte, no whitespace before it) and the text ends at `end`.  Returns the
 * first byte past the element when it read it (its span is then the
 * bytes between), or NULL when it did not (the splitter skips the element
 * as it skips any).  It must recognise only whole JSON values, ending
 * where the splitter's own skip would end them.
 */
typedef const char *(*json_split_lex)(void *ctx, uint64_t i, const char *at,
				      const char *end);

/*
 * Splits text[0, len) at the root object's arrays under keys (NULL-ended,
 * at most JSON_SPLIT_MAX, each matched by its raw bytes).  lex, when not
 * NULL, holds a reader per key (lex[k] for keys[k], NULL for none), each
 * called with ctx.  Returns 1 with *out filled (free with
 * aci_json_split_free), 0 when the text is not split (read it whole), -1
 * when memory ran out.
 */
int aci_json_split(const char *text, size_t len, const char *const *keys,
		   const json_split_lex *lex, void *ctx,
		   struct json_split *out);
void aci_json_split_free(struct json_split *s);

/* The split array under key, or NULL when it was not split. */
const struct json_split_array *aci_json_split_find(const struct json_split *s,
						   const char *key);

#endif
