#!/usr/bin/env python3
"""Runner of the declarative integration cases (tests/integ/cases/*.case).

Each case is one file: a few header lines (NAME, TIMEOUT), then steps
(commands) and assertions on what they did, one per line. The format is
described in tests/integ/cases/README.md. The runner prints one line per
case, `PASS NAME (N s)` or `FAIL NAME` after the failed assertions, and ends
with `N passed, N failed` (the line scripts/run-tests.sh tallies).

  tests/integ/run.sh [-v|--list|--count] [--retries N] [NAME|GLOB|FILE.case ...]

--retries N (or INTEG_RETRIES=N; `make test` gives 1) runs a failed case
again, up to N more times: its failure is printed in full, then `RETRY
NAME`, and a case that passes on a later try is `PASS NAME (... on try K of
K: flaky)` and named again in a closing `flaky: ...` line, so a flake on the
shared machine does not fail the suite but never goes unseen. A case that
fails every try fails.

Every case runs in a fresh temporary directory ($T) with the repository root
as working directory; every process a case starts is in a process group the
runner kills at the end of the case, and a case that runs past its TIMEOUT
fails (its processes killed), so no case can hang the suite. Depends only on
the Python standard library; knows nothing of asyncscope but the variables it
exports (AS, APPS, APPS153: the same Tokio programs built on tokio 1.53.1, and
APPS153U: programs built on it with tokio_unstable and the tracing feature).
"""
import fcntl, fnmatch, os, re, shlex, signal, subprocess, sys, tempfile, time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CASES = os.path.join(ROOT, "tests", "integ", "cases")
CHECKS = os.path.join(ROOT, "tests", "integ", "checks")

# Commands (not assertions): they set the "last command" (status, stdout, stderr).
COMMANDS = {"RUN", "BG", "WAIT", "LET", "CLEANUP"}
# Assertions: each line is one assertion (ERROR is four, see ASSERTS_PER).
ASSERTS = {"EXIT", "MATCH", "NOMATCH", "LINE", "COUNT", "JSON", "SH", "CHECKER", "SAME",
           "UNTIL", "ERROR"}
ASSERTS_PER = {"ERROR": 4}
HEADERS = {"NAME", "TIMEOUT"}


class CaseError(Exception):
    """a malformed case file: FILE:LINE: message"""


class Timeout(Exception):
    pass


def parse(path, depth=0):
    """the (FILE:LINE, keyword, argument) lines of a case, INCLUDEs expanded;
    an INCLUDE's NAME=VALUE pairs become SET lines before its body. Leading
    and trailing blanks of a line are not part of it (a regex ending in a
    space writes it `[ ]`)."""
    out = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for no, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        kw, rest = (re.split(r"\s+", line, maxsplit=1) + [""])[:2]
        where = "%s:%d" % (os.path.relpath(path, ROOT), no)
        if kw == "INCLUDE":
            if depth > 4:
                raise CaseError("%s: INCLUDE nested too deep" % where)
            words = shlex.split(rest)
            if not words:
                raise CaseError("%s: INCLUDE needs a file" % where)
            for w in words[1:]:
                name, eq, value = w.partition("=")
                if not eq or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                    raise CaseError("%s: INCLUDE takes NAME=VALUE pairs, not %r" % (where, w))
                out.append((where, "SET", "%s=%s" % (name, value)))
            out.extend(parse(os.path.join(os.path.dirname(path), words[0]), depth=depth + 1))
            continue
        if kw not in COMMANDS | ASSERTS | HEADERS:
            raise CaseError("%s: unknown keyword %r" % (where, kw))
        if not rest:
            raise CaseError("%s: %s needs an argument" % (where, kw))
        out.append((where, kw, rest))
    return out


def load(path):
    lines = parse(path)
    head = {kw: rest for _, kw, rest in lines if kw in HEADERS}
    name = os.path.basename(path)[:-len(".case")]
    if head.get("NAME") != name:
        raise CaseError("%s: NAME must be the file's name (%s)" % (os.path.relpath(path, ROOT), name))
    if not re.fullmatch(r"\d+", head.get("TIMEOUT", "")):
        raise CaseError("%s: TIMEOUT SECONDS is required" % os.path.relpath(path, ROOT))
    steps = [l for l in lines if l[1] not in HEADERS]
    return {"name": name, "path": path, "timeout": int(head["TIMEOUT"]), "steps": steps}


def count_asserts(case):
    return sum(ASSERTS_PER.get(kw, 1) for _, kw, _ in case["steps"] if kw in ASSERTS)


