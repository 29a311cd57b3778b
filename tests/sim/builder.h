/* SPDX-License-Identifier: MIT */
/*
 * A small builder for test programs: fills a struct ac_model in C and
 * writes it as a binary program image with ac_model_write_image().
 * Capacities are fixed and generous for tests; exceeding one aborts.
 */
#ifndef SIM_TESTS_BUILDER_H
#define SIM_TESTS_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include <arenaguard/program.h>

struct pb;

struct pb *pb_new(void);
void pb_free(struct pb *b);
/* Empties a builder, to build another program without another big
 * allocation (which costs more than the program under AddressSanitizer). */
void pb_reset(struct pb *b);

void pb_window(struct pb *b, uint64_t base, uint64_t size);
void pb_global(struct pb *b, const char *name, uint64_t offset, uint64_t size);
/* A phase; the planes added next belong to it. */
void pb_phase(struct pb *b, const char *identity);
void pb_plane(struct pb *b, const char *name, uint64_t offset, uint64_t size,
	      int carried);
/* A launch whose identity declares `phase` (protobuf field 51); returns
 * its index. */
uint32_t pb_launch(struct pb *b, const char *phase, uint32_t n,
		   const uint64_t *words);
#define PB_WORDS(...) \
	(uint32_t)(sizeof((uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t)), \
	(uint64_t[]){__VA_ARGS__}
/* A repeat; the deltas and table added next belong to it. */
void pb_repeat(struct pb *b, uint64_t first, uint64_t count,
	       uint64_t iterations);
void pb_delta(struct pb *b, uint64_t launch, uint64_t word, int64_t delta);
void pb_slot(struct pb *b, uint64_t launch, uint64_t word);
/* frame f's values, one per slot added so far (call once per frame). */
void pb_frame(struct pb *b, const uint64_t *values);
/* A reference of the image's own schedule (the device refuses those). */
void pb_ref(struct pb *b, uint64_t first, uint64_t count);

/* The image; free with free(). */
uint8_t *pb_image(struct pb *b, size_t *len);
/* The model the image reads back as (what a device is given), schedule
 * included; free with ac_model_free(). */
struct ac_model *pb_read_back(struct pb *b);

#endif
