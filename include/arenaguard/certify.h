/* SPDX-License-Identifier: MIT */
/*
 * arenaguard/certify.h - the device-arena certificate (libarenacert).
 *
 * The certificate is defined in shared/spec/certificate.md.  It is decided
 * in two stages, matching how a driver sees a program:
 *
 *   ac_program_new()      checks the plan and launch table: well-formedness
 *                         (spec 1), conditions (A), (B) and (C).  Done once
 *                         per program.  ac_program_view_image() reads
 *                         an image and does the same in one call.
 *   ac_schedule_append()  appends schedule references and advances (D)
 *                         incrementally.  A program may have many schedules.
 *
 * ac_schedule_verdict() reads the verdict so far at any time; one-shot
 * certification (ac_certify) is the same API applied to the model's own
 * schedule.  All functions are thread-compatible: distinct objects may be
 * used from distinct threads; one ac_schedule needs external locking.
 * A const ac_program may be shared by any number of threads and schedules.
 */
#ifndef ARENAGUARD_CERTIFY_H
#define ARENAGUARD_CERTIFY_H

#include <stddef.h>
#include <stdint.h>

#include <arenaguard/program.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ac_program ac_program;
typedef struct ac_schedule ac_schedule;

/* An index that names nothing (no phase, no instance, no window). */
#define AC_NONE UINT64_MAX

enum ac_condition {
	AC_CERTIFIED = 0,
	AC_COND_A,               /* globals */
	AC_COND_B,               /* planes */
	AC_COND_C,               /* launch words and phases */
	AC_COND_D,               /* carried values across instances */
};

enum ac_reason {
	AC_OK = 0,
	AC_GLOBAL_MISALIGNED,    /* tensor[0] */
	AC_GLOBAL_EMPTY,         /* tensor[0] */
	AC_GLOBALS_OVERLAP,      /* tensor[0], tensor[1] */
	AC_PLANE_MISALIGNED,     /* tensor[0] */
	AC_PLANE_EMPTY,          /* tensor[0] */
	AC_PLANES_OVERLAP,       /* tensor[0], tensor[1]: same phase */
	AC_PLANE_OVERLAPS_GLOBAL,/* tensor[0] the plane, tensor[1] the global */
	AC_LAUNCH_NO_PHASE,      /* launch; identity_problem says why */
	AC_WORD_UNNAMED,         /* launch, word, interval, window, near[] */
	AC_CARRIED_UNDECLARED,   /* instance, plane: never declared before */
	AC_CARRIED_OVERWRITTEN,  /* instance, plane, earlier, intervening */
};

/* A global (phase == AC_NONE) or a plane (phase, index within the phase). */
struct ac_tensor_ref {
	uint64_t phase;
	uint64_t index;
};

/* An exact integer that may leave [0, 2^64): value = high * 2^64 + low. */
struct ac_wide {
	int64_t high;
	uint64_t low;
};

/* Why a launch has no declared phase (spec 1.2). */
enum ac_identity_problem {
	AC_ID_OK = 0,
	AC_ID_UNPARSABLE,        /* truncated/overlong varint, bad length, ... */
	AC_ID_FIELD51_WIRE_TYPE, /* field 51 with a wire type other than 2 */
	AC_ID_NO_FIELD51,
	AC_ID_UNKNOWN_PHASE,     /* last field 51 names no phase of the plan */
};

struct ac_diag {
	uint64_t verdict;
	enum ac_condition condition;
	enum ac_reason reason;

	/* (A), (B); for (D), tensor[0] is the carried plane and tensor[1] the
	 * plane that overwrote it (AC_CARRIED_OVERWRITTEN). */
	struct ac_tensor_ref tensor[2];

	/* (C) */
	uint64_t launch;             /* as written */
	uint64_t word;
	enum ac_identity_problem identity_problem;
	uint64_t identity_offset;    /* byte of the identity where parsing failed */
	struct ac_wide lo, hi;       /* the failing interval [lo, hi] */
	uint64_t ordinal;            /* t of a per-iteration point, else AC_NONE */
	uint64_t window;             /* a window the interval meets, or AC_NONE
				      * when the interval leaves [0, 2^64) */
	struct ac_tensor_ref near[2];/* nearest named ranges below/above lo;
				      * phase == index == AC_NONE if none */

