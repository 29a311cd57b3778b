/* SPDX-License-Identifier: MIT */
/*
 * A guard that knows when it is bypassed: when another library earlier
 * in the global scope (preloaded before the guard) defines a function
 * the guard interposes, the application's calls bind to that one and
 * the guard never sees the requests made through it.  Said once, at
 * start, naming the library and the functions (docs/arenaguard.7,
 * OUTPUT).  The sanitizers' runtimes are not bypasses: their
 * interceptors call the next definition, the guard's.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bypass.h"
#include "report.h"
#include "sanitizer_runtime.h"
#include "symbols.h"

/* The guard's own first byte, its ELF header (the linker's symbol):
 * bytes of unknown extent, since its program headers follow it, read
 * with memcpy. */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));

/* Program header i of the guard's own mapping. */
static ElfW(Phdr) own_phdr(const ElfW(Ehdr) *eh, unsigned int i)
{
	ElfW(Phdr) ph;
	memcpy(&ph, __ehdr_start + eh->e_phoff + (size_t)i * sizeof(ph),
	       sizeof(ph));
	return ph;
}

/* Whether fn is in the guard's own loaded segments (its PT_LOAD
 * headers, read from its own mapping): no dladdr, which searches every
 * object's symbols (issue 32: about 2 k instructions a name at start). */
static int own(const void *fn)
{
	ElfW(Ehdr) eh;
	memcpy(&eh, __ehdr_start, sizeof(eh));
	uintptr_t base = (uintptr_t)__ehdr_start, bias = base;
	uintptr_t at = (uintptr_t)fn;
	for (unsigned int i = 0; i < eh.e_phnum; i++) {
		ElfW(Phdr) ph = own_phdr(&eh, i);
		if (ph.p_type == PT_LOAD && ph.p_offset == 0)
			bias = base - ph.p_vaddr;
	}
	for (unsigned int i = 0; i < eh.e_phnum; i++) {
		ElfW(Phdr) ph = own_phdr(&eh, i);
		if (ph.p_type == PT_LOAD && at >= bias + ph.p_vaddr &&
		    at - (bias + ph.p_vaddr) < ph.p_memsz)
			return 1;
	}
	return 0;
}

void ag_bypass_check(void)
{
	Dl_info self;
	int checked = 0;
	static const char *const names[] = {
#define NAME(fn) #fn,
		AG_OWN_SYMBOLS(NAME) AG_NEXT_SYMBOLS(NAME)
		AG_URING_NEXT_SYMBOLS(NAME)
#undef NAME
	};
	/* One line per library that comes first, with its functions. */
	const char *said[8] = { 0 };
	size_t n_said = 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		Dl_info first;
		void *fn = dlsym(RTLD_DEFAULT, names[i]);
		if (!fn || own(fn))
			continue;
		/* Another object's: the guard's own name, once. */
		if (!checked++ &&
		    (!dladdr((void *)ag_bypass_check, &self) || !self.dli_fname))
			return;
		if (!dladdr(fn, &first) || !first.dli_fname ||
		    first.dli_fbase == self.dli_fbase ||
		    sanitizer_runtime(first.dli_fname))
			continue;
		int known = 0;
		for (size_t k = 0; k < n_said; k++)
			known |= !strcmp(said[k], first.dli_fname);
		if (known || n_said == sizeof(said) / sizeof(said[0]))
			continue;
		said[n_said++] = first.dli_fname;
		char fns[512] = "";
		size_t used = 0;
		for (size_t j = i; j < sizeof(names) / sizeof(names[0]); j++) {
			Dl_info other;
			void *g = dlsym(RTLD_DEFAULT, names[j]);
			if (!g || !dladdr(g, &other) || !other.dli_fname ||
			    strcmp(other.dli_fname, first.dli_fname))
				continue;
			size_t len = strlen(names[j]);
			if (used + len + 3 >= sizeof(fns))
				break;
			if (used) {
				memcpy(fns + used, ", ", 2);
				used += 2;
			}
			memcpy(fns + used, names[j], len + 1);
			used += len;
		}
		ag_log("arenaguard: %s defines %s before the guard (it is "
		       "preloaded ahead of libarenaguard.so): the guard does "
		       "not see the requests made through %s; put "
		       "libarenaguard.so first in LD_PRELOAD",
		       first.dli_fname, fns, used > strlen(names[i]) ? "them"
								      : "it");
	}
}
