/* SPDX-License-Identifier: MIT */
/*
 * What the guard tells: one record per distinct (program, verdict) or
 * per distinct reason a schedule could not be certified, so that a loop
 * resubmitting a failing schedule (or rebuilding it every token) writes
 * one record (the keys reported: dedup.c) and counts the rest; the dump of a failing program it
 * names (dump.c); the counters printed at exit.
 *
 * The output rules (report.h, docs/guard.md) are kept here, in
 * quiet_write.c and in dump.c, and nowhere else: every byte the guard
 * writes goes through ag_write_quietly (quiet_write.c), to a
 * descriptor opened by ag_output_open, under out_lock (so that the
 * application's close of that number, seen by ag_report_fds_taken,
 * waits for the write).  Every value in a record is escaped
 * (ag_line_put, line.c): a record's lines are the guard's own.  Neither a record nor a notice
 * needs memory: the first records' keys fit a static table (dedup.c),
 * so that running out of memory is reported too.  With log_format=json
 * every line is a JSON object instead (docs/guard.md, "JSON records"):
 * a record's fields are arena-certify --json's (result_json.h) and the
 * guard's own, written with libarenacert's JSON writer (json_out.h),
 * never jansson, whose allocator may be the application's; composing
 * one needs memory, and without it a fixed line says what was lost.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "cache.h"
#include "mirror.h"
#include "options.h"
#include "process.h"
#include "report.h"
#include "stats.h"
#include "submit.h"
#include "suppress.h"
#include "util.h"
#include "dedup.h"
#include "dump.h"
#include "line.h"
#include "outputs.h"
#include "quiet_write.h"
#include "certify/result_json.h"

struct ag_stats ag_stats;


uint64_t ag_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

char *ag_printf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

/* ---- the guard's descriptors ---- */

/*
 * One descriptor the guard opened: the number, and what it was opened
 * on (device and inode), so that a number the application closed
 * behind the guard's back (a raw close_range, closefrom) and reused for
 * something else is never written to.
 */
struct own_fd {
	_Atomic int fd;          /* -1: none */
	dev_t dev;
	ino_t ino;
	/* The application took the number away (closed it, or reused it):
	 * reacquire it at the next use (reacquire), once.  Written under
	 * out_lock. */
	_Atomic int lost;
	/* A record to it stopped mid-line (write_record): the next one
	 * starts with the newline that ends that line.  Under out_lock. */
	int cut;
};

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static struct own_fd log_out = { -1, 0, 0, 0, 0 };   /* ARENAGUARD_LOG */
static struct own_fd err_out = { -1, 0, 0, 0, 0 };   /* stderr at load time */
static struct own_fd dump_out = { -1, 0, 0, 0, 0 };  /* ARENAGUARD_DUMP (O_PATH) */
static struct own_fd sum_out = { -1, 0, 0, 0, 0 };   /* summary_file, at load */
static int log_failure_said;                   /* under out_lock */

/*
 * out_lock, with every signal blocked and cancellation off while it is
 * held: a handler that closes or dup2s onto fd 2 (log rotation) takes
 * it too, and must not interrupt its own thread's holder; a thread
 * cancelled in a write (a cancellation point) must not leave it
 * locked; SIGPIPE and SIGXFSZ from the guard's writes stay pending
 * for ag_write_quietly to consume.
 */
struct ag_out_state ag_output_lock(void)
{
	struct ag_out_state st;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &st.mask);
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &st.cancel);
	pthread_mutex_lock(&out_lock);
	return st;
}

void ag_output_unlock(struct ag_out_state st)
{
	pthread_mutex_unlock(&out_lock);
	pthread_setcancelstate(st.cancel, NULL);
	pthread_sigmask(SIG_SETMASK, &st.mask, NULL);
}

/* close(2) itself: the interposed close would come back here. */
void ag_output_close(int fd)
{
	syscall(SYS_close, fd);
}

/* The lowest number the guard's descriptors take: high, away from the
 * numbers applications use and reuse, within the descriptor limit. */
static int high_fd_base(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < 8)
		return 3;
	return rl.rlim_cur / 2 < 1000 ? (int)(rl.rlim_cur / 2) : 1000;
}

/* Moves fd (which the guard opened, or duplicated) to a high number,
 * close-on-exec, and keeps it in o: 0 or an errno (fd is closed). */
static int keep(struct own_fd *o, int fd, int dup_only)
{
	int high = fcntl(fd, F_DUPFD_CLOEXEC, high_fd_base());
	int err = high < 0 ? errno : 0;
	if (!dup_only)
		ag_output_close(fd);
	if (high < 0)
		return err;
	struct stat st;
	if (fstat(high, &st) != 0) {
		err = errno;
		ag_output_close(high);
		return err;
	}
	/* Another file has no line of the guard's left open in it. */
	if (st.st_dev != o->dev || st.st_ino != o->ino)
		o->cut = 0;
	o->dev = st.st_dev;
	o->ino = st.st_ino;
	atomic_store(&o->fd, high);
	return 0;
}

static void reacquire(struct own_fd *o);

/* o's number if it is still what the guard opened, else -1 (given
 * up: the application has the number now), after reacquiring it once
 * when the application took it (o->lost).  out_lock held. */
static int own(struct own_fd *o)
{
	int fd = atomic_load(&o->fd);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_dev != o->dev ||
			st.st_ino != o->ino)) {
		/* Not in a child that shares the guard's memory with a copy
		 * of its fd table (vfork): what it closed is its copy, and
		 * the parent's descriptor stays the guard's.  The child's
		 * record is lost. */
		if (!ag_process_shares_fds())
			return -1;
		/* Closed behind the guard's back (a raw close_range) and
		 * maybe reused: never written to. */
		atomic_store(&o->fd, -1);
		o->lost = 1;
		fd = -1;
	}
	if (fd < 0 && o->lost) {
		/* Reacquired only by the guard's own process: a vfork
		 * child's descriptor would not be open in the parent. */
		if (!ag_process_shares_fds())
			return -1;
		o->lost = 0;
		reacquire(o);
		fd = atomic_load(&o->fd);
	}
	return fd;
}

