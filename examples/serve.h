/* SPDX-License-Identifier: MIT */
/*
 * serve.h - arena-serve's seams: the engine (engine.c: the device, the
 * programs per batch shape, a schedule per sequence), the metrics
 * (metrics.c: counters shared by every worker, the guard's counters)
 * and the HTTP front end (http.c).  serve.c is the command.
 */
#ifndef ARENA_EXAMPLE_SERVE_H
#define ARENA_EXAMPLE_SERVE_H

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <arenaguard/guard_api.h>

#include "device.h"
#include "model.h"
#include "planner.h"
#include "tokens.h"

#define SERVE_MAX_WORKERS 64

/* ---- metrics.c ---- */

/* Request latency histogram bounds, seconds (and +Inf). */
#define SERVE_LATENCY_BUCKETS 12

enum serve_outcome {
	OUT_OK,          /* 200 completion */
	OUT_BLOCKED,     /* 500: the guard blocked a submission */
	OUT_FAILED,      /* 500: another device error */
	OUT_BAD,         /* 400/404/405/413: the request */
	OUT_HEALTH,      /* GET /health: 200, ready */
	OUT_UNREADY,     /* GET /health: 503, not ready (health.c) */
	OUT_METRICS,     /* GET /metrics */
	OUT_COUNT
};

#define SERVE_GUARD_FIELDS \
	(sizeof(struct arenaguard_counters) / 8 - 1)

/* Lives in memory shared by the master and every worker (prefork). */
struct serve_metrics {
	atomic_ullong requests[OUT_COUNT];
	atomic_ullong prompt_tokens, generated_tokens;
	atomic_ullong latency_bucket[SERVE_LATENCY_BUCKETS + 1];
	atomic_ullong latency_sum_ns;
	atomic_ullong device_ns;          /* inside the device lock */
	atomic_ullong programs_created, schedules_created;
	/* Per process: its guard counters less those it started with
	 * (a forked worker inherits its master's). */
	atomic_ullong guard[SERVE_MAX_WORKERS + 1][SERVE_GUARD_FIELDS];
};

/* Finds the guard's interface (dlsym); 1 if the guard is loaded. */
int metrics_find_guard(void);

/* How the guard is set up, as /health and /metrics say it. */
struct guard_view {
	int loaded;             /* libarenaguard is in the process */
	uint32_t mode;          /* enum arenaguard_mode; off when not loaded */
	int config_known;       /* strict and suppressions are the guard's
				   (an older guard does not say them) */
	int strict;
	unsigned suppressions;  /* rules in effect */
};
void metrics_guard_view(struct guard_view *v);
/* "off", "warn" or "enforce". */
const char *metrics_mode_name(uint32_t mode);
/* This process's slot (0: the master or the only process). */
void metrics_set_slot(struct serve_metrics *mx, int slot);
/* Publishes this process's guard counters into its slot. */
void metrics_publish_guard(struct serve_metrics *mx);
/* The calling thread's last refusal (the guard's diagnostic), cleared;
 * 0 when there is none or no guard. */
long metrics_last_refusal(char *buf, size_t size);
void metrics_request(struct serve_metrics *mx, enum serve_outcome o,
		     uint64_t ns);
/* The Prometheus text exposition (the server's readiness from health);
 * a malloc'ed string or NULL. */
struct serve_health;
char *metrics_render(struct serve_metrics *mx, struct serve_health *health,
		     size_t *len);

/* ---- health.c ---- */

struct generation;

/* Whether the device accepts the server's submissions (health.c). */
struct serve_health {
	pthread_mutex_t lock;         /* robust, process-shared */
	int unhealthy_after;          /* device errors in a row: not ready */
	int failures;                 /* device errors in a row, now */
	int probe_failed;             /* the last probe did, and nothing
					 succeeded since */
	char reason[512];             /* the last one */
	atomic_ullong last_probe_ns;  /* health_probe_due's */
};

/* 0 or a negative errno. */
int health_init(struct serve_health *h, int unhealthy_after);
/* Notes a completion's outcome (probe: engine_probe's). */
void health_note(struct serve_health *h, const struct generation *g,
		 int probe);
/* 1 when ready; else 0 with why in reason (size > 0). */
int health_ready(struct serve_health *h, char *reason, size_t size);
/* 1 (once, for one caller) when a second has passed since the last
 * probe: a server not ready probes again at /health, to find out. */
int health_probe_due(struct serve_health *h);

/* ---- engine.c ---- */

struct engine_config {
	int layers;
	int max_context;       /* the largest batch shape (prompt) */
	int sequences;         /* live sequences per process, at most */
	enum device_path path;
	int buggy_shape;       /* 0: none */
	int unhealthy_after;   /* health.c: device errors in a row */
};

struct shape_entry;

/* What the master and the workers share (mmap'ed, MAP_SHARED). */
struct serve_shared {
	pthread_mutex_t device_lock;   /* robust, process-shared */
	struct serve_metrics metrics;
	struct serve_health health;
};

struct engine {
	struct engine_config cfg;
	struct model_shape shape;      /* tokens = max_context */
	struct model model;
	struct device dev;             /* the open file, its buffers */
	struct serve_shared *shared;
	sem_t sequences;
	pthread_mutex_t shapes_lock;
	struct shape_entry *shapes[MODEL_MAX_TOKENS + 1];
	int owner;                     /* this process opened dev */
};

/* The result of one generation. */
struct generation {
	int status;                  /* HTTP status: 200 or 500 */
	int blocked;                 /* 500 because the guard blocked it */
	int n;                       /* tokens generated */
	int tokens[TOKENS_MAX_NEW];
	uint64_t queue_ns, device_ns, total_ns;
	char error[5120];            /* on 500: what went wrong */
};

/* Opens the device, creates the buffers and uploads the weights.
 * 0 or a negative errno (printed). */
int engine_open(struct engine *e, const struct engine_config *cfg);
/* In a forked worker: its own locks and semaphore, no programs yet. */
int engine_after_fork(struct engine *e);
/* Generates n tokens after prompt[0, t) (1 <= t <= max_context,
 * 1 <= n <= TOKENS_MAX_NEW, tokens in the vocabulary). */
void engine_generate(struct engine *e, const int *prompt, int t, int n,
		     struct generation *g);
/* The health probe: one token of a one-token prompt (a shape the
 * correct planner plans), as a completion, its outcome noted in the
 * health (health_note) and returned in g. */
void engine_probe(struct engine *e, struct generation *g);
/* Destroys this process's programs; the owner also the buffers and the
 * open file. */
void engine_close(struct engine *e);

/* ---- http.c ---- */

struct MHD_Daemon;
struct server {
	struct engine *engine;
	struct MHD_Daemon *daemon;
	atomic_int active;     /* requests in flight */
	atomic_ullong ids;
};

/* How the front end treats connections (serve.c's flags). */
struct http_config {
	int threads;           /* the pool, per process */
	int max_connections;   /* open at once, per process (>= threads) */
	int per_client;        /* open at once from one IP address, per
				  process; 0: no limit */
	int idle_timeout_s;    /* a connection with nothing to read or
				  write for this long is closed; 0: never */
};

/* Starts the thread pool on the listening socket.  0 or -1 (said). */
int http_start(struct server *s, int listen_fd,
	       const struct http_config *cfg);
/* Stops accepting, lets the requests in flight finish (at most
 * timeout_s), then stops. */
void http_stop(struct server *s, int timeout_s);

uint64_t serve_now_ns(void);

#endif
