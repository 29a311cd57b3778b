/* SPDX-License-Identifier: MIT */
/*
 * Certified programs by image, verdicts by digest, hints (cache.c).
 */
#ifndef ARENAGUARD_SHIM_CACHE_H
#define ARENAGUARD_SHIM_CACHE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <arenaguard/certify.h>

#include "seal.h"

/*
 * A certified program image, shared by every handle (in any file) whose
 * image has these bytes.  Immutable once published, so any number of
 * threads read it without a lock; freed with its last reference.
 */
/* A cache entry's place in its cache's least-recently-used list. */
struct ag_lru {
	struct ag_lru *older, *newer;
	uint64_t stamp;             /* last use, on the caches' one clock */
};

struct ag_program {
	atomic_uint refcount;
	uint8_t *image;             /* the guard's copy: what the driver got */
	size_t len;
	struct ac_digest digest;    /* P: ac_image_digest of the image */
	struct arena_seal seal;     /* uapi.h: the seal state after the image */
	struct ac_model *model;     /* NULL when the image is malformed */
	ac_program *prog;           /* NULL when malformed */
	char *error;                /* why it cannot be certified, or NULL */
	char *advisory;             /* strict mode: its advisories, rendered
				     * (the first and how many), or NULL */
	struct ag_program *next;    /* cache chain */
	struct ag_lru lru;
	size_t bytes;               /* what the entry pins (the budget's) */
};

/* A schedule's references: grows in place; a verdict entry shares the
 * prefix it was decided on (schedules only grow). */
struct ag_refs {
	atomic_uint refcount;
	atomic_uint cached;         /* cached verdicts sharing it (in any
				     * shard): charged once */
	uint64_t cap;
	struct ac_ref v[];
};

struct ag_verdict {
	atomic_uint refcount;
	struct ac_digest digest;
	struct ag_program *program;
	struct ag_refs *refv;
	uint64_t n_refs;
	uint64_t verdict;           /* AC_NONE: malformed schedule */
	struct ac_diag diag;
	char *text;                 /* the rendered diagnostic or error */
	struct ag_verdict *next;    /* cache chain */
	struct ag_lru lru;
	size_t bytes;               /* what the entry pins (the budget's) */
};

/*
 * Copies image[0, len) into a program (the caller gives up `image`, a
 * malloc'ed buffer) and certifies it and computes its seal state, or
 * finds an equal image certified before.  NULL only when memory runs
 * out.  ag_program_get_digested is the same for a caller that has
 * digested the image already (*digest: its ac_image_digest, computed
 * from these very bytes as they were copied), ag_program_get digests it.
 */
struct ag_program *ag_program_get(uint8_t *image, size_t len);
struct ag_program *ag_program_get_digested(uint8_t *image, size_t len,
					   const struct ac_digest *digest);
/* A program the guard could not read at all (not cached). */
struct ag_program *ag_program_unreadable(const char *why);
void ag_program_unref(struct ag_program *p);

struct ag_refs *ag_refs_grow(struct ag_refs *r, uint64_t used, uint64_t need);
void ag_refs_unref(struct ag_refs *r);

/* The cached verdict for (program, refs[0, n)) with this digest, with the
 * bytes compared, referenced; NULL on a miss. */
struct ag_verdict *ag_verdict_find(const struct ac_digest *d,
				   const struct ag_program *p,
				   const struct ac_ref *refs, uint64_t n);
/* Publishes a verdict (taking references to program and refv); returns
 * the entry now in the cache (maybe an equal one published first),
 * referenced. */
struct ag_verdict *ag_verdict_publish(struct ag_verdict *v);
struct ag_verdict *ag_verdict_new(void);
void ag_verdict_unref(struct ag_verdict *v);

/* Hints: schedule prefixes seen on the way to a cached verdict.  Only a
 * hint (no bytes are kept): a wrong one costs time, never soundness.
 * ag_hint_has takes no lock; ag_hints_add adds d[0, n), taking a lock
 * only when one of them is not a hint yet. */
void ag_hints_add(const struct ac_digest *d, uint64_t n);
int ag_hint_has(const struct ac_digest *d);

void ag_cache_lock_all(void);
void ag_cache_unlock_all(int child);
/* Drops every unreferenced entry (tests, and memory pressure). */
void ag_cache_trim(void);
/* Bytes the caches pin now (programs and verdicts, the hint table
 * included), which trimming keeps within ag_cfg.cache_bytes; the entries
 * counted; for tests and the statistics. */
size_t ag_cache_bytes(void);
uint64_t ag_cache_entries(void);

#endif
