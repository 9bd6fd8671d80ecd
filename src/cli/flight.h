/* The flight recorder's command side (record --flight, profile --flight):
 * its options, the triggers (SIGUSR1, `asyncscope snapshot PID` on the
 * recorder's socket, a long blocking interval, a long time on CPU), the
 * cool-down and the limit, and the snapshots' files. The ring is
 * record/flight.h's; the recording is the recorder's (recorder_run()). */
#ifndef AS_CLI_FLIGHT_H
#define AS_CLI_FLIGHT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include "cli/opts.h"
#include "record/recorder.h"

/* --flight, --flight-size, --trigger-blocking, --trigger-busy, --cooldown,
 * --max-snapshots, --after: record and profile */
extern const struct cli_opt flight_opts[];

struct flight_args {
	uint64_t window_ns;          /* --flight: 0 = not a flight recorder */
	uint64_t size;               /* --flight-size */
	uint64_t blocking_ns, busy_ns; /* --trigger-blocking, --trigger-busy, 0 none */
	uint64_t cooldown_ns, after_ns;
	uint64_t max_snapshots;
	const char *other_opt;       /* the first option given that needs --flight */
};

/* Defaults: 64M, a cool-down of 30 s, 10 snapshots, 2 s after. */
void flight_args__init(struct flight_args *f);
/* Applies one of flight_opts; -1 when the key is not one of them. */
int flight_args__set(struct flight_args *f, const struct cli_opt *opt, const struct cli_val *v);
/* After parsing: the options fit together (a trigger option without
 * --flight, a size below the ring's least). Returns 0 or 2 (one line
 * printed). */
int flight_args__finish(struct flight_args *f, const char *cmd);

/* Runs the flight recorder by o (its output must be NULL; borrowed) into
 * directory dir until Ctrl-C/SIGTERM, the target's exit, --duration or
 * the last of --max-snapshots. Returns the exit code (0, or 1 after one
 * line). */
int flight_run(const struct recorder_opts *o, const struct flight_args *f, const char *dir,
	       bool profile);

/* The recorder's socket for target pid: the abstract unix socket
 * "@asyncscope-flight-PID" (no file to clean up; in the network namespace
 * of the recorder). */
void flight_socket_addr(pid_t pid, struct sockaddr_un *sa, socklen_t *len);

#endif
