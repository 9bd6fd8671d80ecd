"""dump_zoo_check.py JSON SRC PROGRAM [WORD...]: the exact truth of
`asyncscope dump --format json` of tests/apps dump_zoo (tokio: words
multi|current, load, blocking, two, local) or exec_zoo (asyncstd|smol,
load): every live task found (by name, exactly as many as the program
spawned, none more), in the task list and found the way it must be (a
runtime through a thread's thread-local CONTEXT, a LocalSet through the
block_on future that owns it, async-executor's executors through their
statics or a thread-local), every frame's future and the line of its
`// dump: TAG` marker in SRC (the user's line for an await macro), the
awaited leaf, the macro or combinator of several futures with each
branch's state and chain, the combinators walked through, the timer's
deadline exactly when the task waits on one, JoinSet children under their
parent, and each block_on future's chain. Under load (word load) the
tasks that run may be caught running ("running, not sampled") or between
polls (one of their known chains), never with another chain: a torn chain
fails. Prints each failure; exit 1 when any."""
import json, re, sys

r = json.load(open(sys.argv[1]))
SRCPATH = sys.argv[2]
PROG = sys.argv[3]
words = set(sys.argv[4:])
SRC = "src/bin/%s.rs" % PROG
PFX = PROG + "::"
marks = {}
for n, l in enumerate(open(SRCPATH), 1):
    m = re.search(r"// dump: (\w+)$", l.rstrip())
    if m:
        marks[m.group(1)] = n
fails = []


def expect(cond, what):
    if not cond:
        fails.append(what)
    return bool(cond)


SLEEP = r"^tokio::time::sleep::Sleep$"
PENDING = r"^core::future::pending::Pending<\(\)>$"
ASYNC_IO_TIMER = r"^async_io::Timer$"
ASTD_PENDING = r"^async_std::future::pending::Pending<"


def F(spec):
    """A frame: "fn" (its marker is fn), "fn@tag", or "~" (one or more
    frames of a library: their file is not SRC)."""
    if spec == "~":
        return ("~",)
    name, _, tag = spec.partition("@")
    return (PFX + name, tag or name.split("<")[0])


def chain(frames, leaf=None, macro=None, branches=None, via=None, root_via=None):
    return {"frames": [F(f) for f in frames], "leaf": leaf, "macro": macro,
            "branches": branches, "via": via or {}, "root_via": root_via}


def B(state, *args, **kw):
    return (state, chain(*args, **kw) if args or kw else None)


def match_frames(got, want, where):
    i = 0
    for k, w in enumerate(want):
        if w == ("~",):
            j = i
            while j < len(got) and not (got[j]["file"] or "").endswith(SRC):
                j += 1
            if not expect(j > i, "%s: library frames at %d: %s" % (where, i, names(got))):
                return False
            i = j
            continue
        if not expect(i < len(got), "%s: frame %s missing: %s" % (where, w[0], names(got))):
            return False
        f = got[i]
        ok = f["future"] == w[0] and (f["file"] or "").endswith(SRC) and f["line"] == marks.get(w[1])
        if not expect(ok, "%s: frame %d is %s at %s:%s, not %s at line %s of %s" % (
                where, i, f["future"], f["file"], f["line"], w[0], marks.get(w[1]), SRC)):
            return False
        i += 1
    return expect(i == len(got), "%s: %d frames more than %d: %s" % (where, len(got) - i, i, names(got)))


def names(frames):
    return ["%s:%s" % (f["future"], f["line"]) for f in frames]


