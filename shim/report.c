/* SPDX-License-Identifier: MIT */
/*
 * What the guard tells: one record per distinct (program, verdict) or
 * per distinct reason a schedule could not be certified, so that a loop
 * resubmitting a failing schedule (or rebuilding it every token) writes
 * one record (the keys reported: dedup.c) and counts the rest; the dump
 * of a failing program it names (dump.c); notices said once.
 *
 * Each record is filled once (struct ag_record, record.h) and rendered
 * as text (record_text.c) or JSON (record_json.c); record.c writes it,
 * with the one fallback when memory runs out.  Where the bytes go and
 * how (the output rules, report.h, docs/guard.md) is outputs.c's and
 * quiet_write.c's; the summary and the launcher's channel, summary.c's.
 * A record composed while its schedule is locked is written once the
 * lock is dropped (ag_report_flush).
 *
 * Also here: ag_output_open and ag_output_forked, which open the outputs
 * (outputs.c) and say what cannot be honoured (record.c) or reset the
 * counts (summary.c).
 *
 * State: this thread's pending records and whether it halts after them
 * (thread-local, no lock).
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "config.h"
#include "mirror.h"
#include "notice.h"
#include "options.h"
#include "process.h"
#include "report.h"
#include "stats.h"
#include "submit.h"
#include "suppress.h"
#include "util.h"
#include "dedup.h"
#include "dump.h"
#include "outputs.h"
#include "record.h"
#include "summary.h"


/* ---- opening the outputs, and the settings said at start ---- */

void ag_output_open(void)
{
	int log_err, dump_err;
	ag_output_open_fds(&log_err, &dump_err);
	ag_notice_sink(ag_log);      /* notices from below (notice.h) */
	if (ag_cfg.mode == AG_OFF)
		return;

	/* What cannot be honoured, once, now. */
	ag_config_say(&ag_cfg, ag_log);
	if (ag_cfg.help)
		ag_options_help(ag_log);
	if (log_err)
		ag_log("arenaguard: cannot open the log %s: %s; records go to "
		       "standard error", ag_cfg.log_path, strerror(-log_err));
	if (dump_err)
		ag_log("arenaguard: cannot use the dump directory %s: %s; no "
		       "dumps are written", ag_cfg.dump_dir,
		       strerror(-dump_err));
}

void ag_output_forked(void)
{
	ag_summary_forked();
	ag_output_log_forked();
}

