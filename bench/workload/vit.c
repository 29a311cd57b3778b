/* SPDX-License-Identifier: MIT */
/*
 * vit: SigLIP-So400m-like inference over a batch of images.
 *
 * Windows: params (patch embedding, head, then every layer's tensors one
 * layer stride apart), io (pixels, the residual stream, the embeddings)
 * and the workspace.  A layer runs these phases, planes over the whole
 * batch (X = tokens x width floats):
 *
 *   ln1       xn = layernorm(x)                  fresh xn @0
 *   qkv       q, k, v = xn . Wqkv (fused [3][D][D]) carried xn; fresh q @X,
 *                                                k @2X, v @3X
 *   scores    per image: s = q . k^T, p = softmax carried q, k; fresh
 *                                                s @4X, p @4X+S (S: one
 *                                                image's heads x T x T)
 *   context   per image: o = p . v               carried p, v; fresh o @0
 *   proj      x += o . Wo                        carried o; fresh t @X
 *   ln2       xn = layernorm(x)                  fresh xn @0
 *   fc1       h = gelu(xn . W1)                  carried xn; fresh h @X
 *   fc2       x += h . W2                        carried h; fresh t2 @0
 *
 * Attention runs image by image (scores, context, scores, ...) so that s
 * and p hold one image.  v is the value that outlives a phase that does
 * not name it (scores), which is where the reuse fault goes: the faulty
 * plan puts s over v, and the next context instance fails (D).  The
 * stride fault advances the last image's gelu pointer one image too far,
 * to the end of h, the top of fc1's workspace: (C).
 *
 * Unrolled, each layer has its own phases ("l13.scores") and the faults
 * sit in the middle layer; with a Repeat the body is one layer of shared
 * phases and deltas move every weight pointer one layer stride on.
 */
#include <stdio.h>
#include <string.h>

#include "builder.h"
#include "generators.h"

#define LAYERS 27
#define WIDTH 1152
#define HEADS 16
#define HEAD_DIM (WIDTH / HEADS)
#define MLP 4304
#define TOKENS 729              /* 384 x 384 pixels in 14 x 14 patches */
#define PATCH (14 * 14 * 3)

/* Words one image adds: a layer, and the embedding plus the head. */
#define LAYER_WORDS 428
#define EDGE_WORDS 28

enum { PH_LN1, PH_QKV, PH_SCORES, PH_CONTEXT, PH_PROJ, PH_LN2, PH_FC1,
       PH_FC2, PH_COUNT };
static const char *const phase_names[PH_COUNT] = {
	"ln1", "qkv", "scores", "context", "proj", "ln2", "fc1", "fc2",
};

/* Layer 0's parameters; layer l's lie l layer strides on. */
struct layer_params {
	uint64_t ln1_g, ln1_b, qkv, proj, ln2_g, ln2_b, fc1, fc2;
};

/* The workspace values, and the planes each phase declares of them. */
enum { V_XN, V_Q, V_K, V_V, V_S, V_P, V_O, V_T, V_H, V_T2, V_COUNT };
static const char *const value_names[V_COUNT] = {
	"xn", "q", "k", "v", "s", "p", "o", "t", "h", "t2",
};

static const struct wb_plane_row plane_rows[] = {
	{ PH_LN1, V_XN, 0 },
	{ PH_QKV, V_XN, 1 }, { PH_QKV, V_Q, 0 }, { PH_QKV, V_K, 0 },
	{ PH_QKV, V_V, 0 },
	{ PH_SCORES, V_Q, 1 }, { PH_SCORES, V_K, 1 }, { PH_SCORES, V_S, 0 },
	{ PH_SCORES, V_P, 0 },
	{ PH_CONTEXT, V_P, 1 }, { PH_CONTEXT, V_V, 1 }, { PH_CONTEXT, V_O, 0 },
	{ PH_PROJ, V_O, 1 }, { PH_PROJ, V_T, 0 },
	{ PH_LN2, V_XN, 0 },
	{ PH_FC1, V_XN, 1 }, { PH_FC1, V_H, 0 },
	{ PH_FC2, V_H, 1 }, { PH_FC2, V_T2, 0 },
};

