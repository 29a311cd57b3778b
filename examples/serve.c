/* SPDX-License-Identifier: MIT */
/*
 * arena-serve - an HTTP inference server for the example transformer on
 * the arena device (examples/README.md, "arena-serve").
 *
 *   arena-serve [--port P] [--threads N] [--sequences M] [--workers W]
 *               [--uring] [--layers L] [--max-context T]
 *               [--buggy-shape S] [--drain-seconds D]
 *               [--max-connections C] [--per-client-connections K]
 *               [--idle-timeout I] [--unhealthy-after F]
 *
 * Listens on 127.0.0.1:P (0: a port the kernel picks) and prints
 * "arena-serve: listening on http://127.0.0.1:PORT" once it serves.
 * With --workers W (prefork) the master opens the device, creates the
 * buffers and uploads the weights, then forks W workers that share the
 * open file and the listening socket, each with a pool of N threads.
 * SIGTERM (or SIGINT): stop accepting, let the requests in flight
 * finish (for D seconds at most), destroy the schedules and programs,
 * exit 0.  The connection limits and the idle timeout are per process
 * (each worker has its own); the descriptor limit (RLIMIT_NOFILE) is
 * raised to what --max-connections needs, within the hard limit.
 * Before it announces itself it probes the device (engine_probe): when
 * the device refuses the probe, it says why and serves, with /health
 * answering 503 until a probe or a completion succeeds (health.c).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "serve.h"

/* Descriptors a process needs besides its connections: the listening
 * socket, the device, the rings, epoll and its eventfds, the guard's. */
#define FD_RESERVE 64

struct options {
	int port, workers;
	struct http_config http;
	int drain_s;          /* SIGTERM: how long requests in flight get */
	int max_connections_given;   /* --max-connections on the command line */
	struct engine_config engine;
};

static const char usage_text[] =
	"Usage: arena-serve [--port P] [--threads N] [--sequences M]\n"
	"                   [--workers W] [--uring] [--layers L]\n"
	"                   [--max-context T] [--buggy-shape S]\n"
	"                   [--drain-seconds D] [--max-connections C]\n"
	"                   [--per-client-connections K] [--idle-timeout I]\n"
	"                   [--unhealthy-after F]\n"
	"Serve the example transformer over HTTP on 127.0.0.1, on the arena\n"
	"device (/dev/accel/accel0).\n"
	"\n"
	"  --port P         TCP port (default 8080; 0: any free port)\n"
	"  --threads N      HTTP threads per process (default 4)\n"
	"  --sequences M    live sequences per process, at most (default 8)\n"
	"  --workers W      prefork: W worker processes sharing the device's\n"
	"                   open file, opened by the master (default 0: one\n"
	"                   process)\n"
	"  --uring          append and submit through io_uring, not ioctl\n"
	"  --layers L       model layers, 1..64 (default 2)\n"
	"  --max-context T  the longest prompt (batch shape), 1..64 (default\n"
	"                   64)\n"
	"  --buggy-shape S  plan prompts of S tokens with the buggy planner\n"
	"  --drain-seconds D  at SIGTERM, wait at most D seconds for the\n"
	"                   requests in flight (default 60)\n"
	"  --max-connections C  connections open at once, per process\n"
	"                   (default 512); past it a new one waits in the\n"
	"                   listen backlog until one closes\n"
	"  --per-client-connections K  connections open at once from one IP\n"
	"                   address, per process (default 32; 0: no limit);\n"
	"                   past it a new one is closed at once\n"
	"  --idle-timeout I  close a connection idle for I seconds (default\n"
	"                   15; 0: never)\n"
	"  --unhealthy-after F  /health answers 503 after F completions in a\n"
	"                   row failed on the device (default 3), or after\n"
	"                   the start-up probe failed, until one succeeds\n"
	"  --help, -h       show this help\n"
	"\n"
	"POST /v1/completions {\"prompt\": [tokens], \"max_tokens\": n},\n"
	"GET /health (503 when the device refuses the server's work),\n"
	"GET /metrics (Prometheus).  Exit status: 0 after SIGTERM, 2 a\n"
	"usage error or a device that cannot be opened.\n";

static int parse_int(const char *option, const char *arg, int lo, int hi,
		     int *out)
{
	char *end;
	errno = 0;
	long v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < lo || v > hi) {
		fprintf(stderr, "arena-serve: --%s takes a number in %d..%d\n",
			option, lo, hi);
		return -1;
	}
	*out = (int)v;
	return 0;
}

/* The options that take a number: one line each. */
struct int_option {
	const char *name;
	int lo, hi;
	int *out;
};

