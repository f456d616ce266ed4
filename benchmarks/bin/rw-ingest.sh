#!/usr/bin/env bash
# Remote-write ingest beside OTLP/gRPC and the peers, in one run. The peer harness' load generator
# (../shared/bench/peers, `loadgen rw` / `loadgen otlp-grpc`) sends the same 10k-series x 6 h
# dataset (14.4M samples, bit-identical for one --start-ms, --threads=4 --batch=2000) to
#   tm-rw    a fresh Tidemark, Prometheus remote write 1.0 on POST /api/v1/write (HTTP API port)
#   tm-otlp  a fresh Tidemark, OTLP/gRPC
#   prom-rw  a fresh Prometheus 2.42, remote write 1.0 (the harness' start-prom.sh, 127.0.0.1:9090)
#   vm-rw    a fresh VictoriaMetrics 1.79.5, remote write 1.0 (the harness' start-vm.sh, 127.0.0.1:8428)
# and measures each server process as the harness does (procstat.sh, mon.sh: /proc/PID/stat utime +
# stime, VmHWM): wall time and samples/s of the sending phase (the load generator's RESULT line),
# server CPU-seconds over that phase, samples per server CPU-second, peak RSS, errors, and the
# samples the server counted as stored (its own /metrics). It then prints a side-by-side table of
# the medians over the rounds and the floor check
#   "remote write: at least as many samples per CPU-second as OTLP/gRPC" (met / NOT MET).
#
#   benchmarks/bin/rw-ingest.sh [options]
#   benchmarks/bin/rw-ingest.sh --rounds 3
#   benchmarks/bin/rw-ingest.sh --rounds 1 --systems tm-rw,tm-otlp --jfr    # profile both Tidemark runs
#
# Options:
#   --dir DIR            run folder (data, logs, results); default /tmp/rwbench-<UTC time>
#   --rounds N           rounds (default 2). Each round runs every system once, interleaved: odd
#                        rounds tm-rw, tm-otlp, prom-rw, vm-rw; even rounds tm-otlp, tm-rw, vm-rw,
#                        prom-rw (so neither Tidemark run always goes first)
#   --systems LIST       any of tm-rw,tm-otlp,prom-rw,vm-rw (default all four)
#   --start-ms N         dataset start (ms), the same for every system and round; default now - 6 h,
#                        aligned to 15 s (the data then lies in buckets the compactors leave alone)
#   --tm-ports G,H,A,M   Tidemark OTLP/gRPC, OTLP/HTTP, HTTP API (remote write), admin; all on
#                        127.0.0.1; default 38517,38518,38590,38591
#   --wait-load X[,S]    before every measured run wait (polling every 20 s) up to S s (default 900)
#                        for a 1-minute load average below X (default 1.0,900); the load at the
#                        start and end of every run is recorded beside its figures either way.
#                        --wait-load 0 does not wait
#   --jfr                record both Tidemark runs with JFR (settings=profile, -XX:+DebugNonSafepoints)
#                        from their start:
#                        DIR/results/tm-rw-rN.jfr, tm-otlp-rN.jfr (figures then include JFR's cost;
#                        compare them only with each other). benchmarks/bin/jfr-top.py FILE.jfr
#                        --run DIR/results/tm-rw-rN.txt summarises the sending phase
#   --keep-data          keep the data folders (default: deleted after each run)
#   --gen-opts "OPTS"    extra load generator options, e.g. "--instances=2 --hours=1" for a smoke
#                        test (a different dataset: not the benchmark)
# Environment:
#   PEERS_DIR        the peer harness (default: ../shared/bench/peers next to this checkout)
#   LOADGEN_JAR      its load generator (default: built by its build-loadgen.sh into DIR/peers)
#   TIDEMARK_JAR     server jar (default: server/target/tidemark.jar, built if missing; copied to DIR)
#   SERVER_JAVA_OPTS Tidemark JVM options, the same for both Tidemark runs (default: -Xmx4g, the
#                    harness' start-tm.sh heap; otlp-ingest.sh's -XX:+AlwaysPreTouch is left out:
#                    it makes peak RSS the heap size)
#   SERVER_ARGS      extra Tidemark options (both runs)
#   GEN_JAVA_OPTS    load generator JVM options (default -Xmx6g, as the harness' ingest.sh)
# CPU window: from the load generator's "built N requests" line (requests encoded, sending starts)
# to its exit; DIR/results/SYS-rN.txt also has the harness' ingest.sh window (from before the load
# generator starts). Every server is stopped by its PID (SIGTERM) after its run.
# Output: DIR/results/SYS-rN.txt (+ -mon.csv) per run, DIR/results/table.txt.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
peers="${PEERS_DIR:-$(cd "$root/.." && pwd)/shared/bench/peers}"
dir="/tmp/rwbench-$(date -u +%Y%m%d-%H%M%S)"
rounds=2; systems="tm-rw,tm-otlp,prom-rw,vm-rw"; start_ms=""; tm_ports="38517,38518,38590,38591"
wait_load="1.0,900"; jfr=0; keep_data=0; gen_opts=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dir) dir="$2"; shift 2;;
    --rounds) rounds="$2"; shift 2;;
    --systems) systems="$2"; shift 2;;
    --start-ms) start_ms="$2"; shift 2;;
    --tm-ports) tm_ports="$2"; shift 2;;
    --wait-load) wait_load="$2"; shift 2;;
    --jfr) jfr=1; shift;;
    --keep-data) keep_data=1; shift;;
    --gen-opts) gen_opts="$2"; shift 2;;
    -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0;;
    *) echo "unknown option $1 (--help)" >&2; exit 2;;
  esac
