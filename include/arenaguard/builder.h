/* SPDX-License-Identifier: MIT */
/*
 * arenaguard/builder.h - a program model built call by call, without text.
 *
 * For bindings and planners that hold a plan as values (python/arenacert,
 * docs/python.md): each call appends one entry of a table of the JSON
 * format (shared/spec/program-json.md), in the format's order, and
 * ac_builder_finish() returns the model the JSON reader would return for
 * the same plan (the same values; ac_model_free frees it).  Names and
 * identities are byte strings; numbers are the model's (any 64-bit value:
 * the JSON format's 2^53 limit on integers is a limit of JSON text).
 *
 * Errors are sticky: the first failing call fills the builder's error and
 * every later call does nothing and returns -1, so a caller may check only
 * ac_builder_finish().  The error names the entry as the JSON reader would
 * ("repeats[0].table.frames[1]"); what makes a model malformed (an index
 * past its table, a range out of its window) is ac_program_new()'s to say,
 * with the same paths.  A builder is used by one thread at a time.
 */
#ifndef ARENAGUARD_BUILDER_H
#define ARENAGUARD_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include <arenaguard/program.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ac_builder ac_builder;

/* A builder of a program with this alignment; NULL on out-of-memory. */
ac_builder *ac_builder_new(uint64_t alignment);
/* Frees a builder (not the model it finished); NULL is ignored. */
void ac_builder_free(ac_builder *builder);

/* windows[i], globals[i]: a name of name_len bytes (a window's may be
 * empty), where and how large.  0, or -1 (sticky error). */
int ac_builder_window(ac_builder *builder, const void *name, size_t name_len,
		      uint64_t base, uint64_t size);
int ac_builder_global(ac_builder *builder, const void *name, size_t name_len,
		      uint64_t offset, uint64_t size);

/* phases[i] with its identity; its planes follow, each appended to the
 * last phase (carried: 1 carried, 0 fresh). */
int ac_builder_phase(ac_builder *builder, const void *identity, size_t len);
int ac_builder_plane(ac_builder *builder, const void *name, size_t name_len,
		     uint64_t offset, uint64_t size, int carried);

/*
 * The launches' source identities are given once each, in a table the
 * launches name by index (a planner's launches share a few dozen).  form
 * AC_IDENTITY_PHASE: `bytes` is a phase identity, and the launch's identity
 * is the message holding only field 51 with it (JSON's "phase"); form
 * AC_IDENTITY_RAW: `bytes` is the whole identity ("identity_hex").  Sets
 * *index to the entry's index (the first entry is 0).
 */
enum ac_identity_form { AC_IDENTITY_PHASE = 0, AC_IDENTITY_RAW = 1 };
int ac_builder_identity(ac_builder *builder, enum ac_identity_form form,
			const void *bytes, size_t len, uint32_t *index);

/* launches[i]: identity table entry `identity`, n_words words. */
int ac_builder_launch(ac_builder *builder, uint32_t identity,
		      const uint64_t *words, uint64_t n_words);

/*
 * n launches at once, columnar: launch i (of this call) has identity table
 * entry identities[i] and word_counts[i] words, taken in order from
 * words[0, n_words), which the counts must sum to exactly.
 */
int ac_builder_launches(ac_builder *builder, uint64_t n,
			const uint32_t *identities,
			const uint32_t *word_counts, const uint64_t *words,
			uint64_t n_words);

/* repeats[i]; its deltas, then its table (slots, then each frame of one
 * value per slot; at least one frame) are appended to the last repeat. */
int ac_builder_repeat(ac_builder *builder, uint64_t first, uint64_t count,
		      uint64_t iterations);
int ac_builder_delta(ac_builder *builder, uint64_t launch, uint64_t word,
		     int64_t delta);
int ac_builder_table(ac_builder *builder, const struct ac_slot *slots,
		     uint64_t n_slots);
int ac_builder_frame(ac_builder *builder, const uint64_t *values,
		     uint64_t n_values);

/* schedule[i]: the reference {first, count}. */
int ac_builder_ref(ac_builder *builder, uint64_t first, uint64_t count);

/*
 * The model built, which the caller frees with ac_model_free(); the
 * builder may then only be freed (the model holds its words' array):
 * every later call fails (-1, or NULL from ac_builder_finish) with the
 * sticky error "the builder has finished its model".  NULL with *err
 * filled (err may be NULL) when a call failed or a table is incomplete
 * (a table without a frame) or too long for the model's counts.
 */
struct ac_model *ac_builder_finish(ac_builder *builder, struct ac_error *err);

#ifdef __cplusplus
}
#endif

#endif /* ARENAGUARD_BUILDER_H */
