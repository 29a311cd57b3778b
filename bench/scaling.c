/* SPDX-License-Identifier: MIT */
/* The certification benchmark over the workloads (scaling.h). */
#define _GNU_SOURCE             /* malloc_trim */
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "naive.h"
#include "scaling.h"
#include "timing.h"
#include "workload.h"

const struct workload_row workload_rows[WORKLOAD_ROWS] = {
	{ "vit", WORKLOAD_VIT, 0 },
	{ "vit-repeat", WORKLOAD_VIT, 1 },
	{ "decode", WORKLOAD_DECODE, 0 },
	{ "adjoint", WORKLOAD_ADJOINT, 0 },
};
#define MAX_SIZES 12
#define MAX_REPS 41
#define SAMPLE_SECONDS 20e-6    /* run tiny cases in loops this long */
#define ROW_SECONDS 0.3         /* more rounds while a row costs less */

/* One measured program. */
struct result {
	uint64_t words, launches, image_bytes, expected, verdict;
	int reps;
	double hash, read_certify, copy_certify, certify;  /* seconds */
	double naive;           /* seconds, or < 0 when not run */
	const char *naive_note; /* why not, or "" */
	int64_t peak;           /* bytes, or -1 when unknown */
};

/* What the timed functions work on. */
struct subject {
	const uint8_t *image;
	size_t len;
	const struct ac_model *model;
	uint64_t verdict;
};

typedef double (*timed_fn)(struct subject *s);

static volatile uint64_t hash_sink;     /* keeps the hash computed */

static double time_hash(struct subject *s)
{
	double t0 = timing_now();
	XXH128_hash_t h = XXH3_128bits(s->image, s->len);
	double t = timing_now() - t0;
	hash_sink = h.low64;
	return t;
}

typedef int (*reader)(const void *, size_t, struct ac_model **,
		      struct ac_error *);

/* Read and certify are timed; freeing the model is not. */
static double time_reader(struct subject *s, reader read)
{
	struct ac_model *m = NULL;
	double t0 = timing_now();
	if (read(s->image, s->len, &m, NULL) != 0 ||
	    ac_certify(m, &s->verdict, NULL, NULL) != 0)
		s->verdict = AC_NONE;
	double t = timing_now() - t0;
	ac_model_free(m);
	return t;
}

double time_view_certify(const uint8_t *image, size_t len,
			 const struct ac_options *opt, double (*clock)(void),
			 uint64_t *verdict)
{
	struct ac_model *m = NULL;
	ac_schedule *sched = NULL;
	double t0 = clock();
	ac_program *p = ac_program_view_image(image, len, opt, &m, NULL);
	if (p && (sched = ac_schedule_new(p)) &&
	    ac_schedule_append(sched, m->refs, (size_t)m->n_refs, NULL) == 0)
		*verdict = ac_schedule_verdict(sched, NULL);
	else
		*verdict = AC_NONE;
	double t = clock() - t0;
	ac_schedule_free(sched);
	ac_program_free(p);
	ac_model_free(m);
	return t;
}

static double time_read_certify(struct subject *s)
{
	return time_view_certify(s->image, s->len, NULL, timing_now,
				 &s->verdict);
}

/* The image copied into a model that owns its arrays. */
static double time_copy_certify(struct subject *s)
{
	return time_reader(s, ac_model_read_image);
}

static double time_certify(struct subject *s)
{
	double t0 = timing_now();
	if (ac_certify(s->model, &s->verdict, NULL, NULL) != 0)
		s->verdict = AC_NONE;
	return timing_now() - t0;
}

/* How many calls make one sample of fn last SAMPLE_SECONDS, so that
 * microsecond cases are not clock noise; *cost is the sample's time.
 * Samples stay short otherwise: on a shared machine a long one is likely
 * to include a preemption, and the median discards short ones that do. */
static int calls_per_sample(timed_fn fn, struct subject *s, double *cost)
{
	double once = fn(s);
	int calls = once >= SAMPLE_SECONDS ? 1 :
		    (int)(SAMPLE_SECONDS / (once > 1e-8 ? once : 1e-8)) + 1;
	*cost = once * calls;
	return calls;
}

