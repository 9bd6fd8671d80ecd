"""offcpu_dwarf_depth.py RECORD.ERR: record --offcpu --dwarf's DWARF line: off-
CPU stacks deeper than by frame pointers, mean and median"""
import re, sys
for line in open(sys.argv[1]):
    m = re.match(r"asyncscope: DWARF unwinding: (\d+) off-CPU intervals, ([0-9.]+) user frames on average "
                 r"\(frame pointers alone: ([0-9.]+)\), median (\d+) \((\d+)\)", line)
    if m:
        n, dw, fp, med, fpmed = int(m.group(1)), float(m.group(2)), float(m.group(3)), int(m.group(4)), int(m.group(5))
        print("    %d intervals: %.1f frames by DWARF (median %d), %.1f by frame pointers (median %d)" % (n, dw, med, fp, fpmed), file=sys.stderr)
        sys.exit(0 if n >= 10 and dw >= 8 and dw > fp and med > fpmed else 1)
print("    no DWARF unwinding line for off-CPU intervals", file=sys.stderr)
sys.exit(1)
