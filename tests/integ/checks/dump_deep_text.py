"""dump_deep_text.py DUMP.TXT L1 L2 L3: the text dump shows the deep task as
task #ID, idle, with its three frames at lines L1 L2 L3 of parked.rs,
innermost last."""
import re, sys
text = open(sys.argv[1]).read()
want = ("    parked::deep_outer at src/bin/parked.rs:%s\n"
        "    parked::deep_middle at src/bin/parked.rs:%s\n"
        "    parked::deep_inner at src/bin/parked.rs:%s  (awaiting core::future::pending::Pending<()>)\n"
        % tuple(sys.argv[2:5]))
ok = re.search(r"^task #[1-9][0-9]* parked::deep_outer  \[idle\]\n" + re.escape(want), text, re.M) is not None
if not ok:
    print(text, file=sys.stderr)
sys.exit(0 if ok else 1)
