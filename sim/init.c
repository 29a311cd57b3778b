/* SPDX-License-Identifier: MIT */
/*
 * Start-up: find the real libc functions behind ours, read the options,
 * and own the one lock of the device.
 *
 * Initialisation is lazy (pthread_once from every entry point) and also
 * runs from a constructor, so that the real functions are known before
 * the application's own constructors call open().  It does nothing but
 * dlsym: a process that never touches the device pays nothing else and
 * has nothing to tear down.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "atfork_first.h"
#include "next.h"
#include "sim.h"
#include "usercopy.h"

struct sim_real sim_real;
int sim_poison;
int sim_require_seal;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The lock, then the pipes of copies in flight (usercopy.h); the child
 * closes those of other threads' copies. */
static void fork_prepare(void)
{
	pthread_mutex_lock(&lock);
	usercopy_fork_prepare();
}

static void fork_parent(void)
{
	usercopy_fork_parent();
	pthread_mutex_unlock(&lock);
}

static void fork_child(void)
{
	usercopy_forked();
	pthread_mutex_unlock(&lock);
}

/* A kernel driver serves whatever runs around fork: the device's fork
 * handlers are registered before any other library's (atfork_first.h),
 * whose handlers may submit, and before the guard's, whose registration
 * goes through this module's when the guard is preloaded before it. */
ATFORK_FIRST(fork_prepare, fork_parent, fork_child)

static void resolve(void)
{
	preload_enter();
	sim_real.close = (int (*)(int))preload_next("close");
	sim_real.ioctl = (int (*)(int, unsigned long, ...))preload_next("ioctl");
	sim_real.mmap = (void *(*)(void *, size_t, int, int, int, off_t))
		preload_next("mmap");
	interpose_resolve();
	/* A fork while another thread holds the lock must not leave the
	 * child's copy locked forever. */
	atfork_first();
	preload_leave();
}

/* Options are read when the device is first opened, not at start-up:
 * a preloaded sanitizer runtime calls mmap (and so sim_init) before the
 * environment is set up. */
static pthread_once_t options_once = PTHREAD_ONCE_INIT;

/* An option is on when set to anything but "" or "0". */
static int option(const char *name)
{
	const char *v = getenv(name);
	return v && *v && strcmp(v, "0") != 0;
}

static void read_options(void)
{
	sim_poison = option("ARENASIM_POISON");
	sim_require_seal = option("ARENASIM_REQUIRE_SEAL");
}

void sim_options(void)
{
	pthread_once(&options_once, read_options);
}

void sim_init(void)
{
	pthread_once(&once, resolve);
}

__attribute__((constructor)) static void sim_constructor(void)
{
	sim_init();
}

void sim_lock(void)
{
	pthread_mutex_lock(&lock);
	preload_enter();
}

void sim_unlock(void)
{
	preload_leave();
	pthread_mutex_unlock(&lock);
}
