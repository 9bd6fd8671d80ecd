"""html_cdp.py PAGE [options]: opens an asyncscope HTML page in headless
Chromium (Debian's chromium) driven over the DevTools protocol on a pipe
(--remote-debugging-pipe: no port, no network, no package beyond the
standard library), waits for the page's ready flag (<html data-ready="1">),
and prints one JSON line: {"ready_s" (wall time from the navigation to the
flag), "ready_ms" (the page's own performance.now() when it set it),
"errors" (body[data-errors]), "rendered", "result" (what --eval returned)}.

  --max-ready S    fail (exit 1) unless the flag is set within S seconds
  --eval FILE      run the JavaScript in FILE after the flag (an expression,
                   or statements ending in one; a string result is printed
                   under "result"; one starting with "FAIL" fails the run)
  --shot SEL OUT   screenshot of the element matching selector SEL to OUT.png
                   (after --eval)
  --size W,H       the window (default 1400,1000)
  --old            wait for body[data-rendered="ok"] instead (pages made
                   before the ready flag existed, for comparisons)

Exit 0, 1 on a failure (said on stderr), 2 on usage."""
import base64, fcntl, json, os, shutil, subprocess, sys, tempfile, time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars", "--remote-debugging-pipe"]


def fail(msg):
    print("html_cdp: " + msg, file=sys.stderr)
    sys.exit(1)


class Browser:
    def __init__(self, size):
        exe = shutil.which("chromium") or shutil.which("chromium-browser")
        if not exe:
            fail("chromium not found (apt-get install -y chromium)")
        self.profile = tempfile.mkdtemp(prefix="html-cdp.")
        to_r, self.to_w = os.pipe()      # commands: the browser reads fd 3
        self.from_r, from_w = os.pipe()  # replies: the browser writes fd 4

        def fds():
            # through high numbers, so that neither end is overwritten
            a, b = fcntl.fcntl(to_r, fcntl.F_DUPFD, 10), fcntl.fcntl(from_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)
        self.proc = subprocess.Popen([exe] + FLAGS + ["--user-data-dir=" + self.profile,
                                     "--window-size=" + size, "about:blank"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, preexec_fn=fds, close_fds=False)
        os.close(to_r)
        os.close(from_w)
        self.buf = b""
        self.next_id = 0
        self.session = None

    def send(self, method, params=None, session=True, timeout=60):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.to_w, json.dumps(msg).encode() + b"\0")
        end = time.time() + timeout
        while True:
            while b"\0" in self.buf:
                raw, self.buf = self.buf.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == self.next_id:
                    if "error" in reply:
                        fail("%s: %s" % (method, reply["error"].get("message")))
                    return reply.get("result", {})
            if time.time() > end:
                fail("no reply to " + method)
            chunk = os.read(self.from_r, 1 << 20)
            if not chunk:
                fail("chromium went away during " + method)
            self.buf += chunk

    def eval(self, expr):
        r = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            fail("script error: " + json.dumps(r["exceptionDetails"].get("exception", {}).get("description", r["exceptionDetails"].get("text"))))
        return r.get("result", {}).get("value")

    def close(self):
        try:
            self.send("Browser.close", session=False, timeout=5)
        except (SystemExit, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    page, opts, shots, i = os.path.realpath(args[0]), {"size": "1400,1000"}, [], 1
    while i < len(args):
        a = args[i]
        if a in ("--max-ready", "--eval", "--size") and i + 1 < len(args):
            opts[a[2:]] = args[i + 1]
            i += 2
        elif a == "--old":
            opts["old"] = True
            i += 1
        elif a == "--shot" and i + 2 < len(args):
            shots.append((args[i + 1], args[i + 2]))
            i += 3
        else:
            print(__doc__, file=sys.stderr)
            sys.exit(2)
    if not os.path.isfile(page):
        fail("cannot read " + args[0])
    b = Browser(opts["size"])
    try:
        target = b.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        b.session = b.send("Target.attachToTarget", {"targetId": target, "flatten": True}, session=False)["sessionId"]
        b.send("Page.enable")
        w, h = (int(x) for x in opts["size"].split(","))
        b.send("Emulation.setDeviceMetricsOverride", {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": False})
        start = time.time()
        b.send("Page.navigate", {"url": "file://" + page})
        limit = float(opts.get("max-ready", 60))
        ready = None
        flag = ("document.body && document.body.dataset.rendered === 'ok' ? '1' : null" if "old" in opts
                else "document.documentElement && document.documentElement.getAttribute('data-ready')")
        while time.time() - start < max(limit, 120):
            if b.eval(flag) == "1":
                ready = time.time() - start
                break
            time.sleep(0.02)
        if ready is None:
            fail("no ready flag after %.0f s" % (time.time() - start))
        out = {"ready_s": round(ready, 3),
               "ready_ms": int(b.eval("document.documentElement.dataset.readyMs") or -1),
               "errors": b.eval("document.body.dataset.errors"),
               "rendered": b.eval("document.body.dataset.rendered")}
        if "eval" in opts:
            out["result"] = b.eval(open(opts["eval"]).read())
        for sel, png in shots:
            box = b.eval("(function () { var e = document.querySelector(%s); if (!e) return null; e.scrollIntoView();"
                         " var r = e.getBoundingClientRect(); return [r.left + scrollX, r.top + scrollY, r.width, r.height]; })()" % json.dumps(sel))
            if not box:
                fail("no element " + sel)
            shot = b.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                          "clip": {"x": box[0], "y": box[1], "width": max(1, box[2]), "height": max(1, min(box[3], 4000)), "scale": 1}})
            open(png, "wb").write(base64.b64decode(shot["data"]))
        print(json.dumps(out))
        if out["rendered"] != "ok" or out["errors"] != "0":
            fail("page rendered=%s errors=%s" % (out["rendered"], out["errors"]))
        if isinstance(out.get("result"), str) and out["result"].startswith("FAIL"):
            fail(out["result"])
        if "max-ready" in opts and ready > limit:
            fail("ready after %.2f s, more than %s s" % (ready, opts["max-ready"]))
    finally:
        b.close()


main()
