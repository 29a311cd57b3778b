// SPDX-License-Identifier: MIT
/*
 * The arena device's reading of a program image:
 * structure (docs/program-image.md sections 5 and 6), the launch table's
 * rules the device executes by (spec 1.2), references (spec 1.3) and
 * V(t).  Freestanding: see types.h.  Every read of the image goes
 * through ld(), after the section table bounded what it may touch.
 */
#include "image.h"

#define HEADER_BYTES 40
#define ENTRY_BYTES 24
#define FIRST_SECTION (HEADER_BYTES + ARENA_S_COUNT * ENTRY_BYTES)
#define TWO_POW_32 (1ull << 32)

static const u32 entry_size[ARENA_S_COUNT] = {
	24, 24, 16, 32, 24, 8, 56, 24, 16, 8, 16, 1
};

/* Sections whose count is limited to 2^32 - 1 (their runs are u32). */
static int limited(int s)
{
	return s != ARENA_S_WORDS && s != ARENA_S_FRAME_VALUES &&
	       s != ARENA_S_SCHEDULE && s != ARENA_S_POOL;
}

static u64 ld(const u8 *b, u64 at, int width)
{
	u64 v = 0;

	for (int i = width - 1; i >= 0; i--)
		v = v << 8 | b[at + (u64)i];
	return v;
}

u64 arena_image_u64(const struct arena_image *img, u64 at)
{
	return ld(img->bytes, at, 8);
}

u32 arena_image_u32(const struct arena_image *img, u64 at)
{
	return (u32)ld(img->bytes, at, 4);
}

static u64 round8(u64 x)
{
	return (x + 7) & ~(u64)7;
}

static int bad(struct arena_image *img, u64 at)
{
	img->error_at = at;
	return -EINVAL;
}

static int parse_header(struct arena_image *img)
{
	static const u8 magic[8] = { 'A', 'R', 'E', 'N', 'A', 'P', 'R', 'G' };
	const u8 *b = img->bytes;

	for (int i = 0; i < 8; i++)
		if (img->size <= (u64)i || b[i] != magic[i])
			return bad(img, 0);
	if (img->size < 12 || ld(b, 8, 4) != 1)
		return bad(img, 8);
	if (img->size < 16 || ld(b, 12, 4) != ARENA_S_COUNT)
		return bad(img, 12);
	if (img->size < 24 || ld(b, 16, 8) != img->size || img->size % 8)
		return bad(img, 16);
	if (img->size < 32)
		return bad(img, 24);
	if (img->size < HEADER_BYTES || ld(b, 32, 8) != 0)
		return bad(img, 32);
	return 0;
}

static int parse_sections(struct arena_image *img)
{
	const u8 *b = img->bytes;
	u64 expect = FIRST_SECTION, end = 0;

	for (int i = 0; i < ARENA_S_COUNT; i++) {
		u64 e = HEADER_BYTES + (u64)i * ENTRY_BYTES;

		if (img->size < e + ENTRY_BYTES)
			return bad(img, e);
		if (ld(b, e, 4) != (u64)i + 1)
			return bad(img, e);
		if (ld(b, e + 4, 4) != entry_size[i])
			return bad(img, e + 4);
		if (ld(b, e + 8, 8) != expect || expect > img->size)
			return bad(img, e + 8);
		u64 count = ld(b, e + 16, 8);

		if (count > (img->size - expect) / entry_size[i])
			return bad(img, e + 16);
		if (limited(i) && count > TWO_POW_32 - 1)
			return bad(img, e + 16);
		img->offset[i] = expect;
		img->count[i] = count;
		end = expect + count * entry_size[i];
		expect = round8(end);
	}
	if (expect != img->size)
		return bad(img, expect < img->size ? expect : img->size);
	/* padding after every section: only the pool's can be non-empty */
	for (u64 at = end; at < img->size; at++)
		if (b[at])
			return bad(img, at);
	return 0;
}

static u64 entry(const struct arena_image *img, int s, u64 k)
{
	return img->offset[s] + k * entry_size[s];
}

