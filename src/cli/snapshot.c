/* `asyncscope snapshot PID`: asks the flight recorder of target PID
 * (record/profile --flight) for a snapshot over its socket
 * (flight_socket_addr(): @asyncscope-flight-PID), waits until the
 * recorder has written it (its --after later) and says where. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/flight.h"
#include "util/clock.h"
#include "util/json.h"

#define NS_PER_S 1000000000ull

static const struct cli_opt snapshot_opts[] = {
	{ "format", 'f', CLI_CHOICE, 'f', "text|json", "the answer as a line of text (default) or JSON" },
	{ "output", 'o', CLI_STRING, 'o', "FILE", "write the answer to FILE (default -: stdout)" },
	{ "timeout", 't', CLI_DURATION, 't', NULL,
	  "wait at most DURATION for the snapshot to be written (default 2m)", 1000000,
	  3600 * NS_PER_S, false },
	{ 0 },
};

static const struct cli_opt *const tables[] = { snapshot_opts, NULL };

const struct cli_command snapshot_command = {
	.name = "snapshot",
	.summary = "Asks the flight recorder of target PID (record or profile --flight ... -p PID)\n"
		   "for a snapshot now, and prints the trace file's path once it is written.",
	.operands = "PID",
	.tables = tables,
};

struct snapshot_args {
	const char *format, *output;
	uint64_t timeout_ns;
};

static int on_opt(void *ctx, const struct cli_opt *opt, const struct cli_val *v)
{
	struct snapshot_args *a = ctx;

	switch (opt->key) {
	case 'f': a->format = v->str; break;
	case 'o': a->output = v->str; break;
	case 't': a->timeout_ns = v->num; break;
	}
	return 0;
}

/* Reads the recorder's one-line answer into buf until its newline, the
 * deadline or the end. Returns 0 or -errno (-ETIMEDOUT). */
static int read_answer(int fd, char *buf, size_t n, uint64_t deadline)
{
	size_t len = 0;

	buf[0] = '\0';
	while (len + 1 < n && !memchr(buf, '\n', len)) {
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (now >= deadline)
			return -ETIMEDOUT;
		int r = poll(&p, 1, (int)((deadline - now) / 1000000 + 1));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			continue;
		ssize_t k = read(fd, buf + len, n - 1 - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			break;
		len += (size_t)k;
		buf[len] = '\0';
	}
	buf[strcspn(buf, "\n")] = '\0';
	return len ? 0 : -ECONNRESET;
}

int cmd_snapshot(int argc, char **argv)
{
	struct snapshot_args a = { .format = "text", .output = "-", .timeout_ns = 120 * NS_PER_S };
	struct sockaddr_un sa;
	socklen_t len;
	char ans[4200], *end;
	int first, fd = -1, ret = cli_parse(&snapshot_command, argc, argv, on_opt, &a, &first);
	FILE *out = NULL;

	if (ret >= 0)
		return ret;
	if (first >= argc)
		return cli_usage_error(&snapshot_command, "snapshot needs the PID of the target a "
				       "flight recorder records");
	if (first + 1 < argc)
		return cli_usage_error(&snapshot_command, "snapshot takes one PID, not '%s' too",
				       argv[first + 1]);
	errno = 0;
	long pid = strtol(argv[first], &end, 10);
	if (errno || *end || pid <= 0 || pid > 4194304) {
		cli_error("snapshot takes the target's process id (a number), not '%s'", argv[first]);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	flight_socket_addr((pid_t)pid, &sa, &len);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, len)) {
		if (kill((pid_t)pid, 0) && errno == ESRCH)
			cli_error("no process %ld: give the PID of the program a flight recorder "
				  "records (not the recorder's: send SIGUSR1 to that)", pid);
		else
			cli_error("no flight recorder records pid %ld (start one with asyncscope profile "
				  "--flight 30s -p %ld, or record --flight ...)", pid, pid);
		ret = 1;
		goto out;
	}
	if (write(fd, "snapshot\n", 9) != 9) {
		cli_error("cannot ask the flight recorder of pid %ld: %s", pid, strerror(errno));
		ret = 1;
		goto out;
	}
	int err = read_answer(fd, ans, sizeof(ans), clock_ns(CLOCK_MONOTONIC) + a.timeout_ns);
	if (err) {
		cli_error("no answer from the flight recorder of pid %ld: %s", pid,
			  err == -ETIMEDOUT ? "timed out (--timeout)" : strerror(-err));
		ret = 1;
		goto out;
	}
	/* "written PATH EVENTS SPAN_NS", "refused WHY", "failed PATH: WHY" */
	char path[4096];
	uint64_t events = 0, span = 0;
	if (strncmp(ans, "written ", 8) || sscanf(ans + 8, "%4095s %" SCNu64 " %" SCNu64, path,
						  &events, &span) != 3) {
		cli_error("the flight recorder of pid %ld did not write a snapshot: %s", pid,
			  !strncmp(ans, "refused ", 8) ? ans + 8 : ans);
		ret = 1;
		goto out;
	}
	out = cli_open_output(a.output);
	if (!out) {
		ret = 1;
		goto out;
	}
	if (!strcmp(a.format, "json")) {
		struct json_writer *w = json_writer__new(out, false);
		if (w) {
			json_writer__begin_object(w);
			json_writer__kv_string(w, "path", path);
			json_writer__kv_u64(w, "events", events);
			json_writer__kv_u64(w, "span_ns", span);
			json_writer__kv_u64(w, "pid", (uint64_t)pid);
			json_writer__end_object(w);
			json_writer__free(w);
		}
		fputc('\n', out);
	} else {
		fprintf(out, "%s %" PRIu64 " events, span %.2f s\n", path, events, (double)span / 1e9);
	}
	err = cli_close_output(out);
	out = NULL;
	if (err) {
		cli_error("cannot write the answer to %s: %s", a.output, cli_write_error(err));
		ret = 1;
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	return ret;
}
