/* SPDX-License-Identifier: MIT */
/*
 * soundness-tests: the certificate is sound on the simulated device.
 *
 * The certificate trusts one thing, each phase's fresh/carried split;
 * given kernels that honour it, a certified program must compute exactly
 * what it would compute if no bytes were shared.  So for random programs
 * with honest kernels (honest.h), the device runs each program and its
 * relocation (relocate.h: every plane key in private memory), both
 * poisoned (ARENASIM_POISON: fresh planes are NaN at each instance's
 * start), and the test compares, bit for bit, NaN included:
 *
 *   - how the submission ended (DRM_IOCTL_ARENA_WAIT's errno);
 *   - every global's bytes;
 *   - the bytes of every plane key live at the end: declared by some
 *     instance, and no plane of another key declared over its bytes by a
 *     later one (spec 2 (D), for a last instance that carries every key).
 *
 * A certified program must show no difference, and its relocation must be
 * certified too.  Rejected programs run the same way; those that differ
 * are counted, a measure of how tight the certificate is, not a failure.
 *
 * Both runs get the same device memory: a buffer over the generator's
 * window, which each run fills with the same random f32 values, and one
 * over the private region, which each run zeroes.  The device reads
 * ARENASIM_POISON when a process first opens the node, so main() sets it
 * before any test runs: this is a program of its own, not a suite of
 * sim-tests, whose other suites run unpoisoned.
 *
 * Environment: AG_SOUND_SEED, AG_SOUND_COUNT (the stream and how many of
 * its programs), AG_SOUND_ONLY=i (program i alone), AG_SOUND_DUMP=DIR
 * (write every program checked, and its relocation, there as JSON).  A
 * failure names the seed and index, writes both programs as JSON (to
 * AG_SOUND_DUMP, else /tmp) and says how to run that program alone.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gen.h"
#include "../summary.h"
#include "../util.h"
#include "device.h"
#include "honest.h"
#include "relocate.h"

#define DEFAULT_SEED 0x50d2026ull
#define DEFAULT_COUNT 5000
#define PRIVATE_BASE (HONEST_BASE + UINT64_C(0x100000))
#define PRIVATE_SPAN UINT64_C(0x2000)       /* room for every relocation */

/* Device memory after a run. */
struct memory {
	int status;                       /* DRM_IOCTL_ARENA_WAIT's errno */
	uint8_t main[HONEST_SPAN];
	uint8_t priv[PRIVATE_SPAN];
};

/* What running a program and its relocation showed. */
struct outcome {
	uint64_t verdict, relocated_verdict;
	struct ac_diag diag;              /* why the program is rejected */
	int differs;
	int reuses;                       /* two keys shared bytes in the run */
	uint64_t advisories;              /* spec 6: how many, and the first */
	struct ac_advisory advisory;
	char what[256];                   /* the first difference */
};

/* ---- running ------------------------------------------------------------------- */

/* The same random f32 values in [-2, 2] for both runs of program i. */
static void fill_init(uint8_t *init, uint64_t seed, uint64_t i)
{
	struct gen_rng r;
	gen_rng_seed(&r, ~seed ^ (i * 0x9E3779B97F4A7C15ull));
	for (uint64_t k = 0; k < HONEST_SPAN; k += 4) {
		float v = (float)((int)gen_rng_below(&r, 4001) - 2000) / 1000.0f;
		memcpy(init + k, &v, sizeof(v));
	}
}

/* len bytes at a device address, from whichever buffer holds them. */
static const uint8_t *bytes_at(const struct memory *mem, uint64_t address,
			       uint64_t len)
{
	if (address >= HONEST_BASE && len <= HONEST_SPAN &&
	    address - HONEST_BASE <= HONEST_SPAN - len)
		return mem->main + (address - HONEST_BASE);
	if (address < PRIVATE_BASE || len > PRIVATE_SPAN ||
	    address - PRIVATE_BASE > PRIVATE_SPAN - len)
		ck_abort_msg("0x%" PRIx64 " + %" PRIu64 " lies in no buffer",
			     address, len);
	return mem->priv + (address - PRIVATE_BASE);
}

