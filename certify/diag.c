/* SPDX-License-Identifier: MIT */
/* Diagnostics as text (spec 4): every object by name and by index. */
#include <stdio.h>
#include <string.h>

#include "program_impl.h"
#include "text.h"

void aci_diag_clear(struct ac_diag *d)
{
	struct ac_tensor_ref none = { AC_NONE, AC_NONE };
	*d = (struct ac_diag){
		.condition = AC_CERTIFIED, .reason = AC_OK,
		.tensor = { none, none }, .near = { none, none },
		.launch = AC_NONE, .word = AC_NONE, .ordinal = AC_NONE,
		.window = AC_NONE, .identity_offset = AC_NONE,
		.instance = AC_NONE, .phase = AC_NONE,
		.start_launch = AC_NONE, .start_ordinal = AC_NONE,
		.earlier = AC_NONE, .earlier_phase = AC_NONE,
		.intervening = AC_NONE,
	};
}

const char *ac_condition_name(enum ac_condition c)
{
	static const char *const names[] = { "certified", "A", "B", "C", "D" };
	return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "?";
}

const char *ac_reason_name(enum ac_reason r)
{
	static const char *const names[] = {
		"ok", "global-misaligned", "global-empty", "globals-overlap",
		"plane-misaligned", "plane-empty", "planes-overlap",
		"plane-overlaps-global", "launch-no-phase", "word-unnamed",
		"carried-undeclared", "carried-overwritten",
	};
	return (unsigned)r < sizeof(names) / sizeof(names[0]) ? names[r] : "?";
}

const char *ac_identity_problem_name(enum ac_identity_problem p)
{
	static const char *const names[] = {
		"ok", "unparsable", "field51-wire-type", "no-field51",
		"unknown-phase",
	};
	return (unsigned)p < sizeof(names) / sizeof(names[0]) ? names[p] : "?";
}

/* Names are bytes: printable ASCII as is, the rest as \xNN. */
static void put_bytes(struct text *t, const struct ac_bytes *b)
{
	aci_text_put(t, "'");
	for (uint32_t i = 0; i < b->len && i < 64; i++) {
		uint8_t c = b->data[i];
		if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\')
			aci_text_put(t, "%c", c);
		else
			aci_text_put(t, "\\x%02x", c);
	}
	aci_text_put(t, b->len > 64 ? "...'" : "'");
}

const char *ac_wide_text(struct ac_wide v, char *buf, size_t len)
{
	unsigned long long hi = (unsigned long long)v.high, lo = v.low;
	if (v.high == 0)
		snprintf(buf, len, "0x%llx", lo);
	else if (v.high == -1 && v.low != 0)
		snprintf(buf, len, "-0x%llx", 0 - lo);
	else if (v.high > 0)
		snprintf(buf, len, "0x%llx%016llx", hi, lo);
	else    /* v <= -2^64: magnitude = -(high * 2^64 + low) */
		snprintf(buf, len, "-0x%llx%016llx", lo ? ~hi : 0 - hi, 0 - lo);
	return buf;
}

static void put_phase(struct text *t, const struct ac_model *m, uint64_t p)
{
	aci_text_put(t, "phase ");
	put_bytes(t, &m->phases[p].identity);
	aci_text_put(t, " (phases[%llu])", (unsigned long long)p);
}

static void put_tensor(struct text *t, const struct ac_model *m,
		       struct ac_tensor_ref r)
{
	/* a diagnostic of this program names its objects; any other diag
	 * passed in gets no out-of-bounds read */
	const struct ac_tensor *x = aci_model_tensor(m, r);
	if (!x) {
		if (r.phase == AC_NONE)
			aci_text_put(t, "no globals[%llu]",
				     (unsigned long long)r.index);
		else
			aci_text_put(t, "no phases[%llu].planes[%llu]",
				     (unsigned long long)r.phase,
				     (unsigned long long)r.index);
		return;
	}
	if (r.phase == AC_NONE) {
		aci_text_put(t, "global ");
		put_bytes(t, &x->name);
		aci_text_put(t, " (globals[%llu]) ", (unsigned long long)r.index);
	} else {
		aci_text_put(t, "%s plane ", x->carried ? "carried" : "fresh");
		put_bytes(t, &x->name);
		aci_text_put(t, " (phases[%llu].planes[%llu]) ",
		    (unsigned long long)r.phase, (unsigned long long)r.index);
	}
	aci_text_range(t, x->offset, x->size);
}

static void render_layout(struct text *t, const struct ac_diag *d,
			  const struct ac_model *m)
{
	aci_text_put(t, "(%s) fails: ", ac_condition_name(d->condition));
	put_tensor(t, m, d->tensor[0]);
	switch (d->reason) {
	case AC_GLOBAL_MISALIGNED:
	case AC_PLANE_MISALIGNED:
		aci_text_put(t, " is not aligned to %llu",
		    (unsigned long long)m->alignment);
		break;
	case AC_GLOBAL_EMPTY:
	case AC_PLANE_EMPTY:
		aci_text_put(t, " is empty");
		break;
	default:
		aci_text_put(t, " overlaps ");
		put_tensor(t, m, d->tensor[1]);
		if (d->reason == AC_PLANES_OVERLAP)
			aci_text_put(t, ", and both are planes of one phase");
		break;
	}
}

