/* SPDX-License-Identifier: MIT */
/*
 * gate-share: the guard as a gate on arena.ko (issue 29) where another
 * process shares the device, run by the kernel stage (tests.list) under
 * LD_PRELOAD=libarenaguard.so, once with the module's require_seal=0 and
 * once with require_seal=1 (read from /sys/module/arena/parameters).
 * Every path prints one line,
 *
 *   PATH [require_seal=N]: blocked by the guard | refused by the driver
 *       (ERRNO) | ran (certified) | ran UNCERTIFIED (documented limit: why)
 *
 * observed on the device (the submit's answer, the wait's, and the
 * output or canary the schedule writes: tests/guard/progs.h; "ran
 * (certified)": a schedule the certificate passes ran), and a
 * "FAIL: ..." line when it is not the outcome expected there; exit 1 if
 * any failed.  The programs are tests/guard's (a failing schedule of
 * the good program, (D); the program failing (C)).
 *
 *   fork           a fork child (the guard's memory copied) runs what it
 *                  inherited, then destroys the schedules and program and
 *                  makes them again, failing, under the same handles; the
 *                  parent then submits its certified handle
 *   exec guard|bare  the same by a process that execs with the device
 *                  fd inherited, with the guard preloaded or LD_PRELOAD
 *                  dropped (the sender's handles given as arguments)
 *   scm guard|bare   the same by another process the open file is sent
 *                  to over a unix socket (SCM_RIGHTS)
 *   open guard|bare  another process opening the node on its own
 *   early guard|bare the fd of a guarded process that made no request on
 *                  it yet (so its guard has not sealed the context),
 *                  inherited by exec
 *   nokcmp         kcmp(2) denied by a seccomp filter: copies by dup,
 *                  F_DUPFD and SCM_RIGHTS, and a fork child that remakes
 *                  the certified handles failing
 *
 * (peer ...: the exec'd side of exec, scm and open.)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arenaguard/guard_api.h>

#include "cdev.h"
#include "checks.h"
#include "fdpass.h"
#include "nokcmp.h"
#include "progs.h"

extern char **environ;

enum outcome { BLOCKED, REFUSED, RAN, UNCERTIFIED };

/* What a path should come to: the outcome, the driver's errno for
 * REFUSED, why for UNCERTIFIED. */
struct expect {
	enum outcome o;
	int err;
	const char *why;
};

#define EXPECT_BLOCKED ((struct expect){ BLOCKED, 0, NULL })
#define EXPECT_RAN ((struct expect){ RAN, 0, NULL })
#define EXPECT_REFUSED(e) ((struct expect){ REFUSED, (e), NULL })
#define EXPECT_UNCERTIFIED(w) ((struct expect){ UNCERTIFIED, 0, (w) })

static const char no_guard_no_seal[] =
	"no guard in the process, and the driver does not require seals";
static const char own_seal[] =
	"the process computes the seal itself and so leaves the guard out";

static int require_seal;
static int guarded;

/* The schedule submitted: what it holds, and how it is submitted. */
struct sub {
	uint32_t schedule;
	int certified;                /* the certificate passes it */
	int own_seal;                 /* SUBMIT_SEALED with the seal of: */
	enum prog_kind kind;
	const struct ac_ref *refs;
	uint32_t n;
};

static struct sub good_sub(uint32_t s)
{
	return (struct sub){ s, 1, 0, PROG_GOOD, prog_good_refs, 2 };
}

static struct sub bad_d_sub(uint32_t s)
{
	return (struct sub){ s, 0, 0, PROG_GOOD, prog_bad_d_refs, 4 };
}

/* A schedule of program PROG_BAD_C with the good references. */
static struct sub bad_c_sub(uint32_t s)
{
	return (struct sub){ s, 0, 0, PROG_BAD_C, prog_good_refs, 2 };
}

static struct sub sealed_by_self(struct sub s)
{
	s.own_seal = 1;
	return s;
}

