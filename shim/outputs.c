/* SPDX-License-Identifier: MIT */
/*
 * The guard's own descriptors (outputs.h): the log, standard error as it
 * was at load, the dump directory and the summary file; opened high and
 * close-on-exec, reopened after a fork (a log per process) and after the
 * application took their numbers away; every record written whole or not
 * at all through ag_write_quietly (quiet_write.c), under out_lock.
 *
 * State: one struct (out, below), with its lock and rank.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config.h"
#include "line.h"
#include "options.h"
#include "process.h"
#include "quiet_write.h"
#include "report.h"
#include "stats.h"
#include "util.h"
#include "line.h"
#include "outputs.h"
#include "reentry.h"
#include "quiet_write.h"


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

/*
 * The outputs' state, one struct.  Lock rank: out.lock (out_lock) is
 * the last lock the guard takes: after report_lock (dedup.c) at fork,
 * and nothing is taken while it is held; it is held with every signal
 * blocked (ag_output_lock).  Everything here is written under it; the
 * descriptors' numbers and lost flags are also read without it
 * (atomics), to decide whether to take it.
 */
static struct {
	pthread_mutex_t lock;      /* out_lock */
	struct own_fd log;         /* ARENAGUARD_LOG */
	struct own_fd err;         /* stderr at load time */
	struct own_fd dump;        /* ARENAGUARD_DUMP (O_PATH) */
	struct own_fd sum;         /* summary_file, at load */
	int log_failure_said;
	/* The log and the dump directory as first opened, made absolute
	 * with the directory the process was in then: what reacquire
	 * opens again after the application took the descriptor away,
	 * when it may have changed directory since (a daemon's chdir("/")
	 * before its close_range(3, ~0U)). */
	char log_abs[AG_PATH_MAX + 1], dump_abs[AG_PATH_MAX + 1];
} out = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.log = { -1, 0, 0, 0, 0 },
	.err = { -1, 0, 0, 0, 0 },
	.dump = { -1, 0, 0, 0, 0 },
	.sum = { -1, 0, 0, 0, 0 },
};

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
	pthread_mutex_lock(&out.lock);
	return st;
}

void ag_output_unlock(struct ag_out_state st)
{
	pthread_mutex_unlock(&out.lock);
	pthread_setcancelstate(st.cancel, NULL);
	pthread_sigmask(SIG_SETMASK, &st.mask, NULL);
}

/* close(2) itself: the interposed close (and syscall(), whose close
 * the guard follows from outside itself: interpose.c) would come back
 * here.  errno is the caller's. */
void ag_output_close(int fd)
{
	int saved = preload_enter_quiet();
	syscall(SYS_close, fd);
	preload_leave_quiet(saved);
}

/* Moves fd (which the guard opened, or duplicated) to a high number,
 * close-on-exec, and keeps it in o: 0 or -errno (fd is closed). */
static int keep(struct own_fd *o, int fd, int dup_only)
{
	int high = fcntl(fd, F_DUPFD_CLOEXEC, ag_high_fd_base());
	int err = high < 0 ? -errno : 0;
	if (!dup_only)
		ag_output_close(fd);
	if (high < 0)
		return err;
	struct stat st;
	if (fstat(high, &st) != 0) {
		err = -errno;
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
	return own(&out.dump);
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
 * 0 or -errno.  Whole or not at all where the guard can tell: a
 * record that is larger than the room a pipe or stream socket has now
 * (ag_write_room) is not written (-EAGAIN: lost, not cut).  When a write stops
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
		return -EAGAIN;
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
	int err = -EBADF;               /* no log */
	int fd = own(&out.log);
	if (fd >= 0)
		err = write_record(&out.log, fd, text, len);
	if (fd >= 0 && err < 0 && !out.log_failure_said) {
		out.log_failure_said = 1;
		char buf[4096];
		struct ag_line t = { buf, sizeof(buf), 0 };
		ag_line_put(&t, "arenaguard: cannot write the log %s: %s; records "
		    "that it cannot take go to standard error",
		    ag_cfg.log_path, strerror(-err));
		ag_line_end(&t);
		int efd = own(&out.err);
		if (efd >= 0)
			write_record(&out.err, efd, t.buf, t.used);
	}
	if (err != 0) {
		int efd = own(&out.err);
		err = efd >= 0 ? write_record(&out.err, efd, text, len) : -EBADF;
	}
	if (err != 0)
		atomic_fetch_add(&ag_stats.records_lost, 1);
}

void ag_output_emit(const char *text, size_t len)
{
	int saved = errno;
	struct ag_out_state state = ag_output_lock();
	emit_locked(text, len);
	ag_output_unlock(state);
	errno = saved;
}

/* ---- opening the outputs ---- */

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

/* Opens the log at path: 0, or -errno (said at start).  O_NONBLOCK: a
 * FIFO without a reader is ENXIO, not a wait; the description is the
 * guard's own, so nobody else sees the flag.  out_lock held. */
static int open_log_at(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC |
		      O_NOCTTY | O_NONBLOCK, 0644);
	return fd < 0 ? -errno : keep(&out.log, fd, 0);
}

