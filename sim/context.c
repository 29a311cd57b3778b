/* SPDX-License-Identifier: MIT */
/*
 * A context (the drm_file of one open of the node) lives in a memfd, so
 * that every fd of that open file description, in any process, reaches
 * the same state, as it reaches the same drm_file in a kernel (sim.h,
 * "context.c").  This file makes, recognises and maps the memfd, owns
 * its process-shared mutex and allocates inside it.
 *
 * Recognising: a context is a regular file with no name (st_nlink 0) of
 * exactly SIM_CTX_BYTES whose first bytes are the magic; only an fd that
 * passes the fstat test is read.  Allocating: bookkeeping blocks are
 * powers of two from 64 bytes, kept on one free list per size once freed
 * (a freed block of a page or more is also punched out of the file);
 * buffer memory is taken from the top and never reused.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim.h"

#define SIM_CTX_MAGIC 0x7874636e65726161ull   /* "aarenctx" */
#define SIM_CTX_VERSION 1
#define PAGE 4096ull
#define MIN_BLOCK 64ull

_Static_assert(sizeof(struct sim_ctx) <= PAGE, "the header fits a page");

/* The test itself; the re-entry flag held, so fstat is the real one. */
static int probe(int fd, uint64_t *dev, uint64_t *ino)
{
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_nlink != 0 || (uint64_t)st.st_size != SIM_CTX_BYTES)
		return 0;
	uint64_t head[2];
	if (pread(fd, head, sizeof(head), 0) != (ssize_t)sizeof(head) ||
	    head[0] != SIM_CTX_MAGIC || head[1] != SIM_CTX_VERSION)
		return 0;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 1;
}

int ctx_probe(int fd, uint64_t *dev, uint64_t *ino)
{
	int saved = preload_enter_quiet(); /* not the caller's call */
	int yes = probe(fd, dev, ino);
	preload_leave_quiet(saved);
	return yes;
}

int ctx_map(struct sim_file *f, int fd)
{
	assert(!f->map);
	void *map = sim_real.mmap(NULL, SIM_CTX_BYTES, PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_NORESERVE, fd, 0);
	if (map == MAP_FAILED)
		return -ENOMEM;
	f->map = map;
	f->ctx = map;
	return 0;
}

void ctx_unmap(struct sim_file *f)
{
	if (f->map)
		munmap(f->map, SIM_CTX_BYTES);
	f->map = NULL;
	f->ctx = NULL;
}

/* The header of a new context. */
static int ctx_init(struct sim_ctx *c, uint64_t ino)
{
	pthread_mutexattr_t a;
	if (pthread_mutexattr_init(&a) ||
	    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED) ||
	    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST) ||
	    pthread_mutex_init(&c->lock, &a))
		return -ENOMEM;
	pthread_mutexattr_destroy(&a);
	c->context = ino;             /* unique among open memfds, never 0 */
	c->sealed = sim_require_seal;
	c->meta_top = PAGE;
	c->data_bottom = SIM_CTX_BYTES;
	/* Fake mmap offsets start where DRM's do (DRM_FILE_PAGE_OFFSET). */
	c->next_mmap_offset = 0x100000000ull;
	c->version = SIM_CTX_VERSION;
	c->magic = SIM_CTX_MAGIC;
	return 0;
}

/*
 * The memfd sized to SIM_CTX_BYTES: 0, or -ENOMEM when it cannot be (a
 * kernel driver's context costs no file size, so that under a file size
 * limit below 4 GiB, `ulimit -f`, the open fails as a driver out of
 * memory fails it, and raises no SIGXFSZ).  SIGXFSZ is blocked in this
 * thread around the ftruncate; the one it raised is taken back, one the
 * thread had pending already is left, and the mask is restored.
 */
