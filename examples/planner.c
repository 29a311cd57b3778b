/* SPDX-License-Identifier: MIT */
/*
 * The planner, in three passes:
 *
 *   1. emit the launches symbolically: each word is a number, a byte
 *      offset into a global, or a byte offset into a workspace value, and
 *      each launch belongs to a phase.  This also records which phases
 *      touch each workspace value.
 *   2. give each value a lifetime (from its writer to its last reader;
 *      the buggy planner stops at its first reader) and place the values
 *      in the workspace, first fit, sharing bytes between values whose
 *      lifetimes do not meet.
 *   3. write the program: windows, globals, each phase's planes (a value
 *      is fresh in the phase that writes it, carried in the phases that
 *      read it later), launches with resolved words and their source
 *      identities, the layer Repeat and the schedule.
 *
 * The layer body is emitted once.  Its weight words name layer 0's
 * tensors; the Repeat's deltas move them one layer stride per iteration.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arenaguard/uapi.h>

#include "planner.h"

/* Workspace values, in the order they are first written. */
enum value_id {
	V_XN,           /* layernorm(x): read by qkv and by mlp_up */
	V_Q, V_K, V_V,  /* per head, [T][hd] blocks */
	V_S, V_P,       /* scores and probabilities, per head [T][T] */
	V_O,            /* per-head contexts */
	V_T,            /* one head's share of the attention output */
	V_H, V_G,       /* MLP before and after gelu */
	V_T2,           /* the MLP output */
	V_COUNT
};

static const char *const value_names[V_COUNT] = {
	"xn", "q", "k", "v", "s", "p", "o", "t", "h", "g", "t2",
};

static const char *const phase_names[PH_COUNT] = {
	"embed", "norm", "qkv", "scores", "context", "attn_out",
	"mlp_up", "mlp_down", "final",
};

static const char *const window_names[WIN_COUNT] = {
	"params", "io", "workspace",
};

static const char *const global_names[G_COUNT] = {
	"weights", "final_norm", "input", "residual", "output",
};

/* ---- pass 1: symbolic launches ---- */

#define MAX_WORDS 8
#define MAX_NAME 32
/* Field 1 tag + length + name, field 51 tag (2 bytes) + length + phase. */
#define MAX_IDENTITY 64

enum word_kind { W_NUM, W_GLOBAL, W_VALUE };

/* A launch word before placement: a number, or a byte offset into a
 * global or a workspace value. */
struct word {
	enum word_kind kind;
	int id;
	uint64_t v;
};

struct step {
	enum plan_phase phase;
	char name[MAX_NAME];
	unsigned n;
	struct word w[MAX_WORDS];
};

struct builder {
	struct model_shape shape;
	struct layer_layout layer;
	enum plan_phase phase;      /* of the launches emitted now */
	struct step *steps;
	unsigned n_steps, cap;
	int failed;                 /* out of memory */
	uint64_t bytes[V_COUNT];
	uint32_t touched[V_COUNT];  /* bit p: phase p names the value */
	uint64_t offset[V_COUNT];   /* in the workspace, after placement */
};

static struct word num(uint64_t v)
{
	return (struct word){ W_NUM, 0, v };
}

static struct word f32(float f)
{
	uint32_t bits;
	memcpy(&bits, &f, sizeof(bits));
	return num(bits);
}

static struct word glob(enum plan_global g, size_t floats)
{
	return (struct word){ W_GLOBAL, g, floats * sizeof(float) };
}

/* A tensor of the current layer in the weight bank (layer 0's address;
 * the Repeat moves it). */
static struct word weight(size_t floats)
{
	return glob(G_WEIGHTS, floats);
}

static struct word val(enum value_id v, size_t floats)
{
	return (struct word){ W_VALUE, v, floats * sizeof(float) };
}

