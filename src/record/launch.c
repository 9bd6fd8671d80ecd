/* The target of a recording (launch.h): finding the process or launching
 * the command, the binary opened once, the probe plan. No libbpf; never
 * prints (a launched command that cannot exec reports its errno back on a
 * pipe, the session turns it into a notice). */
#include "record/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe/futures_plan.h"
#include "record/notice.h"

/* argv[0] as execvp would find it. */
static int resolve_command(const char *cmd, char *out, size_t len)
{
	if (strchr(cmd, '/')) {
		if (access(cmd, X_OK))
			return -errno;
		return len >= PATH_MAX && realpath(cmd, out) ? 0 : -errno;
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t n = end ? (size_t)(end - path) : strlen(path);
		char cand[PATH_MAX];
		if (n && snprintf(cand, sizeof(cand), "%.*s/%s", (int)n, path, cmd) < (int)sizeof(cand) &&
		    !access(cand, X_OK))
			return len >= PATH_MAX && realpath(cand, out) ? 0 : -errno;
		path += n + (end ? 1 : 0);
	}
	return -ENOENT;
}

static char *read_cmdline(pid_t pid)
{
	char path[64], buf[4096];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return strdup("");
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return strdup("");
	for (ssize_t i = 0; i < n - 1; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	return strdup(buf);
}

static char *join_argv(char *const *argv)
{
	size_t len = 1;
	for (size_t i = 0; argv[i]; i++)
		len += strlen(argv[i]) + 1;
	char *s = calloc(1, len);
	if (!s)
		return NULL;
	for (size_t i = 0; argv[i]; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

int rec_target__find(struct rec_target *t, const struct recorder_opts *o, char *err, size_t errlen)
{
	int ret;

	memset(t, 0, sizeof(*t));
	t->child = -1;
	t->go_fd = -1;
	t->exec_fd = -1;
	t->status = -1;
	t->tgid = o->pid;
	if (o->argv) {
		ret = resolve_command(o->argv[0], t->binary, sizeof(t->binary));
		if (ret) {
			snprintf(err, errlen, "cannot run %s: %s", o->argv[0], strerror(-ret));
			return ret;
		}
		snprintf(t->attach_path, sizeof(t->attach_path), "%s", t->binary);
		t->cmdline = join_argv(o->argv);
	} else {
		char exe[64];
		snprintf(exe, sizeof(exe), "/proc/%d/exe", o->pid);
		if (kill(o->pid, 0) && errno == ESRCH) {
			snprintf(err, errlen, "no process with pid %d: check the pid (ps -e) and that "
				 "the program is still running", o->pid);
			return -ESRCH;
		}
		ssize_t n = readlink(exe, t->binary, sizeof(t->binary) - 1);
		if (n < 0) {
			ret = -errno;
			bool denied = errno == EACCES || errno == EPERM;
			if (errno == ENOENT)
				snprintf(err, errlen, "pid %d has no executable (%s: %s): a kernel "
					 "thread, or a process that is exiting; trace a program's pid",
					 o->pid, exe, strerror(errno));
			else
				snprintf(err, errlen, "cannot read %s: %s%s", exe, strerror(errno),
					 !denied ? "" : geteuid() ? ": run as root (sudo)" :
					 " even as root (a process this namespace may not inspect, or "
					 "a security module refusing): trace a process of your own");
			return ret;
		}
		t->binary[n] = '\0';
		snprintf(t->attach_path, sizeof(t->attach_path), "%s", exe);
		t->cmdline = read_cmdline(o->pid);
	}

	t->img = elf_image__open(t->attach_path);
	if (!t->img) {
		ret = -errno;
		if (errno == ENOEXEC)
			snprintf(err, errlen, "%s is not a 64-bit ELF executable: point asyncscope at "
				 "the compiled program, not a script or wrapper", t->binary);
		else
			snprintf(err, errlen, "cannot read %s: %s", t->binary, strerror(errno));
		return ret;
	}
	if (t->img->debug_refused[0]) {
		snprintf(err, errlen, "%s", t->img->debug_refused);
		return -EBADF;
	}
	char note[600];
	/* said also under quiet: a full-screen caller shows it afterwards */
	if (elf_image__debug_note(t->img, note, sizeof(note)))
		rec_notify(o, REC_NOTICE_INFO, "%s", note);
	if (o->n_usdt) {
		t->notes = usdt_notes__read_fd(elf_image__fd(t->img));
		if (!t->notes) {
			ret = -errno;
			snprintf(err, errlen, "cannot read the USDT notes of %s: %s", t->binary,
				 errno == EBADMSG ? "malformed .note.stapsdt section" : strerror(errno));
			return ret;
		}
	}
	return 0;
}

struct dwarf_types *rec_target__dwarf(struct rec_target *t)
{
	if (!t->dt_tried && t->img && t->img->has_debug_info) {
		t->dt_tried = true;
		t->dt = dwarf_types__open_fd(elf_image__dwarf_fd(t->img));
	}
	return t->dt;
}

int rec_parse_runtime(const struct recorder_opts *o, const struct runtime_profile **profs,
		      char *err, size_t errlen)
{
	char bad[64];
	int n;

	if (!o->runtime)
		return 0;
	n = profile_parse(o->runtime, profs, PLAN_MAX_PROFILES, bad, sizeof(bad));
	if (n < 0) {
		snprintf(err, errlen, "unknown runtime '%s': supported runtimes are: %s "
			 "(several joined by '+')", bad, profile_known_names());
		return -EINVAL;
	}
	return n;
}

/* Without DWARF, one line naming every feature of this recording that is
 * off for want of it, why and the fix; and, with or without it, the task
 * types nothing names (their tasks' name is null). */
static void no_dwarf_notice(const struct rec_target *t, const struct recorder_opts *o,
			    const struct probe_plan *plan)
{
	char why[1024], off[512] = "";
	size_t n = 0;
	bool stack_spawn = false;

	for (size_t i = 0; i < plan->n; i++)
		stack_spawn |= plan->probes[i].role == AS_ROLE_SPAWN && (plan->flags[i] & PLAN_F_STACK);
	if (plan->unnamed_polls && plan->per_role[AS_ROLE_POLL])
		rec_notify(o, REC_NOTICE_WARNING, "%zu of %zu task types have no name (neither "
			   "DWARF, a v0 symbol nor the functions their poll calls name the future): "
			   "their tasks are unnamed (null)%s", plan->unnamed_polls,
			   plan->per_role[AS_ROLE_POLL], t->img->has_debug_info ? "" :
			   "; build with debug = 1 or -C symbol-mangling-version=v0");
	if (!elf_image__no_dwarf_why(t->img, why, sizeof(why)))
		return;
#define OFF(...) (n += (size_t)snprintf(off + n, n < sizeof(off) ? sizeof(off) - n : 0, \
					  "%s", n ? ", " : ""), \
		  n += (size_t)snprintf(off + n, n < sizeof(off) ? sizeof(off) - n : 0, __VA_ARGS__))
	if (o->profile)
		OFF("task ids of CPU samples and off-CPU time (tokio's CONTEXT layout)");
	if (stack_spawn && !o->lite)
		OFF("spawn sites (found by unwinding, file:line from DWARF)");
	if (o->futures)
		OFF("--futures (async fn bodies told from other closures)");
	if (o->offcpu || o->sample_hz)
		OFF("file:line and inlined frames of stacks (function names from symbols)");
	if (plan->per_role[AS_ROLE_POLL])
		OFF("the check of the runtime's layout");
#undef OFF
	if (n)
		rec_notify(o, REC_NOTICE_WARNING, "no DWARF: off are %s%s; %s", off,
			   !o->profile && plan->per_role[AS_ROLE_POLL] ?
			   " (task names come from symbols)" : "", why);
}

int rec_target__plan(struct rec_target *t, const struct recorder_opts *o,
		     const struct runtime_profile *const *profs, size_t n_profs,
		     struct probe_plan **out, struct recorder_result *res, char *err, size_t errlen)
{
	struct probe_plan *plan;
	int ret;

	*out = NULL;
	plan = probe_plan__build_usdt(t->img, profs, n_profs, t->notes, o->usdt, o->n_usdt,
				      err, errlen);
	if (!plan)
		return -ENOENT;
	if (probe_plan__identify(plan, t->img, rec_target__dwarf(t))) {
		probe_plan__free(plan);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (o->lite)   /* polls and busy time only: the traps a poll needs, no others */
		probe_plan__keep_roles(plan, 1u << AS_ROLE_POLL | 1u << AS_ROLE_READY |
						     1u << AS_ROLE_FREE | 1u << AS_ROLE_USDT);
	if (o->futures || o->n_probe_patterns || o->probe_preset_cat) {
		struct futures_opts fo = { .futures = o->futures, .patterns = o->probe_patterns,
					   .n_patterns = o->n_probe_patterns,
					   .preset_cat = o->probe_preset_cat,
					   .dt = rec_target__dwarf(t) };
		struct futures_plan_stats fs;
		ret = futures_plan_add(plan, t->img, &fo, &fs, err, errlen);
		if (ret < 0) {
			probe_plan__free(plan);
			return ret;
		}
		res->future_probes = fs.planned;
		res->future_state_machines = fs.state_machines;
		res->future_with_source = fs.with_source;
		res->future_over_max = fs.over_max;
		res->future_dwarf = fs.dwarf;
		if (!fs.planned && !fs.no_dwarf && !o->quiet)
			rec_notify(o, REC_NOTICE_WARNING, "--futures found no out-of-line async fn or "
				   "Future::poll function of the target's own crates in %s (all inlined?): "
				   "use --probe REGEX to name functions", t->binary);
		if (fs.unwinds && !o->quiet)
			rec_notify(o, REC_NOTICE_WARNING, "a panic that unwinds through a probed future "
				   "aborts %s (the return probe hides the return address from the "
				   "unwinder): trace futures where panics are not expected, or build with "
				   "panic = \"abort\"", t->binary);
		if (fs.unprobeable && !o->quiet)
			rec_notify(o, REC_NOTICE_WARNING, "%zu matched functions start with an "
				   "instruction uprobes cannot take (a lock prefix, ...): not probed",
				   fs.unprobeable);
		if (fs.over_max && !o->quiet)
			rec_notify(o, REC_NOTICE_WARNING, "%zu more functions matched than the %zu "
				   "probed: narrow them with --probe REGEX", fs.over_max, fs.planned);
	}
	no_dwarf_notice(t, o, plan);   /* also under quiet, as the debug note */
	for (size_t i = 0; i < plan->n_profiles && !o->quiet; i++) {
		char line[512];
		if (!plan->profiles[i]->crate)
			continue;
		runtime_id__describe(plan->profiles[i], &plan->ids[i], line, sizeof(line));
		rec_notify(o, REC_NOTICE_INFO, "%s", line);
		for (size_t k = 0; k < plan->ids[i].n_warnings; k++)
			rec_notify(o, REC_NOTICE_WARNING, "%s", plan->ids[i].warnings[k]);
	}
	*out = plan;
	return 0;
}

/* Child: wait for the go byte, then exec; a failed exec writes its errno
 * on exec_fd (closed by a successful one: O_CLOEXEC). */
static void child_exec(int gofd, int exec_fd, char *const *argv, const char *stdio)
{
	char c;
	int e;

	if (read(gofd, &c, 1) != 1)
		_exit(127);   /* the recorder went away before the start */
	close(gofd);
	/* the target never outlives its recorder: killed (even by SIGKILL), the
	 * recorder takes it down with SIGTERM, as a clean stop does */
	pid_t recorder = getppid();
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != recorder)
		_exit(127);
	if (stdio) {
		int fd = open(stdio, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
	}
	/* stopped at the exec, until the recorder has read the maps (a -1
	 * first on exec_fd says so; no tracing when it is refused) */
	if (!ptrace(PTRACE_TRACEME, 0, NULL, NULL)) {
		e = -1;
		if (write(exec_fd, &e, sizeof(e)) != sizeof(e))
			_exit(127);
	}
	execvp(argv[0], argv);
	e = errno;
	if (write(exec_fd, &e, sizeof(e)) != sizeof(e))
		_exit(127);
	_exit(127);
}

int rec_target__spawn(struct rec_target *t, const struct recorder_opts *o, char *err,
		      size_t errlen)
{
	int go[2] = { -1, -1 }, ex[2] = { -1, -1 }, ret;

	if (!o->argv)
		return 0;
	if (pipe2(go, O_CLOEXEC) || pipe2(ex, O_CLOEXEC)) {
		ret = -errno;
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto fail;
	}
	t->child = fork();
	if (t->child < 0) {
		ret = -errno;
		snprintf(err, errlen, "fork: %s", strerror(errno));
		goto fail;
	}
	if (t->child == 0) {
		close(go[1]);
		close(ex[0]);
		child_exec(go[0], ex[1], o->argv, o->child_stdio);
	}
	close(go[0]);
	close(ex[1]);
	t->go_fd = go[1];
	t->exec_fd = ex[0];
	t->tgid = t->child;
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (ex[i] >= 0)
			close(ex[i]);
	}
	t->child = -1;
	return ret;
}

int rec_target__go(struct rec_target *t, char *err, size_t errlen)
{
	int ret;

	if (t->child <= 0)
		return 0;
	if (write(t->go_fd, "g", 1) != 1) {
		ret = -errno;
		snprintf(err, errlen, "cannot start %s: %s", t->binary, strerror(errno));
		return ret;
	}
	close(t->go_fd);
	t->go_fd = -1;
	return 0;
}

/* An attached process that has exited but is not reaped yet (its parent
 * has not waited for it): its threads and memory are gone. */
static bool zombie(pid_t pid)
{
	char path[64], buf[256];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	const char *st = strrchr(buf, ')');   /* "pid (comm) S ...": comm may hold ')' */
	return st && (st[2] == 'Z' || st[2] == 'X');
}

bool rec_target__gone(struct rec_target *t)
{
	if (t->gone)
		return true;
	if (t->child > 0 ? waitpid(t->child, &t->status, WNOHANG) == t->child
			 : ((kill(t->tgid, 0) && errno == ESRCH) || zombie(t->tgid)))
		t->gone = true;
	return t->gone;
}

int rec_target__load_bias(const struct rec_target *t, uint64_t *bias)
{
	char path[64], line[4096];
	struct stat st;
	int ret = -ENOENT;

	/* the binary's mappings by inode: the path may be relative, or a link */
	if (fstat(elf_image__fd(t->img), &st))
		return -errno;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)t->tgid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	while (ret && fgets(line, sizeof(line), f)) {
		unsigned long long start, off, ino;
		if (sscanf(line, "%llx-%*x %*s %llx %*s %llu", &start, &off, &ino) < 3 || off ||
		    ino != (unsigned long long)st.st_ino)
			continue;
		/* the load of file offset 0 (the first PT_LOAD) */
		for (size_t i = 0; i < t->img->n_loads; i++)
			if (t->img->loads[i].offset == 0) {
				*bias = start - (t->img->loads[i].vaddr & ~0xfffull);
				ret = 0;
				break;
			}
	}
	fclose(f);
	return ret;
}