int ag_report_reentered(const char *what, int fd)
{
	/* Neither the dedup table (report_lock, dedup.c) nor malloc: the
	 * interrupted thread may hold either; a REENTERED record is
	 * written without memory.  ag_output_emit takes the output lock,
	 * which no thread holds with signals unblocked. */
	struct ag_record r;
	ag_record_init(&r, AG_RECORD_REENTERED);
	r.request = what;
	r.fd = fd;
	r.error = "made while its thread was inside the guard (a signal "
		  "handler interrupted it, and may wait for a lock its own "
		  "thread holds): not checked, not run";
	atomic_fetch_add(&ag_stats.blocked, 1);
	atomic_fetch_add(&ag_stats.records, 1);
	ag_record_emit_fallback(&r);
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
 * rendered at once (record.h: what it points to is the schedule's,
 * under its lock) as text in t, or (log_format=json) as the object open
 * in json; what became of its dump is added when the dump is written.
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

/* The record of a request on sub's file: its objects (s and p: NULL
 * when the guard does not know them). */
static void fill_request(struct ag_record *r, enum ag_record_kind kind,
			 const struct ag_submit *sub, const struct ag_sched *s,
			 const struct ag_program *p)
{
	ag_record_init(r, kind);
	r->mode = ag_mode_name(ag_cfg.mode);
	r->fd = sub->fd;
	r->path = sub->path == AG_PATH_URING ? "io_uring" : "ioctl";
	r->schedule = sub->schedule;
	r->has_schedule = s != NULL;
	if (s) {
		r->program = ag_sched_program_handle(s);
		r->length = ag_sched_length(s);
	}
	r->p = p;
	if (p)
		ag_digest_text(&p->digest, r->digest);
}

/* What makes a record distinct: the program and its verdict; or the
 * program and the reason it cannot be decided; or, for a schedule the
 * guard never saw, the handle. */
static void dedup_key(char *key, size_t len, const struct ag_record *r)
{
	if (r->v)
		snprintf(key, len, "verdict %s %" PRIu64, r->digest,
			 r->v->verdict);
	else if (!r->has_schedule)
		snprintf(key, len, "unknown %u", r->schedule);
	else
		snprintf(key, len, "why %s %.200s", r->digest, r->why);
}

/* Dumps (if asked), adds what became of the dump, writes and frees p. */
static void finish(struct pending *p)
{
	if (p->program) {
		char name[128], path[AG_PATH_MAX + 160];
		int err = ag_dump(p->program, p->refv ? p->refv->v : NULL,
				  p->n_refs, p->verdict, name, sizeof(name));
		snprintf(path, sizeof(path), "%s/%s", ag_cfg.dump_dir, name);
		struct ag_record_dump d = { err, ag_cfg.dump_dir, path };
		if (ag_cfg.log_json)
			ag_record_json_dump(&p->json, &d);
		else
			ag_record_text_dump(&p->t, &d);
		ag_program_unref(p->program);
		ag_refs_unref(p->refv);
	}
	if (ag_cfg.log_json)
		ag_record_emit_json(&p->json, NULL);
	else
		ag_output_emit(p->t.buf, p->t.used);
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

/*
 * Renders r (counted) into a pending record and queues it (locked: s
 * is), with its dump asked for when dump; without memory, writes r now
 * by the one fallback (its dump: ENOMEM).  0, or -ENOMEM (written
 * already).
 */
static int compose(const struct ag_record *r, struct ag_sched *s, int dump)
{
	atomic_fetch_add(&ag_stats.records, 1);
	struct pending *p = malloc(sizeof(*p));
	if (p) {
		*p = (struct pending){ .t = { p->buf, sizeof(p->buf), 0 },
				       .verdict = r->v ? r->v->verdict : AC_NONE };
		if (ag_cfg.log_json)
			ag_record_json(&p->json, r);
		else
			ag_record_text(&p->t, r);
	}
	if (!p || (ag_cfg.log_json && p->json.failed)) {
		struct ag_record_dump nomem = { -ENOMEM, ag_cfg.dump_dir, NULL };
		struct ag_record small = *r;
		if (dump)
			small.dump = &nomem;
		ag_record_emit_fallback(&small);
		if (p)
			aci_json_out_free(&p->json);
		free(p);
		return -ENOMEM;
	}
	if (dump)
		ag_sched_contents(s, &p->program, &p->refv, &p->n_refs);
	queue(p, s != NULL);   /* no schedule, no lock held: now */
	return 0;
}

void ag_report_submission(const struct ag_submit *sub, struct ag_sched *s,
			  const struct ag_verdict *v, const char *why,
			  int blocked)
{
	assert(sub && (v || why));
	ag_summary_refusal();
	if (blocked && ag_cfg.halt_on_error)
		halt_after_flush = 1;
	const struct ag_program *p = s ? ag_sched_program(s) : NULL;
	struct ag_record r;
	fill_request(&r, AG_RECORD_SUBMISSION, sub, s, p);
	r.blocked = blocked;
	r.v = v;
	r.why = why;
	r.strict = p && why == p->advisory;
	char key[320];
	dedup_key(key, sizeof(key), &r);
	if (reported_before(key)) {
		halt_if_asked();
		return;
	}
	if (ag_suppress_hint(p, v, r.hint, sizeof(r.hint)) != 0)
		r.hint[0] = 0;
	int dump = ag_output_dump_wanted() && p;
	if (compose(&r, s, dump) != 0 || !s)
		halt_if_asked();
}

void ag_report_malformed(const char *request, const struct ag_submit *sub,
			 struct ag_sched *s, const struct ag_program *p,
			 const char *error, const char *outcome)
{
	assert(request && sub && error && outcome);
	struct ag_record r;
	fill_request(&r, AG_RECORD_MALFORMED, sub, s, p);
	r.request = request;
	r.error = error;
	r.outcome = outcome;
	/* One per request kind and program, whatever the mistake: an
	 * application that keeps sending bad batches writes one record,
	 * and the keys kept stay bounded by the programs. */
	char key[64];
	snprintf(key, sizeof(key), "%s %s", request, r.digest);
	if (reported_before(key))
		return;
	compose(&r, s, 0);
}

void ag_report_lock_all(void)
{
	ag_dedup_lock();
	ag_output_lock_fork();
}

void ag_report_unlock_all(int child)
{
	(void)child;
	ag_output_unlock_fork();
	ag_dedup_unlock();
}
