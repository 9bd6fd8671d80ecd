#!/usr/bin/env python3
"""Every tracing mode against untraced and against bpftrace, in one
interleaved run (prints figures, asserts nothing). Needs root, the test
programs (make apps) and the hyper server (bench/hyper-server); installs
bpftrace from Debian when missing (for this bench only).

Modes: none (untraced); task (`record`, default probes and the default
off-CPU intervals inside polls); no-offcpu (`record --no-offcpu`: task mode
as it was before off-CPU capture became the default); lite (`record
--lite`: poll entry and return); futures (`record --futures`); offcpu
(`record --offcpu`: off-CPU intervals and the run-queue waits); profile (`profile`, 99 Hz, off-CPU capture on);
flight (`profile --flight 30s`: the flight recorder idle, when this build
has it); serve (`serve -p`, its default profile mode, /metrics scraped every
second as Prometheus would) and serve-tasks (`serve --tasks`: the task
probes counting in the kernel), on hyper only (serve never launches);
bpftrace (a script counting the same probe points as --lite:
every copy of tokio's raw::poll, entry and return); bare-lite and
bare-task (the probe points of lite and task with empty BPF programs,
ASYNCSCOPE_BARE_PROBES=1: the kernel's trap cost alone).

Workloads, one round each per mode per round, modes interleaved:
  hyper: the hyper 0.14 server under wrk -t1 -c32 for WRK seconds
    (loopback), the tracer attached (-p); requests/s, and CPU per request:
    the server's (its traps and BPF runs included) and the tracer
    process's own, from /proc; with kernel.bpf_stats_enabled on, each BPF
    program's runs per request and ns a run.
  pollbench: 1000 tasks x Y yields on 2 workers, launched under the tracer
    (-- CMD); polls/s as pollbench prints it, and CPU per poll of the
    tracer and the target together (getrusage of the children), less the
    same tool's CPU on a run of one poll (its start-up: symbols, DWARF,
    bpftrace's compiler), less the untraced CPU per poll.
Medians over ROUNDS (default 5).

  bench/modes.py [--rounds N] [--modes a,b,...] [--wrk SECONDS] [--yields Y]
"""
import argparse, json, os, resource, shutil, signal, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AS = os.environ.get('AS', os.path.join(ROOT, 'build/asyncscope'))
PB = os.path.join(ROOT, 'tests/apps/target/release/pollbench')
SRV = os.path.join(ROOT, 'bench/hyper-server/target/release/hyper-server')
ALL = ['none', 'task', 'no-offcpu', 'lite', 'futures', 'offcpu', 'profile', 'flight', 'serve',
       'serve-tasks', 'bpftrace', 'bare-lite', 'bare-task']
PORT = 18083
SERVE_PORT = 18084


def bpftrace_script(binary):
    # the same points as --lite: every copy of raw::poll (legacy mangling)
    sym = '_ZN5tokio7runtime4task3raw4poll17h*'
    return ('uprobe:%s:%s { @polls = count(); } uretprobe:%s:%s { @returns = count(); }'
            % (binary, sym, binary, sym))


def tracer_cmd(mode, tmp, target):
    """The tracer's command for mode; target: ['-p', PID] or ['--', CMD...]."""
    out = os.path.join(tmp, 'm.trace')
    if mode in ('task', 'bare-task'):
        return [AS, 'record', '-o', out] + target
    if mode == 'no-offcpu':
        return [AS, 'record', '--no-offcpu', '-o', out] + target
    if mode in ('lite', 'bare-lite'):
        return [AS, 'record', '--lite', '-o', out] + target
    if mode == 'futures':
        return [AS, 'record', '--futures', '-o', out] + target
    if mode == 'offcpu':
        return [AS, 'record', '--offcpu', '-o', out] + target
    if mode == 'profile':
        return [AS, 'profile', '-o', out] + target
    if mode == 'flight':
        return [AS, 'profile', '--flight', '30s', '-o', tmp] + target
    if mode in ('serve', 'serve-tasks'):
        return [AS, 'serve', '--listen', '127.0.0.1:%d' % SERVE_PORT] + \
            (['--tasks'] if mode == 'serve-tasks' else []) + target
    if mode == 'bpftrace':
        if target[0] == '-p':
            binary = os.readlink('/proc/%s/exe' % target[1])
            return ['bpftrace', '-p', target[1], '-e', bpftrace_script(binary)]
        return ['bpftrace', '-e', bpftrace_script(target[1]), '-c', ' '.join(target[1:])]
    raise ValueError(mode)


def mode_env(mode):
    env = dict(os.environ)
    if mode.startswith('bare-'):
        env['ASYNCSCOPE_BARE_PROBES'] = '1'
    return env


