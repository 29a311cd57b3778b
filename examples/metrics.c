/* SPDX-License-Identifier: MIT */
/*
 * arena-serve's metrics: its own counters (in memory every worker
 * shares, so that any worker's /metrics answers for the server) and the
 * guard's, found with dlsym (include/arenaguard/guard_api.h) when the
 * guard is loaded.  Each process publishes its guard counters, less
 * those it inherited at fork, into a slot of its own; /metrics sums them.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <dlfcn.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

static arenaguard_get_counters_fn *get_counters;
static arenaguard_last_refusal_fn *last_refusal;
static arenaguard_get_config_fn *get_config;
static int my_slot;
static uint64_t baseline[SERVE_GUARD_FIELDS];   /* at fork */

static const double latency_bound[SERVE_LATENCY_BUCKETS] = {
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10,
};

static const char *const guard_name[] = {
#define NAME(name, help) #name,
	ARENAGUARD_COUNTERS(NAME)
#undef NAME
};
static const char *const guard_help[] = {
#define HELP(name, help) help,
	ARENAGUARD_COUNTERS(HELP)
#undef HELP
};
_Static_assert(sizeof(guard_name) / sizeof(guard_name[0]) ==
	       SERVE_GUARD_FIELDS, "one name per counter");

int metrics_find_guard(void)
{
	get_counters = (arenaguard_get_counters_fn *)
		dlsym(RTLD_DEFAULT, ARENAGUARD_GET_COUNTERS);
	last_refusal = (arenaguard_last_refusal_fn *)
		dlsym(RTLD_DEFAULT, ARENAGUARD_LAST_REFUSAL);
	get_config = (arenaguard_get_config_fn *)
		dlsym(RTLD_DEFAULT, ARENAGUARD_GET_CONFIG);
	return get_counters != NULL;
}

void metrics_guard_view(struct guard_view *v)
{
	memset(v, 0, sizeof(*v));
	v->mode = ARENAGUARD_MODE_OFF;
	struct arenaguard_counters c;
	if (!get_counters || get_counters(&c, sizeof(c)) < 8)
		return;
	v->loaded = 1;
	v->mode = c.mode;
	struct arenaguard_config g;
	if (get_config && get_config(&g, sizeof(g)) >=
	    (int)(offsetof(struct arenaguard_config, suppressions) + 4)) {
		v->config_known = 1;
		v->strict = g.strict != 0;
		v->suppressions = g.suppressions;
	}
}

const char *metrics_mode_name(uint32_t mode)
{
	return mode == ARENAGUARD_MODE_ENFORCE ? "enforce" :
	       mode == ARENAGUARD_MODE_WARN ? "warn" : "off";
}

/* The guard's counters as an array (0s without a guard). */
static void read_guard(uint64_t v[SERVE_GUARD_FIELDS])
{
	struct arenaguard_counters c;
	memset(&c, 0, sizeof(c));
	if (get_counters)
		get_counters(&c, sizeof(c));
	memcpy(v, (const char *)&c + 8, SERVE_GUARD_FIELDS * 8);
}

void metrics_set_slot(struct serve_metrics *mx, int slot)
{
	assert(slot >= 0 && slot <= SERVE_MAX_WORKERS);
	my_slot = slot;
	if (slot == 0)
		memset(baseline, 0, sizeof(baseline));
	else
		read_guard(baseline);
	metrics_publish_guard(mx);
}

void metrics_publish_guard(struct serve_metrics *mx)
{
	uint64_t v[SERVE_GUARD_FIELDS];
	read_guard(v);
	for (size_t i = 0; i < SERVE_GUARD_FIELDS; i++)
		atomic_store(&mx->guard[my_slot][i], v[i] - baseline[i]);
}

long metrics_last_refusal(char *buf, size_t size)
{
	if (!last_refusal) {
		buf[0] = 0;
		return 0;
	}
	return last_refusal(buf, size, 1);
}

void metrics_request(struct serve_metrics *mx, enum serve_outcome o,
		     uint64_t ns)
{
	atomic_fetch_add(&mx->requests[o], 1);
	if (o != OUT_OK && o != OUT_BLOCKED && o != OUT_FAILED)
		return;
	double s = (double)ns * 1e-9;
	int b = 0;
	while (b < SERVE_LATENCY_BUCKETS && s > latency_bound[b])
		b++;
	atomic_fetch_add(&mx->latency_bucket[b], 1);
	atomic_fetch_add(&mx->latency_sum_ns, ns);
}

struct out {
	char *buf;
	size_t len, cap;
	int failed;
};

static void say(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say(struct out *o, const char *fmt, ...)
{
	for (;;) {
		if (o->failed)
			return;
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < o->cap - o->len) {
			o->len += (size_t)n;
			return;
		}
		char *b = n < 0 ? NULL : realloc(o->buf, 2 * o->cap + (size_t)n);
		if (!b) {
			o->failed = 1;
			return;
		}
		o->buf = b;
		o->cap = 2 * o->cap + (size_t)n;
	}
}

static void counter(struct out *o, const char *name, const char *help,
		    unsigned long long v)
{
	say(o, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", name, help, name,
	    name, v);
}

