/* SPDX-License-Identifier: MIT */
/*
 * Whether a loaded object is a sanitizer's runtime (AddressSanitizer,
 * ThreadSanitizer, ...): preloaded ahead of everything, its interceptors
 * call the next definition (the guard's), and its fork handlers must
 * stay the first registered (atfork_first.h).  By the file name of the
 * object, as ld.so loaded it.  No allocation, no intercepted call.
 */
#ifndef ARENAGUARD_SANITIZER_RUNTIME_H
#define ARENAGUARD_SANITIZER_RUNTIME_H

#include <string.h>

__attribute__((no_sanitize("address", "thread", "undefined")))
static inline int sanitizer_runtime(const char *path)
{
	static const char *const names[] = { "libasan", "libtsan", "libubsan",
					      "liblsan", "libhwasan",
					      "libclang_rt." };
	const char *base = path;
	for (const char *p = path; *p; p++)
		if (*p == '/')
			base = p + 1;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = 0;
		while (names[i][n] && base[n] == names[i][n])
			n++;
		if (!names[i][n])
			return 1;
	}
	return 0;
}

#endif
