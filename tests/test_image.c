/* SPDX-License-Identifier: MIT */
/*
 * The binary program image (docs/program-image.md): round trips, the
 * canonical form, one test per rejection class with the byte offset it
 * must report, and exhaustive truncation and bit flips of a valid image.
 *
 * Offsets are computed here from the documented layout, not taken from
 * the implementation's header, so the tests check the document too.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "certify/image.h"
#include "suites.h"
#include "util.h"

/* ---- the documented layout ---- */

enum { WINDOWS, GLOBALS, PHASES, PLANES, LAUNCHES, WORDS, REPEATS, DELTAS,
       SLOTS, FRAME_VALUES, SCHEDULE, POOL, NSECTIONS };

#define TABLE_AT(s) (40 + 24 * (uint64_t)(s))
#define TABLE_END TABLE_AT(NSECTIONS)

static const uint32_t entry_size[NSECTIONS] = {
	24, 24, 16, 32, 24, 8, 56, 24, 16, 8, 16, 1
};

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}


static uint64_t section_offset(const uint8_t *img, int s)
{
	return get64(img + TABLE_AT(s) + 8);
}

static uint64_t section_count(const uint8_t *img, int s)
{
	return get64(img + TABLE_AT(s) + 16);
}

/* Byte offset of field `field` of entry i of section s. */
static uint64_t field_at(const uint8_t *img, int s, uint64_t i, uint64_t field)
{
	return section_offset(img, s) + i * entry_size[s] + field;
}

/* ---- fixtures ---- */

#define B(s) { (const uint8_t *)(s), sizeof(s) - 1 }
#define N(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

/* Every table non-empty; names with arbitrary bytes and empty strings; a
 * repeat with deltas and two frames; a repeat with neither; a table of
 * frames without slots. */
static const struct ac_window full_windows[] = {
	{ B("arena0"), 0x1000, 0x1000 },
	{ B(""), 0x10000, 0x100 },
};
static const struct ac_tensor full_globals[] = {
	{ B("w"), 0x1000, 256, 0, {0} },
	{ B("\x00\xff\x80g"), 0x1100, 64, 0, {0} },
};
static const struct ac_phase full_phases[] = {
	{ B("\x9a\x03\x01P"), 0, 1 },
	{ B("\x9a\x03\x01Q"), 1, 2 },
	{ B(""), 3, 0 },
	{ B("\x9a\x03\x03\x00\xffR"), 3, 1 },
};
static const struct ac_tensor full_planes[] = {
	{ B("a"), 0x1400, 256, 0, {0} },
	{ B("a"), 0x1400, 256, 1, {0} },
	{ B("b"), 0x1500, 256, 0, {0} },
	{ B("\xff\x00z"), 0x1400, 64, 0, {0} },
};
static const struct ac_launch full_launches[] = {
	{ B("\x9a\x03\x01P"), 0, 2, 0 },
	{ B("\x9a\x03\x01Q"), 2, 2, 0 },
	{ B(""), 4, 0, 0 },
	{ B("\x08\x96\x01"), 4, 3, 0 },
};
static const uint64_t full_words[] = {
	0x1400, 0x1000, 0x1400, 0x1500, UINT64_MAX, 0, 0x8000000000000000u,
};
static const struct ac_repeat full_repeats[] = {
	{ 2, 1, 1, 0, 0, 0, 0, 3, 0 },       /* 3 frames of no slots */
	{ 3, 1, 200, 0, 1, 0, 0, 0, 0 },     /* a delta, no table */
	{ 0, 2, 4, 1, 2, 0, 2, 2, 0 },       /* 2 deltas, 2 frames of 2 */
};
static const struct ac_delta full_deltas[] = {
	{ 3, 2, INT64_MIN }, { 0, 0, 64 }, { 1, 1, -64 },
};
static const struct ac_slot full_slots[] = { { 0, 1 }, { 1, 0 } };
static const uint64_t full_frame_values[] = { 0x1000, 0x1400, 0x1040, 0x1440 };
static const struct ac_ref full_refs[] = {
	{ 0, 2 }, { 2, 2 }, { UINT64_MAX, UINT64_MAX },
};

static struct ac_model full_model(void)
{
	return (struct ac_model){
		.alignment = 64,
		.n_windows = N(full_windows), .windows = full_windows,
		.n_globals = N(full_globals), .globals = full_globals,
		.n_phases = N(full_phases), .phases = full_phases,
		.n_planes = N(full_planes), .planes = full_planes,
		.n_launches = N(full_launches), .launches = full_launches,
		.n_words = N(full_words), .words = full_words,
		.n_repeats = N(full_repeats), .repeats = full_repeats,
		.n_deltas = N(full_deltas), .deltas = full_deltas,
		.n_slots = N(full_slots), .slots = full_slots,
		.n_frame_values = N(full_frame_values),
		.frame_values = full_frame_values,
		.n_refs = N(full_refs), .refs = full_refs,
	};
}

/* Spec example 1 (shared/spec/examples/ex1.json), built by hand. */
static const struct ac_window ex1_windows[] = { { B("arena0"), 0x1000, 0x1000 } };
static const struct ac_tensor ex1_globals[] = { { B("w"), 0x1000, 256, 0, {0} } };
static const struct ac_phase ex1_phases[] = {
	{ B("P"), 0, 1 }, { B("Q"), 1, 2 }, { B("R"), 3, 1 },
};
static const struct ac_tensor ex1_planes[] = {
	{ B("a"), 0x1400, 256, 0, {0} },
	{ B("a"), 0x1400, 256, 1, {0} },
	{ B("b"), 0x1500, 256, 0, {0} },
	{ B("z"), 0x1400, 64, 0, {0} },
};
static const struct ac_launch ex1_launches[] = {
	{ B("\x9a\x03\x01P"), 0, 2, 0 },
	{ B("\x9a\x03\x01Q"), 2, 2, 0 },
};
static const uint64_t ex1_words[] = { 0x1400, 0x1000, 0x1400, 0x1500 };
static const struct ac_ref ex1_refs[] = { { 0, 2 } };

static struct ac_model ex1_model(void)
{
	return (struct ac_model){
		.alignment = 64,
		.n_windows = 1, .windows = ex1_windows,
		.n_globals = 1, .globals = ex1_globals,
		.n_phases = 3, .phases = ex1_phases,
		.n_planes = 4, .planes = ex1_planes,
		.n_launches = 2, .launches = ex1_launches,
		.n_words = 4, .words = ex1_words,
		.n_refs = 1, .refs = ex1_refs,
	};
}

