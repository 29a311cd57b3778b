/* SPDX-License-Identifier: MIT */
/*
 * arena-infer - runs the example transformer on the arena device and
 * checks its output against the plain-C reference.
 *
 *   arena-infer [--uring] [--buggy] [--layers N] [--tokens T] [--decode K]
 *               [--write-image FILE] [--quiet]
 *
 * Plans the model (correctly, or with the buggy planner), decides the
 * plan's certificate and says what it found, loads the program on the
 * device, runs K forward passes (the same schedule submitted K times) by
 * ioctl or through io_uring, and compares the output with the reference.
 *
 * Exit status: 0 the output is within tolerance, 1 it is not, 2 a device
 * error (or a usage error, or no memory).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device.h"
#include "model.h"
#include "planner.h"

enum { EXIT_MATCH = 0, EXIT_MISMATCH = 1, EXIT_ERROR = 2 };

/* Every run uses the same weights and input. */
#define SEED 0x61726e61ull

struct options {
	enum device_path path;
	enum plan_kind kind;
	int layers, tokens, decode;
	int quiet;
	const char *image;     /* --write-image, or NULL */
};

static const char usage_text[] =
	"Usage: arena-infer [--uring] [--buggy] [--layers N] [--tokens T]\n"
	"                   [--decode K] [--write-image FILE] [--quiet]\n"
	"Run a small transformer on the arena device (/dev/accel/accel0)\n"
	"and compare its output with a plain-C reference.\n"
	"\n"
	"  --uring             append and submit through io_uring, not ioctl\n"
	"  --buggy             plan with the buggy planner (frees a workspace\n"
	"                      value after its first reader)\n"
	"  --layers N          layers, 1..64 (default 2)\n"
	"  --tokens T          tokens, 1..64 (default 8)\n"
	"  --decode K          forward passes, the schedule submitted K times\n"
	"                      (default 1)\n"
	"  --write-image FILE  also write the program, schedule included, as a\n"
	"                      binary image (for arena-certify)\n"
	"  --quiet, -q         print only the result line\n"
	"  --help, -h          show this help\n"
	"\n"
	"Exit status: 0 output within tolerance, 1 not, 2 device or usage error.\n";

/* ---- options ---- */

static int parse_count(const char *arg, int lo, int hi, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

static int bad_count(const char *option, int lo, int hi)
{
	fprintf(stderr, "arena-infer: %s takes a number in %d..%d\n", option,
		lo, hi);
	return -1;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_LAYERS = 256, OPT_TOKENS, OPT_DECODE, OPT_IMAGE };
	static const struct option longopts[] = {
		{ "uring", no_argument, NULL, 'u' },
		{ "buggy", no_argument, NULL, 'b' },
		{ "layers", required_argument, NULL, OPT_LAYERS },
		{ "tokens", required_argument, NULL, OPT_TOKENS },
		{ "decode", required_argument, NULL, OPT_DECODE },
		{ "write-image", required_argument, NULL, OPT_IMAGE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	*o = (struct options){ DEVICE_IOCTL, PLAN_CORRECT, 2, 8, 1, 0, NULL };

	int c;
	while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'u': o->path = DEVICE_URING; break;
		case 'b': o->kind = PLAN_BUGGY; break;
		case 'q': o->quiet = 1; break;
		case OPT_IMAGE: o->image = optarg; break;
		case OPT_LAYERS:
			if (parse_count(optarg, 1, MODEL_MAX_LAYERS, &o->layers))
				return bad_count("--layers", 1, MODEL_MAX_LAYERS);
			break;
		case OPT_TOKENS:
			if (parse_count(optarg, 1, MODEL_MAX_TOKENS, &o->tokens))
				return bad_count("--tokens", 1, MODEL_MAX_TOKENS);
			break;
		case OPT_DECODE:
			if (parse_count(optarg, 1, 1000000, &o->decode))
				return bad_count("--decode", 1, 1000000);
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(EXIT_MATCH);
		default:
			fputs(usage_text, stderr);
			return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "arena-infer: unexpected argument '%s'\n",
			argv[optind]);
		return -1;
	}
	return 0;
}

/* ---- the plan ---- */

static void describe_plan(const struct plan *plan, const struct model *m)
{
	const struct model_shape *s = &m->shape;
	printf("model: %d layers, %d tokens, width %d, %d heads of %d, "
	       "MLP %d\n", s->layers, s->tokens, s->width, s->heads,
	       s->head_dim, s->hidden);
	printf("plan (%s planner): %" PRIu32 " launches (a %" PRIu64
	       "-launch layer body repeated %" PRIu64 " times), %" PRIu32
	       " phases, %" PRIu32 " planes in a %" PRIu64
	       "-byte workspace at 0x%" PRIx64 "\n",
	       plan->kind == PLAN_BUGGY ? "buggy" : "correct",
	       plan->model.n_launches, plan->repeat.count,
	       plan->repeat.iterations, plan->model.n_phases,
	       plan->model.n_planes, plan->workspace_bytes,
	       plan->windows[WIN_WORKSPACE].base);
}

