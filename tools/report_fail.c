/* SPDX-License-Identifier: MIT */
/*
 * report_fail.c - the failing objects of a verdict (see report_fail.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "certify/json_text.h"
#include "certify/text.h"
#include "report_fail.h"

/* ---- text with names in it ---- */

/* A short text (text.h) with its own 1 KiB: printf pieces and raw name
 * bytes, made valid UTF-8 by aci_json_text at the end. */
#define LINE(name) \
	char name##_buf[1024]; \
	struct text name = TEXT_OF(name##_buf)

/* A name, quoted, cut at 80 bytes. */
static void put_name(struct text *t, struct ac_bytes b)
{
	size_t n = b.len > 80 ? 80 : b.len;
	if (n + 8 > t->len - t->used)
		return;
	t->buf[t->used++] = '\'';
	if (n)
		memcpy(t->buf + t->used, b.data, n);
	t->used += n;
	aci_text_put(t, b.len > 80 ? "...'" : "'");
}

static json_t *done(const struct text *t)
{
	return aci_json_text(t->buf, t->used);
}

/* ---- tensors ---- */

/* Its bytes, inclusive; an empty tensor as the byte at its offset. */
static void bytes_of(const struct ac_tensor *t, uint64_t *lo, uint64_t *hi)
{
	*lo = *hi = t->offset;
	if (t->size)
		*hi = t->size - 1 > UINT64_MAX - t->offset ? UINT64_MAX
							   : t->offset + (t->size - 1);
}

/* "global 'w' (globals[0])" or "carried plane 'a' of phase 'Q'
 * (phases[1].planes[0])". */
static void put_tensor(struct text *t, const struct ac_model *m,
		       struct ac_tensor_ref r)
{
	const struct ac_tensor *x = aci_model_tensor(m, r);
	if (!x)
		return;
	if (r.phase == AC_NONE) {
		aci_text_put(t, "global ");
		put_name(t, x->name);
		aci_text_put(t, " (globals[%" PRIu64 "])", r.index);
		return;
	}
	aci_text_put(t, "%s plane ", x->carried ? "carried" : "fresh");
	put_name(t, x->name);
	aci_text_put(t, " of phase ");
	put_name(t, m->phases[r.phase].identity);
	aci_text_put(t, " (phases[%" PRIu64 "].planes[%" PRIu64 "])", r.phase, r.index);
}

static json_t *pair(const char *label, json_t *value)
{
	return json_pack("[s, o]", label, value ? value : json_null());
}

static json_t *tensor_info(const struct ac_model *m, struct ac_tensor_ref r)
{
	const struct ac_tensor *x = aci_model_tensor(m, r);
	json_t *info = json_array();
	if (!x)
		return info;
	LINE(what);
	LINE(range);
	LINE(size);
	put_tensor(&what, m, r);
	aci_text_range(&range, x->offset, x->size);
	aci_text_put(&size, "%" PRIu64 " bytes (0x%" PRIx64 ")", x->size, x->size);
	json_array_append_new(info, pair("name", aci_json_name(x->name)));
	json_array_append_new(info, pair("tensor", done(&what)));
	json_array_append_new(info, pair("bytes", done(&range)));
	json_array_append_new(info, pair("size", done(&size)));
	return info;
}

/* ---- marks ---- */

static json_t *column(uint64_t c)
{
	return c == AC_NONE ? json_null() : json_integer((json_int_t)c);
}

/* A mark: title says what it is in full, label in a few words on the
 * chart. */
static json_t *mark(const char *role, uint64_t c0, uint64_t c1, int full,
		    json_t *ys, json_t *title, json_t *label, json_t *info)
{
	return json_pack("{s:s, s:o, s:o, s:b, s:o, s:o, s:o, s:o}", "role", role,
			 "c0", column(c0), "c1", column(c1), "full", full,
			 "y", ys, "title", title ? title : json_string(""),
			 "label", label ? label : json_string(""), "info", info);
}

static json_t *ys_of(const struct axis *a, uint64_t lo, uint64_t hi)
{
	uint32_t pieces[16][2];
	size_t n = axis_cover(a, lo, hi, pieces, 16);
	json_t *ys = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(ys, json_pack("[i, i]", (json_int_t)pieces[i][0],
						    (json_int_t)pieces[i][1]));
	return ys;
}

/* A tensor's mark, labelled "<before>'name'<after> (#instance)". */
static json_t *tensor_mark(const struct ac_model *m, const struct axis *a,
			   const char *role, struct ac_tensor_ref r,
			   uint64_t c0, uint64_t c1, const struct text *title,
			   const char *before, const char *after, uint64_t instance)
{
	const struct ac_tensor *x = aci_model_tensor(m, r);
	uint64_t lo = 0, hi = 0;
	LINE(label);
	aci_text_put(&label, "%s", before);
	if (x)
		put_name(&label, x->name);
	aci_text_put(&label, "%s", after);
	if (instance != AC_NONE)
		aci_text_put(&label, " (#%" PRIu64 ")", instance);
	if (x)
		bytes_of(x, &lo, &hi);
	return mark(role, c0, c1, r.phase == AC_NONE, x ? ys_of(a, lo, hi) : json_array(),
		    done(title), done(&label), tensor_info(m, r));
}

/* The bytes two tensors share, if any, as an "overlap" mark. */
static json_t *overlap_mark(const struct ac_model *m, const struct axis *a,
			    struct ac_tensor_ref r0, struct ac_tensor_ref r1,
			    uint64_t c0, uint64_t c1, int full, const char *why,
			    const char *label)
{
	const struct ac_tensor *x = aci_model_tensor(m, r0), *y = aci_model_tensor(m, r1);
	uint64_t lo0, hi0, lo1, hi1;
	if (!x || !y)
		return NULL;
	bytes_of(x, &lo0, &hi0);
	bytes_of(y, &lo1, &hi1);
	uint64_t lo = lo0 > lo1 ? lo0 : lo1, hi = hi0 < hi1 ? hi0 : hi1;
	if (lo > hi || !x->size || !y->size)
		return NULL;
	LINE(title);
	LINE(range);
	aci_text_put(&title, "%s ", why);
	aci_text_range(&title, lo, hi - lo + 1);
	aci_text_range(&range, lo, hi - lo + 1);
	json_t *info = json_array();
	json_array_append_new(info, pair("bytes", done(&range)));
	return mark("overlap", c0, c1, full, ys_of(a, lo, hi), done(&title),
		    json_string(label), info);
}

struct out {
	const ac_program *p;
	const struct ac_model *m;
	const struct ac_diag *d;
	const struct axis *a;
	struct timeline *tl;
	json_t *cols, *marks;
};

static void add_col(struct out *o, uint64_t c, const char *role)
{
	if (c != AC_NONE)
		json_array_append_new(o->cols, json_pack("[I, s]", (json_int_t)c, role));
}

static void add_mark(struct out *o, json_t *mk)
{
	if (mk)
		json_array_append_new(o->marks, mk);
}

/* The column a failing object is shown in: where it first runs, or a new
 * one for its launch (AC_NONE: none) and phase (AC_NONE: none). */
static uint64_t object_column(struct out *o, uint64_t found, uint64_t phase,
			      uint64_t launch)
{
	if (found != AC_NONE)
		return found;
	return timeline_add_extra(o->tl, o->m, phase, launch);
}

/* ---- (A), (B) ---- */

static void layout_marks(struct out *o, const struct tl_found *found)
{
	const struct ac_diag *d = o->d;
	int two = d->reason == AC_GLOBALS_OVERLAP || d->reason == AC_PLANES_OVERLAP ||
		  d->reason == AC_PLANE_OVERLAPS_GLOBAL;
	uint64_t col = AC_NONE;
	for (int i = 0; i <= two; i++) {
		struct ac_tensor_ref r = d->tensor[i];
		uint64_t c = AC_NONE;
		if (r.phase != AC_NONE && i == 1 && r.phase == d->tensor[0].phase) {
			c = col;   /* two planes of one phase: one column */
		} else if (r.phase != AC_NONE) {
			c = object_column(o, found->phase[i], r.phase, AC_NONE);
			add_col(o, c, "phase");
			col = c;
		}
		const struct ac_tensor *x = aci_model_tensor(o->m, r);
		LINE(title);
		const char *what;
		put_tensor(&title, o->m, r);
		if (d->reason == AC_GLOBAL_MISALIGNED || d->reason == AC_PLANE_MISALIGNED) {
			aci_text_put(&title, ": offset 0x%" PRIx64 " is not aligned to %" PRIu64,
			    x ? x->offset : 0, o->m->alignment);
			what = " misaligned";
		} else if (d->reason == AC_GLOBAL_EMPTY || d->reason == AC_PLANE_EMPTY) {
			aci_text_put(&title, " is empty");
			what = " is empty";
		} else {
			aci_text_put(&title, i ? " (the other)" : " overlaps");
			what = i ? "" : " overlaps";
		}
		add_mark(o, tensor_mark(o->m, o->a, "tensor", r, c, c, &title, "", what,
					AC_NONE));
	}
	if (two)
		add_mark(o, overlap_mark(o->m, o->a, d->tensor[0], d->tensor[1],
					 col, col, col == AC_NONE, "bytes both hold:",
					 "shared bytes"));
}

/* ---- (C) ---- */

/* [lo, hi] of the word, clipped to [0, 2^64); 0 if nothing is left. */
int fail_cut(const struct ac_diag *d, uint64_t out[2])
{
	if (d->reason != AC_WORD_UNNAMED || d->lo.high > 0 || d->hi.high < 0)
		return 0;
	out[0] = d->lo.high < 0 ? 0 : d->lo.low;
	out[1] = d->hi.high > 0 ? UINT64_MAX : d->hi.low;
	return out[0] <= out[1];
}

/* The word's value, or its interval over the iterations. */
static void put_interval(struct text *t, const struct ac_diag *d)
{
	if (d->lo.high == d->hi.high && d->lo.low == d->hi.low) {
		aci_text_wide(t, d->lo);
		return;
	}
	aci_text_put(t, "[");
	aci_text_wide(t, d->lo);
	aci_text_put(t, ", ");
	aci_text_wide(t, d->hi);
	aci_text_put(t, "]");
}

static json_t *word_info(const struct out *o)
{
	const struct ac_diag *d = o->d;
	LINE(launch);
	LINE(value);
	LINE(window);
	aci_text_put(&launch, "%" PRIu64 " (phase ", d->launch);
	if (d->phase < o->m->n_phases)
		put_name(&launch, o->m->phases[d->phase].identity);
	aci_text_put(&launch, ")");
	put_interval(&value, d);
	if (d->window < o->m->n_windows) {
		const struct ac_window *w = &o->m->windows[d->window];
		put_name(&window, w->name);
		aci_text_put(&window, " (windows[%" PRIu64 "]) ", d->window);
		aci_text_range(&window, w->base, w->size);
	} else {
		aci_text_put(&window, "none: the interval leaves [0, 2^64)");
	}
	json_t *info = json_array();
	json_array_append_new(info, pair("launch", done(&launch)));
	json_array_append_new(info, pair("word", json_integer((json_int_t)d->word)));
	json_array_append_new(info, pair("value", done(&value)));
	if (d->ordinal != AC_NONE)
		json_array_append_new(info, pair("iteration",
			json_integer((json_int_t)d->ordinal)));
	json_array_append_new(info, pair("window", done(&window)));
	return info;
}

/* The word's value at the iterations the walk shows: [[t, "0x..",
 * [[y0, y1]...]]...], or NULL outside a repeat. */
static json_t *word_values(const struct out *o)
{
	const struct ac_diag *d = o->d;
	uint64_t r = ac_program_repeat_of(o->p, d->launch);
	if (r == AC_NONE)
		return NULL;
	const struct ac_repeat *rep = &o->m->repeats[r];
	uint64_t ts[AC_WALK_SHOWN];
	int n = ac_walk_shown(rep->iterations, d->ordinal, ts);
	json_t *values = json_array();
	for (int i = 0; i < n; i++) {
		uint64_t t = ts[i];
		struct ac_wide v = ac_program_word_value(o->p, d->launch, d->word, t);
		LINE(text);
		aci_text_wide(&text, v);
		json_t *ys = v.high == 0 ? ys_of(o->a, v.low, v.low) : json_array();
		json_array_append_new(values, json_pack("[o, o, o]", json_integer((json_int_t)t),
							done(&text), ys));
	}
	return values;
}

static void word_marks(struct out *o, const struct tl_found *found)
{
	const struct ac_diag *d = o->d;
	uint64_t c = object_column(o, found->launch, d->phase, d->launch);
	add_col(o, c, "launch");
	LINE(title);
	LINE(label);
	aci_text_put(&title, "word %" PRIu64 " of launch %" PRIu64 " = ", d->word,
		     d->launch);
	put_interval(&title, d);
	if (d->ordinal != AC_NONE)
		aci_text_put(&title, " at iteration %" PRIu64, d->ordinal);
	aci_text_put(&title, ": in no named range");
	aci_text_put(&label, "word %" PRIu64 " = ", d->word);
	put_interval(&label, d);
	if (d->ordinal != AC_NONE)
		aci_text_put(&label, " (iteration %" PRIu64 ")", d->ordinal);
	uint64_t cut[2];
	json_t *ys = fail_cut(d, cut) ? ys_of(o->a, cut[0], cut[1]) : json_array();
	json_t *mk = mark("word", c, c, 0, ys, done(&title), done(&label), word_info(o));
	json_t *values = word_values(o);
	if (mk && values)
		json_object_set_new(mk, "values", values);
	add_mark(o, mk);
	for (int i = 0; i < 2; i++) {
		if (d->near[i].index == AC_NONE)
			continue;
		LINE(t);
		aci_text_put(&t, i ? "nearest above: " : "nearest below: ");
		put_tensor(&t, o->m, d->near[i]);
		add_mark(o, tensor_mark(o->m, o->a, "near", d->near[i], c, c, &t,
					i ? "nearest above: " : "nearest below: ", "",
					AC_NONE));
	}
}

static void no_phase_marks(struct out *o, const struct tl_found *found)
{
	const struct ac_diag *d = o->d;
	uint64_t c = object_column(o, found->launch, AC_NONE, d->launch);
	add_col(o, c, "launch");
	LINE(title);
	aci_text_put(&title, "launch %" PRIu64 " has no declared phase (%s)", d->launch,
	    ac_identity_problem_name(d->identity_problem));
	json_t *info = json_array();
	json_array_append_new(info, pair("launch", json_integer((json_int_t)d->launch)));
	json_array_append_new(info, pair("problem",
		json_string(ac_identity_problem_name(d->identity_problem))));
	if (d->identity_problem == AC_ID_UNPARSABLE ||
	    d->identity_problem == AC_ID_FIELD51_WIRE_TYPE)
		json_array_append_new(info, pair("at byte",
			json_integer((json_int_t)d->identity_offset)));
	json_t *ys = json_pack("[[i, i]]", 0, (json_int_t)AXIS_UNITS);
	LINE(label);
	aci_text_put(&label, "launch %" PRIu64 ": no phase", d->launch);
	add_mark(o, mark("launch", c, c, 0, ys, done(&title), done(&label), info));
}

/* ---- (D) ---- */

static void put_instance(struct text *t, const struct ac_model *m,
			 uint64_t instance, uint64_t phase)
{
	aci_text_put(t, "instance %" PRIu64 " (phase ", instance);
	if (phase < m->n_phases)
		put_name(t, m->phases[phase].identity);
	aci_text_put(t, ")");
}

/* The plane of phase with the given key: what an earlier instance
 * declared (the carried plane itself if the phase has none). */
static struct ac_tensor_ref plane_with_key(const struct out *o, uint64_t phase,
					   uint32_t key, struct ac_tensor_ref or)
{
	if (phase >= o->m->n_phases)
		return or;
	const struct ac_phase *p = &o->m->phases[phase];
	for (uint32_t i = 0; i < p->plane_count; i++)
		if (live_key_of(o->tl->live, (uint64_t)p->plane_first + i) == key)
			return (struct ac_tensor_ref){ phase, i };
	return or;
}

static void carried_marks(struct out *o, const struct tl_found *found)
{
	const struct ac_diag *d = o->d;
	const struct ac_model *m = o->m;
	uint64_t ck = found->instance[0];
	add_col(o, ck, "instance");
	LINE(t);
	put_tensor(&t, m, d->tensor[0]);
	aci_text_put(&t, " at ");
	put_instance(&t, m, d->instance, d->phase);
	aci_text_put(&t, d->reason == AC_CARRIED_UNDECLARED ? ": never declared before"
						   : ": its value was overwritten");
	add_mark(o, tensor_mark(m, o->a, "carried", d->tensor[0], ck, ck, &t,
				"carried ", d->reason == AC_CARRIED_UNDECLARED ? ", never declared"
									       : "", d->instance));
	if (d->reason != AC_CARRIED_OVERWRITTEN)
		return;

	/* j's declaration, drawn as far as the value stayed in use */
	uint64_t cj = found->instance[1], ci = found->instance[2], last = cj;
	const struct ac_tensor *c = aci_model_tensor(m, d->tensor[0]);
	struct ac_tensor_ref earlier = d->tensor[0];
	if (c) {
		uint32_t key = live_key_of(o->tl->live, (uint64_t)(c - m->planes));
		earlier = plane_with_key(o, d->earlier_phase, key, earlier);
		const struct tl_box *b = cj == AC_NONE ? NULL
			: timeline_box_at(o->tl, key, (size_t)cj);
		if (b && b->last > cj && (ck == AC_NONE || b->last < ck))
			last = b->last;
	}
	add_col(o, cj, "earlier");
	add_col(o, ci, "intervening");
	t.used = 0;
	aci_text_put(&t, "last declared by ");
	put_instance(&t, m, d->earlier, d->earlier_phase);
	add_mark(o, tensor_mark(m, o->a, "earlier", earlier, cj, last, &t,
				"", " declared", d->earlier));
	t.used = 0;
	put_tensor(&t, m, d->tensor[1]);
	aci_text_put(&t, " declared by ");
	put_instance(&t, m, d->intervening, d->tensor[1].phase);
	aci_text_put(&t, " in between");
	add_mark(o, tensor_mark(m, o->a, "overwriter", d->tensor[1], ci, ci, &t,
				"", " overwrote", d->intervening));
	add_mark(o, overlap_mark(m, o->a, d->tensor[0], d->tensor[1], ci, ci, 0,
				 "bytes overwritten:", "overwritten bytes"));
}

/* ---- entry points ---- */

void fail_want(const ac_program *p, const struct ac_diag *d,
	       struct tl_want *want, uint64_t *extra_repeat,
	       uint64_t *extra_ordinal)
{
	for (int i = 0; i < 3; i++)
		want->instance[i] = AC_NONE;
	want->launch = want->ordinal = want->phase[0] = want->phase[1] = AC_NONE;
	*extra_repeat = *extra_ordinal = AC_NONE;
	switch (d->condition) {
	case AC_COND_A:
	case AC_COND_B:
		want->phase[0] = d->tensor[0].phase;
		want->phase[1] = d->tensor[1].phase;
		break;
	case AC_COND_C:
		want->launch = d->launch;
		if (d->reason == AC_WORD_UNNAMED && d->ordinal != AC_NONE) {
			want->ordinal = d->ordinal;
			*extra_repeat = ac_program_repeat_of(p, d->launch);
			*extra_ordinal = d->ordinal;
		}
		break;
	case AC_COND_D:
		want->instance[0] = d->instance;
		if (d->reason == AC_CARRIED_OVERWRITTEN) {
			want->instance[1] = d->earlier;
			want->instance[2] = d->intervening;
		}
		break;
	default:
		break;
	}
}

json_t *fail_json(const ac_program *p, const struct ac_diag *d,
		  const struct axis *a, struct timeline *tl,
		  const struct tl_found *found)
{
	struct out o = { p, ac_program_model(p), d, a, tl, json_array(), json_array() };
	switch (d->reason) {
	case AC_OK:
		break;
	case AC_LAUNCH_NO_PHASE:
		no_phase_marks(&o, found);
		break;
	case AC_WORD_UNNAMED:
		word_marks(&o, found);
		break;
	case AC_CARRIED_UNDECLARED:
	case AC_CARRIED_OVERWRITTEN:
		carried_marks(&o, found);
		break;
	default:
		layout_marks(&o, found);
		break;
	}
	return json_pack("{s:o, s:o}", "cols", o.cols, "marks", o.marks);
}

/* ---- advisories ---- */

json_t *advisory_marks(const ac_program *p, const struct ac_advisory *adv,
		       uint64_t n, const struct axis *a)
{
	const struct ac_model *m = ac_program_model(p);
	json_t *marks = json_array();
	for (uint64_t i = 0; i < n; i++) {
		const struct ac_tensor *x = aci_model_tensor(m, adv[i].tensor);
		if (!x)
			continue;
		char why[1024];
		ac_advisory_render(&adv[i], p, why, sizeof(why));
		LINE(label);
		LINE(outside);
		put_name(&label, x->name);
		aci_text_put(&label, " outside the windows");
		aci_text_put(&outside, "0x%" PRIx64, adv[i].outside);
		json_t *info = tensor_info(m, adv[i].tensor);
		json_array_append_new(info, pair("advisory",
			json_string(ac_advisory_kind_name(adv[i].kind))));
		json_array_append_new(info, pair("first byte outside",
						 done(&outside)));
		uint64_t lo, hi;
		bytes_of(x, &lo, &hi);
		json_array_append_new(marks, mark("advisory", AC_NONE, AC_NONE, 1,
			ys_of(a, lo, hi), aci_json_text(why, strlen(why)),
			done(&label), info));
	}
	return marks;
}