done
IFS=, read -r tm_grpc tm_otlp_http tm_http tm_admin <<<"$tm_ports"
has() { [[ ",$systems," == *",$1,"* ]]; }
for s in ${systems//,/ }; do
  case "$s" in tm-rw|tm-otlp|prom-rw|vm-rw) ;; *) echo "unknown system $s (--help)" >&2; exit 2;; esac
done
[[ -f "$peers/bin/start-prom.sh" ]] || { echo "no peer harness at $peers (set PEERS_DIR)" >&2; exit 2; }
has prom-rw && ! command -v prometheus >/dev/null && { echo "prometheus missing (Debian package prometheus 2.42)" >&2; exit 2; }
has vm-rw && ! command -v victoria-metrics >/dev/null && { echo "victoria-metrics missing (Debian package victoria-metrics 1.79)" >&2; exit 2; }

mkdir -p "$dir/results" "$dir/logs" "$dir/data"
dir="$(cd "$dir" && pwd)"; res="$dir/results"
export PEERS_HOME="$dir/peers"   # the harness' scratch folder: pid files, peer logs, loadgen build
mkdir -p "$PEERS_HOME"
log() { echo "$(date -u +%H:%M:%S) $*" | tee -a "$res/run.log"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

if [[ -z "${LOADGEN_JAR:-}" ]]; then
  LOADGEN_JAR="$(bash "$peers/bin/build-loadgen.sh" | tail -1)"
fi
gen=(java ${GEN_JAVA_OPTS:--Xmx6g} -jar "$LOADGEN_JAR")
server_jar="${TIDEMARK_JAR:-$root/server/target/tidemark.jar}"
if has tm-rw || has tm-otlp; then
  [[ -f "$server_jar" ]] || (cd "$root" && mvn -B -q -ntp -pl server -am package -DskipTests)
  cp "$server_jar" "$dir/tidemark.jar"   # a private copy: other builds may rewrite target/
fi
server_opts="${SERVER_JAVA_OPTS:--Xmx4g}"
if [[ -z "$start_ms" ]]; then start_ms=$(( ($(date +%s%3N) / 15000) * 15000 - 6 * 3600000 )); fi
echo "$start_ms" > "$dir/start_ms"; echo "$start_ms" > "$PEERS_HOME/start_ms"

server_pid=""
stop_server() { # SIGTERM to the server this script started, by its PID; wait for it to exit
  [[ -n "$server_pid" ]] || return 0
  if kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid"
    for _ in $(seq 1 240); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.25; done
    if kill -0 "$server_pid" 2>/dev/null; then
      log "pid $server_pid still running 60 s after SIGTERM: SIGKILL"; kill -KILL "$server_pid" 2>/dev/null || true
    fi
  fi
  server_pid=""
  rm -f "$PEERS_HOME/prom.pid" "$PEERS_HOME/vm.pid"
}
trap 'stop_server; [[ "$keep_data" == 1 ]] || rm -rf "$dir/data"' EXIT

port_busy() { ss -Hltn "sport = :$1" | grep -q .; }
wait_port_free() { # port: another run of the harness may hold the peers' fixed ports
  for _ in $(seq 1 90); do port_busy "$1" || return 0; sleep 10; done
  echo "port $1 still in use after 15 min" >&2; return 1
}
wait_ready() { # url pid name
  for _ in $(seq 1 240); do
    curl -fsS "$1" >/dev/null 2>&1 && return 0
    kill -0 "$2" 2>/dev/null || { log "$3 exited during start"; return 1; }
    sleep 0.5
  done
  log "$3 not ready"; return 1
}
wait_quiet() {
  IFS=, read -r lmax lwait <<<"$wait_load"; lwait=${lwait:-900}
  awk -v x="$lmax" 'BEGIN {exit !(x > 0)}' || return 0
  local t0; t0=$(date +%s)
  until awk -v x="$lmax" '{exit !($1 < x)}' /proc/loadavg; do
    if (( $(date +%s) - t0 >= lwait )); then log "load $(load) still >= $lmax after ${lwait} s: measuring anyway"; return 0; fi
    sleep 20
  done
}
metric_sum() { # url name [label filter regex]: sum of the samples of a metric in a /metrics page
  curl -fsS "$1" 2>/dev/null | awk -v m="$2" -v f="${3:-}" '($1==m || index($1, m "{")==1) && (f=="" || $1 ~ f) {s+=$2} END {printf "%.0f", s+0}'
}

tm_ports_free() {
  for p in "$tm_grpc" "$tm_otlp_http" "$tm_http" "$tm_admin"; do
    if port_busy "$p"; then echo "port $p is in use: pick others (--tm-ports)" >&2; return 1; fi
  done
}
if has tm-rw || has tm-otlp; then tm_ports_free; fi

# start SYS ROUND: a fresh server for SYS, its PID in server_pid, its /metrics URL in metrics_url
start() {
  local sys=$1 r=$2 d="$dir/data/$1-r$2"
  rm -rf "$d"
  case "$sys" in
    tm-*)
      tm_ports_free || return 1
      local opts="$server_opts"
      # DebugNonSafepoints: without it JFR puts a sample of compiled code on the nearest safepoint's
      # frame, which can be another method inlined into the same compiled code
      [[ "$jfr" == 1 ]] && opts+=" -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints -XX:StartFlightRecording=filename=$res/$sys-r$r.jfr,settings=profile"
      # shellcheck disable=SC2086 # option lists
      java $opts -jar "$dir/tidemark.jar" --data-dir "$d" --otlp-grpc-port "$tm_grpc" \
        --otlp-http-port "$tm_otlp_http" --http-port "$tm_http" --admin-port "$tm_admin" \
        ${SERVER_ARGS:-} >"$dir/logs/$sys-r$r.log" 2>&1 &
      server_pid=$!
      metrics_url="http://127.0.0.1:$tm_http/metrics"
      wait_ready "http://127.0.0.1:$tm_http/-/ready" "$server_pid" "$sys";;
    prom-rw)
      wait_port_free 9090 || return 1
      bash "$peers/bin/start-prom.sh" "$d" >/dev/null || return 1
      server_pid=$(cat "$PEERS_HOME/prom.pid"); metrics_url="http://127.0.0.1:9090/metrics"
      wait_ready "http://127.0.0.1:9090/-/ready" "$server_pid" "$sys";;
    vm-rw)
      wait_port_free 8428 || return 1
      bash "$peers/bin/start-vm.sh" "$d" >/dev/null || return 1
      server_pid=$(cat "$PEERS_HOME/vm.pid"); metrics_url="http://127.0.0.1:8428/metrics"
      wait_ready "http://127.0.0.1:8428/health" "$server_pid" "$sys";;
  esac
}

