/* serve's HTTP server on libmicrohttpd (http.h). */
#include "serve/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "serve/expo.h"

struct http_server {
	struct MHD_Daemon *d;
	struct http_handlers h;
	char address[128];
	/* requests suspended now (a window open), for a clean stop */
	int suspended;
	uint64_t ok, client_err, server_err;
	pthread_mutex_t lock;
};

/* One request's state, from its first call to its completion. */
struct http_request {
	struct http_server *s;
	struct MHD_Connection *conn;
	int64_t window;              /* > 0: open (or done, not taken) */
	bool resumed;
};

static enum MHD_Result reply(struct http_server *s, struct MHD_Connection *conn, unsigned status,
			     const char *type, void *body, size_t len, bool owned)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, owned ?
								MHD_RESPMEM_MUST_FREE :
								MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r) {
		if (owned)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "5");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	pthread_mutex_lock(&s->lock);
	if (status < 400)
		s->ok++;
	else if (status < 500)
		s->client_err++;
	else
		s->server_err++;
	pthread_mutex_unlock(&s->lock);
	return ret;
}

static enum MHD_Result text(struct http_server *s, struct MHD_Connection *conn, unsigned status,
			    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static enum MHD_Result text(struct http_server *s, struct MHD_Connection *conn, unsigned status,
			    const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	return reply(s, conn, status, "text/plain; charset=utf-8", buf, (size_t)n, false);
}

/* seconds: a bare whole number (pprof's convention), 1 to the maximum;
 * absent: the default. Returns the value, or 0 with why. */
static uint64_t parse_seconds(const char *v, const char **why)
{
	uint64_t n = 0;

	if (!v)
		return HTTP_DEFAULT_SECONDS;
	if (!*v) {
		*why = "is empty";
		return 0;
	}
	for (const char *p = v; *p; p++) {
		if (*p < '0' || *p > '9') {
			*why = "is not a whole number of seconds (pprof's convention: seconds=30, no unit)";
			return 0;
		}
		n = n * 10 + (uint64_t)(*p - '0');
		if (n > HTTP_MAX_SECONDS) {
			*why = "is over the most a window may last";
			return 0;
		}
	}
	if (!n) {
		*why = "is 0";
		return 0;
	}
	return n;
}

static enum MHD_Result window_reply(struct http_server *s, struct http_request *q)
{
	char *body = NULL;
	size_t len = 0;
	int64_t id = q->window;

	q->window = 0;
	int e = s->h.window_take(s->h.ctx, id, &body, &len);
	if (e) {
		enum MHD_Result r = text(s, q->conn, e == -ECANCELED ? MHD_HTTP_SERVICE_UNAVAILABLE :
					 MHD_HTTP_INTERNAL_SERVER_ERROR, "asyncscope: %s\n",
					 body ? body : e == -ECANCELED ? "the agent is stopping" :
					 strerror(-e));
		free(body);
		return r;
	}
	return reply(s, q->conn, MHD_HTTP_OK, "application/octet-stream", body, len, true);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct http_server *s = cls;
	struct http_request *q = *con_cls;

	(void)version;
	(void)upload;
	if (q) {
		/* resumed: the window is over */
		if (q->window > 0 && q->resumed)
			return window_reply(s, q);
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;   /* a body is never wanted: dropped */
		return MHD_YES;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return text(s, conn, MHD_HTTP_METHOD_NOT_ALLOWED,
			    "asyncscope: method %s not allowed: GET or HEAD\n", method);
	if (!strcmp(url, "/metrics")) {
		char *body = NULL;
		size_t len = 0;
		int e = s->h.metrics(s->h.ctx, &body, &len);
		if (e)
			return text(s, conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "asyncscope: metrics: %s\n",
				    strerror(-e));
		return reply(s, conn, MHD_HTTP_OK, EXPO_CONTENT_TYPE, body, len, true);
	}
	if (!strcmp(url, "/"))
		return text(s, conn, MHD_HTTP_OK, "asyncscope serve\n"
			    "/metrics                         Prometheus metrics\n"
			    "/debug/pprof/profile?seconds=N   CPU profile by task, gzip'd pprof\n"
			    "/debug/pprof/offcpu?seconds=N    blocking inside tasks (off CPU), gzip'd "
			    "pprof\n");
	enum http_window_kind kind;
	if (!strcmp(url, "/debug/pprof/profile"))
		kind = HTTP_WINDOW_CPU;
	else if (!strcmp(url, "/debug/pprof/offcpu"))
		kind = HTTP_WINDOW_OFFCPU;
	else
		return text(s, conn, MHD_HTTP_NOT_FOUND, "asyncscope: no such path %s: /metrics, "
			    "/debug/pprof/profile, /debug/pprof/offcpu\n", url);
	const char *why = NULL;
	uint64_t secs = parse_seconds(MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND,
								  "seconds"), &why);
	if (!secs)
		return text(s, conn, MHD_HTTP_BAD_REQUEST, "asyncscope: seconds=%s %s (1 to %d)\n",
			    MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "seconds"), why,
			    HTTP_MAX_SECONDS);
	q = calloc(1, sizeof(*q));
	if (!q)
		return text(s, conn, MHD_HTTP_SERVICE_UNAVAILABLE, "asyncscope: out of memory\n");
	q->s = s;
	q->conn = conn;
	int64_t id = s->h.window_open(s->h.ctx, kind, secs, q);
	if (id <= 0) {
		free(q);
		return text(s, conn, MHD_HTTP_SERVICE_UNAVAILABLE, id == -EBUSY ?
			    "asyncscope: too many profiles being taken at once: try again later\n" :
			    "asyncscope: cannot take a profile now: %s\n", strerror((int)-id));
	}
	q->window = id;
	*con_cls = q;
	pthread_mutex_lock(&s->lock);
	s->suspended++;
	pthread_mutex_unlock(&s->lock);
	MHD_suspend_connection(conn);
	return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode code)
{
	struct http_server *s = cls;
	struct http_request *q = *con_cls;

	(void)conn;
	(void)code;
	if (!q)
		return;
	if (q->window > 0)
		s->h.window_cancel(s->h.ctx, q->window);
	free(q);
	*con_cls = NULL;
}

