/* SPDX-License-Identifier: MIT */
/*
 * The builder (arenaguard/builder.h) on arbitrary call sequences: the
 * input is decoded into calls, one opcode byte and its operands each, in
 * any order (out of the format's order, after an error, after finish),
 * with zero lengths, NULL pointers where the header allows them, counts
 * past 2^32 and near 2^64 that the builder must refuse before it reads
 * a byte, and columns whose word counts do not sum to the words given.
 *
 * Checked: no crash, leak or overflow (ASan, UBSan); errors stick (after
 * the first -1 every call returns -1 and finish returns NULL with the
 * error); a call after a successful finish fails.  Differential: the
 * harness keeps its own model of the plan the calls made (struct plan,
 * laid out as the JSON reader lays one out), and the builder's model is
 * written as the same JSON text and the same image as it; that text, read
 * by the JSON reader, is the same model again (its image and text), and
 * it certifies as the builder's does.
 */
#include "fuzz.h"

#include <arenaguard/builder.h>

enum {
	OP_WINDOW, OP_GLOBAL, OP_PHASE, OP_PLANE, OP_IDENTITY, OP_LAUNCH,
	OP_LAUNCHES, OP_REPEAT, OP_DELTA, OP_TABLE, OP_FRAME, OP_REF,
	OP_FINISH, OP_HUGE, OP_N
};

#define MAX_ITEMS 8      /* per call: name bytes, words, slots, values */
#define MAX_CALLS 256

/* A value: small (most values a program holds are) or any 64 bits. */
static uint64_t val(struct fuzz_in *in)
{
	uint64_t sel = fuzz_take(in, 1);
	if (sel < 0xe0)
		return sel;
	if (sel < 0xf0)
		return ((uint64_t)1 << 53) - 0xe8 + sel;  /* around 2^53 */
	return fuzz_take(in, 8);
}

/* The harness's own model of the plan built so far: every call that
 * succeeded, appended as the JSON reader would lay out its entry. */
#define CAP (MAX_CALLS * (2 * MAX_ITEMS + 1))
struct plan {
	struct ac_model m;
	struct ac_window windows[MAX_CALLS];
	struct ac_tensor globals[MAX_CALLS], planes[MAX_CALLS];
	struct ac_phase phases[MAX_CALLS];
	struct ac_launch launches[CAP];
	struct ac_repeat repeats[MAX_CALLS];
	struct ac_delta deltas[MAX_CALLS];
	struct ac_slot slots[CAP];
	struct ac_ref refs[MAX_CALLS];
	uint64_t words[CAP], frame_values[CAP];
	struct ac_bytes idents[MAX_CALLS];
	uint64_t n_idents;
	uint8_t pool[MAX_CALLS * (MAX_ITEMS + 3)];
	size_t pool_len;
};

/* Bytes into the plan's pool; a phase identity behind its field 51
 * header (tag 51, wire type 2: 0x9a 0x03; a one-byte length). */
static struct ac_bytes plan_bytes(struct plan *p, const uint8_t *b,
				  size_t n, int field51)
{
	struct ac_bytes out = { p->pool + p->pool_len, 0 };
	if (field51) {
		p->pool[p->pool_len++] = 0x9a;
		p->pool[p->pool_len++] = 0x03;
		p->pool[p->pool_len++] = (uint8_t)n;
	}
	memcpy(p->pool + p->pool_len, b, n);
	p->pool_len += n;
	out.len = (uint32_t)(p->pool + p->pool_len - out.data);
	return out;
}

static uint64_t n_ids(const struct plan *p)
{
	return p->n_idents;
}

/* The model's image, or NULL when it cannot be written. */
static uint8_t *image_of(const struct ac_model *m, size_t *len)
{
	struct ac_error err;
	return ac_model_write_image(m, len, &err);
}

/* m, built, against the plan's model and the JSON reader's model of
 * their JSON text. */
