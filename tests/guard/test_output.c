/* SPDX-License-Identifier: MIT */
/*
 * The guard's output rules (docs/guard.md, "Records and where they go"):
 * whatever happens to the guard's output, the application is not
 * killed, hung or written into.  guard-client under the guard with its
 * standard error a pipe whose reader has gone or that is full, a log
 * that is a FIFO without a reader, a file size limit, a daemon's
 * data file on fd 2, settings too long or with a newline; and, in
 * process against the fake driver, the signals a write raises, the
 * dump's planted symlinks and EFBIG, and no record written while the
 * schedule's lock is held.
 */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decide.h"
#include "fake.h"
#include "load.h"
#include "mirror.h"
#include "notice.h"
#include "options.h"
#include "outputs.h"
#include "quiet_write.h"
#include "report.h"
#include "request.h"
#include "spawn.h"
#include "stats.h"
#include "submit.h"
#include "suites.h"
#include "util.h"

static const char *const paths[] = { "ioctl", "uring" };

/* Every child dies of SIGALRM (status 142) rather than hang the test
 * for ever: the guard waiting for its output is a failure, not a
 * time-out of the whole run. */
#define CHILD_SECONDS 60

/* ---- the children's standard streams ---- */

struct streams {
	int out, err;        /* dup2'ed onto 1 and 2 when >= 0 */
	int close_fd;        /* closed in the child when >= 0 */
	rlim_t file_limit;   /* RLIMIT_FSIZE, when not 0 */
};

static void child_setup(void *arg)
{
	const struct streams *s = arg;
	if (s->out >= 0)
		dup2(s->out, STDOUT_FILENO);
	if (s->err >= 0)
		dup2(s->err, STDERR_FILENO);
	if (s->close_fd >= 0)
		close(s->close_fd);
	if (s->file_limit) {
		struct rlimit rl = { s->file_limit, s->file_limit };
		setrlimit(RLIMIT_FSIZE, &rl);
	}
	signal(SIGPIPE, SIG_DFL);
	signal(SIGXFSZ, SIG_DFL);
	alarm(CHILD_SECONDS);
}

static void run_client(struct run *r, const char *const env[],
		       const char *const args[], struct streams *s)
{
	const char *argv[16] = { AG_GUARD_CLIENT };
	int n = 1;
	for (int i = 0; args[i] && n < 15; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	spawn_setup(r, env, argv, child_setup, s);
}

static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	int n = 0;
	for (struct dirent *e; (e = readdir(d)) != NULL;)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* ---- 2: standard error a pipe whose reader has gone ---- */

START_TEST(test_stderr_reader_gone)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	close(p[0]);
	struct streams s = { -1, p[1], -1, 0 };
	const char *env[] = { PRELOAD_GUARD, "ARENAGUARD_STATS=1", NULL };
	struct run r;
	run_client(&r, env, (const char *[]){ "--path", paths[_i], "basic",
					      NULL }, &s);
	close(p[1]);
	assert_clean(&r);       /* not 128 + SIGPIPE */
	run_free(&r);
}
END_TEST

/* ---- 3: a slow pipe, a FIFO without a reader ---- */

/* Standard error a pipe that is full and that nobody reads: the
 * records are lost, the submissions go on. */
START_TEST(test_stderr_pipe_full)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	fcntl(p[1], F_SETFL, O_NONBLOCK);
	char block[4096];
	memset(block, 'x', sizeof(block));
	while (write(p[1], block, sizeof(block)) > 0)
		;
	fcntl(p[1], F_SETFL, 0);     /* the child's: blocking, full */
	struct streams s = { -1, p[1], p[0], 0 };
	const char *env[] = { PRELOAD_GUARD, NULL };
	struct run r;
	run_client(&r, env, (const char *[]){ "--path", paths[_i], "basic",
					      NULL }, &s);
	close(p[1]);
	char *left = pipe_drain(p[0]);
	close(p[0]);
	assert_clean(&r);       /* not 128 + SIGALRM */
	ck_assert_int_eq(count(left, "arenaguard:"), 0);
	free(left);
	run_free(&r);
}
END_TEST