static int parse_options(int argc, char **argv, struct options *o)
{
	*o = (struct options){ .port = 8080, .workers = 0, .drain_s = 60,
		.http = { .threads = 4, .max_connections = 512,
			  .per_client = 32, .idle_timeout_s = 15 },
		.engine = { .layers = 2, .max_context = MODEL_MAX_TOKENS,
			    .sequences = 8, .path = DEVICE_IOCTL,
			    .unhealthy_after = 3 } };
	const struct int_option ints[] = {
		{ "port", 0, 65535, &o->port },
		{ "threads", 1, 256, &o->http.threads },
		{ "sequences", 1, 1024, &o->engine.sequences },
		{ "workers", 0, SERVE_MAX_WORKERS, &o->workers },
		{ "layers", 1, MODEL_MAX_LAYERS, &o->engine.layers },
		{ "max-context", 1, MODEL_MAX_TOKENS, &o->engine.max_context },
		{ "buggy-shape", 1, MODEL_MAX_TOKENS, &o->engine.buggy_shape },
		{ "drain-seconds", 0, 86400, &o->drain_s },
		{ "max-connections", 1, 1000000, &o->http.max_connections },
		{ "per-client-connections", 0, 1000000, &o->http.per_client },
		{ "idle-timeout", 0, 86400, &o->http.idle_timeout_s },
		{ "unhealthy-after", 1, 1000000, &o->engine.unhealthy_after },
	};
	enum { N_INTS = sizeof(ints) / sizeof(ints[0]), O_INT = 256 };
	struct option longopts[N_INTS + 3];
	for (int i = 0; i < N_INTS; i++)
		longopts[i] = (struct option){ ints[i].name, required_argument,
					       NULL, O_INT + i };
	longopts[N_INTS] = (struct option){ "uring", no_argument, NULL, 'u' };
	longopts[N_INTS + 1] = (struct option){ "help", no_argument, NULL,
						'h' };
	longopts[N_INTS + 2] = (struct option){ NULL, 0, NULL, 0 };
	int c, rc = 0;
	while (rc == 0 &&
	       (c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c >= O_INT && c < O_INT + N_INTS) {
			const struct int_option *io = &ints[c - O_INT];
			rc = parse_int(io->name, optarg, io->lo, io->hi,
				       io->out);
			if (io->out == &o->http.max_connections)
				o->max_connections_given = 1;
		} else if (c == 'u') {
			o->engine.path = DEVICE_URING;
		} else if (c == 'h') {
			fputs(usage_text, stdout);
			exit(0);
		} else {
			fputs(usage_text, stderr);
			return -1;
		}
	}
	if (rc == 0 && optind != argc) {
		fprintf(stderr, "arena-serve: unexpected argument '%s'\n",
			argv[optind]);
		return -1;
	}
	if (rc == 0 && o->http.max_connections < o->http.threads) {
		fprintf(stderr, "arena-serve: --max-connections %d is fewer "
			"than --threads %d (each thread takes its share)\n",
			o->http.max_connections, o->http.threads);
		return -1;
	}
	return rc;
}

/* Raises the soft descriptor limit to what the connection limit needs.
 * When the hard limit is lower: a --max-connections given is refused
 * (-1, said); the default is lowered to what the hard limit allows (at
 * least one connection per thread), and said.  0 otherwise. */
static int raise_fd_limit(struct http_config *http, int given)
{
	struct rlimit r;
	rlim_t need = (rlim_t)http->max_connections + FD_RESERVE;
	if (getrlimit(RLIMIT_NOFILE, &r) != 0) {
		perror("arena-serve: getrlimit");
		return -1;
	}
	if (r.rlim_cur != RLIM_INFINITY && r.rlim_cur < need) {
		if (r.rlim_max != RLIM_INFINITY && r.rlim_max < need) {
			if (given) {
				fprintf(stderr, "arena-serve: --max-connections "
					"%d needs %llu descriptors; the hard "
					"limit (RLIMIT_NOFILE) is %llu\n",
					http->max_connections,
					(unsigned long long)need,
					(unsigned long long)r.rlim_max);
				return -1;
			}
			long fit = (long)r.rlim_max - FD_RESERVE;
			if (fit < http->threads)
				fit = http->threads;
			fprintf(stderr, "arena-serve: the hard descriptor limit "
				"(RLIMIT_NOFILE) is %llu: at most %ld "
				"connections at once (not %d)\n",
				(unsigned long long)r.rlim_max, fit,
				http->max_connections);
			http->max_connections = (int)fit;
			need = (rlim_t)fit + FD_RESERVE;
			if (need > r.rlim_max)
				need = r.rlim_max;
		}
		r.rlim_cur = need;
		if (setrlimit(RLIMIT_NOFILE, &r) != 0) {
			perror("arena-serve: setrlimit RLIMIT_NOFILE");
			return -1;
		}
	}
	return 0;
}

/* A listening TCP socket on 127.0.0.1:port; its port in *bound. */
static int listen_on(int port, int *bound)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		perror("arena-serve: socket");
		return -1;
	}
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(fd, 1024) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
		fprintf(stderr, "arena-serve: 127.0.0.1:%d: %s\n", port,
			strerror(errno));
		close(fd);
		return -1;
	}
	*bound = ntohs(a.sin_port);
	return fd;
}