char *metrics_render(struct serve_metrics *mx, struct serve_health *health,
		     size_t *len)
{
	struct out o = { malloc(8192), 0, 8192, 0 };
	if (!o.buf)
		return NULL;
	metrics_publish_guard(mx);
	static const char *const outcome[OUT_COUNT] = {
		[OUT_OK] = "completion\",code=\"200",
		[OUT_BLOCKED] = "completion\",code=\"500\",reason=\"blocked",
		[OUT_FAILED] = "completion\",code=\"500\",reason=\"device",
		[OUT_BAD] = "any\",code=\"4xx",
		[OUT_HEALTH] = "health\",code=\"200",
		[OUT_UNREADY] = "health\",code=\"503",
		[OUT_METRICS] = "metrics\",code=\"200",
	};
	say(&o, "# HELP arena_serve_requests_total HTTP requests answered\n"
	    "# TYPE arena_serve_requests_total counter\n");
	for (int i = 0; i < OUT_COUNT; i++)
		say(&o, "arena_serve_requests_total{endpoint=\"%s\"} %llu\n",
		    outcome[i], atomic_load(&mx->requests[i]));
	counter(&o, "arena_serve_prompt_tokens_total", "prompt tokens of "
		"completions served", atomic_load(&mx->prompt_tokens));
	counter(&o, "arena_serve_generated_tokens_total", "tokens generated",
		atomic_load(&mx->generated_tokens));
	counter(&o, "arena_serve_programs_created_total", "programs created "
		"(one per batch shape and process)",
		atomic_load(&mx->programs_created));
	counter(&o, "arena_serve_schedules_created_total", "schedules "
		"created (one per sequence)",
		atomic_load(&mx->schedules_created));
	say(&o, "# HELP arena_serve_device_seconds_total time inside the "
	    "device lock (input, submit, wait, output)\n"
	    "# TYPE arena_serve_device_seconds_total counter\n"
	    "arena_serve_device_seconds_total %.9f\n",
	    (double)atomic_load(&mx->device_ns) * 1e-9);

	say(&o, "# HELP arena_serve_request_duration_seconds completion "
	    "latency\n# TYPE arena_serve_request_duration_seconds histogram\n");
	unsigned long long cum = 0;
	for (int b = 0; b <= SERVE_LATENCY_BUCKETS; b++) {
		cum += atomic_load(&mx->latency_bucket[b]);
		if (b < SERVE_LATENCY_BUCKETS)
			say(&o, "arena_serve_request_duration_seconds_bucket"
			    "{le=\"%g\"} %llu\n", latency_bound[b], cum);
		else
			say(&o, "arena_serve_request_duration_seconds_bucket"
			    "{le=\"+Inf\"} %llu\n", cum);
	}
	say(&o, "arena_serve_request_duration_seconds_sum %.9f\n"
	    "arena_serve_request_duration_seconds_count %llu\n",
	    (double)atomic_load(&mx->latency_sum_ns) * 1e-9, cum);

	char why[8];
	say(&o, "# HELP arena_serve_ready whether /health answers 200 (the "
	    "device accepts the server's submissions)\n"
	    "# TYPE arena_serve_ready gauge\narena_serve_ready %d\n",
	    health_ready(health, why, sizeof(why)));

	struct guard_view gv;
	metrics_guard_view(&gv);
	say(&o, "# HELP arenaguard_loaded whether libarenaguard is loaded\n"
	    "# TYPE arenaguard_loaded gauge\narenaguard_loaded %d\n",
	    gv.loaded);
	say(&o, "# HELP arenaguard_mode the guard's mode (ARENAGUARD; off "
	    "when it is not loaded)\n# TYPE arenaguard_mode gauge\n");
	for (uint32_t m = ARENAGUARD_MODE_OFF; m <= ARENAGUARD_MODE_ENFORCE;
	     m++)
		say(&o, "arenaguard_mode{mode=\"%s\"} %d\n",
		    metrics_mode_name(m), gv.mode == m);
	if (gv.config_known)
		say(&o, "# HELP arenaguard_strict whether programs with "
		    "advisories are refused (ARENAGUARD_STRICT)\n"
		    "# TYPE arenaguard_strict gauge\narenaguard_strict %d\n"
		    "# HELP arenaguard_suppressions_loaded suppression rules "
		    "in effect\n# TYPE arenaguard_suppressions_loaded gauge\n"
		    "arenaguard_suppressions_loaded %u\n", gv.strict,
		    gv.suppressions);
	for (size_t i = 0; gv.loaded && i < SERVE_GUARD_FIELDS; i++) {
		unsigned long long sum = 0;
		for (int w = 0; w <= SERVE_MAX_WORKERS; w++)
			sum += atomic_load(&mx->guard[w][i]);
		char name[96];
		snprintf(name, sizeof(name), "arenaguard_%s_total",
			 guard_name[i]);
		counter(&o, name, guard_help[i], sum);
	}
	if (o.failed) {
		free(o.buf);
		return NULL;
	}
	*len = o.len;
	return o.buf;
}