/* One context for every run of the process, with a buffer over the
 * window and one over the private region: creating them once a run would
 * cost more than the run. */
struct device {
	int fd;
	uint32_t main_bo, priv_bo;
};

static const struct device *device(void)
{
	static struct device d = { -1, 0, 0 };
	if (d.fd < 0) {
		d.fd = dev_open();
		d.main_bo = bo_new(d.fd, HONEST_BASE, HONEST_SPAN);
		d.priv_bo = bo_new(d.fd, PRIVATE_BASE, PRIVATE_SPAN);
	}
	return &d;
}

static void destroy(int fd, unsigned long request, uint32_t handle)
{
	struct drm_arena_handle h = { .handle = handle };
	ck_assert_int_eq(xioctl(fd, request, &h), 0);
}

/* Runs m's schedule, memory starting as `init` (the window) and zeros
 * (the private region). */
static void run(const struct ac_model *m, const uint8_t *init,
		struct memory *out)
{
	static const uint8_t zeros[PRIVATE_SPAN];
	struct ac_model bare = *m;
	bare.n_refs = 0;                  /* the device takes no schedule */
	size_t len;
	struct ac_error err;
	uint8_t *img = ac_model_write_image(&bare, &len, &err);
	ck_assert_msg(img, "image: %s: %s", err.where, err.message);
	struct drm_arena_ref *refs = calloc(m->n_refs + 1, sizeof(*refs));
	ck_assert_ptr_nonnull(refs);
	for (uint64_t i = 0; i < m->n_refs; i++)
		refs[i] = (struct drm_arena_ref){ m->refs[i].first, m->refs[i].count };

	const struct device *d = device();
	bo_put(d->fd, d->main_bo, 0, init, HONEST_SPAN);
	bo_put(d->fd, d->priv_bo, 0, zeros, PRIVATE_SPAN);
	uint32_t p = prog_from_image(d->fd, img, len);
	uint32_t s = sched_new(d->fd, p);
	ck_assert_int_eq(sched_append(d->fd, s, refs, (uint32_t)m->n_refs), 0);
	out->status = dev_wait(d->fd, sched_submit(d->fd, s));
	bo_get(d->fd, d->main_bo, 0, out->main, HONEST_SPAN);
	bo_get(d->fd, d->priv_bo, 0, out->priv, PRIVATE_SPAN);
	destroy(d->fd, DRM_IOCTL_ARENA_SCHEDULE_DESTROY, s);
	destroy(d->fd, DRM_IOCTL_ARENA_PROGRAM_DESTROY, p);
	free(refs);
	free(img);
}

/* ---- what to compare ------------------------------------------------------------ */

/* The phase of each instance of the executed sequence, in order. */
struct instances {
	uint64_t *phase;
	size_t n, cap;
};

static void push(struct instances *in, uint64_t phase)
{
	if (in->n && in->phase[in->n - 1] == phase)
		return;
	if (in->n == in->cap) {
		in->cap = in->cap ? 2 * in->cap : 64;
		in->phase = realloc(in->phase, in->cap * sizeof(*in->phase));
		ck_assert_ptr_nonnull(in->phase);
	}
	in->phase[in->n++] = phase;
}

static void instances_of(const struct ac_model *m, struct instances *in)
{
	struct ac_error err;
	ac_program *prog = ac_program_new(m, &err);
	ck_assert_ptr_nonnull(prog);
	for (uint64_t i = 0; i < m->n_refs; i++) {
		uint64_t l = m->refs[i].first, end = l + m->refs[i].count;
		while (l < end) {
			uint64_t r = ac_program_repeat_of(prog, l);
			uint64_t count = r == AC_NONE ? 1 : m->repeats[r].count;
			uint64_t iters = r == AC_NONE ? 1 : m->repeats[r].iterations;
			for (uint64_t t = 0; t < iters; t++)
				for (uint64_t k = l; k < l + count; k++)
					push(in, ac_program_launch_phase(prog, k));
			l += count;
		}
	}
	ac_program_free(prog);
}