/* Strings, in pool order, at byte `at` of each entry of section s. */
static int check_strings(struct arena_image *img, int s, u64 at,
			 u64 *pool_at)
{
	u64 pool = img->count[ARENA_S_POOL];

	for (u64 k = 0; k < img->count[s]; k++) {
		u64 e = entry(img, s, k) + at;
		u64 off = arena_image_u32(img, e);
		u64 len = arena_image_u32(img, e + 4);

		if (off != *pool_at)
			return bad(img, e);
		if (len > pool - off)
			return bad(img, e + 4);
		*pool_at = off + len;
	}
	return 0;
}

/* A run (first at byte fa, count at byte ca of each entry): consecutive
 * from 0, totalling the count of section `of`.
 */
static int check_runs(struct arena_image *img, int s, u64 fa, int fw,
		      u64 ca, int of)
{
	u64 sum = 0;

	for (u64 k = 0; k < img->count[s]; k++) {
		u64 e = entry(img, s, k);
		u64 count = arena_image_u32(img, e + ca);

		if (ld(img->bytes, e + fa, fw) != sum)
			return bad(img, e + fa);
		if (count > img->count[of] - sum)
			return bad(img, e + ca);
		sum += count;
	}
	if (sum != img->count[of])
		return bad(img, HEADER_BYTES + (u64)of * ENTRY_BYTES + 16);
	return 0;
}

static int check_planes(struct arena_image *img)
{
	for (u64 k = 0; k < img->count[ARENA_S_PLANES]; k++) {
		u64 e = entry(img, ARENA_S_PLANES, k);

		if (img->bytes[e + 24] > 1)
			return bad(img, e + 24);
		for (u64 i = 25; i < 32; i++)
			if (img->bytes[e + i])
				return bad(img, e + i);
	}
	return 0;
}

static int check_launch_pads(struct arena_image *img)
{
	for (u64 k = 0; k < img->count[ARENA_S_LAUNCHES]; k++) {
		u64 e = entry(img, ARENA_S_LAUNCHES, k);

		if (arena_image_u32(img, e + 20))
			return bad(img, e + 20);
	}
	return 0;
}

/* Frame values: repeat k owns frame_count * slot_count of them (exact). */
static int check_frame_runs(struct arena_image *img)
{
	u64 sum = 0, total = img->count[ARENA_S_FRAME_VALUES];

	for (u64 k = 0; k < img->count[ARENA_S_REPEATS]; k++) {
		u64 e = entry(img, ARENA_S_REPEATS, k);
		u64 slots = arena_image_u32(img, e + 36);
		u64 frames = arena_image_u64(img, e + 40);
		u128 owned = (u128)frames * slots;

		if (arena_image_u64(img, e + 48) != sum)
			return bad(img, e + 48);
		if (owned > total - sum)
			return bad(img, e + 40);
		sum += (u64)owned;
	}
	if (sum != total)
		return bad(img, HEADER_BYTES +
			   (u64)ARENA_S_FRAME_VALUES * ENTRY_BYTES + 16);
	return 0;
}

/**
 * arena_image_parse() - check an untrusted image's structure
 * @bytes: the image (any alignment); read only, never written
 * @size: its length in bytes
 * @img: filled with where each section lies; img->error_at on failure
 *
 * Return: 0, or -EINVAL naming the first malformed field's byte offset
 * in img->error_at.
 */
int arena_image_parse(const void *bytes, u64 size, struct arena_image *img)
{
	u64 pool_at = 0;
	int rc;

	*img = (struct arena_image){ .bytes = bytes, .size = size };
	rc = parse_header(img);
	if (!rc)
		rc = parse_sections(img);
	if (!rc)
		rc = check_strings(img, ARENA_S_WINDOWS, 0, &pool_at);
	if (!rc)
		rc = check_strings(img, ARENA_S_GLOBALS, 0, &pool_at);
	if (!rc)
		rc = check_strings(img, ARENA_S_PHASES, 0, &pool_at);
	if (!rc)
		rc = check_runs(img, ARENA_S_PHASES, 8, 4, 12, ARENA_S_PLANES);
	if (!rc)
		rc = check_strings(img, ARENA_S_PLANES, 0, &pool_at);
	if (!rc)
		rc = check_planes(img);
	if (!rc)
		rc = check_strings(img, ARENA_S_LAUNCHES, 0, &pool_at);
	if (!rc)
		rc = check_runs(img, ARENA_S_LAUNCHES, 8, 8, 16, ARENA_S_WORDS);
	if (!rc)
		rc = check_launch_pads(img);
	if (!rc && pool_at != img->count[ARENA_S_POOL])
		rc = bad(img, HEADER_BYTES +
			 (u64)ARENA_S_POOL * ENTRY_BYTES + 16);
	if (!rc)
		rc = check_runs(img, ARENA_S_REPEATS, 24, 4, 28, ARENA_S_DELTAS);
	if (!rc)
		rc = check_runs(img, ARENA_S_REPEATS, 32, 4, 36, ARENA_S_SLOTS);
	if (!rc)
		rc = check_frame_runs(img);
	return rc;
}