/* Waits for SIGTERM or SIGINT (blocked in every thread); with
 * `children`, also returns on SIGCHLD.  Returns the signal. */
static int wait_signal(const sigset_t *set)
{
	int sig;
	while (sigwait(set, &sig) != 0)
		;
	return sig;
}

/* One process serving: the thread pool until SIGTERM. */
static int serve(struct engine *e, int fd, const struct http_config *http,
		 int drain_s, const sigset_t *set)
{
	struct server s = { .engine = e };
	if (http_start(&s, fd, http) != 0)
		return 2;
	int sig;
	do
		sig = wait_signal(set);
	while (sig == SIGCHLD);
	http_stop(&s, drain_s);
	return 0;
}

/* The start-up probe, before any worker or thread: its outcome is in
 * the health (and its submission in the master's guard counters). */
static void probe(struct engine *e)
{
	struct generation *g = malloc(sizeof(*g));
	char why[sizeof(e->shared->health.reason) + 128];
	if (!g)
		return;   /* no memory: the completions will tell */
	engine_probe(e, g);
	if (!health_ready(&e->shared->health, why, sizeof(why)))
		fprintf(stderr, "arena-serve: the device refuses the server's "
			"submissions (%s); serving, with /health 503 until a "
			"probe or a completion succeeds\n", why);
	free(g);
}

static void announce(int port, int workers)
{
	printf("arena-serve: listening on http://127.0.0.1:%d", port);
	if (workers)
		printf(" (%d workers)", workers);
	printf("\n");
	fflush(stdout);
}

/* The prefork master: forks the workers, waits for SIGTERM, passes it
 * on.  A worker that dies is reported, not replaced. */
static int master(struct engine *e, int fd, const struct options *o,
		  const sigset_t *set, int port)
{
	pid_t pid[SERVE_MAX_WORKERS];
	int n = 0, status = 0;
	metrics_set_slot(&e->shared->metrics, 0);
	for (; n < o->workers; n++) {
		fflush(NULL);
		pid[n] = fork();
		if (pid[n] < 0) {
			perror("arena-serve: fork");
			status = 2;
			break;
		}
		if (pid[n] == 0) {
			int rc = engine_after_fork(e);
			if (rc == 0) {
				metrics_set_slot(&e->shared->metrics, n + 1);
				rc = serve(e, fd, &o->http, o->drain_s, set);
			}
			engine_close(e);
			exit(rc);
		}
	}
	if (status == 0)
		announce(port, n);
	int live = n;
	while (live > 0 && status == 0) {
		int sig = wait_signal(set);
		if (sig != SIGCHLD)
			break;
		int st;
		pid_t dead;
		while ((dead = waitpid(-1, &st, WNOHANG)) > 0) {
			fprintf(stderr, "arena-serve: worker %d died (%s %d)\n",
				(int)dead, WIFEXITED(st) ? "exit" : "signal",
				WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
			for (int i = 0; i < n; i++)
				if (pid[i] == dead)
					pid[i] = 0;
			live--;
			status = 1;
		}
	}
	for (int i = 0; i < n; i++)
		if (pid[i] > 0)
			kill(pid[i], SIGTERM);
	for (int i = 0; i < n; i++) {
		int st;
		if (pid[i] > 0 && waitpid(pid[i], &st, 0) == pid[i] &&
		    !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
			fprintf(stderr, "arena-serve: worker %d did not stop "
				"cleanly\n", (int)pid[i]);
			status = 1;
		}
	}
	return status;
}

int main(int argc, char **argv)
{
	struct options o;
	if (parse_options(argc, argv, &o) != 0 ||
	    raise_fd_limit(&o.http, o.max_connections_given) != 0)
		return 2;
	if (o.engine.buggy_shape > o.engine.max_context) {
		fprintf(stderr, "arena-serve: --buggy-shape %d is longer than "
			"--max-context %d\n", o.engine.buggy_shape,
			o.engine.max_context);
		return 2;
	}
	/* Every thread, MHD's included, inherits the mask: the signals are
	 * taken by sigwait in the main thread only. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	metrics_find_guard();

	int port;
	int fd = listen_on(o.port, &port);
	if (fd < 0)
		return 2;
	struct engine e;
	if (engine_open(&e, &o.engine) != 0) {
		engine_close(&e);
		close(fd);
		return 2;
	}
	probe(&e);
	int status;
	if (o.workers) {
		status = master(&e, fd, &o, &set, port);
	} else {
		metrics_set_slot(&e.shared->metrics, 0);
		struct server s = { .engine = &e };
		status = http_start(&s, fd, &o.http) != 0 ? 2 : 0;
		if (status == 0) {
			announce(port, 0);
			while (wait_signal(&set) == SIGCHLD)
				;
			http_stop(&s, o.drain_s);
		}
	}
	engine_close(&e);
	close(fd);
	fprintf(stderr, "arena-serve: stopped (pid %d)\n", (int)getpid());
	return status;
}
