/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE             /* mremap */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "builder.h"

static void *must(void *p)
{
	if (!p) {
		fprintf(stderr, "workload: out of memory\n");
		abort();
	}
	return p;
}

static void vec_init(struct vec *v, size_t size)
{
	*v = (struct vec){ .size = size };
}

/*
 * Large tables are their own mappings advised MADV_HUGEPAGE, as
 * libarenacert's are (certify/alloc.c): on the machines this runs on a
 * fresh 4 KiB page costs a fault that dominates writing it, and a huge
 * page takes one fault for 512.  They grow with mremap, which moves
 * pages instead of copying them.
 */
#define MAPPED_FROM ((size_t)2 << 20)

static void advise(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
	madvise(p, bytes, MADV_HUGEPAGE);       /* advice only */
#endif
}

static void *grow_block(void *old, size_t old_bytes, size_t bytes)
{
	if (bytes < MAPPED_FROM)
		return must(realloc(old, bytes));
	void *p;
	if (old_bytes >= MAPPED_FROM) {
		p = mremap(old, old_bytes, bytes, MREMAP_MAYMOVE);
	} else {
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED && old_bytes)
			memcpy(p, old, old_bytes);
		free(old);
	}
	if (p == MAP_FAILED)
		must(NULL);
	advise(p, bytes);
	return p;
}

static void vec_release(struct vec *v)
{
	if (v->cap * v->size >= MAPPED_FROM)
		munmap(v->data, v->cap * v->size);
	else
		free(v->data);
}

/* Room for k more entries, which the caller fills; returns the first.
 * Doubling keeps the cost linear. */
static void *vec_grow(struct vec *v, uint64_t k)
{
	if (v->n + k > v->cap) {
		uint64_t cap = v->cap ? v->cap : 64;
		while (cap < v->n + k)
			cap *= 2;
		v->data = grow_block(v->data, v->cap * v->size, cap * v->size);
		v->cap = cap;
	}
	void *at = (char *)v->data + v->n * v->size;
	v->n += k;
	return at;
}

static void *vec_at(const struct vec *v, uint64_t i)
{
	return (char *)v->data + i * v->size;
}

/* ---- byte strings: chunks that never move, so pointers stay valid ---- */

#define CHUNK_BYTES 65536

struct chunk {
	struct chunk *next;
	size_t used;
	uint8_t bytes[CHUNK_BYTES];
};

static uint8_t *string_room(struct wb *b, size_t len)
{
	if (!b->strings || b->strings->used + len > CHUNK_BYTES) {
		struct chunk *c = must(malloc(sizeof(*c)));
		c->next = b->strings;
		c->used = 0;
		b->strings = c;
	}
	uint8_t *at = b->strings->bytes + b->strings->used;
	b->strings->used += len;
	return at;
}

static struct ac_bytes string(struct wb *b, const char *text)
{
	size_t len = strlen(text);
	uint8_t *at = string_room(b, len);
	memcpy(at, text, len);
	return (struct ac_bytes){ at, (uint32_t)len };
}

static struct ac_bytes vstring(struct wb *b, const char *fmt, va_list ap)
{
	char text[256];
	int len = vsnprintf(text, sizeof(text), fmt, ap);
	if (len < 0 || (size_t)len >= sizeof(text))
		abort();        /* generator names are short */
	return string(b, text);
}

/* ---- the builder ----------------------------------------------------- */

struct wb *wb_new(void)
{
	struct wb *b = must(calloc(1, sizeof(*b)));
	vec_init(&b->windows, sizeof(struct ac_window));
	vec_init(&b->globals, sizeof(struct ac_tensor));
	vec_init(&b->phases, sizeof(struct ac_phase));
	vec_init(&b->planes, sizeof(struct ac_tensor));
	vec_init(&b->launches, sizeof(struct ac_launch));
	vec_init(&b->words, sizeof(uint64_t));
	vec_init(&b->repeats, sizeof(struct ac_repeat));
	vec_init(&b->deltas, sizeof(struct ac_delta));
	vec_init(&b->refs, sizeof(struct ac_ref));
	return b;
}

void wb_free(struct wb *b)
{
	if (!b)
		return;
	struct vec *all[] = { &b->windows, &b->globals, &b->phases,
			      &b->planes, &b->launches, &b->words,
			      &b->repeats, &b->deltas, &b->refs };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		vec_release(all[i]);
	while (b->strings) {
		struct chunk *next = b->strings->next;
		free(b->strings);
		b->strings = next;
	}
	free(b);
}

void wb_model(struct wb *b, struct workload *w)
{
	w->owner = b;
	w->model = (struct ac_model){
		.alignment = WB_ALIGNMENT,
		.n_windows = (uint32_t)b->windows.n,
		.n_globals = (uint32_t)b->globals.n,
		.n_phases = (uint32_t)b->phases.n,
		.n_planes = (uint32_t)b->planes.n,
		.n_launches = (uint32_t)b->launches.n,
		.n_repeats = (uint32_t)b->repeats.n,
		.n_deltas = (uint32_t)b->deltas.n,
		.n_words = b->words.n,
		.n_refs = b->refs.n,
		.windows = b->windows.data,
		.globals = b->globals.data,
		.phases = b->phases.data,
		.planes = b->planes.data,
		.launches = b->launches.data,
		.words = b->words.data,
		.repeats = b->repeats.data,
		.deltas = b->deltas.data,
		.refs = b->refs.data,
	};
}

