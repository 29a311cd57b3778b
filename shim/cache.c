/* SPDX-License-Identifier: MIT */
/*
 * What the guard has decided before, so that deciding it again is a
 * lookup:
 *
 *   programs  image bytes -> certified ac_program (A, B, C and the
 *             indexes (D) needs), shared by every handle with that image
 *   verdicts  digest of (plan, launch table, schedule) -> verdict and
 *             its rendered diagnostic
 *   hints     digests of schedule prefixes that led to a cached verdict:
 *             a schedule being rebuilt like one decided before stays
 *             lazy (no (D) work) until its submit finds the verdict
 *
 * The digest is XXH3-128, fast and not collision-resistant, so a hit
 * compares the bytes: the program (pointer equality, as equal images
 * share one struct ag_program, else memcmp) and the references.  Hints
 * keep no bytes: a false hint only delays the (D) work to submit time.
 *
 * Entries are reference counted; the caches hold one reference to each.
 * One budget in bytes (ag_cfg.cache_bytes, ARENAGUARD_CACHE_MB) bounds
 * everything they pin: a program entry counts its image, its model and
 * its indexes (ac_model_footprint, ac_program_footprint), a verdict entry
 * its text, a references array its verdicts share once, and the hint
 * table its fixed size.
 * Beyond the budget the least recently used entries go, verdicts and
 * programs alike on one clock: a verdict pins its program, so dropping
 * the verdict is what lets the program go.  A program that a live handle
 * holds is not the cache's to drop: it stays, counted, until the handle
 * lets go.  A dropped entry is forgotten, never trusted: the next request
 * recomputes it.  Every step of trimming is O(1) but the skip over
 * programs in use, which live handles bound, and the look at each
 * shard's oldest verdict.
 *
 * Locks: a submit's lookup (and a publish) takes only the lock of the
 * verdict's shard (VERDICT_SHARDS of them, by digest), and a hint lookup
 * none: no one lock is on every submit of every thread.  The byte and
 * entry counts are atomics, so that a publish within the budget takes no
 * other lock; trimming takes program_lock, then every shard's lock in
 * shard order.  Hints are written under hint_lock (after the others when
 * held together) and read with no lock.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "options.h"
#include "stats.h"
#include "util.h"

#define PROGRAM_BUCKETS 256
#define VERDICT_SHARDS 16
#define VERDICT_BUCKETS 256         /* per shard */
#define VERDICT_ENTRIES 65536       /* chains stay short */
#define HINT_SLOTS (1u << 16)

/* A least-recently-used list: newest at the head, oldest at the tail. */
struct lru_list {
	struct ag_lru *newest, *oldest;
};

static atomic_ullong cache_clock;   /* both caches' last-use stamps */

static pthread_mutex_t program_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ag_program *programs[PROGRAM_BUCKETS];
static struct lru_list program_lru;

/* The verdicts of the digests whose high word is the shard's index
 * modulo VERDICT_SHARDS: their chains and their LRU list. */
struct verdict_shard {
	pthread_mutex_t lock;
	struct ag_verdict *buckets[VERDICT_BUCKETS];
	struct lru_list lru;
} __attribute__((aligned(64)));

static struct verdict_shard shards[VERDICT_SHARDS] = {
	[0 ... VERDICT_SHARDS - 1] = { .lock = PTHREAD_MUTEX_INITIALIZER },
};

/* What the caches pin, updated under the lock of the entry's cache (or
 * shard), read without one by the check before trimming. */
static atomic_size_t program_bytes, verdict_bytes, n_verdicts;

/* A digest per slot, its halves apart ({0, 0}: empty): written under
 * hint_lock, read with no lock, so a reader racing a writer may see half
 * a digest, which is a wrong hint (time, never soundness). */
static pthread_mutex_t hint_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_ullong hint_high[HINT_SLOTS], hint_low[HINT_SLOTS];
static unsigned int n_hints;

#define ENTRY_OF(node, type) \
	((type *)((char *)(node) - offsetof(type, lru)))

