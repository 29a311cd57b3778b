/* SPDX-License-Identifier: MIT */
/* Resident memory (rss.h). */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "rss.h"

#if defined(__SANITIZE_ADDRESS__)
#define RSS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RSS_ASAN 1
#endif
#endif

#ifdef RSS_ASAN
/* compiler-rt's allocator interface: drains the quarantine and returns
 * free memory to the system. */
void __sanitizer_purge_allocator(void);
#endif

size_t rss_field(const char *name)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	size_t n = strlen(name), kib = 0;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) && line[n] == ':' &&
		    sscanf(line + n + 1, "%zu kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib * 1024;
}

size_t rss_anon(void)
{
	return rss_field("RssAnon");
}

size_t rss_held(void)
{
#ifdef RSS_ASAN
	__sanitizer_purge_allocator();
#else
	malloc_trim(0);
#endif
	return rss_anon();
}