/* Phase declares key (other 0), or a plane of another key over any of
 * its bytes (other 1). */
static int declares(const struct ac_model *m, uint64_t phase,
		    const struct ac_tensor *key, int other)
{
	if (phase == AC_NONE)
		return 0;
	const struct ac_phase *ph = &m->phases[phase];
	for (uint32_t j = 0; j < ph->plane_count; j++) {
		const struct ac_tensor *pl = &m->planes[ph->plane_first + j];
		int same = same_key(pl, key);
		if (!other && same)
			return 1;
		if (other && !same && pl->offset < key->offset + key->size &&
		    key->offset < pl->offset + pl->size)
			return 1;
	}
	return 0;
}

/* live[i]: plane i's key is live at the end of the schedule. */
static void live_planes(const struct ac_model *m, const struct instances *in,
			uint8_t *live)
{
	for (uint32_t i = 0; i < m->n_planes; i++) {
		const struct ac_tensor *key = &m->planes[i];
		size_t j = in->n;
		while (j > 0 && !declares(m, in->phase[j - 1], key, 0))
			j--;
		live[i] = j > 0;
		for (; j < in->n && live[i]; j++)
			live[i] = !declares(m, in->phase[j], key, 1);
	}
}

/* Some executed instance declared a plane over bytes of another key that
 * an instance declared: the run reused workspace. */
static int reuses(const struct ac_model *m, const struct instances *in)
{
	for (size_t j = 0; j < in->n; j++) {
		if (in->phase[j] == AC_NONE)
			continue;
		const struct ac_phase *ph = &m->phases[in->phase[j]];
		for (uint32_t i = 0; i < ph->plane_count; i++)
			for (size_t k = 0; k < in->n; k++)
				if (declares(m, in->phase[k],
					     &m->planes[ph->plane_first + i], 1))
					return 1;
	}
	return 0;
}

/* The first differing byte of tensor t (x from the program, y from the
 * relocation), with the f32 around it, in o->what. */
static int tensor_differs(struct outcome *o, const char *kind,
			  const struct ac_tensor *t, const uint8_t *x,
			  const uint8_t *y)
{
	for (uint64_t k = 0; k < t->size; k++) {
		if (x[k] == y[k])
			continue;
		uint64_t e = k / 4 * 4;
		uint32_t a = 0, b = 0;
		memcpy(&a, x + e, t->size - e < 4 ? t->size - e : 4);
		memcpy(&b, y + e, t->size - e < 4 ? t->size - e : 4);
		snprintf(o->what, sizeof(o->what),
			 "%s '%.*s' [0x%" PRIx64 ", +%" PRIu64 ") f32 %" PRIu64
			 ": 0x%08x, relocated 0x%08x", kind, (int)t->name.len,
			 (const char *)t->name.data, t->offset, t->size, e / 4,
			 a, b);
		return 1;
	}
	return 0;
}

static int differs(const struct ac_model *m, const struct relocation *rel,
		   const struct instances *in, const struct memory *a,
		   const struct memory *b, struct outcome *o)
{
	if (a->status != b->status) {
		snprintf(o->what, sizeof(o->what), "the submission ended "
			 "with errno %d, relocated %d", a->status, b->status);
		return 1;
	}
	for (uint32_t i = 0; i < m->n_globals; i++) {
		const struct ac_tensor *g = &m->globals[i];
		if (tensor_differs(o, "global", g, bytes_at(a, g->offset, g->size),
				   bytes_at(b, g->offset, g->size)))
			return 1;
	}
	uint8_t *live = calloc(m->n_planes + 1, 1);
	ck_assert_ptr_nonnull(live);
	live_planes(m, in, live);
	int found = 0;
	for (uint32_t i = 0; i < m->n_planes && !found; i++) {
		const struct ac_tensor *p = &m->planes[i];
		found = live[i] && tensor_differs(o, "live plane", p,
			bytes_at(a, p->offset, p->size),
			bytes_at(b, rel->planes[i].offset, p->size));
	}
	free(live);
	return found;
}