static void emit(struct builder *b, const char *name, int head,
		 const struct word *w, size_t n)
{
	if (b->failed)
		return;
	if (b->n_steps == b->cap) {
		unsigned cap = b->cap ? 2 * b->cap : 64;
		struct step *steps = realloc(b->steps, cap * sizeof(*steps));
		if (!steps) {
			b->failed = 1;
			return;
		}
		b->steps = steps;
		b->cap = cap;
	}
	struct step *s = &b->steps[b->n_steps++];
	s->phase = b->phase;
	if (head >= 0)
		snprintf(s->name, sizeof(s->name), "%s.h%d", name, head);
	else
		snprintf(s->name, sizeof(s->name), "%s", name);
	s->n = (unsigned)n;
	memcpy(s->w, w, n * sizeof(*w));
	for (size_t i = 0; i < n; i++)
		if (w[i].kind == W_VALUE)
			b->touched[w[i].id] |= 1u << b->phase;
}

/* One launch: the kernel and its parameters in uapi.h's order. */
#define EMIT(b, name, head, kernel, ...)                                  \
	emit(b, name, head, (const struct word[]){ num(kernel), __VA_ARGS__ }, \
	     sizeof((const struct word[]){ num(kernel), __VA_ARGS__ }) /      \
		     sizeof(struct word))

static void emit_embed(struct builder *b)
{
	size_t td = (size_t)b->shape.tokens * b->shape.width;
	b->phase = PH_EMBED;
	EMIT(b, "embed.copy", -1, ARENA_K_COPY,
	     glob(G_RESIDUAL, 0), glob(G_INPUT, 0), num(td));
}

static void emit_norm_and_qkv(struct builder *b)
{
	const struct model_shape *s = &b->shape;
	const struct layer_layout *l = &b->layer;
	size_t T = s->tokens, D = s->width, hd = s->head_dim;

	b->phase = PH_NORM;
	EMIT(b, "norm.ln", -1, ARENA_K_LAYERNORM, val(V_XN, 0),
	     glob(G_RESIDUAL, 0), weight(l->ln_gamma), weight(l->ln_beta),
	     num(T), num(D));

	b->phase = PH_QKV;
	for (int h = 0; h < s->heads; h++) {
		size_t out = h * T * hd, w = h * D * hd;
		EMIT(b, "qkv.q", h, ARENA_K_MATMUL, val(V_Q, out), val(V_XN, 0),
		     weight(l->wq + w), num(T), num(D), num(hd), num(0));
		EMIT(b, "qkv.k", h, ARENA_K_MATMUL, val(V_K, out), val(V_XN, 0),
		     weight(l->wk + w), num(T), num(D), num(hd), num(0));
		EMIT(b, "qkv.v", h, ARENA_K_MATMUL, val(V_V, out), val(V_XN, 0),
		     weight(l->wv + w), num(T), num(D), num(hd), num(0));
	}
}

static void emit_attention(struct builder *b)
{
	const struct model_shape *s = &b->shape;
	const struct layer_layout *l = &b->layer;
	size_t T = s->tokens, D = s->width, hd = s->head_dim;
	float scale = 1.0f / sqrtf((float)hd);

	b->phase = PH_SCORES;
	for (int h = 0; h < s->heads; h++) {
		size_t qk = h * T * hd, st = h * T * T;
		EMIT(b, "scores.qk", h, ARENA_K_MATMUL, val(V_S, st),
		     val(V_Q, qk), val(V_K, qk), num(T), num(hd), num(T), num(1));
		EMIT(b, "scores.softmax", h, ARENA_K_SOFTMAX, val(V_P, st),
		     val(V_S, st), num(T), num(T), f32(scale));
	}

	b->phase = PH_CONTEXT;
	for (int h = 0; h < s->heads; h++)
		EMIT(b, "context.pv", h, ARENA_K_MATMUL, val(V_O, h * T * hd),
		     val(V_P, h * T * T), val(V_V, h * T * hd), num(T), num(T),
		     num(hd), num(0));

	/* concat(o) . Wo is the sum over heads of o_h . (Wo's rows of head
	 * h), which is a contiguous [hd][D] block: no strides needed. */
	b->phase = PH_ATTN_OUT;
	for (int h = 0; h < s->heads; h++) {
		EMIT(b, "attn_out.wo", h, ARENA_K_MATMUL, val(V_T, 0),
		     val(V_O, h * T * hd), weight(l->wo + h * hd * D), num(T),
		     num(hd), num(D), num(0));
		EMIT(b, "attn_out.residual", h, ARENA_K_ADD, glob(G_RESIDUAL, 0),
		     glob(G_RESIDUAL, 0), val(V_T, 0), num(T * D));
	}
}