void wb_window(struct wb *b, const char *name, uint64_t base, uint64_t size)
{
	struct ac_window *w = vec_grow(&b->windows, 1);
	*w = (struct ac_window){ string(b, name), base, size };
}

void wb_window_at(struct wb *b, const char *name, uint32_t k, uint64_t used)
{
	uint64_t size = wb_align(2 * used, 4096);
	if (size > WB_WINDOW_SPAN)
		abort();        /* no workload size comes near */
	wb_window(b, name, WB_WINDOW_BASE(k), size);
}

uint64_t wb_global(struct wb *b, uint64_t *cursor, uint64_t size,
		   const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct ac_bytes name = vstring(b, fmt, ap);
	va_end(ap);
	struct ac_tensor *g = vec_grow(&b->globals, 1);
	*g = (struct ac_tensor){ name, *cursor, size, 0, { 0 } };
	*cursor = wb_align(*cursor + size, WB_ALIGNMENT);
	return g->offset;
}

uint32_t wb_phase(struct wb *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct ac_bytes identity = vstring(b, fmt, ap);
	va_end(ap);
	struct ac_phase *p = vec_grow(&b->phases, 1);
	*p = (struct ac_phase){ identity, (uint32_t)b->planes.n, 0 };
	return (uint32_t)(b->phases.n - 1);
}

void wb_plane(struct wb *b, const char *name, uint64_t offset, uint64_t size,
	      int carried)
{
	struct ac_tensor *t = vec_grow(&b->planes, 1);
	*t = (struct ac_tensor){ string(b, name), offset, size,
				 (uint8_t)(carried != 0), { 0 } };
	struct ac_phase *p = vec_at(&b->phases, b->phases.n - 1);
	p->plane_count++;
}

void wb_planes(struct wb *b, uint8_t which, const struct wb_plane_row *rows,
	       size_t n, const char *const *names, const uint64_t *at,
	       const uint64_t *size)
{
	for (size_t r = 0; r < n; r++)
		if (rows[r].which == which)
			wb_plane(b, names[rows[r].value], at[rows[r].value],
				 size[rows[r].value], rows[r].carried);
}

void *wb_calloc(size_t n, size_t size)
{
	return must(calloc(n ? n : 1, size));
}

/* Field `field`, wire type 2, holding `len` bytes: tag and length are one
 * byte each below 128, which the generators' short names keep to. */
static uint8_t *put_field(uint8_t *at, uint32_t field, const void *data,
			  uint32_t len)
{
	uint32_t tag = field << 3 | 2;
	while (tag >= 0x80) {
		*at++ = (uint8_t)(tag | 0x80);
		tag >>= 7;
	}
	*at++ = (uint8_t)tag;
	*at++ = (uint8_t)len;
	memcpy(at, data, len);
	return at + len;
}

struct ac_bytes wb_identity(struct wb *b, uint32_t phase, const char *op)
{
	const struct ac_phase *p = vec_at(&b->phases, phase);
	uint32_t oplen = (uint32_t)strlen(op);
	if (oplen >= 0x80 || p->identity.len >= 0x80)
		abort();
	uint32_t len = 2 + oplen + 3 + p->identity.len;
	uint8_t *at = string_room(b, len);
	uint8_t *end = put_field(at, 1, op, oplen);
	put_field(end, 51, p->identity.data, p->identity.len);
	return (struct ac_bytes){ at, len };
}

uint64_t wb_launch(struct wb *b, struct ac_bytes identity, uint32_t phase,
		   uint32_t n, const uint64_t *words)
{
	if (b->launches.n == 0 || phase != b->last_phase)
		b->instances++;
	b->last_phase = phase;
	struct ac_launch *l = vec_grow(&b->launches, 1);
	*l = (struct ac_launch){ identity, b->words.n, n, 0 };
	memcpy(vec_grow(&b->words, n), words, n * sizeof(*words));
	return b->launches.n - 1;
}

uint64_t wb_instance(const struct wb *b)
{
	return b->instances - 1;
}

uint64_t wb_launch_count(const struct wb *b)
{
	return b->launches.n;
}

void wb_repeat_open(struct wb *b, uint64_t iterations)
{
	struct ac_repeat *r = vec_grow(&b->repeats, 1);
	*r = (struct ac_repeat){ .first = b->launches.n,
				 .iterations = iterations,
				 .delta_first = (uint32_t)b->deltas.n };
}

void wb_repeat_close(struct wb *b)
{
	struct ac_repeat *r = vec_at(&b->repeats, b->repeats.n - 1);
	r->count = b->launches.n - r->first;
}

void wb_delta(struct wb *b, uint64_t launch, uint64_t word, int64_t delta)
{
	struct ac_delta *d = vec_grow(&b->deltas, 1);
	*d = (struct ac_delta){ launch, word, delta };
	struct ac_repeat *r = vec_at(&b->repeats, b->repeats.n - 1);
	r->delta_count++;
}

void wb_ref(struct wb *b, uint64_t first, uint64_t count)
{
	struct ac_ref *r = vec_grow(&b->refs, 1);
	*r = (struct ac_ref){ first, count };
}

uint64_t wb_f32(float f)
{
	uint32_t bits;
	memcpy(&bits, &f, sizeof(bits));
	return bits;
}
