/* SPDX-License-Identifier: MIT */
/*
 * A bump allocator for a program's index tables: a few blocks, freed
 * together.  ac_program_new knows after validation about how many bytes
 * its tables take (the counts of launches, phases, planes and repeats),
 * so one block usually holds them all; a table larger than what is left
 * gets a block of its own (twice the last, at least).  Tables live as
 * long as the arena: the program's, or a scratch arena's that a builder
 * frees when it returns.
 */
#ifndef ARENACERT_ARENA_H
#define ARENACERT_ARENA_H

#include <stddef.h>
#include <stdint.h>

struct aci_arena_block;

struct aci_arena {
	struct aci_arena_block *head;  /* the current block; chained back */
	uint8_t *next;                 /* its first free byte */
	size_t left;                   /* bytes free after next */
	size_t hint;                   /* the next block's bytes, at least */
	size_t bytes;                  /* every block's bytes, headers too */
	uint32_t blocks;
};

/* An empty arena; its first block will hold `hint` bytes at least (a
 * table larger than that gets a larger block). */
void aci_arena_init(struct aci_arena *a, size_t hint);

/* n * size bytes aligned to 16, uninitialised, or NULL on overflow or
 * out-of-memory.  Never NULL for n == 0. */
void *aci_arena_alloc(struct aci_arena *a, size_t n, size_t size);

/* The same, zeroed. */
void *aci_arena_calloc(struct aci_arena *a, size_t n, size_t size);

/* The bytes an allocation of n * size takes from the arena's blocks
 * (rounded to 16), saturating: for the hints. */
size_t aci_arena_size(size_t n, size_t size);

/* Frees every block; the arena is empty again (hint 0). */
void aci_arena_free(struct aci_arena *a);

#endif
