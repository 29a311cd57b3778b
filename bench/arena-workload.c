/* SPDX-License-Identifier: MIT */
/*
 * arena-workload: writes a workload (bench/workload/workload.h) as a
 * binary program image, or as JSON with --json.
 *
 *   arena-workload KIND [--words N] [--repeat] [--fault reuse|stride]
 *                  [--json] [-o FILE]
 *
 * KIND is vit, decode or adjoint; N the target parameter words (an
 * integer, or 1e6-style); FILE defaults to standard output.  A line on
 * standard error says what was built and the verdict it must get.
 */
#define _POSIX_C_SOURCE 200809L  /* isatty */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: arena-workload vit|decode|adjoint [--words N] "
		   "[--repeat] [--fault reuse|stride] [--json] [-o FILE]\n");
}

/* A positive whole count, written 1000000 or 1e6. */
static int parse_count(const char *text, uint64_t *out)
{
	char *end;
	errno = 0;
	double v = strtod(text, &end);
	if (errno || *end || v < 1 || v > 1e12 || v != (double)(uint64_t)v)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

struct options {
	struct workload_spec spec;
	int json;
	const char *out;
};

static int parse_options(int argc, char **argv, struct options *o)
{
	*o = (struct options){ .spec = { .words = 100000 }, .out = "-" };
	if (argc < 2 || workload_kind_parse(argv[1]) < 0)
		return -1;
	o->spec.kind = (enum workload_kind)workload_kind_parse(argv[1]);
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		int has_value = i + 1 < argc;
		if (strcmp(a, "--repeat") == 0) {
			o->spec.repeat = 1;
		} else if (strcmp(a, "--json") == 0) {
			o->json = 1;
		} else if (strcmp(a, "--words") == 0 && has_value) {
			if (parse_count(argv[++i], &o->spec.words) != 0)
				return -1;
		} else if (strcmp(a, "--fault") == 0 && has_value) {
			int f = workload_fault_parse(argv[++i]);
			if (f < 0)
				return -1;
			o->spec.fault = (enum workload_fault)f;
		} else if (strcmp(a, "-o") == 0 && has_value) {
			o->out = argv[++i];
		} else {
			return -1;
		}
	}
	return 0;
}

static int write_all(const char *path, const void *data, size_t len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "wb");
	if (!f)
		return -1;
	int ok = fwrite(data, 1, len, f) == len;
	if (f == stdout)
		ok = fflush(f) == 0 && ok;
	else
		ok = fclose(f) == 0 && ok;
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct options o;
	if (argc == 2 && strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return 0;
	}
	if (parse_options(argc, argv, &o) != 0) {
		usage(stderr);
		return 2;
	}
	if (!o.json && strcmp(o.out, "-") == 0 && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "arena-workload: not writing a binary image to "
			"a terminal: use -o FILE or --json\n");
		return 2;
	}
	const char *why = NULL;
	struct workload *w = workload_new(&o.spec, &why);
	if (!w) {
		fprintf(stderr, "arena-workload: %s\n", why);
		return 2;
	}
	struct ac_error err;
	size_t len;
	void *data;
	if (o.json)
		data = ac_model_write_json(&w->model, &len, &err);
	else
		data = ac_model_write_image(&w->model, &len, &err);
	if (!data) {
		char text[512];
		fprintf(stderr, "arena-workload: %s\n",
			ac_error_text(&err, text, sizeof(text)));
		workload_free(w);
		return 2;
	}
	fprintf(stderr, "arena-workload: %s %s (%s): %" PRIu64 " words, %u "
		"launches, verdict %" PRIu64 "; %zu bytes of %s to %s\n",
		workload_kind_name(o.spec.kind),
		workload_fault_name(o.spec.fault), w->shape, w->model.n_words,
		w->model.n_launches, w->verdict, len,
		o.json ? "JSON" : "program image", o.out);
	int failed = write_all(o.out, data, len);
	if (failed)
		fprintf(stderr, "arena-workload: %s: %s\n", o.out,
			strerror(errno));
	free(data);
	workload_free(w);
	return failed ? 2 : 0;
}