static void lru_unlink(struct lru_list *list, struct ag_lru *e)
{
	if (e->newer)
		e->newer->older = e->older;
	else
		list->newest = e->older;
	if (e->older)
		e->older->newer = e->newer;
	else
		list->oldest = e->newer;
	e->older = e->newer = NULL;
}

/* Links e as the newest (just used). */
static void lru_push(struct lru_list *list, struct ag_lru *e)
{
	e->stamp = atomic_fetch_add(&cache_clock, 1) + 1;
	e->newer = NULL;
	e->older = list->newest;
	if (list->newest)
		list->newest->newer = e;
	else
		list->oldest = e;
	list->newest = e;
}

static void lru_touch(struct lru_list *list, struct ag_lru *e)
{
	lru_unlink(list, e);
	lru_push(list, e);
}

/* ---- digests ---- */

/* Digests are libarenacert's (ac_image_digest, ac_digester): the guard's
 * schedule digests are ac_schedule_digest's values. */

static int digest_eq(const struct ac_digest *a, const struct ac_digest *b)
{
	return a->high == b->high && a->low == b->low;
}

/* ---- programs ---- */

static void program_free(struct ag_program *p)
{
	ac_program_free(p->prog);
	ac_model_free(p->model);
	free(p->error);
	free(p->advisory);
	free(p->image);
	free(p);
}

void ag_program_unref(struct ag_program *p)
{
	if (p && atomic_fetch_sub(&p->refcount, 1) == 1)
		program_free(p);
}

/* Records why p cannot be certified: 0, or -ENOMEM when libarenacert
 * ran out of memory (its error then has no location) or the text could
 * not be kept.  Running out of memory is no property of the image. */
static int set_error(struct ag_program *p, const char *what,
		     const struct ac_error *err)
{
	char text[512];
	if (err && !err->where[0] &&
	    !strncmp(err->message, "out of memory", strlen("out of memory")))
		return -ENOMEM;
	p->error = err ? ag_printf("%s: %s", what,
				   ac_error_text(err, text, sizeof(text)))
		       : ag_strdup(what);
	return p->error ? 0 : -ENOMEM;
}

/* Strict mode: p->advisory says p's advisories (spec 6), if it has
 * any: they depend on the plan alone, so once per program.  0; -ENOMEM. */
static int find_advisories(struct ag_program *p)
{
	struct ac_advisory *list;
	uint64_t n;
	struct ac_error err;
	if (ac_program_advisories(p->prog, &list, &n, &err) != 0)
		return -ENOMEM;
	if (n) {
		char text[1024];
		ac_advisory_render(&list[0], p->prog, text, sizeof(text));
		p->advisory = n == 1
			? ag_printf("strict mode: the program has an "
				    "advisory: %s", text)
			: ag_printf("strict mode: the program has %" PRIu64
				    " advisories; the first: %s", n, text);
	}
	free(list);
	return n && !p->advisory ? -ENOMEM : 0;
}

/* Reads and certifies p's image: (A), (B), (C) and the indexes (D)
 * needs, and in strict mode its advisories.  0, with p->error set when
 * the image is malformed; -ENOMEM. */
static int certify_program(struct ag_program *p)
{
	struct ac_error err;
	uint64_t start = ag_now_ns();
	int rc = 0;
	/* The model views the guard's copy, which stays unchanged while
	 * the program lives (program_free frees the model first): the
	 * words, most of an image, are not held twice.
	 * Read and checked in one call (one pass over the launches fewer);
	 * the schedule section is looked at after it, and its error wins
	 * over the program's, as when it was looked at in between. */
	p->prog = ac_program_view_image(p->image, p->len,
			&(struct ac_options){ .threads = ag_cfg.threads },
			&p->model, &err);
	if (!p->model) {
		rc = set_error(p, "malformed program image", &err);
	} else if (p->model->n_refs != 0) {
		ac_program_free(p->prog);
		p->prog = NULL;
		rc = set_error(p, "the image's schedule section is not empty "
			       "(schedules are built with the schedule "
			       "requests)", NULL);
	} else if (!p->prog) {
		rc = set_error(p, "malformed program", &err);
	} else if (ag_cfg.strict) {
		rc = find_advisories(p);
	}
	atomic_fetch_add(&ag_stats.certify_ns, ag_now_ns() - start);
	if (rc == 0)
		atomic_fetch_add(&ag_stats.programs_certified, 1);
	return rc;
}

