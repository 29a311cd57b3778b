/* SPDX-License-Identifier: MIT */
/* Resident memory, for the memory tests and bench-guard. */
#ifndef GUARD_TESTS_RSS_H
#define GUARD_TESTS_RSS_H

#include <stddef.h>

/* A memory field of /proc/self/status ("VmRSS", "RssAnon", ...), in
 * bytes; 0 when it cannot be read. */
size_t rss_field(const char *name);

/* Anonymous memory resident in this process (RssAnon of
 * /proc/self/status): malloc's heap and the blocks libarenacert maps
 * itself, which mallinfo2 misses.  0 when it cannot be read. */
size_t rss_anon(void);

/* The same once the allocator has given back what is free (malloc_trim;
 * under AddressSanitizer its quarantine too): what is held, not what the
 * heap's fragmentation or the sanitizer keeps. */
size_t rss_held(void);

#endif
