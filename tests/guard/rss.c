/* SPDX-License-Identifier: MIT */
/* Resident memory (rss.h). */
#include <stdio.h>

#include "rss.h"

size_t rss_anon(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	size_t kib = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "RssAnon: %zu kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib * 1024;
}