static int submit(struct cdev *d, const struct sub *s, uint64_t *seqno)
{
	if (!s->own_seal)
		return cdev_submit(d, s->schedule, seqno);
	struct drm_arena_schedule_submit_sealed a = {
		.schedule = s->schedule, .algorithm = ARENA_SEAL_SHA256 };
	prog_seal(s->kind, s->refs, s->n, a.seal);
	int rc = cdev_ioctl(d->fd, DRM_IOCTL_ARENA_SCHEDULE_SUBMIT_SEALED, &a);
	*seqno = a.seqno;
	return rc;
}

/* Whether the schedule's writes are in the window: the certified one
 * leaves out = 1.0; (D) writes 2.0 over out[0, 16); (C) fills the
 * canary. */
static int wrote(struct cdev *d, const struct sub *s)
{
	if (s->certified)
		return cdev_all(d, PROG_OUT, PROG_FLOATS, 1.0f);
	if (s->kind == PROG_BAD_C)
		return cdev_all(d, PROG_CANARY, PROG_FLOATS, 1.0f);
	return cdev_all(d, PROG_OUT, 16, 2.0f);
}

static const char *errname(int err)
{
	const char *n = strerrorname_np(err);
	return n ? n : "?";
}

/* Submits s on d (its window zeroed first; processes sharing the
 * context take turns) and prints the path's line: what happened, and
 * FAIL when it is not `want`. */
static void path(struct cdev *d, const char *what, struct sub s,
		 struct expect want)
{
	char got[256];
	int ok;
	if (cdev_zero(d) != 0)
		check(0, "%s: the window zeroed", what);
	uint64_t seqno = 0;
	int rc = submit(d, &s, &seqno);
	if (rc == -EPERM && guarded) {
		snprintf(got, sizeof(got), "blocked by the guard");
		ok = want.o == BLOCKED;
	} else if (rc != 0) {
		snprintf(got, sizeof(got), "refused by the driver (%s)",
			 errname(-rc));
		ok = want.o == REFUSED && want.err == -rc;
	} else if ((rc = cdev_wait(d, seqno)) != 0) {
		snprintf(got, sizeof(got), "submitted, but the wait failed "
			 "(%s)", errname(-rc));
		ok = 0;
	} else if (!wrote(d, &s)) {
		/* Another schedule under its handle ran: a failing one? */
		int failing = cdev_all(d, PROG_CANARY, PROG_FLOATS, 1.0f) ||
			      cdev_all(d, PROG_OUT, 16, 2.0f);
		snprintf(got, sizeof(got), "%s", failing
			 ? "ran UNCERTIFIED (the driver held a failing "
			   "schedule under this handle)"
			 : "submitted, but its output is not on the device");
		ok = 0;
	} else if (s.certified) {
		snprintf(got, sizeof(got), "ran (certified)");
		ok = want.o == RAN;
	} else {
		snprintf(got, sizeof(got), "ran UNCERTIFIED (documented limit: "
			 "%s)", want.why ? want.why : "none");
		ok = want.o == UNCERTIFIED;
	}
	/* A refused submit wrote nothing. */
	if (rc != 0 && !(cdev_all(d, PROG_CANARY, PROG_FLOATS, 0.0f) &&
			 cdev_all(d, PROG_OUT, PROG_FLOATS, 0.0f))) {
		snprintf(got + strlen(got), sizeof(got) - strlen(got),
			 ", yet the window was written");
		ok = 0;
	}
	printf("%s [require_seal=%d]: %s\n", what, require_seal, got);
	if (!ok)
		check(0, "%s: not the outcome expected here", what);
}

/* A refusal of the kind the process meets it: EPERM from its guard,
 * ENOKEY from a sealed context without one. */
static struct expect refused_here(void)
{
	return guarded ? EXPECT_BLOCKED : EXPECT_REFUSED(ENOKEY);
}

/* ---- the other process's work on a shared context ---- */

struct handles {
	uint32_t prog, good, bad;
};

/* The program and a certified and a failing ((D)) schedule of it. */
static struct handles build(struct cdev *d)
{
	struct handles h;
	h.prog = program(d, PROG_GOOD);
	h.good = schedule(d, h.prog, prog_good_refs, 2);
	h.bad = schedule(d, h.prog, prog_bad_d_refs, 4);
	return h;
}

