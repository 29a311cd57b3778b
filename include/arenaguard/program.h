/* SPDX-License-Identifier: MIT */
/*
 * arenaguard/program.h - the program model and its two interchange formats.
 *
 * A program is a plan, a launch table and a schedule (shared/spec/
 * certificate.md section 1).  struct ac_model is its plain, flattened form:
 * every table is an array, and nested lists (a phase's planes, a launch's
 * words, a repeat's deltas, slots and frames) are contiguous runs of a
 * flat array named by (first, count).  Anyone may fill one in by hand; the
 * readers below produce one from JSON (shared/spec/program-json.md) or from
 * the binary program image (docs/program-image.md).
 *
 * A model is only a description: nothing here checks that it is
 * well-formed.  ac_program_new() (arenaguard/certify.h) does, and reports
 * the first malformed entry with its location.
 */
#ifndef ARENAGUARD_PROGRAM_H
#define ARENAGUARD_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A byte string: a name or an identity.  Not NUL-terminated. */
struct ac_bytes {
	const uint8_t *data;
	uint32_t len;
};

struct ac_window {
	struct ac_bytes name;      /* optional (len 0): for diagnostics only */
	uint64_t base;
	uint64_t size;
};

/* A global, or a plane of a phase. */
struct ac_tensor {
	struct ac_bytes name;
	uint64_t offset;
	uint64_t size;
	uint8_t carried;           /* planes: 1 carried, 0 fresh; globals: 0 */
	uint8_t pad[7];
};

struct ac_phase {
	struct ac_bytes identity;
	uint32_t plane_first;      /* into ac_model.planes */
	uint32_t plane_count;
};

struct ac_launch {
	struct ac_bytes identity;  /* protobuf wire format; field 51 = phase */
	uint64_t word_first;       /* into ac_model.words */
	uint32_t word_count;
	uint32_t pad;
};

/*
 * Index fields below are 64-bit because the JSON format lets a writer put
 * any unsigned 64-bit value there; out-of-range values are malformed and
 * are reported by ac_program_new(), not silently truncated by a reader.
 */
struct ac_delta {
	uint64_t launch;
	uint64_t word;
	int64_t delta;
};

struct ac_slot {
	uint64_t launch;
	uint64_t word;
};

struct ac_repeat {
	uint64_t first;
	uint64_t count;
	uint64_t iterations;
	uint32_t delta_first;      /* into ac_model.deltas */
	uint32_t delta_count;
	uint32_t slot_first;       /* into ac_model.slots */
	uint32_t slot_count;
	/*
	 * Table frames: frame_count == 0 means the repeat has no table.
	 * Otherwise frame f's value for slot s is
	 * frame_values[frame_value_first + f * slot_count + s].
	 */
	uint64_t frame_count;
	uint64_t frame_value_first;
};

struct ac_ref {
	uint64_t first;
	uint64_t count;
};

struct ac_model {
	uint64_t alignment;

	uint32_t n_windows, n_globals, n_phases, n_planes;
	uint32_t n_launches, n_repeats, n_deltas, n_slots;
	uint64_t n_words, n_frame_values, n_refs;

	const struct ac_window *windows;
	const struct ac_tensor *globals;
	const struct ac_phase *phases;
	const struct ac_tensor *planes;
	const struct ac_launch *launches;
	const uint64_t *words;
	const struct ac_repeat *repeats;
	const struct ac_delta *deltas;
	const struct ac_slot *slots;
	const uint64_t *frame_values;
	const struct ac_ref *refs;  /* the schedule */
};

/*
 * Errors from readers and from ac_program_new().  `where` locates the
 * problem: a JSON path ("launches[3].words[1]") for JSON input, a byte
 * offset ("byte 1234 (launches[3].word_count)") for a binary image, and the
 * model path for a model checked by ac_program_new().
 */
struct ac_error {
	char where[128];
	char message[256];
};

/* "where: message", or just the message when where is empty. */
const char *ac_error_text(const struct ac_error *err, char *buf, size_t len);

/*
 * Readers.  On success return 0 and store a model that the caller frees
 * with ac_model_free(); the model owns copies of everything it points to.
 * On malformed input return -1 and fill *err (err may be NULL).
 */
int ac_model_read_json(const char *text, size_t len, struct ac_model **out,
		       struct ac_error *err);
int ac_model_read_image(const void *image, size_t len, struct ac_model **out,
			struct ac_error *err);

/*
 * Reads an image without copying its bulk: the model points into `image`
 * for parameter words, frame values, references and byte strings (on a
 * little-endian host, with `image` 8-byte aligned; otherwise it copies, as
 * ac_model_read_image does).  The image must stay alive and unchanged
 * until ac_model_free().  For large programs this is the fast path: the
 * words are most of an image.
 */
int ac_model_view_image(const void *image, size_t len, struct ac_model **out,
			struct ac_error *err);

/* Reads either format, recognising the image by its magic bytes. */
int ac_model_read(const void *data, size_t len, struct ac_model **out,
		  struct ac_error *err);

/* The same, viewing an image (ac_model_view_image): `data` must outlive
 * the model.  JSON is read as by ac_model_read. */
int ac_model_view(const void *data, size_t len, struct ac_model **out,
		  struct ac_error *err);

/* Frees a model returned by a reader.  NULL is ignored. */
void ac_model_free(struct ac_model *model);

/* The bytes a model returned by a reader holds and may make resident: its
 * arrays and strings, not the input a view borrows; 0 for NULL. */
uint64_t ac_model_footprint(const struct ac_model *model);

/* The image's first bytes: "ARENAPRG". */
#define AC_IMAGE_MAGIC "ARENAPRG"
#define AC_IMAGE_MAGIC_LEN 8
#define AC_IMAGE_VERSION 1

/*
 * Writers.  Each returns a malloc'ed buffer (free with free()) and its
 * length in *len, or NULL with *err filled when the model cannot be written
 * (a count or index outside the format's fixed-width fields, or no memory).
 * The image writer is canonical: reading an image and writing it back gives
 * the same bytes, and so does image -> JSON -> image.
 */
char *ac_model_write_json(const struct ac_model *model, size_t *len,
			  struct ac_error *err);
uint8_t *ac_model_write_image(const struct ac_model *model, size_t *len,
			      struct ac_error *err);

#ifdef __cplusplus
}
#endif

#endif /* ARENAGUARD_PROGRAM_H */
