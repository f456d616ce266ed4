#!/usr/bin/env bash
# Query benchmark beside Prometheus and VictoriaMetrics (issue #11): the same 10k-series x 6 h
# node-exporter-like dataset goes into a fresh Tidemark over OTLP/gRPC and into Prometheus 2.42 and
# VictoriaMetrics 1.79 over remote write 1.0, all from the peer harness' load generator with the same
# --start-ms (bit-identical samples); then the eight queries of the peer harness' qbench.py (first
# run, median and min of the next RUNS) run against each system in turn, and the three are printed
# side by side with qbench.py's result checksums (series, points, sum of all returned values).
#
#   benchmarks/bin/query-bench.sh [options]
#
# Options (every port binds 127.0.0.1 only; the script refuses a port something already listens on):
#   --dir DIR                 run folder (data, logs, results); default /tmp/qbench-<UTC time>
#   --tm-ports G,H,A,M        Tidemark OTLP/gRPC, OTLP/HTTP, HTTP (query API), admin; default 37317,37318,39090,39091
#   --prom-port N             Prometheus; default 39190
#   --vm-port N               VictoriaMetrics; default 38428
#   --systems LIST            any of tidemark,prometheus,victoriametrics; default all three
#   --start-ms N              dataset start (ms); default now - 6 h, aligned to 15 s
#   --runs N                  timed runs after the first, per query (qbench.py --runs); default 5
#   --rounds N                query passes over the systems, interleaved (tm, prom, vm, tm, ...); default 1
#   --warmup N                untimed passes first, interleaved the same way (default 0). Tidemark is a JVM:
#                             a fresh process interprets code the first few hundred times it runs, so one
#                             pass of six runs per query mostly measures the JIT compiler (see
#                             docs/benchmarks.md); the warm-up passes' figures are kept (DIR/results/*-qw*.txt)
#                             and printed under the table as the fresh-process figures
#   --warmup-runs N           qbench.py --runs of each warm-up pass (default: RUNS); e.g. --warmup 1
#                             --warmup-runs 200 runs each query 201 times on every system before timing
#   --wait-load X[,S]         before each pass, wait up to S s (default 300) for a 1-min load below X
#   --check-shift-ms N        after the timed passes, one more checksum-only pass (qbench.py --runs=1) with every
#                             query time moved N ms later (default 1; 0: none), see below
#   --jfr FILE                record Tidemark with JFR (settings=profile) over its query passes only
#   --keep-running            leave the three servers running at the end (their PIDs are printed)
#   --keep-data               keep the run folder (default: data folders deleted, results and logs kept)
# Environment:
#   PEERS_DIR        the peer harness (default: ../shared/bench/peers next to this checkout)
#   LOADGEN_JAR      the harness' load generator (default: built by its build-loadgen.sh into DIR/peers)
#   TIDEMARK_JAR     server jar (default: server/target/tidemark.jar, built if missing; copied to DIR)
#   SERVER_JAVA_OPTS Tidemark JVM options (default: -Xmx4g; until session 13 also the launcher's
#                    -XX:CompileThresholdScaling=0.1, which the launcher no longer passes)
#   SERVER_ARGS      extra Tidemark options
#
# Tidemark is sealed after ingest (`tidemark admin flush`, then `admin compact`); Prometheus is
# queried after its head compaction has cut its blocks; VictoriaMetrics after force_flush,
# force_merge and settled merges, and with nocache=1 (qbench.py --nocache), as the harness does.
#
# Checksums. Tidemark evaluates as Prometheus 3 does: range windows and the lookback are left-open,
# (t - range, t]. Prometheus 2.42 closes them, [t - range, t]. The dataset puts one instance
# (node-000, scrape offset 0) on the 15 s grid of START_MS, so at qbench.py's own query times a
# sample of it lies exactly on every window's left edge, and the checksums of the queries that
# read windows (rate, count_over_time) differ for that reason alone. In the shifted pass no
# sample lies on a window edge (the other 99 instances have scrape offsets 84 ms, 168 ms, ...), so
# there Tidemark and Prometheus must agree. VictoriaMetrics' rate does not extrapolate (it uses
# the sample before the window), so its rate checksums differ from both by design.
# benchmarks/bin/query-diff.py compares one query point by point between two systems.
# Output: DIR/results/*.txt (qbench.py lines per system and pass), then the side-by-side table
# (DIR/results/table.txt) and the floors.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
peers="${PEERS_DIR:-$(cd "$root/.." && pwd)/shared/bench/peers}"
dir="/tmp/qbench-$(date -u +%Y%m%d-%H%M%S)"
tm_ports="37317,37318,39090,39091"; prom_port=39190; vm_port=38428
systems="tidemark,prometheus,victoriametrics"
start_ms=""; runs=5; rounds=1; warmup=0; warmup_runs=""; shift_ms=1; wait_load=""; jfr=""; keep_running=0; keep_data=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dir) dir="$2"; shift 2;;
    --tm-ports) tm_ports="$2"; shift 2;;
    --prom-port) prom_port="$2"; shift 2;;
    --vm-port) vm_port="$2"; shift 2;;
    --systems) systems="$2"; shift 2;;
    --start-ms) start_ms="$2"; shift 2;;
    --runs) runs="$2"; shift 2;;
    --rounds) rounds="$2"; shift 2;;
    --warmup) warmup="$2"; shift 2;;
    --warmup-runs) warmup_runs="$2"; shift 2;;
    --check-shift-ms) shift_ms="$2"; shift 2;;
    --wait-load) wait_load="$2"; shift 2;;
    --jfr) jfr="$(realpath -m "$2")"; shift 2;;
    --keep-running) keep_running=1; shift;;
    --keep-data) keep_data=1; shift;;
    -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0;;
    *) echo "unknown option $1 (--help)" >&2; exit 2;;
  esac
