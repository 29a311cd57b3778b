/* SPDX-License-Identifier: MIT */
/*
 * One context per open file description, shared as a kernel driver's
 * drm_file is: by a forked child, and by a process that receives the fd
 * with SCM_RIGHTS.  Schedules made in one process are visible,
 * appendable, destroyable and submittable from the other; handles are
 * numbered per context (a handle freed by one process is the next one
 * another gets); sequence numbers are the context's; buffers mapped in
 * both processes see each other's writes; a sealed submit with the seal
 * of a schedule that another process replaced is refused.
 *
 * A forked child reports by its exit status (the line that failed), not
 * with Check, whose state belongs to the test process.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "device.h"
#include "seal.h"

/* In a forked child: exit with the line number when cond is false. */
#define CHILD_CHECK(cond)                                   \
	do {                                                \
		if (!(cond))                                \
			_exit(__LINE__ % 250 + 1);          \
	} while (0)

/* The seal of a schedule of image holding the one reference ref. */
static struct arena_seal_value seal_of(const uint8_t *img, size_t len,
			struct drm_arena_ref ref)
{
	struct arena_seal s;
	arena_seal_program(&s, img, len);
	arena_seal_refs(&s, &ref, 1);
	return seal_now(&s);
}

static uint64_t context_of(int fd)
{
	uint64_t context = 0;
	return dev_seal(fd, &context) == 0 ? context : 0;
}

static int wait_child(pid_t pid)
{
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static float *map_bo(int fd, uint32_t bo)
{
	struct drm_arena_bo_mmap m = { .handle = bo };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_BO_MMAP, &m), 0);
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       (off_t)m.offset);
	ck_assert_ptr_ne(p, MAP_FAILED);
	return p;
}

/* A context holding buffer 1 over 0x10000, program 1 (two_fills_image)
 * and its schedule 1 with the reference {0, 1}, submitted once. */
struct one {
	int fd;
	uint32_t bo, prog, schedule;
	uint8_t *img;
	size_t len;
};

static void one_setup(struct one *o)
{
	o->fd = dev_open();
	o->bo = bo_new(o->fd, 0x10000, 4096);
	o->img = two_fills_image(&o->len);
	o->prog = prog_from_image(o->fd, o->img, o->len);
	o->schedule = sched_new(o->fd, o->prog);
	ck_assert_uint_eq(o->bo, 1);
	ck_assert_uint_eq(o->prog, 1);
	ck_assert_uint_eq(o->schedule, 1);
	struct drm_arena_ref first = { 0, 1 };
	ck_assert_int_eq(sched_append(o->fd, o->schedule, &first, 1), 0);
	ck_assert_uint_eq(sched_submit(o->fd, o->schedule), 1);
}

/* The scenario: after fork the child destroys schedule 1 and
 * creates another, which the driver numbers 1 again; the parent's
 * sealed submit of 1 with the old seal is refused, and nothing runs. */
START_TEST(fork_replaces_schedule)
{
	struct one o;
	one_setup(&o);
	int fd = o.fd;
	struct drm_arena_ref first = { 0, 1 }, second = { 1, 1 };
	struct arena_seal_value old_seal = seal_of(o.img, o.len, first);
	uint64_t context = context_of(fd);          /* sealed from here */
	ck_assert_uint_ne(context, 0);

	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		CHILD_CHECK(context_of(fd) == context);
		struct drm_arena_handle h = { .handle = 1 };
		CHILD_CHECK(xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_DESTROY, &h) == 0);
		struct drm_arena_schedule_create c = { .program = o.prog };
		CHILD_CHECK(xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_CREATE, &c) == 0);
		CHILD_CHECK(c.handle == 1);
		CHILD_CHECK(sched_append(fd, 1, &second, 1) == 0);
		_exit(0);
	}
	ck_assert_int_eq(wait_child(pid), 0);

	const float zero[5] = { 0 };
	bo_put(fd, o.bo, 0, zero, sizeof(zero));
	uint64_t seqno = 0;
	struct drm_arena_schedule_submit plain = { .schedule = 1 };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &plain),
			 ENOKEY);
	ck_assert_int_eq(sched_submit_sealed(fd, 1, old_seal, &seqno),
			 EKEYREJECTED);
	ck_assert_int_eq(dev_wait(fd, 2), EINVAL);  /* no number consumed */
	float v[5];
	bo_get(fd, o.bo, 0, v, sizeof(v));
	ck_assert(v[0] == 0.0f && v[4] == 0.0f);    /* nothing ran */
	/* What the child made is what the driver holds: its seal runs it. */
	ck_assert_int_eq(sched_submit_sealed(fd, 1, seal_of(o.img, o.len, second),
					     &seqno), 0);
	ck_assert_uint_eq(seqno, 2);
	bo_get(fd, o.bo, 0, v, sizeof(v));
	ck_assert(v[0] == 0.0f && v[4] == 2.0f);
	free(o.img);
	close(fd);
}
END_TEST