def expand(text, env):
    """${NAME} from the case's variables (assertion arguments; $NAME alone is
    left as is there, as `$` ends a regex)"""
    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", lambda m: env.get(m.group(1), ""), text)


def expand_path(text, env):
    """$NAME and ${NAME} from the case's variables (paths, SET values)"""
    return re.sub(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))",
                  lambda m: env.get(m.group(1) or m.group(2), ""), text)


class Run:
    """one case being run"""

    def __init__(self, case, env, verbose):
        self.case, self.verbose = case, verbose
        self.deadline = time.monotonic() + case["timeout"]
        self.tmp = tempfile.mkdtemp(prefix="asyncscope-%s." % case["name"])
        self.env = dict(env, T=self.tmp, CASE=case["name"])
        self.pgids, self.bg = [], {}
        self.failed, self.asserts, self.step = 0, 0, 0
        self.status, self.out, self.err = None, None, None

    def left(self):
        t = self.deadline - time.monotonic()
        if t <= 0:
            raise Timeout()
        return t

    def note(self, where, line, msg):
        print("    %s: %s" % (where, line))
        for m in msg.rstrip("\n").split("\n") if msg else []:
            print("      " + m)

    def fail(self, where, kw, rest, msg=""):
        self.failed += 1
        self.note(where, "%s %s" % (kw, rest), msg)

    def spawn(self, cmd, out, err):
        with open(out, "wb") as o, open(err, "wb") as e:
            p = subprocess.Popen(["bash", "-c", cmd], cwd=ROOT, env=self.env, stdin=subprocess.DEVNULL,
                                 stdout=o, stderr=e, start_new_session=True)
        self.pgids.append(p.pid)
        return p

    def wait(self, p):
        try:
            return p.wait(timeout=self.left())
        except subprocess.TimeoutExpired:
            raise Timeout()

    def command(self, cmd, last=True):
        """runs cmd to its end; with last, it becomes the last command (its
        status, OUT and ERR are what EXIT, stdout and stderr look at)"""
        self.step += 1
        out = os.path.join(self.tmp, "step%d.out" % self.step)
        err = os.path.join(self.tmp, "step%d.err" % self.step)
        status = self.wait(self.spawn(cmd, out, err))
        if last:
            self.status, self.out, self.err = status, out, err
            self.env["OUT"], self.env["ERR"] = out, err
        return status, out, err

    def source(self, src):
        if src == "stdout":
            return self.out
        if src == "stderr":
            return self.err
        return os.path.join(ROOT, expand_path(src, self.env))

    @staticmethod
    def read(path):
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return None

    def show(self, path, n=15):
        text = self.read(path)
        if text is None:
            return "(%s: no such file)" % os.path.relpath(path, ROOT)
        lines = text.split("\n")
        shown = "\n".join("| " + l for l in lines[:n])
        return shown + ("\n| ... (%d lines)" % len(lines) if len(lines) > n else "")

    def last_output(self):
        parts = []
        for p in (self.out, self.err):
            if p and os.path.getsize(p):
                parts.append(self.show(p, 10))
        return "\n".join(parts)

    def run(self):
        try:
            for where, kw, rest in self.case["steps"]:
                if kw == "CLEANUP":
                    continue
                self.do(where, kw, rest)
        except Timeout:
            self.failed += 1
            print("    timed out after %d s (TIMEOUT %d)" % (self.case["timeout"], self.case["timeout"]))
        finally:
            self.cleanup()
        return self.failed == 0

    def cleanup(self):
        for where, kw, rest in self.case["steps"]:
            if kw == "CLEANUP":
                try:
                    p = self.spawn(rest, os.devnull, os.devnull)
                    p.wait(timeout=10)
                except (OSError, subprocess.TimeoutExpired):
                    pass
        for pg in self.pgids:
            try:
                os.killpg(pg, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        for p, _, _ in self.bg.values():
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        subprocess.run(["rm", "-rf", self.tmp])

    def do(self, where, kw, rest):
        env = self.env
        if kw == "SET":
            name, _, value = rest.partition("=")
            env[name] = expand_path(value, env)
        elif kw == "RUN":
            self.command(rest)
        elif kw == "LET":
            name, _, cmd = rest.partition(" ")
            self.command(cmd)
            env[name] = (self.read(self.out) or "").strip()
        elif kw == "BG":
            name, _, cmd = rest.partition(" ")
            # exec: $name is the program's own pid (for -p PID), not a shell's
            out, err = os.path.join(self.tmp, name + ".out"), os.path.join(self.tmp, name + ".err")
            p = self.spawn("exec " + cmd, out, err)
            self.bg[name] = (p, out, err)
            env[name] = str(p.pid)
        elif kw == "WAIT":
            if rest not in self.bg:
                raise CaseError("%s: WAIT for an unknown BG name %r" % (where, rest))
            p, out, err = self.bg[rest]
            self.status = self.wait(p)
            # the assertions after a WAIT read (and a failure shows) what
            # the process wrote, as after a RUN
            self.out, self.err = out, err
        else:
            self.asserts += ASSERTS_PER.get(kw, 1)
            msg = self.check(kw, rest)
            if msg is not None:
                self.fail(where, kw, rest, msg)
            elif self.verbose:
                print("    ok %s: %s %s" % (where, kw, rest))

    def check(self, kw, rest):
        """None if the assertion holds, else what to print"""
        env = self.env
        if kw == "EXIT":
            s = self.status
            want = rest.split()[0]
            ok = (s != 0 if want == "!0" else s < int(want[1:]) if want.startswith("<")
                  else s == int(want))
            return None if ok else "exit status %s\n%s" % (s, self.last_output())
        if kw == "ERROR":
            text = self.read(self.err) or ""
            pat = expand(rest, env)
            bad = []
            if self.status == 0:
                bad.append("exit status 0, not an error")
            if self.status >= 128 or self.status < 0:
                bad.append("exit status %d: a crash" % self.status)
            if text.count("\n") != 1:
                bad.append("%d lines on stderr, not one" % text.count("\n"))
            if not re.search(pat, text):
                bad.append("stderr does not say %r" % pat)
            self.failed += len(bad) - (1 if bad else 0)  # each part is one assertion
            return None if not bad else "\n".join(bad) + "\n" + self.show(self.err, 5)
        if kw in ("MATCH", "NOMATCH", "LINE", "COUNT"):
            src, _, arg = rest.partition(" ")
            path = self.source(src)
            text = self.read(path)
            if text is None:
                return "%s: no such file" % os.path.relpath(path, ROOT)
            lines = text.split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            if kw == "COUNT":
                op, _, pat = arg.partition(" ")
                m = re.fullmatch(r"(==|>=|<=|>|<)(\d+)", op)
                if not m:
                    return "COUNT wants OPN (==3, >=14) then a regex"
                rx = re.compile(expand(pat, env))
                n = sum(len(rx.findall(l)) for l in lines)
                want = int(m.group(2))
                ok = {"==": n == want, ">=": n >= want, "<=": n <= want, ">": n > want, "<": n < want}[m.group(1)]
                return None if ok else "%d matches\n%s" % (n, self.show(path))
            pat = expand(arg, env)
            if kw == "LINE":
                return None if pat in lines else "no line is exactly that\n" + self.show(path)
            rx = re.compile(pat)
            hit = [l for l in lines if rx.search(l)]
            if kw == "MATCH":
                return None if hit else "no line matches\n" + self.show(path)
            return None if not hit else "matching lines:\n" + "\n".join("| " + l for l in hit[:5])
        if kw == "JSON":
            src, _, expr = rest.partition(" ")
            path = self.source(src)
            try:
                p = subprocess.run([sys.executable, os.path.join(CHECKS, "json_check.py"), path, expand(expr, env)],
                                   capture_output=True, text=True, timeout=self.left())
            except subprocess.TimeoutExpired:
                raise Timeout()
            return None if p.returncode == 0 else p.stderr + p.stdout
        if kw in ("SH", "CHECKER", "UNTIL"):
            cmd = rest
            limit = None
            if kw == "UNTIL":
                secs, _, cmd = rest.partition(" ")
                limit = time.monotonic() + float(secs)
            if kw == "CHECKER":
                prog = cmd.split()[0]
                runner = "python3 " if prog.endswith(".py") else ""
                cmd = runner + shlex.quote(os.path.join(CHECKS, prog)) + cmd[len(prog):]
            while True:
                s, out, err = self.command(cmd, last=False)
                if s == 0:
                    return None
                if limit is None or time.monotonic() >= limit:
                    shown = [self.show(p, 25) for p in (out, err) if os.path.getsize(p)]
                    return "\n".join(["exit status %s" % s] + shown)
                time.sleep(0.1)
        if kw == "SAME":
            a, b = (os.path.join(ROOT, expand_path(x, env)) for x in shlex.split(rest))
            x, y = self.read(a), self.read(b)
            return None if x is not None and x == y else "%s and %s differ" % (a, b)
        raise CaseError("unknown assertion %s" % kw)


def select(args):
    every = sorted(f[:-len(".case")] for f in os.listdir(CASES) if f.endswith(".case"))
    if not args:
        return every
    chosen = []
    for a in args:
        if (a.endswith(".case") and os.path.isfile(a)
                and os.path.dirname(os.path.abspath(a)) != os.path.abspath(CASES)):
            # a case kept outside cases/ (tests/integ/profiles: make test-profiles)
            n = os.path.abspath(a)[:-len(".case")]
            if n not in chosen:
                chosen.append(n)
            continue
        if a.endswith(".case"):
            a = os.path.basename(a)[:-len(".case")]
        a = a[len("test_"):] if a.startswith("test_") and a[5:] in every else a
        hit = [n for n in every if fnmatch.fnmatchcase(n, a)]
        if not hit:
            print("no case matches %r" % a)
            chosen.append(None)
        chosen.extend(n for n in hit if n not in chosen)
    return chosen


def main(argv):
    mode = None
    retries = os.environ.get("INTEG_RETRIES", "0")
    while argv and argv[0] in ("--list", "--count", "-v", "--retries"):
        if argv[0] == "--retries":
            if len(argv) < 2:
                print("--retries needs a number: --retries 1")
                return 2
            retries, argv = argv[1], argv[2:]
        else:
            mode, argv = argv[0], argv[1:]
    if not retries.isdigit():
        print("retries %r is not a number: --retries 1" % retries)
        return 2
    retries = int(retries)
    names = select(argv or os.environ.get("INTEG_TESTS", "").split())
    unknown = names.count(None)
    names = [n for n in names if n]
    try:
        cases = [load(os.path.join(CASES, n + ".case")) for n in names]
    except (CaseError, OSError) as e:
        print(e)
        print("0 passed, 1 failed")
        return 1
    if mode == "--list":
        for c in cases:
            print(c["name"])
        return 0
    if mode == "--count":
        total = 0
        for c in cases:
            n = count_asserts(c)
            total += n
            print("%4d %s" % (n, c["name"]))
        print("%4d assertions in %d cases" % (total, len(cases)))
        return 0
    if os.geteuid() != 0:
        print("integration tests need root (BPF): skipped")
        print("0 passed, 1 failed")
        return 1
    env = dict(os.environ)
    env.setdefault("AS", "build/asyncscope-san")
    env.setdefault("APPS", "tests/apps/target/release")
    env.setdefault("APPS153", "tests/apps-tokio153/target/release")   # the same programs on tokio 1.53.1
    env.setdefault("APPS153U", "tests/apps-tokio153-unstable/target/release")   # 1.53.1, tokio_unstable + tracing
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
    env["PATH"] = CHECKS + os.pathsep + env.get("PATH", "")
    env["RUNNER_PID"] = str(os.getpid())
    passed, failed = 0, unknown
    # one case at a time on this machine: cases count BPF links and programs
    # (bpftool) and time the target, so another runner's case (a second
    # checkout, a benchmark taking the same lock) must not run beside one
    lock = open(env.get("ASYNCSCOPE_INTEG_LOCK", "/tmp/asyncscope-integ.lock"), "a")
    flaky = []
    for c in cases:
        start = time.monotonic()
        for attempt in range(1 + retries):
            if attempt:
                print("RETRY %s (try %d of %d)" % (c["name"], attempt + 1, 1 + retries))
            fcntl.flock(lock, fcntl.LOCK_EX)
            r = Run(c, env, mode == "-v")
            try:
                ok = r.run()
            except CaseError as e:
                print("    " + str(e))
                ok = False
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
            if mode == "-v":
                print("    %d assertions run, %d failed" % (r.asserts, r.failed))
            if ok:
                break
        if ok and attempt:
            passed += 1
            flaky.append(c["name"])
            print("PASS %s (%.1f s, on try %d of %d: flaky)" % (c["name"], time.monotonic() - start,
                                                          attempt + 1, 1 + retries))
        elif ok:
            passed += 1
            print("PASS %s (%.1f s)" % (c["name"], time.monotonic() - start))
        else:
            failed += 1
            print("FAIL %s" % c["name"])
        sys.stdout.flush()
    if flaky:
        print("flaky: %d case%s passed only on a later try: %s" % (
            len(flaky), "" if len(flaky) == 1 else "s", " ".join(flaky)))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.stdout.reconfigure(line_buffering=True)
    sys.exit(main(sys.argv[1:]))
