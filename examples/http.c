/* SPDX-License-Identifier: MIT */
/*
 * arena-serve's HTTP front end: libmicrohttpd in its thread-pool mode
 * (each pool thread accepts on the listening socket and runs its
 * requests to the end), JSON bodies with jansson.
 *
 *   POST /v1/completions  {"prompt": [tokens], "max_tokens": n}
 *                         -> {"tokens": [...], "usage": ..., "timings": ...}
 *   GET  /health          -> {"status": "ok", ...}, or 503 with
 *                            {"status": "unavailable", "reason", ...}
 *   GET  /metrics         -> Prometheus text (metrics.c)
 *
 * A request's state (its body as it arrives) lives from its first call
 * to its completion callback; `active` counts them, so that a stop can
 * wait for the requests in flight.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <microhttpd.h>

#include "serve.h"

#define BODY_MAX 65536
#define DEFAULT_MAX_TOKENS 16

struct request {
	uint64_t start;
	size_t len;
	int too_big;
	char body[BODY_MAX + 1];
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int status,
			     const char *type, char *text, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, text,
		MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	enum MHD_Result ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ok;
}

/* Answers with the JSON value (stolen). */
static enum MHD_Result reply_json(struct MHD_Connection *c,
				  unsigned int status, json_t *v)
{
	char *text = v ? json_dumps(v, JSON_COMPACT) : NULL;
	json_decref(v);
	if (!text)
		return MHD_NO;
	size_t len = strlen(text);
	/* json_dumps allocates with malloc (jansson's default). */
	char *line = realloc(text, len + 2);
	if (!line) {
		free(text);
		return MHD_NO;
	}
	line[len] = '\n';
	line[len + 1] = 0;
	return reply(c, status, "application/json", line, len + 1);
}

static enum MHD_Result reply_error(struct server *s, struct MHD_Connection *c,
				   unsigned int status, const char *type,
				   const char *message)
{
	(void)s;
	return reply_json(c, status, json_pack("{s:{s:s,s:s}}", "error",
		"type", type, "message", message));
}

/* ---- POST /v1/completions ---- */

struct completion {
	int prompt[MODEL_MAX_TOKENS];
	int t, n;
};

/* Reads the request; 0, or -1 with `why` saying what is wrong. */
static int parse_completion(const struct engine *e, const char *body,
			    size_t len, struct completion *q, char *why,
			    size_t why_len)
{
	json_error_t err;
	json_t *root = json_loadb(body, len, 0, &err);
	int rc = -1;
	if (!root) {
		snprintf(why, why_len, "the body is not JSON: line %d column "
			 "%d: %s", err.line, err.column, err.text);
		return -1;
	}
	json_t *prompt = json_object_get(root, "prompt");
	json_t *max = json_object_get(root, "max_tokens");
	int vocab = tokens_vocabulary(&e->shape);
	size_t t = json_is_array(prompt) ? json_array_size(prompt) : 0;
	if (!json_is_object(root))
		snprintf(why, why_len, "the body is not a JSON object");
	else if (!json_is_array(prompt))
		snprintf(why, why_len, "\"prompt\": expected an array of "
			 "tokens");
	else if (t < 1 || t > (size_t)e->cfg.max_context)
		snprintf(why, why_len, "\"prompt\": %zu tokens; expected 1 to "
			 "%d", t, e->cfg.max_context);
	else if (max && (!json_is_integer(max) ||
			 json_integer_value(max) < 1 ||
			 json_integer_value(max) > TOKENS_MAX_NEW))
		snprintf(why, why_len, "\"max_tokens\": expected an integer "
			 "in 1..%d", TOKENS_MAX_NEW);
	else
		rc = 0;
	for (size_t i = 0; rc == 0 && i < t; i++) {
		json_t *v = json_array_get(prompt, i);
		json_int_t k = json_is_integer(v) ? json_integer_value(v) : -1;
		if (k < 0 || k >= vocab) {
			snprintf(why, why_len, "\"prompt\"[%zu]: expected a "
				 "token, an integer in 0..%d", i, vocab - 1);
			rc = -1;
		}
		q->prompt[i] = (int)k;
	}
	q->t = (int)t;
	q->n = max ? (int)json_integer_value(max) : DEFAULT_MAX_TOKENS;
	json_decref(root);
	return rc;
}

static double ms(uint64_t ns)
{
	return (double)ns * 1e-6;
}