/* What a program entry pins: the struct, its image, its model and its
 * indexes, its error text. */
static size_t program_cost(const struct ag_program *p)
{
	return sizeof(*p) + p->len + (size_t)ac_model_footprint(p->model) +
	       (size_t)ac_program_footprint(p->prog) +
	       (p->error ? strlen(p->error) + 1 : 0) +
	       (p->advisory ? strlen(p->advisory) + 1 : 0);
}

/* What a verdict entry pins of its own: the struct and its text.  The
 * references array it shares is charged once, by refs_charge. */
static size_t verdict_cost(const struct ag_verdict *v)
{
	return sizeof(*v) + (v->text ? strlen(v->text) + 1 : 0);
}

static size_t refs_bytes(const struct ag_refs *r)
{
	return sizeof(*r) + r->cap * sizeof(r->v[0]);
}

/* A cached verdict starts (+1) or stops (-1) sharing r: the array is in
 * the budget while any cached verdict shares it.  The lock of the
 * verdict's shard held (those sharing r may be in other shards). */
static void refs_charge(struct ag_refs *r, int delta)
{
	if (!r)
		return;
	if (delta > 0 && atomic_fetch_add(&r->cached, 1) == 0)
		atomic_fetch_add(&verdict_bytes, refs_bytes(r));
	else if (delta < 0 && atomic_fetch_sub(&r->cached, 1) == 1)
		atomic_fetch_sub(&verdict_bytes, refs_bytes(r));
}

static struct ag_program *program_find(const struct ac_digest *digest,
				       const uint8_t *image, size_t len)
{
	for (struct ag_program *p = programs[digest->low % PROGRAM_BUCKETS]; p;
	     p = p->next)
		if (digest_eq(&p->digest, digest) && p->len == len &&
		    memcmp(p->image, image, len) == 0) {
			atomic_fetch_add(&p->refcount, 1);
			lru_touch(&program_lru, &p->lru);
			return p;
		}
	return NULL;
}

/* Exact with every lock held; without, a snapshot that counts every
 * entry published before the call. */
static size_t cached_bytes(void)
{
	return atomic_load(&program_bytes) + atomic_load(&verdict_bytes) +
	       sizeof(hint_high) + sizeof(hint_low);
}

static struct verdict_shard *shard_of(const struct ac_digest *d)
{
	return &shards[d->high % VERDICT_SHARDS];
}

static struct ag_verdict **bucket_of(const struct ac_digest *d)
{
	return &shard_of(d)->buckets[d->low % VERDICT_BUCKETS];
}

static void lock_shards(void)
{
	for (unsigned int i = 0; i < VERDICT_SHARDS; i++)
		pthread_mutex_lock(&shards[i].lock);
}

static void unlock_shards(void)
{
	for (unsigned int i = VERDICT_SHARDS; i-- > 0;)
		pthread_mutex_unlock(&shards[i].lock);
}

/* The least recently used verdict of all shards, or NULL.  Every lock
 * held. */
static struct ag_lru *oldest_verdict(void)
{
	struct ag_lru *oldest = NULL;
	for (unsigned int i = 0; i < VERDICT_SHARDS; i++) {
		struct ag_lru *e = shards[i].lru.oldest;
		if (e && (!oldest || e->stamp < oldest->stamp))
			oldest = e;
	}
	return oldest;
}

/* The least recently used program that only the cache holds, or NULL.
 * Every lock held (no verdict can take a reference meanwhile). */
static struct ag_program *oldest_unheld_program(void)
{
	for (struct ag_lru *e = program_lru.oldest; e; e = e->newer) {
		struct ag_program *p = ENTRY_OF(e, struct ag_program);
		if (atomic_load(&p->refcount) == 1)
			return p;
	}
	return NULL;
}

