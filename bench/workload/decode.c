/* SPDX-License-Identifier: MIT */
/*
 * decode: Llama-70B-like token-by-token decoding.
 *
 * The launch table holds one decode step per token (a captured step per
 * position: the KV cache row a step writes and the length its attention
 * reads move with the token), and the schedule is one reference per
 * token, as a server appends one batch per token.  Windows: params (every
 * layer's weights, the final norm, the LM head), io (the token's
 * embedding, the residual stream, the logits), kv (each layer's K and V
 * cache, globals) and the workspace.  A layer runs these phases, shared
 * by every token (D = width floats, F = MLP floats):
 *
 *   ln1       xn = norm(x)                       fresh xn @0
 *   qkv       q = xn . Wq; cache rows of k, v    carried xn; fresh q @D
 *   scores    per KV group: s = q . K^T, softmax carried q; fresh s @2D
 *   context   per KV group: o = s . V            carried s; fresh o @0
 *   proj      x += o . Wo                        carried o; fresh t @D
 *   ln2       xn = norm(x)                       fresh xn @0
 *   mlp       g = gelu(xn . Wg) * (xn . Wu)      carried xn; fresh g @D,
 *                                                u @D+F
 *   down      x += g . Wd                        carried g; fresh t2 @0
 *
 * The 8 KV groups alternate scores and context, so q outlives context
 * instances that do not name it.  The reuse fault puts the middle layer's
 * o over q (the planner freed q after the first group's scores): the
 * second scores instance of token 0 fails (D).  The stride fault writes
 * the middle token's K row of the last layer one layer stride on, past
 * the last cache: (C).
 */
#include <stdio.h>
#include <string.h>

#include "builder.h"
#include "generators.h"

#define MAX_LAYERS 80
#define WIDTH 8192
#define HEADS 64
#define KV_HEADS 8
#define HEAD_DIM (WIDTH / HEADS)
#define KV_WIDTH (KV_HEADS * HEAD_DIM)
#define GROUP (HEADS / KV_HEADS)        /* query heads per KV head */
#define MLP 28672
#define VOCAB 32000
#define PROMPT 512                      /* tokens already in the cache */

/* Words one layer of one step adds, and the rest of a step. */
#define LAYER_WORDS 265
#define EDGE_WORDS 19

enum { PH_LN1, PH_QKV, PH_SCORES, PH_CONTEXT, PH_PROJ, PH_LN2, PH_MLP,
       PH_DOWN, PH_COUNT };
static const char *const phase_names[PH_COUNT] = {
	"ln1", "qkv", "scores", "context", "proj", "ln2", "mlp", "down",
};

struct layer_params {
	uint64_t ln1_g, ln1_b, wq, wk, wv, wo, ln2_g, ln2_b, gate, up, down;
};

/* The workspace values, and the planes each phase declares of them. */
enum { V_XN, V_Q, V_S, V_O, V_T, V_G, V_U, V_T2, V_COUNT };
static const char *const value_names[V_COUNT] = {
	"xn", "q", "s", "o", "t", "g", "u", "t2",
};

static const struct wb_plane_row plane_rows[] = {
	{ PH_LN1, V_XN, 0 },
	{ PH_QKV, V_XN, 1 }, { PH_QKV, V_Q, 0 },
	{ PH_SCORES, V_Q, 1 }, { PH_SCORES, V_S, 0 },
	{ PH_CONTEXT, V_S, 1 }, { PH_CONTEXT, V_O, 0 },
	{ PH_PROJ, V_O, 1 }, { PH_PROJ, V_T, 0 },
	{ PH_LN2, V_XN, 0 },
	{ PH_MLP, V_XN, 1 }, { PH_MLP, V_G, 0 }, { PH_MLP, V_U, 0 },
	{ PH_DOWN, V_G, 1 }, { PH_DOWN, V_T2, 0 },
};

