/* PLACEHOLDER: replaced by the real reader. */
#include "internal.h"
int ac_model_read_json(const char *text, size_t len, struct ac_model **out, struct ac_error *err)
{ (void)text; (void)len; (void)out; return ac_fail(err, "", "JSON reader not written yet"); }