/* Opens ARENAGUARD_LOG, remembering where it is (out.log_abs). */
static int open_log(void)
{
	absolute(out.log_abs, sizeof(out.log_abs), ag_cfg.log_path);
	return open_log_at(out.log_abs[0] ? out.log_abs : ag_cfg.log_path);
}

/* Opens the dump directory at path as a directory (O_PATH: only a place
 * to create files in, as it was at start).  0 or -errno.  out_lock
 * held. */
static int open_dump_at(const char *path)
{
	int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : keep(&out.dump, fd, 0);
}

/* Opens ARENAGUARD_DUMP, remembering where it is (out.dump_abs). */
static int open_dump_dir(void)
{
	absolute(out.dump_abs, sizeof(out.dump_abs), ag_cfg.dump_dir);
	return open_dump_at(out.dump_abs[0] ? out.dump_abs : ag_cfg.dump_dir);
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

/* Standard error as the guard's own descriptor: its own description
 * of a pipe or FIFO (reopen_fifo), else a duplicate; only while fd 2
 * is open.  out_lock held. */
static void open_err(void)
{
	int own_err = reopen_fifo(STDERR_FILENO);
	if (own_err >= 0)
		keep(&out.err, own_err, 0);
	else if (fcntl(STDERR_FILENO, F_GETFD) >= 0)
		keep(&out.err, STDERR_FILENO, 1);
}

/*
 * o again after the application took its number away (closed it with
 * the rest of a range, docs/guard.md "Descriptors"): the log and the
 * dump directory by their paths (out.log_abs, out.dump_abs: as
 * absolute as at load), at a high number like the first time;
 * standard error from fd 2 only if fd 2 is still the file the guard
 * took at start (the application's fd 2 that it closed or replaced is
 * its choice, never written to).  out_lock held.
 */
static void reacquire(struct own_fd *o)
{
	if (o == &out.log && ag_cfg.log_path[0])
		open_log_at(out.log_abs[0] ? out.log_abs : ag_cfg.log_path);
	else if (o == &out.dump && ag_cfg.dump_dir[0])
		open_dump_at(out.dump_abs[0] ? out.dump_abs : ag_cfg.dump_dir);
	else if (o == &out.err) {
		struct stat st;
		if (fstat(STDERR_FILENO, &st) == 0 && st.st_dev == o->dev &&
		    st.st_ino == o->ino)
			open_err();
	}
}

/* Whether the last expansion of log_path's template named the pid (%p):
 * a forked child then opens a log of its own (ag_output_log_forked).
 * Kept so that the child asks no libc function (strstr was bound
 * lazily, and its code and the linker's tables faulted in, in every
 * forked child: issue 32). */
static int log_names_pid;

/* Expands log_path's template into ag_cfg.log_path: %p the pid, %e the
 * executable's name, %% a %; any other % is itself.  0, or the length
 * the expansion would have when it does not fit (log_path is then "").
 * Sets log_names_pid.
 * No allocation and no stdio: a forked child calls it (ag_output_forked). */
static size_t expand_log_path(void)
{
	const char *t = ag_cfg.log_template;
	char *out = ag_cfg.log_path;
	size_t n = 0, cap = sizeof(ag_cfg.log_path);
	char pid[24];
	size_t pid_len = 0;
	int names_pid = 0;
	for (unsigned long v = (unsigned long)getpid(); v || !pid_len; v /= 10)
		pid[sizeof(pid) - 1 - pid_len++] = (char)('0' + v % 10);
	for (; *t; t++) {
		const char *piece = t;
		size_t len = 1;
		if (t[0] == '%' && t[1] == 'p') {
			piece = pid + sizeof(pid) - pid_len, len = pid_len, t++;
			names_pid = 1;
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
	log_names_pid = names_pid;
	if (n >= cap) {
		out[0] = 0;
		return n;
	}
	out[n] = 0;
	return 0;
}

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
 * opened at load (out.sum) while it is still the guard's, so that a
 * process that dropped its privileges since (a server become nobody,
 * its forked workers) still reaches the launcher's 0600 file; else
 * opened by path for the line (the application closed it). */
void ag_output_summary_append(const char *line, size_t len)
{
	struct ag_out_state state = ag_output_lock();
	int fd = own(&out.sum);
	if (fd >= 0)
		ag_write_quietly(fd, line, len, NULL);
	ag_output_unlock(state);
	if (fd < 0)
		append_summary_path(line, len);
}

/* Appends line[0, len) to summary_file without out_lock (a vfork
 * child's, which must take no lock): out.sum's number while it is still
 * the file opened at load (set at load, before any exec), else the path
 * opened for the line. */
void ag_output_summary_append_raw(const char *line, size_t len)
{
	int fd = atomic_load(&out.sum.fd);
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == out.sum.dev &&
	    st.st_ino == out.sum.ino) {
		ag_write_quietly(fd, line, len, NULL);
		return;
	}
	append_summary_path(line, len);
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
	struct own_fd *all[] = { &out.log, &out.err, &out.dump, &out.sum };
	int mine = 0;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		int fd = atomic_load_explicit(&all[i]->fd,
					      memory_order_relaxed);
		mine |= fd >= 0 && (unsigned int)fd >= first &&
			(unsigned int)fd <= last;
	}
	int stderr_too = first <= STDERR_FILENO && STDERR_FILENO <= last &&
			 atomic_load_explicit(&out.err.fd,
					      memory_order_relaxed) >= 0;
	/* A child with its own fd table (vfork) takes only its copies. */
	if ((!mine && !stderr_too) || !ag_process_shares_fds())
		return;
	int saved = errno;
	struct ag_out_state state = ag_output_lock();
	/* The application lets go of its standard error (a daemon
	 * detaching, a redirection): so does the guard, whose copy would
	 * otherwise keep a pipe's reader from ever seeing its end. */
	if (stderr_too && same_file(STDERR_FILENO, &out.err))
		release(&out.err);
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		step_aside(all[i], first, last);
	ag_output_unlock(state);
	errno = saved;
}

int ag_output_dump_wanted(void)
{
	return atomic_load(&out.dump.fd) >= 0 || atomic_load(&out.dump.lost);
}

void ag_output_summary_open(void)
{
	struct ag_out_state state = ag_output_lock();
	release(&out.sum);
	/* Off, the guard holds no descriptor (it counts nothing either). */
	if (ag_cfg.summary_file[0] && ag_cfg.mode != AG_OFF) {
		int fd = open_summary_file();
		if (fd >= 0)
			keep(&out.sum, fd, 0);
	}
	ag_output_unlock(state);
}

void ag_output_log_forked(void)
{
	if (ag_cfg.mode == AG_OFF || !log_names_pid)
		return;
	struct ag_out_state state = ag_output_lock();
	release(&out.log);
	if (expand_log_path() == 0 && ag_cfg.log_path[0])
		open_log();
	ag_output_unlock(state);
}

void ag_output_open_fds(int *log_err, int *dump_err)
{
	log_names_pid = 0;
	if (!ag_cfg.log_too_long)
		ag_cfg.log_too_long = expand_log_path();
	struct ag_out_state state = ag_output_lock();
	release(&out.log);
	release(&out.err);
	release(&out.dump);
	out.log_failure_said = 0;
	int on = ag_cfg.mode != AG_OFF;
	if (on)
		open_err();
	*log_err = on && ag_cfg.log_path[0] ? open_log() : 0;
	*dump_err = on && ag_cfg.dump_dir[0] ? open_dump_dir() : 0;
	ag_output_unlock(state);
}

void ag_output_lock_fork(void)
{
	pthread_mutex_lock(&out.lock);
}

void ag_output_unlock_fork(void)
{
	pthread_mutex_unlock(&out.lock);
}