static double sample(timed_fn fn, struct subject *s, int calls)
{
	double sum = 0;
	for (int i = 0; i < calls; i++)
		sum += fn(s);
	return sum / calls;
}

/*
 * Medians over rounds of each measure: at least reps, more (up to
 * MAX_REPS) while a row costs under ROW_SECONDS.  Each round takes one
 * sample of each measure, so that all see the same machine: on a shared
 * machine the load changes from second to second.
 */
enum { M_HASH, M_READ, M_COPY, M_CERTIFY, MEASURES };

static void time_rounds(struct subject *s, int reps, struct result *r)
{
	const timed_fn fn[MEASURES] = {
		time_hash, time_read_certify, time_copy_certify, time_certify,
	};
	double samples[MEASURES][MAX_REPS];
	int calls[MEASURES];
	uint64_t verdict[MEASURES];
	double round_cost = 0, cost;
	for (int k = 0; k < MEASURES; k++) {
		calls[k] = calls_per_sample(fn[k], s, &cost);
		round_cost += cost;
	}
	while (reps < MAX_REPS && (reps + 1) * round_cost < ROW_SECONDS)
		reps++;
	r->reps = reps;
	for (int round = 0; round < reps; round++)
		for (int k = 0; k < MEASURES; k++) {
			s->verdict = AC_NONE;
			samples[k][round] = sample(fn[k], s, calls[k]);
			verdict[k] = s->verdict;
		}
	r->hash = timing_median(samples[M_HASH], (size_t)reps);
	r->read_certify = timing_median(samples[M_READ], (size_t)reps);
	r->copy_certify = timing_median(samples[M_COPY], (size_t)reps);
	r->certify = timing_median(samples[M_CERTIFY], (size_t)reps);
	int agree = verdict[M_READ] == verdict[M_CERTIFY] &&
		    verdict[M_COPY] == verdict[M_CERTIFY];
	r->verdict = agree ? verdict[M_CERTIFY] : AC_NONE;
}

/* A line of /proc/self/status in bytes ("VmRSS:"), or -1. */
static int64_t status_bytes(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int64_t kb = -1;
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, key, strlen(key)) == 0)
			kb = strtoll(line + strlen(key), NULL, 10);
	if (f)
		fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