START_TEST(test_log_fifo_without_reader)
{
	const char *fifo = scratch_path("fifo");
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	char log_env[300], said[400];
	snprintf(log_env, sizeof(log_env), "ARENAGUARD_LOG=%s", fifo);
	snprintf(said, sizeof(said), "arenaguard: cannot open the log %s: "
		 "No such device or address; records go to standard error\n",
		 fifo);
	const char *env[] = { PRELOAD_GUARD, log_env, NULL };
	struct streams s = { -1, -1, -1, 0 };
	struct run r;
	run_client(&r, env, (const char *[]){ "--path", paths[_i], "basic",
					      NULL }, &s);
	assert_clean(&r);       /* not 128 + SIGALRM */
	ck_assert_msg(count(r.err, said) == 1, "%s", r.err);
	ck_assert_int_eq(count(r.err, "arenaguard: blocked submission of"), 2);
	run_free(&r);
}
END_TEST

/* ---- 4: a file size limit ---- */

/* Past the file size limit (ulimit -f) the log cannot take a byte: the
 * failure said once (on standard error, a pipe), nothing lost, no
 * SIGXFSZ.  (Under a limit below the simulator's context, a 4 GiB
 * sparse memfd, the simulator's open fails with ENOMEM;
 * test_dump_efbig has a dump past the limit.) */
#define FILE_LIMIT (8ull << 30)

START_TEST(test_file_size_limit)
{
	const char *log = scratch_path("log");
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, FILE_LIMIT + 1), 0);   /* sparse */
	close(fd);
	char log_env[300], log_said[400];
	snprintf(log_env, sizeof(log_env), "ARENAGUARD_LOG=%s", log);
	snprintf(log_said, sizeof(log_said), "arenaguard: cannot write the "
		 "log %s: File too large; records that it cannot take go to "
		 "standard error\n", log);
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	struct streams s = { p[1], p[1], p[0], FILE_LIMIT };
	const char *env[] = { PRELOAD_GUARD, log_env, "ARENAGUARD_STATS=1",
			      NULL };
	struct run r;
	run_client(&r, env, (const char *[]){ "--path", paths[_i], "basic",
					      NULL }, &s);
	close(p[1]);
	char *said = pipe_drain(p[0]);
	close(p[0]);
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, said);
	ck_assert_msg(!strstr(said, "FAIL"), "%s", said);
	ck_assert_msg(count(said, log_said) == 1, "%s", said);
	ck_assert_int_eq(count(said, "arenaguard: blocked submission of"), 2);
	ck_assert_msg(strstr(said, "records 2 (lost 0)"), "%s", said);
	free(said);
	run_free(&r);
}
END_TEST

/* ---- 5: a daemon's data file on fd 2 ---- */

START_TEST(test_daemon_data_file)
{
	const char *data = scratch_path("data");
	const char *env[] = { PRELOAD_GUARD, NULL };
	struct streams s = { -1, -1, -1, 0 };
	struct run r;
	run_client(&r, env, _i ? (const char *[]){ "daemon", data, "fill",
						   NULL }
			       : (const char *[]){ "daemon", data, NULL }, &s);
	assert_clean(&r);
	char *got = slurp(data);
	ck_assert_str_eq(got, "app record 1\napp record 2\n");
	/* Nor to standard error as it was at start: the application let
	 * go of it, and so did the guard. */
	ck_assert_int_eq(count(r.err, "arenaguard: blocked submission of"), 0);
	free(got);
	run_free(&r);
}
END_TEST

/* ---- 6: settings too long, or with a newline ---- */

/* A path of `len` bytes under the scratch directory, its directories
 * made (components of 200 bytes). */
static char *long_path(size_t len, int make)
{
	char *p = malloc(len + 1);
	ck_assert_ptr_nonnull(p);
	size_t n = (size_t)snprintf(p, len + 1, "%s", scratch());
	while (n + 202 < len) {
		p[n++] = '/';
		memset(p + n, 'd', 200);
		n += 200;
		p[n] = 0;
		if (make)
			ck_assert(mkdir(p, 0700) == 0 || errno == EEXIST);
	}
	p[n++] = '/';
	while (n < len)
		p[n++] = 'f';
	p[n] = 0;
	return p;
}