static const char *identity_problem_text(enum ac_identity_problem p)
{
	switch (p) {
	case AC_ID_UNPARSABLE:
		return "its source identity does not parse as protobuf";
	case AC_ID_FIELD51_WIRE_TYPE:
		return "field 51 of its source identity is not length-delimited";
	case AC_ID_NO_FIELD51:
		return "its source identity has no field 51";
	case AC_ID_UNKNOWN_PHASE:
		return "field 51 of its source identity names no phase of the plan";
	default:
		return "?";
	}
}

static void render_word(struct text *t, const struct ac_diag *d,
			const struct ac_model *m)
{
	aci_text_put(t, "(C) fails at launch %llu (", (unsigned long long)d->launch);
	put_phase(t, m, d->phase);
	aci_text_put(t, "): word %llu ", (unsigned long long)d->word);
	if (d->lo.high == d->hi.high && d->lo.low == d->hi.low) {
		aci_text_put(t, "= ");
		aci_text_wide(t, d->lo);
	} else {
		aci_text_put(t, "spans [");
		aci_text_wide(t, d->lo);
		aci_text_put(t, ", ");
		aci_text_wide(t, d->hi);
		aci_text_put(t, "] over its iterations");
	}
	if (d->ordinal != AC_NONE)
		aci_text_put(t, " at iteration %llu", (unsigned long long)d->ordinal);
	if (d->window == AC_NONE) {
		aci_text_put(t, " leaves [0, 2^64)");
	} else {
		aci_text_put(t, " lies in window ");
		put_bytes(t, &m->windows[d->window].name);
		aci_text_put(t, " (windows[%llu]) ", (unsigned long long)d->window);
		aci_text_range(t, m->windows[d->window].base,
			  m->windows[d->window].size);
		aci_text_put(t, " but inside no global and no plane of its phase");
	}
	for (int i = 0; i < 2; i++) {
		aci_text_put(t, i ? "; nearest above: " : "; nearest below: ");
		if (d->near[i].index == AC_NONE)
			aci_text_put(t, "none");
		else
			put_tensor(t, m, d->near[i]);
	}
}

static void render_carried(struct text *t, const struct ac_diag *d,
			   const struct ac_model *m)
{
	aci_text_put(t, "(D) fails at instance %llu (", (unsigned long long)d->instance);
	put_phase(t, m, d->phase);
	aci_text_put(t, ", from launch %llu", (unsigned long long)d->start_launch);
	if (d->start_ordinal != AC_NONE)
		aci_text_put(t, " iteration %llu", (unsigned long long)d->start_ordinal);
	aci_text_put(t, "): ");
	put_tensor(t, m, d->tensor[0]);
	if (d->reason == AC_CARRIED_UNDECLARED) {
		aci_text_put(t, " was never declared by an earlier instance");
		return;
	}
	aci_text_put(t, " was last declared by instance %llu (",
	    (unsigned long long)d->earlier);
	put_phase(t, m, d->earlier_phase);
	aci_text_put(t, "), but instance %llu (", (unsigned long long)d->intervening);
	put_phase(t, m, d->tensor[1].phase);
	aci_text_put(t, ") since declared ");
	put_tensor(t, m, d->tensor[1]);
	aci_text_put(t, " over its bytes");
}

const char *ac_diag_render(const struct ac_diag *d, const ac_program *p,
			   char *buf, size_t len)
{
	struct text t = { buf, len, 0 };
	const struct ac_model *m = p->m;
	if (len)
		buf[0] = 0;
	switch (d->reason) {
	case AC_OK:
		aci_text_put(&t, "certified: (A), (B), (C) and (D) hold");
		break;
	case AC_LAUNCH_NO_PHASE:
		aci_text_put(&t, "(C) fails at launch %llu: it has no declared phase: %s",
		    (unsigned long long)d->launch,
		    identity_problem_text(d->identity_problem));
		if (d->identity_problem != AC_ID_UNKNOWN_PHASE &&
		    d->identity_problem != AC_ID_NO_FIELD51)
			aci_text_put(&t, " (at byte %llu)",
			    (unsigned long long)d->identity_offset);
		break;
	case AC_WORD_UNNAMED:
		render_word(&t, d, m);
		break;
	case AC_CARRIED_UNDECLARED:
	case AC_CARRIED_OVERWRITTEN:
		render_carried(&t, d, m);
		break;
	default:
		render_layout(&t, d, m);
		break;
	}
	return buf;
}

const char *ac_advisory_render(const struct ac_advisory *a,
			       const ac_program *p, char *buf, size_t len)
{
	struct text t = { buf, len, 0 };
	if (len)
		buf[0] = 0;
	aci_text_put(&t, "%s: ", ac_advisory_kind_name(a->kind));
	put_tensor(&t, p->m, a->tensor);
	aci_text_put(&t, " has byte 0x%llx in no window", (unsigned long long)a->outside);
	return buf;
}
