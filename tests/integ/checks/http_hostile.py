#!/usr/bin/env python3
"""Hostile and slow HTTP clients against serve on 127.0.0.1:PORT, which must
go on answering (one epoll thread, connection limit, idle timeout):
  1. a client dribbling its request a byte every 0.5 s: /metrics still
     answers in under a second meanwhile;
  2. garbage instead of a request line, and an oversized header: 4xx (or
     the connection closed), never a hang;
  3. CONNS idle connections holding every slot: once the idle timeout
     (TIMEOUT s) has passed, /metrics answers again, and the recording went
     on meanwhile (asyncscope_cpu_samples_total grew).
  http_hostile.py PORT [CONNS] [TIMEOUT]"""
import socket, sys, threading, time, urllib.request

port = int(sys.argv[1])
conns = int(sys.argv[2]) if len(sys.argv) > 2 else 64
timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 10


def metrics(t=5.0):
    with urllib.request.urlopen('http://127.0.0.1:%d/metrics' % port, timeout=t) as r:
        return r.read().decode()


def samples(text):
    for line in text.splitlines():
        if line.startswith('asyncscope_cpu_samples_total '):
            return float(line.split()[1])
    return None


def raw(data):
    s = socket.create_connection(('127.0.0.1', port), timeout=5)
    s.sendall(data)
    try:
        return s.recv(256).decode(errors='replace')
    except OSError:
        return ''
    finally:
        s.close()


def fail(msg):
    print('http_hostile: ' + msg)
    sys.exit(1)


# 1. a slow client does not hold the others
def dribble():
    s = socket.create_connection(('127.0.0.1', port))
    for b in b'GET /metrics HTTP/1.1\r\nHost: x\r\n':
        s.send(bytes([b]))
        time.sleep(0.5)
    s.close()


th = threading.Thread(target=dribble, daemon=True)
th.start()
time.sleep(1)
t0 = time.time()
metrics()
dt = time.time() - t0
print('metrics while a client dribbles: %.3f s' % dt)
if dt > 1.0:
    fail('a dribbling client slowed /metrics to %.1f s' % dt)

# 2. garbage and an oversized header
r = raw(b'FOO\r\n\r\n')
print('garbage: %r' % r[:40])
if r and not r.startswith('HTTP/1.1 4'):
    fail('garbage answered %r' % r[:40])
r = raw(b'GET /metrics HTTP/1.1\r\nX-Big: ' + b'a' * 200000 + b'\r\n\r\n')
print('oversized header: %r' % r[:40])
if r and not r.startswith('HTTP/1.1 4'):
    fail('an oversized header answered %r' % r[:40])

# 3. every slot held by idle connections
before = samples(metrics())
held = []
for _ in range(conns):
    try:
        held.append(socket.create_connection(('127.0.0.1', port), timeout=2))
    except OSError:
        break
print('idle connections held: %d' % len(held))
t0 = time.time()
text = None
while time.time() - t0 < timeout + 8:
    try:
        text = metrics(2.0)
        break
    except OSError:
        time.sleep(0.5)
dt = time.time() - t0
for s in held:
    s.close()
if text is None:
    fail('/metrics not answered %.0f s after %d idle connections' % (dt, len(held)))
after = samples(text)
print('answered again after %.1f s; samples %s -> %s' % (dt, before, after))
if before is None or after is None or after <= before:
    fail('the recording did not go on while the connections were held')
print('ok')