/* Between 1024 and PATH_MAX: honoured; beyond: said at start. */
START_TEST(test_long_settings)
{
	char *log = long_path(1100, 1);
	char *dump = long_path(1300, 1);
	ck_assert_int_eq(mkdir(dump, 0700), 0);
	char *log_env = ag_printf("ARENAGUARD_LOG=%s", log);
	char *dump_env = ag_printf("ARENAGUARD_DUMP=%s", dump);
	const char *env[] = { PRELOAD_GUARD, log_env, dump_env, NULL };
	struct run r;
	client(&r, env, (const char *[]){ "basic", NULL });
	assert_clean(&r);
	char *text = slurp(log);
	ck_assert_msg(count(text, "arenaguard: blocked submission of") == 2,
		      "log: %s\nstderr: %s", text, r.err);
	ck_assert_int_eq(count(text, "arenaguard:   dumped to "), 2);
	ck_assert_int_eq(entries(dump), 2);
	ck_assert_str_eq(r.err, "");
	free(text);
	run_free(&r);

	char *too_long = long_path(5000, 0);
	char *log_env2 = ag_printf("ARENAGUARD_LOG=%s", too_long);
	char *dump_env2 = ag_printf("ARENAGUARD_DUMP=%s", too_long);
	const char *env2[] = { PRELOAD_GUARD, log_env2, dump_env2, NULL };
	client(&r, env2, (const char *[]){ "basic", NULL });
	assert_clean(&r);
	ck_assert_msg(count(r.err, "arenaguard: ARENAGUARD_LOG is 5000 bytes "
			    "long, longer than a path can be (4095): records "
			    "go to standard error\n") == 1, "%s", r.err);
	ck_assert_msg(count(r.err, "arenaguard: ARENAGUARD_DUMP is 5000 bytes "
			    "long, longer than a path can be (4095): no dumps "
			    "are written\n") == 1, "%s", r.err);
	ck_assert_int_eq(count(r.err, "arenaguard: blocked submission of"), 2);
	run_free(&r);
	free(log);
	free(dump);
	free(too_long);
	free(log_env);
	free(dump_env);
	free(log_env2);
	free(dump_env2);
}
END_TEST

/* A value is escaped in the record that names it: no forged line. */
START_TEST(test_newline_in_setting)
{
	const char *env[] = { PRELOAD_GUARD, "ARENAGUARD=warn\narenaguard: "
			      "stats (pid 1, mode off)\x1b[2J", NULL };
	struct run r;
	client(&r, env, (const char *[]){ "basic", NULL });
	assert_clean(&r);
	ck_assert_msg(count(r.err, "arenaguard: ARENAGUARD=warn\\narenaguard: "
			    "stats (pid 1, mode off)\\x1b[2J is not enforce, "
			    "warn or off; enforcing\n") == 1, "%s", r.err);
	ck_assert_int_eq(count(r.err, "\narenaguard: stats"), 0);
	ck_assert_ptr_null(strchr(r.err, '\x1b'));
	run_free(&r);
}
END_TEST

/* A value that escapes to more than a record holds: one line, cut
 * short, ending in its newline, with no raw control byte. */
START_TEST(test_long_value_one_line)
{
	fake_setup();
	char value[3000];
	memset(value, '\n', sizeof(value) - 1);
	value[sizeof(value) - 1] = 0;
	ag_log("arenaguard: %s", value);
	ag_report_once("long", "%s%s", value, value);
	char *log = slurp(scratch_path("log"));
	ck_assert_int_eq(count(log, "\n"), 2);
	size_t len = strlen(log);
	ck_assert_uint_gt(len, 4000);
	ck_assert_int_eq(log[len - 1], '\n');
	ck_assert_ptr_eq(strchr(log, '\n'), log + strcspn(log, "\n"));
	ck_assert_int_eq(count(log, "arenaguard: \\n\\n"), 2);
	free(log);
}
END_TEST

/* A notice from below the output layer (notice.h) goes where the output
 * layer registered at load: once per key, "arenaguard: " and its text;
 * with no sink it is counted lost and not marked said, so that a later
 * one with a sink is written. */