/* A layer's phases and launch identities, and where its values lie. */
struct layer {
	uint32_t phase[PH_COUNT];
	struct ac_bytes ln1, q, k, v, scores, softmax, context, proj, add1,
		ln2, gate, up, gelu, mul, down, add2;
	uint64_t ws[V_COUNT];           /* where each value lies */
	struct layer_params p;          /* absolute */
	uint64_t k_cache, v_cache;
};

struct decode {
	struct wb *b;
	struct workload *w;
	enum workload_fault fault;
	uint32_t layers, tokens;
	uint64_t context;               /* cache rows: prompt + tokens */
	uint64_t cache_stride;          /* from one layer's K to the next */
	struct layer *layer;
	uint32_t embed_phase, norm_phase, head_phase;
	struct ac_bytes embed_id, norm_id, head_id;
	uint64_t final_g, final_b, lm_head;
	uint64_t token, residual, logits;
	uint64_t size[V_COUNT];
	uint64_t xn;                    /* the final norm's output */
};

static uint64_t fl(uint64_t n)
{
	return n * WB_F32;
}

/* Layers first (a quarter of the words per step at least), then tokens. */
static void size_run(struct decode *d, uint64_t words)
{
	uint64_t quarter = words / 4;
	uint64_t l = quarter > EDGE_WORDS ?
		(quarter - EDGE_WORDS + LAYER_WORDS / 2) / LAYER_WORDS : 0;
	d->layers = l < 1 ? 1 : l > MAX_LAYERS ? MAX_LAYERS : (uint32_t)l;
	uint64_t step = EDGE_WORDS + (uint64_t)LAYER_WORDS * d->layers;
	uint64_t t = (words + step / 2) / step;
	d->tokens = t < 1 ? 1 : (uint32_t)t;
	d->context = PROMPT + d->tokens;
}

static void place_params(struct decode *d)
{
	struct wb *b = d->b;
	uint64_t base = WB_WINDOW_BASE(0), at = base;
	d->final_g = wb_global(b, &at, fl(WIDTH), "final.g");
	d->final_b = wb_global(b, &at, fl(WIDTH), "final.b");
	d->lm_head = wb_global(b, &at, fl((uint64_t)WIDTH * VOCAB), "lm_head");
	for (uint32_t l = 0; l < d->layers; l++) {
		uint64_t dd = (uint64_t)WIDTH * WIDTH;
		uint64_t dk = (uint64_t)WIDTH * KV_WIDTH;
		uint64_t df = (uint64_t)WIDTH * MLP;
		d->layer[l].p = (struct layer_params){
			wb_global(b, &at, fl(WIDTH), "l%u.ln1.g", l),
			wb_global(b, &at, fl(WIDTH), "l%u.ln1.b", l),
			wb_global(b, &at, fl(dd), "l%u.wq", l),
			wb_global(b, &at, fl(dk), "l%u.wk", l),
			wb_global(b, &at, fl(dk), "l%u.wv", l),
			wb_global(b, &at, fl(dd), "l%u.wo", l),
			wb_global(b, &at, fl(WIDTH), "l%u.ln2.g", l),
			wb_global(b, &at, fl(WIDTH), "l%u.ln2.b", l),
			wb_global(b, &at, fl(df), "l%u.gate", l),
			wb_global(b, &at, fl(df), "l%u.up", l),
			wb_global(b, &at, fl(df), "l%u.down", l),
		};
	}
	wb_window_at(b, "params", 0, at - base);
}

static void place_io(struct decode *d)
{
	uint64_t base = WB_WINDOW_BASE(1), at = base;
	d->token = wb_global(d->b, &at, fl(WIDTH), "token");
	d->residual = wb_global(d->b, &at, fl(WIDTH), "residual");
	d->logits = wb_global(d->b, &at, fl(VOCAB), "logits");
	wb_window_at(d->b, "io", 1, at - base);
}

