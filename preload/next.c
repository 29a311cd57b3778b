/* SPDX-License-Identifier: MIT */
/*
 * The next definition of an interposed function (next.h).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stddef.h>

#include "next.h"

/* The loaded objects' names, in load order, up to a bound (names of
 * objects with none, the main program and the vDSO, left out). */
struct objects {
	const char *name[128];
	unsigned int n;
	void *self;                 /* this module's base */
	int after;                  /* this module was walked */
};

/* Only the objects after this module: one before it (a library
 * preloaded ahead, the main program) may interpose the same function
 * and call its own next definition, this module's. */
static int object_name(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct objects *o = arg;
	if ((void *)info->dlpi_addr == o->self) {
		o->after = 1;
		return 0;
	}
	if (o->after && info->dlpi_name && info->dlpi_name[0] &&
	    o->n < sizeof(o->name) / sizeof(o->name[0]))
		o->name[o->n++] = info->dlpi_name;
	return 0;
}

/*
 * name's definition in an object loaded outside the global scope
 * (dlopen with RTLD_LOCAL: a plugin's own liburing, or a Python
 * extension's, which CPython loads so), where RTLD_NEXT does not look:
 * the first object loaded after this module whose own search list
 * (itself and its dependencies) defines it, and not in this module.
 * The objects are listed first and opened (RTLD_NOLOAD) after the walk,
 * whose lock dlopen must not be taken under.
 */
static void *next_local(const char *name)
{
	Dl_info me;
	if (!dladdr((void *)next_local, &me))
		return NULL;
	struct objects o = { .n = 0, .self = me.dli_fbase, .after = 0 };
	dl_iterate_phdr(object_name, &o);
	for (unsigned int i = 0; i < o.n; i++) {
		void *h = dlopen(o.name[i], RTLD_LAZY | RTLD_NOLOAD);
		if (!h)
			continue;
		void *fn = dlsym(h, name);
		Dl_info at;
		int mine = fn && dladdr(fn, &at) && at.dli_fbase == me.dli_fbase;
		dlclose(h);
		if (fn && !mine)
			return fn;
	}
	return NULL;
}

void *preload_next(const char *name)
{
	int saved = errno;          /* a failed look-up may set it */
	void *fn = dlsym(RTLD_NEXT, name);
	errno = saved;
	return fn;
}

void *preload_next_anywhere(const char *name)
{
	void *fn = preload_next(name);
	if (fn)
		return fn;
	int saved = errno;
	fn = next_local(name);
	errno = saved;
	return fn;
}