u64 arena_image_n_launches(const struct arena_image *img)
{
	return img->count[ARENA_S_LAUNCHES];
}

void arena_image_launch(const struct arena_image *img, u64 l,
			struct arena_launch *out)
{
	u64 e = entry(img, ARENA_S_LAUNCHES, l);

	out->word_first = arena_image_u64(img, e + 8);
	out->word_count = arena_image_u32(img, e + 16);
}

void arena_image_repeat(const struct arena_image *img, u64 r,
			struct arena_repeat *out)
{
	u64 e = entry(img, ARENA_S_REPEATS, r);

	out->first = arena_image_u64(img, e);
	out->count = arena_image_u64(img, e + 8);
	out->iterations = arena_image_u64(img, e + 16);
	out->delta_first = arena_image_u32(img, e + 24);
	out->delta_count = arena_image_u32(img, e + 28);
	out->slot_first = arena_image_u32(img, e + 32);
	out->slot_count = arena_image_u32(img, e + 36);
	out->frame_count = arena_image_u64(img, e + 40);
	out->frame_value_first = arena_image_u64(img, e + 48);
}

u64 arena_image_word(const struct arena_image *img, u64 w)
{
	return arena_image_u64(img, entry(img, ARENA_S_WORDS, w));
}

void arena_image_phase_planes(const struct arena_image *img, u64 ph,
			      u64 *first, u64 *count)
{
	u64 e = entry(img, ARENA_S_PHASES, ph);

	*first = arena_image_u32(img, e + 8);
	*count = arena_image_u32(img, e + 12);
}

void arena_image_plane(const struct arena_image *img, u64 k,
		       struct arena_plane *out)
{
	u64 e = entry(img, ARENA_S_PLANES, k);

	out->offset = arena_image_u64(img, e + 8);
	out->size = arena_image_u64(img, e + 16);
	out->carried = img->bytes[e + 24];
}

static u64 frame_value(const struct arena_image *img, u64 v)
{
	return arena_image_u64(img, entry(img, ARENA_S_FRAME_VALUES, v));
}

/**
 * arena_program_index_bytes() - caller memory arena_program_index() needs
 * @img: a parsed image
 *
 * Return: a multiple of 8, at most a small multiple of the image's size
 * (for memory 16-byte aligned, as malloc and kvmalloc give).
 */
u64 arena_program_index_bytes(const struct arena_image *img)
{
	u64 n = img->count[ARENA_S_LAUNCHES];
	u64 w = img->count[ARENA_S_REPEATS] ? img->count[ARENA_S_WORDS] : 0;

	return round8(n * sizeof(u32)) + (n + 1) * sizeof(u64) +
	       w * sizeof(s128) + round8(w * sizeof(u32)) +
	       round8(img->count[ARENA_S_PHASES] * sizeof(u32)) +
	       round8(n * sizeof(u32));
}

/* (launch, word) of repeat rep's body: the word's index, or -EINVAL. */
static int body_word(const struct arena_image *img,
		     const struct arena_repeat *rep, u64 launch,
		     u64 word, u64 *index)
{
	struct arena_launch la;

	if (launch < rep->first || launch - rep->first >= rep->count)
		return -EINVAL;
	arena_image_launch(img, launch, &la);
	if (word >= la.word_count)
		return -EINVAL;
	*index = la.word_first + word;
	return 0;
}

/* offset + size - 1 does not pass 2^64 - 1. */
static int fits(u64 offset, u64 size)
{
	return offset == 0 || size <= ARENA_U64_MAX - offset + 1;
}

/* The plan's well-formedness that needs no certificate (spec 1.1):
 * alignment a power of two in 1 .. 2^32, windows of at least a byte,
 * no range past 2^64.
 */
