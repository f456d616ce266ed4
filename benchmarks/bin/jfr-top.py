#!/usr/bin/env python3
"""Where a JFR recording's CPU samples go: top frames, inclusive shares, threads.

    benchmarks/bin/jfr-top.py FILE.jfr [--run RUN.txt | --window FROM,TO] [--top N] [--filter SUBSTR]
                              [--area NAME=PREFIX ...] [--native]

Reads `jfr print --events jdk.ExecutionSample --stack-depth 128 FILE` (Java threads running Java
code; with --native also jdk.NativeMethodSample, threads inside JNI/native code such as RocksDB or
snappy) and prints, as shares of the samples counted:
  - top frames (self time: the sampled thread's innermost frame), by method;
  - inclusive time by method (samples whose stack contains the method at least once);
  - inclusive time by area (--area NAME=PREFIX, repeatable; a sample counts for an area when any
    frame starts with PREFIX; default areas: Tidemark's packages and the libraries on the ingest path);
  - by the innermost frame of a given package (--own, default dev.tidemark.): the Tidemark method
    whose own code or library calls (HashMap, Arrays, ...) the sample was in;
  - samples by thread name (digits folded to N);
  - with --callers METHOD: the call chains (innermost --depth frames) of the samples whose top
    frame is METHOD (repeatable).
--filter SUBSTR keeps only the samples with a frame whose method name (class.method, without the
argument types) contains SUBSTR (e.g. RemoteWriteIngestor.resolve).
--window FROM,TO keeps the samples between two times of day (HH:MM:SS[.mmm], the recording's clock,
UTC here); --run takes them from a rw-ingest.sh result file (send_start_utc, send_end_utc: the
sending phase). Native samples of threads waiting (epoll, accept, poll, park, process wait) are
left out; their count is printed.
"""
import argparse
import collections
import re
import subprocess
import sys

DEFAULT_AREAS = [
    ("remote write handler (receiver.http.RemoteWriteHandler)", "dev.tidemark.receiver.http.RemoteWriteHandler"),
    ("remote write ingestor (receiver.remotewrite)", "dev.tidemark.receiver.remotewrite."),
    ("  of which WriteDecoder", "dev.tidemark.receiver.remotewrite.WriteDecoder"),
    ("OTLP receiver (receiver, other)", "dev.tidemark.receiver.Otlp"),
    ("translator (dev.tidemark.translator)", "dev.tidemark.translator."),
    ("engine (dev.tidemark.tsdb)", "dev.tidemark.tsdb."),
    ("RocksDB (org.rocksdb)", "org.rocksdb."),
    ("snappy (org.xerial.snappy)", "org.xerial.snappy."),
    ("Jetty (org.eclipse.jetty)", "org.eclipse.jetty."),
    ("gRPC / Netty", "io.grpc."),
    ("Netty", "io.netty."),
    ("Caffeine", "com.github.benmanes.caffeine."),
    ("hash4j (XXH3)", "com.dynatrace.hash4j."),
    ("Prometheus client metrics", "io.prometheus.metrics."),
]


IDLE_TOP = ("sun.nio.ch.EPoll.wait", "sun.nio.ch.Net.accept", "sun.nio.ch.Net.poll",
            "io.grpc.netty.shaded.io.netty.channel.epoll.Native.epollWait", "jdk.internal.misc.Unsafe.park",
            "java.lang.ProcessHandleImpl.waitForProcessExit0", "java.lang.Object.wait", "java.lang.Thread.sleep",
            "sun.nio.ch.SocketDispatcher.read0", "sun.nio.ch.FileDispatcherImpl.read0")


