/* PLACEHOLDER: replaced by the real reader. */
#include "internal.h"
int ac_model_read_image(const void *image, size_t len, struct ac_model **out, struct ac_error *err)
{ (void)image; (void)len; (void)out; return ac_fail(err, "", "image reader not written yet"); }