	/* (D) */
	uint64_t instance;           /* k */
	uint64_t phase;              /* k's phase */
	uint64_t start_launch;       /* where instance k starts ... */
	uint64_t start_ordinal;      /* ... and at which iteration (or AC_NONE) */
	uint64_t earlier;            /* j: latest earlier declaring instance */
	uint64_t earlier_phase;      /* j's phase */
	uint64_t intervening;        /* an instance in (j, k) that overwrote */
};

/*
 * Checks a model's plan and launch table and prepares it for schedules.
 * The program keeps pointers into `model` (words and frame values are not
 * copied): the model must outlive the program.  Returns NULL with *err
 * filled when the model is malformed (its schedule is checked by
 * ac_schedule_append, not here) or memory runs out.
 */
ac_program *ac_program_new(const struct ac_model *model, struct ac_error *err);
void ac_program_free(ac_program *program);

/*
 * How ac_program_new_opts and ac_certify_opts work; a zeroed struct is
 * ac_program_new's way.
 *
 * threads: at most this many threads certify a program of parallel_words
 * launch parameter words or more: the caller's and threads - 1 workers,
 * started and joined inside the call (0 or 1: the caller's alone), with
 * every signal blocked (the host's signals go to its own threads).  The
 * launch table is cut into chunks; each is read from the image
 * (ac_program_view_image), finds its launches' phases, checks their words
 * ((C)) and indexes its runs for (D); the chunk holding the smallest
 * failing launch gives the diagnostic, and a broken image's error is the
 * serial reader's, so the verdict, the diagnostic and the error are the
 * serial ones whatever the threads and their timing.  A library user
 * whose host owns its threads (a guard in someone else's process) leaves
 * this at 0.
 *
 * parallel_words: the smallest program (in words) worth the threads; 0
 * means AC_PARALLEL_WORDS.  Any value certifies the same.
 */
struct ac_options {
	unsigned threads;
	uint64_t parallel_words;
};
#define AC_PARALLEL_WORDS 65536

/* ac_program_new with options (NULL: the defaults). */
ac_program *ac_program_new_opts(const struct ac_model *model,
				const struct ac_options *options,
				struct ac_error *err);

/*
 * Reads a program image and checks it in one call: ac_model_view_image
 * (`image` must outlive the model) then ac_program_new_opts, with the
 * same verdict and the same errors, but one pass over the launch table
 * fewer (the model's structure, which the reader has just checked, is
 * not checked again: no one could have changed the model in between).
 * On success returns the program and sets *model to the model read;
 * free the program first, then the model (ac_model_free).  On failure
 * returns NULL with *err filled, and *model says whose error it is: NULL
 * when the image is malformed (the reader's error), or the model read
 * when the program is (ac_program_new's error, or out of memory); the
 * caller frees that model.
 */
ac_program *ac_program_view_image(const void *image, size_t len,
				  const struct ac_options *options,
				  struct ac_model **model,
				  struct ac_error *err);

/* The same for either format, as ac_model_view reads it: an image (by
 * its magic bytes) as ac_program_view_image, JSON as ac_model_read_json
 * then ac_program_new_opts. */
ac_program *ac_program_view(const void *data, size_t len,
			    const struct ac_options *options,
			    struct ac_model **model, struct ac_error *err);

/* The verdict of (A), (B), (C) alone: 0, 1 or 2 + i. */
uint64_t ac_program_verdict(const ac_program *program);

/* The bytes ac_program_new allocated for `program` and may make resident
 * (its indexes; not the model, see ac_model_footprint); 0 for NULL.  For
 * caches bounded in bytes. */
uint64_t ac_program_footprint(const ac_program *program);
const struct ac_model *ac_program_model(const ac_program *program);

/* The phase launch `launch` declares (spec 1.2), or AC_NONE. */
uint64_t ac_program_launch_phase(const ac_program *program, uint64_t launch);

/* The repeat (index in the model) whose body holds `launch`, or AC_NONE. */
uint64_t ac_program_repeat_of(const ac_program *program, uint64_t launch);

/*
 * The executed sequence (spec 1.3) and its instances (spec 2 (D): maximal
 * runs of one phase, across references and iterations), numbered exactly,
 * as a walk over the model's own schedule that calls hooks in execution
 * order.  Launches without a declared phase (only in programs that fail
 * (C)) form runs of their own, numbered like instances; the walk serves
 * any program, whatever its verdict, whose references are well formed
 * (spec 1.3, as a schedule accepted them).
 *
 * The walk never unrolls anything long: a repeat body runs its iterations
 * 0, 1, N-1 and one extra ordinal asked for (ac_walk_shown), and the
 * iterations between are one fold whose instances are counted, not
 * visited.  A stretch of four or more identical consecutive references is
 * folded the same way (0, 1, a fold, the last).  This is exact for the
 * reason ac_schedule_append's (D) is: a body's declarations depend only on
 * the body, so from its second run on every run starts from the same
 * state and starts as many instances (its steady count).
 */