int ag_output_dump_dir(void)
{
	return own(&dump_out);
}

/* Closes o and forgets it (no reacquiring).  out_lock held. */
static void release(struct own_fd *o)
{
	int fd = atomic_load(&o->fd);
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == o->dev &&
	    st.st_ino == o->ino)
		ag_output_close(fd);
	atomic_store(&o->fd, -1);
	o->lost = 0;
}

/*
 * Writes a record, text[0, len) ending with its newline, to fd (o's):
 * 0 or an errno.  Whole or not at all where the guard can tell: a
 * record that is larger than the room a pipe or stream socket has now
 * (ag_write_room) is not written (EAGAIN: lost, not cut).  When a write stops
 * mid-record all the same (the estimate was wrong: another writer came
 * between; a terminal; a full disk), o->cut is set and the next record
 * to o starts with a newline: the cut line is one bad line, the
 * records after it whole.  out_lock held.
 */
static int write_record(struct own_fd *o, int fd, const char *text,
			size_t len)
{
	assert(len == 0 || text[len - 1] == '\n');
	size_t need = len + (size_t)o->cut;
	if (need > PIPE_BUF && need > ag_write_room(fd, ag_fd_file_type(fd)))
		return EAGAIN;
	int err;
	if (o->cut && (err = ag_write_quietly(fd, "\n", 1, NULL)) != 0)
		return err;
	o->cut = 0;
	size_t done;
	err = ag_write_quietly(fd, text, len, &done);
	if (done > 0 && done < len)
		o->cut = 1;
	return err;
}

/* Writes a whole record: to the log, or to standard error when there is
 * none or it fails (said once); counted as lost when neither takes it.
 * out_lock held. */
static void emit_locked(const char *text, size_t len)
{
	int err = -1;
	int fd = own(&log_out);
	if (fd >= 0)
		err = write_record(&log_out, fd, text, len);
	if (err > 0 && !log_failure_said) {
		log_failure_said = 1;
		char buf[4096];
		struct ag_line t = { buf, sizeof(buf), 0 };
		ag_line_put(&t, "arenaguard: cannot write the log %s: %s; records "
		    "that it cannot take go to standard error",
		    ag_cfg.log_path, strerror(err));
		ag_line_end(&t);
		int efd = own(&err_out);
		if (efd >= 0)
			write_record(&err_out, efd, t.buf, t.used);
	}
	if (err != 0) {
		int efd = own(&err_out);
		err = efd >= 0 ? write_record(&err_out, efd, text, len) : EBADF;
	}
	if (err != 0)
		atomic_fetch_add(&ag_stats.records_lost, 1);
}

static void emit(const char *text, size_t len)
{
	int saved = errno;
	struct ag_out_state state = ag_output_lock();
	emit_locked(text, len);
	ag_output_unlock(state);
	errno = saved;
}

/* ---- JSON lines ---- */

/* Writes the keys every JSON line has, "event": event, "time" (ISO 8601
 * UTC), "pid" and "exe", into the object open in j. */
static void json_line_keys(struct json_out *j, const char *event)
{
	struct timespec ts;
	struct tm tm;
	char when[40] = "";
	clock_gettime(CLOCK_REALTIME, &ts);
	if (gmtime_r(&ts.tv_sec, &tm)) {
		size_t n = strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
		snprintf(when + n, sizeof(when) - n, ".%03ldZ",
			 ts.tv_nsec / 1000000);
	}
	aci_json_out_string_at(j, "event", event);
	aci_json_out_string_at(j, "time", when);
	aci_json_out_int_at(j, "pid", getpid());
	aci_json_out_string_at(j, "exe", program_invocation_short_name);
}

/* Opens a JSON line's object in j (empty) with its first keys. */
static void json_line_start(struct json_out *j, const char *event)
{
	aci_json_out_object(j);
	json_line_keys(j, event);
}

/* The fixed line of a JSON record memory did not allow, counted lost:
 * what members (numbers and fixed words only, ", ..." each, or "")
 * say which record it was. */
static void emit_json_lost(const char *what)
{
	char fixed[384];
	int n = snprintf(fixed, sizeof(fixed), "{\"event\": \"lost\", "
			 "\"pid\": %d%s, \"why\": \"out of memory\"}\n",
			 (int)getpid(), what);
	atomic_fetch_add(&ag_stats.records_lost, 1);
	emit(fixed, n > 0 && (size_t)n < sizeof(fixed) ? (size_t)n : 0);
}

/* Closes the object open in j and writes it as one line; j is empty
 * after.  What memory did not allow is a fixed line, counted as lost. */
static void emit_json(struct json_out *j)
{
	size_t len = 0;
	aci_json_out_end(j);
	char *line = aci_json_out_take(j, 1, &len);
	if (!line) {
		emit_json_lost("");
		return;
	}
	emit(line, len);
	free(line);
}

/* A notice: "arenaguard: MESSAGE" as a line, or {"event": "notice",
 * ..., "message": MESSAGE} under log_format=json. */