/* Certifies m and its relocation (left in *rel), runs both, compares. */
static void examine(const struct ac_model *m, const uint8_t *init,
		    struct relocation *rel, struct outcome *o, const char *who)
{
	char why[256];
	struct ac_error err;
	memset(o, 0, sizeof(*o));
	ck_assert_msg(relocate(m, PRIVATE_BASE, rel, why, sizeof(why)) == 0,
		      "%s: no relocation: %s", who, why);
	ck_assert_msg(ac_certify(m, &o->verdict, &o->diag, &err) == 0,
		      "%s: malformed: %s: %s", who, err.where, err.message);
	ck_assert_msg(rel->end <= PRIVATE_BASE + PRIVATE_SPAN,
		      "%s: the relocation needs [0x%" PRIx64 ", 0x%" PRIx64 ")",
		      who, PRIVATE_BASE, rel->end);
	o->relocated_verdict = util_verdict_model(&rel->model, &err);
	ac_program *p = ac_program_new(m, &err);
	struct ac_advisory *adv = NULL;
	ck_assert(p && ac_program_advisories(p, &adv, &o->advisories, &err) == 0);
	if (o->advisories)
		o->advisory = adv[0];
	free(adv);
	ac_program_free(p);
	struct memory *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	ck_assert(a && b);
	run(m, init, a);
	run(&rel->model, init, b);
	struct instances in = { 0 };
	instances_of(m, &in);
	o->differs = differs(m, rel, &in, a, b, o);
	o->reuses = reuses(m, &in);
	free(in.phase);
	free(a);
	free(b);
}

/* ---- generated programs --------------------------------------------------------- */

struct config {
	uint64_t seed, first, count;
	int only;
	const char *dump;                 /* AG_SOUND_DUMP, or NULL */
};

static uint64_t env_u64(const char *name, uint64_t fallback)
{
	const char *v = getenv(name);
	return v && *v ? strtoull(v, NULL, 0) : fallback;
}

static struct config get_config(void)
{
	struct config c = {
		.seed = env_u64("AG_SOUND_SEED", DEFAULT_SEED),
		.count = env_u64("AG_SOUND_COUNT", DEFAULT_COUNT),
		.only = getenv("AG_SOUND_ONLY") != NULL,
		.dump = getenv("AG_SOUND_DUMP"),
	};
	if (c.only) {
		c.first = env_u64("AG_SOUND_ONLY", 0);
		c.count = 1;
	}
	return c;
}

static void write_json(const char *path, const struct ac_model *m)
{
	size_t len;
	char *json = util_write_json_ok(m, &len);
	FILE *f = fopen(path, "w");
	ck_assert_msg(f != NULL, "cannot write %s", path);
	fwrite(json, 1, len, f);
	fclose(f);
	free(json);
}

/* Writes STEM.json and STEM-relocated.json, STEM being
 * DIR/soundness-SEED-I (left in `stem`). */
static void dump(const char *dir, uint64_t seed, uint64_t i,
		 const struct ac_model *m, const struct relocation *rel,
		 char *stem, size_t len)
{
	char path[300];
	snprintf(stem, len, "%s/soundness-%" PRIx64 "-%" PRIu64, dir, seed, i);
	snprintf(path, sizeof(path), "%s.json", stem);
	write_json(path, m);
	snprintf(path, sizeof(path), "%s-relocated.json", stem);
	write_json(path, &rel->model);
}

/* Rejections by what failed: (C) at one value of a word (a stale
 * pointer, mostly) or over the hull of its values (a table whose frames
 * lie in different tensors, mostly); (D) for a carried plane never
 * declared before, or overwritten since. */
enum { CERTIFIED, C_POINT, C_HULL, D_UNDECLARED, D_OVERWRITTEN, N_CLASSES };

static const char *class_names[N_CLASSES] = {
	"certified", "(C) at a point", "(C) over a hull", "(D) never declared",
	"(D) overwritten",
};

