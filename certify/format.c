/* SPDX-License-Identifier: MIT */
/*
 * Format dispatch: a program's bytes read as an image (by its magic
 * bytes, aci_model_is_image) or else as JSON text, by the entry points
 * that take either (ac_model_read, ac_model_view, ac_program_view,
 * ac_certify_json).  A file of its own so
 * that a user of the image reader alone (the guard, which reads program
 * images only: docs/guard.md) links neither the JSON reader nor jansson.
 */
#include <assert.h>
#include <stddef.h>

#include "internal.h"

int ac_model_read(const void *data, size_t len, struct ac_model **out,
		  struct ac_error *err)
{
	if (aci_model_is_image(data, len))
		return ac_model_read_image(data, len, out, err);
	return ac_model_read_json(data, len, out, err);
}

int ac_model_view(const void *data, size_t len, struct ac_model **out,
		  struct ac_error *err)
{
	if (aci_model_is_image(data, len))
		return ac_model_view_image(data, len, out, err);
	return ac_model_read_json(data, len, out, err);
}

ac_program *ac_program_view(const void *data, size_t len,
			    const struct ac_options *opt,
			    struct ac_model **model, struct ac_error *err)
{
	assert(model);
	if (aci_model_is_image(data, len))
		return ac_program_view_image(data, len, opt, model, err);
	if (ac_model_read_json(data, len, model, err) != 0) {
		*model = NULL;
		return NULL;
	}
	return ac_program_new_opts(*model, opt, err);
}

char *ac_certify_json(const void *data, size_t len, size_t *out_len,
		      struct ac_error *err)
{
	struct ac_model *model = NULL;
	/* the model may point into data, which outlives it here */
	if (ac_model_view(data, len, &model, err) != 0)
		return NULL;
	char *line = ac_certify_model_json(model, out_len, err);
	ac_model_free(model);
	return line;
}