/* The KV cache: per layer K then V, context rows of KV_WIDTH floats. */
static void place_cache(struct decode *d)
{
	uint64_t base = WB_WINDOW_BASE(2), at = base;
	uint64_t rows = fl(d->context * KV_WIDTH);
	for (uint32_t l = 0; l < d->layers; l++) {
		d->layer[l].k_cache = wb_global(d->b, &at, rows, "l%u.k", l);
		d->layer[l].v_cache = wb_global(d->b, &at, rows, "l%u.v", l);
	}
	d->cache_stride = 2 * rows;
	wb_window_at(d->b, "kv", 2, at - base);
}

static uint64_t place_workspace(struct decode *d)
{
	uint64_t base = WB_WINDOW_BASE(3), x = fl(WIDTH), f = fl(MLP);
	uint64_t s = fl((uint64_t)HEADS * d->context);
	const uint64_t at[V_COUNT] = {
		[V_XN] = base, [V_Q] = base + x, [V_S] = base + 2 * x,
		[V_O] = base, [V_T] = base + x, [V_G] = base + x,
		[V_U] = base + x + f, [V_T2] = base,
	};
	const uint64_t size[V_COUNT] = {
		[V_XN] = x, [V_Q] = x, [V_S] = s, [V_O] = x, [V_T] = x,
		[V_G] = f, [V_U] = f, [V_T2] = x,
	};
	memcpy(d->size, size, sizeof(size));
	for (uint32_t l = 0; l < d->layers; l++)
		memcpy(d->layer[l].ws, at, sizeof(at));
	uint64_t attention = 2 * x + s, mlp = x + 2 * f;
	wb_window_at(d->b, "workspace", 3, attention > mlp ? attention : mlp);
	return base;
}

static void layer_phases(struct decode *d, uint32_t l)
{
	struct wb *b = d->b;
	struct layer *ly = &d->layer[l];
	for (int ph = 0; ph < PH_COUNT; ph++) {
		ly->phase[ph] = wb_phase(b, "l%u.%s", l, phase_names[ph]);
		wb_planes(b, (uint8_t)ph, plane_rows,
			  sizeof(plane_rows) / sizeof(plane_rows[0]),
			  value_names, ly->ws, d->size);
	}
	uint32_t *p = ly->phase;
	ly->ln1 = wb_identity(b, p[PH_LN1], "norm");
	ly->q = wb_identity(b, p[PH_QKV], "q.mm");
	ly->k = wb_identity(b, p[PH_QKV], "k.mm");
	ly->v = wb_identity(b, p[PH_QKV], "v.mm");
	ly->scores = wb_identity(b, p[PH_SCORES], "qk.mm");
	ly->softmax = wb_identity(b, p[PH_SCORES], "softmax");
	ly->context = wb_identity(b, p[PH_CONTEXT], "pv.mm");
	ly->proj = wb_identity(b, p[PH_PROJ], "o.mm");
	ly->add1 = wb_identity(b, p[PH_PROJ], "residual.add");
	ly->ln2 = wb_identity(b, p[PH_LN2], "norm");
	ly->gate = wb_identity(b, p[PH_MLP], "gate.mm");
	ly->up = wb_identity(b, p[PH_MLP], "up.mm");
	ly->gelu = wb_identity(b, p[PH_MLP], "gelu");
	ly->mul = wb_identity(b, p[PH_MLP], "gate.mul");
	ly->down = wb_identity(b, p[PH_DOWN], "down.mm");
	ly->add2 = wb_identity(b, p[PH_DOWN], "residual.add");
}