static enum MHD_Result completions(struct server *s, struct MHD_Connection *c,
				   struct request *r)
{
	struct engine *e = s->engine;
	struct serve_metrics *mx = &e->shared->metrics;
	struct completion q;
	char why[256];
	if (r->too_big) {
		metrics_request(mx, OUT_BAD, 0);
		return reply_error(s, c, MHD_HTTP_CONTENT_TOO_LARGE,
				   "invalid_request", "the body is over 64 KiB");
	}
	if (parse_completion(e, r->body, r->len, &q, why, sizeof(why)) != 0) {
		metrics_request(mx, OUT_BAD, 0);
		return reply_error(s, c, MHD_HTTP_BAD_REQUEST,
				   "invalid_request", why);
	}
	struct generation *g = malloc(sizeof(*g));
	if (!g)
		return MHD_NO;
	engine_generate(e, q.prompt, q.t, q.n, g);
	health_note(&e->shared->health, g, 0);
	metrics_publish_guard(mx);
	uint64_t total = serve_now_ns() - r->start;
	json_t *v;
	if (g->status == 200) {
		json_t *tokens = json_array();
		for (int i = 0; i < g->n; i++)
			json_array_append_new(tokens, json_integer(g->tokens[i]));
		v = json_pack("{s:I,s:s,s:i,s:o,s:{s:i,s:i},s:{s:f,s:f,s:f}}",
			"id", (json_int_t)atomic_fetch_add(&s->ids, 1),
			"object", "text_completion", "shape", q.t,
			"tokens", tokens,
			"usage", "prompt_tokens", q.t, "completion_tokens", g->n,
			"timings", "queue_ms", ms(g->queue_ns),
			"device_ms", ms(g->device_ns), "total_ms", ms(total));
		atomic_fetch_add(&mx->prompt_tokens, (unsigned)q.t);
		atomic_fetch_add(&mx->generated_tokens, (unsigned)g->n);
		metrics_request(mx, OUT_OK, total);
	} else {
		v = json_pack("{s:{s:s,s:s,s:i}}", "error",
			"type", g->blocked ? "guard_blocked" : "device_error",
			"message", g->error, "shape", q.t);
		metrics_request(mx, g->blocked ? OUT_BLOCKED : OUT_FAILED,
				total);
	}
	unsigned int status = (unsigned)g->status;
	free(g);
	return reply_json(c, status, v);
}

/* ---- GET ---- */

/* Ready (200) or not (503, with why): health.c.  A server not ready
 * probes the device again first, once a second at most, so that it
 * becomes ready when the device does, without traffic. */
static enum MHD_Result health(struct server *s, struct MHD_Connection *c)
{
	struct engine *e = s->engine;
	struct serve_health *h = &e->shared->health;
	char reason[sizeof(h->reason) + 128];
	int ready = health_ready(h, reason, sizeof(reason));
	if (!ready && health_probe_due(h)) {
		struct generation *g = malloc(sizeof(*g));
		if (g)
			engine_probe(e, g);
		free(g);
		ready = health_ready(h, reason, sizeof(reason));
	}
	metrics_request(&e->shared->metrics, ready ? OUT_HEALTH : OUT_UNREADY,
			0);
	struct guard_view gv;
	metrics_guard_view(&gv);
	json_t *guard = json_pack("{s:b,s:s}", "loaded", gv.loaded, "mode",
				  metrics_mode_name(gv.mode));
	if (guard && gv.config_known) {
		json_object_set_new(guard, "strict", json_boolean(gv.strict));
		json_object_set_new(guard, "suppressions",
				    json_integer(gv.suppressions));
	}
	json_t *v = json_pack("{s:s,s:s,s:i,s:i,s:o?}",
		"status", ready ? "ok" : "unavailable",
		"device", e->dev.version, "max_context", e->cfg.max_context,
		"vocabulary", tokens_vocabulary(&e->shape), "guard", guard);
	if (v && !ready)
		json_object_set_new(v, "reason", json_string(reason));
	return reply_json(c, ready ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE,
			  v);
}

static enum MHD_Result metrics(struct server *s, struct MHD_Connection *c)
{
	struct serve_metrics *mx = &s->engine->shared->metrics;
	metrics_request(mx, OUT_METRICS, 0);
	size_t len;
	char *text = metrics_render(mx, &s->engine->shared->health, &len);
	if (!text)
		return MHD_NO;
	return reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4", text, len);
}

/* ---- dispatch ---- */

