/* SPDX-License-Identifier: MIT */
/*
 * The workload generators' program builder: growable tables behind a
 * struct ac_model, byte strings in an arena that never moves, and the
 * bookkeeping a generator needs to know its own verdict (launch indices,
 * and phase instances counted in table order).  Out of memory aborts.
 */
#ifndef ARENAGUARD_BENCH_BUILDER_H
#define ARENAGUARD_BENCH_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include <arenaguard/uapi.h>

#include "workload.h"

/* A growable array of `size`-byte entries. */
struct vec {
	void *data;
	uint64_t n, cap;
	size_t size;
};

struct wb {
	struct vec windows, globals, phases, planes, launches, words;
	struct vec repeats, deltas, refs;
	struct chunk *strings;      /* names and identities */
	uint64_t instances;         /* phase instances so far, table order */
	uint32_t last_phase;        /* of the last launch */
};

struct wb *wb_new(void);
void wb_free(struct wb *b);

/* Points w->model at the builder's tables. */
void wb_model(struct wb *b, struct workload *w);

/* A window, and a global placed at *cursor (moved past it, aligned). */
void wb_window(struct wb *b, const char *name, uint64_t base, uint64_t size);
uint64_t wb_global(struct wb *b, uint64_t *cursor, uint64_t size,
		   const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A phase; the planes added next are its planes.  Returns its index. */
uint32_t wb_phase(struct wb *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void wb_plane(struct wb *b, const char *name, uint64_t offset, uint64_t size,
	      int carried);

/*
 * Planes from a table, for generators whose phases name a fixed set of
 * workspace values: each row of `which` phase declares its value v as a
 * plane named names[v] at at[v] of size[v] bytes, fresh or carried.
 */
struct wb_plane_row {
	uint8_t which, value, carried;
};
void wb_planes(struct wb *b, uint8_t which, const struct wb_plane_row *rows,
	       size_t n, const char *const *names, const uint64_t *at,
	       const uint64_t *size);

/* calloc, aborting when memory runs out. */
void *wb_calloc(size_t n, size_t size);

/* A source identity naming the op and declaring the phase: protobuf
 * field 1 (the op) and field 51 (the phase identity).  Launches share it. */
struct ac_bytes wb_identity(struct wb *b, uint32_t phase, const char *op);

/*
 * A launch of `phase` with these words; returns its index.  The instance
 * counter assumes the schedule runs the table in order (each Repeat body
 * once): the generators read it where that holds.
 */
uint64_t wb_launch(struct wb *b, struct ac_bytes identity, uint32_t phase,
		   uint32_t n, const uint64_t *words);
#define WB_LAUNCH(b, identity, phase, ...)                                \
	wb_launch(b, identity, phase,                                     \
		  (uint32_t)(sizeof((const uint64_t[]){ __VA_ARGS__ }) /   \
			     sizeof(uint64_t)),                           \
		  (const uint64_t[]){ __VA_ARGS__ })

/* The instance the last launch belongs to (table order, from 0). */
uint64_t wb_instance(const struct wb *b);
uint64_t wb_launch_count(const struct wb *b);

/* A Repeat whose body is the launches added from now until
 * wb_repeat_close(); the deltas added meanwhile are its deltas. */
void wb_repeat_open(struct wb *b, uint64_t iterations);
void wb_delta(struct wb *b, uint64_t launch, uint64_t word, int64_t delta);
void wb_repeat_close(struct wb *b);

void wb_ref(struct wb *b, uint64_t first, uint64_t count);

/* The bits of an f32, as a launch word. */
uint64_t wb_f32(float f);

/* x rounded up to a multiple of a (a power of two). */
static inline uint64_t wb_align(uint64_t x, uint64_t a)
{
	return (x + a - 1) & ~(a - 1);
}

#define WB_ALIGNMENT 64
#define WB_F32 4        /* bytes per element */

/* Window k's base: 16 TiB apart, far above every count and f32 bit
 * pattern a launch word holds, so those never fall in a window. */
#define WB_WINDOW_SPAN ((uint64_t)1 << 44)
#define WB_WINDOW_BASE(k) ((uint64_t)((k) + 1) * WB_WINDOW_SPAN)

/* Window k of the plan, sized to twice the `used` bytes its tensors span:
 * the slack is device memory no tensor names, where a stray pointer
 * lands. */
void wb_window_at(struct wb *b, const char *name, uint32_t k, uint64_t used);

#endif