static void check_model(const struct ac_model *m, const struct plan *p)
{
	struct ac_error err;
	size_t json_len, len, image_len, again_len, plan_len;
	FUZZ_CHECK(ac_model_footprint(m) >= m->n_words * sizeof(uint64_t),
		   "the model does not count its words");
	char *json = ac_model_write_json(m, &json_len, &err);
	uint8_t *image = image_of(m, &image_len);
	char *plan_json = ac_model_write_json(&p->m, &plan_len, &err);
	FUZZ_CHECK(!json == !plan_json && (!json || (plan_len == json_len &&
		   !memcmp(json, plan_json, json_len))),
		   "the builder's model and the plan's are written as "
		   "different JSON texts");
	free(plan_json);
	uint8_t *plan_image = image_of(&p->m, &plan_len);
	FUZZ_CHECK(!image == !plan_image && (!image || (plan_len == image_len &&
		   !memcmp(image, plan_image, image_len))),
		   "the builder's model and the plan's have different images");
	free(plan_image);
	if (!json) {
		/* what JSON cannot hold: more than 4096 frames of a table
		 * without slots */
		free(image);
		return;
	}
	struct ac_model *again = NULL;
	FUZZ_CHECK(ac_model_read_json(json, json_len, &again, &err) == 0,
		   "the builder's model, written as JSON, does not read: "
		   "%s: %s", err.where, err.message);
	char *json2 = ac_model_write_json(again, &len, &err);
	FUZZ_CHECK(json2 && len == json_len && !memcmp(json, json2, len),
		   "the JSON reader's model is written differently");
	uint8_t *image2 = image_of(again, &again_len);
	FUZZ_CHECK(!image == !image2, "one image is written, not the other");
	if (image)
		FUZZ_CHECK(image_len == again_len &&
			   !memcmp(image, image2, image_len),
			   "the builder's model and the JSON reader's have "
			   "different images");
	if (m->n_words <= 4096 && m->n_refs <= 64) {
		struct fuzz_outcome a;
		fuzz_certify(m, &a);
		fuzz_certify_same(&a, again, "the built model read back");
	}
	free(json);
	free(json2);
	free(image);
	free(image2);
	ac_model_free(again);
}