static void drop_program(struct ag_program *p)
{
	struct ag_program **pp = &programs[p->digest.low % PROGRAM_BUCKETS];
	while (*pp != p)
		pp = &(*pp)->next;
	*pp = p->next;
	lru_unlink(&program_lru, &p->lru);
	atomic_fetch_sub(&program_bytes, p->bytes);
	ag_program_unref(p);
}

/* Its shard's lock held. */
static void drop_verdict(struct ag_verdict *v)
{
	struct ag_verdict **pp = bucket_of(&v->digest);
	while (*pp != v)
		pp = &(*pp)->next;
	*pp = v->next;
	lru_unlink(&shard_of(&v->digest)->lru, &v->lru);
	atomic_fetch_sub(&n_verdicts, 1);
	atomic_fetch_sub(&verdict_bytes, v->bytes);
	refs_charge(v->refv, -1);
	ag_verdict_unref(v);
}

static int over_limits(size_t budget)
{
	return cached_bytes() > budget ||
	       atomic_load(&n_verdicts) > VERDICT_ENTRIES;
}

/*
 * Drops least recently used entries, verdicts and programs on one clock,
 * until the caches pin at most `budget` bytes and hold at most
 * VERDICT_ENTRIES verdicts, or only programs in use are left.  Every
 * lock held.
 */
static void trim_locked(size_t budget)
{
	for (;;) {
		if (!over_limits(budget))
			return;
		int over = cached_bytes() > budget;
		struct ag_lru *v = oldest_verdict();
		struct ag_program *p = over ? oldest_unheld_program() : NULL;
		if (p && (!v || p->lru.stamp < v->stamp))
			drop_program(p);
		else if (v)
			drop_verdict(ENTRY_OF(v, struct ag_verdict));
		else
			return;
	}
}

/* Trims the caches to the budget if a publish took them over it (the
 * check takes no lock; the last publish over the limits trims). */
static void trim_if_over(void)
{
	if (!over_limits(ag_cfg.cache_bytes))
		return;
	pthread_mutex_lock(&program_lock);
	lock_shards();
	trim_locked(ag_cfg.cache_bytes);
	unlock_shards();
	pthread_mutex_unlock(&program_lock);
}

struct ag_program *ag_program_get(uint8_t *image, size_t len)
{
	assert(image);
	struct ac_digest digest;
	ac_image_digest(image, len, &digest);
	return ag_program_get_digested(image, len, &digest);
}

struct ag_program *ag_program_get_digested(uint8_t *image, size_t len,
					   const struct ac_digest *d)
{
	assert(image && d);
	const struct ac_digest digest = *d;

	pthread_mutex_lock(&program_lock);
	struct ag_program *p = program_find(&digest, image, len);
	pthread_mutex_unlock(&program_lock);
	if (p) {
		free(image);
		atomic_fetch_add(&ag_stats.program_hits, 1);
		return p;
	}

	/* Certify outside the lock: other images need not wait. */
	p = calloc(1, sizeof(*p));
	if (!p) {
		free(image);
		return NULL;
	}
	p->image = image;
	p->len = len;
	p->digest = digest;
	/*
	 * The seal (SHA-256, common/seal.c) of an image new to the cache,
	 * from the guard's copy (what the driver gets), never from the
	 * application's memory; an equal image found in the cache has this
	 * very seal already.  Not folded into the copy: SHA-256 runs at
	 * about 1 GB/s with the CPU's SHA extensions, a tenth of what the
	 * copy and XXH3 run at, so reading the bytes from the cache rather
	 * than from memory saves nothing measurable, and hashing during the
	 * copy would cost every cache hit a SHA-256 of its image
	 * (docs/performance.md, "First submit: creating, certifying,
	 * sealing").
	 */
	arena_seal_program(&p->seal, image, len);
	atomic_store(&p->refcount, 1);
	if (certify_program(p) != 0) {
		program_free(p);
		return NULL;
	}
	p->bytes = program_cost(p);

	pthread_mutex_lock(&program_lock);
	struct ag_program *first = program_find(&digest, image, len);
	if (first) {
		pthread_mutex_unlock(&program_lock);
		program_free(p);
		return first;
	}
	atomic_fetch_add(&p->refcount, 1);               /* the cache's */
	lru_push(&program_lru, &p->lru);
	p->next = programs[digest.low % PROGRAM_BUCKETS];
	programs[digest.low % PROGRAM_BUCKETS] = p;
	atomic_fetch_add(&program_bytes, p->bytes);
	pthread_mutex_unlock(&program_lock);
	trim_if_over();
	return p;
}