def match_chain(got, want, where):
    ok = match_frames(got["frames"], want["frames"], where)
    if want["leaf"] is not None:
        ok &= expect(re.search(want["leaf"], got.get("leaf") or ""), "%s: leaf %r, not /%s/" % (
            where, got.get("leaf"), want["leaf"]))
    ok &= expect(got.get("macro") == want["macro"], "%s: macro %r, not %r" % (
        where, got.get("macro"), want["macro"]))
    for k, rx in want["via"].items():
        v = got["frames"][k]["via"] if k < len(got["frames"]) else None
        ok &= expect(re.search(rx, v or ""), "%s: frame %d through %r, not /%s/" % (where, k, v, rx))
    if want["root_via"] is not None:
        ok &= expect(re.search(want["root_via"], got.get("via") or ""), "%s: root through %r" % (
            where, got.get("via")))
    if want["branches"] is not None:
        gb = got.get("branches") or []
        if not expect(len(gb) == len(want["branches"]), "%s: %d branches, not %d" % (
                where, len(gb), len(want["branches"]))):
            return False
        for k, (b, (state, sub)) in enumerate(zip(gb, want["branches"])):
            ok &= expect(b["state"] == state, "%s: branch %d %s, not %s" % (where, k, b["state"], state))
            if sub:
                ok &= match_chain(b, sub, "%s branch %d" % (where, k))
            elif state != "pending":
                ok &= expect(not b["frames"], "%s: branch %d (%s) has frames" % (where, k, state))
    return ok