/* The plan's model points at its arrays, with the counts so far. */
static void plan_point(struct plan *p)
{
	struct ac_model *m = &p->m;
	m->windows = p->windows;
	m->globals = p->globals;
	m->phases = p->phases;
	m->planes = p->planes;
	m->launches = p->launches;
	m->words = p->words;
	m->repeats = p->repeats;
	m->deltas = p->deltas;
	m->slots = p->slots;
	m->frame_values = p->frame_values;
	m->refs = p->refs;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, data + size };
	uint8_t bytes[MAX_ITEMS];
	/* words: a columnar call's up to 2 a launch, and one more */
	uint64_t words[2 * MAX_ITEMS + 1], values[MAX_ITEMS];
	uint32_t ids[MAX_ITEMS], counts[MAX_ITEMS];
	struct ac_slot slots[MAX_ITEMS];
	struct ac_error err;
	int failed = 0, finished = 0;
	struct plan *p = calloc(1, sizeof(*p));
	FUZZ_CHECK(p, "out of memory");
	struct ac_model *pm = &p->m;
	plan_point(p);

	uint64_t alignment = fuzz_take(&in, 1);
	alignment <<= fuzz_take(&in, 1) % 8;
	pm->alignment = alignment;
	ac_builder *b = ac_builder_new(alignment);
	FUZZ_CHECK(b, "ac_builder_new");
	for (int call = 0; call < MAX_CALLS && in.p < in.end; call++) {
		unsigned op = (unsigned)fuzz_take(&in, 1) % OP_N;
		size_t n = (size_t)fuzz_take(&in, 1) % (MAX_ITEMS + 1);
		/* n == 0 with NULL, as the header allows */
		fuzz_take_bytes(&in, bytes, n);
		const void *name = n ? bytes : NULL;
		int rc = 0, stuck = failed || finished;
		uint32_t index = UINT32_MAX;
		uint64_t x, y, z;
		switch (op) {
		case OP_WINDOW:
			x = val(&in), y = val(&in);
			rc = ac_builder_window(b, name, n, x, y);
			if (rc == 0)
				p->windows[pm->n_windows++] = (struct ac_window){
					plan_bytes(p, bytes, n, 0), x, y };
			break;
		case OP_GLOBAL:
		case OP_PLANE: {
			x = val(&in), y = val(&in);
			int carried = op == OP_PLANE ?
				(int)fuzz_take(&in, 1) % 3 : 0;
			rc = op == OP_GLOBAL ?
				ac_builder_global(b, name, n, x, y) :
				ac_builder_plane(b, name, n, x, y, carried);
			if (rc)
				break;
			struct ac_tensor t = { plan_bytes(p, bytes, n, 0), x, y,
					       (uint8_t)(carried != 0), { 0 } };
			if (op == OP_GLOBAL) {
				p->globals[pm->n_globals++] = t;
			} else {
				p->planes[pm->n_planes++] = t;
				p->phases[pm->n_phases - 1].plane_count++;
			}
			break;
		}
		case OP_PHASE:
			rc = ac_builder_phase(b, name, n);
			if (rc == 0)
				p->phases[pm->n_phases++] = (struct ac_phase){
					plan_bytes(p, bytes, n, 0),
					pm->n_planes, 0 };
			break;
		case OP_IDENTITY: {
			unsigned form = (unsigned)fuzz_take(&in, 1) % 3;
			rc = ac_builder_identity(b, (enum ac_identity_form)form,
						 name, n, form ? &index : NULL);
			if (rc == 0) {
				FUZZ_CHECK(form < 2, "an unknown form taken");
				FUZZ_CHECK(!form || index == n_ids(p),
					   "identity %u, not %llu", index,
					   (unsigned long long)n_ids(p));
				p->idents[n_ids(p)] =
					plan_bytes(p, bytes, n, form == 0);
				p->n_idents++;
			}
			break;
		}
		case OP_LAUNCH:
		case OP_LAUNCHES: {
			uint64_t sum = 0, n_words, n_launches = n;
			if (op == OP_LAUNCH) {
				/* identity: mostly one of the table, or past */
				ids[0] = (uint32_t)(fuzz_take(&in, 1) %
						    (n_ids(p) + 2));
				for (size_t i = 0; i < n; i++)
					words[i] = val(&in);
				counts[0] = (uint32_t)n;
				sum = n_words = n;
				n_launches = 1;
				rc = ac_builder_launch(b, ids[0],
						       n ? words : NULL, n);
			} else {
				for (size_t i = 0; i < n; i++) {
					ids[i] = (uint32_t)(fuzz_take(&in, 1) %
							    (n_ids(p) + 2));
					counts[i] = (uint32_t)fuzz_take(&in, 1)
						    % 3;
					sum += counts[i];
				}
				/* words given: the sum, or a wrong count */
				unsigned skew = (unsigned)fuzz_take(&in, 1);
				n_words = skew < 0xf0 ? sum :
					  skew < 0xf8 ? sum + 1 :
					  sum ? sum - 1 : UINT64_MAX;
				/* UINT64_MAX: refused before a word is read */
				for (uint64_t i = 0; i < 2 * MAX_ITEMS + 1; i++)
					words[i] = i < n_words ? val(&in) : 0;
				rc = ac_builder_launches(b, n, n ? ids : NULL,
							 n ? counts : NULL,
							 n_words ? words : NULL,
							 n_words);
				if (n_words != sum)
					FUZZ_CHECK(rc == -1, "words that the "
						   "counts do not sum to were "
						   "taken");
			}
			if (rc)
				break;
			for (uint64_t i = 0; i < n_launches; i++) {
				FUZZ_CHECK(ids[i] < n_ids(p), "a launch of "
					   "identity %u taken, of %llu", ids[i],
					   (unsigned long long)n_ids(p));
				p->launches[pm->n_launches++] = (struct ac_launch){
					.identity = p->idents[ids[i]],
					.word_first = pm->n_words,
					.word_count = counts[i] };
				pm->n_words += counts[i];
			}
			memcpy(p->words + pm->n_words - sum, words,
			       sum * sizeof(uint64_t));
			break;
		}
		case OP_REPEAT:
			x = val(&in), y = val(&in), z = val(&in);
			rc = ac_builder_repeat(b, x, y, z);
			if (rc == 0)
				p->repeats[pm->n_repeats++] = (struct ac_repeat){
					.first = x, .count = y, .iterations = z,
					.delta_first = pm->n_deltas,
					.slot_first = pm->n_slots,
					.frame_value_first = pm->n_frame_values };
			break;
		case OP_DELTA:
			x = val(&in), y = val(&in), z = val(&in);
			rc = ac_builder_delta(b, x, y, (int64_t)z);
			if (rc == 0) {
				p->deltas[pm->n_deltas++] = (struct ac_delta){
					x, y, (int64_t)z };
				p->repeats[pm->n_repeats - 1].delta_count++;
			}
			break;
		case OP_TABLE:
			for (size_t i = 0; i < n; i++) {
				x = val(&in);
				slots[i] = (struct ac_slot){ x, val(&in) };
			}
			rc = ac_builder_table(b, n ? slots : NULL, n);
			if (rc == 0) {
				memcpy(p->slots + pm->n_slots, slots,
				       n * sizeof(*slots));
				pm->n_slots += (uint32_t)n;
				p->repeats[pm->n_repeats - 1].slot_count =
					(uint32_t)n;
			}
			break;
		case OP_FRAME:
			for (size_t i = 0; i < n; i++)
				values[i] = val(&in);
			rc = ac_builder_frame(b, n ? values : NULL, n);
			if (rc == 0) {
				memcpy(p->frame_values + pm->n_frame_values,
				       values, n * sizeof(uint64_t));
				pm->n_frame_values += n;
				p->repeats[pm->n_repeats - 1].frame_count++;
			}
			break;
		case OP_REF:
			x = val(&in), y = val(&in);
			rc = ac_builder_ref(b, x, y);
			if (rc == 0)
				p->refs[pm->n_refs++] = (struct ac_ref){ x, y };
			break;
		case OP_FINISH: {
			struct ac_model *m = ac_builder_finish(b, &err);
			if (stuck)
				FUZZ_CHECK(!m, "a model after an error or a "
					   "finish");
			else if (m)
				check_model(m, p);
			if (m) {
				ac_model_free(m);
				finished = 1;
			} else {
				FUZZ_CHECK(err.message[0], "no model, no error");
			}
			rc = m ? 0 : -1;
			break;
		}
		case OP_HUGE: {
			/* counts the builder must refuse before reading: its
			 * arrays are shorter than the counts claim */
			uint64_t big = val(&in) | (uint64_t)1 << 32;  /* >= 2^32 */
			switch (fuzz_take(&in, 1) % 8) {
			case 0:
				rc = ac_builder_launch(b, 0, words, big);
				break;
			case 1:
				rc = ac_builder_launches(b, big, ids, counts,
							 words, big);
				break;
			case 2:
				rc = ac_builder_table(b, slots, big);
				break;
			case 3:
				rc = ac_builder_window(b, bytes, (size_t)big,
						       0, 0);
				break;
			case 4:
				rc = ac_builder_identity(b, AC_IDENTITY_PHASE,
							 bytes, (size_t)big,
							 &index);
				break;
			case 5:
				rc = ac_builder_global(b, bytes, SIZE_MAX, 0, 0);
				break;
			case 6:
				rc = ac_builder_frame(b, values, UINT64_MAX -
						      val(&in));
				break;
			default:
				rc = ac_builder_launches(b, UINT64_MAX, ids,
							 counts, words, 0);
				break;
			}
			FUZZ_CHECK(rc == -1, "a huge count was taken (call %d)",
				   call);
			break;
		}
		}
		if (stuck)
			FUZZ_CHECK(rc == -1, "call %d (op %u) returned %d after "
				   "%s", call, op, rc,
				   failed ? "an error" : "finish");
		if (rc)
			failed = 1;   /* a failed finish sticks too */
	}
	if (!finished) {
		struct ac_model *m = ac_builder_finish(b, &err);
		if (failed)
			FUZZ_CHECK(!m && err.message[0], "no sticky error");
		if (m) {
			check_model(m, p);
			ac_model_free(m);
		}
	}
	ac_builder_free(b);
	free(p);
	return 0;
}