/* The example of shared/spec/program-json.md, built by hand. */
static const struct ac_phase doc_phases[] = { { B("P"), 0, 1 }, { B("Q"), 1, 2 } };
static const struct ac_repeat doc_repeats[] = { { 0, 1, 4, 0, 1, 0, 1, 2, 0 } };
static const struct ac_delta doc_deltas[] = { { 0, 0, 64 } };
static const struct ac_slot doc_slots[] = { { 0, 1 } };
static const uint64_t doc_frame_values[] = { 0x1000, 0x1040 };

static struct ac_model doc_model(void)
{
	struct ac_model m = ex1_model();
	m.n_phases = 2;
	m.phases = doc_phases;
	m.n_planes = 3;
	m.n_repeats = 1;
	m.repeats = doc_repeats;
	m.n_deltas = 1;
	m.deltas = doc_deltas;
	m.n_slots = 1;
	m.slots = doc_slots;
	m.n_frame_values = 2;
	m.frame_values = doc_frame_values;
	return m;
}

/* The image of doc_model(): the worked example of docs/program-image.md. */
static const uint8_t doc_image[] = {
	0x41, 0x52, 0x45, 0x4e, 0x41, 0x50, 0x52, 0x47,  /* 0 */
	0x01, 0x00, 0x00, 0x00, 0x0c, 0x00, 0x00, 0x00,  /* 8 */
	0xe0, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 16 */
	0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 24 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 32 */
	0x01, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00,  /* 40 */
	0x48, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 48 */
	0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 56 */
	0x02, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00,  /* 64 */
	0x60, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 72 */
	0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 80 */
	0x03, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00,  /* 88 */
	0x78, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 96 */
	0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 104 */
	0x04, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00,  /* 112 */
	0x98, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 120 */
	0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 128 */
	0x05, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00,  /* 136 */
	0xf8, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 144 */
	0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 152 */
	0x06, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00,  /* 160 */
	0x28, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 168 */
	0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 176 */
	0x07, 0x00, 0x00, 0x00, 0x38, 0x00, 0x00, 0x00,  /* 184 */
	0x48, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 192 */
	0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 200 */
	0x08, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00,  /* 208 */
	0x80, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 216 */
	0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 224 */
	0x09, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00,  /* 232 */
	0x98, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 240 */
	0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 248 */
	0x0a, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00,  /* 256 */
	0xa8, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 264 */
	0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 272 */
	0x0b, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00,  /* 280 */
	0xb8, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 288 */
	0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 296 */
	0x0c, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,  /* 304 */
	0xc8, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 312 */
	0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 320 */
	0x00, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00,  /* 328 */
	0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 336 */
	0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 344 */
	0x06, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,  /* 352 */
	0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 360 */
	0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 368 */
	0x07, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,  /* 376 */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,  /* 384 */
	0x08, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,  /* 392 */
	0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,  /* 400 */
	0x09, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,  /* 408 */
	0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 416 */
	0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 424 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 432 */
	0x0a, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,  /* 440 */
	0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 448 */
	0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 456 */
	0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 464 */
	0x0b, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,  /* 472 */
	0x00, 0x15, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 480 */
	0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 488 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 496 */
	0x0c, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00,  /* 504 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 512 */
	0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 520 */
	0x10, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00,  /* 528 */
	0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 536 */
	0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 544 */
	0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 552 */
	0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 560 */
	0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 568 */
	0x00, 0x15, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 576 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 584 */
	0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 592 */
	0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 600 */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,  /* 608 */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,  /* 616 */
	0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 624 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 632 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 640 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 648 */
	0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 656 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 664 */
	0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 672 */
	0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 680 */
	0x40, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 688 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 696 */
	0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* 704 */
	0x61, 0x72, 0x65, 0x6e, 0x61, 0x30, 0x77, 0x50,  /* 712 */
	0x51, 0x61, 0x61, 0x62, 0x9a, 0x03, 0x01, 0x50,  /* 720 */
	0x9a, 0x03, 0x01, 0x51, 0x00, 0x00, 0x00, 0x00,  /* 728 */
};

/* ---- helpers ---- */

static uint8_t *write_ok(const struct ac_model *m, size_t *len)
{
	struct ac_error err;
	char text[512];
	uint8_t *img = ac_model_write_image(m, len, &err);
	ck_assert_msg(img, "write failed: %s",
		      ac_error_text(&err, text, sizeof(text)));
	return img;
}

/*
 * ac_program_view_image and ac_program_view (one call, which skips the
 * structure check of the model it reads) against ac_model_view_image then
 * ac_program_new (view_rc, view, view_err): the same program verdict or
 * the same error, and *model NULL exactly when the image was rejected.
 */
static void same_as_two_calls(const uint8_t *copy, size_t len, int view_rc,
			      const struct ac_model *view,
			      const struct ac_error *view_err)
{
	struct ac_error two_err = *view_err;
	ac_program *two = view_rc == 0 ? ac_program_new(view, &two_err) : NULL;
	/* ac_program_view reads an input without the magic as JSON */
	int magic = len >= AC_IMAGE_MAGIC_LEN &&
		    memcmp(copy, AC_IMAGE_MAGIC, AC_IMAGE_MAGIC_LEN) == 0;
	for (int dispatch = 0; dispatch < 1 + magic; dispatch++) {
		struct ac_model *m = (struct ac_model *)1;
		struct ac_error err;
		ac_program *one = dispatch
			? ac_program_view(copy, len, NULL, &m, &err)
			: ac_program_view_image(copy, len, NULL, &m, &err);
		ck_assert_int_eq(m == NULL, view_rc != 0);
		ck_assert_int_eq(one == NULL, two == NULL);
		if (one) {
			ck_assert_uint_eq(ac_program_verdict(one),
					  ac_program_verdict(two));
			ck_assert_ptr_eq(ac_program_model(one), m);
		} else {
			ck_assert_str_eq(err.where, two_err.where);
			ck_assert_str_eq(err.message, two_err.message);
		}
		ac_program_free(one);
		ac_model_free(m);
	}
	ac_program_free(two);
}

/*
 * Reads a private copy (so that nothing reads past len, and ASan sees any
 * overread), once with ac_model_read_image and once with
 * ac_model_view_image: both must accept or reject alike, with the same
 * error, and build the same model; and the one-call readers agree
 * (same_as_two_calls).
 */