# --- the truth ---------------------------------------------------------
HOUR = B("pending", ["hour"], SLEEP)
NEVER = B("pending", ["never"], PENDING)
TRUTH = {}     # name -> (count, chain, timer, extra check)
if PROG == "dump_zoo":
    T = lambda name, n, c, timer=False: TRUTH.__setitem__(PFX + name, (n, c, timer))
    T("nest_a", 1, chain(["nest_a", "nest_b<u32>@nest_b", "nest_c", "hour"], SLEEP), True)
    T("t_select", 1, chain(["t_select"], macro="tokio::select!", branches=[
        B("pending", ["~"], r"::poll_fn::PollFn<tokio::sync::mpsc::bounded::.*recv"), HOUR]), True)
    T("t_select_disabled", 1, chain(["t_select_disabled"], macro="tokio::select!",
                                    branches=[B("disabled"), NEVER]))
    T("t_join3", 1, chain(["t_join3"], macro="tokio::join!", branches=[B("done"), HOUR, NEVER]), True)
    T("t_try_join", 1, chain(["t_try_join"], macro="tokio::try_join!", branches=[
        B("pending", ["ok<dump_zoo::hour>@ok", "hour"], SLEEP),
        B("pending", ["ok<dump_zoo::never>@ok", "never"], PENDING)]), True)
    T("f_join", 1, chain(["f_join"], macro="futures::join!", branches=[HOUR, NEVER]), True)
    T("f_select", 1, chain(["f_select"], macro="futures::select!", branches=[
        B("pending", [], r"^futures_util::stream::stream::next::Next<futures_channel::mpsc::Receiver<u32>>$"),
        HOUR]), True)
    T("f_select_biased", 1, chain(["f_select_biased"], macro="futures::select!",
                                  branches=[NEVER, HOUR]), True)
    T("f_fn_select", 1, chain(["f_fn_select"], macro="futures_util::future::select::Select",
                              branches=[HOUR, NEVER]), True)
    T("f_fn_select_pinned", 1, chain(["f_fn_select_pinned"], macro="futures_util::future::select::Select",
                                     branches=[HOUR, NEVER]), True)
    T("f_join_all", 1, chain(["f_join_all"], macro="futures_util::future::join_all::JoinAll",
                             branches=[HOUR, HOUR, HOUR]), True)
    T("b_pin_box", 1, chain(["b_pin_box", "nest_c", "hour"], SLEEP), True)
    T("b_box_unpin", 1, chain(["b_box_unpin", "never"], PENDING))
    TRUTH["core::pin::Pin<alloc::boxed::Box<(dyn core::future::future::Future<Output=()> + core::marker::Send)>>"] = (
        1, chain(["nest_c", "hour"], SLEEP), True)
    T("b_trait", 1, chain(["b_trait", "{impl#0}::call::{async_block#0}@svc_call", "never"], PENDING))
    T("j_set", 1, chain(["j_set", "~"], r"::poll_fn::PollFn<tokio::task::join_set::"))
    T("j_unordered", 1, chain(["j_unordered"], macro="futures::stream::FuturesUnordered",
                              branches=[HOUR, HOUR]), True)
    T("c_timeout", 1, chain(["c_timeout", "never"], PENDING, via={0: r"^tokio::time::timeout::Timeout$"}), True)
    T("c_map", 1, chain(["c_map", "never"], PENDING, via={0: r"^futures_util::future::future::Map$"}))
    T("c_then", 1, chain(["c_then", "never"], PENDING, via={0: r"^futures_util::future::future::Then > .*Map$"}))
    T("c_then_second", 1, chain(["c_then_second", "hour"], SLEEP,
                                via={0: r"^futures_util::future::future::Then\b"}), True)
    T("c_fuse", 1, chain(["c_fuse", "never"], PENDING, via={0: r"^futures_util::future::future::fuse::Fuse$"}))
    T("c_maybe_done", 1, chain(["c_maybe_done", "hour"], SLEEP,
                               via={0: r"^futures_util::future::maybe_done::MaybeDone$"}), True)
    T("c_stack", 1, chain(["c_stack", "nest_a", "nest_b<u32>@nest_b", "nest_c", "hour"], SLEEP,
                          via={0: r"^tokio::time::timeout::Timeout > futures_util::future::future::Map > "
                                  r"futures_util::future::future::fuse::Fuse$"}), True)
    T("c_unconstrained", 1, chain(["c_unconstrained", "never"], PENDING,
                                  via={0: r"^tokio::task::(coop::)?unconstrained::Unconstrained$"}))
    T("c_handwritten", 1, chain(["c_handwritten", "never"], PENDING, via={0: r"^dump_zoo::Counted$"}))
    T("c_async_closure", 1, chain(["c_async_closure", "c_async_closure::{async_fn#0}::{closure#0}@closure_body",
                                   "hour"], SLEEP), True)
    T("p_notify", 1, chain(["p_notify"], r"^tokio::sync::notify::Notified$"))
    T("p_mutex", 1, chain(["p_mutex", "~"], r"^tokio::sync::batch_semaphore::Acquire$"))
    T("p_oneshot", 1, chain(["p_oneshot"], r"^tokio::sync::oneshot::Receiver<u32>$"))
    T("p_semaphore", 1, chain(["p_semaphore", "~"], r"^tokio::sync::batch_semaphore::Acquire$"))
    T("p_watch", 1, chain(["p_watch", "~"], r"^tokio::sync::notify::Notified$"))
    T("p_interval", 1, chain(["p_interval", "~"], r"::poll_fn::PollFn<tokio::time::interval::"), True)
    T("p_accept", 1, chain(["p_accept", "~"], r"^tokio::runtime::io::scheduled_io::Readiness$"))
    T("p_read", 1, chain(["p_read"], r"^tokio::io::util::read::Read<tokio::net::tcp::stream::TcpStream>$"))
    T("p_send_full", 1, chain(["p_send_full", "~"], r"^tokio::sync::batch_semaphore::Acquire$"))
    T("p_join_handle", 1, chain(["p_join_handle"], r"^tokio::runtime::task::join::JoinHandle<\(\)>$"))
    T("p_blocking", 1, chain(["p_blocking"], r"^tokio::runtime::task::join::JoinHandle<\(\)>$"))
    T("e_server", 1, chain(["e_server", "~"], r"^tokio::runtime::io::scheduled_io::Readiness$"))
    T("e_conn", 3, chain(["e_conn"], r"^tokio::io::util::read::Read<tokio::net::tcp::stream::TcpStream>$"))
    # the JoinSet's two children, and p_join_handle's task
    T("hour", 1, chain(["hour"], SLEEP), True)
    T("never", 2, chain(["never"], PENDING))
    extra = {}
    if "two" in words:
        # rt2's own runtime: nest_a, t_join3, p_notify once more
        for n in ("nest_a", "t_join3", "p_notify"):
            c, ch, tm = TRUTH[PFX + n]
            TRUTH[PFX + n] = (c + 1, ch, tm)
    if "local" in words:
        T("l_local", 1, chain(["l_local", "hour"], SLEEP), True)
        T("l_rc", 1, chain(["l_rc", "never"], PENDING))
        T("l_owner", 1, chain(["l_owner", "~", "never"], PENDING))
        T("l_nested", 1, chain(["l_nested", "never"], PENDING))
        T("l_inner", 1, chain(["l_inner", "hour"], SLEEP), True)
    # tasks that run under load: (name, chains they may show, count)
    LOAD = {}
    if "load" in words:
        LOAD = {
            PFX + "l_ping": (4, [chain(["l_ping", "~"], r"::poll_fn::PollFn<tokio::sync::mpsc::bounded::.*recv")]),
            PFX + "l_pong": (4, [chain(["l_pong", "~"], r"::poll_fn::PollFn<tokio::sync::mpsc::unbounded::.*recv"),
                                 chain(["l_pong@l_pong_send", "~"], r"^tokio::sync::batch_semaphore::Acquire$")]),
            PFX + "l_spawner": (1, [chain(["l_spawner"], r"^tokio::runtime::task::join::JoinHandle<\(\)>$")]),
            PFX + "l_spin": (1, [chain(["l_spin", "~"], r"YieldNow|::yield_now::")]),
            PFX + "l_short": (None, [chain(["l_short", "~"], r"YieldNow|::yield_now::")]),
            PFX + "spawn_load::{async_block#0}": (None, []),
        }