static void vnotice(const char *fmt, va_list ap)
{
	char msg[4096];
	int n = vsnprintf(msg, sizeof(msg), fmt, ap);
	size_t len = n < 0 ? 0 : (size_t)n < sizeof(msg) ? (size_t)n
							 : sizeof(msg) - 1;
	if (ag_cfg.log_json) {
		static const char prefix[] = "arenaguard: ";
		const char *m = msg;
		if (!strncmp(m, prefix, sizeof(prefix) - 1))
			m += sizeof(prefix) - 1, len -= sizeof(prefix) - 1;
		struct json_out j = JSON_OUT_INIT;
		json_line_start(&j, "notice");
		aci_json_out_key(&j, "message");
		aci_json_out_text(&j, m, len);
		emit_json(&j);
		return;
	}
	char buf[4096];
	struct ag_line t = { buf, sizeof(buf), 0 };
	ag_line_put_escaped(&t, msg, len);
	ag_line_end(&t);
	emit(t.buf, t.used);
}


void ag_log(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vnotice(fmt, ap);
	va_end(ap);
}

/* ---- opening the outputs, and the settings said at start ---- */

/* The log and the dump directory as first opened, made absolute with
 * the directory the process was in then: what reacquire opens again
 * after the application took the descriptor away, when it may have
 * changed directory since (a daemon's chdir("/") before its
 * close_range(3, ~0U)).  Under out_lock. */
static char log_abs[AG_PATH_MAX + 1], dump_abs[AG_PATH_MAX + 1];

/* path, made absolute with the current directory when it fits (else as
 * it is), into out.  No allocation, no stdio: a forked child calls it. */
static void absolute(char *out, size_t len, const char *path)
{
	size_t n = strlen(path);
	if (path[0] != '/' && getcwd(out, len)) {
		size_t at = strlen(out);
		if (out[at - 1] != '/')         /* "/" alone ends in one */
			out[at++] = '/';
		if (at + n < len) {
			memcpy(out + at, path, n + 1);
			return;
		}
	}
	if (n < len)
		memcpy(out, path, n + 1);
	else
		out[0] = 0;
}

/* Opens the log at path: 0, or the errno said at start.  O_NONBLOCK: a
 * FIFO without a reader is ENXIO, not a wait; the description is the
 * guard's own, so nobody else sees the flag.  out_lock held. */
static int open_log_at(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC |
		      O_NOCTTY | O_NONBLOCK, 0644);
	return fd < 0 ? errno : keep(&log_out, fd, 0);
}

/* Opens ARENAGUARD_LOG, remembering where it is (log_abs). */
static int open_log(void)
{
	absolute(log_abs, sizeof(log_abs), ag_cfg.log_path);
	return open_log_at(log_abs[0] ? log_abs : ag_cfg.log_path);
}

/* Opens the dump directory at path as a directory (O_PATH: only a place
 * to create files in, as it was at start).  0 or an errno.  out_lock
 * held. */
static int open_dump_at(const char *path)
{
	int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? errno : keep(&dump_out, fd, 0);
}

/* Opens ARENAGUARD_DUMP, remembering where it is (dump_abs). */
static int open_dump_dir(void)
{
	absolute(dump_abs, sizeof(dump_abs), ag_cfg.dump_dir);
	return open_dump_at(dump_abs[0] ? dump_abs : ag_cfg.dump_dir);
}

/* Standard error, when it is a pipe or FIFO, opened again as the
 * guard's own description (O_NONBLOCK: a write that would wait fails,
 * even when the application writes to it at the same time), or -1:
 * anything else is duplicated (reopening a device could have effects
 * on it; a socket is sent to with MSG_DONTWAIT). */
static int reopen_fifo(int fd)
{
	struct stat st, again;
	if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode))
		return -1;
	char path[40];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int own_fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (own_fd < 0)
		return -1;
	if (fstat(own_fd, &again) != 0 || again.st_dev != st.st_dev ||
	    again.st_ino != st.st_ino) {
		ag_output_close(own_fd);
		return -1;
	}
	return own_fd;
}

/* Expands log_path's template into ag_cfg.log_path: %p the pid, %e the
 * executable's name, %% a %; any other % is itself.  0, or the length
 * the expansion would have when it does not fit (log_path is then "").
 * No allocation and no stdio: a forked child calls it (ag_output_forked). */
/* Standard error as the guard's own descriptor: its own description
 * of a pipe or FIFO (reopen_fifo), else a duplicate; only while fd 2
 * is open.  out_lock held. */
static void open_err(void)
{
	int own_err = reopen_fifo(STDERR_FILENO);
	if (own_err >= 0)
		keep(&err_out, own_err, 0);
	else if (fcntl(STDERR_FILENO, F_GETFD) >= 0)
		keep(&err_out, STDERR_FILENO, 1);
}

/*
 * o again after the application took its number away (closed it with
 * the rest of a range, docs/guard.md "Descriptors"): the log and the
 * dump directory by their paths (log_abs, dump_abs: as absolute as at
 * load), at a high number like the first time;
 * standard error from fd 2 only if fd 2 is still the file the guard
 * took at start (the application's fd 2 that it closed or replaced is
 * its choice, never written to).  out_lock held.
 */
static void reacquire(struct own_fd *o)
{
	if (o == &log_out && ag_cfg.log_path[0])
		open_log_at(log_abs[0] ? log_abs : ag_cfg.log_path);
	else if (o == &dump_out && ag_cfg.dump_dir[0])
		open_dump_at(dump_abs[0] ? dump_abs : ag_cfg.dump_dir);
	else if (o == &err_out) {
		struct stat st;
		if (fstat(STDERR_FILENO, &st) == 0 && st.st_dev == o->dev &&
		    st.st_ino == o->ino)
			open_err();
	}
}