struct tally {
	uint64_t programs, n[N_CLASSES], differed[N_CLASSES], reused;
	uint64_t failures;
	char first[1536];                 /* the first failure, in words */
};

static int classify(const struct outcome *o)
{
	const struct ac_diag *d = &o->diag;
	if (o->verdict == 0)
		return CERTIFIED;
	if (d->condition == AC_COND_C)
		return d->lo.high == d->hi.high && d->lo.low == d->hi.low ?
			C_POINT : C_HULL;
	return d->reason == AC_CARRIED_UNDECLARED ? D_UNDECLARED : D_OVERWRITTEN;
}

/* A certified program that differs from its relocation, or whose
 * relocation is not certified: written out, and the first one kept. */
static void failure(struct tally *t, const struct config *c, uint64_t i,
		    const struct ac_model *m, const struct relocation *rel,
		    const struct outcome *o)
{
	char stem[256], why[320];
	dump(c->dump ? c->dump : "/tmp", c->seed, i, m, rel, stem, sizeof(stem));
	if (t->failures++)
		return;
	if (o->differs)
		snprintf(why, sizeof(why), "differs from its relocation: %s",
			 o->what);
	else
		snprintf(why, sizeof(why), "its relocation gets verdict %"
			 PRIu64, o->relocated_verdict);
	snprintf(t->first, sizeof(t->first), "seed 0x%" PRIx64 " program %"
		 PRIu64 " is certified but %s; written to %s.json and "
		 "%s-relocated.json; alone: AG_SOUND_SEED=0x%" PRIx64
		 " AG_SOUND_ONLY=%" PRIu64 " soundness-tests", c->seed, i, why,
		 stem, stem, c->seed, i);
}

static void check_program(struct tally *t, const struct config *c,
			  uint64_t i, struct pb *b, uint8_t *init)
{
	char who[64];
	snprintf(who, sizeof(who), "seed 0x%" PRIx64 " program %" PRIu64,
		 c->seed, i);
	struct ac_model *m = honest_program(b, c->seed, i);
	struct relocation rel;
	struct outcome o;
	fill_init(init, c->seed, i);
	examine(m, init, &rel, &o, who);
	/* Honest programs keep (A) and (B), and their tensors inside the
	 * windows (no advisory: what soundness needs), by construction. */
	ck_assert_msg(o.verdict != 1, "%s: verdict 1", who);
	ck_assert_msg(o.advisories == 0, "%s: %" PRIu64 " advisories", who,
		      o.advisories);
	int k = classify(&o);
	t->programs++;
	t->n[k]++;
	t->differed[k] += o.differs != 0;
	t->reused += k == CERTIFIED && o.reuses;
	if (k == CERTIFIED && (o.differs || o.relocated_verdict != 0))
		failure(t, c, i, m, &rel, &o);
	else if (c->dump) {
		char stem[256];
		dump(c->dump, c->seed, i, m, &rel, stem, sizeof(stem));
	}
	relocation_free(&rel);
	ac_model_free(m);
}

/* Each class at least this share of a default-sized run: the generator
 * still makes what the test needs. */
#define MIN_CERTIFIED_PERCENT 30
#define MIN_REJECTED_PERCENT 1

/* The summary line, before Check's. */
static void print_tally(const struct config *c, const struct tally *t)
{
	uint64_t rejected = t->programs - t->n[CERTIFIED], differed = 0;
	for (int k = CERTIFIED + 1; k < N_CLASSES; k++)
		differed += t->differed[k];
	printf("soundness: seed 0x%" PRIx64 ", programs %" PRIu64 "..%" PRIu64
	       ": %" PRIu64 " certified (%" PRIu64 " reusing workspace), %"
	       PRIu64 " of them differing from their relocation; %" PRIu64
	       " rejected, %" PRIu64 " of them differing:", c->seed, c->first,
	       c->first + c->count - 1, t->n[CERTIFIED], t->reused,
	       t->differed[CERTIFIED], rejected, differed);
	for (int k = CERTIFIED + 1; k < N_CLASSES; k++)
		printf("%s %s %" PRIu64 " of %" PRIu64, k > 1 ? "," : "",
		       class_names[k], t->differed[k], t->n[k]);
	printf("\n");
	fflush(stdout);
}