/* The identities a layer's launches carry. */
struct layer_ids {
	uint32_t phase[PH_COUNT];
	struct ac_bytes ln1, q, k, v, scores, softmax, context, proj, add1,
		ln2, fc1, gelu, fc2, add2;
};

struct vit {
	struct wb *b;
	struct workload *w;
	enum workload_fault fault;
	uint32_t layers, images;
	int repeat;
	uint64_t size[V_COUNT];
	struct layer_params lp;
	uint64_t layer_stride;
	uint64_t patch, pos, post_g, post_b, probe;
	uint64_t pixels, residual, embedding;
	uint64_t ws[V_COUNT];           /* where each value lies */
	uint64_t ws_used;
};

static uint64_t fl(uint64_t n)
{
	return n * WB_F32;
}

/* Rows of image i in a [T][cols] tensor at base. */
static uint64_t rows(uint64_t base, uint32_t image, uint64_t cols)
{
	return base + fl((uint64_t)image * TOKENS * cols);
}

static void size_batch(struct vit *v, uint64_t words)
{
	uint64_t full = EDGE_WORDS + (uint64_t)LAYER_WORDS * LAYERS;
	v->layers = LAYERS;
	v->images = 1;
	if (v->repeat) {
		uint64_t per = EDGE_WORDS + LAYER_WORDS;
		uint64_t n = (words + per / 2) / per;
		v->images = n > 1 ? (uint32_t)n : 1;
	} else if (words < full) {
		uint64_t rest = words > EDGE_WORDS ? words - EDGE_WORDS : 0;
		uint64_t l = (rest + LAYER_WORDS / 2) / LAYER_WORDS;
		v->layers = l < 1 ? 1 : (uint32_t)l;
	} else {
		v->images = (uint32_t)((words + full / 2) / full);
	}
}

static void place_params(struct vit *v)
{
	struct wb *b = v->b;
	uint64_t base = WB_WINDOW_BASE(0), at = base;
	v->patch = wb_global(b, &at, fl(PATCH * WIDTH), "patch.w");
	v->pos = wb_global(b, &at, fl(TOKENS * WIDTH), "pos");
	v->post_g = wb_global(b, &at, fl(WIDTH), "post.g");
	v->post_b = wb_global(b, &at, fl(WIDTH), "post.b");
	v->probe = wb_global(b, &at, fl(TOKENS), "probe");
	/* Every layer has the same layout, one stride from the last. */
	uint64_t dd = (uint64_t)WIDTH * WIDTH, df = (uint64_t)WIDTH * MLP;
	for (uint32_t l = 0; l < LAYERS; l++) {
		uint64_t first = at;
		struct layer_params p = {
			wb_global(b, &at, fl(WIDTH), "l%u.ln1.g", l),
			wb_global(b, &at, fl(WIDTH), "l%u.ln1.b", l),
			wb_global(b, &at, fl(3 * dd), "l%u.qkv.w", l),
			wb_global(b, &at, fl(dd), "l%u.proj.w", l),
			wb_global(b, &at, fl(WIDTH), "l%u.ln2.g", l),
			wb_global(b, &at, fl(WIDTH), "l%u.ln2.b", l),
			wb_global(b, &at, fl(df), "l%u.fc1.w", l),
			wb_global(b, &at, fl(df), "l%u.fc2.w", l),
		};
		if (l == 0)
			v->lp = p;
		v->layer_stride = at - first;
	}
	wb_window_at(b, "params", 0, at - base);
}

static void place_io(struct vit *v)
{
	uint64_t base = WB_WINDOW_BASE(1), at = base;
	uint64_t n = v->images;
	v->pixels = wb_global(v->b, &at, fl(n * TOKENS * PATCH), "pixels");
	v->residual = wb_global(v->b, &at, fl(n * TOKENS * WIDTH), "residual");
	v->embedding = wb_global(v->b, &at, fl(n * WIDTH), "embedding");
	wb_window_at(v->b, "io", 1, at - base);
}