static size_t expand_log_path(void)
{
	const char *t = ag_cfg.log_template;
	char *out = ag_cfg.log_path;
	size_t n = 0, cap = sizeof(ag_cfg.log_path);
	char pid[24];
	size_t pid_len = 0;
	for (unsigned long v = (unsigned long)getpid(); v || !pid_len; v /= 10)
		pid[sizeof(pid) - 1 - pid_len++] = (char)('0' + v % 10);
	for (; *t; t++) {
		const char *piece = t;
		size_t len = 1;
		if (t[0] == '%' && t[1] == 'p') {
			piece = pid + sizeof(pid) - pid_len, len = pid_len, t++;
		} else if (t[0] == '%' && t[1] == 'e') {
			piece = program_invocation_short_name;
			len = strlen(piece), t++;
		} else if (t[0] == '%' && t[1] == '%') {
			t++;
		}
		if (n + len < cap)
			memcpy(out + n, piece, len);
		n += len;
	}
	if (n >= cap) {
		out[0] = 0;
		return n;
	}
	out[n] = 0;
	return 0;
}

/* ---- the summary, and the launcher's channel ---- */

/* The counts this process started from: its parent's at fork (a forked
 * child inherits them, and the launcher sums over processes). */
static unsigned long long base_submissions, base_blocked, base_warned,
	base_suppressed, base_repeats;
/* A refusal was written to summary_file already (in this process). */
static atomic_int refusal_said;

/* summary_file opened for appending (never blocking, never a
 * controlling terminal): a descriptor, or -1. */
static int open_summary_file(void)
{
	return open(ag_cfg.summary_file, O_WRONLY | O_APPEND | O_CLOEXEC |
		    O_NOCTTY | O_NONBLOCK);
}

/* Appends line[0, len) to summary_file opened by its path for the line
 * (the guard's descriptor is gone).  No lock, no allocation. */
static void append_summary_path(const char *line, size_t len)
{
	int fd = open_summary_file();
	if (fd < 0)
		return;
	ag_write_quietly(fd, line, len, NULL);
	ag_output_close(fd);
}

/* Appends line[0, len) to summary_file with one write (O_APPEND: the
 * lines of concurrent processes do not mix): through the descriptor
 * opened at load (sum_out) while it is still the guard's, so that a
 * process that dropped its privileges since (a server become nobody,
 * its forked workers) still reaches the launcher's 0600 file; else
 * opened by path for the line (the application closed it). */
static void append_summary_file(const char *line, size_t len)
{
	struct ag_out_state state = ag_output_lock();
	int fd = own(&sum_out);
	if (fd >= 0)
		ag_write_quietly(fd, line, len, NULL);
	ag_output_unlock(state);
	if (fd < 0)
		append_summary_path(line, len);
}

/* The first refusal of this process is told to the launcher at once,
 * so that --error-exitcode fails the job even when the process never
 * reaches its exit (killed, or an exec). */
static void tell_refusal(void)
{
	if (!ag_cfg.summary_file[0] || atomic_exchange(&refusal_said, 1))
		return;
	char line[64];
	int n = snprintf(line, sizeof(line), "refused %d\n", (int)getpid());
	append_summary_file(line, (size_t)n);
}

void ag_report_loaded(void)
{
	struct ag_out_state state = ag_output_lock();
	release(&sum_out);
	/* Off, the guard holds no descriptor (it counts nothing either). */
	if (ag_cfg.summary_file[0] && ag_cfg.mode != AG_OFF) {
		int fd = open_summary_file();
		if (fd >= 0)
			keep(&sum_out, fd, 0);
	}
	ag_output_unlock(state);
	if (!ag_cfg.summary_file[0])
		return;
	char line[64];
	int n = snprintf(line, sizeof(line), "loaded %d\n", (int)getpid());
	append_summary_file(line, (size_t)n);
}

/* Appends line[0, len) to summary_file without out_lock (a vfork
 * child's, which must take no lock): sum_out's number while it is still
 * the file opened at load (set at load, before any exec), else the path
 * opened for the line. */
static void append_summary_raw(const char *line, size_t len)
{
	int fd = atomic_load(&sum_out.fd);
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == sum_out.dev &&
	    st.st_ino == sum_out.ino) {
		ag_write_quietly(fd, line, len, NULL);
		return;
	}
	append_summary_path(line, len);
}

/* A summary line built on the stack (no stdio: a vfork child's):
 * buf[0, n), room for the newline kept. */
struct raw_line {
	char buf[512];
	size_t n;
};

/* Appends s, a control character or a space as '?' when field (so that
 * a path stays one space-separated field of one line). */
static void raw_put(struct raw_line *t, const char *s, int field)
{
	for (; *s && t->n + 1 < sizeof(t->buf); s++)
		t->buf[t->n++] = field && ((unsigned char)*s <= ' ' ||
					   *s == 0x7f) ? '?' : *s;
}

/* Appends this process's id in decimal. */
static void raw_put_pid(struct raw_line *t)
{
	char d[16];
	size_t k = 0;
	unsigned int u = (unsigned int)getpid();
	do
		d[k++] = (char)('0' + u % 10);
	while ((u /= 10) && k < sizeof(d));
	while (k && t->n + 1 < sizeof(t->buf))
		t->buf[t->n++] = d[--k];
}

void ag_report_unguarded(const char *path, const char *why)
{
	if (!ag_cfg.summary_file[0])
		return;
	struct raw_line t = { .n = 0 };
	raw_put(&t, "unguarded ", 0);
	raw_put_pid(&t);
	raw_put(&t, " ", 0);
	raw_put(&t, path, 1);
	raw_put(&t, " ", 0);
	raw_put(&t, why, 1);
	t.buf[t.n++] = '\n';
	append_summary_raw(t.buf, t.n);
}

void ag_report_exec_failed(void)
{
	if (!ag_cfg.summary_file[0])
		return;
	struct raw_line t = { .n = 0 };
	raw_put(&t, "execfailed ", 0);
	raw_put_pid(&t);
	t.buf[t.n++] = '\n';
	append_summary_raw(t.buf, t.n);
}