# The samples each server counts as stored (its own metrics), read after the load generator's last answer.
stored() {
  case "$1" in
    tm-rw) metric_sum "$metrics_url" tidemark_remote_write_samples_written_total;;
    tm-otlp) metric_sum "$metrics_url" tidemark_otlp_data_points_accepted_total 'protocol="grpc"';;
    prom-rw) metric_sum "$metrics_url" prometheus_tsdb_head_samples_appended_total;;
    vm-rw) metric_sum "$metrics_url" vm_rows_inserted_total 'type="promremotewrite"';;
  esac
}

# measure SYS ROUND: one ingest into a fresh server, as the harness' ingest.sh does
measure() {
  local sys=$1 r=$2 out="$res/$1-r$2.txt" mode target
  case "$sys" in
    tm-rw) mode=rw; target="http://127.0.0.1:$tm_http/api/v1/write";;
    tm-otlp) mode=otlp-grpc; target="127.0.0.1:$tm_grpc";;
    prom-rw) mode=rw; target="http://127.0.0.1:9090/api/v1/write";;
    vm-rw) mode=rw; target="http://127.0.0.1:8428/api/v1/write";;
  esac
  wait_quiet
  log "$sys round $r: start (load $(load))"
  if ! start "$sys" "$r"; then
    echo "system=$sys round=$r FAILED to start" >"$out"; stop_server; return 0
  fi
  sleep 2
  local p=$server_pid
  { echo "system=$sys round=$r pid=$p mode=$mode target=$target start_ms=$start_ms"
    echo "server_java_opts=$([[ $sys == tm-* ]] && echo "$server_opts ${SERVER_ARGS:-}$([[ $jfr == 1 ]] && echo " + JFR")" || echo -)"
    echo "load_start=$(load)"
    echo "before: $(bash "$peers/bin/procstat.sh" "$p")"; } >"$out"
  bash "$peers/bin/mon.sh" "$p" "$res/$sys-r$r-mon.csv" &
  local mon=$! rc=0
  command time -f "loadgen: wall=%e s user=%U s sys=%S s maxrss=%M kB" \
    "${gen[@]}" "$mode" "$target" --start-ms="$start_ms" --threads=4 --batch=2000 $gen_opts 2>&1 \
    | while IFS= read -r line; do
        case "$line" in
          "  "*) ;;   # progress lines
          *": built "*) echo "$line"; echo "send start: $(bash "$peers/bin/procstat.sh" "$p")"
            echo "send_start_utc=$(date -u +%H:%M:%S.%3N)";;
          *) echo "$line";;
        esac
      done >>"$out" || rc=$?
  { echo "after ingest: $(bash "$peers/bin/procstat.sh" "$p")"
    echo "send_end_utc=$(date -u +%H:%M:%S.%3N)"
    echo "loadgen_exit=$rc"
    echo "stored=$(stored "$sys")"
    echo "load_end=$(load)"; } >>"$out"
  kill "$mon" 2>/dev/null || true; wait "$mon" 2>/dev/null || true
  stop_server
  case "$sys" in   # the harness writes the peers' logs to one file each; keep this run's
    prom-rw) cp "$PEERS_HOME/logs/prom.log" "$dir/logs/$sys-r$r.log" 2>/dev/null || true;;
    vm-rw) cp "$PEERS_HOME/logs/vm.log" "$dir/logs/$sys-r$r.log" 2>/dev/null || true;;
  esac
  [[ "$keep_data" == 1 ]] || rm -rf "$dir/data/$sys-r$r"
  log "$sys round $r: $(grep -m1 '^RESULT' "$out" | grep -o 'wall_s=.*' || echo 'no RESULT line') (load $(load))"
}