elif PROG == "exec_zoo":
    smol = "smol" in words
    T = lambda name, n, c, timer=False: TRUTH.__setitem__(PFX + name, (n, c, timer))
    if smol:
        NAP = ["nap@nap_smol"]
        NAP_LEAF = ASYNC_IO_TIMER
    else:
        NAP = ["nap@nap_std", "~"]
        NAP_LEAF = ASTD_PENDING
    NAPB = B("pending", NAP, NAP_LEAF)
    NEVERB = B("pending", ["never"], PENDING)
    T("x_nest_a", 1, chain(["x_nest_a", "x_nest_b"] + NAP, NAP_LEAF), True)
    T("x_recv", 1, chain(["x_recv"], r"^async_channel::Recv<u32>$"))
    T("x_join", 1, chain(["x_join"], macro="futures::join!", branches=[NAPB, NEVERB]), True)
    T("x_select", 1, chain(["x_select"], macro="futures::select!", branches=[
        B("pending", [], r"^futures_util::future::future::fuse::Fuse<async_channel::Recv<u32>>$"), NAPB]), True)
    T("x_fn_select", 1, chain(["x_fn_select"], macro="futures_util::future::select::Select",
                              branches=[NAPB, NEVERB]), True)
    T("x_join_all", 1, chain(["x_join_all"], macro="futures_util::future::join_all::JoinAll",
                             branches=[NEVERB, NEVERB]))
    T("x_unordered", 1, chain(["x_unordered"], macro="futures::stream::FuturesUnordered",
                              branches=[NEVERB, NEVERB]))
    T("x_boxed", 1, chain(["x_boxed", "x_nest_b"] + NAP, NAP_LEAF), True)
    TRUTH["(dyn core::future::future::Future<Output=()> + core::marker::Send)"] = (
        1, chain(["x_nest_b"] + NAP, NAP_LEAF), True)
    T("x_combinators", 1, chain(["x_combinators", "never"], PENDING,
                                via={0: r"^futures_util::future::future::Then > .*Fuse$"}))
    T("x_timeout", 1, chain(["x_timeout", "~", "never"], PENDING,
                            via={1: r"^async_std::future::timeout::TimeoutFuture$"}), True)
    if smol:
        T("x_blocking", 1, chain(["x_blocking@x_blocking_smol"], r"^async_task::task::Task<\(\)>$"))
        T("x_local", 2, chain(["x_local", "never"], PENDING))
        T("x_user", 2, chain(["x_user"] + NAP, NAP_LEAF), True)
    else:
        T("x_blocking", 1, chain(["x_blocking@x_blocking_std"],
                                 r"^async_std::task::join_handle::JoinHandle<\(\)>$"))
        # spawn_blocking's own task: the blocking call's handle, no async fn
        TRUTH["async_task::task::Task<()>"] = (1, chain([], r"^async_task::task::Task<\(\)>$"), False)
    LOAD = {}
    if "load" in words:
        LOAD = {PFX + "x_ping": (4, [chain(["x_ping"], r"^async_channel::Recv<u64>$"),
                                     chain(["x_ping@x_ping_send"], r"^async_channel::Send<u64>$")]),
                PFX + "zoo::{async_block#0}": (None, [])}