done
IFS=, read -r tm_grpc tm_otlp_http tm_http tm_admin <<<"$tm_ports"
has() { [[ ",$systems," == *",$1,"* ]]; }
qbench="$peers/bin/qbench.py"
[[ -f "$qbench" ]] || { echo "no $qbench (set PEERS_DIR)" >&2; exit 2; }

ports=()
has tidemark && ports+=("$tm_grpc" "$tm_otlp_http" "$tm_http" "$tm_admin")
has prometheus && ports+=("$prom_port")
has victoriametrics && ports+=("$vm_port")
for p in "${ports[@]}"; do
  if ss -Hltn "sport = :$p" | grep -q .; then echo "port $p is in use: pick others (--help)" >&2; exit 1; fi
done
has prometheus && ! command -v prometheus >/dev/null && { echo "prometheus missing: apt-get install -y --no-install-recommends prometheus" >&2; exit 2; }
has victoriametrics && ! command -v victoria-metrics >/dev/null && { echo "victoria-metrics missing: apt-get install -y --no-install-recommends victoria-metrics" >&2; exit 2; }

mkdir -p "$dir/results" "$dir/logs" "$dir/data"
dir="$(cd "$dir" && pwd)"; res="$dir/results"
log() { echo "$(date -u +%H:%M:%S) $*" | tee -a "$res/run.log"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

if [[ -z "${LOADGEN_JAR:-}" ]]; then
  LOADGEN_JAR="$(PEERS_HOME="$dir/peers" bash "$peers/bin/build-loadgen.sh" | tail -1)"
fi
server_jar="${TIDEMARK_JAR:-$root/server/target/tidemark.jar}"
if has tidemark; then
  [[ -f "$server_jar" ]] || (cd "$root" && mvn -B -q -ntp -pl server -am package -DskipTests)
  cp "$server_jar" "$dir/tidemark.jar"   # a private copy: other builds may rewrite target/
fi
if [[ -z "$start_ms" ]]; then start_ms=$(( ($(date +%s%3N) / 15000) * 15000 - 6 * 3600000 )); fi
echo "$start_ms" > "$dir/start_ms"
gen=(java -Xmx6g -jar "$LOADGEN_JAR")

declare -A pid=()
cleanup() {
  if [[ "$keep_running" == 1 ]]; then
    for s in "${!pid[@]}"; do echo "left running: $s pid ${pid[$s]}"; done
    return
  fi
  for s in "${!pid[@]}"; do
    if kill -0 "${pid[$s]}" 2>/dev/null; then kill -TERM "${pid[$s]}"; fi
  done
  for s in "${!pid[@]}"; do
    for _ in $(seq 1 120); do kill -0 "${pid[$s]}" 2>/dev/null || break; sleep 0.5; done
  done
  if [[ "$keep_data" != 1 ]]; then rm -rf "$dir/data"; fi
}
trap cleanup EXIT

wait_http() { # url pid name
  for _ in $(seq 1 240); do
    curl -fsS "$1" >/dev/null 2>&1 && return 0
    kill -0 "$2" 2>/dev/null || { echo "$3 exited:"; tail -20 "$dir/logs/$3.log"; exit 1; }
    sleep 0.5
  done
  echo "$3 not ready"; exit 1
}
ingest() { # name args...
  local name=$1; shift
  log "$name: ingest (load $(load))"
  "${gen[@]}" "$@" --start-ms="$start_ms" --threads=4 --batch=2000 2>&1 | grep -v '^  ' | tee "$res/$name-ingest.txt"
  grep -q 'errors=0' "$res/$name-ingest.txt" || { echo "$name: ingest reported errors" >&2; exit 1; }
}
metric() { curl -fsS "$1" | awk -v m="$2" '$1==m || index($1, m "{")==1 {s+=$2} END {print s+0}'; }

log "run folder $dir, dataset start_ms=$start_ms ($(date -u -d @$((start_ms / 1000)) +%FT%TZ)), load $(load)"

# ---- Tidemark: OTLP/gRPC, then seal (flush) and compact through the admin API
if has tidemark; then
  tm_url="http://127.0.0.1:$tm_http"
  # shellcheck disable=SC2086 # option lists
  java ${SERVER_JAVA_OPTS:--Xmx4g} -jar "$dir/tidemark.jar" --data-dir "$dir/data/tidemark" \
    --otlp-grpc-port "$tm_grpc" --otlp-http-port "$tm_otlp_http" --http-port "$tm_http" --admin-port "$tm_admin" \
    ${SERVER_ARGS:-} >"$dir/logs/tidemark.log" 2>&1 &
  pid[tidemark]=$!
  wait_http "$tm_url/-/ready" "${pid[tidemark]}" tidemark
  ingest tidemark otlp-grpc "127.0.0.1:$tm_grpc"
  adm() { java -jar "$dir/tidemark.jar" admin "$@" --address "127.0.0.1:$tm_admin" --timeout 10m; }
  t0=$(date +%s.%N); adm flush >"$res/tidemark-flush.txt" 2>&1 || { cat "$res/tidemark-flush.txt"; exit 1; }
  t1=$(date +%s.%N); adm compact >"$res/tidemark-compact.txt" 2>&1 || { cat "$res/tidemark-compact.txt"; exit 1; }
  t2=$(date +%s.%N)
  adm buckets >"$res/tidemark-buckets.txt" 2>&1 || true
  log "tidemark: flush $(echo "$t1 - $t0" | bc) s, compact $(echo "$t2 - $t1" | bc) s, head series $(metric "$tm_url/metrics" tidemark_head_series), data $(du -sh "$dir/data/tidemark" | cut -f1)"
fi

# ---- Prometheus: remote write, then wait for the head compaction (blocks cut, so it does not run during the queries)
if has prometheus; then
  prom_url="http://127.0.0.1:$prom_port"
  prometheus --config.file="$peers/prometheus.yml" \
    --web.listen-address="127.0.0.1:$prom_port" --web.enable-remote-write-receiver --web.enable-admin-api \
    --storage.tsdb.path="$dir/data/prometheus" --storage.tsdb.retention.time=3650d \
    >"$dir/logs/prometheus.log" 2>&1 &
  pid[prometheus]=$!
  wait_http "$prom_url/-/ready" "${pid[prometheus]}" prometheus
  ingest prometheus rw "$prom_url/api/v1/write"
  t0=$(date +%s); last=""; stable=0
  for _ in $(seq 1 240); do
    n=$(metric "$prom_url/metrics" prometheus_tsdb_compactions_total)
    if [[ "$n" != 0 && "$n" == "$last" ]]; then stable=$((stable + 1)); else stable=0; fi
    last=$n; [[ $stable -ge 15 ]] && break; sleep 1
  done
  log "prometheus: head compactions=$last after $(( $(date +%s) - t0 )) s, blocks $(find "$dir/data/prometheus" -maxdepth 2 -name meta.json | wc -l)"
fi

# ---- VictoriaMetrics: remote write, then force_flush, force_merge, wait for the merges to settle
if has victoriametrics; then
  vm_url="http://127.0.0.1:$vm_port"
  victoria-metrics -httpListenAddr="127.0.0.1:$vm_port" -storageDataPath="$dir/data/victoriametrics" \
    -retentionPeriod=100y >"$dir/logs/victoriametrics.log" 2>&1 &
  pid[victoriametrics]=$!
  wait_http "$vm_url/health" "${pid[victoriametrics]}" victoriametrics
  ingest victoriametrics rw "$vm_url/api/v1/write"
  curl -fsS "$vm_url/internal/force_flush" >/dev/null
  for part in $(printf '%s\n' "$(date -u -d @$((start_ms / 1000)) +%Y_%m)" "$(date -u +%Y_%m)" | sort -u); do
    curl -fsS "$vm_url/internal/force_merge?partition_prefix=$part" >/dev/null
  done
  t0=$(date +%s); last=""; stable=0
  for _ in $(seq 1 300); do
    m=$(curl -fsS "$vm_url/metrics")
    act=$(awk '/^vm_active_merges\{/{s+=$2} END {print s+0}' <<<"$m"); parts=$(awk '/^vm_parts\{/{s+=$2} END {print s+0}' <<<"$m")
    cur="$act/$parts"; if [[ "$act" == 0 && "$cur" == "$last" ]]; then stable=$((stable + 1)); else stable=0; fi
    last=$cur; [[ $stable -ge 10 ]] && break; sleep 1
  done
  curl -fsS "$vm_url/internal/force_flush" >/dev/null; sleep 2
  log "victoriametrics: merges settled (active/parts $last) after $(( $(date +%s) - t0 )) s"
fi

# ---- queries: qbench.py against each system in turn, ROUNDS passes
pass() { # system url round [qbench options]
  local s=$1 url=$2 r=$3; shift 3
  if [[ -n "$wait_load" ]]; then
    IFS=, read -r lmax lwait <<<"$wait_load"; lwait=${lwait:-300}
    for _ in $(seq 1 "$lwait"); do
      awk -v x="$lmax" '{exit !($1 < x)}' /proc/loadavg && break; sleep 1
    done
  fi
  local l; l="$(load)"
  log "$s: query pass $r (load $l)"
  echo "$s $r $l" >> "$res/loads.txt"
  local n=$runs; [[ "$r" == w* && -n "$warmup_runs" ]] && n=$warmup_runs
  python3 "$qbench" "$url" "$start_ms" --runs="$n" --label="$s" "$@" | tee "$res/$s-q$r.txt"
}
for w in $(seq 1 "$warmup"); do
  if has tidemark; then pass tidemark "$tm_url" "w$w"; fi
  if has prometheus; then pass prometheus "$prom_url" "w$w"; fi
  if has victoriametrics; then pass victoriametrics "$vm_url" "w$w" --nocache; fi
done
for r in $(seq 1 "$rounds"); do
  if has tidemark; then
    [[ -n "$jfr" ]] && jcmd "${pid[tidemark]}" JFR.start name=qbench settings=profile >/dev/null
    pass tidemark "$tm_url" "$r"
    [[ -n "$jfr" ]] && { jcmd "${pid[tidemark]}" JFR.stop name=qbench filename="${jfr%.jfr}-$r.jfr" >/dev/null; log "JFR: ${jfr%.jfr}-$r.jfr"; }
  fi
  if has prometheus; then pass prometheus "$prom_url" "$r"; fi
  if has victoriametrics; then pass victoriametrics "$vm_url" "$r" --nocache; fi
done

if [[ "$shift_ms" != 0 ]]; then
  log "checksum pass, query times +$shift_ms ms (load $(load))"
  if has tidemark; then python3 "$qbench" "$tm_url" $((start_ms + shift_ms)) --runs=1 --label=tidemark >"$res/tidemark-shift.txt"; fi
  if has prometheus; then python3 "$qbench" "$prom_url" $((start_ms + shift_ms)) --runs=1 --label=prometheus >"$res/prometheus-shift.txt"; fi
  if has victoriametrics; then python3 "$qbench" "$vm_url" $((start_ms + shift_ms)) --runs=1 --label=victoriametrics --nocache >"$res/victoriametrics-shift.txt"; fi
fi

# ---- side by side
python3 - "$res" "$rounds" "$systems" "$shift_ms" "$warmup" <<'PY' | tee "$res/table.txt"
import os, re, statistics, sys
res, rounds, systems, shift, warmup = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(","), int(sys.argv[4]), int(sys.argv[5])
short = {"tidemark": "Tidemark", "prometheus": "Prometheus", "victoriametrics": "VictoriaMetrics"}
rows = {}   # query -> system -> dict
order = []
for s in systems:
    for r in range(1, rounds + 1):
        for line in open(f"{res}/{s}-q{r}.txt"):
            f = line.rstrip("\n").split("\t")
            if len(f) < 3: continue
            q = f[1]
            if q not in order: order.append(q)
            d = rows.setdefault(q, {}).setdefault(s, {"first": [], "median": [], "sum": None, "err": None})
            if f[2].startswith("ERROR"):
                d["err"] = f[2]; continue
            kv = dict(x.split("=", 1) for x in f[2:])
            d["first"].append(float(kv["first"].rstrip("ms"))); d["median"].append(float(kv["median"].rstrip("ms")))
            d["sum"] = (kv["series"], kv["points"], kv["checksum"])
ms = lambda v: f"{v:.1f}"
print(f"# first run / median of the timed runs (ms){'; medians: median over ' + str(rounds) + ' passes' if rounds > 1 else ''}")
hdr = ["query"] + [f"{short[s]} first / median" for s in systems] + [f"{short[s]} series / points / checksum" for s in systems] + ["checksums"]
print("| " + " | ".join(hdr) + " |"); print("|" + "---|" * len(hdr))
fails = []; floor = None
for q in order:
    cells = [q]; sums = {}
    for s in systems:
        d = rows[q].get(s)
        if not d or d["err"]: cells.append(d["err"] if d else "-"); continue
        cells.append(f"{ms(d['first'][0])} / {ms(statistics.median(d['median']))}")
    for s in systems:
        d = rows[q].get(s)
        if d and d["sum"]: sums[s] = d["sum"]; cells.append(" / ".join(d["sum"]))
        else: cells.append("-")
    ref = sums.get("tidemark")
    if len(set(sums.values())) <= 1: verdict = "match"
    else:
        diff = [short[s] for s in sums if sums[s] != (ref if ref else next(iter(sums.values())))]
        verdict = "DIFFER: " + ", ".join(diff)
    cells.append(verdict)
    print("| " + " | ".join(cells) + " |")
    tm, pr = rows[q].get("tidemark"), rows[q].get("prometheus")
    if tm and pr and tm["median"] and pr["median"] and statistics.median(tm["median"]) > statistics.median(pr["median"]):
        fails.append(f"slower than Prometheus: {q} ({ms(statistics.median(tm['median']))} > {ms(statistics.median(pr['median']))} ms)")
    if tm and tm["median"] and q.startswith("range cpu"):
        m = statistics.median(tm["median"])
        floor = f"floor: {q}: Tidemark median {ms(m)} ms {'<=' if m <= 150 else '>'} 150 ms -> {'met' if m <= 150 else 'NOT MET'}"
if shift:
    print(f"\n# checksums with every query time {shift} ms later (no sample on a window edge)")
    print("| query | " + " | ".join(f"{short[s]} series / points / checksum" for s in systems) + " | checksums |")
    print("|" + "---|" * (len(systems) + 2))
    sh = {}
    for s in systems:
        for line in open(f"{res}/{s}-shift.txt"):
            f = line.rstrip("\n").split("\t")
            if len(f) < 3: continue
            if f[2].startswith("ERROR"): sh[(s, f[1])] = f[2]; continue
            kv = dict(x.split("=", 1) for x in f[2:])
            sh[(s, f[1])] = " / ".join((kv["series"], kv["points"], kv["checksum"]))
    for q in order:
        vals = {s: sh.get((s, q), "-") for s in systems}
        ref = vals.get("tidemark")
        diff = [short[s] for s in systems if vals[s] != ref] if ref else []
        print(f"| {q} | " + " | ".join(vals.values()) + " | " + ("match" if not diff else "DIFFER: " + ", ".join(diff)) + " |")
if warmup:
    print(f"\n# fresh processes: the first warm-up pass (untimed above), first run / median of the next runs (ms)")
    print("| query | " + " | ".join(short[s] for s in systems) + " |")
    print("|" + "---|" * (len(systems) + 1))
    cold = {}
    for s in systems:
        f = f"{res}/{s}-qw1.txt"
        if not os.path.exists(f): continue
        for line in open(f):
            p = line.rstrip("\n").split("\t")
            if len(p) < 3 or p[2].startswith("ERROR"): continue
            kv = dict(x.split("=", 1) for x in p[2:])
            cold[(s, p[1])] = f"{kv['first'].rstrip('ms')} / {kv['median'].rstrip('ms')}"
    for q in order:
        print(f"| {q} | " + " | ".join(cold.get((s, q), "-") for s in systems) + " |")
print()
try:
    print("1/5/15-min load at each pass: " + "; ".join(
        f"{short[l.split()[0]]} {l.split()[1]}: {' '.join(l.split()[2:])}" for l in open(f"{res}/loads.txt")))
except FileNotFoundError:
    pass
if floor: print(floor)
if "tidemark" in systems and "prometheus" in systems:
    print("floor: no query slower than Prometheus: " + ("met" if not fails else "NOT MET; " + "; ".join(fails)))
PY
log "done; load $(load); results in $res"
