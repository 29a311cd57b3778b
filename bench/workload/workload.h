/* SPDX-License-Identifier: MIT */
/*
 * workload.h - programs shaped like real ones, at any size, for the
 * benchmarks (bench-certify), the tests (suite_workloads), arena-workload
 * and fuzz corpora.
 *
 * Three workloads, each sized by a target number of launch parameter
 * words (from about 1e3 to about 1e8):
 *
 *   vit      SigLIP-So400m-like vision transformer inference: 27 layers,
 *            width 1152, 16 heads, MLP 4304, patch embedding and head, over
 *            a batch of 384x384 images (729 tokens each).  Parameters and
 *            the residual stream are globals, one workspace is reused
 *            across phases.  Unrolled (each layer its own phases), or with
 *            `repeat` the layers as one Repeat whose deltas move the weight
 *            pointers one layer on per iteration.
 *   decode   LLM decode, Llama-70B-like (width 8192, 64 heads, 8 KV
 *            heads, MLP 28672, up to 80 layers): one decode step per
 *            token in the launch table (the KV cache rows and the
 *            attention length move with the token), the KV cache as
 *            globals, and a schedule of one reference per token.
 *   adjoint  a checkpointed adjoint (shared/seeds/004_*): a tape of N
 *            nodes cut into about sqrt(N) segments, run forward piece by
 *            piece and then backwards segment by segment, recomputing
 *            each piece; boundary carry sets are carried planes of a
 *            checkpoint buffer, global carries are globals, segment locals
 *            are fresh planes of one shared workspace.
 *
 * Size scales layers first (vit unrolled up to 27, decode up to 80), then
 * the batch (vit), the tokens (decode) or the tape length (adjoint).
 *
 * Each workload comes sound (certified) or with one fault, whose verdict
 * the generator knows by construction (it never asks libarenacert):
 *
 *   reuse    one plane reused too early: a phase declares a fresh plane
 *            over a value a later phase still carries; fails (D)
 *   stride   one pointer word off by one stride, past the end of its
 *            tensor into bytes its phase does not name; fails (C)
 *
 * Launch words are kernel parameter lists in the numbering of
 * arenaguard/uapi.h: word 0 the kernel, then device addresses and counts.
 * Generation is deterministic (the same spec gives the same program, byte
 * for byte), takes about a second per 1e7 words, and holds little beyond
 * the model itself (launches share their identity bytes).
 */
#ifndef ARENAGUARD_BENCH_WORKLOAD_H
#define ARENAGUARD_BENCH_WORKLOAD_H

#include <stdint.h>

#include <arenaguard/certify.h>
#include <arenaguard/program.h>

enum workload_kind { WORKLOAD_VIT, WORKLOAD_DECODE, WORKLOAD_ADJOINT };
#define WORKLOAD_KINDS 3

enum workload_fault { WORKLOAD_SOUND, WORKLOAD_REUSE, WORKLOAD_STRIDE };
#define WORKLOAD_FAULTS 3

struct workload_spec {
	enum workload_kind kind;
	enum workload_fault fault;
	uint64_t words;         /* target parameter words, >= 1 */
	int repeat;             /* vit only: the layers as one Repeat */
};

struct workload {
	struct ac_model model;  /* the program, its schedule included */
	uint64_t verdict;       /* the verdict the program must get */
	enum ac_condition condition;  /* AC_CERTIFIED, AC_COND_C or AC_COND_D */
	uint64_t launch;        /* (C): the faulty launch, else AC_NONE */
	uint64_t instance;      /* (D): the breaking instance, else AC_NONE */
	char shape[128];        /* what was built, e.g. "27 layers, 4 images" */
	struct wb *owner;       /* private: what `model` points into */
};

/*
 * Builds a workload; free it with workload_free().  Returns NULL and sets
 * *why (a static message) when the spec asks for something that does not
 * exist (repeat with decode or adjoint, words 0, an unknown kind or
 * fault).  Aborts when memory runs out.  The model's word count is within
 * 10 per cent of spec->words from 1e4 words on; below that the smallest
 * program of the kind (a few hundred words) sets the floor.
 */
struct workload *workload_new(const struct workload_spec *spec,
			      const char **why);
void workload_free(struct workload *w);

/* "vit", "decode", "adjoint"; "sound", "reuse", "stride". */
const char *workload_kind_name(enum workload_kind kind);
const char *workload_fault_name(enum workload_fault fault);

/* The kind or fault of a name above, or -1. */
int workload_kind_parse(const char *name);
int workload_fault_parse(const char *name);

#endif