/* Both processes create, append, submit and map: one context. */
START_TEST(fork_shares_everything)
{
	struct one o;
	one_setup(&o);
	int fd = o.fd;
	uint32_t s1 = o.schedule;
	float *mine = map_bo(fd, o.bo);
	struct drm_arena_ref second = { 1, 1 };

	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* The parent's schedule, appended to and run here. */
		CHILD_CHECK(sched_append(fd, s1, &second, 1) == 0);
		struct drm_arena_schedule_submit sub = { .schedule = s1 };
		CHILD_CHECK(xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &sub) == 0);
		CHILD_CHECK(sub.seqno == 2);
		/* A new one, numbered after the parent's. */
		struct drm_arena_schedule_create c = { .program = o.prog };
		CHILD_CHECK(xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_CREATE, &c) == 0);
		CHILD_CHECK(c.handle == s1 + 1);
		/* The parent's mapping is this one's too; a new mapping
		 * here sees what kernels wrote. */
		CHILD_CHECK(mine[4] == 2.0f);
		mine[100] = 42.0f;
		float *again = map_bo(fd, o.bo);
		CHILD_CHECK(again[0] == 1.0f && again[100] == 42.0f);
		again[101] = 43.0f;
		_exit(0);
	}
	ck_assert_int_eq(wait_child(pid), 0);
	ck_assert(mine[100] == 42.0f && mine[101] == 43.0f);
	float v;
	bo_get(fd, o.bo, 101 * 4, &v, sizeof(v));
	ck_assert(v == 43.0f);
	/* The child's schedule is here: empty, it runs (seqno 3). */
	ck_assert_uint_eq(sched_submit(fd, s1 + 1), 3);
	ck_assert_uint_eq(sched_submit(fd, s1), 4);
	struct drm_arena_handle h = { .handle = s1 + 1 };
	ck_assert_int_eq(xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_DESTROY, &h), 0);
	munmap(mine, 4096);
	free(o.img);
	close(fd);
}
END_TEST

/* Two processes at once on one schedule: the context's mutex keeps
 * every append and every sequence number (all references are equal, so
 * the seal does not depend on their order, only on their number). */
START_TEST(fork_concurrent)
{
	enum { EACH = 500 };
	struct one o;
	one_setup(&o);                     /* 1 reference, seqno 1 used */
	struct drm_arena_ref first = { 0, 1 };
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	for (int i = 0; i < EACH; i++) {
		struct drm_arena_schedule_submit sub = { .schedule = 1 };
		int rc = sched_append(o.fd, 1, &first, 1);
		if (!rc)
			rc = xioctl(o.fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &sub);
		if (pid == 0)
			CHILD_CHECK(rc == 0);
		else
			ck_assert_int_eq(rc, 0);
	}
	if (pid == 0)
		_exit(0);
	ck_assert_int_eq(wait_child(pid), 0);
	struct arena_seal want;
	arena_seal_program(&want, o.img, o.len);
	for (int i = 0; i < 1 + 2 * EACH; i++)
		arena_seal_refs(&want, &first, 1);
	uint64_t seqno;
	ck_assert_int_eq(sched_submit_sealed(o.fd, 1, seal_now(&want),
					     &seqno), 0);
	ck_assert_uint_eq(seqno, 2 + 2 * EACH);
	free(o.img);
	close(o.fd);
}
END_TEST

/* Another open stays another context, after fork too. */
START_TEST(fork_keeps_opens_apart)
{
	int a = dev_open(), b = dev_open();
	uint32_t bo = bo_new(a, 0x10000, 4096);
	ck_assert_uint_eq(bo, 1);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct drm_arena_bo_mmap m = { .handle = 1 };
		CHILD_CHECK(xioctl(b, DRM_IOCTL_ARENA_BO_MMAP, &m) == ENOENT);
		CHILD_CHECK(xioctl(a, DRM_IOCTL_ARENA_BO_MMAP, &m) == 0);
		CHILD_CHECK(context_of(a) != context_of(b));
		_exit(0);
	}
	ck_assert_int_eq(wait_child(pid), 0);
	close(a);
	close(b);
}
END_TEST

/* ---- SCM_RIGHTS to a process that never opened the node ---- */

