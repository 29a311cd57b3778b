/* SPDX-License-Identifier: MIT */
/*
 * html_report.c - the report page (see html_report.h).
 *
 * The data blob's layout is documented where report.js reads it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "html_report.h"
#include "certify/json_text.h"
#include "report_assets.h"
#include "report_axis.h"
#include "report_fail.h"
#include "report_live.h"
#include "report_timeline.h"

/* ---- JSON pieces ---- */

/* Integers up to 2^53 as numbers (JavaScript holds them exactly), larger
 * ones as decimal strings, AC_NONE as null. */
static json_t *json_u64(uint64_t v)
{
	if (v == AC_NONE)
		return json_null();
	if (v <= (UINT64_C(1) << 53))
		return json_integer((json_int_t)v);
	char buf[24];
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return json_string(buf);
}

/* [name, "0x offset", "0x size", y0, y1] */
static json_t *tensor_row(const struct axis *a, const struct ac_tensor *t)
{
	uint64_t hi = t->offset;
	if (t->size)
		hi = t->size - 1 > UINT64_MAX - t->offset ? UINT64_MAX
							  : t->offset + (t->size - 1);
	uint32_t y0, y1;
	axis_place(a, t->offset, hi, &y0, &y1);
	return json_pack("[o, o, o, i, i]", aci_json_name(t->name),
			 aci_json_hex_u64(t->offset), aci_json_hex_u64(t->size),
			 (json_int_t)y0, (json_int_t)y1);
}

static json_t *globals_json(const struct ac_model *m, const struct axis *a)
{
	json_t *g = json_array();
	for (uint32_t i = 0; i < m->n_globals; i++)
		json_array_append_new(g, tensor_row(a, &m->globals[i]));
	return g;
}

/* The columns, one array each; the first element says which kind. */
static json_t *column_json(const struct tl_col *c)
{
	switch (c->kind) {
	case TL_FOLD:
		return json_pack("[i, o, o, b, o, o, o, o]", c->kind,
				 json_u64(c->instance), json_u64(c->fold.instances),
				 c->fold.of_refs, json_u64(c->fold.index),
				 json_u64(c->fold.first), json_u64(c->fold.last),
				 json_u64(c->fold.total));
	case TL_GAP:
		return json_pack("[i, o, o, o]", c->kind, json_u64(c->instance),
				 json_u64(c->instance_last), json_u64(c->columns));
	case TL_EXTRA:
		return json_pack("[i, o, o]", c->kind, json_u64(c->phase),
				 json_u64(c->launch_first));
	default:
		return json_pack("[i, o, o, o, o, o, o, o, o]", c->kind,
				 json_u64(c->instance), json_u64(c->phase),
				 json_u64(c->ref), json_u64(c->launch_first),
				 json_u64(c->ordinal_first), json_u64(c->launch_last),
				 json_u64(c->ordinal_last), json_u64(c->launches));
	}
}

static json_t *columns_json(const struct timeline *tl)
{
	json_t *cols = json_array();
	for (size_t i = 0; i < tl->n_cols; i++)
		json_array_append_new(cols, column_json(&tl->cols[i]));
	return cols;
}

static json_t *spans_json(const struct timeline *tl)
{
	json_t *spans = json_array();
	for (size_t i = 0; i < tl->n_spans; i++) {
		const struct tl_span *s = &tl->spans[i];
		json_array_append_new(spans, json_pack("[I, I, b, o, o, o]",
			(json_int_t)s->first, (json_int_t)s->last, s->it.of_refs,
			json_u64(s->it.index), json_u64(s->it.iteration),
			json_u64(s->it.total)));
	}
	return spans;
}

/* Boxes flat, four numbers each: key, first and last column, flags. */
static json_t *boxes_json(const struct timeline *tl)
{
	json_t *b = json_array();
	for (size_t i = 0; i < tl->n_boxes; i++) {
		const struct tl_box *x = &tl->boxes[i];
		json_array_append_new(b, json_integer(x->key));
		json_array_append_new(b, json_integer((json_int_t)x->first));
		json_array_append_new(b, json_integer((json_int_t)x->last));
		json_array_append_new(b, json_integer(x->flags));
	}
	return b;
}

/* The keys boxes use, by key number: {"7": [name, off, size, y0, y1]}. */
static json_t *keys_json(const struct ac_model *m, const struct timeline *tl,
			 const struct axis *a)
{
	json_t *keys = json_object();
	char id[16];
	for (size_t i = 0; i < tl->n_boxes; i++) {
		snprintf(id, sizeof(id), "%" PRIu32, tl->boxes[i].key);
		if (json_object_get(keys, id))
			continue;
		uint64_t plane = live_key_plane(tl->live, tl->boxes[i].key);
		json_object_set_new(keys, id, tensor_row(a, &m->planes[plane]));
	}
	return keys;
}

