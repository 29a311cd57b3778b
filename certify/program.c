/* PLACEHOLDER: temporary stubs so the tree links while it is being written. */
#include <stdio.h>
#include "internal.h"
ac_program *ac_program_new(const struct ac_model *model, struct ac_error *err) { (void)model; ac_fail(err, "", "not written yet"); return NULL; }
void ac_program_free(ac_program *p) { (void)p; }
uint64_t ac_program_verdict(const ac_program *p) { (void)p; return 0; }
const struct ac_model *ac_program_model(const ac_program *p) { (void)p; return NULL; }
ac_schedule *ac_schedule_new(const ac_program *p) { (void)p; return NULL; }
void ac_schedule_free(ac_schedule *s) { (void)s; }
int ac_schedule_append(ac_schedule *s, const struct ac_ref *r, size_t n, struct ac_error *err) { (void)s; (void)r; (void)n; return ac_fail(err, "", "not written yet"); }
uint64_t ac_schedule_verdict(const ac_schedule *s, struct ac_diag *d) { (void)s; (void)d; return 0; }
uint64_t ac_schedule_length(const ac_schedule *s) { (void)s; return 0; }
uint64_t ac_schedule_executed(const ac_schedule *s) { (void)s; return 0; }
void ac_schedule_digest(const ac_schedule *s, struct ac_digest *o) { (void)s; o->high = o->low = 0; }
int ac_certify(const struct ac_model *m, uint64_t *v, struct ac_diag *d, struct ac_error *err) { (void)m; (void)v; (void)d; return ac_fail(err, "", "not written yet"); }
const char *ac_diag_render(const struct ac_diag *d, const ac_program *p, char *buf, size_t len) { (void)d; (void)p; snprintf(buf, len, "?"); return buf; }
const char *ac_condition_name(enum ac_condition c) { (void)c; return "?"; }
const char *ac_reason_name(enum ac_reason r) { (void)r; return "?"; }