static void plan(struct decode *d)
{
	struct wb *b = d->b;
	place_params(d);
	place_io(d);
	place_cache(d);
	uint64_t ws = d->xn = place_workspace(d);
	if (d->fault == WORKLOAD_REUSE) {
		/* The planner freed q after the first group's scores. */
		uint64_t *faulty = d->layer[d->layers / 2].ws;
		faulty[V_O] = faulty[V_Q];
		faulty[V_T] = ws;
	}
	d->embed_phase = wb_phase(b, "embed");
	d->embed_id = wb_identity(b, d->embed_phase, "token.copy");
	for (uint32_t l = 0; l < d->layers; l++)
		layer_phases(d, l);
	d->norm_phase = wb_phase(b, "final.ln");
	wb_plane(b, "xn", ws, fl(WIDTH), 0);
	d->head_phase = wb_phase(b, "lm_head");
	wb_plane(b, "xn", ws, fl(WIDTH), 1);
	d->norm_id = wb_identity(b, d->norm_phase, "norm");
	d->head_id = wb_identity(b, d->head_phase, "lm_head.mm");
}

/* q, and the cache rows of k and v at position pos. */
static void emit_qkv(struct decode *d, const struct layer *ly, uint64_t pos,
		     int stride_fault)
{
	struct wb *b = d->b;
	uint32_t ph = ly->phase[PH_QKV];
	uint64_t row = fl(pos * KV_WIDTH);
	/* The stride fault: the K row one layer stride on. */
	uint64_t k_row = ly->k_cache + row +
			 (stride_fault ? d->cache_stride : 0);
	const uint64_t *ws = ly->ws;
	WB_LAUNCH(b, ly->q, ph, ARENA_K_MATMUL, ws[V_Q], ws[V_XN], ly->p.wq, 1,
		  WIDTH, WIDTH, 0);
	uint64_t l = WB_LAUNCH(b, ly->k, ph, ARENA_K_MATMUL, k_row, ws[V_XN],
			       ly->p.wk, 1, WIDTH, KV_WIDTH, 0);
	if (stride_fault)
		generator_breaks_c(d->w, l);
	WB_LAUNCH(b, ly->v, ph, ARENA_K_MATMUL, ly->v_cache + row, ws[V_XN],
		  ly->p.wv, 1, WIDTH, KV_WIDTH, 0);
}

/* Group by group: scores over the cache so far, then their context. */
static void emit_attention(struct decode *d, const struct layer *ly,
			   uint64_t length, int reuse_fault)
{
	struct wb *b = d->b;
	uint64_t s_group = fl(GROUP * d->context);
	uint64_t q_group = fl(GROUP * HEAD_DIM), kv_head = fl(HEAD_DIM);
	uint64_t scale = wb_f32(0.08838835f);   /* 1 / sqrt(128) */
	for (uint32_t g = 0; g < KV_HEADS; g++) {
		uint64_t s = ly->ws[V_S] + g * s_group;
		WB_LAUNCH(b, ly->scores, ly->phase[PH_SCORES], ARENA_K_MATMUL,
			  s, ly->ws[V_Q] + g * q_group,
			  ly->k_cache + g * kv_head, GROUP, HEAD_DIM, length, 1);
		/* The second scores instance is the first to carry q
		 * after the faulty context declared o over it. */
		if (g == 1 && reuse_fault)
			generator_breaks_d(d->w, wb_instance(b));
		WB_LAUNCH(b, ly->softmax, ly->phase[PH_SCORES],
			  ARENA_K_SOFTMAX, s, s, GROUP, length, scale);
		WB_LAUNCH(b, ly->context, ly->phase[PH_CONTEXT],
			  ARENA_K_MATMUL, ly->ws[V_O] + g * q_group, s,
			  ly->v_cache + g * kv_head, GROUP, length, HEAD_DIM,
			  0);
	}
}

static void emit_residual(struct decode *d, uint32_t ph, struct ac_bytes mm,
			  struct ac_bytes add, uint64_t tmp, uint64_t src,
			  uint64_t src_width, uint64_t w)
{
	WB_LAUNCH(d->b, mm, ph, ARENA_K_MATMUL, tmp, src, w, 1, src_width,
		  WIDTH, 0);
	WB_LAUNCH(d->b, add, ph, ARENA_K_ADD, d->residual, d->residual, tmp,
		  WIDTH);
}

