/* SPDX-License-Identifier: MIT */
/*
 * guard-dlopen-uring: a program not linked against liburing that loads
 * it at run time (dlopen, RTLD_GLOBAL, as a plugin's loader does) and
 * sets up and tears down a ring through it, calling the functions the
 * global scope binds (the guard's, when preloaded: test_ring.c,
 * test_uring_dlopened); with a plugin's path, the plugin's own liburing
 * (RTLD_LOCAL).  Prints "ok", or "FAIL" and why (exit 1).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

#include <liburing.h>

/* guard-dlopen-uring PLUGIN: the plugin (uring_plugin.c) loaded with
 * RTLD_LOCAL sets up and tears down a ring. */
static int plugin(const char *path)
{
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	int (*ring)(void) = lib ? (int (*)(void))dlsym(lib, "plugin_ring")
				: NULL;
	if (!ring) {
		printf("FAIL %s: %s\n", path, dlerror());
		return 1;
	}
	int rc = ring();
	if (rc) {
		printf("FAIL plugin_ring: %d\n", rc);
		return 1;
	}
	printf("ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		return plugin(argv[1]);
	void *lib = dlopen("liburing.so.2", RTLD_NOW | RTLD_GLOBAL);
	if (!lib) {
		printf("FAIL dlopen: %s\n", dlerror());
		return 1;
	}
	int (*init)(unsigned int, struct io_uring *, unsigned int) =
		(int (*)(unsigned int, struct io_uring *, unsigned int))
		dlsym(RTLD_DEFAULT, "io_uring_queue_init");
	void (*fini)(struct io_uring *) = (void (*)(struct io_uring *))
		dlsym(RTLD_DEFAULT, "io_uring_queue_exit");
	if (!init || !fini) {
		printf("FAIL dlsym: %s\n", dlerror());
		return 1;
	}
	struct io_uring ring;
	int rc = init(4, &ring, 0);
	if (rc) {
		printf("FAIL io_uring_queue_init: %d\n", rc);
		return 1;
	}
	fini(&ring);
	printf("ok\n");
	return 0;
}