else:
    sys.exit("dump_zoo_check.py: unknown program %s" % PROG)

# --- the tasks ---------------------------------------------------------
by_name = {}
for t in r["tasks"]:
    by_name.setdefault(t["name"], []).append(t)
for name, (n, want, timer) in sorted(TRUTH.items()):
    got = by_name.get(name, [])
    expect(len(got) == n, "%d tasks %s, not %d" % (len(got), name, n))
    for t in got:
        where = "%s %s" % (t["task"], name)
        if not expect(t["note"] is None and t["state"] == "idle", "%s: %s %s" % (where, t["state"], t["note"])):
            continue
        match_chain(t, want, where)
        if timer:
            expect(t["wakes_in_ns"] is not None and 3000e9 < t["wakes_in_ns"] <= 3600e9,
                   "%s: its timer fires in %s ns, not within the hour" % (where, t["wakes_in_ns"]))
        else:
            expect(t["wakes_in_ns"] is None, "%s: no timer, but wakes in %s" % (where, t["wakes_in_ns"]))
for name, (n, allowed) in sorted(LOAD.items()):
    got = by_name.get(name, [])
    expect(n is None or len(got) == n, "%d tasks %s, not %s" % (len(got), name, n))
    for t in got:
        where = "%s %s" % (t["task"], name)
        if t["note"] is not None:
            # caught while polled, or just done: said, with no chain (never
            # a torn one)
            expect(t["note"] in ("running, not sampled", "changed while reading",
                                 "completed, output not yet taken", "completed, output taken",
                                 "completed or cancelled, future dropped") and not t["frames"],
                   "%s: note %s with %d frames" % (where, t["note"], len(t["frames"])))
            continue
        if not allowed:
            continue
        saved = list(fails)
        ok = False
        for want in allowed:
            del fails[:]
            if match_chain(t, want, where):
                ok = True
                break
        tried = list(fails)
        fails[:] = saved
        expect(ok, "%s: none of its chains (a torn one?): %s" % (where, tried))
unknown = sorted(set(by_name) - set(TRUTH) - set(LOAD))
expect(not unknown, "tasks that should not be there: %s" % unknown)

# --- the lists and the ways in -----------------------------------------
lists = r["task_lists"]
expect(r["list_complete"], "the lists not all walked whole: %s" % r.get("list_note"))
expect(all(l["complete"] for l in lists), "a list not complete: %s" % lists)
for t in r["tasks"]:
    expect(t["list"] is not None and 1 <= t["list"] <= len(lists), "%s %s in no list" % (t["task"], t["name"]))
