/* SPDX-License-Identifier: MIT */
/*
 * What the guard tells: one record per distinct (program, verdict) or
 * per distinct reason a schedule could not be certified, so that a loop
 * resubmitting a failing schedule (or rebuilding it every token) writes
 * one record and counts the rest; dumps of failing programs for
 * arena-certify; the counters printed at exit.
 *
 * A record is composed in full and written with one write(2), to stderr
 * or appended to ARENAGUARD_LOG (opened and closed per record, so the
 * guard keeps no fd of its own in the application's table).  A log that
 * cannot be written (a full disk) is said once on stderr, and the
 * records it could not take go there: nothing waits or fails for it.
 * Neither needs memory: the first records' keys fit a static table,
 * so that running out of memory is reported too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "guard.h"

struct ag_stats ag_stats;

#define SEEN_STATIC 64

static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t seen_static[SEEN_STATIC];
static uint64_t *seen = seen_static;   /* hashes of reported keys; 0: empty */
static size_t seen_cap = SEEN_STATIC, seen_used;
static atomic_uint dump_seq;
static atomic_flag log_failure_said = ATOMIC_FLAG_INIT;

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

/* ---- output ---- */

/* 0, or the errno of the write that failed. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : ENOSPC;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Appends to ARENAGUARD_LOG: 0 or an errno. */
static int write_log(const char *text, size_t len)
{
	int fd = open(ag_cfg.log_path,
		      O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno;
	int err = write_all(fd, text, len);
	close(fd);
	return err;
}

static void say_log_failure(int err)
{
	if (atomic_flag_test_and_set(&log_failure_said))
		return;
	char buf[1200];
	int n = snprintf(buf, sizeof(buf), "arenaguard: cannot write the log "
			 "%s: %s; records that it cannot take go to standard "
			 "error\n", ag_cfg.log_path, strerror(err));
	if (n > 0)
		write_all(STDERR_FILENO, buf, (size_t)n < sizeof(buf)
					      ? (size_t)n : sizeof(buf) - 1);
}

static void emit(const char *text, size_t len)
{
	int saved = errno;
	int err = ag_cfg.log_path[0] ? write_log(text, len) : -1;
	if (err > 0)
		say_log_failure(err);
	if (err != 0)
		write_all(STDERR_FILENO, text, len);
	errno = saved;
}

void ag_log(const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	size_t len = (size_t)n < sizeof(buf) - 1 ? (size_t)n : sizeof(buf) - 2;
	if (len == 0 || buf[len - 1] != '\n')
		buf[len++] = '\n';
	emit(buf, len);
}

/* ---- deduplication ---- */

/* Whether key was reported before; records it if not.  When the table
 * cannot grow, everything counts as reported: silence, not a flood. */
static int seen_before(const char *key)
{
	uint64_t h = XXH3_64bits(key, strlen(key));
	if (!h)
		h = 1;
	if ((seen_used + 1) * 2 > seen_cap) {
		size_t cap = 2 * seen_cap;
		uint64_t *t = calloc(cap, sizeof(*t));
		if (!t)
			return 1;
		for (size_t i = 0; i < seen_cap; i++) {
			if (!seen[i])
				continue;
			size_t j = seen[i] & (cap - 1);
			while (t[j])
				j = (j + 1) & (cap - 1);
			t[j] = seen[i];
		}
		if (seen != seen_static)
			free(seen);
		seen = t;
		seen_cap = cap;
	}
	size_t i = h & (seen_cap - 1);
	while (seen[i]) {
		if (seen[i] == h)
			return 1;
		i = (i + 1) & (seen_cap - 1);
	}
	seen[i] = h;
	seen_used++;
	return 0;
}

void ag_report_reset(void)
{
	pthread_mutex_lock(&report_lock);
	if (seen != seen_static)
		free(seen);
	memset(seen_static, 0, sizeof(seen_static));
	seen = seen_static;
	seen_cap = SEEN_STATIC;
	seen_used = 0;
	pthread_mutex_unlock(&report_lock);
}

void ag_report_once(const char *key, const char *fmt, ...)
{
	pthread_mutex_lock(&report_lock);
	int old = seen_before(key);
	pthread_mutex_unlock(&report_lock);
	if (old)
		return;
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	atomic_fetch_add(&ag_stats.records, 1);
	ag_log("arenaguard: %s", buf);
}

int ag_no_memory(const char *request)
{
	char key[96];
	snprintf(key, sizeof(key), "out of memory %s", request);
	ag_report_once(key, "out of memory: %s refused with ENOMEM (pid %d)",
		       request, (int)getpid());
	return -ENOMEM;
}

/* ---- dumps ---- */

static int write_file(const char *path, const uint8_t *data, size_t len)
{
	FILE *f = fopen(path, "wbx");
	if (!f)
		return -1;
	int ok = fwrite(data, 1, len, f) == len;
	if (fclose(f) != 0)
		ok = 0;
	if (!ok)
		unlink(path);
	return ok ? 0 : -1;
}

int ag_dump(const struct ag_program *p, const struct ac_ref *refs,
	    uint64_t n, uint64_t verdict, char *path, size_t len)
{
	unsigned int seq = atomic_fetch_add(&dump_seq, 1);
	if (verdict == AC_NONE)
		snprintf(path, len, "%s/arenaguard-%d-%u-malformed.img",
			 ag_cfg.dump_dir, (int)getpid(), seq);
	else
		snprintf(path, len, "%s/arenaguard-%d-%u-verdict-%" PRIu64
			 ".img", ag_cfg.dump_dir, (int)getpid(), seq, verdict);
	if (!p->model)        /* unreadable: the bytes as the driver got them */
		return write_file(path, p->image, p->len);

	/* The image with the schedule's references in its schedule
	 * section: arena-certify then decides exactly what was submitted. */
	struct ac_model m = *p->model;
	m.refs = refs;
	m.n_refs = n;
	size_t size;
	uint8_t *image = ac_model_write_image(&m, &size, NULL);
	if (!image)
		return -1;
	int rc = write_file(path, image, size);
	free(image);
	return rc;
}

/* ---- records ---- */

struct text {
	char buf[8192];
	size_t used;
};

static void put(struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put(struct text *t, const char *fmt, ...)
{
	if (t->used + 1 >= sizeof(t->buf))
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(t->buf + t->used, sizeof(t->buf) - t->used, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->used += (size_t)n < sizeof(t->buf) - t->used
				   ? (size_t)n : sizeof(t->buf) - t->used - 1;
}

static const char *path_name(enum ag_path path)
{
	return path == AG_PATH_URING ? "io_uring" : "ioctl";
}

/* The objects, as in "schedule 3 (program 1, fd 5, ioctl, pid 42)". */
static void put_what(struct text *t, const struct ag_submit *sub,
		     const struct ag_sched *s)
{
	put(t, "schedule %u (", sub->schedule);
	if (s)
		put(t, "program %u, ", s->program_handle);
	put(t, "fd %d, %s, pid %d)", sub->fd, path_name(sub->path),
	    (int)getpid());
}

/* What makes a record distinct: the program and its verdict; or the
 * program and the reason it cannot be decided; or, for a schedule the
 * guard never saw, the handle. */
static void dedup_key(char *key, size_t len, const struct ag_submit *sub,
		      const struct ag_sched *s, const struct ag_verdict *v,
		      const char *why)
{
	const struct ag_program *p = s ? s->program : NULL;
	if (v)
		snprintf(key, len, "verdict %016" PRIx64 "%016" PRIx64
			 " %" PRIu64, p->id.high, p->id.low, v->verdict);
	else if (!s)
		snprintf(key, len, "unknown %u", sub->schedule);
	else
		snprintf(key, len, "why %016" PRIx64 "%016" PRIx64 " %.200s",
			 p ? p->id.high : 0, p ? p->id.low : 0, why);
}

void ag_report_submission(const struct ag_submit *sub, struct ag_sched *s,
			  const struct ag_verdict *v, const char *why,
			  int blocked)
{
	char key[320];
	dedup_key(key, sizeof(key), sub, s, v, why);
	pthread_mutex_lock(&report_lock);
	int old = seen_before(key);
	pthread_mutex_unlock(&report_lock);
	if (old)
		return;
	atomic_fetch_add(&ag_stats.records, 1);

	struct text *t = malloc(sizeof(*t));
	struct text small;
	if (!t)               /* no memory: the stack will do */
		t = &small;
	t->used = 0;
	put(t, "arenaguard: %s ", blocked ? "blocked submission of"
					  : "warning: submitting");
	put_what(t, sub, s);
	if (v)
		put(t, ": verdict %" PRIu64 " (%s)\n", v->verdict,
		    ac_condition_name(v->diag.condition));
	else
		put(t, ": cannot certify\n");
	put(t, "arenaguard:   %s\n", v ? v->text : why);
	if (!blocked)
		put(t, "arenaguard:   submitted anyway (ARENAGUARD=warn)\n");

	char path[1200];
	if (ag_cfg.dump_dir[0] && s && s->program) {
		const struct ac_ref *refs = s->refv ? s->refv->v : NULL;
		if (ag_dump(s->program, refs, s->n_refs,
			    v ? v->verdict : AC_NONE, path, sizeof(path)) == 0)
			put(t, "arenaguard:   dumped to %s; "
			    "render with: arena-certify %s (a picture: "
			    "arena-certify --html report.html %s)\n",
			    path, path, path);
		else
			put(t, "arenaguard:   could not write a dump in %s: "
			    "%s\n", ag_cfg.dump_dir, strerror(errno));
	}
	emit(t->buf, t->used);
	if (t != &small)
		free(t);
}

void ag_report_stats(void)
{
	unsigned long long ns = atomic_load(&ag_stats.certify_ns);
	ag_log("arenaguard: stats (pid %d, mode %s): programs certified %llu, "
	       "schedules certified %llu, cache hits %llu (programs %llu, "
	       "verdicts %llu), submissions %llu, blocked %llu, warned %llu, "
	       "records %llu, unchecked SQEs %llu, time certifying %.3f ms",
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
	       atomic_load(&ag_stats.unchecked_sqes), (double)ns / 1e6);
}

void ag_report_lock_all(void)
{
	pthread_mutex_lock(&report_lock);
}

void ag_report_unlock_all(int child)
{
	(void)child;
	pthread_mutex_unlock(&report_lock);
}