static int read_copy(const uint8_t *img, size_t len, struct ac_model **out,
		     struct ac_error *err)
{
	uint8_t *copy = malloc(len ? len : 1);
	ck_assert_ptr_nonnull(copy);
	if (len)
		memcpy(copy, img, len);
	struct ac_model *view = NULL;
	struct ac_error view_err;
	int view_rc = ac_model_view_image(copy, len, &view, &view_err);
	int rc = ac_model_read_image(copy, len, out, err);
	ck_assert_int_eq(view_rc, rc);
	same_as_two_calls(copy, len, view_rc, view, &view_err);
	if (rc == 0) {
		util_expect_same_model(*out, view);
	} else if (err) {
		ck_assert_str_eq(view_err.where, err->where);
		ck_assert_str_eq(view_err.message, err->message);
	}
	ac_model_free(view);
	free(copy);
	return rc;
}

static struct ac_model *read_ok(const uint8_t *img, size_t len)
{
	struct ac_model *m = NULL;
	struct ac_error err;
	char text[512];
	ck_assert_msg(read_copy(img, len, &m, &err) == 0, "read failed: %s",
		      ac_error_text(&err, text, sizeof(text)));
	return m;
}

/* The image is rejected with exactly this location. */
static void read_fails_at(const uint8_t *img, size_t len, const char *where)
{
	struct ac_model *m = (struct ac_model *)1;
	struct ac_error err;
	char text[512];
	ck_assert_msg(read_copy(img, len, &m, &err) == -1,
		      "accepted, expected a rejection at %s", where);
	ck_assert_ptr_null(m);
	ck_assert_msg(strcmp(err.where, where) == 0,
		      "rejected at \"%s\", expected \"%s\" (%s)", err.where,
		      where, ac_error_text(&err, text, sizeof(text)));
	ck_assert_msg(err.message[0], "no message for %s", where);
}

/* Same, building the location "byte N (name)". */
static void fails_at(const uint8_t *img, size_t len, uint64_t byte,
		     const char *name)
{
	char where[128];
	snprintf(where, sizeof(where), "byte %llu (%s)",
		 (unsigned long long)byte, name);
	read_fails_at(img, len, where);
}

/* Writes m, reads it back, compares, writes again: same bytes. */
static void round_trip(const struct ac_model *m)
{
	size_t len, len2;
	uint8_t *img = write_ok(m, &len);
	ck_assert_uint_eq(len % 8, 0);
	ck_assert_uint_eq(get64(img + 16), len);
	struct ac_model *back = read_ok(img, len);
	util_expect_same_model(m, back);
	uint8_t *img2 = write_ok(back, &len2);
	ck_assert_uint_eq(len, len2);
	ck_assert(memcmp(img, img2, len) == 0);
	ac_model_free(back);
	free(img);
	free(img2);
}

/* A valid image of the full fixture, for the rejection tests. */
static uint8_t *full_image(size_t *len)
{
	struct ac_model m = full_model();
	return write_ok(&m, len);
}

/* ---- round trips ---- */

START_TEST(test_round_trip_full)
{
	struct ac_model m = full_model();
	round_trip(&m);
}
END_TEST

START_TEST(test_round_trip_empty)
{
	struct ac_model m = { .alignment = 1 };
	size_t len;
	uint8_t *img = write_ok(&m, &len);
	ck_assert_uint_eq(len, TABLE_END);
	for (int s = 0; s < NSECTIONS; s++) {
		ck_assert_uint_eq(section_offset(img, s), TABLE_END);
		ck_assert_uint_eq(section_count(img, s), 0);
	}
	free(img);
	round_trip(&m);
}
END_TEST

/* Extreme values: alignment 0, counts of frames without slots and slots
 * without frames, a lone empty string, maximal fields. */
START_TEST(test_round_trip_edges)
{
	static const struct ac_tensor planes[] = {
		{ B(""), UINT64_MAX, UINT64_MAX, 1, {0} },
	};
	static const struct ac_phase phases[] = { { B(""), 0, 1 } };
	static const struct ac_launch launches[] = { { B(""), 0, 1, 0 } };
	static const uint64_t words[] = { 42 };
	static const struct ac_slot slots[] = { { UINT64_MAX, 7 } };
	static const struct ac_repeat repeats[] = {
		{ UINT64_MAX, UINT64_MAX, UINT64_MAX, 0, 0, 0, 1, 0, 0 },
		{ 0, 0, 0, 0, 0, 1, 0, UINT64_MAX, 0 },
	};
	struct ac_model m = {
		.alignment = 0,
		.n_phases = 1, .phases = phases,
		.n_planes = 1, .planes = planes,
		.n_launches = 1, .launches = launches,
		.n_words = 1, .words = words,
		.n_repeats = 2, .repeats = repeats,
		.n_slots = 1, .slots = slots,
	};
	round_trip(&m);
}
END_TEST

/* A reader-built model is canonical: its firsts are running sums. */
START_TEST(test_image_model_image)
{
	size_t len;
	uint8_t *img = full_image(&len);
	struct ac_model *m = read_ok(img, len);
	uint64_t planes = 0, words = 0;
	for (uint32_t i = 0; i < m->n_phases; i++) {
		ck_assert_uint_eq(m->phases[i].plane_first, planes);
		planes += m->phases[i].plane_count;
	}
	for (uint32_t i = 0; i < m->n_launches; i++) {
		ck_assert_uint_eq(m->launches[i].word_first, words);
		words += m->launches[i].word_count;
	}
	size_t len2;
	uint8_t *img2 = write_ok(m, &len2);
	ck_assert_uint_eq(len, len2);
	ck_assert(memcmp(img, img2, len) == 0);
	ac_model_free(m);
	/* ac_model_read() recognises the image by its magic. */
	ck_assert_int_eq(ac_model_read(img, len, &m, NULL), 0);
	struct ac_model f = full_model();
	util_expect_same_model(&f, m);
	ac_model_free(m);
	free(img);
	free(img2);
}
END_TEST

/* The reader accepts any alignment of the input buffer. */
START_TEST(test_unaligned_input)
{
	size_t len;
	uint8_t *img = full_image(&len);
	for (size_t shift = 1; shift < 8; shift++) {
		uint8_t *buf = malloc(len + shift);
		ck_assert_ptr_nonnull(buf);
		memcpy(buf + shift, img, len);
		struct ac_model *m = NULL;
		struct ac_error err;
		ck_assert_int_eq(ac_model_read_image(buf + shift, len, &m,
						     &err), 0);
		struct ac_model f = full_model();
		util_expect_same_model(&f, m);
		ac_model_free(m);
		free(buf);
	}
	free(img);
}
END_TEST