struct ag_program *ag_program_unreadable(const char *why)
{
	struct ag_program *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	atomic_store(&p->refcount, 1);
	p->error = ag_strdup(why);
	if (!p->error) {
		free(p);
		return NULL;
	}
	return p;
}

/* ---- reference arrays ---- */

struct ag_refs *ag_refs_grow(struct ag_refs *r, uint64_t used, uint64_t need)
{
	if (r && r->cap >= need)
		return r;
	uint64_t cap = r ? 2 * r->cap : 16;
	if (cap < need)
		cap = need;
	if (cap > (SIZE_MAX - sizeof(*r)) / sizeof(r->v[0]))
		return NULL;
	struct ag_refs *n = malloc(sizeof(*n) + cap * sizeof(n->v[0]));
	if (!n)
		return NULL;
	atomic_store(&n->refcount, 1);
	atomic_store(&n->cached, 0);
	n->cap = cap;
	if (used)
		memcpy(n->v, r->v, used * sizeof(n->v[0]));
	ag_refs_unref(r);
	return n;
}

void ag_refs_unref(struct ag_refs *r)
{
	if (r && atomic_fetch_sub(&r->refcount, 1) == 1)
		free(r);
}

/* ---- verdicts ---- */

struct ag_verdict *ag_verdict_new(void)
{
	struct ag_verdict *v = calloc(1, sizeof(*v));
	if (v)
		atomic_store(&v->refcount, 1);
	return v;
}

void ag_verdict_unref(struct ag_verdict *v)
{
	if (!v || atomic_fetch_sub(&v->refcount, 1) != 1)
		return;
	ag_program_unref(v->program);
	ag_refs_unref(v->refv);
	free(v->text);
	free(v);
}

static int same_program(const struct ag_program *a, const struct ag_program *b)
{
	return a == b || (a->len == b->len &&
			  memcmp(a->image, b->image, a->len) == 0);
}

/* Its shard's lock held. */
static struct ag_verdict *verdict_find(const struct ac_digest *d,
				       const struct ag_program *p,
				       const struct ac_ref *refs, uint64_t n)
{
	for (struct ag_verdict *v = *bucket_of(d); v; v = v->next) {
		if (!digest_eq(&v->digest, d) || v->n_refs != n ||
		    !same_program(v->program, p))
			continue;
		if (n && v->refv->v != refs &&
		    memcmp(v->refv->v, refs, n * sizeof(*refs)) != 0)
			continue;
		atomic_fetch_add(&v->refcount, 1);
		lru_touch(&shard_of(d)->lru, &v->lru);
		return v;
	}
	return NULL;
}

struct ag_verdict *ag_verdict_find(const struct ac_digest *d,
				   const struct ag_program *p,
				   const struct ac_ref *refs, uint64_t n)
{
	struct verdict_shard *sh = shard_of(d);
	pthread_mutex_lock(&sh->lock);
	struct ag_verdict *v = verdict_find(d, p, refs, n);
	pthread_mutex_unlock(&sh->lock);
	return v;
}

