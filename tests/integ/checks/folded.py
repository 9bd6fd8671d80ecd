"""folded.py: reading asyncscope's folded stacks (imported by the checkers).
A line is `frame;frame;... WEIGHT`; lines starting with '#' are comments
(the unit, a truncated trace); the program's first frame ends in "_[j]" and
kernel frames in "_[k]" (flamegraph.pl / inferno annotations)."""
import re

def lines(path):
    """[(frames without annotations, weight, own index or -1, first kernel
    index or -1)] of a folded file; raises on a malformed line"""
    out = []
    for raw in open(path, encoding="utf-8"):
        raw = raw.rstrip("\n")
        if raw.startswith("#") or not raw:
            continue
        m = re.fullmatch(r"(.+) (\d+)", raw)
        if not m:
            raise ValueError("bad folded line: %r" % raw)
        frames, own, kernel = [], -1, -1
        for i, f in enumerate(m.group(1).split(";")):
            if f.endswith("_[j]"):
                own, f = i, f[:-4]
            elif f.endswith("_[k]"):
                kernel, f = (i if kernel < 0 else kernel), f[:-4]
            frames.append(f)
        out.append((frames, int(m.group(2)), own, kernel))
    return out

def unit(path):
    """the unit a folded file's first comment names ("us", "ns", "ms"), or None"""
    for raw in open(path, encoding="utf-8"):
        m = re.match(r"# asyncscope.* in (ns|us|ms)\b", raw)
        if m:
            return m.group(1)
        if not raw.startswith("#"):
            break
    return None
