/* SPDX-License-Identifier: MIT */
/*
 * What the launcher needs to know of the command's binary: the
 * sanitizer runtime it links against, which must come first in the
 * initial library list (AddressSanitizer aborts otherwise: "ASan
 * runtime does not come first in initial library list").
 */
#ifndef ARENAGUARD_TOOLS_NEEDED_H
#define ARENAGUARD_TOOLS_NEEDED_H

#include <stddef.h>

/* Whether the LD_PRELOAD entry entry[0, len) (a path or a soname) is a
 * sanitizer's runtime (libasan, libtsan, libubsan, liblsan, libhwasan). */
int is_sanitizer(const char *entry, size_t len);

/*
 * The soname of the first sanitizer runtime among the DT_NEEDED entries
 * of the program execvp(3) would run for command (searched in PATH when
 * it has no slash), copied to out[0, len): 0; or -1 when there is none
 * or it cannot be told (not found, not an ELF file of this machine's
 * class, a script, malformed).  Reads the file with bounded reads; any
 * bytes are safe.
 */
int needed_sanitizer(const char *command, char *out, size_t len);

#endif
