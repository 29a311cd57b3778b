/* PLACEHOLDER: replaced by the real writer. */
#include <stddef.h>
#include "internal.h"
uint8_t *ac_model_write_image(const struct ac_model *model, size_t *len, struct ac_error *err)
{ (void)model; (void)len; ac_fail(err, "", "image writer not written yet"); return NULL; }
