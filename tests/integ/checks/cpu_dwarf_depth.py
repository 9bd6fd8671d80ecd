"""cpu_dwarf_depth.py RECORD.ERR: record --sample --dwarf's DWARF line: at least
8 frames deep on average, frame pointers 1"""
import re, sys
for line in open(sys.argv[1]):
    m = re.match(r"asyncscope: DWARF unwinding: (\d+) samples, ([0-9.]+) user frames on average \(frame pointers alone: ([0-9.]+)\)", line)
    if m:
        n, dw, fp = int(m.group(1)), float(m.group(2)), float(m.group(3))
        print("    %d samples: %.1f frames by DWARF, %.1f by frame pointers" % (n, dw, fp), file=sys.stderr)
        sys.exit(0 if n >= 500 and dw >= 8 and fp <= 2 else 1)
sys.exit(1)