static void emit_mlp(struct decode *d, const struct layer *ly)
{
	struct wb *b = d->b;
	uint32_t ph = ly->phase[PH_MLP];
	const uint64_t *ws = ly->ws;
	WB_LAUNCH(b, ly->gate, ph, ARENA_K_MATMUL, ws[V_G], ws[V_XN],
		  ly->p.gate, 1, WIDTH, MLP, 0);
	WB_LAUNCH(b, ly->up, ph, ARENA_K_MATMUL, ws[V_U], ws[V_XN], ly->p.up, 1,
		  WIDTH, MLP, 0);
	WB_LAUNCH(b, ly->gelu, ph, ARENA_K_GELU, ws[V_G], ws[V_G], MLP);
	WB_LAUNCH(b, ly->mul, ph, ARENA_K_MUL, ws[V_G], ws[V_G], ws[V_U], MLP);
}

static void emit_norm(struct decode *d, struct ac_bytes id, uint32_t ph,
		      uint64_t xn, uint64_t gamma, uint64_t beta)
{
	WB_LAUNCH(d->b, id, ph, ARENA_K_LAYERNORM, xn, d->residual, gamma,
		  beta, 1, WIDTH);
}

static void emit_layer(struct decode *d, uint32_t l, uint32_t token)
{
	const struct layer *ly = &d->layer[l];
	uint64_t pos = PROMPT + token;
	int middle = l == d->layers / 2;
	emit_norm(d, ly->ln1, ly->phase[PH_LN1], ly->ws[V_XN], ly->p.ln1_g,
		  ly->p.ln1_b);
	emit_qkv(d, ly, pos, d->fault == WORKLOAD_STRIDE &&
			     l + 1 == d->layers && token == d->tokens / 2);
	emit_attention(d, ly, pos + 1, d->fault == WORKLOAD_REUSE &&
				       middle && token == 0);
	emit_residual(d, ly->phase[PH_PROJ], ly->proj, ly->add1, ly->ws[V_T],
		      ly->ws[V_O], WIDTH, ly->p.wo);
	emit_norm(d, ly->ln2, ly->phase[PH_LN2], ly->ws[V_XN], ly->p.ln2_g,
		  ly->p.ln2_b);
	emit_mlp(d, ly);
	emit_residual(d, ly->phase[PH_DOWN], ly->down, ly->add2, ly->ws[V_T2],
		      ly->ws[V_G], MLP, ly->p.down);
}

/* One token's step, and its reference in the schedule. */
static void emit_step(struct decode *d, uint32_t token)
{
	struct wb *b = d->b;
	uint64_t first = wb_launch_count(b);
	WB_LAUNCH(b, d->embed_id, d->embed_phase, ARENA_K_COPY, d->residual,
		  d->token, WIDTH);
	for (uint32_t l = 0; l < d->layers; l++)
		emit_layer(d, l, token);
	emit_norm(d, d->norm_id, d->norm_phase, d->xn, d->final_g, d->final_b);
	WB_LAUNCH(b, d->head_id, d->head_phase, ARENA_K_MATMUL, d->logits,
		  d->xn, d->lm_head, 1, WIDTH, VOCAB, 0);
	wb_ref(b, first, wb_launch_count(b) - first);
}

void generate_decode(struct wb *b, const struct workload_spec *spec,
		     struct workload *w)
{
	struct decode d = { .b = b, .w = w, .fault = spec->fault };
	size_run(&d, spec->words);
	struct layer layers[MAX_LAYERS];
	d.layer = layers;
	plan(&d);
	for (uint32_t t = 0; t < d.tokens; t++)
		emit_step(&d, t);
	snprintf(w->shape, sizeof(w->shape), "%u layers, %u token%s",
		 d.layers, d.tokens, d.tokens == 1 ? "" : "s");
}