/* A view uses an 8-byte aligned image in place and copies otherwise;
 * either way it is the model the image describes. */
START_TEST(test_view_borrows_when_aligned)
{
	size_t len;
	uint8_t *img = full_image(&len);
	uint8_t *buf = malloc(len + 8);   /* malloc'ed: 8-byte aligned */
	ck_assert_ptr_nonnull(buf);
	for (size_t shift = 0; shift < 8; shift++) {
		memcpy(buf + shift, img, len);
		struct ac_model *m = NULL;
		ck_assert_int_eq(ac_model_view_image(buf + shift, len, &m,
						     NULL), 0);
		struct ac_model f = full_model();
		util_expect_same_model(&f, m);
		const uint8_t *words = (const uint8_t *)m->words;
		int inside = words >= buf + shift && words < buf + shift + len;
		ck_assert_int_eq(inside, shift == 0);
		ac_model_free(m);
	}
	free(buf);
	free(img);
}
END_TEST

/* The documented example, byte for byte: the format does not drift. */
START_TEST(test_golden)
{
	struct ac_model m = doc_model();
	size_t len;
	uint8_t *img = write_ok(&m, &len);
	ck_assert_uint_eq(len, sizeof(doc_image));
	for (size_t i = 0; i < len; i++)
		ck_assert_msg(img[i] == doc_image[i],
			      "byte %zu: wrote %02x, documented %02x", i,
			      img[i], doc_image[i]);
	free(img);
	round_trip(&m);
}
END_TEST

/* Section layout: kinds 1..12, entry sizes, offsets, the pool's order. */
START_TEST(test_layout)
{
	size_t len;
	uint8_t *img = full_image(&len);
	ck_assert(memcmp(img, "ARENAPRG", 8) == 0);
	ck_assert_uint_eq(get32(img + 8), 1);
	ck_assert_uint_eq(get32(img + 12), NSECTIONS);
	ck_assert_uint_eq(get64(img + 24), 64);
	ck_assert_uint_eq(get64(img + 32), 0);
	uint64_t at = TABLE_END;
	for (int s = 0; s < NSECTIONS; s++) {
		ck_assert_uint_eq(get32(img + TABLE_AT(s)), s + 1);
		ck_assert_uint_eq(get32(img + TABLE_AT(s) + 4), entry_size[s]);
		ck_assert_uint_eq(section_offset(img, s), at);
		at = (at + section_count(img, s) * entry_size[s] + 7) & ~7ull;
	}
	ck_assert_uint_eq(at, len);
	static const char pool[] = "arena0" "w" "\x00\xff\x80g"
		"\x9a\x03\x01P" "\x9a\x03\x01Q" "\x9a\x03\x03\x00\xffR"
		"a" "a" "b" "\xff\x00z" "\x9a\x03\x01P" "\x9a\x03\x01Q"
		"\x08\x96\x01";
	ck_assert_uint_eq(section_count(img, POOL), sizeof(pool) - 1);
	ck_assert(memcmp(img + section_offset(img, POOL), pool,
			 sizeof(pool) - 1) == 0);
	/* A negative delta is two's complement. */
	ck_assert_uint_eq(get64(img + field_at(img, DELTAS, 2, 16)),
			  (uint64_t)-64);
	free(img);
}
END_TEST

/* A words section large enough to take the bulk paths. */
START_TEST(test_large_words)
{
	uint64_t n = 1u << 20;
	uint64_t *words = malloc(n * 8);
	ck_assert_ptr_nonnull(words);
	for (uint64_t i = 0; i < n; i++)
		words[i] = i * 0x9e3779b97f4a7c15u;
	struct ac_launch launches[3] = {
		{ B("x"), 0, 1000, 0 },
		{ B("y"), 1000, (uint32_t)(n - 1000 - 5), 0 },
		{ B("z"), n - 5, 5, 0 },
	};
	struct ac_model m = {
		.alignment = 8, .n_launches = 3, .launches = launches,
		.n_words = n, .words = words,
	};
	round_trip(&m);
	free(words);
}
END_TEST

/* ---- the writer gathers nested runs through (first, count) ---- */

START_TEST(test_writer_gathers)
{
	/* Runs out of order, shared and with unused entries. */
	static const struct ac_tensor planes[] = {
		{ B("unused"), 1, 1, 0, {0} },
		{ B("b"), 0x20, 0x10, 1, {0} },
		{ B("a"), 0x10, 0x10, 0, {0} },
	};
	static const struct ac_phase phases[] = {
		{ B("Q"), 1, 2 }, { B("P"), 2, 1 },
	};
	static const uint64_t words[] = { 9, 1, 2, 3 };
	static const struct ac_launch launches[] = {
		{ B("l0"), 1, 3, 0 }, { B("l1"), 1, 2, 0 }, { B("l2"), 0, 1, 0 },
	};
	static const struct ac_delta deltas[] = { { 1, 1, 5 }, { 0, 0, -5 } };
	static const struct ac_slot slots[] = { { 0, 1 } };
	static const uint64_t values[] = { 7, 8, 9 };
	static const struct ac_repeat repeats[] = {
		{ 0, 1, 2, 1, 1, 0, 1, 2, 1 },
		{ 1, 1, 2, 0, 2, 0, 1, 1, 0 },
	};
	struct ac_model m = {
		.alignment = 16,
		.n_phases = 2, .phases = phases,
		.n_planes = 3, .planes = planes,
		.n_launches = 3, .launches = launches,
		.n_words = 4, .words = words,
		.n_repeats = 2, .repeats = repeats,
		.n_deltas = 2, .deltas = deltas,
		.n_slots = 1, .slots = slots,
		.n_frame_values = 3, .frame_values = values,
	};
	size_t len;
	uint8_t *img = write_ok(&m, &len);
	struct ac_model *r = read_ok(img, len);
	ck_assert_uint_eq(r->n_planes, 3);
	ck_assert_uint_eq(r->planes[0].offset, 0x20);
	ck_assert_uint_eq(r->planes[1].offset, 0x10);
	ck_assert_uint_eq(r->planes[2].offset, 0x10);
	ck_assert_uint_eq(r->phases[1].plane_first, 2);
	static const uint64_t gathered[] = { 1, 2, 3, 1, 2, 9 };
	ck_assert_uint_eq(r->n_words, 6);
	ck_assert(memcmp(r->words, gathered, sizeof(gathered)) == 0);
	ck_assert_uint_eq(r->n_deltas, 3);
	ck_assert_int_eq(r->deltas[0].delta, -5);
	ck_assert_int_eq(r->deltas[1].delta, 5);
	ck_assert_int_eq(r->deltas[2].delta, -5);
	static const uint64_t frames[] = { 8, 9, 7 };
	ck_assert_uint_eq(r->n_frame_values, 3);
	ck_assert(memcmp(r->frame_values, frames, sizeof(frames)) == 0);
	ck_assert_uint_eq(r->repeats[1].frame_value_first, 2);
	/* The gathered model is canonical: it writes the same bytes. */
	size_t len2;
	uint8_t *img2 = write_ok(r, &len2);
	ck_assert_uint_eq(len, len2);
	ck_assert(memcmp(img, img2, len) == 0);
	ac_model_free(r);
	free(img);
	free(img2);
}
END_TEST

