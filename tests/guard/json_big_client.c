/* SPDX-License-Identifier: MIT */
/*
 * guard-json-big: an application whose failing program's record is big
 * and odd under log_format=json (attack on issue 27 item 9's writer):
 *
 *   guard-json-big GLOBALS THREADS
 *
 * Each of THREADS threads opens the device, creates a (C)-failing program
 * with GLOBALS extra globals outside the window (one advisory each, so a
 * record far larger than a pipe's buffer), named with NUL bytes, invalid
 * UTF-8, overlong forms, surrogates and quotes, distinct per thread (so
 * each thread's record is its own), and submits it: every submit must be
 * refused.  Prints "ok: ..." or "FAIL: ..."; exit status 1 if any failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arenaguard/program.h>

#include "cdev.h"
#include "checks.h"
#include "progs.h"

static unsigned n_globals;

/* Odd names: NUL, invalid and overlong UTF-8, a surrogate, controls. */
static const char *const odd[] = {
	"n\0ul", "\xff\xfe", "\xc0\xaf", "\xed\xa0\x80", "\"\\\n\x01\x7f",
	"\xf4\x90\x80\x80", "\xe2\x82", "ok\xc3\xa9",
};
static const uint32_t odd_len[] = { 4, 2, 2, 3, 5, 4, 2, 4 };

static void *run(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	size_t len;
	uint8_t *base_image = prog_image(PROG_BAD_C, &len);
	struct ac_model *m = NULL;
	if (ac_model_read_image(base_image, len, &m, NULL) != 0)
		abort();
	struct ac_model big = *m;
	uint32_t n = m->n_globals + n_globals;
	struct ac_tensor *g = calloc(n, sizeof(*g));
	char (*names)[96] = calloc(n, sizeof(*names));
	memcpy(g, m->globals, m->n_globals * sizeof(*g));
	for (uint32_t i = m->n_globals; i < n; i++) {
		uint32_t k = i % (sizeof(odd) / sizeof(odd[0]));
		int w = snprintf(names[i], sizeof(names[i]), "t%u-g%u-", id, i);
		memcpy(names[i] + w, odd[k], odd_len[k]);
		g[i].name.data = (const uint8_t *)names[i];
		g[i].name.len = (uint32_t)w + odd_len[k];
		g[i].offset = 0x100000 + 64ull * i;
		g[i].size = 64;
	}
	big.globals = g;
	big.n_globals = n;
	uint8_t *image = ac_model_write_image(&big, &len, NULL);
	if (!image)
		abort();

	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	uint32_t prog = 0;
	int rc = cdev_program(&d, image, len, &prog);
	check(rc == 0, "thread %u: program create: %d", id, rc);
	uint32_t s = schedule(&d, prog, prog_good_refs, 2);
	uint64_t seqno = 0;
	rc = cdev_submit(&d, s, &seqno);
	check(rc == -EPERM, "thread %u: (C) program blocked: %d", id, rc);
	cdev_close(&d);
	free(image);
	free(base_image);
	free(g);
	free(names);
	ac_model_free(m);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		check(0, "usage: guard-json-big GLOBALS THREADS");
		return 1;
	}
	n_globals = (unsigned)atoi(argv[1]);
	unsigned threads = (unsigned)atoi(argv[2]);
	pthread_t t[64];
	if (threads < 1 || threads > 64)
		return 1;
	for (unsigned i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, run, (void *)(uintptr_t)i);
	for (unsigned i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	return failures ? 1 : 0;
}