START_TEST(generated)
{
	struct config c = get_config();
	struct tally t = { 0 };
	struct pb *b = pb_new();
	uint8_t *init = malloc(HONEST_SPAN);
	ck_assert_ptr_nonnull(init);
	for (uint64_t i = c.first; i < c.first + c.count; i++)
		check_program(&t, &c, i, b, init);
	free(init);
	pb_free(b);
	print_tally(&c, &t);
	ck_assert_msg(t.failures == 0, "certified programs that fail: %" PRIu64 "; "
		      "the first: %s", t.failures, t.first);
	if (c.only || c.count < 1000)
		return;
	ck_assert_uint_ge(100 * t.n[CERTIFIED], MIN_CERTIFIED_PERCENT * t.programs);
	for (int k = CERTIFIED + 1; k < N_CLASSES; k++)
		ck_assert_msg(100 * t.n[k] >= MIN_REJECTED_PERCENT * t.programs,
			      "%s: %" PRIu64 " of %" PRIu64, class_names[k],
			      t.n[k], t.programs);
}
END_TEST

/* ---- the harness itself ------------------------------------------------------------ */

#define W (HONEST_BASE + 0x400)       /* a workspace for hand-made programs */

static struct pb *plan(void)
{
	struct pb *b = pb_new();
	pb_window(b, HONEST_BASE, HONEST_SPAN);
	pb_global(b, "out", HONEST_BASE, 64);
	return b;
}

/* Poison is on: a fresh plane read before it is written reads NaN. */
START_TEST(poisoned)
{
	struct pb *b = plan();
	pb_phase(b, "P");
	pb_plane(b, "a", W, 64, 0);
	pb_launch(b, "P", PB_WORDS(ARENA_K_COPY, HONEST_BASE, W, 16));
	pb_ref(b, 0, 1);
	struct ac_model *m = pb_read_back(b);
	pb_free(b);
	uint8_t *init = malloc(HONEST_SPAN);
	ck_assert_ptr_nonnull(init);
	fill_init(init, 1, 0);
	struct memory *mem = malloc(sizeof(*mem));
	ck_assert_ptr_nonnull(mem);
	run(m, init, mem);
	ck_assert_int_eq(mem->status, 0);
	for (int k = 0; k < 64; k++)
		ck_assert_uint_eq(mem->main[k], 0xFF);
	free(mem);
	ac_model_free(m);
	free(init);
}
END_TEST

/* Spec example 3 with kernels: P writes a, R writes z over it, Q copies
 * a to the output.  Schedule P, Q is certified and computes what its
 * relocation computes; P, R, Q is rejected by (D), and the harness sees
 * the overwritten value. */
static struct pb *example3(int with_r)
{
	struct pb *b = plan();
	pb_phase(b, "P");
	pb_plane(b, "a", W, 64, 0);
	pb_phase(b, "Q");
	pb_plane(b, "a", W, 64, 1);
	pb_phase(b, "R");
	pb_plane(b, "z", W, 64, 0);
	pb_launch(b, "P", PB_WORDS(ARENA_K_FILL, W, 16, f32_bits(1.5f)));
	pb_launch(b, "Q", PB_WORDS(ARENA_K_COPY, HONEST_BASE, W, 16));
	pb_launch(b, "R", PB_WORDS(ARENA_K_FILL, W, 16, f32_bits(-3.0f)));
	pb_ref(b, 0, 1);
	if (with_r)
		pb_ref(b, 2, 1);
	pb_ref(b, 1, 1);
	return b;
}

