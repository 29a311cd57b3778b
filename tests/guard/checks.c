/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"

atomic_int failures;

void check(int ok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("%s: ", ok ? "ok" : "FAIL");
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	va_end(ap);
	if (!ok)
		atomic_fetch_add(&failures, 1);
}

void open_or_exit(struct cdev *d, enum cpath path)
{
	int rc = cdev_open(d, path);
	if (rc) {
		printf("FAIL: cannot open the device: %s\n", strerror(-rc));
		exit(1);
	}
}

uint32_t program(struct cdev *d, enum prog_kind kind)
{
	size_t len;
	uint8_t *image = prog_image(kind, &len);
	uint32_t h = 0;
	int rc = cdev_program(d, image, len, &h);
	free(image);
	check(rc == 0, "program create: %d", rc);
	return h;
}

uint32_t schedule(struct cdev *d, uint32_t prog, const struct ac_ref *refs,
		  uint32_t n)
{
	uint32_t s = 0;
	int rc = cdev_schedule(d, prog, &s);
	if (rc == 0)
		rc = cdev_append(d, s, refs, n);
	check(rc == 0, "schedule create and append: %d", rc);
	return s;
}