static void emit_mlp(struct builder *b)
{
	const struct model_shape *s = &b->shape;
	const struct layer_layout *l = &b->layer;
	size_t T = s->tokens, D = s->width, F = s->hidden;

	b->phase = PH_MLP_UP;
	EMIT(b, "mlp_up.w1", -1, ARENA_K_MATMUL, val(V_H, 0), val(V_XN, 0),
	     weight(l->w1), num(T), num(D), num(F), num(0));
	EMIT(b, "mlp_up.gelu", -1, ARENA_K_GELU, val(V_G, 0), val(V_H, 0),
	     num(T * F));

	b->phase = PH_MLP_DOWN;
	EMIT(b, "mlp_down.w2", -1, ARENA_K_MATMUL, val(V_T2, 0), val(V_G, 0),
	     weight(l->w2), num(T), num(F), num(D), num(0));
	EMIT(b, "mlp_down.residual", -1, ARENA_K_ADD, glob(G_RESIDUAL, 0),
	     glob(G_RESIDUAL, 0), val(V_T2, 0), num(T * D));
}

static void emit_final(struct builder *b)
{
	size_t T = b->shape.tokens, D = b->shape.width;
	b->phase = PH_FINAL;
	EMIT(b, "final.ln", -1, ARENA_K_LAYERNORM, glob(G_OUTPUT, 0),
	     glob(G_RESIDUAL, 0), glob(G_FINAL_NORM, 0), glob(G_FINAL_NORM, D),
	     num(T), num(D));
}

static void value_sizes(struct builder *b)
{
	const struct model_shape *s = &b->shape;
	uint64_t f = sizeof(float);
	uint64_t td = (uint64_t)s->tokens * s->width * f;
	uint64_t heads_tt = (uint64_t)s->heads * s->tokens * s->tokens * f;
	uint64_t tf = (uint64_t)s->tokens * s->hidden * f;
	uint64_t sizes[V_COUNT] = {
		[V_XN] = td, [V_Q] = td, [V_K] = td, [V_V] = td,
		[V_S] = heads_tt, [V_P] = heads_tt, [V_O] = td, [V_T] = td,
		[V_H] = tf, [V_G] = tf, [V_T2] = td,
	};
	memcpy(b->bytes, sizes, sizeof(sizes));
}

/* ---- pass 2: lifetimes and placement ---- */

struct lifetime {
	int begin, end;   /* phases, inclusive */
};

static int lowest_bit(uint32_t mask)
{
	int i = 0;
	if (!mask)
		return -1;
	while (!(mask & 1u)) {
		mask >>= 1;
		i++;
	}
	return i;
}

static int highest_bit(uint32_t mask)
{
	int i = -1;
	while (mask) {
		mask >>= 1;
		i++;
	}
	return i;
}

/*
 * A value lives from the phase that writes it to the last phase that
 * reads it.  The buggy planner ends it at the first reader, as if every
 * value had one consumer: right for all values but xn.
 */
static struct lifetime lifetime_of(uint32_t touched, enum plan_kind kind)
{
	struct lifetime life = { lowest_bit(touched), highest_bit(touched) };
	uint32_t readers = touched & (touched - 1);
	if (kind == PLAN_BUGGY && readers)
		life.end = lowest_bit(readers);
	return life;
}