static void send_fd(int sock, int fd)
{
	char byte = 'F';
	struct iovec iov = { &byte, 1 };
	union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof(int))]; } u;
	memset(&u, 0, sizeof(u));
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	ck_assert_int_eq(sendmsg(sock, &msg, 0), 1);
}

static int recv_fd(int sock)
{
	char byte;
	struct iovec iov = { &byte, 1 };
	union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof(int))]; } u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	int fd;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* `sim-tests --scm-demo SOCK`: a fresh process (exec'd, so it has no
 * fd table of the parent's) receives a device fd over SOCK and works on
 * the context it names: prints its context identity, the schedule it
 * created, the seqno its submit of schedule 1 got; writes 7.0 at float
 * 200 of buffer 1 through its own mapping.  Exits 0 when all worked. */
int scm_demo(int sock)
{
	int fd = recv_fd(sock);
	if (fd < 0)
		return 1;
	struct drm_arena_seal seal = { 0 };
	struct drm_arena_ref second = { 1, 1 };
	struct drm_arena_schedule_create c = { .program = 1 };
	struct drm_arena_schedule_submit sub = { .schedule = 1 };
	struct drm_arena_bo_mmap m = { .handle = 1 };
	struct drm_arena_schedule_append a = { .schedule = 1, .count = 1,
					       .refs = (uintptr_t)&second };
	if (xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_APPEND, &a) ||
	    xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT, &sub) ||
	    xioctl(fd, DRM_IOCTL_ARENA_SCHEDULE_CREATE, &c) ||
	    xioctl(fd, DRM_IOCTL_ARENA_BO_MMAP, &m) ||
	    xioctl(fd, DRM_IOCTL_ARENA_SEAL, &seal))
		return 2;
	float *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			(off_t)m.offset);
	if (p == MAP_FAILED)
		return 3;
	p[200] = 7.0f;
	printf("%llu %u %llu\n", (unsigned long long)seal.context, c.handle,
	       (unsigned long long)sub.seqno);
	return 0;
}

START_TEST(scm_rights_shares_context)
{
	struct one o;
	one_setup(&o);
	int fd = o.fd;

	int sv[2], out[2];
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	ck_assert_int_eq(pipe(out), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* Only the socket crosses exec: the device fd is O_CLOEXEC. */
		dup2(out[1], STDOUT_FILENO);
		int sock = dup(sv[1]);   /* without FD_CLOEXEC */
		char arg[16];
		snprintf(arg, sizeof(arg), "%d", sock);
		unsetenv("CK_RUN_SUITE");
		unsetenv("CK_RUN_CASE");
		execl("/proc/self/exe", "sim-tests", "--scm-demo", arg,
		      (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	close(sv[1]);
	send_fd(sv[0], fd);
	char text[128] = { 0 };
	size_t n = 0;
	ssize_t r;
	while (n + 1 < sizeof(text) &&
	       (r = read(out[0], text + n, sizeof(text) - 1 - n)) > 0)
		n += (size_t)r;
	close(out[0]);
	close(sv[0]);
	ck_assert_int_eq(wait_child(pid), 0);
	unsigned long long context, seqno;
	unsigned int made;
	ck_assert_int_eq(sscanf(text, "%llu %u %llu", &context, &made, &seqno), 3);
	ck_assert_uint_eq(context, context_of(fd));
	ck_assert_uint_eq(made, 2);                 /* after the parent's 1 */
	ck_assert_uint_eq(seqno, 2);                /* after the parent's 1 */
	/* Its append and run are here: the schedule holds both refs. */
	float v[201];
	bo_get(fd, o.bo, 0, v, sizeof(v));
	ck_assert(v[0] == 1.0f && v[4] == 2.0f && v[200] == 7.0f);
	struct arena_seal both;
	struct drm_arena_ref refs[] = { { 0, 1 }, { 1, 1 } };
	arena_seal_program(&both, o.img, o.len);
	arena_seal_refs(&both, refs, 2);
	uint64_t got;
	ck_assert_int_eq(sched_submit_sealed(fd, 1, seal_now(&both), &got), 0);
	ck_assert_uint_eq(got, 3);
	free(o.img);
	close(fd);
}
END_TEST

Suite *suite_shared(void)
{
	Suite *s = suite_create("shared");
	TCase *tc = tcase_create("shared");
	tcase_add_test(tc, fork_replaces_schedule);
	tcase_add_test(tc, fork_shares_everything);
	tcase_add_test(tc, fork_concurrent);
	tcase_add_test(tc, fork_keeps_opens_apart);
	tcase_add_test(tc, scm_rights_shares_context);
	suite_add_tcase(s, tc);
	return s;
}