static void write_fails_at(const struct ac_model *m, const char *where)
{
	struct ac_error err;
	size_t len = 0;
	char text[512];
	uint8_t *img = ac_model_write_image(m, &len, &err);
	ck_assert_msg(!img, "wrote a model that cannot be written (%s)",
		      where);
	ck_assert_msg(strcmp(err.where, where) == 0, "failed at %s, "
		      "expected %s", ac_error_text(&err, text, sizeof(text)),
		      where);
}

START_TEST(test_writer_rejects)
{
	struct ac_model m = full_model();
	struct ac_phase phases[N(full_phases)];
	memcpy(phases, full_phases, sizeof(phases));
	phases[1].plane_count = 4;    /* planes 1..4 of 4 */
	m.phases = phases;
	write_fails_at(&m, "phases[1].plane_count");

	m = full_model();
	struct ac_launch launches[N(full_launches)];
	memcpy(launches, full_launches, sizeof(launches));
	launches[2].word_first = UINT64_MAX;  /* empty run, first past end */
	m.launches = launches;
	write_fails_at(&m, "launches[2].word_count");

	m = full_model();
	struct ac_repeat repeats[N(full_repeats)];
	memcpy(repeats, full_repeats, sizeof(repeats));
	repeats[2].frame_count = UINT64_MAX / 2 + 1;  /* * 2 slots wraps */
	m.repeats = repeats;
	write_fails_at(&m, "repeats[2].frame_count");

	memcpy(repeats, full_repeats, sizeof(repeats));
	repeats[1].delta_first = 3;   /* 1 delta from 3 of 3 */
	write_fails_at(&m, "repeats[1].delta_count");

	m = full_model();
	struct ac_window windows[N(full_windows)];
	memcpy(windows, full_windows, sizeof(windows));
	windows[1].name.data = NULL;
	windows[1].name.len = 3;
	m.windows = windows;
	write_fails_at(&m, "windows[1].name");

	m = full_model();
	m.words = NULL;
	write_fails_at(&m, "words");
}
END_TEST

/* A string offset must fit 32 bits.  No 4 GiB of strings is built: 257
 * windows name the same 16 MiB, so window 256's name starts at 2^32.
 * Launches, whose lengths plan() sums in one pass: after one such window,
 * launch 255's name is the first to start at 2^32 (not the last launch),
 * for the writer and for ac_program_new. */
START_TEST(test_writer_pool_overflow)
{
	uint8_t *big = calloc(1, 1u << 24);
	ck_assert_ptr_nonnull(big);
	uint32_t n = 300;
	struct ac_window *w = calloc(n, sizeof(*w));
	struct ac_launch *l = calloc(n, sizeof(*l));
	ck_assert(w && l);
	for (uint32_t i = 0; i < n; i++) {
		w[i] = (struct ac_window){ { big, 1u << 24 }, 0, 1 };
		l[i] = (struct ac_launch){ { big, 1u << 24 }, 0, 0, 0 };
	}
	struct ac_model m = { .alignment = 1, .n_windows = 257, .windows = w };
	write_fails_at(&m, "windows[256].name");
	m.n_windows = 1;
	m.n_launches = n;
	m.launches = l;
	write_fails_at(&m, "launches[255].identity");
	struct ac_error err;
	ck_assert_ptr_null(ac_program_new(&m, &err));
	ck_assert_str_eq(err.where, "launches[255].identity");
	free(l);
	free(w);
	free(big);
}
END_TEST

/* ---- aci_image_emit: what the digest hashes ---- */

struct collect {
	uint8_t *p;
	size_t len, cap, calls;
};

static void collect_sink(void *ctx, const void *data, size_t len)
{
	struct collect *c = ctx;
	ck_assert_uint_gt(len, 0);
	if (c->len + len > c->cap) {
		c->cap = 2 * (c->len + len);
		c->p = realloc(c->p, c->cap);
		ck_assert_ptr_nonnull(c->p);
	}
	memcpy(c->p + c->len, data, len);
	c->len += len;
	c->calls++;
}

START_TEST(test_emit_streams)
{
	struct ac_model m = full_model();
	struct ac_error err;
	size_t len;
	uint8_t *img = write_ok(&m, &len);
	struct collect c = { 0 };
	ck_assert_int_eq(aci_image_emit(&m, 1, collect_sink, &c, &err), 0);
	ck_assert_uint_eq(c.len, len);
	ck_assert(memcmp(c.p, img, len) == 0);
	free(img);

	/* Without the schedule: the image of the model with no refs. */
	c.len = 0;
	ck_assert_int_eq(aci_image_emit(&m, 0, collect_sink, &c, &err), 0);
	m.n_refs = 0;
	img = write_ok(&m, &len);
	ck_assert_uint_eq(c.len, len);
	ck_assert(memcmp(c.p, img, len) == 0);
	free(img);
	free(c.p);
}
END_TEST

/* ---- rejections: one per class, at the byte the document names ---- */