struct ag_verdict *ag_verdict_publish(struct ag_verdict *v)
{
	v->bytes = verdict_cost(v);
	struct verdict_shard *sh = shard_of(&v->digest);
	pthread_mutex_lock(&sh->lock);
	struct ag_verdict *first = verdict_find(&v->digest, v->program,
						v->n_refs ? v->refv->v : NULL,
						v->n_refs);
	if (first) {
		pthread_mutex_unlock(&sh->lock);
		ag_verdict_unref(v);
		return first;
	}
	atomic_fetch_add(&v->refcount, 1);               /* the cache's */
	lru_push(&sh->lru, &v->lru);
	struct ag_verdict **bucket = bucket_of(&v->digest);
	v->next = *bucket;
	*bucket = v;
	atomic_fetch_add(&n_verdicts, 1);
	atomic_fetch_add(&verdict_bytes, v->bytes);
	refs_charge(v->refv, +1);
	pthread_mutex_unlock(&sh->lock);
	trim_if_over();
	return v;
}

/* ---- hints ---- */

static unsigned int hint_slot(const struct ac_digest *d)
{
	return (unsigned int)d->low & (HINT_SLOTS - 1);
}

/* Forgets every hint.  hint_lock held. */
static void hints_clear(void)
{
	for (unsigned int i = 0; i < HINT_SLOTS; i++) {
		atomic_store_explicit(&hint_high[i], 0, memory_order_relaxed);
		atomic_store_explicit(&hint_low[i], 0, memory_order_relaxed);
	}
	n_hints = 0;
}

/* Whether slot i is empty, holds d, or neither (0, 1, 2), as read now. */
static int hint_at(unsigned int i, const struct ac_digest *d)
{
	uint64_t high = atomic_load_explicit(&hint_high[i],
					     memory_order_relaxed);
	uint64_t low = atomic_load_explicit(&hint_low[i], memory_order_relaxed);
	if (!high && !low)
		return 0;
	return high == d->high && low == d->low ? 1 : 2;
}

int ag_hint_has(const struct ac_digest *d)
{
	/* At most every slot: writers racing this walk cannot keep it
	 * going. */
	unsigned int i = hint_slot(d);
	for (unsigned int k = 0; k < HINT_SLOTS; k++) {
		int at = hint_at(i, d);
		if (at != 2)
			return at;
		i = (i + 1) & (HINT_SLOTS - 1);
	}
	return 0;
}

void ag_hints_add(const struct ac_digest *d, uint64_t n)
{
	int locked = 0;
	for (uint64_t k = 0; k < n; k++) {
		if ((!d[k].high && !d[k].low) || ag_hint_has(&d[k]))
			continue;
		if (!locked) {
			pthread_mutex_lock(&hint_lock);
			locked = 1;
		}
		if (n_hints >= HINT_SLOTS / 4 * 3)
			hints_clear();       /* full: they are only hints */
		unsigned int i = hint_slot(&d[k]);
		int at;
		while ((at = hint_at(i, &d[k])) == 2)
			i = (i + 1) & (HINT_SLOTS - 1);
		if (at == 1)
			continue;
		/* A reader meanwhile may see half of it: a wrong hint. */
		atomic_store_explicit(&hint_high[i], d[k].high,
				      memory_order_relaxed);
		atomic_store_explicit(&hint_low[i], d[k].low,
				      memory_order_relaxed);
		n_hints++;
	}
	if (locked)
		pthread_mutex_unlock(&hint_lock);
}

/* ---- housekeeping ---- */

void ag_cache_trim(void)
{
	ag_cache_lock_all();
	trim_locked(0);
	hints_clear();
	ag_cache_unlock_all(0);
}

size_t ag_cache_bytes(void)
{
	ag_cache_lock_all();
	size_t bytes = cached_bytes();
	ag_cache_unlock_all(0);
	return bytes;
}

uint64_t ag_cache_entries(void)
{
	uint64_t n = 0;
	ag_cache_lock_all();
	for (struct ag_lru *e = program_lru.oldest; e; e = e->newer)
		n++;
	n += atomic_load(&n_verdicts);
	ag_cache_unlock_all(0);
	return n;
}

void ag_cache_lock_all(void)
{
	pthread_mutex_lock(&program_lock);
	lock_shards();
	pthread_mutex_lock(&hint_lock);
}

void ag_cache_unlock_all(int child)
{
	(void)child;
	pthread_mutex_unlock(&hint_lock);
	unlock_shards();
	pthread_mutex_unlock(&program_lock);
}