def proc_cpu(pid):
    """utime + stime of a process, seconds (all its threads)."""
    with open('/proc/%d/stat' % pid) as f:
        v = f.read().rsplit(')', 1)[1].split()
    return (int(v[11]) + int(v[12])) / os.sysconf('SC_CLK_TCK')


def bpf_progs():
    try:
        out = subprocess.run(['bpftool', '-j', 'prog', 'show'], capture_output=True, text=True).stdout
        return {p['name']: (p.get('run_cnt', 0), p.get('run_time_ns', 0))
                for p in json.loads(out) if p.get('name')}
    except (OSError, ValueError):
        return {}


def wait_ready(proc, errpath, mode, timeout=15.0):
    """Until the tracer says it is attached (bpftrace: 'Attaching')."""
    end = time.time() + timeout
    key = 'Attaching' if mode == 'bpftrace' else 'attached' if mode not in \
        ('profile', 'flight', 'serve', 'serve-tasks') else 'profiling'
    while time.time() < end:
        if proc.poll() is not None:
            return False
        try:
            with open(errpath) as f:
                s = f.read()
            if key in s:
                time.sleep(0.3 if mode in ('profile', 'flight', 'serve', 'serve-tasks') else 0.1)
                return True
        except OSError:
            pass
        time.sleep(0.05)
    return False


def hyper_round(mode, tmp, wrk_secs):
    srv = subprocess.Popen([SRV, str(PORT)], stdout=subprocess.DEVNULL)
    time.sleep(0.3)
    tr = None
    errpath = os.path.join(tmp, 'tr.err')
    try:
        if mode != 'none':
            err = open(errpath, 'w')
            tr = subprocess.Popen(tracer_cmd(mode, tmp, ['-p', str(srv.pid)]), stdout=err,
                                  stderr=err, env=mode_env(mode))
            if not wait_ready(tr, errpath, mode):
                return None
        # a warm-up under load first: a tracer's one-time work (profile's first
        # walk of the task lists, at the first task ids it sees) is not a cost
        # per request
        subprocess.run(['wrk', '-t1', '-c32', '-d1s', 'http://127.0.0.1:%d/' % PORT],
                       capture_output=True)
        b0, c0 = bpf_progs(), proc_cpu(srv.pid)
        t0 = proc_cpu(tr.pid) if tr else 0.0
        scraper = None
        if mode.startswith('serve'):
            # scraped every second meanwhile, as Prometheus would
            scraper = subprocess.Popen(['bash', '-c', 'while :; do curl -s -o /dev/null '
                                        'http://127.0.0.1:%d/metrics; sleep 1; done' % SERVE_PORT])
        w = subprocess.run(['wrk', '-t1', '-c32', '-d%ds' % wrk_secs, 'http://127.0.0.1:%d/' % PORT],
                           capture_output=True, text=True).stdout
        c1, b1 = proc_cpu(srv.pid), bpf_progs()
        t1 = proc_cpu(tr.pid) if tr else 0.0
        if scraper:
            scraper.kill()
            scraper.wait()
        reqs = rps = None
        for line in w.splitlines():
            if 'requests in' in line:
                reqs = int(line.split()[0])
            if line.startswith('Requests/sec'):
                rps = float(line.split()[1])
        if not reqs:
            return None
        progs = {}
        for n, (cnt, ns) in b1.items():
            dc, dn = cnt - b0.get(n, (0, 0))[0], ns - b0.get(n, (0, 0))[1]
            if dc > 1000:
                progs[n] = (dc / reqs, dn / dc)
        return {'rps': rps, 'srv_us': (c1 - c0) * 1e6 / reqs, 'tr_us': (t1 - t0) * 1e6 / reqs,
                'progs': progs}
    finally:
        if tr and tr.poll() is None:
            tr.send_signal(signal.SIGINT)
            try:
                tr.wait(timeout=30)
            except subprocess.TimeoutExpired:
                tr.kill()
                tr.wait()
        srv.kill()
        srv.wait()


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def launched(mode, tmp, tasks, yields):
    """(CPU seconds of tracer + target, pollbench's polls/s or None)."""
    cmd = [PB, str(tasks), str(yields)]
    if mode != 'none':
        cmd = tracer_cmd(mode, tmp, ['--'] + cmd)
    c0 = children_cpu()
    p = subprocess.run(cmd, capture_output=True, text=True, env=mode_env(mode))
    c1 = children_cpu()
    rate = None
    for line in p.stdout.splitlines():
        if line.startswith('polls '):
            rate = float(line.split()[5])
    return c1 - c0, rate


