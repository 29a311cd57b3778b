/* SPDX-License-Identifier: MIT */
/*
 * Zeroed allocations for arrays sized by the program (a launch's phase, a
 * model's launch table).  Large ones are mapped with transparent huge
 * pages advised: on the machines this runs on, faulting in fresh 4 KiB
 * pages costs more than everything certification does with them
 * (docs/performance.md), and a 2 MiB page takes one fault for 512.
 */
#ifndef ARENACERT_ALLOC_H
#define ARENACERT_ALLOC_H

#include <stddef.h>

/* n * size zeroed bytes, or NULL on overflow or out-of-memory.  Never
 * NULL for n == 0 (one byte is allocated), so NULL always means failure. */
void *aci_big_calloc(size_t n, size_t size);

/* The same, uninitialised (a block mapped for its size is zero anyway):
 * for a caller that writes every byte it will read.  Freed by
 * aci_big_free; aci_big_footprint holds for it too. */
void *aci_big_alloc(size_t n, size_t size);

/* The bytes aci_big_calloc(n, size) may make resident, at most: the block
 * and its header, a large block rounded to whole huge pages.  Saturates
 * at SIZE_MAX. */
size_t aci_big_footprint(size_t n, size_t size);

/* Frees what aci_big_calloc returned; NULL is ignored. */
void aci_big_free(void *p);

#endif
