/* SPDX-License-Identifier: MIT */
/* Helpers shared by libarenacert's source files; not installed. */
#ifndef ARENACERT_INTERNAL_H
#define ARENACERT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <arenaguard/certify.h>

/* AC_PARTITION, the binary search of every sorted table (the library's,
 * the report's, the simulator's): one definition, in common/. */
#include "../common/partition.h"

#define AC_PRINTF(a, b) __attribute__((format(printf, a, b)))
/* A function only malformed input reaches (an error path): kept out of
 * the callers' loops. */
#define AC_COLD __attribute__((cold, noinline))

/* Fills *err (if not NULL); returns -1 so callers can `return aci_fail(...)`. */
int aci_fail(struct ac_error *err, const char *where, const char *fmt, ...)
	AC_PRINTF(3, 4);

/* structure.c: aci_fail at "table[i].field". */
int aci_fail_entry(struct ac_error *err, const char *table, uint64_t i,
		   const char *field, const char *what);

/* structure.c: an array given with a count must exist: 0 when a is not
 * NULL or n is 0, else -1 with *err at `name` ("array is NULL but its
 * count is n").  The structure check's and ac_schedule_append's. */
int aci_check_array(const void *a, uint64_t n, const char *name,
		    struct ac_error *err);

/* Is the run [first, first + count) inside an array of n elements? */
static inline int run_inside(uint64_t first, uint64_t count, uint64_t n)
{
	return first <= n && count <= n - first;
}

/* model.c: the global (r.phase == AC_NONE) or plane r names, or NULL when
 * it names none of m's (an index past its table). */
const struct ac_tensor *aci_model_tensor(const struct ac_model *m,
					 struct ac_tensor_ref r);

/* model.c: whether data starts with the image's magic (else it is read
 * as JSON). */
int aci_model_is_image(const void *data, size_t len);

/*
 * What the launch table adds to an image, found by the structure check's
 * pass over it so that the image's limits (aci_image_check, aci_image_emit) need
 * no pass of their own: the launches' word counts and identity lengths
 * summed, and the last launch's identity length (0 without launches).
 * Each sum is below 2^32 * 2^32: it cannot wrap.  running: every launch's
 * words start where the ones before it end (word_first is the sum of the
 * word counts before it, as in an image), so that the word counts' prefix
 * sums can be searched (program.c's chunk bounds).
 */
struct launch_sums {
	uint64_t words, bytes, last;
	int running;
};

/*
 * structure.c: the model's own structure, which the readers guarantee
 * and a hand-built model may not (arrays present, byte strings with
 * their bytes, runs inside their arrays; the schedule's array too when
 * with_refs).  0, or -1 with *err naming the field ("phases[1].plane_count").
 * On 0 it fills *sums unless sums is NULL.
 * Every function that reads a hand-built model checks it first.
 */
int aci_model_check_structure(const struct ac_model *m, int with_refs,
			      struct launch_sums *sums, struct ac_error *err);

/*
 * A model that owns its arrays, as the readers build it.  Counts are set
 * first, then aci_model_owned_alloc() allocates every array at once, so no
 * allocation is ever sized by a count that was not checked against the
 * input's length first (the callers' job).
 */
struct model_owned {
	struct ac_model m;
	void *block;        /* all arrays, one allocation */
	uint8_t *bytes;     /* names and identities */
	uint64_t bytes_len;
	uint64_t block_len; /* bytes of `block` */
	/* The words a builder handed over instead of copying them
	 * (builder.c; malloc'ed, m.words points into it, freed with the
	 * model), words_len bytes; NULL for a reader's model. */
	void *words_block;
	uint64_t words_len;
};

/*
 * Arrays a reader may leave out of the allocation because the model
 * borrows them from the reader's input (ac_model_view_image): the caller
 * sets those pointers itself.
 */
enum model_borrow {
	BORROW_NOTHING = 0,
	BORROW_WORDS = 1 << 0,
	BORROW_FRAME_VALUES = 1 << 1,
	BORROW_REFS = 1 << 2,
	BORROW_BYTES = 1 << 3,
};

/* Allocates a zeroed model_owned; NULL on out-of-memory. */
struct model_owned *aci_model_owned_new(void);
/* Allocates the arrays for the counts in o->m and bytes_len bytes of
 * strings, zeroed, except those in `borrow` (a set of enum model_borrow).
 * Returns -1 on overflow or out-of-memory (err filled). */
int aci_model_owned_alloc(struct model_owned *o, unsigned borrow,
			  struct ac_error *err);
/* The same, the arrays uninitialised: for a reader that writes every
 * field of every entry of every array it does not borrow (the image
 * reader; a struct's own padding, such as struct ac_bytes's after len,
 * is left as it is: nothing reads it).  Zeroing them was 7 % of reading
 * and certifying a 10^3-word image (docs/performance.md). */
int aci_model_owned_alloc_raw(struct model_owned *o, unsigned borrow,
			      struct ac_error *err);

/*
 * sort.c: the library's sorts; every sort of the library goes through one
 * of them.  aci_sort: O(n log n) compares on every input (introsort), in
 * place, not stable; cmp as qsort's.  aci_sort_by_key: records of `size`
 * bytes whose first 8 are a uint64_t key, by key, ties in input order
 * (stable), one O(n) pass per varying byte of the keys on every order
 * (radix sort); -1 when the copy it needs cannot be allocated.
 */
typedef int (*aci_sort_cmp)(const void *, const void *);
void aci_sort(void *base, size_t n, size_t size, aci_sort_cmp cmp);
int aci_sort_by_key(void *base, size_t n, size_t size);

/* Mutable views of an owned model's arrays (the public ones are const). */
#define MUT(ptr) ((void *)(uintptr_t)(ptr))

#endif
