#!/usr/bin/env bash
# The command-line grammar, without root: every command's --help exits 0
# with its usage; a bad option or a missing value exits 2 with the usage on
# stderr; every duration option takes 5ms and refuses a bare 5 with the fix;
# sizes likewise; and README.md's Usage block is the commands' synopses,
# option for option (each option of a command's --help is in its README
# entry, and each option there is in its --help). Ends with
# "N passed, N failed". Usage: tests/unit/test_cli_help.sh [ASYNCSCOPE]
cd "$(dirname "$0")/../.."
exec python3 - "${1:-build/asyncscope}" README.md <<'PY'
import re, subprocess, sys

AS, README = sys.argv[1], sys.argv[2]
passed = failed = 0

def check(what, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {what}" + (f": {detail}" if detail else ""), file=sys.stderr)

def run(*args):
    p = subprocess.run([AS, *args], capture_output=True, text=True, timeout=20,
                       stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout, p.stderr

def norm(s):
    return " ".join(s.split())

# the commands, from the top-level help
rc, top, _ = run("--help")
check("asyncscope --help exits 0", rc == 0)
cmds = re.findall(r"^  ([a-z]+) {2,}\S", top.split("commands:", 1)[-1], re.M)
check("asyncscope --help lists the commands", len(cmds) >= 11, cmds)
check("asyncscope --help names the runtimes", "Tokio, async-std, smol" in top)
# record --help names the runtimes src/probe/profile.c knows
known = re.search(r'profile_known_names\(void\)\s*\{\s*return "([^"]+)"', open("src/probe/profile.c").read())
check("profile.c's runtime names found", known is not None)
for c in ("record", "probes"):
    h = norm(run(c, "--help")[1])
    check(f"{c} --help names the runtimes of profile.c", known and known.group(1) in h, known and known.group(1))
rc, _, err = run()
check("asyncscope alone: usage on stderr, exit 2", rc == 2 and "usage: asyncscope" in err)
# an option before any command: trace's one-step form only for its own
# openers; anything else is an unknown option, not trace's
rc, _, err = run("--bogus")
check("asyncscope --bogus: exit 2, unknown option, the usage",
      rc == 2 and err.startswith("asyncscope: unknown option '--bogus' before any command")
      and "usage: asyncscope COMMAND" in err, err)
rc, _, err = run("-p", "0", "-o", "/tmp/x.html")
check("asyncscope -p PID -o FILE is trace (its --pid check answers)", rc == 2 and "--pid takes a process id" in err, err)

# README's Usage block: one entry per command, its lines until the next
readme = open(README).read()
m = re.search(r"^## Usage\n\n```\n(.*?)```", readme, re.S | re.M)
check("README has a Usage block", m is not None)
block = m.group(1) if m else ""
entries, cur = {}, None
for line in block.splitlines():
    w = line.split()
    if line.startswith("asyncscope ") and len(w) > 1 and w[1] in cmds:
        cur = w[1]
        entries[cur] = line
    elif line.startswith(" ") and cur:
        entries[cur] += "\n" + line
    else:
        cur = None

def opt_tokens(text):
    # -o, --per-task ... but not '--' (the launched command) or '-' (stdout)
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*|-[a-zA-Z])(?![\w-])", text))

for c in cmds:
    rc, out, err = run(c, "--help")
    check(f"{c} --help exits 0", rc == 0, err.strip())
    check(f"{c} --help prints the usage", out.startswith(f"usage: asyncscope {c} "))
    rc2, out2, _ = run(c, "-h")
    check(f"{c} -h is --help", rc2 == 0 and out2 == out)
    synopsis = out.split("\n\n", 1)[0]
    opts = []   # each option of the help: (short or None, long)
    for sh, lo in re.findall(r"^  (?:(-\w), )? *(--[a-z][a-z-]*)", out, re.M):
        opts.append((sh or None, lo))
    check(f"{c} --help lists options", any(lo == "--help" for _, lo in opts))
    # README: the synopsis exactly (spacing aside), every option both ways
    entry = entries.get(c, "")
    check(f"README has a usage entry for {c}", bool(entry))
    check(f"README's {c} entry is its synopsis", norm(synopsis[len("usage: "):]) in norm(entry),
          f"\n  help:   {norm(synopsis)}\n  README: {norm(entry)}")
    toks = opt_tokens(entry)
    for sh, lo in opts:
        if lo == "--help":
            continue
        check(f"README's {c} entry has {lo}", lo in toks or (sh and sh in toks))
    known = {t for o in opts for t in o if t}
    for t in toks:
        check(f"{c} --help has README's {t}", t in known)
    # a bad option and a missing value: usage on stderr, exit 2
    rc, out, err = run(c, "--no-such-option", "x")
    check(f"{c} --no-such-option exits 2", rc == 2)
    check(f"{c} --no-such-option: says so, then the usage",
          err.startswith(f"asyncscope: {c}: unknown option '--no-such-option'\nusage: asyncscope {c} "),
          err[:200])
    check(f"{c}: nothing on stdout after a usage error", out == "")
    help_text = run(c, "--help")[1]
    for lo in re.findall(r"^  (?:-\w, )? *(--[a-z-]+) [A-Z]", help_text, re.M):
        rc, _, err = run(c, lo)
        check(f"{c} {lo} without its value exits 2 with the usage",
              rc == 2 and f"asyncscope: {c}: {lo} needs a value" in err and "usage:" in err, err[:200])
    # every duration option takes 5ms and refuses 5; sizes 64K and 64
    tail = {"record": ["--", "/nonexistent/asyncscope-test"], "trace": ["--", "/nonexistent/asyncscope-test"],
            "top": ["--", "/nonexistent/asyncscope-test"], "dump": ["-p", "999999999"]}.get(c, ["/nonexistent.trace"])
    for lo, kind, good, bare in [(lo, "duration", "5ms", "5") for lo in
                                 re.findall(r"^  (?:-\w, )? *(--[a-z-]+) DURATION", help_text, re.M)] + \
                                [(lo, "size", "64K", "64") for lo in
                                 re.findall(r"^  (?:-\w, )? *(--[a-z-]+) SIZE", help_text, re.M)]:
        if lo == "--interval":
            good = "500ms"   # from 100ms
        if lo == "--flight":
            good = "5s"      # from 1s
        if lo == "--flight-size":
            good = "4M"      # from 1M
        rc, _, err = run(c, lo, good, *tail)
        check(f"{c} {lo} {good} is accepted", f"takes a {kind}" not in err and "needs a value" not in err, err[:200])
        rc, _, err = run(c, lo, bare, *tail)
        check(f"{c} {lo} {bare} is refused with the fix",
              rc == 2 and err.strip() == f"asyncscope: {lo} takes a {kind} such as "
              f"{'5ms' if kind == 'duration' else '64K or 16M'}, not '{bare}'", err[:200])
        for junk in (["nan", "inf", "-1s", "1e30s", "99999999999999999999s"] if kind == "duration"
                     else ["nanK", "-4K", "99999999999999999999G"]):
            rc, _, err = run(c, lo, junk, *tail)
            check(f"{c} {lo} {junk} is refused (exit 2)", rc == 2 and err.startswith(f"asyncscope: {lo} takes"), err[:200])

# every message starts with "asyncscope:"
for args in (["record"], ["report"], ["dump"], ["events"], ["probes"], ["nosuchcommand"],
             ["record", "--sample", "x", "--", "true"], ["report", "--format", "xml", "x"]):
    rc, _, err = run(*args)
    check(f"{' '.join(args)}: exit 2, one line starting with asyncscope:",
          rc == 2 and err.startswith("asyncscope: ") and err.count("\n") == 1, err[:200])

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
