#!/usr/bin/env python3
"""PromQL over a Prometheus server's HTTP API (the serve cases' consumer).

  promql.py PORT QUERY            prints each result: 'labels value', one a line
  promql.py PORT QUERY --eq V     exits 0 when the result is one value equal to V
  promql.py PORT QUERY --ge V     ... at least V;  --le V: at most V
  promql.py PORT QUERY --empty    exits 0 when the result is empty
  promql.py PORT QUERY --label L --is V   the one result's label L is V
Prometheus listens on 127.0.0.1:PORT; the query is an instant query now."""
import json, sys, urllib.parse, urllib.request


def main():
    port, query = sys.argv[1], sys.argv[2]
    opts = sys.argv[3:]
    url = 'http://127.0.0.1:%s/api/v1/query?%s' % (port, urllib.parse.urlencode({'query': query}))
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            doc = json.load(r)
    except Exception as e:  # noqa: BLE001 - any failure is a failed check
        print('promql: %s' % e, file=sys.stderr)
        return 1
    if doc.get('status') != 'success':
        print('promql: %s' % doc, file=sys.stderr)
        return 1
    data = doc['data']
    if data['resultType'] == 'scalar':
        res = [({}, float(data['result'][1]))]
    else:
        res = [(s['metric'], float(s['value'][1])) for s in data['result']]
    for m, v in res:
        print('%s %s' % (','.join('%s=%s' % kv for kv in sorted(m.items())), repr(v)))
    if not opts:
        return 0
    if opts[0] == '--empty':
        return 0 if not res else 1
    if opts[0] == '--label':
        return 0 if len(res) == 1 and res[0][0].get(opts[1]) == opts[3] else 1
    if len(res) != 1:
        print('promql: %d results, one expected' % len(res), file=sys.stderr)
        return 1
    v, want = res[0][1], float(opts[1])
    ok = {'--eq': v == want, '--ge': v >= want, '--le': v <= want}[opts[0]]
    if not ok:
        print('promql: %s is %r, not %s %s' % (query, v, opts[0], opts[1]), file=sys.stderr)
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
