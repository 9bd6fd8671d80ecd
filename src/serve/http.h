/* serve's HTTP server, on libmicrohttpd: one internal thread polling every
 * connection with epoll (no thread per connection), so that no client,
 * slow or hostile, holds the agent: at most HTTP_MAX_CONNECTIONS
 * connections at once (HTTP_MAX_PER_IP from one address), an idle
 * connection closed after HTTP_TIMEOUT_S seconds, HTTP_MEMORY_LIMIT bytes
 * of buffers each. Routes:
 *   GET /metrics                            the exposition (handlers.metrics)
 *   GET /debug/pprof/profile?seconds=N      a window of N seconds (default 30,
 *   GET /debug/pprof/offcpu?seconds=N       1 to HTTP_MAX_SECONDS): the request is
 *                                           suspended (no thread waits) until the
 *                                           agent resumes it (http_server__resume)
 *   GET /                                   a line per route
 * and 404 for any other path, 405 for a method other than GET and HEAD,
 * 400 for a bad seconds, 503 when the agent refuses a window (too many).
 * Handlers run on the server's thread. Never prints. */
#ifndef AS_SERVE_HTTP_H
#define AS_SERVE_HTTP_H

#include <stddef.h>
#include <stdint.h>

#define HTTP_MAX_CONNECTIONS 64
#define HTTP_MAX_PER_IP 32
#define HTTP_TIMEOUT_S 10
#define HTTP_MEMORY_LIMIT (32 * 1024)
#define HTTP_DEFAULT_SECONDS 30
#define HTTP_MAX_SECONDS 3600

enum http_window_kind {
	HTTP_WINDOW_CPU = 0,      /* /debug/pprof/profile */
	HTTP_WINDOW_OFFCPU,       /* /debug/pprof/offcpu */
};

struct http_request;

struct http_handlers {
	/* /metrics: the body (malloc'd, the server frees it) and its length.
	 * Returns 0 or -errno (500). */
	int (*metrics)(void *ctx, char **body, size_t *len);
	/* A window of kind for seconds, for request req (the handle to resume
	 * once it is over). Returns an id > 0, -EBUSY (too many: 503) or
	 * -errno (503). */
	int64_t (*window_open)(void *ctx, enum http_window_kind kind, uint64_t seconds,
			       struct http_request *req);
	/* Window id, resumed: its body (gzip'd pprof, malloc'd) and length;
	 * the window is gone after. Returns 0, or -errno (503: the agent
	 * stopped, 500 else; *body may then hold a message). */
	int (*window_take)(void *ctx, int64_t id, char **body, size_t *len);
	/* Window id will never be taken (the client went away, the server
	 * stops): the agent frees it. */
	void (*window_cancel)(void *ctx, int64_t id);
	void *ctx;
};

struct http_server;

/* Checks listen ("HOST:PORT" as below) without listening: 0, or -EINVAL
 * with a one-line message and fix in err. */
int http_listen_check(const char *listen, char *err, size_t errlen);
/* Listens on listen ("HOST:PORT", "[V6]:PORT", ":PORT" every address;
 * port 0: one the kernel picks) and serves until stopped. Returns 0 with
 * *out, or -errno with a one-line message in err. */
int http_server__start(const char *listen, const struct http_handlers *h,
		       struct http_server **out, char *err, size_t errlen);
/* "127.0.0.1:9947": where it listens (the port picked when 0 was asked). */
const char *http_server__address(const struct http_server *s);
/* The window of req is over: its request goes on (window_take). Any
 * thread; once per window. */
void http_server__resume(struct http_server *s, struct http_request *req);
/* Requests served, by outcome (2xx, 4xx, 5xx). */
void http_server__counts(const struct http_server *s, uint64_t *ok, uint64_t *client_err,
			 uint64_t *server_err);
/* Stops listening, ends every connection; a window still open is
 * cancelled (the agent must have resumed every request it will). Accepts
 * NULL. */
void http_server__stop(struct http_server *s);

#endif