static char said[256];
static int says;

__attribute__((format(printf, 1, 2)))
static void capture(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(said, sizeof(said), fmt, ap);
	va_end(ap);
	says++;
}

START_TEST(test_notice_sink)
{
	fake_setup();
	ag_report_once("sink a", "to the log %d", 1);
	char *log = slurp(scratch_path("log"));
	ck_assert_msg(count(log, "arenaguard: to the log 1\n") == 1, "%s", log);
	free(log);

	says = 0;
	ag_notice_sink(capture);
	ag_report_once("sink b", "captured %d", 2);
	ag_report_once("sink b", "captured %d", 3);
	ck_assert_int_eq(says, 1);
	ck_assert_str_eq(said, "arenaguard: captured 2");

	unsigned long long lost = atomic_load(&ag_stats.records_lost);
	ag_notice_sink(NULL);
	ag_report_once("sink c", "nowhere");
	ck_assert_uint_eq(atomic_load(&ag_stats.records_lost), lost + 1);
	ag_notice_sink(capture);
	ag_report_once("sink c", "later");
	ck_assert_int_eq(says, 2);
	ck_assert_str_eq(said, "arenaguard: later");
	ag_notice_sink(ag_log);
}
END_TEST

/* A write that fails says why as -errno (the guard's one convention):
 * a pipe whose reader has gone, a closed descriptor. */
START_TEST(test_quiet_write_errno)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	close(p[0]);
	struct ag_out_state st = ag_output_lock();   /* signals blocked */
	size_t done = 1;
	ck_assert_int_eq(ag_write_quietly(p[1], "x", 1, &done), -EPIPE);
	ck_assert_uint_eq(done, 0);
	close(p[1]);
	ck_assert_int_eq(ag_write_quietly(p[1], "x", 1, NULL), -EBADF);
	ag_output_unlock(st);
}
END_TEST

/* A log or dump directory that cannot be opened says why as -errno. */
START_TEST(test_open_errno)
{
	fake_setup();
	setenv("ARENAGUARD_LOG", "/nonexistent-arenaguard/log", 1);
	setenv("ARENAGUARD_DUMP", "/nonexistent-arenaguard", 1);
	ag_config_read(&ag_cfg);
	int log_err = 0, dump_err = 0;
	ag_output_open_fds(&log_err, &dump_err);
	ck_assert_int_eq(log_err, -ENOENT);
	ck_assert_int_eq(dump_err, -ENOENT);
	unsetenv("ARENAGUARD_DUMP");
	fake_setup();
}
END_TEST

/* ---- in process: the signals a write raises ---- */

static int pending(int sig)
{
	sigset_t set;
	sigpending(&set);
	return sigismember(&set, sig);
}

/* The log and standard error both pipes whose readers have gone: the
 * SIGPIPE of each write is the guard's own and consumed; one the
 * application had pending (blocked) stays pending; the mask is as it
 * was; the record is counted lost. */