/* Destroys h's schedules and program and makes the program again from
 * PROG_BAD_C and a schedule of it with the good references, under the
 * same handles (the driver gives the lowest free one), and submits it.
 * `who` names the process in the lines. */
static void remake_failing(struct cdev *d, const struct handles *h,
			   const char *who)
{
	int rc = cdev_destroy_schedule(d, h->good);
	if (rc == 0)
		rc = cdev_destroy_schedule(d, h->bad);
	if (rc == 0)
		rc = cdev_destroy_program(d, h->prog);
	size_t len;
	uint8_t *image = prog_image(PROG_BAD_C, &len);
	uint32_t p = 0, s = 0;
	if (rc == 0)
		rc = cdev_program(d, image, len, &p);
	free(image);
	if (rc == 0)
		rc = cdev_schedule(d, p, &s);
	if (rc == 0)
		rc = cdev_append(d, s, prog_good_refs, 2);
	check(rc == 0 && p == h->prog && s == h->good, "%s: program %u and "
	      "schedule %u made again from the failing image: %d (%u, %u)",
	      who, h->prog, h->good, rc, p, s);
	char what[128];
	snprintf(what, sizeof(what), "%s: its failing program under the "
		 "certified handles", who);
	path(d, what, bad_c_sub(h->good), refused_here());
}

/* A certified schedule of a new program, built and run here: the guard
 * still works on the context (`who`: the lines' prefix). */
static void new_certified(struct cdev *d, const char *who,
			  struct expect want)
{
	uint32_t p = program(d, PROG_GOOD);
	uint32_t s = schedule(d, p, prog_good_refs, 2);
	char what[128];
	snprintf(what, sizeof(what), "%s: a certified schedule built after",
		 who);
	path(d, what, good_sub(s), want);
}

/* The sender's side after the other process remade its handles: the
 * certified handle's submit, whose seal is the certified program's, is
 * refused by the driver (which holds the failing one), on either
 * setting (the guard sealed the context). */
static void after_remake(struct cdev *d, const struct handles *h,
			 const char *who)
{
	char what[128];
	snprintf(what, sizeof(what), "%s: the certified handle, after the "
		 "other process remade it failing", who);
	path(d, what, good_sub(h->good), EXPECT_REFUSED(EKEYREJECTED));
	new_certified(d, who, EXPECT_RAN);
}

/* ---- fork ---- */

static int wait_child(pid_t pid, const char *who)
{
	int status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		status = -1;
	int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	check(ok, "%s exited %d", who, status);
	return ok;
}

static void cmd_fork(void)
{
	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	struct handles h = build(&d);
	path(&d, "fork: the certified schedule", good_sub(h.good), EXPECT_RAN);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		path(&d, "fork child: the inherited certified schedule",
		     good_sub(h.good), EXPECT_RAN);
		path(&d, "fork child: the inherited failing schedule",
		     bad_d_sub(h.bad), EXPECT_BLOCKED);
		remake_failing(&d, &h, "fork child");
		fflush(stdout);
		_exit(atomic_load(&failures) ? 1 : 0);
	}
	wait_child(pid, "the fork child");
	after_remake(&d, &h, "fork");
	cdev_close(&d);
}

/* ---- the other process: exec, scm, open ---- */

/* Runs this program again as `peer ARGS...`, with the guard preloaded
 * (guard) or LD_PRELOAD dropped. */
static pid_t spawn_peer(int guard, char *const args[])
{
	char *argv[12] = { "gate-share", "peer" };
	int n = 2;
	for (int i = 0; args[i] && n < 11; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		if (!guard)
			unsetenv("LD_PRELOAD");
		execve("/proc/self/exe", argv, environ);
		printf("FAIL: exec /proc/self/exe: %s\n", strerror(errno));
		_exit(127);
	}
	return pid;
}

