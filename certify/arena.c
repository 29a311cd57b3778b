/* SPDX-License-Identifier: MIT */
/* The bump allocator of arena.h. */
#include <stdlib.h>
#include <string.h>

#include "arena.h"

#define ALIGN ((size_t)16)
#define MIN_BLOCK ((size_t)4096)

struct aci_arena_block {
	struct aci_arena_block *prev;
};
#define HEADER ((sizeof(struct aci_arena_block) + ALIGN - 1) & ~(ALIGN - 1))

void aci_arena_init(struct aci_arena *a, size_t hint)
{
	*a = (struct aci_arena){ .hint = hint };
}

size_t aci_arena_size(size_t n, size_t size)
{
	if (size && n > (SIZE_MAX - ALIGN) / size)
		return SIZE_MAX;
	size_t bytes = n * size;
	if (bytes == 0)
		bytes = 1;
	return (bytes + ALIGN - 1) & ~(ALIGN - 1);
}

/* A block of at least `need` bytes after its header. */
static int grow(struct aci_arena *a, size_t need)
{
	size_t want = a->hint;
	if (a->blocks && want < 2 * (a->bytes / a->blocks))
		want = 2 * (a->bytes / a->blocks);
	if (want < need)
		want = need;
	if (want < MIN_BLOCK)
		want = MIN_BLOCK;
	if (want > SIZE_MAX - HEADER)
		return -1;
	struct aci_arena_block *b = malloc(HEADER + want);
	if (!b)
		return -1;
	b->prev = a->head;
	a->head = b;
	a->next = (uint8_t *)b + HEADER;
	a->left = want;
	a->bytes += HEADER + want;
	a->blocks++;
	a->hint = 0;
	return 0;
}

void *aci_arena_alloc(struct aci_arena *a, size_t n, size_t size)
{
	size_t bytes = aci_arena_size(n, size);
	if (bytes == SIZE_MAX)
		return NULL;
	if (bytes > a->left && grow(a, bytes) != 0)
		return NULL;
	void *p = a->next;
	a->next += bytes;
	a->left -= bytes;
	return p;
}

void *aci_arena_calloc(struct aci_arena *a, size_t n, size_t size)
{
	void *p = aci_arena_alloc(a, n, size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

void aci_arena_free(struct aci_arena *a)
{
	struct aci_arena_block *b = a->head;
	while (b) {
		struct aci_arena_block *prev = b->prev;
		free(b);
		b = prev;
	}
	*a = (struct aci_arena){ 0 };
}