START_TEST(test_sigpipe_consumed_not_eaten)
{
	fake_setup();
	const char *fifo = scratch_path("fifo");
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	int reader = open(fifo, O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(reader, 0);
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(dup2(p[1], STDERR_FILENO), STDERR_FILENO);
	close(p[0]);
	close(p[1]);
	signal(SIGPIPE, SIG_DFL);
	setenv("ARENAGUARD_LOG", fifo, 1);
	ag_config_load();
	close(reader);

	unsigned long long lost = atomic_load(&ag_stats.records_lost);
	sigset_t before, after;
	pthread_sigmask(SIG_SETMASK, NULL, &before);
	ag_log("arenaguard: a record nobody reads");
	pthread_sigmask(SIG_SETMASK, NULL, &after);
	ck_assert(!pending(SIGPIPE));    /* and alive: it was not sent */
	ck_assert_int_eq(sigismember(&after, SIGPIPE),
			 sigismember(&before, SIGPIPE));
	ck_assert_uint_eq(atomic_load(&ag_stats.records_lost), lost + 1);

	sigset_t pipe_only;
	sigemptyset(&pipe_only);
	sigaddset(&pipe_only, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_only, NULL);
	raise(SIGPIPE);                  /* the application's own */
	ag_log("arenaguard: another");
	ck_assert(pending(SIGPIPE));
	struct timespec zero = { 0, 0 };
	ck_assert_int_eq(sigtimedwait(&pipe_only, NULL, &zero), SIGPIPE);
	ck_assert(!pending(SIGPIPE));
	pthread_sigmask(SIG_SETMASK, NULL, &after);
	ck_assert(sigismember(&after, SIGPIPE));
	ck_assert_uint_eq(atomic_load(&ag_stats.records_lost), lost + 2);
}
END_TEST

/* ---- in process: the application's descriptors and the guard's ---- */

/* The application closes its standard error, a pipe: the guard's copy
 * goes too, so that the reader sees the end of the pipe at once. */
START_TEST(test_stderr_let_go)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(dup2(p[1], STDERR_FILENO), STDERR_FILENO);
	close(p[1]);
	fake_setup();
	unsetenv("ARENAGUARD_LOG");
	ag_config_load();
	ag_report_fds_taken(STDERR_FILENO, STDERR_FILENO);   /* close(2) */
	close(STDERR_FILENO);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	char c;
	ck_assert_int_eq(read(p[0], &c, 1), 0);               /* the end */
	unsigned long long lost = atomic_load(&ag_stats.records_lost);
	ag_log("arenaguard: nowhere to go");
	ck_assert_uint_eq(atomic_load(&ag_stats.records_lost), lost + 1);
	close(p[0]);
}
END_TEST

/* The fd the log is on, found by its path. */
static int fd_of(const char *path)
{
	for (int fd = 3; fd < 4096; fd++) {
		char link[64], target[512];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, target, sizeof(target) - 1);
		if (n > 0 && (target[n] = 0, !strcmp(target, path)))
			return fd;
	}
	return -1;
}

/* The application dup2s its data file onto the number the guard's log
 * is on: the log moves out of the way first, and the records go on
 * into it, none into the data file. */
START_TEST(test_log_steps_aside)
{
	fake_setup();
	char log[300];
	snprintf(log, sizeof(log), "%s", scratch_path("log"));
	int guard_fd = fd_of(log);
	ck_assert_int_ge(guard_fd, 3);
	int data = open(scratch_path("data"), O_WRONLY | O_CREAT, 0644);
	ck_assert_int_ge(data, 0);
	ag_report_fds_taken((unsigned)guard_fd, (unsigned)guard_fd);
	ck_assert_int_eq(dup2(data, guard_fd), guard_fd);
	ag_log("arenaguard: after the dup2");
	char *in_data = slurp(scratch_path("data"));
	char *in_log = slurp(log);
	ck_assert_str_eq(in_data, "");
	ck_assert_str_eq(in_log, "arenaguard: after the dup2\n");
	ck_assert_int_gt(fd_of(log), guard_fd);
	free(in_data);
	free(in_log);
	close(data);
	close(guard_fd);
}
END_TEST

/* Threads writing records while another one dup2s the application's
 * data file onto the log's number, again and again: every record is in
 * the log, none in the data file. */
#define WRITERS 4
#define RECORDS 200
#define TAKES 50

static void *writer(void *arg)
{
	(void)arg;
	for (int i = 0; i < RECORDS; i++)
		ag_log("arenaguard: record %d", i);
	return NULL;
}

START_TEST(test_log_steps_aside_threads)
{
	fake_setup();
	char log[300], data_path[300];
	snprintf(log, sizeof(log), "%s", scratch_path("log"));
	snprintf(data_path, sizeof(data_path), "%s", scratch_path("data"));
	int data = open(data_path, O_WRONLY | O_CREAT, 0644);
	ck_assert_int_ge(data, 0);
	pthread_t t[WRITERS];
	for (int i = 0; i < WRITERS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, writer, NULL), 0);
	for (int i = 0; i < TAKES; i++) {
		int fd = fd_of(log);
		ck_assert_int_ge(fd, 3);
		ag_report_fds_taken((unsigned)fd, (unsigned)fd);
		ck_assert_int_eq(dup2(data, fd), fd);
		close(fd);
	}
	for (int i = 0; i < WRITERS; i++)
		pthread_join(t[i], NULL);
	char *in_data = slurp(data_path);
	char *in_log = slurp(log);
	ck_assert_str_eq(in_data, "");
	ck_assert_int_eq(count(in_log, "arenaguard: record "),
			 WRITERS * RECORDS);
	free(in_data);
	free(in_log);
	close(data);
}
END_TEST