static int parse_guard(const char *arg)
{
	if (arg && !strcmp(arg, "guard"))
		return 1;
	if (arg && !strcmp(arg, "bare"))
		return 0;
	fprintf(stderr, "gate-share: 'guard' or 'bare', not '%s'\n",
		arg ? arg : "(nothing)");
	exit(2);
}

/* The sender's context handed over: by exec (the fd inherited) or by
 * SCM_RIGHTS. */
static void cmd_handover(int scm, int guard)
{
	const char *who = scm ? (guard ? "scm guarded" : "scm bare")
			      : (guard ? "exec guarded" : "exec bare");
	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	struct handles h = build(&d);
	path(&d, who, good_sub(h.good), EXPECT_RAN);
	int sv[2] = { -1, -1 };
	int passed;
	if (scm) {
		check(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0,
		      "socketpair");
		passed = sv[1];      /* inherited: not close-on-exec */
	} else {
		passed = d.fd;
		check(fcntl(d.fd, F_SETFD, 0) == 0, "the fd inherited");
	}
	char a[5][16];
	snprintf(a[0], sizeof(a[0]), "%d", passed);
	snprintf(a[1], sizeof(a[1]), "%u", d.bo);
	snprintf(a[2], sizeof(a[2]), "%u", h.prog);
	snprintf(a[3], sizeof(a[3]), "%u", h.good);
	snprintf(a[4], sizeof(a[4]), "%u", h.bad);
	char *args[] = { (char *)(scm ? "scm" : "exec"),
			 (char *)(guard ? "guard" : "bare"), a[0], a[1], a[2],
			 a[3], a[4], NULL };
	pid_t pid = spawn_peer(guard, args);
	if (scm) {
		close(sv[1]);
		check(fd_send(sv[0], d.fd) == 0, "the fd sent");
		close(sv[0]);
	}
	wait_child(pid, who);
	if (!scm)
		fcntl(d.fd, F_SETFD, FD_CLOEXEC);
	after_remake(&d, &h, who);
	cdev_close(&d);
}

static uint32_t arg_u32(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (*s == 0 || *end != 0 || v > UINT32_MAX) {
		fprintf(stderr, "gate-share: not a number: '%s'\n", s);
		exit(2);
	}
	return (uint32_t)v;
}

/* peer exec|scm guard|bare FD BO PROG GOOD BAD: the other process, on
 * the sender's context (FD inherited, or the socket it arrives on). */
static void peer_handover(int scm, char **argv)
{
	const char *who = scm ? (guarded ? "scm guarded peer"
					 : "scm bare peer")
			      : (guarded ? "exec guarded peer"
					 : "exec bare peer");
	struct cdev d = { .fd = (int)arg_u32(argv[0]), .bo = arg_u32(argv[1]),
			  .path = CP_IOCTL };
	struct handles h = { arg_u32(argv[2]), arg_u32(argv[3]),
			     arg_u32(argv[4]) };
	if (scm) {
		int sock = d.fd;
		d.fd = fd_recv(sock);
		close(sock);
		check(d.fd >= 0, "%s: the fd received: %d", who, d.fd);
		if (d.fd < 0)
			return;
	}
	char what[128];
	/* Built by the sender: this guard never saw what they hold. */
	snprintf(what, sizeof(what), "%s: the sender's certified schedule",
		 who);
	path(&d, what, good_sub(h.good), refused_here());
	snprintf(what, sizeof(what), "%s: the sender's failing schedule", who);
	path(&d, what, bad_d_sub(h.bad), refused_here());
	snprintf(what, sizeof(what), "%s: the sender's failing schedule, "
		 "sealed by the process itself", who);
	path(&d, what, sealed_by_self(bad_d_sub(h.bad)),
	     guarded ? EXPECT_BLOCKED : EXPECT_UNCERTIFIED(own_seal));
	remake_failing(&d, &h, who);
	new_certified(&d, who, guarded ? EXPECT_RAN : EXPECT_REFUSED(ENOKEY));
	close(d.fd);
}