log "run folder $dir, dataset start_ms=$start_ms ($(date -u -d @$((start_ms / 1000)) +%FT%TZ)), systems $systems, rounds $rounds, load $(load)"
log "tidemark: $(java -jar "$dir/tidemark.jar" --version 2>/dev/null | head -1 || true), JVM options: $server_opts ${SERVER_ARGS:-}$([[ $jfr == 1 ]] && echo ' + JFR settings=profile, DebugNonSafepoints')"
log "peers: $(dpkg-query -W -f '${Package} ${Version}, ' prometheus victoria-metrics 2>/dev/null || true)"
for r in $(seq 1 "$rounds"); do
  if (( r % 2 == 1 )); then order="tm-rw tm-otlp prom-rw vm-rw"; else order="tm-otlp tm-rw vm-rw prom-rw"; fi
  for s in $order; do
    if has "$s"; then measure "$s" "$r"; fi
  done
done

python3 - "$res" "$rounds" "$systems" <<'PY' | tee "$res/table.txt"
import re, statistics, sys
res, rounds, systems = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")
names = {"tm-rw": "Tidemark, remote write 1.0", "tm-otlp": "Tidemark, OTLP/gRPC",
         "prom-rw": "Prometheus 2.42, remote write 1.0", "vm-rw": "VictoriaMetrics 1.79.5, remote write 1.0"}
def kv(line):
    return dict(m.groups() for m in re.finditer(r"(\w+)=([^\s]+)", line))