static enum MHD_Result answer(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *data,
			      size_t *data_size, void **state)
{
	(void)version;
	struct server *s = cls;
	struct request *r = *state;
	if (!r) {
		r = malloc(sizeof(*r));
		if (!r)
			return MHD_NO;
		r->start = serve_now_ns();
		r->len = 0;
		r->too_big = 0;
		*state = r;
		atomic_fetch_add(&s->active, 1);
		if (strcmp(method, MHD_HTTP_METHOD_POST) == 0)
			return MHD_YES;   /* the body follows */
	}
	if (*data_size) {
		if (r->len + *data_size > BODY_MAX)
			r->too_big = 1;
		else
			memcpy(r->body + r->len, data, *data_size);
		if (!r->too_big)
			r->len += *data_size;
		*data_size = 0;
		return MHD_YES;
	}
	r->body[r->len] = 0;
	int get = strcmp(method, MHD_HTTP_METHOD_GET) == 0;
	int post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
	enum serve_outcome known = OUT_COUNT;
	if (strcmp(url, "/v1/completions") == 0) {
		if (post)
			return completions(s, c, r);
		known = OUT_BAD;
	} else if (strcmp(url, "/health") == 0) {
		if (get)
			return health(s, c);
		known = OUT_BAD;
	} else if (strcmp(url, "/metrics") == 0) {
		if (get)
			return metrics(s, c);
		known = OUT_BAD;
	}
	metrics_request(&s->engine->shared->metrics, OUT_BAD, 0);
	if (known == OUT_BAD)
		return reply_error(s, c, MHD_HTTP_METHOD_NOT_ALLOWED,
				   "invalid_request", "method not allowed");
	return reply_error(s, c, MHD_HTTP_NOT_FOUND, "invalid_request",
			   "no such endpoint (POST /v1/completions, GET "
			   "/health, GET /metrics)");
}

static void completed(void *cls, struct MHD_Connection *c, void **state,
		      enum MHD_RequestTerminationCode why)
{
	(void)c;
	(void)why;
	struct server *s = cls;
	if (*state) {
		free(*state);
		*state = NULL;
		atomic_fetch_sub(&s->active, 1);
	}
}

/*
 * libmicrohttpd's messages, on standard error, LOG_BURST a second at
 * most: past a connection limit it says one line per connection it
 * closes, and a flood of connections must not become a flood of log.
 * The lines left out are counted at the next one said.
 */
#define LOG_BURST 10

static void log_limited(void *cls, const char *fmt, va_list ap)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static uint64_t second;
	static unsigned long said, dropped;
	(void)cls;
	pthread_mutex_lock(&lock);
	uint64_t now = serve_now_ns() / 1000000000u;
	if (now != second) {
		if (dropped)
			fprintf(stderr, "arena-serve: %lu more libmicrohttpd "
				"messages left out\n", dropped);
		second = now;
		said = dropped = 0;
	}
	if (said < LOG_BURST) {
		said++;
		fputs("arena-serve: ", stderr);
		vfprintf(stderr, fmt, ap);
	} else {
		dropped++;
	}
	pthread_mutex_unlock(&lock);
}

/*
 * poll(2), so that descriptors past FD_SETSIZE serve.  Not epoll:
 * libmicrohttpd 0.9.75's MHD_quiesce_daemon (http_stop) and an epoll
 * worker thread both remove the listen socket from the worker's epoll set,
 * unsynchronised, and the loser aborts the process ("Failed to remove
 * listen FD from epoll set", an open upstream defect; seen killing the
 * server in the serve suite under load).  With poll the listen socket is
 * simply left out of the next poll, and quiescing goes through the
 * threads' inter-thread channel.  At the connection
 * limit (libmicrohttpd divides it among the pool's threads) a thread
 * stops accepting: a new connection waits in the listen backlog until
 * one closes, an idle one at the latest after the idle timeout.  Over
 * the per-client limit a connection is accepted and closed at once, so
 * that one address cannot take the whole limit.
 */
int http_start(struct server *s, int listen_fd, const struct http_config *cfg)
{
	assert(cfg->threads >= 1 && cfg->max_connections >= cfg->threads);
	assert(cfg->per_client >= 0 && cfg->idle_timeout_s >= 0);
	s->daemon = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
		MHD_USE_ITC | MHD_USE_ERROR_LOG,
		0, NULL, NULL, answer, s,
		/* first: the options after it log through it */
		MHD_OPTION_EXTERNAL_LOGGER, log_limited, NULL,
		MHD_OPTION_LISTEN_SOCKET, (MHD_socket)listen_fd,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)cfg->threads,
		MHD_OPTION_NOTIFY_COMPLETED, completed, s,
		MHD_OPTION_CONNECTION_LIMIT,
		(unsigned int)cfg->max_connections,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT,
		(unsigned int)cfg->per_client,
		MHD_OPTION_CONNECTION_TIMEOUT,
		(unsigned int)cfg->idle_timeout_s,
		MHD_OPTION_END);
	if (!s->daemon) {
		fprintf(stderr, "arena-serve: MHD_start_daemon failed\n");
		return -1;
	}
	return 0;
}

void http_stop(struct server *s, int timeout_s)
{
	if (!s->daemon)
		return;
	MHD_quiesce_daemon(s->daemon);
	uint64_t deadline = serve_now_ns() + (uint64_t)timeout_s * 1000000000ull;
	while (atomic_load(&s->active) > 0 && serve_now_ns() < deadline)
		usleep(1000);
	MHD_stop_daemon(s->daemon);
	s->daemon = NULL;
}
