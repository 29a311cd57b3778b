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
	OUT_HEALTH,      /* GET /health */
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
	atomic_int guard_loaded;
	/* Per process: its guard counters less those it started with
	 * (a forked worker inherits its master's). */
	atomic_ullong guard[SERVE_MAX_WORKERS + 1][SERVE_GUARD_FIELDS];
};

/* Finds the guard's interface (dlsym); 1 if the guard is loaded. */
int metrics_find_guard(void);
/* This process's slot (0: the master or the only process). */
void metrics_set_slot(struct serve_metrics *mx, int slot);
/* Publishes this process's guard counters into its slot. */
void metrics_publish_guard(struct serve_metrics *mx);
/* The calling thread's last refusal (the guard's diagnostic), cleared;
 * 0 when there is none or no guard. */
long metrics_last_refusal(char *buf, size_t size);
void metrics_request(struct serve_metrics *mx, enum serve_outcome o,
		     uint64_t ns);
/* The Prometheus text exposition; a malloc'ed string or NULL. */
char *metrics_render(struct serve_metrics *mx, size_t *len);

/* ---- engine.c ---- */

struct engine_config {
	int layers;
	int max_context;       /* the largest batch shape (prompt) */
	int sequences;         /* live sequences per process, at most */
	enum device_path path;
	int buggy_shape;       /* 0: none */
};

struct shape_entry;

/* What the master and the workers share (mmap'ed, MAP_SHARED). */
struct serve_shared {
	pthread_mutex_t device_lock;   /* robust, process-shared */
	struct serve_metrics metrics;
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
