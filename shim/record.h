/* SPDX-License-Identifier: MIT */
/*
 * A record of the guard's: what it says, filled once per event (struct
 * ag_record), and its two renderings, as lines of text (record_text.c)
 * or as one JSON object a line (record_json.c, log_format=json;
 * docs/guard.md "JSON records"); record.c writes a record in the format
 * the guard was given, with the one out-of-memory fallback.  The
 * renderers read only the record (and the program and verdict it
 * points to), never the guard's state: the same record gives the same
 * bytes.
 */
#ifndef ARENAGUARD_SHIM_RECORD_H
#define ARENAGUARD_SHIM_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "line.h"
#include "certify/json_out.h"

struct ag_program;
struct ag_verdict;

enum ag_record_kind {
	AG_RECORD_NOTICE,      /* a message: a setting, a failure, stats */
	AG_RECORD_SUBMISSION,  /* a submission blocked or warned about */
	AG_RECORD_MALFORMED,   /* a request the guard could not read */
	AG_RECORD_SUMMARY,     /* the process's counts, at exit */
	AG_RECORD_REENTERED,   /* a request from inside the guard, refused */
};

/* What became of a record's dump: written to path, or err. */
struct ag_record_dump {
	int err;                     /* 0, or why there is none: -errno */
	const char *dir;             /* the dump directory (ARENAGUARD_DUMP) */
	const char *path;            /* the dump's path (err == 0) */
};

struct ag_record {
	enum ag_record_kind kind;
	/* Every record: when (CLOCK_REALTIME) and which process. */
	struct timespec time;
	int pid;
	const char *exe;

	/* NOTICE: message[0, message_len), "arenaguard: " first (which
	 * JSON's "message" leaves out). */
	const char *message;
	size_t message_len;

	/* SUBMISSION, MALFORMED: the request and its objects. */
	const char *mode;            /* the guard's mode, ag_mode_name */
	int fd;
	const char *path;            /* "ioctl" or "io_uring" */
	uint32_t schedule;           /* the handle submitted (0: none) */
	int has_schedule;            /* the guard knows the schedule: */
	uint32_t program;            /*   its program's handle */
	uint64_t length;             /*   its references */
	const struct ag_program *p;  /* the schedule's program, or NULL */
	char digest[33];             /* p's digest in hex, or "" */

	/* SUBMISSION */
	int blocked;                 /* else warned (mode warn) */
	const struct ag_verdict *v;  /* the verdict, or NULL: why */
	const char *why;             /* why it could not be certified */
	int strict;                  /* why is p's advisories (strict) */
	char hint[96];               /* the rule that would suppress v, or "" */
	const struct ag_record_dump *dump;   /* or NULL: none asked */

	/* MALFORMED: the request's name, its mistake, what became of it;
	 * REENTERED: request and why (the guard's fixed words), and fd. */
	const char *request, *error, *outcome;

	/* SUMMARY: this process's counts. */
	unsigned long long submissions, n_blocked, n_warned, n_suppressed;
};

/* r as kind, now, in this process; every other field zero. */
void ag_record_init(struct ag_record *r, enum ag_record_kind kind);

/* ---- text (record_text.c): no memory, escaped (line.c) ---- */

/* Appends r's lines to t, each "arenaguard: ..." ended. */
void ag_record_text(struct ag_line *t, const struct ag_record *r);

/* Appends the line saying what became of a record's dump. */
void ag_record_text_dump(struct ag_line *t, const struct ag_record_dump *d);

/* ---- JSON (record_json.c): libarenacert's writer, never jansson ---- */

/* r as a JSON object in j (empty), left open (its dump may follow);
 * j->failed: no memory. */
void ag_record_json(struct json_out *j, const struct ag_record *r);

/* Adds "dump" (the path) or "dump_error" to the object open in j. */
void ag_record_json_dump(struct json_out *j, const struct ag_record_dump *d);

/* The fixed line that stands for r when memory did not allow its JSON
 * (r NULL: which record is not known): into buf[0, cap), no memory;
 * its length, ending with the newline (0 if cap is too small).  For a
 * REENTERED record, the record itself (it never has memory: the thread
 * it interrupted may hold malloc's lock). */
size_t ag_record_json_lost(char *buf, size_t cap, const struct ag_record *r);

/* ---- writing (record.c) ---- */

/* Writes r now, in the guard's log_format: its text, or its JSON line,
 * or (no memory) the fixed line, counted as lost. */
void ag_record_emit(const struct ag_record *r);

/* Writes r now without memory: its text composed on the stack (at most
 * 4095 bytes), or under log_format=json the fixed line, counted as lost
 * (the one out-of-memory fallback of every record; a REENTERED record
 * is always written so, and is not lost). */
void ag_record_emit_fallback(const struct ag_record *r);

/* Closes the object open in j and writes it as one line; j is empty
 * after.  When memory did not allow it, the fixed line standing for r
 * (NULL: unknown), counted as lost. */
void ag_record_emit_json(struct json_out *j, const struct ag_record *r);

#endif
