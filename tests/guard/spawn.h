/* SPDX-License-Identifier: MIT */
/*
 * Running a program as a child with a chosen environment (the guard and
 * the simulator preloaded, ARENAGUARD* set), capturing what it says.
 */
#ifndef GUARD_TESTS_SPAWN_H
#define GUARD_TESTS_SPAWN_H

#include <stddef.h>

struct run {
	int status;        /* exit status, or 128 + signal */
	char *out, *err;   /* everything written, NUL-terminated */
};

/* Environments: LD_PRELOAD and ARENAGUARD* are cleared, then `env`
 * ("NAME=value" strings, NULL-terminated) applied. */
#define PRELOAD_SIM "LD_PRELOAD=" AG_PRELOAD_FIRST AG_ARENASIM
#define PRELOAD_GUARD "LD_PRELOAD=" AG_PRELOAD_FIRST AG_GUARD_LIB " " AG_ARENASIM

void spawn(struct run *r, const char *const env[], const char *const argv[]);
/* The same, with setup(arg) run in the child just before the exec (its
 * standard streams, limits and signals as the test wants them). */
void spawn_setup(struct run *r, const char *const env[],
		 const char *const argv[], void (*setup)(void *), void *arg);
void run_free(struct run *r);

/* guard-client with args (a NULL-terminated list after the program
 * name) and extra environment; and that it exited 0 with no FAIL. */
void client(struct run *r, const char *const env[], const char *const args[]);
void assert_clean(const struct run *r);

/* Occurrences of needle in haystack. */
int count(const char *haystack, const char *needle);

/* A scratch directory for the current test; paths inside it. */
const char *scratch(void);
const char *scratch_path(const char *name);
void scratch_remove(void);

/* A whole file, NUL-terminated ("" if it cannot be read); free(). */
char *slurp(const char *path);

/* Everything in a pipe's read end now (fd is made non-blocking),
 * NUL-terminated; free(). */
char *pipe_drain(int fd);

#endif
