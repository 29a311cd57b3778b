/* PLACEHOLDER: replaced by the real writer. */
#include <stddef.h>
#include "internal.h"
char *ac_model_write_json(const struct ac_model *model, size_t *len, struct ac_error *err)
{ (void)model; (void)len; ac_fail(err, "", "JSON writer not written yet"); return NULL; }
