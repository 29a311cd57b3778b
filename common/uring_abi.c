/* SPDX-License-Identifier: MIT */
/* The registered-file updates' fd arrays (uring_abi.h). */
#include <string.h>

#include "uring_abi.h"
#include "usercopy.h"

/* One read of the application's array per chunk: a bounded stack. */
#define FD_CHUNK 1024u

void uring_files_each(uint64_t files, unsigned int off, unsigned int nr,
		      unsigned int n_slots,
		      void (*set)(void *ctx, unsigned int slot, int fd),
		      void *ctx)
{
	int buf[FD_CHUNK];
	unsigned int room = off < n_slots ? n_slots - off : 0;
	if (nr > room)
		nr = room;
	for (unsigned int c = 0; c < nr; c += FD_CHUNK) {
		unsigned int n = nr - c < FD_CHUNK ? nr - c : FD_CHUNK;
		if (!files ||
		    copy_from_user(buf, files + (uint64_t)c * sizeof(int),
				   (size_t)n * sizeof(int)) != 0)
			memset(buf, 0xff, (size_t)n * sizeof(int));
		for (unsigned int i = 0; i < n; i++)
			if (buf[i] != IORING_REGISTER_FILES_SKIP)
				set(ctx, off + c + i, buf[i]);
	}
}
