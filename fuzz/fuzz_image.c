/* SPDX-License-Identifier: MIT */
/*
 * The binary program image readers on arbitrary bytes.  The format is
 * canonical (docs/program-image.md section 5), so every accepted image
 * must write back to exactly its own bytes, also by way of JSON; the
 * in-place reader (ac_model_view_image) must accept the same images and
 * build the same program; and a model the reader built must certify
 * without crashing.
 */
#include "fuzz.h"

/* Certifies through the two-stage API as well, to render the diagnostic:
 * diag.c formats names and numbers taken straight from the image. */
static void certify_and_render(const struct ac_model *m,
			       const struct fuzz_outcome *once)
{
	struct ac_error err;
	ac_program *p = ac_program_new(m, &err);
	if (!p) {
		FUZZ_CHECK(once->rc != 0, "ac_program_new failed, ac_certify did not");
		return;
	}
	ac_schedule *s = ac_schedule_new(p);
	FUZZ_CHECK(s, "ac_schedule_new");
	if (ac_schedule_append(s, m->refs, m->n_refs, &err) == 0) {
		struct ac_diag d;
		uint64_t v = ac_schedule_verdict(s, &d);
		FUZZ_CHECK(once->rc == 0 && v == once->verdict,
			   "two-stage verdict %llu, ac_certify %llu (rc %d)",
			   (unsigned long long)v,
			   (unsigned long long)once->verdict, once->rc);
		char text[4096];
		ac_diag_render(&d, p, text, sizeof(text));
		FUZZ_CHECK(memchr(text, 0, sizeof(text)), "render left no NUL");
	} else {
		FUZZ_CHECK(once->rc != 0, "schedule rejected, ac_certify did not");
	}
	ac_schedule_free(s);
	ac_program_free(p);
}

/*
 * A table without slots may have any number of frames in an image, free
 * of charge, but every frame is a "[]" in JSON: the JSON writer refuses
 * more than 4096 of them (docs/program-image.md), and must refuse exactly
 * those.
 */
#define JSON_FRAMES_MAX 4096

static int json_refusable(const struct ac_model *m)
{
	for (uint32_t i = 0; i < m->n_repeats; i++)
		if (m->repeats[i].slot_count == 0 &&
		    m->repeats[i].frame_count > JSON_FRAMES_MAX)
			return 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ac_model *m, *back;
	struct ac_error err;
	size_t len;

	/* the in-place reader accepts exactly what the copying one does */
	struct ac_model *view = NULL;
	int view_rc = ac_model_view_image(data, size, &view, NULL);
	int rc = ac_model_read_image(data, size, &m, &err);
	FUZZ_CHECK(view_rc == rc, "view_image %d, read_image %d", view_rc, rc);
	if (rc != 0)
		return 0;

	uint8_t *image = ac_model_write_image(m, &len, &err);
	FUZZ_CHECK(image, "an accepted image cannot be written: %s", err.message);
	FUZZ_CHECK(len == size && memcmp(image, data, size) == 0,
		   "image does not write back to itself (%zu -> %zu bytes)",
		   size, len);
	free(image);
	image = ac_model_write_image(view, &len, &err);
	FUZZ_CHECK(image && len == size && memcmp(image, data, size) == 0,
		   "a viewed image does not write back to itself");
	free(image);
	ac_model_free(view);

	struct fuzz_outcome a;
	fuzz_certify(m, &a);
	certify_and_render(m, &a);
	/* image -> JSON -> image gives the same bytes */
	char *json = ac_model_write_json(m, &len, &err);
	if (json_refusable(m)) {
		FUZZ_CHECK(!json, "wrote JSON for more than %d empty frames",
			   JSON_FRAMES_MAX);
		ac_model_free(m);
		return 0;
	}
	FUZZ_CHECK(json, "write_json: %s", err.message);
	FUZZ_CHECK(ac_model_read_json(json, len, &back, &err) == 0,
		   "written JSON does not read: %s: %s", err.where, err.message);
	free(json);
	image = ac_model_write_image(back, &len, &err);
	FUZZ_CHECK(image, "write_image after JSON: %s", err.message);
	FUZZ_CHECK(len == size && memcmp(image, data, size) == 0,
		   "image -> JSON -> image changed the bytes");
	free(image);

	fuzz_certify_same(&a, back, "the image's JSON form");

	ac_model_free(back);
	ac_model_free(m);
	return 0;
}