/* Two values may not share bytes when their lifetimes meet, or when one
 * phase names both (a phase's planes must be disjoint). */
static int conflict(const struct builder *b, const struct lifetime *life,
		    int u, int v)
{
	if (b->touched[u] & b->touched[v])
		return 1;
	return life[u].begin <= life[v].end && life[v].begin <= life[u].end;
}

static uint64_t align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) / a * a;
}

/* First fit: the lowest aligned offset where v meets no conflicting value
 * placed before it.  Moving past a block v overlaps never skips a fit. */
static uint64_t first_fit(const struct builder *b,
			  const struct lifetime *life, int v)
{
	uint64_t at = 0;
	int moved = 1;
	while (moved) {
		moved = 0;
		for (int u = 0; u < v; u++) {
			uint64_t end = b->offset[u] + b->bytes[u];
			if (conflict(b, life, u, v) && at < end &&
			    b->offset[u] < at + b->bytes[v]) {
				at = align_up(end, PLAN_ALIGNMENT);
				moved = 1;
			}
		}
	}
	return at;
}

static uint64_t place_values(struct builder *b, enum plan_kind kind)
{
	struct lifetime life[V_COUNT];
	uint64_t span = 0;
	for (int v = 0; v < V_COUNT; v++)
		life[v] = lifetime_of(b->touched[v], kind);
	for (int v = 0; v < V_COUNT; v++) {
		b->offset[v] = first_fit(b, life, v);
		if (b->offset[v] + b->bytes[v] > span)
			span = b->offset[v] + b->bytes[v];
	}
	return span;
}

/* ---- pass 3: the program ---- */

static struct ac_bytes text_bytes(const char *s)
{
	return (struct ac_bytes){ (const uint8_t *)s, (uint32_t)strlen(s) };
}

static struct ac_tensor tensor(const char *name, uint64_t offset,
			       uint64_t size, int carried)
{
	struct ac_tensor t = { text_bytes(name), offset, size, 0, { 0 } };
	t.carried = (uint8_t)carried;
	return t;
}

/* Globals packed from a window's base, each aligned; returns the end. */
static uint64_t pack_globals(struct plan *plan, uint64_t at,
			     const enum plan_global *ids,
			     const uint64_t *sizes, int n)
{
	for (int i = 0; i < n; i++) {
		at = align_up(at, PLAN_ALIGNMENT);
		plan->globals[ids[i]] = tensor(global_names[ids[i]], at,
					       sizes[i], 0);
		at += sizes[i];
	}
	return at;
}

static void set_window(struct plan *plan, enum plan_window w, uint64_t base,
		       uint64_t end)
{
	uint64_t size = align_up(end > base ? end - base : 1, PLAN_PAGE);
	plan->windows[w] = (struct ac_window){ text_bytes(window_names[w]),
					       base, size };
}

static void lay_out_memory(struct plan *plan, const struct builder *b,
			   uint64_t workspace)
{
	const struct model_shape *s = &b->shape;
	uint64_t f = sizeof(float);
	uint64_t td = (uint64_t)s->tokens * s->width * f;
	uint64_t bank = (uint64_t)s->layers * b->layer.stride * f;

	static const enum plan_global params[] = { G_WEIGHTS, G_FINAL_NORM };
	uint64_t params_size[] = { bank, 2 * (uint64_t)s->width * f };
	static const enum plan_global io[] = { G_INPUT, G_RESIDUAL, G_OUTPUT };
	uint64_t io_size[] = { td, td, td };

	set_window(plan, WIN_PARAMS, PLAN_PARAMS_BASE,
		   pack_globals(plan, PLAN_PARAMS_BASE, params, params_size, 2));
	set_window(plan, WIN_IO, PLAN_IO_BASE,
		   pack_globals(plan, PLAN_IO_BASE, io, io_size, 3));
	set_window(plan, WIN_WORKSPACE, PLAN_WORKSPACE_BASE,
		   PLAN_WORKSPACE_BASE + workspace);
	plan->workspace_bytes = workspace;
}

