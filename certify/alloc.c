/* SPDX-License-Identifier: MIT */
/*
 * aci_big_calloc: calloc, except that a large block is its own anonymous
 * mapping advised MADV_HUGEPAGE and aligned so that all but its ends are
 * whole huge pages.  Anonymous memory is zero, so nothing is written
 * before the caller writes it.  A header in front of the block records
 * how to free it.  aci_big_alloc: the same without zeroing a small block,
 * for a caller that writes every byte it reads.
 */
#define _DEFAULT_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "alloc.h"

#define HUGE_PAGE ((size_t)2 << 20)
#define MAPPED_FROM HUGE_PAGE          /* smaller blocks come from calloc */

/* Keeps the block 16-byte aligned, as malloc's are. */
struct header {
	void *map;                     /* NULL: the block came from calloc */
	size_t map_len;
};
#define HEADER_SIZE ((sizeof(struct header) + 15) & ~(size_t)15)

static struct header *header_of(void *p)
{
	return (struct header *)((uint8_t *)p - HEADER_SIZE);
}

static void *mapped(size_t bytes)
{
	size_t len = HEADER_SIZE + bytes + HUGE_PAGE;
	if (len < bytes)
		return NULL;
	uint8_t *map = mmap(NULL, len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return NULL;
	/* The data starts at the first huge-page boundary that leaves room
	 * for the header before it. */
	uint8_t *data = (uint8_t *)(((uintptr_t)map + HEADER_SIZE +
				     HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
#ifdef MADV_HUGEPAGE
	/* advice only: without it the block still works, page by page */
	madvise(data, (size_t)(map + len - data), MADV_HUGEPAGE);
#endif
	struct header *h = header_of(data);
	h->map = map;
	h->map_len = len;
	return data;
}

/* aci_big_calloc and aci_big_alloc: below MAPPED_FROM, the C library's
 * block, zeroed when `zero`; from it, a fresh mapping (zero anyway). */
static void *big_block(size_t n, size_t size, int zero)
{
	if (size && n > (SIZE_MAX - HEADER_SIZE - HUGE_PAGE) / size)
		return NULL;
	size_t bytes = n * size;
	if (bytes == 0)
		bytes = 1;
	if (bytes >= MAPPED_FROM)
		return mapped(bytes);
	uint8_t *block = zero ? calloc(1, HEADER_SIZE + bytes)
			      : malloc(HEADER_SIZE + bytes);
	if (!block)
		return NULL;
	header_of(block + HEADER_SIZE)->map = NULL;
	return block + HEADER_SIZE;
}

void *aci_big_calloc(size_t n, size_t size)
{
	return big_block(n, size, 1);
}

void *aci_big_alloc(size_t n, size_t size)
{
	return big_block(n, size, 0);
}

size_t aci_big_footprint(size_t n, size_t size)
{
	if (size && n > (SIZE_MAX - HEADER_SIZE - 2 * HUGE_PAGE) / size)
		return SIZE_MAX;
	size_t bytes = n * size;
	if (bytes == 0)
		bytes = 1;
	if (bytes < MAPPED_FROM)
		return HEADER_SIZE + bytes;
	/* the header's page, and the data to the end of its huge page */
	return HUGE_PAGE + ((bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1));
}

void aci_big_free(void *p)
{
	if (!p)
		return;
	struct header *h = header_of(p);
	if (h->map)
		munmap(h->map, h->map_len);
	else
		free(h);
}