/* The layout of the header comment; sizes are multiples of 64. */
static void place_workspace(struct vit *v)
{
	uint64_t base = WB_WINDOW_BASE(2);
	uint64_t x = fl((uint64_t)v->images * TOKENS * WIDTH);
	uint64_t s = fl((uint64_t)HEADS * TOKENS * TOKENS);
	uint64_t h = fl((uint64_t)v->images * TOKENS * MLP);
	for (int i = 0; i < V_COUNT; i++)
		v->size[i] = x;
	v->size[V_S] = v->size[V_P] = s;
	v->size[V_H] = h;
	const uint64_t at[V_COUNT] = {
		[V_XN] = base, [V_Q] = base + x, [V_K] = base + 2 * x,
		[V_V] = base + 3 * x, [V_S] = base + 4 * x,
		[V_P] = base + 4 * x + s, [V_O] = base, [V_T] = base + x,
		[V_H] = base + x, [V_T2] = base,
	};
	memcpy(v->ws, at, sizeof(at));
	uint64_t attention = 4 * x + 2 * s, mlp = x + h;
	v->ws_used = attention > mlp ? attention : mlp;
	wb_window_at(v->b, "workspace", 2, v->ws_used);
}

/* The phases of one layer (all layers, with a Repeat) and their planes. */
static void layer_phases(struct vit *v, uint32_t layer, const uint64_t *ws,
			 struct layer_ids *ids)
{
	struct wb *b = v->b;
	for (int ph = 0; ph < PH_COUNT; ph++) {
		if (v->repeat)
			ids->phase[ph] = wb_phase(b, "%s", phase_names[ph]);
		else
			ids->phase[ph] = wb_phase(b, "l%u.%s", layer,
						  phase_names[ph]);
		wb_planes(b, (uint8_t)ph, plane_rows,
			  sizeof(plane_rows) / sizeof(plane_rows[0]),
			  value_names, ws, v->size);
	}
	uint32_t *p = ids->phase;
	ids->ln1 = wb_identity(b, p[PH_LN1], "ln");
	ids->q = wb_identity(b, p[PH_QKV], "q.mm");
	ids->k = wb_identity(b, p[PH_QKV], "k.mm");
	ids->v = wb_identity(b, p[PH_QKV], "v.mm");
	ids->scores = wb_identity(b, p[PH_SCORES], "qk.mm");
	ids->softmax = wb_identity(b, p[PH_SCORES], "softmax");
	ids->context = wb_identity(b, p[PH_CONTEXT], "pv.mm");
	ids->proj = wb_identity(b, p[PH_PROJ], "proj.mm");
	ids->add1 = wb_identity(b, p[PH_PROJ], "residual.add");
	ids->ln2 = wb_identity(b, p[PH_LN2], "ln");
	ids->fc1 = wb_identity(b, p[PH_FC1], "fc1.mm");
	ids->gelu = wb_identity(b, p[PH_FC1], "gelu");
	ids->fc2 = wb_identity(b, p[PH_FC2], "fc2.mm");
	ids->add2 = wb_identity(b, p[PH_FC2], "residual.add");
}

/* A launch word naming a weight: with a Repeat, a delta moves it one
 * layer on per iteration. */
static void weight_word(struct vit *v, uint64_t launch, uint32_t word)
{
	if (v->repeat)
		wb_delta(v->b, launch, word, (int64_t)v->layer_stride);
}

static void emit_layernorm(struct vit *v, struct ac_bytes id, uint32_t phase,
			   const uint64_t *ws, uint64_t gamma, uint64_t beta)
{
	for (uint32_t i = 0; i < v->images; i++) {
		uint64_t l = WB_LAUNCH(v->b, id, phase, ARENA_K_LAYERNORM,
				       rows(ws[V_XN], i, WIDTH),
				       rows(v->residual, i, WIDTH), gamma, beta,
				       TOKENS, WIDTH);
		weight_word(v, l, 3);
		weight_word(v, l, 4);
	}
}

static void emit_qkv(struct vit *v, const struct layer_ids *ids,
		     const uint64_t *ws, uint64_t wqkv)
{
	const struct ac_bytes id[3] = { ids->q, ids->k, ids->v };
	const uint64_t dst[3] = { ws[V_Q], ws[V_K], ws[V_V] };
	for (uint32_t i = 0; i < v->images; i++)
		for (int j = 0; j < 3; j++) {
			uint64_t l = WB_LAUNCH(v->b, id[j], ids->phase[PH_QKV],
				ARENA_K_MATMUL, rows(dst[j], i, WIDTH),
				rows(ws[V_XN], i, WIDTH),
				wqkv + fl((uint64_t)j * WIDTH * WIDTH),
				TOKENS, WIDTH, WIDTH, 0);
			weight_word(v, l, 3);
		}
}