/* An instance starts, or one that began in a fold shows again. */
struct ac_walk_column {
	uint64_t instance;
	uint64_t phase;          /* AC_NONE: launches without a declared phase */
	uint64_t ref;            /* schedule index of its first shown launch */
	int continued;           /* began inside folded iterations */
};

/* Iterations (or identical references) counted, not visited. */
struct ac_walk_fold {
	int of_refs;             /* 1: references; 0: a repeat's iterations */
	uint64_t index;          /* the repeat, or the first reference of the run */
	uint64_t first, last;    /* the folded iterations, from 0 */
	uint64_t total;          /* iterations (or references) in all */
	uint64_t instances;      /* instances that start inside the fold ... */
	uint64_t first_instance; /* ... from this one */
};

/* A shown iteration of a repeat (of_refs 0) or of a reference run. */
struct ac_walk_iter {
	int of_refs;
	uint64_t index;          /* the repeat, or the first reference of the run */
	uint64_t iteration;
	uint64_t total;
};

struct ac_walk_hooks {
	void *ctx;
	void (*column)(void *ctx, const struct ac_walk_column *col);
	/* launches [first, first + count) of one phase join the last column */
	void (*run)(void *ctx, uint64_t first, uint64_t count,
		    uint64_t ordinal, uint64_t ref);
	void (*fold)(void *ctx, const struct ac_walk_fold *fold);
	void (*iter_begin)(void *ctx, const struct ac_walk_iter *it);
	void (*iter_end)(void *ctx);
};

/*
 * Prepares a walk of the program's own schedule.  extra_repeat and
 * extra_ordinal (AC_NONE for none) ask that one more iteration of one
 * repeat be shown (for a (C) failure at that ordinal).  A program that
 * passed (A)-(C) lends the walk its (D) indexes; for any other the walk
 * builds them: O(launches + R log R) time and memory.  NULL when memory
 * runs out.
 */
typedef struct ac_walk ac_walk;
ac_walk *ac_walk_new(const ac_program *program, uint64_t extra_repeat,
		     uint64_t extra_ordinal);
void ac_walk_free(ac_walk *walk);

/* Runs the whole walk, calling the hooks in order, and returns the number
 * of instances executed.  May be run again.  Cost: O(runs the shown
 * iterations and references hold), whatever the iteration counts. */
uint64_t ac_walk_run(ac_walk *walk, const struct ac_walk_hooks *hooks);

/* The iterations of a repeat of n the walk shows: 0, 1, extra (AC_NONE
 * for none) and n - 1, those below n, sorted, each once.  Returns how
 * many (at most AC_WALK_SHOWN). */
#define AC_WALK_SHOWN 4
int ac_walk_shown(uint64_t n, uint64_t extra, uint64_t out[AC_WALK_SHOWN]);

/* V(t): the exact value of word `word` of launch `launch` at ordinal t of
 * its repeat (spec 1.2); the written value outside repeats. */
struct ac_wide ac_program_word_value(const ac_program *program,
				     uint64_t launch, uint64_t word,
				     uint64_t t);

/*
 * Spec 1.3: checks `ref` as reference `index` of a schedule whose earlier
 * references execute *executed launches (below 2^62).  A reference is
 * well formed when it holds at least one launch, lies inside the launch
 * table, cuts no repeat body, and the executed sequence stays below 2^62
 * launches with it: then the launches it executes (a body's all its
 * iterations) are added to *executed and 0 is returned.  Otherwise -1,
 * *executed unchanged and *err (if not NULL) naming "schedule[index]".
 * ac_schedule_append checks each reference with it; a caller keeping its
 * own list of references (a device) checks a batch the same way.
 * Cost: O(log R) for R repeats.
 */
int ac_program_check_ref(const ac_program *program, const struct ac_ref *ref,
			 uint64_t index, uint64_t *executed,
			 struct ac_error *err);

/*
 * V(t) of every word of a launch, for a caller executing the program (a
 * device): an index made once per program (per body word its summed
 * deltas and table slot; NULL when memory runs out), then
 * ac_word_values_at writes the words of `launch` at ordinal t of its
 * repeat (any t outside repeats: the written words) to out[0 ..
 * word_count).  0, or -1 when a value leaves [0, 2^64) (no device word
 * holds it; out then holds what came before).  The values are
 * ac_program_word_value's.  Cost: O(log R + word_count) a call.
 */
