"""export_cat_lines.py FILE: what CAT's parser and uftrace rely on: each `reading
N.dat` (CAT's regex) is a section line of a new numeric thread; every [entry]
/ [exit ] line has uftrace's exact shape, its section's thread, time order,
and the depths of a proper call log; CAT's field regexes find its timestamp
and symbol; no header line matches its patterns"""
import re, sys
errors, threads, cur, last, stack = [], [], None, 0, []
rec = re.compile(r"^(\d+)\.(\d{9})  +(\d+): \[(entry|exit )\] (.+)\(([0-9a-f]+)\) depth: (\d+)$")
for no, line in enumerate(open(sys.argv[1]), 1):
    line = line.rstrip("\n")
    m = re.search("reading (.*).dat", line)
    if m:
        if not re.fullmatch(r"reading \d+\.dat", line) or m.group(1) in threads:
            errors.append("line %d: bad section %r" % (no, line))
        threads.append(m.group(1)); cur, last, stack = m.group(1), 0, []
        continue
    if cur is None:
        if re.search(r"entry|exit \]|depth: ", line):
            errors.append("line %d: header line matches CAT's patterns" % no)
        continue
    if not re.search(r"\[(entry|exit )\]", line):
        continue
    m = rec.match(line)
    if not m:
        errors.append("line %d: not uftrace's record shape: %r" % (no, line)); continue
    ts = int(m.group(1)) * 10**9 + int(m.group(2))
    name, addr, depth = m.group(5), m.group(6), int(m.group(7))
    if m.group(3) != cur or ts < last:
        errors.append("line %d: thread or time order" % no)
    last = ts
    if float(re.findall("(.*)  ", line)[0]) <= 0 or re.findall(r"\] (.*)\(", line)[0] != name:
        errors.append("line %d: CAT's field regexes fail" % no)
    if m.group(4) == "entry":
        if depth != len(stack):
            errors.append("line %d: entry depth %d, %d calls open" % (no, depth, len(stack)))
        stack.append((name, addr))
    else:
        at = max([i for i, f in enumerate(stack) if f == (name, addr)], default=None)
        if (at if at is not None else len(stack)) != depth:
            errors.append("line %d: exit depth %d" % (no, depth))
        if at is not None:
            del stack[at:]
if not threads:
    errors.append("no section")
for e in errors[:10]:
    print("    " + e, file=sys.stderr)
sys.exit(1 if errors else 0)