/* The certificate is reported, not enforced: the buggy build is meant to
 * reach the device, so that what it does there can be seen. */
static void report_certificate(const struct plan *plan)
{
	static char text[16384];
	uint64_t verdict = plan_certify(plan, NULL, text, sizeof(text));
	if (verdict == AC_NONE)
		printf("certificate: malformed program: %s\n", text);
	else
		printf("certificate: verdict %" PRIu64 "\n  %s\n", verdict,
		       text);
}

static int write_image(const struct plan *plan, const char *path)
{
	struct ac_error err;
	char text[512];
	size_t len;
	uint8_t *image = ac_model_write_image(&plan->model, &len, &err);
	if (!image) {
		fprintf(stderr, "arena-infer: %s: %s\n", path,
			ac_error_text(&err, text, sizeof(text)));
		return -1;
	}
	FILE *f = fopen(path, "wb");
	int ok = f && fwrite(image, 1, len, f) == len;
	if (f && fclose(f) != 0)
		ok = 0;
	free(image);
	if (!ok) {
		fprintf(stderr, "arena-infer: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- the device ---- */

static double seconds_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int run_on_device(const struct options *o, const struct plan *plan,
			 const struct model *m, float *out)
{
	struct device dev;
	int rc = device_open(&dev, o->path);
	if (rc != 0)
		return rc;
	if (!o->quiet)
		printf("device: %s, submitting by %s\n", dev.version,
		       o->path == DEVICE_URING ? "io_uring" : "ioctl");

	rc = device_load(&dev, plan, m);
	double start = seconds_now();
	for (int i = 0; i < o->decode && rc == 0; i++)
		rc = device_forward(&dev);
	double elapsed = seconds_now() - start;
	if (rc == 0)
		rc = device_read(&dev, plan->globals[G_OUTPUT].offset, out,
				 plan->globals[G_OUTPUT].size);
	if (rc == 0 && !o->quiet)
		printf("ran %d forward pass%s in %.3f ms (%.1f us each)\n",
		       o->decode, o->decode == 1 ? "" : "es", elapsed * 1e3,
		       elapsed * 1e6 / o->decode);
	device_close(&dev);
	return rc;
}

/* ---- the comparison ---- */

static int compare(const float *out, const float *ref, size_t n)
{
	double err = model_max_abs_error(out, ref, n);
	double tol = model_tolerance(ref, n);
	int ok = err <= tol;   /* false for NaN */
	printf("max abs error %.3g (tolerance %.3g): %s\n", err, tol,
	       ok ? "matches the reference" : "DOES NOT match the reference");
	return ok ? EXIT_MATCH : EXIT_MISMATCH;
}

/* ---- main ---- */

static int run(const struct options *o, struct model *m, struct plan *plan,
	       float *out, float *ref)
{
	if (!o->quiet) {
		describe_plan(plan, m);
		report_certificate(plan);
	}
	if (o->image && write_image(plan, o->image) != 0)
		return EXIT_ERROR;
	if (model_reference(m, ref) != 0) {
		fprintf(stderr, "arena-infer: out of memory\n");
		return EXIT_ERROR;
	}
	if (run_on_device(o, plan, m, out) != 0)
		return EXIT_ERROR;
	return compare(out, ref, model_io_floats(&m->shape));
}

int main(int argc, char **argv)
{
	struct options o;
	if (parse_options(argc, argv, &o) != 0)
		return EXIT_ERROR;

	struct model_shape shape = model_default_shape(o.layers, o.tokens);
	struct model m;
	struct plan plan;
	if (model_init(&m, &shape, SEED) != 0) {
		fprintf(stderr, "arena-infer: out of memory\n");
		return EXIT_ERROR;
	}
	if (plan_build(&plan, &shape, o.kind) != 0) {
		fprintf(stderr, "arena-infer: out of memory\n");
		model_free(&m);
		return EXIT_ERROR;
	}

	size_t n = model_io_floats(&shape);
	float *out = calloc(n, sizeof(float));
	float *ref = calloc(n, sizeof(float));
	int status = EXIT_ERROR;
	if (out && ref)
		status = run(&o, &m, &plan, out, ref);
	else
		fprintf(stderr, "arena-infer: out of memory\n");

	free(out);
	free(ref);
	plan_free(&plan);
	model_free(&m);
	return status;
}
