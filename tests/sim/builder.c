/* SPDX-License-Identifier: MIT */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "builder.h"

#define CAP 2048
#define WORD_CAP 8192

struct pb {
	struct ac_model m;
	struct ac_window windows[CAP];
	struct ac_tensor globals[CAP], planes[CAP];
	struct ac_phase phases[CAP];
	struct ac_launch launches[CAP];
	uint64_t words[WORD_CAP];
	struct ac_repeat repeats[CAP];
	struct ac_delta deltas[CAP];
	struct ac_slot slots[CAP];
	uint64_t frame_values[WORD_CAP];
	struct ac_ref refs[CAP];
	uint8_t pool[4 * WORD_CAP];
	size_t pool_len;
};

/* A capacity check.  Not ck_assert: Check records each assertion that
 * holds with a write to its pipe, and tests that build thousands of
 * programs would spend most of their time there. */
static void need(int ok, const char *what)
{
	if (!ok)
		ck_abort_msg("builder: %s", what);
}

struct pb *pb_new(void)
{
	struct pb *b = calloc(1, sizeof(*b));
	ck_assert_ptr_nonnull(b);
	pb_reset(b);
	return b;
}

void pb_reset(struct pb *b)
{
	b->m = (struct ac_model){ .alignment = 64 };
	b->pool_len = 0;
	b->m.windows = b->windows;
	b->m.globals = b->globals;
	b->m.phases = b->phases;
	b->m.planes = b->planes;
	b->m.launches = b->launches;
	b->m.words = b->words;
	b->m.repeats = b->repeats;
	b->m.deltas = b->deltas;
	b->m.slots = b->slots;
	b->m.frame_values = b->frame_values;
	b->m.refs = b->refs;
}

void pb_free(struct pb *b)
{
	free(b);
}

static struct ac_bytes keep(struct pb *b, const void *data, size_t len)
{
	need(b->pool_len + len <= sizeof(b->pool), "the string pool is full");
	memcpy(b->pool + b->pool_len, data, len);
	struct ac_bytes s = { b->pool + b->pool_len, (uint32_t)len };
	b->pool_len += len;
	return s;
}

static struct ac_bytes text(struct pb *b, const char *s)
{
	return keep(b, s, strlen(s));
}

void pb_window(struct pb *b, uint64_t base, uint64_t size)
{
	need(b->m.n_windows < CAP, "too many windows");
	b->windows[b->m.n_windows++] = (struct ac_window){ { NULL, 0 }, base, size };
}

void pb_global(struct pb *b, const char *name, uint64_t offset, uint64_t size)
{
	need(b->m.n_globals < CAP, "too many globals");
	b->globals[b->m.n_globals++] = (struct ac_tensor){
		.name = text(b, name), .offset = offset, .size = size };
}

void pb_phase(struct pb *b, const char *identity)
{
	need(b->m.n_phases < CAP, "too many phases");
	b->phases[b->m.n_phases++] = (struct ac_phase){
		.identity = text(b, identity), .plane_first = b->m.n_planes };
}

void pb_plane(struct pb *b, const char *name, uint64_t offset, uint64_t size,
	      int carried)
{
	need(b->m.n_phases > 0, "a plane before any phase");
	need(b->m.n_planes < CAP, "too many planes");
	b->planes[b->m.n_planes++] = (struct ac_tensor){
		.name = text(b, name), .offset = offset, .size = size,
		.carried = (uint8_t)(carried != 0) };
	b->phases[b->m.n_phases - 1].plane_count++;
}

uint32_t pb_launch(struct pb *b, const char *phase, uint32_t n,
		   const uint64_t *words)
{
	need(b->m.n_launches < CAP, "too many launches");
	need(b->m.n_words + n <= WORD_CAP, "too many words");
	size_t len = strlen(phase);
	need(len < 128, "a phase identity of 128 bytes or more");
	uint8_t id[131] = { 0x9a, 0x03, (uint8_t)len };
	memcpy(id + 3, phase, len);
	b->launches[b->m.n_launches] = (struct ac_launch){
		.identity = keep(b, id, len + 3), .word_first = b->m.n_words,
		.word_count = n };
	memcpy(b->words + b->m.n_words, words, n * sizeof(*words));
	b->m.n_words += n;
	return b->m.n_launches++;
}

void pb_repeat(struct pb *b, uint64_t first, uint64_t count,
	       uint64_t iterations)
{
	need(b->m.n_repeats < CAP, "too many repeats");
	b->repeats[b->m.n_repeats++] = (struct ac_repeat){
		.first = first, .count = count, .iterations = iterations,
		.delta_first = b->m.n_deltas, .slot_first = b->m.n_slots,
		.frame_value_first = b->m.n_frame_values };
}

void pb_delta(struct pb *b, uint64_t launch, uint64_t word, int64_t delta)
{
	need(b->m.n_deltas < CAP, "too many deltas");
	b->deltas[b->m.n_deltas++] = (struct ac_delta){ launch, word, delta };
	b->repeats[b->m.n_repeats - 1].delta_count++;
}

void pb_slot(struct pb *b, uint64_t launch, uint64_t word)
{
	need(b->m.n_slots < CAP, "too many slots");
	b->slots[b->m.n_slots++] = (struct ac_slot){ launch, word };
	b->repeats[b->m.n_repeats - 1].slot_count++;
}

void pb_frame(struct pb *b, const uint64_t *values)
{
	struct ac_repeat *r = &b->repeats[b->m.n_repeats - 1];
	need(b->m.n_frame_values + r->slot_count <= WORD_CAP,
	     "too many frame values");
	memcpy(b->frame_values + b->m.n_frame_values, values,
	       r->slot_count * sizeof(*values));
	b->m.n_frame_values += r->slot_count;
	r->frame_count++;
}

void pb_ref(struct pb *b, uint64_t first, uint64_t count)
{
	need(b->m.n_refs < CAP, "too many references");
	b->refs[b->m.n_refs++] = (struct ac_ref){ first, count };
}

uint8_t *pb_image(struct pb *b, size_t *len)
{
	struct ac_error err;
	uint8_t *img = ac_model_write_image(&b->m, len, &err);
	ck_assert_msg(img != NULL, "image: %s: %s", err.where, err.message);
	return img;
}

struct ac_model *pb_read_back(struct pb *b)
{
	size_t len;
	uint8_t *img = pb_image(b, &len);
	struct ac_model *m = NULL;
	struct ac_error err;
	ck_assert_msg(ac_model_read_image(img, len, &m, &err) == 0,
		      "image read: %s: %s", err.where, err.message);
	free(img);
	return m;
}