void ag_report_summary(void)
{
	unsigned long long sub = atomic_load(&ag_stats.submissions) -
				 base_submissions,
		blocked = atomic_load(&ag_stats.blocked) - base_blocked,
		warned = atomic_load(&ag_stats.warned) - base_warned,
		suppressed = atomic_load(&ag_stats.suppressed) -
			     base_suppressed;
	if (ag_cfg.summary_file[0]) {
		char line[160];
		int n = snprintf(line, sizeof(line), "counts %d %llu %llu %llu "
				 "%llu\n", (int)getpid(), sub, blocked, warned,
				 suppressed);
		append_summary_file(line, (size_t)n);
		return;
	}
	/* Silent when there is nothing to say, as a sanitizer is; the
	 * launcher prints the line of every run. */
	if (!ag_cfg.summary || blocked + warned + suppressed == 0)
		return;
	if (ag_cfg.log_json) {
		struct json_out j = JSON_OUT_INIT;
		json_line_start(&j, "summary");
		aci_json_out_uint_at(&j, "submissions", sub);
		aci_json_out_uint_at(&j, "blocked", blocked);
		aci_json_out_uint_at(&j, "warned", warned);
		aci_json_out_uint_at(&j, "suppressed", suppressed);
		emit_json(&j);
		return;
	}
	ag_log("arenaguard: SUMMARY: %llu submissions, %llu blocked, %llu "
	       "warned, %llu suppressed", sub, blocked, warned, suppressed);
}

void ag_output_forked(void)
{
	base_submissions = atomic_load(&ag_stats.submissions);
	base_blocked = atomic_load(&ag_stats.blocked);
	base_warned = atomic_load(&ag_stats.warned);
	base_suppressed = atomic_load(&ag_stats.suppressed);
	base_repeats = atomic_load(&ag_stats.repeats);
	atomic_store(&refusal_said, 0);
	if (ag_cfg.mode == AG_OFF || !strstr(ag_cfg.log_template, "%p"))
		return;
	struct ag_out_state state = ag_output_lock();
	release(&log_out);
	if (expand_log_path() == 0 && ag_cfg.log_path[0])
		open_log();
	ag_output_unlock(state);
}

void ag_output_open(void)
{
	if (!ag_cfg.log_too_long)
		ag_cfg.log_too_long = expand_log_path();
	struct ag_out_state state = ag_output_lock();
	release(&log_out);
	release(&err_out);
	release(&dump_out);
	log_failure_said = 0;
	int on = ag_cfg.mode != AG_OFF;
	if (on)
		open_err();
	int log_err = on && ag_cfg.log_path[0] ? open_log() : 0;
	int dump_err = on && ag_cfg.dump_dir[0] ? open_dump_dir() : 0;
	ag_output_unlock(state);
	if (!on)
		return;

	/* What cannot be honoured, once, now. */
	ag_config_say(&ag_cfg, ag_log);
	if (ag_cfg.help)
		ag_options_help(ag_log);
	if (log_err)
		ag_log("arenaguard: cannot open the log %s: %s; records go to "
		       "standard error", ag_cfg.log_path, strerror(log_err));
	if (dump_err)
		ag_log("arenaguard: cannot use the dump directory %s: %s; no "
		       "dumps are written", ag_cfg.dump_dir,
		       strerror(dump_err));
}

/* The guard's descriptor o, if in [first, last], moves to a number
 * outside it, or is given up when there is none.  out_lock held. */
static void step_aside(struct own_fd *o, unsigned int first,
		       unsigned int last)
{
	int fd = atomic_load(&o->fd);
	if (fd < 0 || (unsigned int)fd < first || (unsigned int)fd > last)
		return;
	/* Never below: a daemon that closed its standard streams expects
	 * its next open to get 0, 1 or 2. */
	int to = last < INT_MAX ? fcntl(fd, F_DUPFD_CLOEXEC, (int)last + 1)
				: -1;
	/* The application's call closes fd itself; with no number left
	 * above the range (close_range(3, ~0U)), o is reacquired at its
	 * next use. */
	atomic_store(&o->fd, to < 0 ? -1 : to);
	o->lost = to < 0;
}

/* Whether fd is open on the file the guard's o was opened on. */
static int same_file(int fd, const struct own_fd *o)
{
	struct stat st;
	return fstat(fd, &st) == 0 && st.st_dev == o->dev &&
	       st.st_ino == o->ino;
}

void ag_report_fds_taken(unsigned int first, unsigned int last)
{
	struct own_fd *all[] = { &log_out, &err_out, &dump_out, &sum_out };
	int mine = 0;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		int fd = atomic_load_explicit(&all[i]->fd,
					      memory_order_relaxed);
		mine |= fd >= 0 && (unsigned int)fd >= first &&
			(unsigned int)fd <= last;
	}
	int stderr_too = first <= STDERR_FILENO && STDERR_FILENO <= last &&
			 atomic_load_explicit(&err_out.fd,
					      memory_order_relaxed) >= 0;
	/* A child with its own fd table (vfork) takes only its copies. */
	if ((!mine && !stderr_too) || !ag_process_shares_fds())
		return;
	int saved = errno;
	struct ag_out_state state = ag_output_lock();
	/* The application lets go of its standard error (a daemon
	 * detaching, a redirection): so does the guard, whose copy would
	 * otherwise keep a pipe's reader from ever seeing its end. */
	if (stderr_too && same_file(STDERR_FILENO, &err_out))
		release(&err_out);
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		step_aside(all[i], first, last);
	ag_output_unlock(state);
	errno = saved;
}