def pollbench_round(mode, tmp, yields):
    if mode.startswith('serve'):
        return None   # serve never launches a target
    cpu, rate = launched(mode, tmp, 1000, yields)
    start, _ = launched(mode, tmp, 1, 0)   # the tool's start-up and one poll
    if rate is None:
        return None
    polls = 1000 * (yields + 1)
    return {'rate': rate, 'cpu_ns': (cpu - start) * 1e9 / polls}


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--modes', default=','.join(ALL))
    ap.add_argument('--wrk', type=int, default=3)
    ap.add_argument('--yields', type=int, default=1000)
    ap.add_argument('--skip', default='', help='hyper or pollbench')
    a = ap.parse_args()
    modes = a.modes.split(',')
    if os.geteuid() != 0:
        sys.exit('asyncscope: bench/modes.py needs root (BPF, perf events)')
    if 'bpftrace' in modes and not shutil.which('bpftrace'):
        subprocess.run(['apt-get', 'install', '-y', '-qq', 'bpftrace'], check=False,
                       stdout=subprocess.DEVNULL)
        if not shutil.which('bpftrace'):
            print('bpftrace not installable: mode dropped')
            modes.remove('bpftrace')
    if 'flight' in modes:
        h = subprocess.run([AS, 'profile', '--help'], capture_output=True, text=True).stdout
        if '--flight' not in h:
            print('this build has no flight recorder: mode dropped')
            modes.remove('flight')
    if not os.path.exists(SRV):
        subprocess.run(['cargo', 'build', '--release', '--quiet'],
                       cwd=os.path.join(ROOT, 'bench/hyper-server'), check=True)
    stats0 = open('/proc/sys/kernel/bpf_stats_enabled').read().strip()
    open('/proc/sys/kernel/bpf_stats_enabled', 'w').write('1')
    hy = {m: [] for m in modes}
    pb = {m: [] for m in modes}
    try:
        for r in range(a.rounds):
            for m in modes:
                with tempfile.TemporaryDirectory() as tmp:
                    if 'hyper' not in a.skip:
                        hy[m].append(hyper_round(m, tmp, a.wrk))
                    if 'pollbench' not in a.skip:
                        pb[m].append(pollbench_round(m, tmp, a.yields))
            print('round %d of %d done' % (r + 1, a.rounds), file=sys.stderr, flush=True)
    finally:
        open('/proc/sys/kernel/bpf_stats_enabled', 'w').write(stats0)
    print('medians of %d interleaved rounds; kernel.bpf_stats_enabled on (adds ~2 clock reads '
          'to every BPF run)' % a.rounds)
    if 'hyper' not in a.skip:
        base = med([x['rps'] for x in hy['none'] if x]) if 'none' in hy else None
        bcpu = med([x['srv_us'] for x in hy['none'] if x]) if 'none' in hy else None
        print('\nhyper 0.14 under wrk -t1 -c32 -d%ds (attached)' % a.wrk)
        print('  %-10s %10s %7s %14s %14s %12s' % ('mode', 'req/s', 'ratio', 'server us/req',
                                                 'tracer us/req', '+CPU us/req'))
        for m in modes:
            xs = [x for x in hy[m] if x]
            if not xs:
                print('  %-10s   (failed)' % m)
                continue
            rps, s, t = med([x['rps'] for x in xs]), med([x['srv_us'] for x in xs]), \
                med([x['tr_us'] for x in xs])
            print('  %-10s %10.0f %7s %14.2f %14.2f %12s' % (
                m, rps, '%.3f' % (rps / base) if base else '-', s, t,
                '%.2f' % (s + t - bcpu) if bcpu is not None else '-'))
        for m in modes:
            names = sorted({n for x in hy[m] if x for n in x['progs']})
            if not names:
                continue
            parts = []
            for n in names:
                rr = med([x['progs'][n][0] for x in hy[m] if x and n in x['progs']])
                ns = med([x['progs'][n][1] for x in hy[m] if x and n in x['progs']])
                parts.append('%s %.2f/req %.0f ns' % (n, rr, ns))
            print('  %-10s BPF: %s' % (m, '; '.join(parts)))
    if 'pollbench' not in a.skip:
        base = med([x['rate'] for x in pb['none'] if x]) if 'none' in pb else None
        bcpu = med([x['cpu_ns'] for x in pb['none'] if x]) if 'none' in pb else None
        print('\npollbench 1000 tasks x %d yields, 2 workers (launched)' % a.yields)
        print('  %-10s %12s %7s %14s %16s' % ('mode', 'polls/s', 'ratio', 'CPU ns/poll',
                                            '+CPU ns/poll'))
        for m in modes:
            xs = [x for x in pb[m] if x]
            if not xs:
                print('  %-10s   (failed)' % m)
                continue
            rate, c = med([x['rate'] for x in xs]), med([x['cpu_ns'] for x in xs])
            print('  %-10s %12.0f %7s %14.0f %16s' % (
                m, rate, '%.3f' % (rate / base) if base else '-', c,
                '%.0f' % (c - bcpu) if bcpu is not None else '-'))


if __name__ == '__main__':
    main()
