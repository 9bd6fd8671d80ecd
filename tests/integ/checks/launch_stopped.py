#!/usr/bin/env python3
"""launch_stopped.py PIDFILE PROGRAM [ARGS...]: runs PROGRAM stopped right
after its exec, before its first instruction: the child asks to be traced
(PTRACE_TRACEME), so the kernel stops it at the exec; this process then
detaches with SIGSTOP, which leaves it stopped (a group stop), under its own
name, and writes its pid to PIDFILE. `kill -CONT PID` lets it run. Waits for
it and exits with its status (128 + signal when killed), so a case's BG of
this process, then WAIT, sees the program's own exit. A case whose truth is
"the whole run" (an agent following the program by name, a window open
before it runs) needs this: a program started then sent SIGSTOP by the
next line has already run for as long as the machine took to get there."""
import ctypes, os, signal, sys

PTRACE_TRACEME, PTRACE_DETACH = 0, 17
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
if len(sys.argv) < 3:
    print("usage: launch_stopped.py PIDFILE PROGRAM [ARGS...]", file=sys.stderr)
    sys.exit(2)
pid = os.fork()
if pid == 0:
    if libc.ptrace(PTRACE_TRACEME, 0, None, None) != 0:
        os._exit(126)
    try:
        os.execv(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, st = os.waitpid(pid, 0)
if not os.WIFSTOPPED(st):
    print("launch_stopped: %s did not stop at its exec" % sys.argv[2], file=sys.stderr)
    sys.exit(1)
if libc.ptrace(PTRACE_DETACH, pid, None, ctypes.c_void_p(signal.SIGSTOP)) != 0:
    print("launch_stopped: cannot detach: errno %d" % ctypes.get_errno(), file=sys.stderr)
    os.kill(pid, signal.SIGKILL)
    sys.exit(1)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d\n" % pid)
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
_, st = os.waitpid(pid, 0)
sys.exit(os.WEXITSTATUS(st) if os.WIFEXITED(st) else 128 + os.WTERMSIG(st))