/* ---- in process: dumps ---- */

/* Names of this process's first dumps planted as symlinks to a victim
 * (finished names and the temporary ones): none is followed or
 * overwritten, and the dump is written under the next name. */
START_TEST(test_dump_planted_symlinks)
{
	fake_setup();
	char victim[300];      /* scratch_path's buffers are reused */
	snprintf(victim, sizeof(victim), "%s", scratch_path("victim"));
	FILE *v = fopen(victim, "w");
	ck_assert_ptr_nonnull(v);
	fputs("precious\n", v);
	fclose(v);
	for (int seq = 0; seq < 8; seq++) {
		char name[128];
		snprintf(name, sizeof(name), seq < 4
			 ? "arenaguard-%d-%d-verdict-%d.img"
			 : ".arenaguard-%d-%d-verdict-%d.img.part",
			 (int)getpid(), seq, PROG_BAD_D_VERDICT);
		ck_assert_int_eq(symlink(victim, scratch_path(name)), 0);
	}
	setenv("ARENAGUARD_DUMP", scratch(), 1);
	ag_config_load();
	struct ag_file *f = ag_file_new();
	ck_assert_int_eq(fake_submit(f, fake_bad_d(f)), -EPERM);
	char *log = slurp(scratch_path("log"));
	const char *p = strstr(log, "arenaguard:   dumped to ");
	ck_assert_msg(p, "%s", log);
	char file[512];
	ck_assert_int_eq(sscanf(p, "arenaguard:   dumped to %511[^;]", file),
			 1);
	struct stat st;
	ck_assert_int_eq(lstat(file, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	char *kept = slurp(victim);
	ck_assert_str_eq(kept, "precious\n");
	free(kept);
	free(log);
	ag_file_unref(f);
	unsetenv("ARENAGUARD_DUMP");
}
END_TEST

/* A dump that cannot be written whole (EFBIG past a small file size
 * limit) leaves nothing in the directory, and no SIGXFSZ. */
START_TEST(test_dump_efbig)
{
	fake_setup();
	const char *fifo = scratch_path("fifo");
	const char *dumps = scratch_path("dumps");
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(mkdir(dumps, 0700), 0);
	int reader = open(fifo, O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(reader, 0);
	setenv("ARENAGUARD_LOG", fifo, 1);   /* a pipe: no size limit */
	setenv("ARENAGUARD_DUMP", dumps, 1);
	ag_config_load();
	signal(SIGXFSZ, SIG_DFL);
	struct ag_file *f = ag_file_new();
	uint32_t s = fake_bad_d(f);
	/* Only around the submit: Check's own messages go to a file. */
	struct rlimit rl, small;
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &rl), 0);
	small = (struct rlimit){ 64, rl.rlim_max };
	setrlimit(RLIMIT_FSIZE, &small);
	int rc = fake_submit(f, s);
	setrlimit(RLIMIT_FSIZE, &rl);
	ck_assert_int_eq(rc, -EPERM);
	ck_assert(!pending(SIGXFSZ));
	char *log = pipe_drain(reader);
	close(reader);
	char said[400];
	snprintf(said, sizeof(said), "arenaguard:   could not write a dump "
		 "in %s: File too large\n", dumps);
	ck_assert_msg(strstr(log, said), "%s", log);
	ck_assert_int_eq(entries(dumps), 0);
	free(log);
	ag_file_unref(f);
	unsetenv("ARENAGUARD_DUMP");
}
END_TEST

/* ---- in process: the lock ---- */

/* Nothing is written while the schedule's lock is held: the record of a
 * blocked submission appears when the lock is dropped. */
START_TEST(test_record_after_unlock)
{
	fake_setup();
	struct ag_file *f = ag_file_new();
	uint32_t h = fake_bad_d(f);
	struct ag_sched *s = ag_sched_lock(f, h);
	ck_assert_ptr_nonnull(s);
	struct ag_submit sub = { 42, h, AG_PATH_IOCTL };
	ck_assert_int_eq(ag_decide(s, &sub), -EPERM);
	char *log = slurp(scratch_path("log"));
	ck_assert_str_eq(log, "");
	free(log);
	ag_request_unlock(s);
	log = slurp(scratch_path("log"));
	ck_assert_int_eq(count(log, "arenaguard: blocked submission of "
			       "schedule"), 1);
	free(log);
	ag_file_unref(f);
}
END_TEST

/* A pipe whose buffers hold 2,049 bytes each (no write merges into the
 * buffer before it): FIONREAD says less than the buffers take, so the
 * room the guard estimates for a 24 KB JSON notice is too large and its
 * write stops mid-record.  The record is lost (counted), and the next
 * one starts with the newline that ends the cut line: whole, on a line
 * of its own. */
START_TEST(test_cut_record_line_ended)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(fcntl(p[1], F_SETPIPE_SZ, 65536), 65536);
	char fill[2049];
	memset(fill, 'x', sizeof(fill));
	for (int i = 0; i < 12; i++)
		ck_assert_int_eq(write(p[1], fill, sizeof(fill)),
				 sizeof(fill));
	ck_assert_int_eq(dup2(p[1], STDERR_FILENO), STDERR_FILENO);
	close(p[1]);
	setenv("ARENAGUARD_OPTIONS", "log_format=json", 1);
	fake_setup();
	unsetenv("ARENAGUARD_LOG");
	ag_config_load();
	char big[4000];                  /* \u0001 each: 24 KB of JSON */
	memset(big, 1, sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	unsigned long long lost = atomic_load(&ag_stats.records_lost);
	ag_log("%s", big);
	ck_assert_uint_eq(atomic_load(&ag_stats.records_lost), lost + 1);
	char *cut = pipe_drain(p[0]);
	/* The premise: the write stopped mid-record. */
	ck_assert_msg(strlen(cut) > 12 * sizeof(fill) && !strchr(cut, '\n'),
		      "not cut: %zu bytes", strlen(cut));
	ag_log("arenaguard: after the cut");
	char *next = pipe_drain(p[0]);
	ck_assert_msg(next[0] == '\n' && count(next, "\n") == 2 &&
		      strstr(next, "\"message\": \"after the cut\""),
		      "%s", next);
	free(cut);
	free(next);
	close(p[0]);
}
END_TEST

static void teardown(void)
{
	scratch_remove();
}

Suite *suite_output(void)
{
	Suite *s = suite_create("output");
	TCase *t = tcase_create("output");
	tcase_set_timeout(t, 2 * CHILD_SECONDS);
	tcase_add_checked_fixture(t, NULL, teardown);
	tcase_add_loop_test(t, test_stderr_reader_gone, 0, 2);
	tcase_add_loop_test(t, test_stderr_pipe_full, 0, 2);
	tcase_add_loop_test(t, test_log_fifo_without_reader, 0, 2);
	tcase_add_loop_test(t, test_file_size_limit, 0, 2);
	tcase_add_loop_test(t, test_daemon_data_file, 0, 2);
	tcase_add_test(t, test_long_settings);
	tcase_add_test(t, test_newline_in_setting);
	tcase_add_test(t, test_long_value_one_line);
	tcase_add_test(t, test_notice_sink);
	tcase_add_test(t, test_quiet_write_errno);
	tcase_add_test(t, test_open_errno);
	tcase_add_test(t, test_sigpipe_consumed_not_eaten);
	tcase_add_test(t, test_stderr_let_go);
	tcase_add_test(t, test_log_steps_aside);
	tcase_add_test(t, test_log_steps_aside_threads);
	tcase_add_test(t, test_dump_planted_symlinks);
	tcase_add_test(t, test_dump_efbig);
	tcase_add_test(t, test_record_after_unlock);
	tcase_add_test(t, test_cut_record_line_ended);
	suite_add_tcase(s, t);
	return s;
}