/* The phases columns show: {"1": [identity, [[key, carried]...]]}. */
static json_t *phases_json(const struct ac_model *m, const struct timeline *tl)
{
	json_t *phases = json_object();
	char id[24];
	for (size_t i = 0; i < tl->n_cols; i++) {
		uint64_t p = tl->cols[i].phase;
		if (tl->cols[i].kind == TL_FOLD || tl->cols[i].kind == TL_GAP ||
		    p >= m->n_phases)
			continue;
		snprintf(id, sizeof(id), "%" PRIu64, p);
		if (json_object_get(phases, id))
			continue;
		const struct ac_phase *ph = &m->phases[p];
		json_t *planes = json_array();
		for (uint32_t j = 0; j < ph->plane_count; j++) {
			uint64_t plane = (uint64_t)ph->plane_first + j;
			json_array_append_new(planes, json_pack("[i, b]",
				(json_int_t)live_key_of(tl->live, plane),
				m->planes[plane].carried));
		}
		json_object_set_new(phases, id, json_pack("[o, o]",
				    aci_json_name(ph->identity), planes));
	}
	return phases;
}

static json_t *meta_json(const struct report_input *in,
			 const struct timeline *tl)
{
	const struct ac_model *m = ac_program_model(in->program);
	char verdict[24];
	snprintf(verdict, sizeof(verdict), "%" PRIu64, in->verdict);
	return json_pack("{s:o, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o,"
			 " s:o, s:o, s:o, s:o, s:o}",
		"file", aci_json_text(in->file, strlen(in->file)),
		"verdict", verdict,
		"condition", ac_condition_name(in->diag->condition),
		"reason", ac_reason_name(in->diag->reason),
		"explanation", aci_json_text(in->explanation, strlen(in->explanation)),
		"alignment", json_u64(m->alignment),
		"launches", json_u64(m->n_launches),
		"refs", json_u64(m->n_refs),
		"executed", json_u64(in->executed),
		"instances", json_u64(tl->instances),
		"walk_columns", json_u64(tl->walk_columns),
		"planes", json_u64(m->n_planes),
		"keys", json_u64(live_keys(tl->live)),
		"boxes", json_u64(tl->n_boxes),
		"boxes_left_out", json_u64(tl->boxes_left_out),
		"repeats", json_u64(m->n_repeats));
}

/* Everything the page draws. */
static json_t *data_json(const struct report_input *in)
{
	const ac_program *p = in->program;
	const struct ac_model *m = ac_program_model(p);
	struct tl_want want;
	struct tl_found found;
	uint64_t extra_repeat, extra_ordinal, cut[2];
	fail_want(p, in->diag, &want, &extra_repeat, &extra_ordinal);
	int n_cut = fail_cut(in->diag, cut);

	json_t *data = NULL;
	ac_walk *walk = ac_walk_new(p, extra_repeat, extra_ordinal);
	struct axis *axis = axis_new(m, cut, (size_t)n_cut);
	struct timeline *tl = walk && axis ? timeline_new(p, walk, &want, &found)
					   : NULL;
	if (tl) {
		/* fail_json may add columns: the columns come after it */
		json_t *fail = fail_json(p, in->diag, axis, tl, &found);
		json_t *adv = advisory_marks(p, in->advisories,
					     in->n_advisories, axis);
		json_array_extend(json_object_get(fail, "marks"), adv);
		json_decref(adv);
		data = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
			"meta", meta_json(in, tl), "panes", axis_json(axis),
			"globals", globals_json(m, axis), "fail", fail,
			"keys", keys_json(m, tl, axis), "phases", phases_json(m, tl),
			"cols", columns_json(tl), "spans", spans_json(tl),
			"boxes", boxes_json(tl));
	}
	timeline_free(tl);
	axis_free(axis);
	ac_walk_free(walk);
	return data;
}

/* ---- the page ---- */

struct buf {
	char *p;
	size_t n, cap;
	int oom;
};