/* examine() for a hand-made program (b is freed). */
static void examine_made(struct pb *b, struct outcome *o)
{
	struct ac_model *m = pb_read_back(b);
	pb_free(b);
	uint8_t *init = malloc(HONEST_SPAN);
	ck_assert_ptr_nonnull(init);
	fill_init(init, 1, 0);
	struct relocation rel;
	examine(m, init, &rel, o, "hand-made");
	relocation_free(&rel);
	ac_model_free(m);
	free(init);
}

START_TEST(sensitive)
{
	struct outcome o;
	examine_made(example3(0), &o);
	ck_assert_uint_eq(o.verdict, 0);
	ck_assert_uint_eq(o.relocated_verdict, 0);
	ck_assert_msg(!o.differs, "%s", o.what);

	examine_made(example3(1), &o);
	ck_assert_uint_eq(o.verdict, 2 + 3 + 2);
	ck_assert_uint_eq(o.relocated_verdict, 0);
	ck_assert(o.differs);
	/* The program read R's -3, its relocation P's 1.5. */
	ck_assert_str_eq(o.what, "global 'out' [0x300000000, +64) f32 0: "
			 "0xc0400000, relocated 0x3fc00000");
}
END_TEST

/*
 * What the certificate cannot see: a plane outside every window.  Spec
 * 2 (C) calls a word outside every window fine, "never an address the
 * plan manages", but nothing requires planes inside windows.  Here Q,
 * which names no plane, reads P's plane a through such a word: certified,
 * and Q's output depends on where a lies.  Soundness holds for plans
 * whose planes lie inside windows (honest.h keeps them there); this
 * pins the precondition down, and that the program has an advisory
 * (spec 6: strict mode rejects it).
 */
START_TEST(outside_windows)
{
	struct pb *b = pb_new();
	pb_window(b, HONEST_BASE, 64);
	pb_global(b, "out", HONEST_BASE, 64);
	pb_phase(b, "P");
	pb_plane(b, "a", W, 64, 0);
	pb_phase(b, "Q");
	pb_launch(b, "P", PB_WORDS(ARENA_K_FILL, W, 16, f32_bits(1.5f)));
	pb_launch(b, "Q", PB_WORDS(ARENA_K_COPY, HONEST_BASE, W, 16));
	pb_ref(b, 0, 2);
	struct outcome o;
	examine_made(b, &o);
	ck_assert_uint_eq(o.verdict, 0);
	ck_assert(o.differs);
	ck_assert_uint_eq(o.advisories, 1);
	ck_assert_int_eq(o.advisory.kind, AC_ADVISORY_TENSOR_OUTSIDE_WINDOWS);
	ck_assert_uint_eq(o.advisory.tensor.phase, 0);
	ck_assert_uint_eq(o.advisory.tensor.index, 0);
	ck_assert_uint_eq(o.advisory.outside, W);
	/* P's 1.5; the relocation reads whatever lies at a's old place. */
	const char *want = "global 'out' [0x300000000, +64) f32 0: "
			   "0x3fc00000, relocated 0x";
	ck_assert_int_eq(strncmp(o.what, want, strlen(want)), 0);
}
END_TEST

/* ---- the relocation, by hand ------------------------------------------------------- */

/*
 * P: a [W, +64) fresh, b [W+64, +64) fresh; Q: a carried, c [W+64, +64)
 * fresh (b's bytes, another key); R: a [W, +32) fresh (a's name, another
 * size: another key).  Launch 1 (Q) repeats 3 times: word 1 walks c by
 * +4, word 2 takes a's bytes 0 and 8 from a table.
 */