START_TEST(test_reject_magic)
{
	size_t len;
	uint8_t *img = full_image(&len);
	img[3] ^= 0x20;
	fails_at(img, len, 0, "header.magic");
	struct ac_model *m = NULL;
	ck_assert_int_eq(ac_model_read_image(img, len, &m, NULL), -1);
	ck_assert_ptr_null(m);
	free(img);
	static const uint8_t json[] = "{\"alignment\": 64}";
	fails_at(json, sizeof(json) - 1, 0, "header.magic");
	/* ac_program_view reads it as JSON, as ac_model_view does; alignment
	 * 64 with no windows and launches is a well-formed program, and
	 * alignment 3 is not */
	static const char *const texts[] = { "{\"alignment\": 64}",
					     "{\"alignment\": 3}", "{" };
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct ac_error err, two_err;
		struct ac_model *two_m = NULL;
		ac_program *two = NULL;
		if (ac_model_read_json(texts[i], strlen(texts[i]), &two_m,
				       &two_err) == 0)
			two = ac_program_new(two_m, &two_err);
		ac_program *one = ac_program_view(texts[i], strlen(texts[i]),
						  NULL, &m, &err);
		ck_assert_int_eq(one == NULL, two == NULL);
		ck_assert_int_eq(m == NULL, two_m == NULL);
		ck_assert_int_eq(i == 0, one != NULL);
		if (!one) {
			ck_assert_str_eq(err.where, two_err.where);
			ck_assert_str_eq(err.message, two_err.message);
		}
		ac_program_free(one);
		ac_program_free(two);
		ac_model_free(m);
		ac_model_free(two_m);
	}
}
END_TEST

START_TEST(test_reject_version)
{
	size_t len;
	uint8_t *img = full_image(&len);
	put32(img + 8, 2);
	fails_at(img, len, 8, "header.version");
	put32(img + 8, 0);
	fails_at(img, len, 8, "header.version");
	free(img);
}
END_TEST

START_TEST(test_reject_section_count)
{
	size_t len;
	uint8_t *img = full_image(&len);
	put32(img + 12, NSECTIONS - 1);
	fails_at(img, len, 12, "header.section_count");
	free(img);
}
END_TEST

START_TEST(test_reject_image_size)
{
	size_t len;
	uint8_t *img = full_image(&len);
	util_put_le64(img + 16, len + 8);
	fails_at(img, len, 16, "header.image_size");
	util_put_le64(img + 16, len - 8);
	fails_at(img, len, 16, "header.image_size");
	free(img);
}
END_TEST

START_TEST(test_reject_truncated_header)
{
	size_t len;
	uint8_t *img = full_image(&len);
	fails_at(img, 0, 0, "header.magic");
	fails_at(img, 7, 0, "header.magic");
	fails_at(img, 10, 8, "header.version");
	fails_at(img, 20, 16, "header.image_size");
	/* A consistent 40-byte header with no section table. */
	util_put_le64(img + 16, 40);
	fails_at(img, 40, 40, "sections[0]");
	free(img);
}
END_TEST

START_TEST(test_reject_reserved)
{
	size_t len;
	uint8_t *img = full_image(&len);
	img[39] = 1;
	fails_at(img, len, 32, "header.reserved0");
	free(img);
}
END_TEST

START_TEST(test_reject_section_table)
{
	size_t len;
	uint8_t *img = full_image(&len);
	put32(img + TABLE_AT(PHASES), PHASES + 2);
	fails_at(img, len, TABLE_AT(PHASES), "sections[2].kind");
	free(img);

	img = full_image(&len);
	put32(img + TABLE_AT(PLANES) + 4, 40);
	fails_at(img, len, TABLE_AT(PLANES) + 4, "sections[3].entry_size");
	free(img);

	/* Sections swapped: the table must list them in order. */
	img = full_image(&len);
	uint8_t tmp[24];
	memcpy(tmp, img + TABLE_AT(SLOTS), 24);
	memcpy(img + TABLE_AT(SLOTS), img + TABLE_AT(DELTAS), 24);
	memcpy(img + TABLE_AT(DELTAS), tmp, 24);
	fails_at(img, len, TABLE_AT(DELTAS), "sections[7].kind");
	free(img);
}
END_TEST

START_TEST(test_reject_section_offset)
{
	size_t len;
	uint8_t *img = full_image(&len);
	uint64_t at = TABLE_AT(PLANES) + 8;
	util_put_le64(img + at, get64(img + at) + 8);
	fails_at(img, len, at, "sections[3].offset");
	util_put_le64(img + at, get64(img + at) - 16);
	fails_at(img, len, at, "sections[3].offset");
	free(img);
}
END_TEST

/* Counts whose byte size wraps 64 bits must not pass a bounds check. */
START_TEST(test_reject_count_overflow)
{
	static const uint64_t counts[] = {
		1ull << 63, 1ull << 61, (1ull << 61) + 1, UINT64_MAX,
		UINT64_MAX / 24 + 1, 1ull << 32,
	};
	for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
		static const int sections[] = { WINDOWS, PLANES, WORDS,
						REPEATS, SCHEDULE, POOL };
		for (size_t j = 0; j < 6; j++) {
			size_t len;
			uint8_t *img = full_image(&len);
			int s = sections[j];
			uint64_t at = TABLE_AT(s) + 16;
			util_put_le64(img + at, counts[k]);
			char name[32];
			snprintf(name, sizeof(name), "sections[%d].count", s);
			fails_at(img, len, at, name);
			free(img);
		}
	}
}
END_TEST

START_TEST(test_reject_trailing_bytes)
{
	size_t len;
	uint8_t *img = full_image(&len);
	uint8_t *big = calloc(1, len + 8);
	ck_assert_ptr_nonnull(big);
	memcpy(big, img, len);
	fails_at(big, len + 8, 16, "header.image_size");
	util_put_le64(big + 16, len + 8);
	fails_at(big, len + 8, len, "end of image");
	/* A length that is not a multiple of 8. */
	util_put_le64(big + 16, len + 3);
	fails_at(big, len + 3, 16, "header.image_size");
	free(big);
	free(img);
}
END_TEST

START_TEST(test_reject_padding)
{
	size_t len;
	uint8_t *img = full_image(&len);
	uint64_t end = section_offset(img, POOL) + section_count(img, POOL);
	ck_assert_uint_lt(end, len);      /* the fixture's pool is padded */
	img[len - 1] = 0x80;
	fails_at(img, len, len - 1, "pool.padding");
	img[end] = 1;
	fails_at(img, len, end, "pool.padding");
	free(img);

	img = full_image(&len);
	uint64_t at = field_at(img, PLANES, 2, 30);
	img[at] = 4;
	fails_at(img, len, at, "planes[2].pad");
	free(img);

	img = full_image(&len);
	at = field_at(img, LAUNCHES, 3, 20);
	put32(img + at, 1u << 24);
	fails_at(img, len, at + 3, "launches[3].pad");
	free(img);
}
END_TEST