/* A second process opening the node on its own (open): a context of
 * its own, sealed by its guard, or by the driver under require_seal=1.
 * Or (early) the fd of a guarded process that made no request on it
 * yet, inherited by exec: the guard seals a context at its first
 * request, so none has. */
static void cmd_open(int early, int guard)
{
	const char *who = early ? (guard ? "early guarded" : "early bare")
				: (guard ? "open guarded" : "open bare");
	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	char fd[16], bo[16];
	snprintf(fd, sizeof(fd), "%d", d.fd);
	snprintf(bo, sizeof(bo), "%u", d.bo);
	if (early)
		check(fcntl(d.fd, F_SETFD, 0) == 0, "the fd inherited");
	char *args[] = { (char *)(early ? "early" : "open"),
			 (char *)(guard ? "guard" : "bare"), fd, bo, NULL };
	if (!early)
		args[2] = NULL;
	wait_child(spawn_peer(guard, args), who);
	/* This process's first request: its guard seals the context now. */
	struct handles h = build(&d);
	char what[128];
	snprintf(what, sizeof(what), "%s: this process's certified schedule, "
		 "after", who);
	path(&d, what, good_sub(h.good), EXPECT_RAN);
	cdev_close(&d);
}

/* peer open|early guard|bare [FD BO]: a context of its own, or the
 * inherited one no guard sealed. */
static void peer_open(int early, char **argv)
{
	const char *who = early ? (guarded ? "early guarded peer"
					   : "early bare peer")
				: (guarded ? "open guarded peer"
					   : "open bare peer");
	struct cdev d;
	if (early)
		d = (struct cdev){ .fd = (int)arg_u32(argv[0]),
				   .bo = arg_u32(argv[1]), .path = CP_IOCTL };
	else
		open_or_exit(&d, CP_IOCTL);
	struct handles h = build(&d);
	/* Without a guard, the driver's setting decides. */
	struct expect unguarded = require_seal
		? EXPECT_REFUSED(ENOKEY) : EXPECT_UNCERTIFIED(no_guard_no_seal);
	char what[128];
	snprintf(what, sizeof(what), "%s: a certified schedule", who);
	path(&d, what, good_sub(h.good),
	     guarded || !require_seal ? EXPECT_RAN : EXPECT_REFUSED(ENOKEY));
	snprintf(what, sizeof(what), "%s: a failing schedule", who);
	path(&d, what, bad_d_sub(h.bad), guarded ? EXPECT_BLOCKED : unguarded);
	uint32_t c = program(&d, PROG_BAD_C);
	uint32_t cs = schedule(&d, c, prog_good_refs, 2);
	snprintf(what, sizeof(what), "%s: a failing program", who);
	path(&d, what, bad_c_sub(cs), guarded ? EXPECT_BLOCKED : unguarded);
	snprintf(what, sizeof(what), "%s: a failing schedule, sealed by the "
		 "process itself", who);
	path(&d, what, sealed_by_self(bad_d_sub(h.bad)),
	     guarded ? EXPECT_BLOCKED : EXPECT_UNCERTIFIED(own_seal));
	/* What it leaves on the context is another process's to the
	 * sender's guard: gone, so that the sender's handles are its own. */
	check(cdev_destroy_schedule(&d, cs) == 0 &&
	      cdev_destroy_program(&d, c) == 0 &&
	      cdev_destroy_schedule(&d, h.good) == 0 &&
	      cdev_destroy_schedule(&d, h.bad) == 0 &&
	      cdev_destroy_program(&d, h.prog) == 0, "%s: destroyed", who);
	if (early)
		close(d.fd);
	else
		cdev_close(&d);
}

/* ---- nokcmp ---- */

static void copy_paths(struct cdev *copy, const struct handles *h,
		       const char *how)
{
	char what[128];
	snprintf(what, sizeof(what), "nokcmp %s: the certified schedule", how);
	path(copy, what, good_sub(h->good), EXPECT_RAN);
	snprintf(what, sizeof(what), "nokcmp %s: the failing schedule", how);
	path(copy, what, bad_d_sub(h->bad), EXPECT_BLOCKED);
}

