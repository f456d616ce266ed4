#!/usr/bin/env python3
"""Heavy PromQL queries from N concurrent clients, until stopped (SIGTERM/SIGINT) or --seconds.

Used beside an ingest run (otlp-ingest.sh QUERY_CLIENTS=N) to see what queries cost ingestion:
each client loops over the expressions (instant queries at "now" through /api/v1/query, each
with the server's timeout), and at the end one RESULT line gives the count per HTTP status and
the latency percentiles.

  benchmarks/bin/query-load.py --url http://127.0.0.1:9090 --clients 20 --seconds 60
"""
import argparse
import json
import signal
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

HEAVY = [
    'count({__name__=~".+"})',
    'count by (__name__) ({__name__=~".+"})',
    'sum(rate({__name__=~".+"}[5m]))',
    'count({__name__=~"(.*a){12}b"})',
    'topk(5, count by (job) ({__name__=~".+"}))',
    'max_over_time({__name__=~".+"}[10m:1m])',
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=0, help="0: until SIGTERM")
    ap.add_argument("--timeout", default="30s", help="the query API's timeout parameter")
    args = ap.parse_args()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    lock = threading.Lock()
    latencies, statuses = [], {}

    def client(i):
        n = i
        while not stop.is_set():
            expr = HEAVY[n % len(HEAVY)]
            n += 1
            q = urllib.parse.urlencode({"query": expr, "timeout": args.timeout})
            t0 = time.monotonic()
            try:
                with urllib.request.urlopen(f"{args.url}/api/v1/query?{q}", timeout=120) as r:
                    r.read()
                    code = r.status
            except urllib.error.HTTPError as e:
                e.read()
                code = e.code
            except Exception:  # connection refused at the end of a run
                code = "error"
                if stop.wait(0.5):
                    break
            dt = time.monotonic() - t0
            with lock:
                latencies.append(dt)
                statuses[code] = statuses.get(code, 0) + 1

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(args.clients)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    if args.seconds > 0:
        stop.wait(args.seconds)
        stop.set()
    else:
        while not stop.is_set():
            stop.wait(1)
    for t in threads:
        t.join(timeout=130)
    wall = time.monotonic() - t0
    lat = sorted(latencies)

    def pct(p):
        return lat[min(len(lat) - 1, int(p * len(lat)))] * 1000 if lat else 0

    print(
        "RESULT query-load clients=%d queries=%d wall_s=%.1f statuses=%s p50_ms=%.0f p99_ms=%.0f max_ms=%.0f"
        % (args.clients, len(lat), wall, json.dumps(statuses, sort_keys=True, default=str),
           pct(0.5), pct(0.99), lat[-1] * 1000 if lat else 0),
        flush=True,
    )


if __name__ == "__main__":
    main()