void http_server__resume(struct http_server *s, struct http_request *req)
{
	pthread_mutex_lock(&s->lock);
	req->resumed = true;
	s->suspended--;
	pthread_mutex_unlock(&s->lock);
	MHD_resume_connection(req->conn);
}

/* listen -> a socket address. Returns 0 or -errno with err. */
static int parse_listen(const char *listen, struct sockaddr_storage *sa, socklen_t *len,
			char *err, size_t errlen)
{
	char host[256];
	const char *colon = strrchr(listen, ':'), *port;
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV }, *res = NULL;

	if (!colon || !colon[1]) {
		snprintf(err, errlen, "--listen %s: give ADDR:PORT (127.0.0.1:9947, [::1]:9947, :9947 "
			 "for every address)", listen);
		return -EINVAL;
	}
	port = colon + 1;
	for (const char *p = port; *p; p++)
		if (*p < '0' || *p > '9' || p - port > 5) {
			snprintf(err, errlen, "--listen %s: the port '%s' is not a number from 0 to "
				 "65535", listen, port);
			return -EINVAL;
		}
	if (atoi(port) > 65535) {
		snprintf(err, errlen, "--listen %s: the port '%s' is not a number from 0 to 65535",
			 listen, port);
		return -EINVAL;
	}
	size_t hl = (size_t)(colon - listen);
	if (hl >= sizeof(host)) {
		snprintf(err, errlen, "--listen: the address is too long");
		return -EINVAL;
	}
	memcpy(host, listen, hl);
	host[hl] = '\0';
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = '\0';
		hints.ai_family = AF_INET6;
	}
	int e = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
	if (e || !res) {
		snprintf(err, errlen, "--listen %s: cannot resolve '%s': %s", listen, host,
			 e ? gai_strerror(e) : "no address");
		return -EINVAL;
	}
	/* every address (":PORT"): IPv4's */
	struct addrinfo *ai = res;
	for (struct addrinfo *p = res; !host[0] && p; p = p->ai_next)
		if (p->ai_family == AF_INET) {
			ai = p;
			break;
		}
	memcpy(sa, ai->ai_addr, ai->ai_addrlen);
	*len = ai->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

int http_listen_check(const char *listen, char *err, size_t errlen)
{
	struct sockaddr_storage sa;
	socklen_t len;

	return parse_listen(listen, &sa, &len, err, errlen);
}

int http_server__start(const char *listen, const struct http_handlers *h,
		       struct http_server **out, char *err, size_t errlen)
{
	struct sockaddr_storage sa;
	socklen_t salen;
	struct http_server *s;
	int e;

	*out = NULL;
	if ((e = parse_listen(listen, &sa, &salen, err, errlen)))
		return e;
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->h = *h;
	pthread_mutex_init(&s->lock, NULL);
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
			 (sa.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);
	uint16_t port = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port :
			      ((struct sockaddr_in *)&sa)->sin_port);
	/* the server's thread takes no signal: the agent's main thread does */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	errno = 0;
	s->d = MHD_start_daemon(flags, port, NULL, NULL, on_request, s,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_MAX_CONNECTIONS,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)HTTP_MAX_PER_IP,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_TIMEOUT_S,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_MEMORY_LIMIT,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
				MHD_OPTION_END);
	e = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!s->d) {
		snprintf(err, errlen, "cannot listen on %s: %s", listen,
			 e == EADDRINUSE || !e ? "the address is in use or not this machine's (another "
			 "agent there? --listen ADDR:PORT)" : strerror(e));
		pthread_mutex_destroy(&s->lock);
		free(s);
		return -(e ? e : EADDRINUSE);
	}
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	char host[INET6_ADDRSTRLEN] = "?";
	if (sa.ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&sa)->sin6_addr, host, sizeof(host));
	else
		inet_ntop(AF_INET, &((struct sockaddr_in *)&sa)->sin_addr, host, sizeof(host));
	snprintf(s->address, sizeof(s->address), sa.ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u", host,
		 di && di->port ? di->port : port);
	*out = s;
	return 0;
}

const char *http_server__address(const struct http_server *s)
{
	return s->address;
}

void http_server__counts(const struct http_server *s, uint64_t *ok, uint64_t *client_err,
			 uint64_t *server_err)
{
	pthread_mutex_t *l = (pthread_mutex_t *)&s->lock;

	pthread_mutex_lock(l);
	*ok = s->ok;
	*client_err = s->client_err;
	*server_err = s->server_err;
	pthread_mutex_unlock(l);
}

void http_server__stop(struct http_server *s)
{
	if (!s)
		return;
	MHD_socket ls = MHD_quiesce_daemon(s->d);
	/* the requests the agent resumed answered first (a second at most) */
	for (int i = 0; i < 100; i++) {
		pthread_mutex_lock(&s->lock);
		int n = s->suspended;
		pthread_mutex_unlock(&s->lock);
		if (n <= 0)
			break;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	MHD_stop_daemon(s->d);
	if (ls != MHD_INVALID_SOCKET)
		close(ls);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