ways = [(l["via"], l["runtime"]) for l in lists]
if PROG == "dump_zoo":
    flavor = "current_thread" if "current" in words else "multi_thread"
    want_ways = [("context", flavor)]
    if "two" in words:
        want_ways.append(("context", "current_thread"))
    if "local" in words:
        # the empty LocalSet, the outer one, the nested one (main's block_on
        # owns all three); the one a task owns (through that task's future)
        want_ways += [("owner", "local_set")] * 4
    expect(ways == want_ways, "lists %s, not %s" % (ways, want_ways))
    expect(len({l["address"] for l in lists}) == len(lists), "a list listed twice: %s" % lists)
    for l in lists:
        if l["via"] in ("context", "owner"):
            expect(l["thread"] is not None or l.get("owner_task"), "list %s found through no thread or task" % l)
    # which task is in which list, and how that list was found
    in_list = {}
    for t in r["tasks"]:
        in_list.setdefault(t["list"], []).append(t["name"][len(PFX):] if t["name"].startswith(PFX)
                                                 else t["name"])
    contents = sorted((l["via"], l["runtime"], tuple(sorted(in_list.get(i + 1, []))))
                      for i, l in enumerate(lists))
    rt1 = tuple(n[len(PFX):] if n.startswith(PFX) else n for n, (c, _, _) in TRUTH.items()
                for _ in range(c) if not n.startswith(PFX + "l_"))
    if "two" in words:
        rt2 = ("nest_a", "p_notify", "t_join3")
        rt1 = list(rt1)
        for n in rt2:
            rt1.remove(n)
    want = [("context", flavor, tuple(sorted(rt1)))]
    if "two" in words:
        want.append(("context", "current_thread", rt2))
    if "local" in words:
        want += [("owner", "local_set", ()), ("owner", "local_set", ("l_local", "l_owner", "l_rc")),
                 ("owner", "local_set", ("l_nested",)), ("owner", "local_set", ("l_inner",))]
        expect(r["lists_created"] == len(want) and r["lists_without_tasks"] == 0,
               "lists created %s, without tasks %s" % (r["lists_created"], r["lists_without_tasks"]))
        # every list through a way in, none through the heap
        expect(r["heap_scan"] == "none", "the heap scanned: %s" % r["heap_scan"])
    if "load" not in words:
        got = contents
        expect(got == sorted(want), "lists and their tasks:\n      %s\n    not\n      %s" % (got, sorted(want)))
    # the runtimes' lists through the CONTEXT of a thread of theirs, the
    # LocalSets' through main's block_on future
    # (l_owner's own LocalSet through l_owner's future)
    owner = [t["task"] for t in r["tasks"] if t["name"] == PFX + "l_owner"]
    for i, l in enumerate(lists):
        if l["via"] != "owner":
            continue
        if in_list.get(i + 1) == ["l_inner"]:
            expect(l["owner_task"] == (owner[0] if owner else "?") and l["thread"] is None,
                   "l_inner's LocalSet through task %s (thread %s), not l_owner's %s" % (
                       l["owner_task"], l["thread"], owner))
        else:
            expect(l["thread"] == r["pid"] and l["owner_task"] is None,
                   "a LocalSet through thread %s / task %s, not main's block_on" % (l["thread"], l["owner_task"]))
    # the JoinSet's children under their parent
    js = [t for t in r["tasks"] if t["name"] == PFX + "j_set"]
    for p in js:
        sets = p["join_sets"]
        expect(len(sets) == 1 and len(sets[0]["tasks"]) == 2 and sets[0]["complete"]
               and all(c["listed"] and not c["done"] for c in sets[0]["tasks"]),
               "j_set's JoinSet: %s" % sets)
        kids = [t for t in r["tasks"] if t["parent"] == p["task"]]
        expect(sorted(k["name"] for k in kids) == [PFX + "hour", PFX + "never"],
               "j_set's children: %s" % [k["name"] for k in kids])
    # --- block_on futures ---
    bo = {b["comm"]: b for b in r["block_on"]}
    running = [t["thread"] for t in r.get("threads_running", [])]
    if "load" in words and r["pid"] in running:
        # main's thread ran on a CPU through every read: said so, not listed
        expect(PROG not in bo, "main's block_on listed though its thread ran throughout")
    else:
        expect(len(r["block_on"]) == (2 if "two" in words else 1), "block_on entries: %s" %
               [(b["comm"], b["name"]) for b in r["block_on"]])
    if "load" not in words:
        expect(not running, "threads on a CPU throughout in a program that sits still: %s" % running)
    m = bo.get(PROG) or (None if "load" not in words or r["pid"] not in running else {"skip": 1})
    if m and m.get("skip"):
        m = None
    elif expect(m is not None, "main's block_on listed"):
        expect(m["name"] == PFX + "zoo_main", "main's block_on future %s" % m["name"])
        if "blocking" in words:
            ok_notes = (None, "running, not sampled", "changed while reading",
                        "location optimized out at the pc: the future found by a scan of its frame")
            expect(m["note"] in ok_notes, "main's block_on: %s" % m["note"])
            if m["frames"]:
                match_chain(m, chain(["zoo_main@main_blocking"], r"^tokio::runtime::task::join::JoinHandle<\(\)>$"),
                            "main's block_on")
        elif "load" in words and m["note"] == "running, not sampled":
            expect(not m["frames"], "main's block_on running, yet with frames")
        elif "local" in words:
            match_chain(m, chain(["zoo_main@main_local_run", "~", "zoo_main::{async_fn#0}::{async_block#1}@main_nested_run",
                                  "~", "zoo_main::{async_fn#0}::{async_block#1}::{async_block#0}@main_nested", "never"],
                                 PENDING), "main's block_on")
        else:
            match_chain(m, chain(["zoo_main@main", "never"], PENDING), "main's block_on")
    if "two" in words:
        b2 = bo.get("rt2")
        if expect(b2 is not None, "rt2's block_on listed"):
            match_chain(b2, chain(["second_runtime::{closure#0}::{async_block#0}@rt2_main", "never"], PENDING),
                        "rt2's block_on")