/* Resets the peak resident size (VmHWM) to the current one (Linux). */
static int reset_peak(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	if (!f)
		return -1;
	int ok = fputs("5", f) >= 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/*
 * The resident memory ac_program_new() and the schedule add at their
 * peak: the growth of VmHWM over VmRSS once free heap pages went back to
 * the system.  Coarse (pages, transparent huge pages), so only large
 * programs give a meaningful ratio.
 */
static int64_t certify_peak(const struct ac_model *m)
{
	malloc_trim(0);
	int64_t base = status_bytes("VmRSS:");
	if (base < 0 || reset_peak() != 0)
		return -1;
	ac_program *p = ac_program_new(m, NULL);
	ac_schedule *s = p ? ac_schedule_new(p) : NULL;
	if (s)
		ac_schedule_append(s, m->refs, m->n_refs, NULL);
	int64_t peak = status_bytes("VmHWM:");
	ac_schedule_free(s);
	ac_program_free(p);
	return peak < 0 ? -1 : peak - base;
}

static const char naive_disagrees[] = "DISAGREES";

static void run_naive(struct result *r, const struct ac_model *m, int wanted,
		      int reps)
{
	r->naive = -1;
	r->naive_note = "";
	if (!wanted) {
		r->naive_note = "not run (size)";
		return;
	}
	double t0 = timing_now();
	uint64_t v;
	int rc = naive_certify(m, &v);
	double once = timing_now() - t0;
	if (rc == NAIVE_TOO_BIG) {
		r->naive_note = "too big to unroll";
		return;
	}
	if (rc != 0 || v != r->expected) {
		r->naive_note = naive_disagrees;
		return;
	}
	/* Slow runs count once; fast ones get a median like the rest. */
	double samples[MAX_REPS];
	samples[0] = once;
	int n = once > 0.1 ? 1 : reps;
	for (int i = 1; i < n; i++) {
		t0 = timing_now();
		naive_certify(m, &v);
		samples[i] = timing_now() - t0;
	}
	r->naive = timing_median(samples, (size_t)n);
}

/* The image of a generated workload; the workload is freed at once so
 * that only the image and what is measured stay resident. */
static uint8_t *generate(const struct workload_spec *spec, struct result *r,
			 size_t *len)
{
	const char *why = NULL;
	struct workload *w = workload_new(spec, &why);
	if (!w) {
		fprintf(stderr, "bench-certify: %s\n", why);
		exit(2);
	}
	struct ac_error err;
	uint8_t *image = ac_model_write_image(&w->model, len, &err);
	if (!image) {
		char text[512];
		fprintf(stderr, "bench-certify: %s\n",
			ac_error_text(&err, text, sizeof(text)));
		exit(2);
	}
	r->words = w->model.n_words;
	r->launches = w->model.n_launches;
	r->expected = w->verdict;
	r->image_bytes = *len;
	workload_free(w);
	return image;
}

static void measure(const struct workload_spec *spec,
		    const struct scaling_options *o, struct result *r)
{
	size_t len;
	uint8_t *image = generate(spec, r, &len);
	struct ac_model *model = NULL;
	if (ac_model_read_image(image, len, &model, NULL) != 0)
		abort();        /* the library's own writer wrote it */
	struct subject s = { image, len, model, AC_NONE };
	time_rounds(&s, r->words >= 10000000 ? 3 : o->reps, r);
	r->peak = certify_peak(model);
	run_naive(r, model, spec->words <= o->naive_words, r->reps);
	ac_model_free(model);
	free(image);
}

/* ---- output ------------------------------------------------------------ */

static const char tsv_header[] =
	"workload\tfault\ttarget_words\twords\tlaunches\timage_bytes\t"
	"verdict\treps\thash_s\tread_certify_s\tcertify_s\t"
	"read_certify_per_hash\tcertify_per_hash\tnaive_s\tnaive_speedup\t"
	"naive_note\tpeak_bytes\tpeak_per_image\tcopy_read_certify_s\n";

static void print_tsv(FILE *f, const char *name, const char *fault,
		      uint64_t target, const struct result *r)
{
	fprintf(f, "%s\t%s\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64
		"\t%" PRIu64 "\t%d\t%.9f\t%.9f\t%.9f\t%.3f\t%.3f\t", name,
		fault, target, r->words, r->launches, r->image_bytes,
		r->verdict, r->reps, r->hash, r->read_certify, r->certify,
		r->read_certify / r->hash, r->certify / r->hash);
	if (r->naive >= 0)
		fprintf(f, "%.9f\t%.1f\t", r->naive, r->naive / r->certify);
	else
		fprintf(f, "-\t-\t");
	fprintf(f, "%s\t", r->naive_note[0] ? r->naive_note : "-");
	if (r->peak >= 0)
		fprintf(f, "%" PRId64 "\t%.2f\t", r->peak,
			(double)r->peak / r->image_bytes);
	else
		fprintf(f, "-\t-\t");
	fprintf(f, "%.9f\n", r->copy_certify);
	fflush(f);
}

/* A duration with a unit that keeps three digits. */
static const char *span(double s, char *buf, size_t len)
{
	if (s < 1e-3)
		snprintf(buf, len, "%.1f us", s * 1e6);
	else if (s < 1)
		snprintf(buf, len, "%.2f ms", s * 1e3);
	else
		snprintf(buf, len, "%.2f s", s);
	return buf;
}

static void print_row(const char *name, const char *fault,
		      const struct result *r)
{
	char h[32], rc[32], cc[32], c[32], n[48];
	if (r->naive >= 0) {
		char t[32];
		snprintf(n, sizeof(n), "%s (x%.0f)",
			 span(r->naive, t, sizeof(t)), r->naive / r->certify);
	} else {
		snprintf(n, sizeof(n), "%s", r->naive_note);
	}
	printf("%-10s %-6s %10" PRIu64 " %11" PRIu64 " %10s %10s %10s %10s "
	       "%5.2f %5.2f  %-20s%s\n", name, fault, r->words, r->image_bytes,
	       span(r->hash, h, sizeof(h)),
	       span(r->read_certify, rc, sizeof(rc)),
	       span(r->copy_certify, cc, sizeof(cc)),
	       span(r->certify, c, sizeof(c)), r->read_certify / r->hash,
	       r->certify / r->hash, n,
	       r->verdict == r->expected ? "" : "  VERDICT DIFFERS");
	fflush(stdout);
}

/* What the summary says about one workload. */
struct fit {
	double words[MAX_SIZES], hash[MAX_SIZES], read_certify[MAX_SIZES],
		certify[MAX_SIZES];     /* sound programs, by size */
	size_t n;
	double worst, largest;  /* read+certify / hash: every row; the
				 * largest size's rows */
};

static void add_to_fit(struct fit *fit, enum workload_fault fault,
		       const struct result *r, int largest)
{
	double ratio = r->read_certify / r->hash;
	if (ratio > fit->worst)
		fit->worst = ratio;
	if (largest && ratio > fit->largest)
		fit->largest = ratio;
	if (fault != WORKLOAD_SOUND || fit->n == MAX_SIZES)
		return;
	fit->words[fit->n] = (double)r->words;
	fit->hash[fit->n] = r->hash;
	fit->read_certify[fit->n] = r->read_certify;
	fit->certify[fit->n++] = r->certify;
}

static void print_fit(const char *name, const struct fit *f)
{
	if (f->n < 2) {
		printf("%-10s (one size: no slope)\n", name);
		return;
	}
	printf("%-10s %12.3f %8.3f %6.3f %14.2f %12.2f\n", name,
	       timing_loglog_slope(f->words, f->read_certify, f->n),
	       timing_loglog_slope(f->words, f->certify, f->n),
	       timing_loglog_slope(f->words, f->hash, f->n), f->worst,
	       f->largest);
}

static int run_workload(const struct workload_row *row,
			const struct scaling_options *o, struct fit *fit)
{
	int differs = 0;
	for (uint64_t target = 1000; target <= o->max_words; target *= 10) {
		for (int f = 0; f < WORKLOAD_FAULTS; f++) {
			struct workload_spec spec = {
				row->kind, (enum workload_fault)f, target,
				row->repeat,
			};
			struct result r;
			measure(&spec, o, &r);
			const char *fault = workload_fault_name(spec.fault);
			print_row(row->name, fault, &r);
			if (o->tsv)
				print_tsv(o->tsv, row->name, fault, target, &r);
			differs += r.verdict != r.expected ||
				   r.naive_note == naive_disagrees;
			add_to_fit(fit, spec.fault, &r,
				   target * 10 > o->max_words);
		}
	}
	return differs;
}

int scaling_run(const struct scaling_options *o)
{
	if (o->tsv)
		fputs(tsv_header, o->tsv);
	printf("%-10s %-6s %10s %11s %10s %10s %10s %10s %5s %5s  %s\n",
	       "workload", "fault", "words", "image B", "hash", "read+cert",
	       "copy+cert", "certify", "r+c/h", "c/h", "naive (speed-up)");
	struct fit fits[WORKLOAD_ROWS] = { { .n = 0 } };
	int differs = 0;
	for (size_t i = 0; i < WORKLOAD_ROWS; i++)
		if (!o->only || strcmp(o->only, workload_rows[i].name) == 0)
			differs += run_workload(&workload_rows[i], o, &fits[i]);
	printf("\nlog-log slopes of time vs words (sound programs), and "
	       "read+certify / hash (every variant):\n");
	printf("%-10s %12s %8s %6s %14s %12s\n", "workload", "read+certify",
	       "certify", "hash", "worst ratio", "at largest");
	for (size_t i = 0; i < WORKLOAD_ROWS; i++)
		if (!o->only || strcmp(o->only, workload_rows[i].name) == 0)
			print_fit(workload_rows[i].name, &fits[i]);
	return differs;
}
