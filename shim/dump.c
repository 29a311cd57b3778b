/* SPDX-License-Identifier: MIT */
/*
 * Dumps (dump.h): a failing schedule's program written to the dump
 * directory (ARENAGUARD_DUMP) for arena-certify, whole or not at all,
 * under a name no earlier file or planted symlink takes.  The directory's
 * descriptor is the guard's own (outputs.h); the bytes go through
 * ag_write_quietly (quiet_write.h).
 */
#define _GNU_SOURCE

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cache.h"
#include "dump.h"
#include "outputs.h"
#include "quiet_write.h"

/* The next dump's sequence number, per process (a name taken already
 * takes the next). */
static atomic_uint dump_seq;

/* Writes data as `name` in the dump directory (its fd: dir), whole or
 * not at all: written under a temporary name first (O_EXCL|O_NOFOLLOW:
 * no file or planted symlink is followed or overwritten), then linked
 * to its name, which must not exist.  0 or -errno. */
static int write_dump(int dir, const char *name, const uint8_t *data,
		      size_t len)
{
	char part[160];
	snprintf(part, sizeof(part), ".%s.part", name);
	int fd = openat(dir, part, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0644);
	if (fd < 0)
		return -errno;
	int err = ag_write_quietly(fd, data, len, NULL);
	if (ag_output_close(fd), err == 0 &&
	    linkat(dir, part, dir, name, 0) != 0)
		err = -errno;
	unlinkat(dir, part, 0);
	return err;
}

int ag_dump(const struct ag_program *p, const struct ac_ref *refs,
	    uint64_t n, uint64_t verdict, char *name, size_t len)
{
	assert(len >= 64);
	uint8_t *image = NULL;
	size_t size = p->len;
	if (p->model) {
		/* The image with the schedule's references in its schedule
		 * section: arena-certify then decides exactly what was
		 * submitted. */
		struct ac_model m = *p->model;
		m.refs = refs;
		m.n_refs = n;
		image = ac_model_write_image(&m, &size, NULL);
		if (!image)
			return -ENOMEM;
	}
	/* unreadable: the bytes as the driver got them */
	const uint8_t *bytes = image ? image : p->image;
	int err = -EBADF;
	struct ag_out_state state = ag_output_lock();
	int dir = ag_output_dump_dir();
	/* A name taken already (by an earlier process with this pid, or
	 * planted): the next sequence number. */
	for (int tries = 0; dir >= 0 && tries < 16; tries++) {
		unsigned int seq = atomic_fetch_add(&dump_seq, 1);
		if (verdict == AC_NONE)
			snprintf(name, len, "arenaguard-%d-%u-malformed.img",
				 (int)getpid(), seq);
		else
			snprintf(name, len, "arenaguard-%d-%u-verdict-%" PRIu64
				 ".img", (int)getpid(), seq, verdict);
		err = write_dump(dir, name, bytes, size);
		if (err != -EEXIST)
			break;
	}
	ag_output_unlock(state);
	free(image);
	return err;
}
