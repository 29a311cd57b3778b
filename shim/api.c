/* SPDX-License-Identifier: MIT */
/*
 * The guard's interface for the application it runs in
 * (include/arenaguard/guard_api.h): its counters, and the last refusal
 * of the calling thread.  Found with dlsym, never linked; exported by
 * libarenaguard.map.
 *
 * The counters are read from ag_stats (atomics: no lock); the
 * configuration from ag_cfg and the suppression rules, set before the
 * application runs.  A refusal is noted by decide.c and, for a submit
 * blocked for the seal, request.c (ag_api_note_refusal) into a buffer
 * of the thread's
 * own, allocated at its first refusal and freed when the thread exits;
 * without memory the refusal is not kept (the report still is written).
 */
#define _GNU_SOURCE
#include <assert.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arenaguard/guard_api.h>

#include "api.h"
#include "cache.h"
#include "mirror.h"
#include "options.h"
#include "stats.h"
#include "submit.h"
#include "suppress.h"
#include "certify/text.h"   /* libarenacert's bounded text builder */

#define REFUSAL_MAX 4608   /* a diagnostic (4096) and its heading */

struct refusal {
	size_t len;
	char text[REFUSAL_MAX];
};

static pthread_key_t refusal_key;
static pthread_once_t refusal_once = PTHREAD_ONCE_INIT;
static int refusal_key_ok;

static void make_key(void)
{
	refusal_key_ok = pthread_key_create(&refusal_key, free) == 0;
}

/* The thread's buffer, allocated if `create`; NULL when there is none. */
static struct refusal *thread_refusal(int create)
{
	pthread_once(&refusal_once, make_key);
	if (!refusal_key_ok)
		return NULL;
	struct refusal *r = pthread_getspecific(refusal_key);
	if (!r && create) {
		r = calloc(1, sizeof(*r));
		if (r && pthread_setspecific(refusal_key, r) != 0) {
			free(r);
			r = NULL;
		}
	}
	return r;
}

void ag_api_note_refusal(const struct ag_submit *sub,
			 const struct ag_sched *s, const struct ag_verdict *v,
			 const char *why, int blocked)
{
	assert(sub && (v || why));
	struct refusal *r = thread_refusal(1);
	if (!r)
		return;
	struct text t = TEXT_OF(r->text);
	aci_text_put(&t, "%s schedule %u (", blocked ? "blocked submission of"
						 : "warning: submitting",
		 sub->schedule);
	if (s)
		aci_text_put(&t, "program %u, ", ag_sched_program_handle(s));
	aci_text_put(&t, "fd %d, %s, pid %d)", sub->fd,
		 sub->path == AG_PATH_URING ? "io_uring" : "ioctl",
		 (int)getpid());
	if (v)
		aci_text_put(&t, ": verdict %" PRIu64 " (%s)\n%s", v->verdict,
			 ac_condition_name(v->diag.condition), v->text);
	else
		aci_text_put(&t, ": cannot certify\n%s", why);
	r->len = t.used;
}

long arenaguard_last_refusal(char *buf, size_t size, int clear)
{
	if (!buf || size == 0)
		return -1;
	struct refusal *r = thread_refusal(0);
	size_t len = r ? r->len : 0;
	size_t n = len < size - 1 ? len : size - 1;
	if (n)
		memcpy(buf, r->text, n);
	buf[n] = 0;
	if (r && clear)
		r->len = 0;
	return (long)len;
}

/* The API's mode of the guard's. */
static uint32_t api_mode(void)
{
	return ag_cfg.mode == AG_ENFORCE ? ARENAGUARD_MODE_ENFORCE :
	       ag_cfg.mode == AG_WARN ? ARENAGUARD_MODE_WARN :
	       ARENAGUARD_MODE_OFF;
}

int arenaguard_get_config(struct arenaguard_config *out, size_t size)
{
	if (!out || size < offsetof(struct arenaguard_config, strict))
		return -1;
	struct arenaguard_config c = {
		.mode = api_mode(),
		.strict = ag_cfg.strict != 0,
		.suppressions = ag_suppress_count(),
	};
	/* Whole fields only: every field is 4 bytes. */
	size_t n = size < sizeof(c) ? size / 4 * 4 : sizeof(c);
	c.size = (uint32_t)n;
	memcpy(out, &c, n);
	return (int)n;
}

int arenaguard_get_counters(struct arenaguard_counters *out, size_t size)
{
	if (!out || size < offsetof(struct arenaguard_counters,
				    programs_certified))
		return -1;
	struct arenaguard_counters c = {
		.size = sizeof(c),
		.mode = api_mode(),
#define LOAD(name, help) .name = atomic_load(&ag_stats.name),
		ARENAGUARD_COUNTERS(LOAD)
#undef LOAD
	};
	/* Whole fields only: every field after the first two is 8 bytes. */
	size_t n = sizeof(c);
	if (size < n)
		n = offsetof(struct arenaguard_counters, programs_certified) +
		    (size - offsetof(struct arenaguard_counters,
				     programs_certified)) / 8 * 8;
	c.size = (uint32_t)n;
	memcpy(out, &c, n);
	return (int)n;
}