else:
    if "smol" in words:
        want_ways = [("static", "executor"), ("heap", "executor"), ("heap", "executor")]
    else:
        want_ways = [("static", "executor")] + [("thread_local", "executor")] * 3
    expect(ways == want_ways, "lists %s, not %s" % (ways, want_ways))
    # the block_on futures: main's (the future the executor's run() runs:
    # the executor's own loop and frames left out), smol's user executor
    # thread (pending(): no async fn); never the runtimes' own threads
    bo = {b["comm"]: b for b in r["block_on"]}
    want_bo = [PROG, "user-exec"] if "smol" in words else [PROG]
    expect(sorted(bo) == sorted(want_bo), "block_on threads %s, not %s" % (sorted(bo), want_bo))
    running = [t["thread"] for t in r.get("threads_running", [])]
    m = bo.get(PROG)
    if m and not (m["note"] == "running, not sampled" and "load" in words):
        tag = "main_smol" if "smol" in words else "main_std"
        blk = "main::{async_block#2}" if "smol" in words else "main::{async_block#3}"
        # the future the executor's run() runs, its own loop and frames left out
        expect(m["name"] == PFX + blk, "main's block_on named %s" % m["name"])
        match_chain(m, chain(["%s@%s" % (blk, tag), "never"], PENDING), "main's block_on")
    elif not m:
        expect("load" in words and r["pid"] in running, "main's block_on missing")
    u = bo.get("user-exec")
    if u:
        expect(u["name"] == "core::future::pending::Pending<()>", "user-exec's block_on named %s" % u["name"])
        match_chain(u, chain([], PENDING), "user-exec's block_on")
# --- wakers held: an idle Tokio task with none can never be woken again ---
# (its state word's reference count less its list's and its JoinHandle's).
# dump_zoo's tasks that await only pending() (or a select! whose only
# enabled branch does) hold no waker; every other idle task holds one at
# least (a timer's, a channel's, a Notify's, ...). async-executor's tasks:
# not known.
NO_WAKER = {"t_select_disabled", "b_box_unpin", "b_trait", "c_map", "c_then", "c_fuse",
            "c_unconstrained", "c_handwritten", "never", "l_rc", "l_nested"}
if PROG == "dump_zoo" and "load" not in words:
    zero = sorted(t["name"][len(PFX):] for t in r["tasks"] if t["wakers"] == 0)
    want_zero = sorted(t["name"][len(PFX):] for t in r["tasks"]
                       if t["state"] == "idle" and t["name"][len(PFX):] in NO_WAKER)
    expect(zero == want_zero, "tasks with no waker %s, not %s" % (zero, want_zero))
    expect(r["tasks_without_waker"] == len(want_zero),
           "tasks_without_waker %s, not %s" % (r["tasks_without_waker"], len(want_zero)))
    for t in r["tasks"]:
        if t["state"] == "idle" and t["name"][len(PFX):] not in NO_WAKER:
            expect(isinstance(t["wakers"], int) and t["wakers"] >= 1,
                   "%s %s idle with wakers %s" % (t["task"], t["name"], t["wakers"]))
elif PROG != "dump_zoo":
    expect(all(t["wakers"] is None for t in r["tasks"]) and r["tasks_without_waker"] == 0,
           "async-executor tasks with wakers: %s" % [t["wakers"] for t in r["tasks"]])
for f in fails:
    print("    " + f)
sys.exit(1 if fails else 0)
