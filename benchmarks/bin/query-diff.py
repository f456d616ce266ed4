#!/usr/bin/env python3
"""Point-by-point difference of one PromQL query between two Prometheus-compatible APIs (stdlib only).

usage: query-diff.py URL_A URL_B QUERY START END STEP [--max=20]      (range query; times in Unix seconds)
       query-diff.py URL_A URL_B QUERY TIME [--max=20]                  (instant query)
Matches series by their label sets and points by timestamp, then prints: series only in A or only in B,
points only in A or only in B, and the points whose values differ (bit for bit), largest relative
difference first, with the totals. Exit 0 when the answers are identical, 1 otherwise.
"""
import json, math, sys, urllib.parse, urllib.request


def fetch(base, query, args):
    if len(args) == 3:
        path, p = "/api/v1/query_range", {"query": query, "start": args[0], "end": args[1], "step": args[2]}
    else:
        path, p = "/api/v1/query", {"query": query, "time": args[0]}
    with urllib.request.urlopen(base.rstrip("/") + path + "?" + urllib.parse.urlencode(p), timeout=300) as r:
        d = json.loads(r.read())
    if d.get("status") != "success":
        sys.exit(f"{base}: {d}")
    out = {}
    for s in d["data"]["result"]:
        key = tuple(sorted(s["metric"].items()))
        pts = s["values"] if "values" in s else [s["value"]]
        out[key] = {round(float(t) * 1000): v for t, v in pts}
    return out


def main():
    a_url, b_url, query = sys.argv[1:4]
    rest = [x for x in sys.argv[4:] if not x.startswith("--")]
    limit = int(next((x[6:] for x in sys.argv[4:] if x.startswith("--max=")), 20))
    a, b = fetch(a_url, query, rest), fetch(b_url, query, rest)
    name = lambda k: "{" + ", ".join(f'{n}="{v}"' for n, v in k) + "}"
    only_a, only_b = sorted(set(a) - set(b)), sorted(set(b) - set(a))
    for k in only_a[:limit]: print(f"series only in A: {name(k)} ({len(a[k])} points)")
    for k in only_b[:limit]: print(f"series only in B: {name(k)} ({len(b[k])} points)")
    diffs, pa, pb, same = [], [], [], 0
    for k in set(a) & set(b):
        for t in sorted(set(a[k]) | set(b[k])):
            va, vb = a[k].get(t), b[k].get(t)
            if vb is None: pa.append((k, t, va))
            elif va is None: pb.append((k, t, vb))
            elif va == vb: same += 1
            else:
                fa, fb = float(va), float(vb)
                rel = abs(fa - fb) / max(abs(fa), abs(fb)) if not (math.isnan(fa) or math.isnan(fb)) and max(abs(fa), abs(fb)) else math.inf
                diffs.append((rel, k, t, va, vb))
    for k, t, v in pa[:limit]: print(f"point only in A: {name(k)} t={t / 1000:.3f} value={v}")
    for k, t, v in pb[:limit]: print(f"point only in B: {name(k)} t={t / 1000:.3f} value={v}")
    diffs.sort(key=lambda x: -x[0])
    for rel, k, t, va, vb in diffs[:limit]:
        print(f"differ: {name(k)} t={t / 1000:.3f} A={va} B={vb} rel={rel:.3g}")
    nser = len(set(a) & set(b))
    print(f"series: A {len(a)}, B {len(b)}, common {nser}; points: equal {same}, differ {len(diffs)}, "
          f"only A {len(pa)}, only B {len(pb)}; series with a differing point {len({d[1] for d in diffs})}; "
          f"step times with a differing point {len({d[2] for d in diffs})}")
    sys.exit(0 if not (only_a or only_b or diffs or pa or pb) else 1)


if __name__ == "__main__":
    main()