typedef struct ac_word_values ac_word_values;
ac_word_values *ac_word_values_new(const ac_program *program);
void ac_word_values_free(ac_word_values *values);
int ac_word_values_at(const ac_word_values *values, uint64_t launch,
		      uint64_t t, uint64_t *out);

/* An empty schedule of a program.  NULL when memory runs out. */
ac_schedule *ac_schedule_new(const ac_program *program);
void ac_schedule_free(ac_schedule *schedule);

/*
 * Appends references.  A batch is atomic: if any reference is malformed
 * (count 0, outside the table, cutting a repeat body, or pushing the
 * executed sequence to 2^62 launches) nothing is appended, -1 is returned
 * and *err names the reference as "schedule[i]" (i counted over the whole
 * schedule).  refs NULL with count > 0 is a bad argument: -1, nothing
 * appended, *err at "refs" (NULL with count 0 appends nothing and
 * returns 0).  When memory for (D) runs out, nothing is appended either,
 * -1 is returned and *err says "out of memory" with an empty location;
 * the schedule is unchanged and usable.  Cost: proportional to the phase
 * runs the references add, independent of the launches they cover and of
 * repeat iteration counts.
 */
int ac_schedule_append(ac_schedule *schedule, const struct ac_ref *refs,
		       size_t count, struct ac_error *err);

/* The verdict for the schedule so far (spec 3), with its diagnostic. */
uint64_t ac_schedule_verdict(const ac_schedule *schedule, struct ac_diag *diag);

/* References appended so far, and executed launches they stand for. */
uint64_t ac_schedule_length(const ac_schedule *schedule);
uint64_t ac_schedule_executed(const ac_schedule *schedule);

/*
 * Digest of (plan, launch table, schedule so far) for verdict caching:
 * XXH3-128 of (P, R), where P is XXH3-128 of the canonical program image
 * without its schedule and R that of the references as appended
 * (docs/certify.md).  P is computed by the first call for a program (a
 * pass over the image; thread-safe), later calls cost O(1).  Fast but not
 * collision-resistant: a cache must compare the input bytes on a hit
 * before reusing a verdict.
 */
struct ac_digest {
	uint64_t high, low;
};
void ac_schedule_digest(const ac_schedule *schedule, struct ac_digest *out);

/*
 * The digest from its halves, for a caller that hashes the image (P) and
 * the references (R) itself, as a guard that already holds the bytes
 * does: ac_schedule_digest is ac_digest_combine(P, R).
 */
void ac_digest_combine(const struct ac_digest *program,
		       const struct ac_digest *refs, struct ac_digest *out);

/* P of a program image's bytes: their XXH3-128.  For a canonical image
 * without a schedule (ac_model_write_image of a model with none), the
 * half ac_schedule_digest computes from the program. */
void ac_image_digest(const void *image, size_t len, struct ac_digest *out);

/*
 * P of an image's bytes given in chunks, for a caller that hashes an
 * image as it copies it (a guard copying from an application, chunk by
 * chunk while each is in the CPU's cache): chunks added in order give
 * ac_image_digest's value for their concatenation, however the bytes
 * are cut (a chunk may be empty).  ac_image_digester_value reads the
 * value so far and leaves the state as it was.  NULL when memory runs
 * out.
 */
typedef struct ac_image_digester ac_image_digester;
ac_image_digester *ac_image_digester_new(void);
void ac_image_digester_free(ac_image_digester *digester);
void ac_image_digester_add(ac_image_digester *digester, const void *chunk,
			   size_t len);
void ac_image_digester_value(const ac_image_digester *digester,
			     struct ac_digest *out);

/*
 * The digest incrementally, for a caller that keeps the references itself
 * (a guard mirroring a driver's schedules): an ac_digester started from a
 * program's P, to which references are added batch by batch, gives
 * ac_schedule_digest's value for those references.  ac_digester_undo
 * takes back the last ac_digester_add (once), for a batch the caller then
 * refuses.  NULL when memory runs out.
 */
typedef struct ac_digester ac_digester;
ac_digester *ac_digester_new(const struct ac_digest *program);
void ac_digester_free(ac_digester *digester);
void ac_digester_add(ac_digester *digester, const struct ac_ref *refs,
		     size_t count);