/* Each phase names the values its launches touch: fresh where it writes
 * them first, carried where an earlier phase left them. */
static int write_phases(struct plan *plan, const struct builder *b)
{
	plan->planes = calloc((size_t)PH_COUNT * V_COUNT, sizeof(*plan->planes));
	if (!plan->planes)
		return -1;
	uint32_t n = 0;
	for (int p = 0; p < PH_COUNT; p++) {
		plan->phases[p].identity = text_bytes(phase_names[p]);
		plan->phases[p].plane_first = n;
		for (int v = 0; v < V_COUNT; v++) {
			if (!(b->touched[v] & (1u << p)))
				continue;
			int carried = p != lowest_bit(b->touched[v]);
			plan->planes[n++] = tensor(value_names[v],
					PLAN_WORKSPACE_BASE + b->offset[v],
					b->bytes[v], carried);
		}
		plan->phases[p].plane_count = n - plan->phases[p].plane_first;
	}
	plan->model.n_planes = n;
	return 0;
}

static size_t put_varint(uint8_t *out, uint64_t v)
{
	size_t n = 0;
	do {
		out[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			out[n] |= 0x80;
		n++;
	} while (v);
	return n;
}

static size_t put_string_field(uint8_t *out, unsigned field, const char *s)
{
	size_t len = strlen(s);
	size_t n = put_varint(out, (uint64_t)field << 3 | 2);
	n += put_varint(out + n, len);
	memcpy(out + n, s, len);
	return n + len;
}

/* A launch's source identity, protobuf wire format: field 1 the op's
 * name (for people reading dumps), field 51 its phase identity. */
static struct ac_bytes write_identity(uint8_t *out, const struct step *s)
{
	size_t n = put_string_field(out, 1, s->name);
	n += put_string_field(out + n, 51, phase_names[s->phase]);
	return (struct ac_bytes){ out, (uint32_t)n };
}

static uint64_t resolve(const struct plan *plan, const struct builder *b,
			struct word w)
{
	switch (w.kind) {
	case W_GLOBAL:
		return plan->globals[w.id].offset + w.v;
	case W_VALUE:
		return PLAN_WORKSPACE_BASE + b->offset[w.id] + w.v;
	default:
		return w.v;
	}
}

static int in_body(enum plan_phase p)
{
	return p >= PH_NORM && p <= PH_MLP_DOWN;
}

static int alloc_launches(struct plan *plan, unsigned n)
{
	plan->launches = calloc(n, sizeof(*plan->launches));
	plan->words = calloc((size_t)n * MAX_WORDS, sizeof(*plan->words));
	plan->deltas = calloc((size_t)n * MAX_WORDS, sizeof(*plan->deltas));
	plan->identities = calloc(n, MAX_IDENTITY);
	return plan->launches && plan->words && plan->deltas &&
	       plan->identities ? 0 : -1;
}

/* Launches with resolved words; every weight word of the body gets a
 * delta of one layer stride, which the Repeat applies per iteration. */
static int write_launches(struct plan *plan, const struct builder *b)
{
	int64_t stride = (int64_t)(b->layer.stride * sizeof(float));
	uint64_t n_words = 0;
	uint32_t n_deltas = 0, body_first = 0, body_count = 0;

	if (alloc_launches(plan, b->n_steps) != 0)
		return -1;
	for (unsigned i = 0; i < b->n_steps; i++) {
		const struct step *s = &b->steps[i];
		struct ac_launch *l = &plan->launches[i];
		l->identity = write_identity(plan->identities +
					     (size_t)i * MAX_IDENTITY, s);
		l->word_first = n_words;
		l->word_count = s->n;
		for (unsigned w = 0; w < s->n; w++) {
			plan->words[n_words++] = resolve(plan, b, s->w[w]);
			if (in_body(s->phase) && s->w[w].kind == W_GLOBAL &&
			    s->w[w].id == G_WEIGHTS)
				plan->deltas[n_deltas++] =
					(struct ac_delta){ i, w, stride };
		}
		if (in_body(s->phase) && body_count++ == 0)
			body_first = i;
	}

	plan->repeat = (struct ac_repeat){
		.first = body_first, .count = body_count,
		.iterations = (uint64_t)b->shape.layers,
		.delta_first = 0, .delta_count = n_deltas,
	};
	plan->model.n_launches = b->n_steps;
	plan->model.n_words = n_words;
	plan->model.n_deltas = n_deltas;
	return 0;
}

static void link_model(struct plan *plan)
{
	struct ac_model *m = &plan->model;
	m->alignment = PLAN_ALIGNMENT;
	m->n_windows = WIN_COUNT;
	m->windows = plan->windows;
	m->n_globals = G_COUNT;
	m->globals = plan->globals;
	m->n_phases = PH_COUNT;
	m->phases = plan->phases;
	m->planes = plan->planes;
	m->launches = plan->launches;
	m->words = plan->words;
	m->n_repeats = 1;
	m->repeats = &plan->repeat;
	m->deltas = plan->deltas;
	plan->ref = (struct ac_ref){ 0, m->n_launches };
	m->n_refs = 1;
	m->refs = &plan->ref;
}

int plan_build(struct plan *plan, const struct model_shape *shape,
	       enum plan_kind kind)
{
	struct builder b = { .shape = *shape, .layer = model_layout(shape) };
	memset(plan, 0, sizeof(*plan));
	plan->kind = kind;

	value_sizes(&b);
	emit_embed(&b);
	emit_norm_and_qkv(&b);
	emit_attention(&b);
	emit_mlp(&b);
	emit_final(&b);
	int rc = b.failed ? -1 : 0;
	if (rc == 0) {
		lay_out_memory(plan, &b, place_values(&b, kind));
		if (write_phases(plan, &b) != 0 || write_launches(plan, &b) != 0)
			rc = -1;
	}
	free(b.steps);
	if (rc != 0) {
		plan_free(plan);
		return -1;
	}
	link_model(plan);
	return 0;
}

void plan_free(struct plan *plan)
{
	free(plan->planes);
	free(plan->launches);
	free(plan->words);
	free(plan->deltas);
	free(plan->identities);
	memset(plan, 0, sizeof(*plan));
}

uint8_t *plan_device_image(const struct plan *plan, size_t *len,
			   struct ac_error *err)
{
	struct ac_model m = plan->model;
	m.n_refs = 0;
	m.refs = NULL;
	return ac_model_write_image(&m, len, err);
}

const struct ac_ref *plan_schedule(const struct plan *plan, size_t *count)
{
	*count = (size_t)plan->model.n_refs;
	return plan->model.refs;
}

uint64_t plan_certify(const struct plan *plan, struct ac_diag *diag,
		      char *text, size_t len)
{
	struct ac_error err;
	struct ac_diag local;
	uint64_t verdict = AC_NONE;
	ac_schedule *schedule = NULL;
	ac_program *program = ac_program_new(&plan->model, &err);

	if (!diag)
		diag = &local;
	if (program)
		schedule = ac_schedule_new(program);
	if (!program) {
		ac_error_text(&err, text, len);
	} else if (!schedule) {
		snprintf(text, len, "out of memory");
	} else if (ac_schedule_append(schedule, plan->model.refs,
				      plan->model.n_refs, &err) != 0) {
		ac_error_text(&err, text, len);
	} else {
		verdict = ac_schedule_verdict(schedule, diag);
		ac_diag_render(diag, program, text, len);
	}
	ac_schedule_free(schedule);
	ac_program_free(program);
	return verdict;
}