static struct pb *relocation_program(int64_t walk)
{
	struct pb *b = plan();
	pb_phase(b, "P");
	pb_plane(b, "a", W, 64, 0);
	pb_plane(b, "b", W + 64, 64, 0);
	pb_phase(b, "Q");
	pb_plane(b, "a", W, 64, 1);
	pb_plane(b, "c", W + 64, 64, 0);
	pb_phase(b, "R");
	pb_plane(b, "a", W, 32, 0);
	pb_launch(b, "P", PB_WORDS(ARENA_K_FILL, W + 8, 2, 0x3f800000));
	pb_launch(b, "Q", PB_WORDS(ARENA_K_COPY, W + 64, W + 4, 1,
				   HONEST_BASE + 4, 0x1234));
	pb_launch(b, "R", PB_WORDS(ARENA_K_FILL, W, 8, 0));
	pb_repeat(b, 1, 1, 3);
	pb_delta(b, 1, 1, 4);
	pb_slot(b, 1, 2);
	pb_frame(b, (uint64_t[]){ W });
	pb_frame(b, (uint64_t[]){ W + 8 });
	if (walk) {
		pb_repeat(b, 0, 1, 2);
		pb_delta(b, 0, 1, walk);
	}
	pb_ref(b, 0, 3);
	return b;
}

START_TEST(relocation_rules)
{
	struct pb *b = relocation_program(0);
	struct ac_model *m = pb_read_back(b);
	pb_free(b);
	struct relocation rel;
	char why[256];
	ck_assert_int_eq(relocate(m, PRIVATE_BASE, &rel, why, sizeof(why)), 0);
	const struct ac_model *r = &rel.model;
	/* One private range per key, 64-aligned, 64 bytes apart at least. */
	uint64_t ra = PRIVATE_BASE, rb = ra + 128, rc = rb + 128, ra32 = rc + 128;
	ck_assert_uint_eq(r->planes[0].offset, ra);
	ck_assert_uint_eq(r->planes[1].offset, rb);
	ck_assert_uint_eq(r->planes[2].offset, ra);
	ck_assert_uint_eq(r->planes[3].offset, rc);
	ck_assert_uint_eq(r->planes[4].offset, ra32);
	ck_assert_uint_eq(rel.end, ra32 + 32);
	ck_assert_uint_eq(r->n_windows, 2);
	ck_assert_uint_eq(r->windows[1].base, PRIVATE_BASE);
	ck_assert_uint_eq(r->windows[1].size, ra32 + 32 - PRIVATE_BASE);
	/* Words into a plane of the launch's phase move with its key;
	 * globals, scalars and a slotted word's written value stay. */
	const uint64_t want[] = {
		ARENA_K_FILL, ra + 8, 2, 0x3f800000,
		ARENA_K_COPY, rc, W + 4, 1, HONEST_BASE + 4, 0x1234,
		ARENA_K_FILL, ra32, 8, 0,
	};
	ck_assert_uint_eq(r->n_words, sizeof(want) / sizeof(want[0]));
	for (uint64_t k = 0; k < r->n_words; k++)
		ck_assert_uint_eq(r->words[k], want[k]);
	ck_assert_uint_eq(r->frame_values[0], ra);
	ck_assert_uint_eq(r->frame_values[1], ra + 8);
	ck_assert_ptr_eq(r->deltas, m->deltas);
	ck_assert_int_eq(r->deltas[0].delta, 4);
	ck_assert_uint_eq(util_verdict_model(m, NULL), 0);
	ck_assert_uint_eq(util_verdict_model(r, NULL), 0);
	relocation_free(&rel);
	ac_model_free(m);

	/* A word walking from a into b has no relocation. */
	b = relocation_program(64);
	m = pb_read_back(b);
	pb_free(b);
	ck_assert_int_eq(relocate(m, PRIVATE_BASE, &rel, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "launch 0 word 1: ordinal 0 lies in plane 0, "
			 "ordinal 1 in 1");
	relocation_free(&rel);
	ac_model_free(m);
}
END_TEST

static Suite *suite_soundness(void)
{
	Suite *s = suite_create("soundness");
	TCase *tc = tcase_create("harness");
	tcase_add_test(tc, poisoned);
	tcase_add_test(tc, sensitive);
	tcase_add_test(tc, relocation_rules);
	tcase_add_test(tc, outside_windows);
	suite_add_tcase(s, tc);
	tc = tcase_create("generated");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, generated);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	/* Before any test opens the node: see the top of this file. */
	setenv("ARENASIM_POISON", "1", 1);
	return run_and_summarize(srunner_create(suite_soundness()));
}
