/* SPDX-License-Identifier: MIT */
/*
 * guard-jansson-alloc: an application that gives jansson an allocator of
 * its own (json_set_alloc_funcs) before its first request, then submits
 * a failing (D) schedule and a failing (C) program (test_records.c, under
 * the guard with log_format=json).
 *
 *   guard-jansson-alloc header   the allocator adds a 16-byte header
 *                                (malloc(n + 16), returns p + 16), so
 *                                libc's free of what it returned crashes
 *   guard-jansson-alloc fail     the allocator always fails
 *
 * Each check prints "ok: ..." or "FAIL: ..."; the exit status is 1 if any
 * failed.  The allocator counts its calls: the guard must make none (it
 * must neither call the application's allocator nor free what it
 * returned), so the count is 0 until this program uses jansson itself,
 * last, to show that its allocator was in place all along.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cdev.h"
#include "checks.h"
#include "progs.h"

#define HEADER 16
#define MAGIC 0x6a616e73736f6e21ull   /* "jansson!" */

static int failing;
static unsigned long calls;

static void *app_malloc(size_t n)
{
	calls++;
	if (failing || n > SIZE_MAX - HEADER)
		return NULL;
	unsigned char *p = malloc(n + HEADER);
	if (!p)
		return NULL;
	uint64_t magic = MAGIC;
	memcpy(p, &magic, sizeof(magic));
	return p + HEADER;
}

static void app_free(void *q)
{
	if (!q)
		return;
	calls++;
	unsigned char *p = (unsigned char *)q - HEADER;
	uint64_t magic;
	memcpy(&magic, p, sizeof(magic));
	if (magic != MAGIC)
		abort();   /* not this allocator's: a bug, loudly */
	memset(p, 0, sizeof(magic));
	free(p);
}

int main(int argc, char **argv)
{
	if (argc != 2 ||
	    (strcmp(argv[1], "header") && strcmp(argv[1], "fail"))) {
		check(0, "usage: guard-jansson-alloc header|fail");
		return 1;
	}
	failing = !strcmp(argv[1], "fail");
	/* The images first: progs.c builds them with jansson. */
	size_t good_len, bad_len;
	uint8_t *good_image = prog_image(PROG_GOOD, &good_len);
	uint8_t *bad_image = prog_image(PROG_BAD_C, &bad_len);
	json_set_alloc_funcs(app_malloc, app_free);

	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	uint32_t good = 0, bad_c = 0;
	int rc = cdev_program(&d, good_image, good_len, &good);
	check(rc == 0, "program create: %d", rc);
	uint32_t bad_d = schedule(&d, good, prog_bad_d_refs, 4);
	uint64_t seqno = 0;
	rc = cdev_submit(&d, bad_d, &seqno);
	check(rc == -EPERM, "(D) schedule blocked: %d", rc);
	rc = cdev_program(&d, bad_image, bad_len, &bad_c);
	check(rc == 0, "program create: %d", rc);
	uint32_t s_c = schedule(&d, bad_c, prog_good_refs, 2);
	rc = cdev_submit(&d, s_c, &seqno);
	check(rc == -EPERM, "(C) program blocked: %d", rc);
	uint32_t s = schedule(&d, good, prog_good_refs, 2);
	rc = cdev_run(&d, s);
	check(rc == 0, "certified schedule runs: %d", rc);
	cdev_close(&d);
	free(good_image);
	free(bad_image);
	check(calls == 0, "the guard never called the application's jansson "
	      "allocator (%lu calls)", calls);

	/* The application's own jansson goes through its allocator. */
	json_t *o = json_pack("{s:i}", "n", 1);
	char *text = o ? json_dumps(o, 0) : NULL;
	if (failing) {
		check(!o && calls > 0, "the failing allocator was in place");
	} else {
		check(text && !strcmp(text, "{\"n\": 1}") && calls > 0,
		      "the allocator was in place");
		app_free(text);
	}
	json_decref(o);
	return failures ? 1 : 0;
}