START_TEST(test_reject_carried)
{
	size_t len;
	uint8_t *img = full_image(&len);
	uint64_t at = field_at(img, PLANES, 1, 24);
	ck_assert_uint_eq(img[at], 1);
	img[at] = 2;
	fails_at(img, len, at, "planes[1].carried");
	img[at] = 0xff;
	fails_at(img, len, at, "planes[1].carried");
	free(img);
}
END_TEST

START_TEST(test_reject_strings)
{
	size_t len;
	uint8_t *img = full_image(&len);
	uint64_t pool = section_count(img, POOL);
	uint64_t at = field_at(img, WINDOWS, 0, 0);
	put32(img + at, (uint32_t)pool + 100);  /* offset past the pool */
	fails_at(img, len, at, "windows[0].name.offset");
	put32(img + at, 0);
	put32(img + at + 4, (uint32_t)pool + 1);  /* length past the pool */
	fails_at(img, len, at + 4, "windows[0].name.length");
	put32(img + at + 4, UINT32_MAX);
	fails_at(img, len, at + 4, "windows[0].name.length");
	free(img);

	/* A gap or an overlap between strings. */
	img = full_image(&len);
	at = field_at(img, PLANES, 2, 0);
	put32(img + at, get32(img + at) + 1);
	fails_at(img, len, at, "planes[2].name.offset");
	put32(img + at, get32(img + at) - 2);
	fails_at(img, len, at, "planes[2].name.offset");
	free(img);

	/* The last string runs past the pool, or leaves part of it unused. */
	img = full_image(&len);
	at = field_at(img, LAUNCHES, 3, 4);
	put32(img + at, get32(img + at) + 1);
	fails_at(img, len, at, "launches[3].identity.length");
	put32(img + at, get32(img + at) - 2);
	fails_at(img, len, TABLE_AT(POOL) + 16, "sections[11].count");
	free(img);

	/* The reader tests that launches end inside the pool and the words
	 * after its loop: the first launch that runs past is still the one
	 * named, not a later one its overrun misaligns, nor a later break. */
	static const uint32_t lengths[] = { 1000, UINT32_MAX };
	for (size_t k = 0; k < 2; k++) {
		img = full_image(&len);
		at = field_at(img, LAUNCHES, 1, 4);
		put32(img + at, lengths[k]);
		put32(img + field_at(img, LAUNCHES, 3, 20), 1);   /* pad */
		fails_at(img, len, at, "launches[1].identity.length");
		free(img);
	}
	img = full_image(&len);
	at = field_at(img, LAUNCHES, 0, 16);
	put32(img + at, 100);
	put32(img + field_at(img, LAUNCHES, 3, 20), 1);
	fails_at(img, len, at, "launches[0].word_count");
	free(img);
}
END_TEST

START_TEST(test_reject_running_sums)
{
	static const struct {
		int section;
		uint64_t index, field, width;
		int64_t add;
		const char *name;
	} cases[] = {
		{ PHASES, 1, 8, 4, 1, "phases[1].plane_first" },
		{ PHASES, 3, 8, 4, -1, "phases[3].plane_first" },
		{ LAUNCHES, 1, 8, 8, 1, "launches[1].word_first" },
		{ LAUNCHES, 2, 8, 8, 1ll << 40, "launches[2].word_first" },
		{ REPEATS, 1, 24, 4, 1, "repeats[1].delta_first" },
		{ REPEATS, 2, 32, 4, -1, "repeats[2].slot_first" },
		{ REPEATS, 1, 48, 8, 1, "repeats[1].frame_value_first" },
		/* Counts that run past their section. */
		{ PHASES, 3, 12, 4, 1, "phases[3].plane_count" },
		{ LAUNCHES, 3, 16, 4, 1, "launches[3].word_count" },
		{ REPEATS, 2, 28, 4, 1, "repeats[2].delta_count" },
		{ REPEATS, 2, 36, 4, 1, "repeats[2].slot_count" },
		{ REPEATS, 2, 40, 8, 1, "repeats[2].frame_count" },
		{ REPEATS, 2, 40, 8, 1ll << 62, "repeats[2].frame_count" },
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		size_t len;
		uint8_t *img = full_image(&len);
		uint64_t at = field_at(img, cases[k].section, cases[k].index,
				       cases[k].field);
		if (cases[k].width == 4)
			put32(img + at, get32(img + at) +
			      (uint32_t)cases[k].add);
		else
			util_put_le64(img + at, get64(img + at) +
			      (uint64_t)cases[k].add);
		fails_at(img, len, at, cases[k].name);
		free(img);
	}
}
END_TEST

/* Per-entry counts summing to less than the section's count (the last
 * entry's, so that no later first moves). */
START_TEST(test_reject_totals)
{
	static const struct {
		int section;
		uint64_t index, field, width;
		int counted;
	} cases[] = {
		{ PHASES, 3, 12, 4, PLANES },
		{ LAUNCHES, 3, 16, 4, WORDS },
		{ REPEATS, 2, 28, 4, DELTAS },
		{ REPEATS, 2, 36, 4, SLOTS },
		{ REPEATS, 2, 40, 8, FRAME_VALUES },
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		size_t len;
		uint8_t *img = full_image(&len);
		uint64_t at = field_at(img, cases[k].section, cases[k].index,
				       cases[k].field);
		if (cases[k].width == 4)
			put32(img + at, get32(img + at) - 1);
		else
			util_put_le64(img + at, get64(img + at) - 1);
		char name[32];
		snprintf(name, sizeof(name), "sections[%d].count",
			 cases[k].counted);
		fails_at(img, len, TABLE_AT(cases[k].counted) + 16, name);
		free(img);
	}
}
END_TEST

/* ---- exhaustive: truncations and bit flips ---- */

static void rejected_at_a_byte(const struct ac_error *err, size_t len)
{
	unsigned long long byte;
	ck_assert_msg(sscanf(err->where, "byte %llu (", &byte) == 1,
		      "where \"%s\" names no byte", err->where);
	ck_assert_uint_le(byte, len);
}

START_TEST(test_every_truncation)
{
	size_t len;
	uint8_t *img = full_image(&len);
	for (size_t k = 0; k < len; k++) {
		struct ac_model *m = NULL;
		struct ac_error err;
		ck_assert_msg(read_copy(img, k, &m, &err) == -1,
			      "prefix of %zu bytes accepted", k);
		rejected_at_a_byte(&err, k);
	}
	free(img);
}
END_TEST

