/* SPDX-License-Identifier: MIT */
/*
 * The JSON reader on arbitrary text.  Its way (split, launches lexed in
 * place) must read what jansson's tree of the whole text reads, or fail
 * with the same error (certify/json_read.h).  An accepted program must
 * survive JSON -> JSON and JSON -> image -> JSON unchanged (the writers
 * are canonical), and every form of it must certify the same way.
 */
#include "fuzz.h"

#include "certify/json_read.h"

/* The reader's way and the classic one on the same text: the same error,
 * or programs with the same image. */
static void same_as_classic(const char *text, size_t size)
{
	struct ac_model *fast = NULL, *classic = NULL;
	struct ac_error ef, ec;
	int rf = ac_model_read_json(text, size, &fast, &ef);
	int rc = aci_model_read_json_way(text, size, ACI_JSON_CLASSIC,
					 &classic, &ec);
	FUZZ_CHECK(rf == rc, "the reader returns %d, the classic way %d",
		   rf, rc);
	if (rf == 0) {
		size_t fl, cl;
		uint8_t *fi = ac_model_write_image(fast, &fl, &ef);
		uint8_t *ci = ac_model_write_image(classic, &cl, &ec);
		FUZZ_CHECK(fi && ci && fl == cl && memcmp(fi, ci, fl) == 0,
			   "the reader's program differs from the classic "
			   "way's");
		free(fi);
		free(ci);
	} else {
		FUZZ_CHECK(!strcmp(ef.where, ec.where) &&
			   !strcmp(ef.message, ec.message),
			   "the reader says %s: %s, the classic way %s: %s",
			   ef.where, ef.message, ec.where, ec.message);
	}
	ac_model_free(fast);
	ac_model_free(classic);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ac_model *m, *again, *from_image;
	struct ac_error err;
	size_t json_len, len, image_len;

	same_as_classic((const char *)data, size);
	/* data is not NUL-terminated: the reader must honour size */
	if (ac_model_read_json((const char *)data, size, &m, &err) != 0)
		return 0;

	char *json = ac_model_write_json(m, &json_len, &err);
	FUZZ_CHECK(json, "an accepted program cannot be written: %s",
		   err.message);
	FUZZ_CHECK(ac_model_read_json(json, json_len, &again, &err) == 0,
		   "written JSON does not read: %s: %s", err.where, err.message);
	char *json2 = ac_model_write_json(again, &len, &err);
	FUZZ_CHECK(json2 && len == json_len && memcmp(json, json2, len) == 0,
		   "JSON -> JSON changed the text");
	free(json2);

	uint8_t *image = ac_model_write_image(m, &image_len, &err);
	FUZZ_CHECK(image, "write_image: %s: %s", err.where, err.message);
	FUZZ_CHECK(ac_model_read_image(image, image_len, &from_image, &err) == 0,
		   "written image does not read: %s: %s", err.where,
		   err.message);
	char *json3 = ac_model_write_json(from_image, &len, &err);
	FUZZ_CHECK(json3 && len == json_len && memcmp(json, json3, len) == 0,
		   "JSON -> image -> JSON changed the text");
	free(json3);
	uint8_t *image2 = ac_model_write_image(again, &len, &err);
	FUZZ_CHECK(image2 && len == image_len &&
		   memcmp(image, image2, len) == 0,
		   "JSON -> JSON -> image differs from JSON -> image");
	free(image2);

	struct fuzz_outcome a;
	fuzz_certify(m, &a);
	fuzz_certify_same(&a, again, "the JSON round trip");
	fuzz_certify_same(&a, from_image, "the image round trip");

	free(image);
	free(json);
	ac_model_free(from_image);
	ac_model_free(again);
	ac_model_free(m);
	return 0;
}