static int check_plan(struct arena_image *img)
{
	u64 a = arena_image_u64(img, 24);

	if (a == 0 || a > TWO_POW_32 || (a & (a - 1)))
		return bad(img, 24);
	for (u64 k = 0; k < img->count[ARENA_S_WINDOWS]; k++) {
		u64 e = entry(img, ARENA_S_WINDOWS, k);
		u64 size = arena_image_u64(img, e + 16);

		if (size == 0 || !fits(arena_image_u64(img, e + 8), size))
			return bad(img, e + 8);
	}
	for (int s = ARENA_S_GLOBALS; s <= ARENA_S_PLANES; s++) {
		if (s == ARENA_S_PHASES)
			continue;
		for (u64 k = 0; k < img->count[s]; k++) {
			u64 e = entry(img, s, k);

			if (!fits(arena_image_u64(img, e + 8),
				  arena_image_u64(img, e + 16)))
				return bad(img, e + 8);
		}
	}
	return 0;
}

/* Byte string a's order against b's: by length, then bytes. */
static int bytes_cmp(const u8 *a, u64 la, const u8 *b, u64 lb)
{
	if (la != lb)
		return la < lb ? -1 : 1;
	for (u64 i = 0; i < la; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

/* A byte string of the pool, at entry byte e (checked by check_strings). */
static const u8 *pool_string(const struct arena_image *img, u64 e, u64 *len)
{
	*len = arena_image_u32(img, e + 4);
	return img->bytes + img->offset[ARENA_S_POOL] + arena_image_u32(img, e);
}

/* Phase identity k's order against identity j's. */
static int identity_cmp(const struct arena_image *img, u32 k, u32 j)
{
	u64 lk, lj;
	const u8 *bk = pool_string(img, entry(img, ARENA_S_PHASES, k), &lk);
	const u8 *bj = pool_string(img, entry(img, ARENA_S_PHASES, j), &lj);

	return bytes_cmp(bk, lk, bj, lj);
}

static void sift_down(const struct arena_image *img, u32 *a, u64 at,
		      u64 n)
{
	for (;;) {
		u64 big = at, l = 2 * at + 1, r = l + 1;
		u32 t;

		if (l < n && identity_cmp(img, a[l], a[big]) > 0)
			big = l;
		if (r < n && identity_cmp(img, a[r], a[big]) > 0)
			big = r;
		if (big == at)
			return;
		t = a[at];
		a[at] = a[big];
		a[big] = t;
		at = big;
	}
}

/* Phase identities are distinct: heapsort (no recursion, no memory but
 * order[]) and compare neighbours.
 */
static int check_identities(struct arena_image *img, u32 *order)
{
	u64 n = img->count[ARENA_S_PHASES];

	for (u64 k = 0; k < n; k++)
		order[k] = (u32)k;
	for (u64 k = n / 2; k-- > 0;)
		sift_down(img, order, k, n);
	for (u64 end = n; end > 1; end--) {
		u32 t = order[0];

		order[0] = order[end - 1];
		order[end - 1] = t;
		sift_down(img, order, 0, end - 1);
	}
	for (u64 k = 1; k < n; k++)
		if (identity_cmp(img, order[k - 1], order[k]) == 0)
			return bad(img, entry(img, ARENA_S_PHASES,
					      order[k] > order[k - 1] ?
					      order[k] : order[k - 1]));
	return 0;
}

/* A protobuf varint at *pos of b[0, len): at most 10 bytes, below 2^64;
 * -EINVAL when truncated or too long.
 */
static int varint(const u8 *b, u64 len, u64 *pos, u64 *value)
{
	u64 v = 0;

	for (int i = 0; i < 10 && *pos < len; i++) {
		u8 c = b[(*pos)++];

		if (i == 9 && c > 1)
			return -EINVAL;
		v |= (u64)(c & 0x7f) << (7 * i);
		if (!(c & 0x80)) {
			*value = v;
			return 0;
		}
	}
	return -EINVAL;
}

/*
 * The phase identity a launch's source identity declares (spec 1.2): the
 * payload of its last field 51 when the whole identity parses as protobuf
 * wire format (fields 1 .. 2^29 - 1; wire types 0, 1, 2, 5) and every
 * field 51 is length-delimited.  0 with the payload in *at, *n bytes;
 * -EINVAL otherwise.
 * libarenacert's aci_identity_parse (certify/identity.c) is the certificate's
 * reading; fuzz_contract holds the two to the same phases.
 */
static int declared_phase(const u8 *id, u64 len, const u8 **at, u64 *n)
{
	u64 pos = 0, tag, size;
	int seen = 0, wrong_type = 0;

	while (pos < len) {
		if (varint(id, len, &pos, &tag) || (tag >> 3) < 1 ||
		    (tag >> 3) > (1u << 29) - 1)
			return -EINVAL;
		switch (tag & 7) {
		case 0:
			if (varint(id, len, &pos, &size))
				return -EINVAL;
			size = 0;
			break;
		case 1:
			size = 8;
			break;
		case 2:
			if (varint(id, len, &pos, &size))
				return -EINVAL;
			break;
		case 5:
			size = 4;
			break;
		default:
			return -EINVAL;
		}
		if (size > len - pos)
			return -EINVAL;
		if ((tag >> 3) == 51) {
			if ((tag & 7) == 2) {
				seen = 1;
				*at = id + pos;
				*n = size;
			} else {
				wrong_type = 1;
			}
		}
		pos += size;
	}
	return seen && !wrong_type ? 0 : -EINVAL;
}

/* Launch l's phase: its declared identity among p->phase_order (sorted),
 * by binary search; ARENA_NONE32 when it declares none of them.
 */
static u32 launch_phase(const struct arena_program *p, u64 l)
{
	const struct arena_image *img = p->image;
	u64 len, n = 0, lo = 0, hi = img->count[ARENA_S_PHASES];
	const u8 *id = pool_string(img, entry(img, ARENA_S_LAUNCHES, l), &len);
	const u8 *want = NULL;

	if (declared_phase(id, len, &want, &n))
		return ARENA_NONE32;
	while (lo < hi) {
		u64 mid = lo + (hi - lo) / 2, lm;
		u32 ph = p->phase_order[mid];
		const u8 *b = pool_string(img, entry(img, ARENA_S_PHASES, ph),
					  &lm);
		int c = bytes_cmp(b, lm, want, n);

		if (c == 0)
			return ph;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return ARENA_NONE32;
}

static int index_repeat(struct arena_program *p, u64 r)
{
	const struct arena_image *img = p->image;
	u64 n = img->count[ARENA_S_LAUNCHES], e;
	struct arena_repeat rep;

	arena_image_repeat(img, r, &rep);
	e = entry(img, ARENA_S_REPEATS, r);
	if (rep.count == 0 || rep.first > n || rep.count > n - rep.first)
		return bad((struct arena_image *)img, e + 8);
	if (rep.iterations == 0 || rep.iterations >= TWO_POW_32)
		return bad((struct arena_image *)img, e + 16);
	for (u64 l = rep.first; l < rep.first + rep.count; l++) {
		if (p->repeat_of[l] != ARENA_NONE32)   /* bodies overlap */
			return bad((struct arena_image *)img, e);
		p->repeat_of[l] = (u32)r;
	}
	for (u32 k = 0; k < rep.delta_count; k++) {
		u64 d = entry(img, ARENA_S_DELTAS, rep.delta_first + k), at;

		if (body_word(img, &rep, arena_image_u64(img, d),
			      arena_image_u64(img, d + 8), &at))
			return bad((struct arena_image *)img, d);
		p->delta_sum[at] += (s64)arena_image_u64(img, d + 16);
	}
	if (rep.frame_count == 0 && rep.slot_count != 0)
		return bad((struct arena_image *)img, e + 36);
	for (u32 k = 0; k < rep.slot_count; k++) {
		u64 s = entry(img, ARENA_S_SLOTS, rep.slot_first + k), at;

		if (body_word(img, &rep, arena_image_u64(img, s),
			      arena_image_u64(img, s + 8), &at))
			return bad((struct arena_image *)img, s);
		if (p->slot_of[at])                     /* two slots, one word */
			return bad((struct arena_image *)img, s);
		p->slot_of[at] = k + 1;
	}
	return 0;
}

/**
 * arena_program_index() - check the launch table's rules, index it
 * @p: filled; points into @img and @mem, which must outlive it
 * @img: a parsed image
 * @mem: arena_program_index_bytes(@img) bytes, 16-aligned, any contents
 *
 * Return: 0, or -EINVAL (img->error_at names the repeat, delta or slot).
 */
int arena_program_index(struct arena_program *p, const struct arena_image *img,
			void *mem)
{
	u64 n = img->count[ARENA_S_LAUNCHES];
	u64 w = img->count[ARENA_S_REPEATS] ? img->count[ARENA_S_WORDS] : 0;
	u8 *m = mem;
	int rc;

	*p = (struct arena_program){ .image = img };
	/* 16-byte members first: mem is 16-aligned */
	p->delta_sum = w ? (s128 *)m : NULL;
	m += w * sizeof(s128);
	p->executed_before = (u64 *)m;
	m += (n + 1) * sizeof(u64);
	p->repeat_of = (u32 *)m;
	m += round8(n * sizeof(u32));
	p->slot_of = w ? (u32 *)m : NULL;
	m += round8(w * sizeof(u32));
	p->phase_order = (u32 *)m;
	m += round8(img->count[ARENA_S_PHASES] * sizeof(u32));
	p->phase_of = (u32 *)m;
	rc = check_plan((struct arena_image *)img);
	if (!rc)
		rc = check_identities((struct arena_image *)img, p->phase_order);
	if (rc)
		return rc;
	for (u64 l = 0; l < n; l++)
		p->repeat_of[l] = ARENA_NONE32;
	for (u64 i = 0; i < w; i++) {
		p->delta_sum[i] = 0;
		p->slot_of[i] = 0;
	}
	for (u64 r = 0; r < img->count[ARENA_S_REPEATS]; r++) {
		rc = index_repeat(p, r);

		if (rc)
			return rc;
	}
	p->executed_before[0] = 0;
	for (u64 l = 0; l < n; l++) {
		struct arena_launch la;
		u64 weight = 1;

		if (p->repeat_of[l] != ARENA_NONE32) {
			struct arena_repeat rep;

			arena_image_repeat(img, p->repeat_of[l], &rep);
			weight = rep.iterations;
		}
		/* n < 2^32 launches of < 2^32 iterations: no wrap */
		p->executed_before[l + 1] = p->executed_before[l] + weight;
		p->phase_of[l] = launch_phase(p, l);
		arena_image_launch(img, l, &la);
		if (la.word_count > p->max_words)
			p->max_words = la.word_count;
	}
	return 0;
}

/* Whether a reference starting or ending at l cuts a body. */
static int cuts_body_at(const struct arena_program *p, u64 l)
{
	struct arena_repeat rep;

	if (l >= p->image->count[ARENA_S_LAUNCHES] ||
	    p->repeat_of[l] == ARENA_NONE32)
		return 0;
	arena_image_repeat(p->image, p->repeat_of[l], &rep);
	return rep.first != l;
}

int arena_ref_check(const struct arena_program *p, u64 first, u64 count,
		    u64 *executed)
{
	u64 n = p->image->count[ARENA_S_LAUNCHES], adds;

	if (count == 0 || first > n || count > n - first)
		return -EINVAL;
	if (cuts_body_at(p, first) || cuts_body_at(p, first + count))
		return -EINVAL;
	adds = p->executed_before[first + count] - p->executed_before[first];
	if (*executed >= ARENA_EXECUTED_LIMIT ||
	    adds >= ARENA_EXECUTED_LIMIT - *executed)
		return -EINVAL;
	*executed += adds;
	return 0;
}

int arena_words_at(const struct arena_program *p, u64 l, u64 t,
		   u64 *out)
{
	const struct arena_image *img = p->image;
	struct arena_launch la;
	struct arena_repeat rep;
	u32 r = p->repeat_of[l];

	arena_image_launch(img, l, &la);
	if (r != ARENA_NONE32)
		arena_image_repeat(img, r, &rep);
	for (u32 j = 0; j < la.word_count; j++) {
		u64 idx = la.word_first + j;
		s128 v = arena_image_word(img, idx);

		if (r != ARENA_NONE32) {
			u32 slot = p->slot_of[idx];

			if (slot)
				v = frame_value(img, rep.frame_value_first +
						(t % rep.frame_count) *
						rep.slot_count + slot - 1);
			v += (s128)t * p->delta_sum[idx];
			if (v < 0 || v > (s128)ARENA_U64_MAX)
				return -EFAULT;
		}
		out[j] = (u64)v;
	}
	return 0;
}