START_TEST(test_every_bit_flip)
{
	size_t len;
	uint8_t *img = full_image(&len);
	size_t accepted = 0;
	for (size_t bit = 0; bit < 8 * len; bit++) {
		img[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		struct ac_model *m = NULL;
		struct ac_error err;
		if (read_copy(img, len, &m, &err) == 0) {
			size_t len2;
			uint8_t *img2 = write_ok(m, &len2);
			ck_assert_msg(len2 == len &&
				      memcmp(img, img2, len) == 0,
				      "bit %zu: accepted but not canonical",
				      bit);
			free(img2);
			ac_model_free(m);
			accepted++;
		} else {
			rejected_at_a_byte(&err, len);
		}
		img[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	/* Value fields, words and the pool's bytes flip freely. */
	ck_assert_uint_gt(accepted, 0);
	free(img);
}
END_TEST

/* ---- with the JSON format (certify/json_*.c) ---- */

/* image -> model -> JSON -> model -> image gives the same bytes. */
static void binary_json_binary(const struct ac_model *start)
{
	size_t len, jlen, len2;
	uint8_t *img = write_ok(start, &len);
	struct ac_model *m = read_ok(img, len);
	char *json = util_write_json_ok(m, &jlen);
	struct ac_model *m2 = util_read_json_ok(json, jlen);
	uint8_t *img2 = write_ok(m2, &len2);
	ck_assert_msg(len == len2 && memcmp(img, img2, len) == 0,
		      "image -> JSON -> image changed the bytes:\n%.*s",
		      (int)jlen, json);
	ac_model_free(m2);
	free(json);
	ac_model_free(m);
	free(img);
	free(img2);
}

START_TEST(test_json_binary_json_fixtures)
{
	struct ac_model m = full_model();
	binary_json_binary(&m);
	m = ex1_model();
	binary_json_binary(&m);
	m = doc_model();
	binary_json_binary(&m);
	struct ac_model empty = { .alignment = 1 };
	binary_json_binary(&empty);
}
END_TEST

static const char *const examples[] = {
	"ex1", "ex2", "ex3", "ex4", "ex5", "ex6", "ex7a", "ex7b", "ex7c",
};

/* JSON -> model -> image -> model -> JSON is the identity on the writer's
 * JSON, and every example survives binary -> JSON -> binary. */
START_TEST(test_json_examples)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/examples/%s.json", AG_SPEC_DIR,
		 examples[_i]);
	size_t tlen;
	char *text = util_read_file(path, &tlen);
	ck_assert_msg(text, "cannot read %s", path);
	struct ac_model *m = util_read_json_ok(text, tlen);
	size_t j1len, len, j2len;
	char *j1 = util_write_json_ok(m, &j1len);
	uint8_t *img = write_ok(m, &len);
	struct ac_model *back = read_ok(img, len);
	char *j2 = util_write_json_ok(back, &j2len);
	ck_assert_msg(j1len == j2len && memcmp(j1, j2, j1len) == 0,
		      "%s: JSON -> image -> JSON changed the JSON", path);
	binary_json_binary(back);
	if (_i == 0) {
		/* ex1.json and the hand-built ex1 have one image. */
		struct ac_model hand = ex1_model();
		size_t hlen;
		uint8_t *himg = write_ok(&hand, &hlen);
		ck_assert(hlen == len && memcmp(img, himg, len) == 0);
		free(himg);
	}
	free(j1);
	free(j2);
	free(img);
	ac_model_free(back);
	ac_model_free(m);
	free(text);
}
END_TEST

/* The JSON example of program-json.md is the documented image. */
START_TEST(test_json_doc_example)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/program-json.md", AG_SPEC_DIR);
	char *text = util_read_file(path, NULL);
	ck_assert_msg(text, "cannot read %s", path);
	char *from = strstr(text, "```json\n");
	ck_assert_ptr_nonnull(from);
	from += 8;
	char *to = strstr(from, "```");
	ck_assert_ptr_nonnull(to);
	struct ac_model *m = util_read_json_ok(from, (size_t)(to - from));
	size_t len;
	uint8_t *img = write_ok(m, &len);
	ck_assert_uint_eq(len, sizeof(doc_image));
	ck_assert(memcmp(img, doc_image, len) == 0);
	free(img);
	ac_model_free(m);
	free(text);
}
END_TEST

Suite *suite_image(void)
{
	Suite *s = suite_create("image");
	TCase *tc = tcase_create("round_trip");
	tcase_add_test(tc, test_round_trip_full);
	tcase_add_test(tc, test_round_trip_empty);
	tcase_add_test(tc, test_round_trip_edges);
	tcase_add_test(tc, test_image_model_image);
	tcase_add_test(tc, test_unaligned_input);
	tcase_add_test(tc, test_view_borrows_when_aligned);
	tcase_add_test(tc, test_golden);
	tcase_add_test(tc, test_layout);
	tcase_add_test(tc, test_large_words);
	tcase_add_test(tc, test_writer_gathers);
	tcase_add_test(tc, test_writer_rejects);
	tcase_add_test(tc, test_writer_pool_overflow);
	tcase_add_test(tc, test_emit_streams);
	suite_add_tcase(s, tc);

	tc = tcase_create("reject");
	tcase_add_test(tc, test_reject_magic);
	tcase_add_test(tc, test_reject_version);
	tcase_add_test(tc, test_reject_section_count);
	tcase_add_test(tc, test_reject_image_size);
	tcase_add_test(tc, test_reject_truncated_header);
	tcase_add_test(tc, test_reject_reserved);
	tcase_add_test(tc, test_reject_section_table);
	tcase_add_test(tc, test_reject_section_offset);
	tcase_add_test(tc, test_reject_count_overflow);
	tcase_add_test(tc, test_reject_trailing_bytes);
	tcase_add_test(tc, test_reject_padding);
	tcase_add_test(tc, test_reject_carried);
	tcase_add_test(tc, test_reject_strings);
	tcase_add_test(tc, test_reject_running_sums);
	tcase_add_test(tc, test_reject_totals);
	suite_add_tcase(s, tc);

	tc = tcase_create("exhaustive");
	tcase_add_test(tc, test_every_truncation);
	tcase_add_test(tc, test_every_bit_flip);
	suite_add_tcase(s, tc);

	tc = tcase_create("json");
	tcase_add_test(tc, test_json_binary_json_fixtures);
	tcase_add_test(tc, test_json_doc_example);
	tcase_add_loop_test(tc, test_json_examples, 0,
			    (int)(sizeof(examples) / sizeof(examples[0])));
	suite_add_tcase(s, tc);
	return s;
}