runs = {}
for s in systems:
    for r in range(1, rounds + 1):
        try:
            lines = open(f"{res}/{s}-r{r}.txt").read().splitlines()
        except FileNotFoundError:
            continue
        d = {"round": r}
        for l in lines:
            if l.startswith("RESULT "): d["result"] = kv(l)
            elif l.startswith("before:"): d["cpu0"] = float(kv(l)["cpu_s"])
            elif l.startswith("send start:"): d["cpu1"] = float(kv(l)["cpu_s"])
            elif l.startswith("after ingest:"):
                a = kv(l); d["cpu2"] = float(a["cpu_s"]); d["hwm_kb"] = int(a["hwm_kb"])
            elif l.startswith("load_start="): d["load0"] = l.split("=", 1)[1].split()[0]
            elif l.startswith("load_end="): d["load1"] = l.split("=", 1)[1].split()[0]
            elif l.startswith("stored="): d["stored"] = l.split("=", 1)[1]
            elif l.startswith("loadgen_exit="): d["exit"] = l.split("=", 1)[1]
        if "result" in d and "cpu2" in d:
            n = int(d["result"]["samples"])
            d["n"] = n; d["wall"] = float(d["result"]["wall_s"]); d["sps"] = float(d["result"]["samples_per_s"])
            d["cpu"] = d["cpu2"] - d.get("cpu1", d["cpu0"]); d["cpu_whole"] = d["cpu2"] - d["cpu0"]
            d["spc"] = n / d["cpu"] if d["cpu"] > 0 else float("nan")
            d["errors"] = int(d["result"].get("errors", "0")) + int(d["result"].get("rejected_points", "0"))
        else:
            d["failed"] = True
        runs.setdefault(s, []).append(d)
med = lambda xs: statistics.median(xs) if xs else float("nan")
print("# per run: wall s, samples/s, server CPU-s over the sending phase, samples per server CPU-s, peak RSS MB,")
print("# errors (load generator errors + rejected points), samples the server counted as stored, 1-min load at start -> end")
print("| system | round | wall s | samples/s | server CPU-s | samples / CPU-s | peak RSS MB | errors | stored | load |")
print("|---|---|---|---|---|---|---|---|---|---|")
for s in systems:
    for d in runs.get(s, []):
        if d.get("failed"):
            print(f"| {names[s]} | {d['round']} | FAILED (see {s}-r{d['round']}.txt) |||||||| "); continue
        print(f"| {names[s]} | {d['round']} | {d['wall']:.1f} | {d['sps']:,.0f} | {d['cpu']:.1f} | {d['spc']:,.0f} | "
              f"{d['hwm_kb'] / 1024:,.0f} | {d['errors']} | {int(d.get('stored') or 0):,} | {d.get('load0')} -> {d.get('load1')} |")
print()
print(f"# medians over {rounds} round(s)")
print("| system | wall s | samples/s | server CPU-s | samples / CPU-s | peak RSS MB | errors (all runs) | runs |")
print("|---|---|---|---|---|---|---|---|")
ok = {s: [d for d in runs.get(s, []) if not d.get("failed")] for s in systems}
for s in systems:
    ds = ok[s]
    if not ds:
        print(f"| {names[s]} | – | – | – | – | – | – | 0 |"); continue
    print(f"| {names[s]} | {med([d['wall'] for d in ds]):.1f} | {med([d['sps'] for d in ds]):,.0f} | "
          f"{med([d['cpu'] for d in ds]):.1f} | {med([d['spc'] for d in ds]):,.0f} | "
          f"{med([d['hwm_kb'] / 1024 for d in ds]):,.0f} | {sum(d['errors'] for d in ds)} | {len(ds)} |")
bad = [f"{s} r{d['round']}" for s in systems for d in ok[s]
       if d["errors"] or d.get("exit") != "0" or int(d.get("stored") or 0) < d["n"]]
print()
if bad:
    print("WARNING: errors, a failed load generator or fewer samples stored than sent in: " + ", ".join(bad))
if ok.get("tm-rw") and ok.get("tm-otlp"):
    rw, otlp = med([d["spc"] for d in ok["tm-rw"]]), med([d["spc"] for d in ok["tm-otlp"]])
    pairs = {d["round"]: d["spc"] for d in ok["tm-otlp"]}
    won = sum(1 for d in ok["tm-rw"] if d["round"] in pairs and d["spc"] >= pairs[d["round"]])
    print(f"floor: remote write: at least as many samples per CPU-second as OTLP/gRPC: "
          f"{rw:,.0f} vs {otlp:,.0f} (median, ratio {rw / otlp:.2f}; {won} of {len(pairs)} rounds) -> "
          f"{'met' if rw >= otlp else 'NOT MET'}")
PY
log "done; load $(load); results in $res"