static void cmd_nokcmp(void)
{
	deny_kcmp();
	struct cdev d;
	open_or_exit(&d, CP_IOCTL);
	struct handles h = build(&d);
	struct cdev dup_copy = d, dupfd_copy = d, scm_copy = d;
	dup_copy.fd = dup(d.fd);
	dupfd_copy.fd = fcntl(d.fd, F_DUPFD_CLOEXEC, 100);
	int sv[2];
	check(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0,
	      "socketpair");
	scm_copy.fd = fd_send(sv[0], d.fd) == 0 ? fd_recv(sv[1]) : -1;
	close(sv[0]);
	close(sv[1]);
	check(dup_copy.fd >= 0 && dupfd_copy.fd >= 0 && scm_copy.fd >= 0,
	      "the copies: %d %d %d", dup_copy.fd, dupfd_copy.fd, scm_copy.fd);
	copy_paths(&dup_copy, &h, "dup");
	copy_paths(&dupfd_copy, &h, "F_DUPFD");
	copy_paths(&scm_copy, &h, "SCM_RIGHTS");
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		copy_paths(&scm_copy, &h, "fork child, SCM_RIGHTS copy");
		remake_failing(&scm_copy, &h, "nokcmp fork child");
		fflush(stdout);
		_exit(atomic_load(&failures) ? 1 : 0);
	}
	wait_child(pid, "the fork child");
	after_remake(&dupfd_copy, &h, "nokcmp F_DUPFD");
	close(dup_copy.fd);
	close(dupfd_copy.fd);
	close(scm_copy.fd);
	cdev_close(&d);
}

/* ---- main ---- */

static int read_require_seal(void)
{
	FILE *f = fopen("/sys/module/arena/parameters/require_seal", "r");
	int c = f ? fgetc(f) : EOF;
	if (f)
		fclose(f);
	if (c == EOF) {
		printf("FAIL: no /sys/module/arena/parameters/require_seal: "
		       "is arena.ko loaded?\n");
		exit(1);
	}
	return c == 'Y' || c == '1';
}

static void usage(void)
{
	fprintf(stderr, "usage: gate-share fork | nokcmp | "
		"exec|scm|open|early guard|bare\n");
	exit(2);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(60);            /* a hang is a failure, not a stuck stage */
	require_seal = read_require_seal();
	guarded = dlsym(RTLD_DEFAULT, ARENAGUARD_GET_COUNTERS) != NULL;
	if (argc < 2)
		usage();
	const char *cmd = argv[1];
	if (!strcmp(cmd, "peer") && argc == 9 &&
	    (!strcmp(argv[2], "exec") || !strcmp(argv[2], "scm"))) {
		check(guarded == parse_guard(argv[3]), "peer: guard %s",
		      argv[3]);
		peer_handover(!strcmp(argv[2], "scm"), argv + 4);
	} else if (!strcmp(cmd, "peer") &&
		   ((argc == 4 && !strcmp(argv[2], "open")) ||
		    (argc == 6 && !strcmp(argv[2], "early")))) {
		check(guarded == parse_guard(argv[3]), "peer: guard %s",
		      argv[3]);
		peer_open(argc == 6, argv + 4);
	} else if (!guarded) {
		printf("FAIL: gate-share %s runs under the guard "
		       "(LD_PRELOAD=libarenaguard.so)\n", cmd);
		return 1;
	} else if (!strcmp(cmd, "fork") && argc == 2) {
		cmd_fork();
	} else if (!strcmp(cmd, "nokcmp") && argc == 2) {
		cmd_nokcmp();
	} else if (argc == 3 && (!strcmp(cmd, "exec") || !strcmp(cmd, "scm"))) {
		cmd_handover(!strcmp(cmd, "scm"), parse_guard(argv[2]));
	} else if (argc == 3 && (!strcmp(cmd, "open") ||
				 !strcmp(cmd, "early"))) {
		cmd_open(!strcmp(cmd, "early"), parse_guard(argv[2]));
	} else {
		usage();
	}
	return atomic_load(&failures) ? 1 : 0;
}