/* Image i's attention: its scores instance, then its context instance. */
static void emit_attention(struct vit *v, const struct layer_ids *ids,
			   const uint64_t *ws, uint32_t i, int reuse_fault)
{
	struct wb *b = v->b;
	uint64_t tt = fl((uint64_t)TOKENS * TOKENS);
	uint64_t scale = wb_f32(0.11785113f);   /* 1 / sqrt(72) */
	for (uint32_t h = 0; h < HEADS; h++) {
		uint64_t head = fl((uint64_t)h * HEAD_DIM);
		WB_LAUNCH(b, ids->scores, ids->phase[PH_SCORES], ARENA_K_MATMUL,
			  ws[V_S] + h * tt, rows(ws[V_Q], i, WIDTH) + head,
			  rows(ws[V_K], i, WIDTH) + head, TOKENS, HEAD_DIM,
			  TOKENS, 1);
		WB_LAUNCH(b, ids->softmax, ids->phase[PH_SCORES],
			  ARENA_K_SOFTMAX, ws[V_P] + h * tt, ws[V_S] + h * tt,
			  TOKENS, TOKENS, scale);
	}
	for (uint32_t h = 0; h < HEADS; h++) {
		uint64_t head = fl((uint64_t)h * HEAD_DIM);
		WB_LAUNCH(b, ids->context, ids->phase[PH_CONTEXT],
			  ARENA_K_MATMUL, rows(ws[V_O], i, WIDTH) + head,
			  ws[V_P] + h * tt, rows(ws[V_V], i, WIDTH) + head,
			  TOKENS, TOKENS, HEAD_DIM, 0);
		/* The reuse fault's s lies over v: this instance is the
		 * first to carry v after scores declared s over it. */
		if (h == 0 && i == 0 && reuse_fault)
			generator_breaks_d(v->w, wb_instance(b));
	}
}

/* x += src . w over the batch: a matmul into tmp and a residual add. */
static void emit_residual(struct vit *v, uint32_t phase, struct ac_bytes mm,
			  struct ac_bytes add, uint64_t dst_tmp, uint64_t src,
			  uint64_t src_cols, uint64_t w)
{
	for (uint32_t i = 0; i < v->images; i++) {
		uint64_t l = WB_LAUNCH(v->b, mm, phase, ARENA_K_MATMUL,
				       rows(dst_tmp, i, WIDTH),
				       rows(src, i, src_cols), w, TOKENS,
				       src_cols, WIDTH, 0);
		weight_word(v, l, 3);
		WB_LAUNCH(v->b, add, phase, ARENA_K_ADD,
			  rows(v->residual, i, WIDTH),
			  rows(v->residual, i, WIDTH), rows(dst_tmp, i, WIDTH),
			  (uint64_t)TOKENS * WIDTH);
	}
}

static void emit_fc1(struct vit *v, const struct layer_ids *ids,
		     const uint64_t *ws, uint64_t w1, int stride_fault)
{
	uint32_t phase = ids->phase[PH_FC1];
	for (uint32_t i = 0; i < v->images; i++) {
		uint64_t h = rows(ws[V_H], i, MLP);
		uint64_t l = WB_LAUNCH(v->b, ids->fc1, phase, ARENA_K_MATMUL, h,
				       rows(ws[V_XN], i, WIDTH), w1, TOKENS,
				       WIDTH, MLP, 0);
		weight_word(v, l, 3);
		/* The stride fault: the last image's gelu one image on,
		 * at the end of h, where fc1 names nothing. */
		int faulty = stride_fault && i + 1 == v->images;
		uint64_t dst = faulty ? rows(ws[V_H], i + 1, MLP) : h;
		l = WB_LAUNCH(v->b, ids->gelu, phase, ARENA_K_GELU, dst, h,
			      (uint64_t)TOKENS * MLP);
		if (faulty)
			generator_breaks_c(v->w, l);
	}
}