static int ctx_size(int fd)
{
	sigset_t xfsz, old, pending;
	sigemptyset(&xfsz);
	sigaddset(&xfsz, SIGXFSZ);
	pthread_sigmask(SIG_BLOCK, &xfsz, &old);
	sigpending(&pending);
	int was_pending = sigismember(&pending, SIGXFSZ);
	int rc = ftruncate(fd, (off_t)SIM_CTX_BYTES) == 0 ? 0 : errno;
	if (rc == EFBIG && !was_pending) {
		struct timespec zero = { 0, 0 };
		while (sigtimedwait(&xfsz, NULL, &zero) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc ? -ENOMEM : 0;
}

int ctx_create(int flags, struct sim_file **out)
{
	int fd = memfd_create("arena-context",
			      flags & O_CLOEXEC ? MFD_CLOEXEC : 0);
	if (fd < 0)
		return -errno;
	struct stat st;
	int rc = ctx_size(fd);
	if (rc || fstat(fd, &st) != 0 ||
	    ((flags & O_NONBLOCK) && fcntl(fd, F_SETFL, O_NONBLOCK) != 0))
		rc = -ENOMEM;
	struct sim_file *f = rc ? NULL : calloc(1, sizeof(*f));
	if (!rc && !f)
		rc = -ENOMEM;
	if (!rc)
		rc = ctx_map(f, fd);
	if (!rc)
		rc = ctx_init(f->ctx, st.st_ino);
	if (rc) {
		if (f)
			ctx_unmap(f);
		free(f);
		sim_real.close(fd);
		return rc;
	}
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	*out = f;
	return fd;
}

void ctx_lock(struct sim_file *f)
{
	/* A process that died holding it left the state as it was at some
	 * step of a request: take it over, as a kernel would not need to. */
	if (pthread_mutex_lock(&f->ctx->lock) == EOWNERDEAD)
		pthread_mutex_consistent(&f->ctx->lock);
}

void ctx_unlock(struct sim_file *f)
{
	pthread_mutex_unlock(&f->ctx->lock);
}

/* The size class of a block of size bytes: 64 << class >= size. */
static unsigned int size_class(uint64_t size)
{
	unsigned int c = 0;
	while ((MIN_BLOCK << c) < size)
		c++;
	return c;
}

uint64_t ctx_alloc(struct sim_file *f, uint64_t size)
{
	struct sim_ctx *c = f->ctx;
	if (size == 0 || size > SIM_CTX_BYTES / 2)
		return 0;
	unsigned int k = size_class(size);
	uint64_t block = MIN_BLOCK << k;
	assert(k < sizeof(c->free_list) / sizeof(c->free_list[0]));
	uint64_t off = c->free_list[k];
	if (off) {
		memcpy(&c->free_list[k], ctx_at(f, off), sizeof(uint64_t));
		/* A block of a page or more was punched: zero but its link. */
		memset(ctx_at(f, off), 0, block >= PAGE ? sizeof(uint64_t)
							: block);
		return off;
	}
	/* Blocks of a page or more start on a page, so they can be punched. */
	uint64_t at = c->meta_top;
	if (block >= PAGE)
		at = (at + PAGE - 1) & ~(PAGE - 1);
	if (at > c->data_bottom || block > c->data_bottom - at)
		return 0;
	c->meta_top = at + block;
	return at;
}

void ctx_free(struct sim_file *f, uint64_t off, uint64_t size)
{
	if (!off)
		return;
	struct sim_ctx *c = f->ctx;
	unsigned int k = size_class(size);
	/* Give a large block's pages back (shmem punches the hole through
	 * the mapping); the list link is written after. */
	if ((MIN_BLOCK << k) >= PAGE)
		madvise(ctx_at(f, off), MIN_BLOCK << k, MADV_REMOVE);
	memcpy(ctx_at(f, off), &c->free_list[k], sizeof(uint64_t));
	c->free_list[k] = off;
}

uint64_t ctx_grow(struct sim_file *f, uint64_t off, uint64_t size,
		  uint64_t used, uint64_t grown)
{
	assert(used <= size && size < grown);
	uint64_t to = ctx_alloc(f, grown);
	if (!to)
		return 0;
	if (used)
		memcpy(ctx_at(f, to), ctx_at(f, off), used);
	ctx_free(f, off, size);
	return to;
}

uint64_t ctx_alloc_data(struct sim_file *f, uint64_t size)
{
	struct sim_ctx *c = f->ctx;
	if (size % PAGE || size > c->data_bottom - c->meta_top)
		return 0;
	c->data_bottom -= size;
	return c->data_bottom;
}