static void add(struct buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 65536;
		while (cap < b->n + n + 1)
			cap *= 2;
		char *np = realloc(b->p, cap);
		if (!np) {
			b->oom = 1;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

static void adds(struct buf *b, const char *s)
{
	add(b, s, strlen(s));
}

/* UTF-8 text (made valid by aci_json_text) as HTML character data. */
static void add_escaped(struct buf *b, const char *s, size_t n)
{
	json_t *j = aci_json_text(s, n);
	const char *t = j ? json_string_value(j) : "";
	size_t len = j ? json_string_length(j) : 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)t[i];
		switch (c) {
		case '&': adds(b, "&amp;"); break;
		case '<': adds(b, "&lt;"); break;
		case '>': adds(b, "&gt;"); break;
		case '"': adds(b, "&quot;"); break;
		case '\'': adds(b, "&#39;"); break;
		default:
			/* controls but newline and tab are not text */
			if (c < 0x20 && c != '\n' && c != '\t')
				adds(b, "\xEF\xBF\xBD");
			else
				add(b, (const char *)&t[i], 1);
		}
	}
	json_decref(j);
}

/* JSON inside <script>: '<', '>' and '&' (only ever in strings) as
 * \u escapes, so no name can end the element or open a comment. */
static void add_json(struct buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			adds(b, "\\u003c");
		else if (*s == '>')
			adds(b, "\\u003e");
		else if (*s == '&')
			adds(b, "\\u0026");
		else
			add(b, s, 1);
	}
}

static void add_head(struct buf *b, const struct report_input *in)
{
	adds(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
		"'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
		"<meta name=\"viewport\" content=\"width=device-width\">\n<title>");
	add_escaped(b, in->file, strlen(in->file));
	adds(b, ": arena-certify report</title>\n<style>\n");
	add(b, (const char *)report_css, sizeof(report_css));
	adds(b, "</style>\n</head>\n");
}

/* The advisories as static text (spec section 6), and in strict mode
 * that they fail the program. */
static void add_advisories(struct buf *b, const struct report_input *in)
{
	if (!in->n_advisories)
		return;
	if (in->strict)
		adds(b, "<p id=\"strict\" class=\"bad\">strict: fails</p>\n");
	adds(b, "<ul id=\"advisories\">\n");
	for (uint64_t i = 0; i < in->n_advisories; i++) {
		char text[1024];
		ac_advisory_render(&in->advisories[i], in->program, text,
				   sizeof(text));
		adds(b, "<li class=\"advisory\">advisory ");
		add_escaped(b, text, strlen(text));
		adds(b, "</li>\n");
	}
	adds(b, "</ul>\n");
}

/* The header is static, so the verdict reads even without script. */
static void add_header(struct buf *b, const struct report_input *in)
{
	char line[160];
	adds(b, "<body>\n<header id=\"top\">\n<h1><span class=\"tool\">arena-certify"
		"</span> <span id=\"file\">");
	add_escaped(b, in->file, strlen(in->file));
	adds(b, "</span></h1>\n");
	if (in->verdict == 0)
		snprintf(line, sizeof(line), "<p id=\"verdict\" class=\"ok\">verdict 0"
			 " <span>certified</span></p>\n");
	else
		snprintf(line, sizeof(line), "<p id=\"verdict\" class=\"bad\">verdict %"
			 PRIu64 " <span>(%s) %s</span></p>\n", in->verdict,
			 ac_condition_name(in->diag->condition),
			 ac_reason_name(in->diag->reason));
	adds(b, line);
	adds(b, "<p id=\"explanation\">");
	add_escaped(b, in->explanation, strlen(in->explanation));
	adds(b, "</p>\n");
	add_advisories(b, in);
	adds(b, "<ol id=\"objects\"></ol>\n<p id=\"stats\"></p>\n</header>\n");
}

static void add_body(struct buf *b, const char *data)
{
	adds(b, "<div id=\"bar\"><button id=\"reset\" type=\"button\">Reset zoom"
		"</button> <button id=\"out\" type=\"button\">Zoom out</button> "
		"<span id=\"hint\">Drag across the chart to zoom in; hover or click "
		"for details.</span></div>\n<div id=\"main\"><div id=\"plot\">"
		"<svg id=\"chart\" role=\"img\" aria-label=\"memory over time\">"
		"</svg></div>\n<aside id=\"info\"></aside></div>\n"
		"<footer id=\"legend\"></footer>\n"
		"<noscript><p>The chart needs JavaScript; the verdict above does "
		"not.</p></noscript>\n<script type=\"application/json\" id=\"data\">");
	add_json(b, data);
	adds(b, "</script>\n<script>\n");
	add(b, (const char *)report_js, sizeof(report_js));
	adds(b, "</script>\n</body>\n</html>\n");
}

char *html_report(const struct report_input *in, size_t *len)
{
	json_t *data = data_json(in);
	char *text = data ? json_dumps(data, JSON_COMPACT) : NULL;
	json_decref(data);
	if (!text)
		return NULL;
	struct buf b = { NULL, 0, 0, 0 };
	add_head(&b, in);
	add_header(&b, in);
	add_body(&b, text);
	free(text);
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	*len = b.n;
	return b.p;
}