static void emit_layer(struct vit *v, uint32_t layer, int faulty)
{
	int reuse = faulty && v->fault == WORKLOAD_REUSE;
	uint64_t ws[V_COUNT];
	memcpy(ws, v->ws, sizeof(ws));
	if (reuse)
		ws[V_S] = ws[V_V];    /* the planner freed v after qkv */
	struct layer_ids ids;
	layer_phases(v, layer, ws, &ids);
	uint64_t at = v->repeat ? 0 : layer * v->layer_stride;
	const struct layer_params *p = &v->lp;

	emit_layernorm(v, ids.ln1, ids.phase[PH_LN1], ws, at + p->ln1_g,
		       at + p->ln1_b);
	emit_qkv(v, &ids, ws, at + p->qkv);
	for (uint32_t i = 0; i < v->images; i++)
		emit_attention(v, &ids, ws, i, reuse);
	emit_residual(v, ids.phase[PH_PROJ], ids.proj, ids.add1, ws[V_T],
		      ws[V_O], WIDTH, at + p->proj);
	emit_layernorm(v, ids.ln2, ids.phase[PH_LN2], ws, at + p->ln2_g,
		       at + p->ln2_b);
	emit_fc1(v, &ids, ws, at + p->fc1,
		 faulty && v->fault == WORKLOAD_STRIDE);
	emit_residual(v, ids.phase[PH_FC2], ids.fc2, ids.add2, ws[V_T2],
		      ws[V_H], MLP, at + p->fc2);
}

static void emit_embed(struct vit *v)
{
	struct wb *b = v->b;
	uint32_t ph = wb_phase(b, "embed");
	struct ac_bytes mm = wb_identity(b, ph, "patch.mm");
	struct ac_bytes add = wb_identity(b, ph, "pos.add");
	for (uint32_t i = 0; i < v->images; i++) {
		uint64_t x = rows(v->residual, i, WIDTH);
		WB_LAUNCH(b, mm, ph, ARENA_K_MATMUL, x,
			  rows(v->pixels, i, PATCH), v->patch, TOKENS, PATCH,
			  WIDTH, 0);
		WB_LAUNCH(b, add, ph, ARENA_K_ADD, x, x, v->pos,
			  (uint64_t)TOKENS * WIDTH);
	}
}

/* Post-layernorm, then a probe pools each image's tokens. */
static void emit_head(struct vit *v)
{
	struct wb *b = v->b;
	uint32_t ln = wb_phase(b, "head.ln");
	wb_plane(b, "xn", v->ws[V_XN], v->size[V_XN], 0);
	uint32_t pool = wb_phase(b, "head.pool");
	wb_plane(b, "xn", v->ws[V_XN], v->size[V_XN], 1);
	struct ac_bytes ln_id = wb_identity(b, ln, "ln");
	struct ac_bytes pool_id = wb_identity(b, pool, "probe.mm");
	for (uint32_t i = 0; i < v->images; i++)
		WB_LAUNCH(b, ln_id, ln, ARENA_K_LAYERNORM,
			  rows(v->ws[V_XN], i, WIDTH),
			  rows(v->residual, i, WIDTH), v->post_g, v->post_b, TOKENS, WIDTH);
	for (uint32_t i = 0; i < v->images; i++)
		WB_LAUNCH(b, pool_id, pool, ARENA_K_MATMUL,
			  v->embedding + fl((uint64_t)i * WIDTH), v->probe,
			  rows(v->ws[V_XN], i, WIDTH), 1, TOKENS, WIDTH, 0);
}

void generate_vit(struct wb *b, const struct workload_spec *spec,
		  struct workload *w)
{
	struct vit v = { .b = b, .w = w, .fault = spec->fault,
			 .repeat = spec->repeat };
	size_batch(&v, spec->words);
	place_params(&v);
	place_io(&v);
	place_workspace(&v);
	emit_embed(&v);
	if (v.repeat) {
		wb_repeat_open(b, LAYERS);
		emit_layer(&v, 0, spec->fault != WORKLOAD_SOUND);
		wb_repeat_close(b);
	} else {
		for (uint32_t l = 0; l < v.layers; l++)
			emit_layer(&v, l, spec->fault != WORKLOAD_SOUND &&
					  l == v.layers / 2);
	}
	emit_head(&v);
	wb_ref(b, 0, wb_launch_count(b));
	snprintf(w->shape, sizeof(w->shape), "%u layers%s, %u image%s",
		 v.layers, v.repeat ? " (one Repeat)" : "", v.images,
		 v.images == 1 ? "" : "s");
}
