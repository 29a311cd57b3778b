/* SPDX-License-Identifier: MIT */
/*
 * report_live.h - when each plane's value is live, for the HTML report.
 *
 * A plane's key is (name, offset, size) (certificate.md 1.1).  Every
 * instance declares all planes of its phase; a *box* is one value of one
 * key: it starts at a declaration that makes a new value (a fresh plane,
 * or a carried one whose key was not intact) and grows over each later
 * carried declaration of the same key, until a different key is declared
 * over any of its bytes or the key is declared fresh again.  Its columns
 * are the walk's (ac_walk, certify.h), counted over the whole walk.
 *
 * The state is what (D) keeps: for every byte the key that declared it
 * last, over the elementary intervals between plane endpoints.  A carried
 * declaration of a key that is not intact starts a box flagged
 * LIVE_BROKEN: exactly where (D) fails (the first such is the verdict's).
 */
#ifndef ARENAGUARD_REPORT_LIVE_H
#define ARENAGUARD_REPORT_LIVE_H

#include <stdint.h>

#include <arenaguard/program.h>

enum {
	LIVE_CARRIED = 1,  /* starts at a carried declaration */
	LIVE_BROKEN = 2,   /* ... of a key that was not intact */
	LIVE_USED = 4,     /* carried on by a later instance */
};

struct live_box {
	uint32_t key;
	uint32_t flags;
	uint64_t first, last;  /* columns of the walk, inclusive */
};

/* Called for every box when it ends, and for those left at live_finish. */
typedef void live_close_fn(void *ctx, const struct live_box *box);

struct live;

/* NULL when memory runs out. */
struct live *live_new(const struct ac_model *m, live_close_fn *close,
		      void *ctx);
void live_free(struct live *l);

/* Distinct keys, the key of a plane (index into m->planes), and one plane
 * with each key. */
uint32_t live_keys(const struct live *l);
uint32_t live_key_of(const struct live *l, uint64_t plane);
uint64_t live_key_plane(const struct live *l, uint32_t key);

/* Instance in column `column` declares the planes of `phase` (AC_NONE:
 * none).  Returns -1 when memory runs out. */
int live_declare(struct live *l, uint64_t phase, uint64_t column);

/* Ends every open box. */
void live_finish(struct live *l);

#endif /* ARENAGUARD_REPORT_LIVE_H */
