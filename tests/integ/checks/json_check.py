"""json_check.py FILE PYTHON-EXPR: the JSON assertion of the integration cases
(keyword JSON): evaluates EXPR over the parsed document `r`, with `tasks` the
user tasks of a report (kind "task"); exits 0 when it is true, else prints the
expression and the polls by Tokio id."""
import json, sys

r = json.load(open(sys.argv[1]))
tasks = [t for t in r["tasks"] if isinstance(t, dict) and t.get("kind") == "task"] if isinstance(r, dict) and "tasks" in r else []
ok = eval(sys.argv[2])
if not ok:
    print("assertion false:", sys.argv[2], file=sys.stderr)
    print("polls by tokio id:", [(t["id"], t["polls"]) for t in sorted(tasks, key=lambda t: t["id"] or 0)][:60], file=sys.stderr)
sys.exit(0 if ok else 1)
