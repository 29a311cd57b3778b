/* SPDX-License-Identifier: MIT */
/*
 * arena-serve's engine: one open file of the device for the process
 * tree, a program per batch shape (created by each process the first
 * time it needs the shape), a schedule per sequence.
 *
 * Memory: the plan puts its windows at fixed device addresses, so every
 * program of every shape names the same three buffers, created once by
 * the process that opens the device, sized for the largest shape.  The
 * weights are uploaded once.  A sequence's decode step writes its input
 * window, submits its schedule, waits and reads the output: those four
 * touch the shared io and workspace buffers, so they run under the
 * device lock (process-shared: workers of a prefork server share the
 * open file, hence the memory).  Creating, appending and destroying
 * schedules are outside it: the guard sees them from many threads.
 *
 * A sequence's schedule grows by the plan's references at every step
 * and is submitted whole at every step (the driver runs a schedule from
 * its first reference: uapi.h), as a runtime that keeps a live schedule
 * per sequence does.  Every pass starts from the input, so the last
 * one's output is the step's.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>

#include <arenaguard/uapi.h>

#include "serve.h"

#define SEED 0x61726e61ull   /* arena-infer's: the same weights */

struct shape_entry {
	struct model_shape shape;
	struct plan plan;        /* never moves: model points into it */
	uint32_t program;
	int failed;              /* the program could not be created */
};

uint64_t serve_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t page_up(uint64_t n)
{
	return (n + PLAN_PAGE - 1) / PLAN_PAGE * PLAN_PAGE;
}

/* The buffers' sizes: the largest shape's windows, either planner. */
static int buffer_sizes(const struct model_shape *shape, uint64_t size[])
{
	for (int w = 0; w < WIN_COUNT; w++)
		size[w] = 0;
	for (int k = 0; k < 2; k++) {
		struct plan *p = malloc(sizeof(*p));
		if (!p || plan_build(p, shape, k ? PLAN_BUGGY : PLAN_CORRECT)) {
			free(p);
			return -ENOMEM;
		}
		for (int w = 0; w < WIN_COUNT; w++)
			if (p->windows[w].size > size[w])
				size[w] = p->windows[w].size;
		plan_free(p);
		free(p);
	}
	for (int w = 0; w < WIN_COUNT; w++)
		size[w] = page_up(size[w]);
	return 0;
}

static int init_locks(struct engine *e)
{
	if (sem_init(&e->sequences, 0, (unsigned)e->cfg.sequences) != 0)
		return -errno;
	pthread_mutex_init(&e->shapes_lock, NULL);
	return 0;
}

