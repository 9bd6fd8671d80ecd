/* `asyncscope profile`: record's probe-free mode (no uprobe at all): CPU
 * samples and off-CPU intervals of the target, each attributed to the
 * Tokio task the thread's CONTEXT names then (recorder_opts.profile;
 * bpf/task_ctx.bpf.h), into a trace that report, blocking, cpu and the
 * exports read. Tasks are named by id from the runtime's task lists, walked
 * in memory as dump does (cli/task_namer.h). The recording itself, its
 * options' parsing and its summary are record's (cli/record_opts.h,
 * record_run()). */
#include <stdio.h>
#include <stdlib.h>

#include "cli/commands.h"
#include "cli/flight.h"
#include "cli/record_opts.h"
#include "cli/steps.h"
#include "cli/task_namer.h"
#include "record/recorder.h"

#define NS_PER_S 1000000000ull

enum { PO_OUTPUT = 'o', PO_SAMPLE = 2000, PO_OFFCPU_MIN, PO_NO_OFFCPU, PO_DWARF };

static const struct cli_opt profile_opts[] = {
	{ "output", 'o', CLI_STRING, PO_OUTPUT, "FILE", "the trace file (default asyncscope.trace); with --flight, the\n"
	  "directory of the snapshots (default .)" },
	{ "sample", 0, CLI_RATE, PO_SAMPLE, NULL,
	  "CPU samples per second per CPU (99 or 99Hz, up to 100000; default\n"
	  "99)", 1, 100000, false },
	{ "offcpu-min", 0, CLI_DURATION, PO_OFFCPU_MIN, NULL,
	  "shortest off-CPU interval of a task kept, up to 60s (default 100us)", 0,
	  60 * NS_PER_S, false },
	{ "no-offcpu", 0, CLI_FLAG, PO_NO_OFFCPU, NULL,
	  "CPU samples only: no off-CPU intervals (no sched_switch program)", 0, 0, false },
	{ "dwarf", 0, CLI_FLAG, PO_DWARF, NULL,
	  "unwind user stacks by their DWARF call frame information (8 KiB of\n"
	  "stack copied per sample or switch), for builds without frame pointers",
	  0, 0, false },
	{ 0 },
};

static const struct cli_opt *const tables[] = { profile_opts, record_target_opts, flight_opts,
						  NULL };

const struct cli_command profile_command = {
	.name = "profile",
	.summary = "Profiles an async Rust program without probes: CPU samples and off-CPU\n"
		   "intervals per Tokio task (read from each thread's CONTEXT), into a trace\n"
		   "file for cpu, blocking, report and export.",
	.operands = RECORD_OPERANDS,
	.tables = tables,
	.notes = "No uprobe is attached: polls, wakes and parks are not recorded (report says\n"
		 "so); tasks are named from the runtime's task lists, read from memory.",
	.stop_at_operand = true,
};

/* profile's arguments, and the flight recorder's */
struct profile_cli {
	struct record_args a;
	struct flight_args f;
	const char *output;          /* -o as given, NULL none */
};

static int on_opt(void *ctx, const struct cli_opt *opt, const struct cli_val *v)
{
	struct profile_cli *c = ctx;
	struct record_args *a = &c->a;

	switch (opt->key) {
	case PO_OUTPUT: c->output = a->o.output = v->str; return 0;
	case PO_SAMPLE: a->o.sample_hz = (uint32_t)v->num; return 0;
	case PO_OFFCPU_MIN: a->o.offcpu_min_ns = v->num ? v->num : 1; return 0;
	case PO_NO_OFFCPU: a->o.offcpu = false; return 0;
	case PO_DWARF: a->o.dwarf = true; return 0;
	default: {
		int ret = flight_args__set(&c->f, opt, v);
		return ret >= 0 ? ret : record_args__set(a, opt, v);
	}
	}
}

int cmd_profile(int argc, char **argv)
{
	struct profile_cli c = { .a = { .o = { .output = "asyncscope.trace", .profile = true,
					       .sample_hz = 99, .offcpu = true } } };
	struct record_args *a = &c.a;
	struct task_namer *nm = task_namer__new();
	int first, ret;

	if (!nm) {
		cli_error("out of memory");
		return 1;
	}
	flight_args__init(&c.f);
	ret = cli_parse(&profile_command, argc, argv, on_opt, &c, &first);
	if (ret < 0 && !(ret = flight_args__finish(&c.f, "profile")) &&
	    !(ret = record_args__finish(a, &profile_command, argc, argv, first))) {
		if (c.f.blocking_ns && !a->o.offcpu) {
			cli_error("--trigger-blocking watches off-CPU intervals: drop --no-offcpu");
			ret = 2;
			goto out;
		}
		task_namer__hook(nm, &a->o);
		ret = c.f.window_ns ? flight_run(&a->o, &c.f, c.output ? c.output : ".", true) :
				      record_run(&a->o);
		size_t walks, failed;
		const char *why;
		task_namer__walks(nm, &walks, &failed, &why);
		if (failed)
			cli_error("warning: %zu of %zu walks of the task lists failed (%s): "
				  "their tasks' ids are not named", failed, walks, why);
	}
out:
	task_namer__free(nm);
	record_args__free(a);
	return ret;
}