void ac_digester_undo(ac_digester *digester);
void ac_digester_value(const ac_digester *digester, struct ac_digest *out);

/* One shot: ac_program_new + append the model's schedule + verdict. */
int ac_certify(const struct ac_model *model, uint64_t *verdict,
	       struct ac_diag *diag, struct ac_error *err);
/* ac_certify with options (NULL: the defaults). */
int ac_certify_opts(const struct ac_model *model,
		    const struct ac_options *options, uint64_t *verdict,
		    struct ac_diag *diag, struct ac_error *err);

/*
 * One shot from bytes, for bindings (python/arenacert, docs/python.md):
 * reads `data` as ac_model_read does (JSON text or a program image),
 * certifies it and returns the object `arena-certify --json` prints for
 * it, without the "file" key, as one line of JSON text: {"verdict": V,
 * "condition": ..., "reason": ..., <what the reason names>,
 * "explanation": ..., "advisories": [...]}, V an exact unsigned integer,
 * the explanation the rendered diagnostic (or "certified: ..."), each
 * advisory with its "explanation".  The text is malloc'ed (free with
 * free()) and NUL-terminated, its length in *out_len (out_len may be
 * NULL).  Returns NULL with *err filled (err may be NULL) when the input
 * is malformed, as the readers and ac_program_new report it (what and
 * where), or when memory runs out.
 */
char *ac_certify_json(const void *data, size_t len, size_t *out_len,
		      struct ac_error *err);

/* The same for a model (from a reader or ac_builder_finish, in
 * arenaguard/builder.h): its result object, or NULL with *err filled
 * when it is malformed (ac_program_new's error) or memory runs out.  The
 * model is only read. */
char *ac_certify_model_json(const struct ac_model *model, size_t *out_len,
			    struct ac_error *err);

/*
 * Renders a diagnostic as readable text naming tensors, launches and
 * instances by name and index.  Returns buf (always NUL-terminated).
 */
const char *ac_diag_render(const struct ac_diag *diag,
			   const ac_program *program, char *buf, size_t len);

/* An exact value as hex ("0x1400", "-0x1", "0x10000000000000000"), as
 * ac_diag_render writes it.  Returns buf. */
const char *ac_wide_text(struct ac_wide value, char *buf, size_t len);

/* Short names: "certified", "A", ...; "carried-overwritten", ...;
 * "unparsable", "no-field51", ... */
const char *ac_condition_name(enum ac_condition condition);
const char *ac_reason_name(enum ac_reason reason);
const char *ac_identity_problem_name(enum ac_identity_problem problem);

/*
 * Advisories (spec section 6): facts about a well-formed program that
 * leave its certificate weaker than it reads.  They never change the
 * verdict; strict mode (a front end's flag or setting) treats a program
 * with any advisory as not certified.
 */
enum ac_advisory_kind {
	/* Some byte of a non-empty global or plane lies in no window (the
	 * union of the windows, which may overlap): (C) never checks it, so
	 * any launch may reach it whatever its phase. */
	AC_ADVISORY_TENSOR_OUTSIDE_WINDOWS = 1,
};

struct ac_advisory {
	enum ac_advisory_kind kind;
	struct ac_tensor_ref tensor;  /* a global (phase AC_NONE) or a plane */
	uint64_t outside;             /* its first byte in no window */
};

/*
 * The advisories of a program, in model order (globals, then phases and
 * their planes; one per tensor), for any verdict.  On success returns 0
 * with *count advisories in a malloc'ed array *out (free with free();
 * NULL when *count is 0).  Returns -1 with *err filled when memory runs
 * out.  Cost: O((W + T) log W) for W windows and T tensors.
 */
int ac_program_advisories(const ac_program *program, struct ac_advisory **out,
			  uint64_t *count, struct ac_error *err);

/*
 * An advisory as text, naming the tensor as ac_diag_render does and the
 * first byte outside, e.g. "tensor-outside-windows: global 'w'
 * (globals[0]) [0x1000, 0x1100) has byte 0x10c0 in no window".  Returns
 * buf (always NUL-terminated).
 */
const char *ac_advisory_render(const struct ac_advisory *advisory,
			       const ac_program *program, char *buf,
			       size_t len);

/* "tensor-outside-windows" (the spec's name), or "?". */
const char *ac_advisory_kind_name(enum ac_advisory_kind kind);

#ifdef __cplusplus
}
#endif

#endif /* ARENAGUARD_CERTIFY_H */