int rec_target__exec_error(struct rec_target *t)
{
	int e = 0;
	bool traced = false;

	if (t->exec_fd < 0)
		return t->exec_errno;
	if (read(t->exec_fd, &e, sizeof(e)) != sizeof(e))
		e = 0;
	if (e == -1) {
		traced = true;
		if (read(t->exec_fd, &e, sizeof(e)) != sizeof(e))
			e = 0;
	}
	close(t->exec_fd);
	t->exec_fd = -1;
	t->exec_errno = e;
	if (traced && !e) {
		/* the SIGTRAP stop of a traced exec */
		int st;
		pid_t p;

		while ((p = waitpid(t->child, &st, 0)) < 0 && errno == EINTR)
			;
		if (p == t->child && WIFSTOPPED(st)) {
			t->held = true;
		} else if (p == t->child) {
			t->gone = true;
			t->status = st;
		}
	}
	return e;
}

void rec_target__resume(struct rec_target *t)
{
	if (!t->held)
		return;
	t->held = false;
	ptrace(PTRACE_DETACH, t->child, NULL, NULL);   /* its SIGTRAP suppressed */
}

void rec_target__stop(struct rec_target *t)
{
	rec_target__resume(t);
	if (t->child <= 0 || t->gone)
		return;
	t->gone = true;
	if (waitpid(t->child, &t->status, WNOHANG) == t->child)
		return;
	t->stopped = true;
	kill(t->child, SIGTERM);
	for (int i = 0; i < 200; i++) {
		if (waitpid(t->child, &t->status, WNOHANG) == t->child)
			return;
		usleep(10000);
	}
	kill(t->child, SIGKILL);
	waitpid(t->child, &t->status, 0);
}

void rec_target__release(struct rec_target *t)
{
	rec_target__resume(t);
	if (t->child > 0 && t->go_fd >= 0) {
		/* set-up failed after fork: the child is waiting for the go byte */
		close(t->go_fd);
		t->go_fd = -1;
		waitpid(t->child, NULL, 0);
	}
	if (t->go_fd >= 0)
		close(t->go_fd);
	if (t->exec_fd >= 0)
		close(t->exec_fd);
	t->go_fd = t->exec_fd = -1;
	t->child = -1;
	dwarf_types__free(t->dt);
	usdt_notes__free(t->notes);
	elf_image__free(t->img);
	free(t->cmdline);
	t->dt = NULL;
	t->notes = NULL;
	t->img = NULL;
	t->cmdline = NULL;
}