def events(path, native):
    kinds = "jdk.ExecutionSample" + (",jdk.NativeMethodSample" if native else "")
    out = subprocess.run(["jfr", "print", "--events", kinds, "--stack-depth", "128", path],
                         check=True, capture_output=True, text=True).stdout
    ev = None
    in_stack = False
    for line in out.splitlines():
        s = line.strip()
        if re.match(r"^jdk\.(ExecutionSample|NativeMethodSample) \{$", s):
            ev = {"kind": s.split()[0], "thread": "?", "frames": [], "time": ""}
            in_stack = False
        elif ev is None:
            continue
        elif s.startswith("startTime = "):
            ev["time"] = s.split("=", 1)[1].strip().split()[0]
        elif s.startswith("sampledThread = "):
            m = re.match(r'sampledThread = "(.*)" \(', s)
            ev["thread"] = m.group(1) if m else s
        elif s.startswith("stackTrace = ["):
            in_stack = True
        elif in_stack and s == "]":
            in_stack = False
        elif in_stack:
            if s != "...":
                ev["frames"].append(re.sub(r"\s+line: \d+$", "", s))
        elif s == "}" and not in_stack:
            yield ev
            ev = None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--filter")
    ap.add_argument("--area", action="append", default=[])
    ap.add_argument("--native", action="store_true")
    ap.add_argument("--window")
    ap.add_argument("--run")
    ap.add_argument("--own", default="dev.tidemark.")
    ap.add_argument("--callers", action="append", default=[])
    ap.add_argument("--depth", type=int, default=5)
    a = ap.parse_args()
    areas = [tuple(x.split("=", 1)) for x in a.area] or DEFAULT_AREAS
    window = None
    if a.run:
        kv = dict(l.strip().split("=", 1) for l in open(a.run) if l.startswith("send_"))
        window = (kv["send_start_utc"], kv["send_end_utc"])
    elif a.window:
        window = tuple(a.window.split(","))
    evs = [e for e in events(a.file, a.native) if e["frames"]]
    if window:
        evs = [e for e in evs if window[0] <= e["time"] <= window[1]]
    idle = [e for e in evs if e["kind"] == "jdk.NativeMethodSample" and e["frames"][0].startswith(IDLE_TOP)]
    evs = [e for e in evs if not (e["kind"] == "jdk.NativeMethodSample" and e["frames"][0].startswith(IDLE_TOP))]
    total_all = len(evs)
    if a.filter:
        evs = [e for e in evs if any(a.filter in f.split("(", 1)[0] for f in e["frames"])]
    n = len(evs)
    if n == 0:
        print("no samples"); return
    kinds = collections.Counter(e["kind"] for e in evs)
    print(f"# {a.file}: {n} samples" + (f" with a frame containing {a.filter!r} (of {total_all})" if a.filter else "")
          + " (" + ", ".join(f"{k} {v}" for k, v in kinds.items()) + ")"
          + (f", window {window[0]}-{window[1]}" if window else "")
          + (f"; {len(idle)} native samples of waiting threads left out" if a.native else ""))
    pct = lambda c: f"{100.0 * c / n:5.1f} %"

    def method(f):
        return re.sub(r"\(.*\)$", "", f)

    top = collections.Counter(method(e["frames"][0]) for e in evs)
    print(f"\n## top frames (self), {a.top} first")
    for m, c in top.most_common(a.top):
        print(f"{pct(c)}  {c:6d}  {m}")
    incl = collections.Counter()
    for e in evs:
        for m in set(method(f) for f in e["frames"]):
            incl[m] += 1
    print(f"\n## inclusive by method (frame anywhere on the stack), {a.top} first")
    for m, c in incl.most_common(a.top):
        print(f"{pct(c)}  {c:6d}  {m}")
    print("\n## inclusive by area (a sample counts once per area)")
    for name, prefix in areas:
        c = sum(1 for e in evs if any(f.startswith(prefix) for f in e["frames"]))
        print(f"{pct(c)}  {c:6d}  {name}")
    own = collections.Counter()
    for e in evs:
        m = next((method(f) for f in e["frames"] if f.startswith(a.own)), "(no " + a.own + " frame)")
        own[m] += 1
    print(f"\n## by innermost {a.own} frame (its own code and the library code it called), {a.top} first")
    for m, c in own.most_common(a.top):
        print(f"{pct(c)}  {c:6d}  {m}")
    for target in a.callers:
        chains = collections.Counter(" <- ".join(method(f).rsplit(".", 2)[-2] + "." + method(f).rsplit(".", 1)[-1]
                                                 for f in e["frames"][:a.depth])
                                     for e in evs if method(e["frames"][0]) == target)
        print(f"\n## call chains of {target} (top {a.depth} frames)")
        for ch, c in chains.most_common(10):
            print(f"{pct(c)}  {c:6d}  {ch}")
    th = collections.Counter(re.sub(r"\d+", "N", e["thread"]) for e in evs)
    print("\n## by thread")
    for t, c in th.most_common(12):
        print(f"{pct(c)}  {c:6d}  {t}")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:   # | head
        sys.exit(0)