void ag_report_once(const char *key, const char *fmt, ...)
{
	if (ag_dedup_seen(key))
		return;
	char msg[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	atomic_fetch_add(&ag_stats.records, 1);
	ag_log("arenaguard: %s", msg);
}

int ag_report_reentered(const char *what, int fd)
{
	/* Neither the dedup table (report_lock, dedup.c) nor jansson (malloc): the
	 * interrupted thread may hold either.  emit() takes the output
	 * lock, which no thread holds with signals unblocked. */
	static const char why[] = "made while its thread was inside the "
		"guard (a signal handler interrupted it, and may wait for a "
		"lock its own thread holds): not checked, not run";
	char line[512];
	int n = ag_cfg.log_json
		? snprintf(line, sizeof(line), "{\"event\": \"refused\", "
			   "\"pid\": %d, \"request\": \"%s\", \"fd\": %d, "
			   "\"errno\": \"EDEADLK\", \"why\": \"%s\"}\n",
			   (int)getpid(), what, fd, why)
		: snprintf(line, sizeof(line), "arenaguard: refused %s on fd "
			   "%d with EDEADLK (pid %d): %s\n", what, fd,
			   (int)getpid(), why);
	atomic_fetch_add(&ag_stats.blocked, 1);
	atomic_fetch_add(&ag_stats.records, 1);
	emit(line, n > 0 && (size_t)n < sizeof(line) ? (size_t)n : 0);
	return -EDEADLK;
}

int ag_no_memory(const char *request)
{
	char key[96];
	snprintf(key, sizeof(key), "out of memory %s", request);
	ag_report_once(key, "out of memory: %s refused with ENOMEM (pid %d)",
		       request, (int)getpid());
	return -ENOMEM;
}

/* ---- records ---- */

/*
 * A record composed while its schedule was locked, with what its dump
 * needs (referenced: the program is immutable and a prefix of the
 * references never changes), written by ag_report_flush once the lock
 * is dropped: a slow disk never holds a schedule's lock.  A record is
 * text in t, or (log_format=json) the object open in json, whose
 * "dump" is added when the dump is written.
 */
struct pending {
	struct pending *next;
	struct ag_line t;
	struct json_out json;
	struct ag_program *program;     /* to dump, or NULL */
	struct ag_refs *refv;
	uint64_t n_refs, verdict;
	char buf[3 * AG_PATH_MAX + 8192];   /* three dump paths, the rest */
};

static __thread struct pending *pending_head
	__attribute__((tls_model("initial-exec")));

static const char *path_name(enum ag_path path)
{
	return path == AG_PATH_URING ? "io_uring" : "ioctl";
}

/* The objects, as in "schedule 3 (program 1, fd 5, ioctl, pid 42)". */
static void put_what(struct ag_line *t, const struct ag_submit *sub,
		     const struct ag_sched *s)
{
	ag_line_put(t, "schedule %u (", sub->schedule);
	if (s)
		ag_line_put(t, "program %u, ", ag_sched_program_handle(s));
	ag_line_put(t, "fd %d, %s, pid %d)", sub->fd, path_name(sub->path),
	    (int)getpid());
}

/* What makes a record distinct: the program and its verdict; or the
 * program and the reason it cannot be decided; or, for a schedule the
 * guard never saw, the handle. */
static void dedup_key(char *key, size_t len, const struct ag_submit *sub,
		      const struct ag_sched *s, const struct ag_verdict *v,
		      const char *why)
{
	const struct ag_program *p = s ? ag_sched_program(s) : NULL;
	char hex[33] = "";
	if (p)
		ag_digest_text(&p->digest, hex);
	if (v)
		snprintf(key, len, "verdict %s %" PRIu64, hex, v->verdict);
	else if (!s)
		snprintf(key, len, "unknown %u", sub->schedule);
	else
		snprintf(key, len, "why %s %.200s", hex, why);
}

/* The guard's fields of a record about a request on fd by path: the
 * open file, the objects, the program's digest; into the object open in
 * j. */
static void json_request_fields(struct json_out *j, int fd, enum ag_path path,
				const struct ag_sched *s,
				const struct ag_program *p, uint32_t schedule)
{
	char hex[33];
	aci_json_out_string_at(j, "mode", ag_mode_name(ag_cfg.mode));
	aci_json_out_int_at(j, "fd", fd);
	aci_json_out_string_at(j, "path", path_name(path));
	if (s || schedule)
		aci_json_out_uint_at(j, "schedule", schedule);
	if (s) {
		aci_json_out_uint_at(j, "program", ag_sched_program_handle(s));
		aci_json_out_uint_at(j, "schedule_length", ag_sched_length(s));
	}
	if (p) {
		ag_digest_text(&p->digest, hex);
		aci_json_out_string_at(j, "digest", hex);
	}
}

/* A submission's record as JSON, into j (empty; the object is left
 * open): arena-certify --json's object for a verdict ("explanation" the
 * rendered diagnostic, the program's advisories), or {"verdict": null,
 * "condition": null, "reason": "cannot-certify" or "strict-advisories",
 * "explanation": why}; then the guard's keys: "event" ("blocked" or
 * "warned"), time, pid, exe, mode, fd, path, program, schedule,
 * schedule_length, digest, signature (digest:verdict) and suppress (the
 * rule that would suppress it).  j->failed: no memory. */
static void submission_json(struct json_out *j, const struct ag_submit *sub,
			    const struct ag_sched *s,
			    const struct ag_verdict *v, const char *why,
			    int blocked)
{
	const struct ag_program *p = s ? ag_sched_program(s) : NULL;
	aci_result_json_begin(j, NULL, v ? &v->verdict : NULL);
	if (v) {
		struct ac_advisory *adv = NULL;
		uint64_t n_adv = 0;
		if (ac_program_advisories(p->prog, &adv, &n_adv, NULL) != 0)
			n_adv = 0;
		aci_result_json_fields(j, p->prog, &v->diag, v->text, adv, n_adv,
				       1);
		free(adv);
	} else {
		int strict = p && why == p->advisory;
		aci_json_out_key(j, "condition");
		aci_json_out_null(j);
		aci_json_out_string_at(j, "reason", strict ? "strict-advisories"
						       : "cannot-certify");
		aci_json_out_string_at(j, "explanation", why);
	}
	json_line_keys(j, blocked ? "blocked" : "warned");
	json_request_fields(j, sub->fd, sub->path, s, p, sub->schedule);
	if (v) {
		char sig[64], hint[96], hex[33];
		ag_digest_text(&p->digest, hex);
		snprintf(sig, sizeof(sig), "%s:%" PRIu64, hex, v->verdict);
		aci_json_out_string_at(j, "signature", sig);
		if (ag_suppress_hint(p, v, hint, sizeof(hint)) == 0)
			aci_json_out_string_at(j, "suppress", hint);
	}
}

/* A submission's record as text: what was refused and why, the
 * schedule's length, and the rule that would suppress it. */
static void submission_text(struct ag_line *t, const struct ag_submit *sub,
			    const struct ag_sched *s,
			    const struct ag_verdict *v, const char *why,
			    int blocked)
{
	ag_line_put(t, "arenaguard: %s ", blocked ? "blocked submission of"
					  : "warning: submitting");
	put_what(t, sub, s);
	if (v)
		ag_line_put(t, ": verdict %" PRIu64 " (%s)", v->verdict,
		    ac_condition_name(v->diag.condition));
	else if (s && ag_sched_program(s) &&
		 why == ag_sched_program(s)->advisory)
		ag_line_put(t, ": certified, but refused in strict mode");
	else
		ag_line_put(t, ": cannot certify");
	ag_line_end(t);
	ag_line_put(t, "arenaguard:   %s", v ? v->text : why);
	ag_line_end(t);
	if (s) {
		char hint[96];
		uint64_t n = ag_sched_length(s);
		ag_line_put(t, "arenaguard:   the schedule holds %" PRIu64
		    " reference%s", n, n == 1 ? "" : "s");
		if (ag_suppress_hint(ag_sched_program(s), v, hint,
				     sizeof(hint)) == 0)
			ag_line_put(t, "; to suppress, the rule: %s", hint);
		ag_line_end(t);
	}
	if (!blocked) {
		ag_line_put(t, "arenaguard:   submitted anyway (ARENAGUARD=warn)");
		ag_line_end(t);
	}
}

/* Dumps (if asked), adds the dump's line (or key), writes and frees p. */
static void finish(struct pending *p)
{
	if (p->program) {
		char name[128], path[AG_PATH_MAX + 160];
		int err = ag_dump(p->program, p->refv ? p->refv->v : NULL,
				  p->n_refs, p->verdict, name, sizeof(name));
		snprintf(path, sizeof(path), "%s/%s", ag_cfg.dump_dir, name);
		if (ag_cfg.log_json) {
			aci_json_out_key(&p->json, err ? "dump_error" : "dump");
			aci_json_out_string(&p->json, err ? strerror(err) : path);
		} else if (err == 0) {
			/* One put per path: each is up to 4095 bytes. */
			ag_line_put(&p->t, "arenaguard:   dumped to %s", path);
			ag_line_put(&p->t, "; render with: arena-certify %s", path);
			ag_line_put(&p->t, " (a picture: arena-certify --html "
			    "report.html %s)", path);
		} else {
			ag_line_put(&p->t, "arenaguard:   could not write a dump in %s: "
			    "%s", ag_cfg.dump_dir, strerror(err));
		}
		if (!ag_cfg.log_json)
			ag_line_end(&p->t);
		ag_program_unref(p->program);
		ag_refs_unref(p->refv);
	}
	if (ag_cfg.log_json)
		emit_json(&p->json);
	else
		emit(p->t.buf, p->t.used);
	free(p);
}

/* halt_on_error: this thread's blocked submission has been recorded
 * once its pending records are written. */
static __thread int halt_after_flush
	__attribute__((tls_model("initial-exec")));

/* Aborts (SIGABRT, a core to debug) when this thread blocked a
 * submission under halt_on_error and has no record left to write. */
static void halt_if_asked(void)
{
	if (!halt_after_flush || pending_head)
		return;
	ag_log("arenaguard: halt_on_error: aborting at the first blocked "
	       "submission");
	ag_report_summary();
	abort();
}

void ag_report_flush(void)
{
	while (pending_head) {
		struct pending *p = pending_head;
		pending_head = p->next;
		finish(p);
	}
	halt_if_asked();
}

/* Whether key was reported before (then counted as a repeat). */
static int reported_before(const char *key)
{
	int old = ag_dedup_seen(key);
	if (old)
		atomic_fetch_add(&ag_stats.repeats, 1);
	return old;
}

/* Queues p to be written once the schedule's lock is dropped (locked),
 * or writes it now. */
static void queue(struct pending *p, int locked)
{
	if (!locked) {
		finish(p);
		return;
	}
	struct pending **tail = &pending_head;   /* in the order composed */
	while (*tail)
		tail = &(*tail)->next;
	*tail = p;
}

void ag_report_submission(const struct ag_submit *sub, struct ag_sched *s,
			  const struct ag_verdict *v, const char *why,
			  int blocked)
{
	assert(sub && (v || why));
	tell_refusal();
	if (blocked && ag_cfg.halt_on_error)
		halt_after_flush = 1;
	char key[320];
	dedup_key(key, sizeof(key), sub, s, v, why);
	if (reported_before(key)) {
		halt_if_asked();
		return;
	}
	atomic_fetch_add(&ag_stats.records, 1);

	struct pending *p = malloc(sizeof(*p));
	if (p) {
		*p = (struct pending){ .t = { p->buf, sizeof(p->buf), 0 },
				       .verdict = v ? v->verdict : AC_NONE };
		if (ag_cfg.log_json)
			submission_json(&p->json, sub, s, v, why, blocked);
		else
			submission_text(&p->t, sub, s, v, why, blocked);
	}
	int dump = (atomic_load(&dump_out.fd) >= 0 ||
		    atomic_load(&dump_out.lost)) && s && ag_sched_program(s);
	if (!p || (ag_cfg.log_json && p->json.failed)) {
		/* No memory: the text on the stack, or JSON's fixed line. */
		char small[2048];
		struct ag_line t = { small, sizeof(small), 0 };
		if (ag_cfg.log_json) {
			/* Which submission, and what became of it. */
			char what[160], verdict[24] = "null";
			if (v)
				snprintf(verdict, sizeof(verdict), "%" PRIu64,
					 v->verdict);
			snprintf(what, sizeof(what), ", \"record\": \"%s\", "
				 "\"fd\": %d, \"path\": \"%s\", \"schedule\""
				 ": %u, \"verdict\": %s",
				 blocked ? "blocked" : "warned", sub->fd,
				 path_name(sub->path), sub->schedule, verdict);
			emit_json_lost(what);
		} else {
			submission_text(&t, sub, s, v, why, blocked);
			if (dump) {
				ag_line_put(&t, "arenaguard:   could not write a dump "
				    "in %s: %s", ag_cfg.dump_dir,
				    strerror(ENOMEM));
				ag_line_end(&t);
			}
			emit(t.buf, t.used);
		}
		if (p)
			aci_json_out_free(&p->json);
		free(p);
		halt_if_asked();
		return;
	}
	if (dump)
		ag_sched_contents(s, &p->program, &p->refv, &p->n_refs);
	queue(p, s != NULL);   /* no schedule, no lock held: now */
	if (!s)
		halt_if_asked();
}

void ag_report_malformed(const char *request, const struct ag_submit *sub,
			 struct ag_sched *s, const struct ag_program *p,
			 const char *error, const char *outcome)
{
	assert(request && sub && error && outcome);
	char key[64], hex[33] = "";
	if (p)
		ag_digest_text(&p->digest, hex);
	/* One per request kind and program, whatever the mistake: an
	 * application that keeps sending bad batches writes one record,
	 * and the keys kept stay bounded by the programs. */
	snprintf(key, sizeof(key), "%s %s", request, hex);
	if (reported_before(key))
		return;
	atomic_fetch_add(&ag_stats.records, 1);
	struct pending *m = malloc(sizeof(*m));
	if (!m) {
		ag_log("arenaguard: %s (fd %d, %s, pid %d): %s; %s",
		       request, sub->fd, path_name(sub->path), (int)getpid(),
		       error, outcome);
		return;
	}
	*m = (struct pending){ .t = { m->buf, sizeof(m->buf), 0 } };
	if (ag_cfg.log_json) {
		json_line_start(&m->json, "malformed");
		aci_json_out_string_at(&m->json, "request", request);
		json_request_fields(&m->json, sub->fd, sub->path, s, p,
				    sub->schedule);
		aci_json_out_string_at(&m->json, "error", error);
		aci_json_out_string_at(&m->json, "outcome", outcome);
	} else {
		ag_line_put(&m->t, "arenaguard: %s ", request);
		if (s)
			ag_line_put(&m->t, "to "), put_what(&m->t, sub, s);
		else
			ag_line_put(&m->t, "(fd %d, %s, pid %d)", sub->fd,
			    path_name(sub->path), (int)getpid());
		ag_line_put(&m->t, ": %s", error);
		ag_line_end(&m->t);
		ag_line_put(&m->t, "arenaguard:   %s", outcome);
		ag_line_end(&m->t);
	}
	queue(m, s != NULL);
}

void ag_report_exit(void)
{
	unsigned long long repeats = atomic_load(&ag_stats.repeats) -
				     base_repeats;
	if (repeats)
		ag_log("arenaguard: %llu further refusal%s like one recorded "
		       "%s not recorded again (one record per program and "
		       "verdict)", repeats, repeats == 1 ? "" : "s",
		       repeats == 1 ? "was" : "were");
	ag_suppress_report(atomic_load(&ag_stats.submissions) >
			   base_submissions);
	ag_report_summary();
}

void ag_report_stats(void)
{
	unsigned long long ns = atomic_load(&ag_stats.certify_ns);
	ag_log("arenaguard: stats (pid %d, mode %s): programs certified %llu, "
	       "schedules certified %llu, cache hits %llu (programs %llu, "
	       "verdicts %llu), submissions %llu, blocked %llu, warned %llu, "
	       "records %llu (lost %llu), unchecked SQEs %llu, time certifying %.3f ms",
	       (int)getpid(), ag_mode_name(ag_cfg.mode),
	       atomic_load(&ag_stats.programs_certified),
	       atomic_load(&ag_stats.schedules_certified),
	       atomic_load(&ag_stats.program_hits) +
		       atomic_load(&ag_stats.verdict_hits),
	       atomic_load(&ag_stats.program_hits),
	       atomic_load(&ag_stats.verdict_hits),
	       atomic_load(&ag_stats.submissions),
	       atomic_load(&ag_stats.blocked),
	       atomic_load(&ag_stats.warned),
	       atomic_load(&ag_stats.records),
	       atomic_load(&ag_stats.records_lost),
	       atomic_load(&ag_stats.unchecked_sqes), (double)ns / 1e6);
}

void ag_report_lock_all(void)
{
	ag_dedup_lock();
	pthread_mutex_lock(&out_lock);
}

void ag_report_unlock_all(int child)
{
	(void)child;
	pthread_mutex_unlock(&out_lock);
	ag_dedup_unlock();
}