static int init_shared(struct engine *e)
{
	e->shared = mmap(NULL, sizeof(*e->shared), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (e->shared == MAP_FAILED) {
		e->shared = NULL;
		return -errno;
	}
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	int rc = pthread_mutex_init(&e->shared->device_lock, &a);
	pthread_mutexattr_destroy(&a);
	return rc ? -rc : health_init(&e->shared->health,
				      e->cfg.unhealthy_after);
}

int engine_open(struct engine *e, const struct engine_config *cfg)
{
	memset(e, 0, sizeof(*e));
	e->dev.fd = -1;
	e->cfg = *cfg;
	e->shape = model_default_shape(cfg->layers, cfg->max_context);
	uint64_t size[WIN_COUNT];
	int rc = init_shared(e);
	if (rc == 0)
		rc = init_locks(e);
	if (rc == 0 && model_init(&e->model, &e->shape, SEED) != 0)
		rc = -ENOMEM;
	if (rc == 0)
		rc = buffer_sizes(&e->shape, size);
	if (rc != 0) {
		fprintf(stderr, "arena-serve: %s\n", strerror(-rc));
		return rc;
	}
	/* The ring, if any, is each thread's own: the device by ioctl. */
	rc = device_open(&e->dev, DEVICE_IOCTL);
	if (rc != 0)
		return rc;
	e->owner = 1;
	static const uint64_t base[WIN_COUNT] = {
		[WIN_PARAMS] = PLAN_PARAMS_BASE, [WIN_IO] = PLAN_IO_BASE,
		[WIN_WORKSPACE] = PLAN_WORKSPACE_BASE,
	};
	for (int w = 0; w < WIN_COUNT && rc == 0; w++)
		rc = device_add_bo(&e->dev, base[w], size[w]);
	/* The weights: the same for every shape (only the input depends on
	 * the tokens), so the largest shape's plan says where. */
	struct plan *p = malloc(sizeof(*p));
	if (rc == 0 && (!p || plan_build(p, &e->shape, PLAN_CORRECT) != 0))
		rc = -ENOMEM;
	if (rc == 0)
		rc = device_write(&e->dev, p->globals[G_WEIGHTS].offset,
				  e->model.bank, p->globals[G_WEIGHTS].size);
	if (rc == 0)
		rc = device_write(&e->dev, p->globals[G_FINAL_NORM].offset,
				  e->model.final_norm,
				  p->globals[G_FINAL_NORM].size);
	if (p && rc == 0)
		plan_free(p);
	free(p);
	return rc;
}

int engine_after_fork(struct engine *e)
{
	e->owner = 0;
	/* The master's programs (the probe's) stay the master's to
	 * destroy; their plans here are a copy to free. */
	for (int t = 0; t <= MODEL_MAX_TOKENS; t++) {
		if (e->shapes[t])
			plan_free(&e->shapes[t]->plan);
		free(e->shapes[t]);
		e->shapes[t] = NULL;
	}
	sem_destroy(&e->sequences);
	return init_locks(e);
}

/* ---- shapes ---- */

static int fits(const struct engine *e, const struct plan *p)
{
	for (int w = 0; w < WIN_COUNT; w++)
		if (p->windows[w].base != e->dev.bo_base[w] ||
		    p->windows[w].size > e->dev.bo_size[w])
			return 0;
	return 1;
}

/* A program the device refused to create, said as a failed shape. */
static struct shape_entry refused_entry = { .failed = 1 };

/* The shape's plan and program, made the first time; NULL with g->error
 * said when it cannot be.  A program the device refuses is asked for
 * again at the shape's next request; one that does not fit the buffers
 * is not. */
static struct shape_entry *shape_of(struct engine *e, int t,
				    struct generation *g)
{
	pthread_mutex_lock(&e->shapes_lock);
	struct shape_entry *s = e->shapes[t];
	if (!s && (s = calloc(1, sizeof(*s))) != NULL) {
		s->shape = model_default_shape(e->cfg.layers, t);
		enum plan_kind kind = t == e->cfg.buggy_shape ? PLAN_BUGGY
							      : PLAN_CORRECT;
		int refused = 0;
		if (plan_build(&s->plan, &s->shape, kind) != 0) {
			free(s);
			s = NULL;
		} else if (!fits(e, &s->plan)) {
			s->failed = 1;   /* for good: the buffers are made */
		} else if (device_program_on(e->dev.fd, &s->plan,
					     &s->program) != 0) {
			/* Not kept: the device may accept it later (the
			 * health's re-probe asks it again). */
			plan_free(&s->plan);
			free(s);
			s = NULL;
			refused = 1;
		} else {
			atomic_fetch_add(&e->shared->metrics.programs_created, 1);
		}
		if (s)
			e->shapes[t] = s;
		else if (refused)
			s = &refused_entry;
	}
	pthread_mutex_unlock(&e->shapes_lock);
	if (!s)
		snprintf(g->error, sizeof(g->error), "out of memory");
	else if (s->failed)
		snprintf(g->error, sizeof(g->error), "the program of shape %d "
			 "could not be created on the device", t);
	return s && !s->failed ? s : NULL;
}

/* ---- rings: one per thread ---- */

static pthread_key_t ring_key;
static pthread_once_t ring_once = PTHREAD_ONCE_INIT;

static void ring_free(void *r)
{
	io_uring_queue_exit(r);
	free(r);
}

static void ring_key_make(void)
{
	if (pthread_key_create(&ring_key, ring_free) != 0)
		abort();
}

static struct io_uring *thread_ring(void)
{
	pthread_once(&ring_once, ring_key_make);
	struct io_uring *r = pthread_getspecific(ring_key);
	if (r)
		return r;
	r = malloc(sizeof(*r));
	if (!r || device_ring_init(r) != 0) {
		free(r);
		return NULL;
	}
	pthread_setspecific(ring_key, r);
	return r;
}

/* ---- decoding ---- */

static void lock_device(struct engine *e)
{
	int rc = pthread_mutex_lock(&e->shared->device_lock);
	if (rc == EOWNERDEAD)   /* a worker died mid-step: the next step
				   rewrites what it touched */
		pthread_mutex_consistent(&e->shared->device_lock);
}

/* One decode step: the window in, the schedule one pass longer,
 * submitted, the output out.  0 or a negative errno. */
static int step(struct engine *e, struct shape_entry *s,
		struct io_uring *ring, uint32_t schedule, const int *window,
		float *input, float *output, struct generation *g)
{
	const struct plan *p = &s->plan;
	size_t count;
	const struct ac_ref *refs = plan_schedule(p, &count);
	tokens_embed(&s->shape, window, input);
	int rc = device_append_on(e->dev.fd, ring, schedule, refs, count);
	if (rc != 0)
		return rc;

	lock_device(e);
	uint64_t start = serve_now_ns();
	rc = device_write(&e->dev, p->globals[G_INPUT].offset, input,
			  p->globals[G_INPUT].size);
	if (rc == 0)
		rc = device_forward_on(e->dev.fd, ring, schedule, 1);
	if (rc == 0)
		rc = device_read(&e->dev, p->globals[G_OUTPUT].offset, output,
				 p->globals[G_OUTPUT].size);
	uint64_t ns = serve_now_ns() - start;
	pthread_mutex_unlock(&e->shared->device_lock);
	g->device_ns += ns;
	atomic_fetch_add(&e->shared->metrics.device_ns, ns);
	return rc;
}

static void say_failure(struct generation *g, int rc, int at)
{
	g->status = 500;
	/* The guard's block is an EPERM it kept a diagnostic of; an EPERM
	 * without one is the driver's (say, access revoked): a device
	 * error, which the health counts. */
	char diag[sizeof(g->error) - 128];
	if (rc == -EPERM && metrics_last_refusal(diag, sizeof(diag)) > 0) {
		g->blocked = 1;
		snprintf(g->error, sizeof(g->error), "%s", diag);
		return;
	}
	snprintf(g->error, sizeof(g->error), "device error at step %d: %s",
		 at, strerror(-rc));
}

/* Runs the decode loop of a sequence whose schedule is made. */
static void decode(struct engine *e, struct shape_entry *s,
		   struct io_uring *ring, uint32_t schedule, const int *prompt,
		   int t, int n, struct generation *g)
{
	size_t floats = model_io_floats(&s->shape);
	int *seq = malloc(((size_t)t + (size_t)n) * sizeof(int));
	float *input = malloc(floats * sizeof(float));
	float *output = malloc(floats * sizeof(float));
	if (!seq || !input || !output) {
		g->status = 500;
		snprintf(g->error, sizeof(g->error), "out of memory");
		n = 0;
	} else {
		memcpy(seq, prompt, (size_t)t * sizeof(int));
	}
	for (int k = 0; k < n; k++) {
		int rc = step(e, s, ring, schedule, seq + k, input, output, g);
		if (rc != 0) {
			say_failure(g, rc, k);
			break;
		}
		g->tokens[k] = seq[t + k] = tokens_next(&s->shape, output);
		g->n = k + 1;
	}
	free(seq);
	free(input);
	free(output);
}

void engine_generate(struct engine *e, const int *prompt, int t, int n,
		     struct generation *g)
{
	assert(t >= 1 && t <= e->cfg.max_context);
	assert(n >= 1 && n <= TOKENS_MAX_NEW);
	uint64_t start = serve_now_ns();
	memset(g, 0, offsetof(struct generation, error));
	g->error[0] = 0;
	g->status = 500;

	while (sem_wait(&e->sequences) != 0 && errno == EINTR)
		;
	g->queue_ns = serve_now_ns() - start;
	struct io_uring *ring = NULL;
	if (e->cfg.path == DEVICE_URING && !(ring = thread_ring()))
		snprintf(g->error, sizeof(g->error), "no io_uring ring");
	struct shape_entry *s = e->cfg.path == DEVICE_URING && !ring
				? NULL : shape_of(e, t, g);
	uint32_t schedule;
	if (s && device_schedule_on(e->dev.fd, s->program, &schedule) != 0) {
		snprintf(g->error, sizeof(g->error), "the schedule could not "
			 "be created");
		s = NULL;
	}
	if (s) {
		atomic_fetch_add(&e->shared->metrics.schedules_created, 1);
		g->status = 200;
		decode(e, s, ring, schedule, prompt, t, n, g);
		device_destroy_on(e->dev.fd, DRM_IOCTL_ARENA_SCHEDULE_DESTROY,
				  schedule);
	}
	sem_post(&e->sequences);
	g->total_ns = serve_now_ns() - start;
}

void engine_probe(struct engine *e, struct generation *g)
{
	/* One token, or two where one is the buggy shape (a buggy
	 * planner's program failing says nothing of the device; with
	 * --max-context 1 there is no other, and the probe fails as every
	 * request would). */
	int t = e->cfg.buggy_shape == 1 && e->cfg.max_context > 1 ? 2 : 1;
	static const int prompt[2];
	atomic_store(&e->shared->health.last_probe_ns, serve_now_ns());
	engine_generate(e, prompt, t, 1, g);
	health_note(&e->shared->health, g, 1);
}

void engine_close(struct engine *e)
{
	for (int t = 0; t <= MODEL_MAX_TOKENS; t++) {
		struct shape_entry *s = e->shapes[t];
		if (!s)
			continue;
		if (!s->failed)
			device_destroy_on(e->dev.fd,
					  DRM_IOCTL_ARENA_PROGRAM_DESTROY,
					  s->program);
		plan_free(&s->plan);
		free(s);
		e->shapes[t] = NULL;
	}
	if (e->owner)
		device_close(&e->dev);
	model_free(&e->model);
	sem_destroy(&e->sequences);
	pthread_mutex_destroy(&e->shapes_lock);
	if (e->shared && e->owner)
		munmap(e->shared, sizeof(*e->shared));
	e->shared = NULL;
}
