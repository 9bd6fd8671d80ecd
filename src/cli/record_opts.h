/* The options of a recording, shared by record, trace and top (one table
 * each, so the three parse and document them alike), and the recorder_opts
 * they fill. The caller owns struct record_args and frees it with
 * record_args__free(). */
#ifndef AS_CLI_RECORD_OPTS_H
#define AS_CLI_RECORD_OPTS_H

#include "cli/opts.h"
#include "record/recorder.h"

/* -p, --duration, --runtime, --buffer-size: record, trace and top */
extern const struct cli_opt record_target_opts[];
/* what else to record (--usdt, --offcpu, --sample, --futures, ...): record
 * and trace */
extern const struct cli_opt record_event_opts[];
/* The operands of a recording command, and the runtime names. */
#define RECORD_OPERANDS "(-p PID | -- CMD [ARGS...])"

struct record_args {
	struct recorder_opts o;
	const char **usdt, **pats;   /* owned arrays of borrowed strings */
	bool offcpu_given;           /* --offcpu */
	bool no_offcpu;              /* --no-offcpu */
};

/* Applies one option of the tables above to a. Returns 0, 1 (out of
 * memory) or 2 (usage, message printed); other keys are not its own: -1. */
int record_args__set(struct record_args *a, const struct cli_opt *opt, const struct cli_val *v);
/* After parsing: argv[first..) is the command to launch, if any; checks
 * that there is one target and that the options fit together; for a
 * command with record_event_opts, off-CPU intervals on unless --no-offcpu
 * or --lite. Returns 0 or 2 (message printed). */
int record_args__finish(struct record_args *a, const struct cli_command *cmd, int argc,
			char **argv, int first);
void record_args__free(struct record_args *a);

#endif
