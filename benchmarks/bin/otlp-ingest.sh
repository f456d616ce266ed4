#!/usr/bin/env bash
# OTLP/gRPC ingest benchmark, end to end (issue #5): a fresh Tidemark server process on a temporary
# data folder, bound to 127.0.0.1 on free ports; the OtlpLoadGenerator as a second process; a
# graceful stop (SIGTERM, which seals the head); bytes on disk.
#
#   benchmarks/bin/otlp-ingest.sh [generator options]
#   benchmarks/bin/otlp-ingest.sh --workload history --senders 4            # 10k series x 6 h, max rate
#   benchmarks/bin/otlp-ingest.sh --workload active --senders 4             # 100k series x 10 min, max rate
#   benchmarks/bin/otlp-ingest.sh --workload history --rate 250000          # paced: ack latency
#
# Environment:
#   SERVER_JAVA_OPTS  server JVM options (default: those ./tidemark passes, its default_java_opts)
#   SERVER_MALLOC_ARENA_MAX  glibc malloc arenas of the server (default 2, as ./tidemark)
#   SERVER_NMT=FILE   write `jcmd VM.native_memory summary` there before the stop (needs
#                     -XX:NativeMemoryTracking=summary in SERVER_JAVA_OPTS)
#   GEN_JAVA_OPTS     generator JVM options (default: -Xmx6g)
#   SERVER_ARGS       extra server options (e.g. --fsync)
#   TIDEMARK_JAR, BENCH_JAR   jars to use (default: built from this checkout, then copied to the run folder)
#   KEEP_DATA=1       keep the run folder (data, server log)
#   SERVER_JFR=FILE   record the server with JFR (settings=profile) into FILE over the timed phase
#                     (the generator's --server-jfr, through jcmd)
#   QUERY_CLIENTS=N   N clients sending heavy PromQL queries (benchmarks/bin/query-load.py) for
#                     the whole generator run: what queries cost ingestion (ack latency)
#   BUCKET_COMPACTION_WAIT_S=N   after the second start, wait up to N s for the server's bucket
#                     compactor (tidemark_bucket_compactions_total > 0, then no change for 10 s)
#                     before the full compaction; pass --start-ms so the data lies in a bucket
#                     group that is already due (e.g. an 8-hour range two days ago)
# Output: the generator's RESULT lines, then RESULT disk / RESULT server lines.
set -euo pipefail

if [[ "${1:-}" == --help || "${1:-}" == -h ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'   # this header
  exit 0
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
server_jar="${TIDEMARK_JAR:-$root/server/target/tidemark.jar}"
bench_jar="${BENCH_JAR:-$root/benchmarks/target/benchmarks.jar}"

if [[ ! -f "$server_jar" ]]; then
  (cd "$root" && mvn -B -q -ntp -pl server -am package -DskipTests)
fi
if [[ ! -f "$bench_jar" ]]; then
  (cd "$root" && mvn -B -q -ntp -pl benchmarks -am install -DskipTests)
fi

run="$(mktemp -d /tmp/tidemark-otlp-bench.XXXXXX)"
# Private copies: other builds may rewrite target/ while this runs.
cp "$server_jar" "$run/tidemark.jar"
cp "$bench_jar" "$run/benchmarks.jar"

server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  if [[ "${KEEP_DATA:-0}" != 1 ]]; then
    rm -rf "$run"
  else
    echo "run folder kept: $run" >&2
  fi
}
trap cleanup EXIT

read -r grpc_port http_port api_port admin_port < <(python3 - <<'PY'
import socket
socks = []
for _ in range(4):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s)
print(*[s.getsockname()[1] for s in socks])
PY
)

admin_args=()
if java -jar "$run/tidemark.jar" --help 2>/dev/null | grep -q -- '--admin-port'; then
  admin_args=(--admin-port "$admin_port")
fi
# The launcher's own JVM options unless told otherwise (so RSS figures are those of the defaults).
# shellcheck source=launcher-java.sh
. "$root/benchmarks/bin/launcher-java.sh"
server_opts=${SERVER_JAVA_OPTS:-$tm_java_opts}
# As ./tidemark: two malloc arenas (RocksDB and gRPC allocate from many threads).
export MALLOC_ARENA_MAX="${SERVER_MALLOC_ARENA_MAX:-2}"
echo "uptime before start: $(uptime)"
echo "server java: $tm_java $server_opts"
# shellcheck disable=SC2086 # option lists
"$tm_java" $server_opts -jar "$run/tidemark.jar" \
  --data-dir "$run/data" --otlp-grpc-port "$grpc_port" --otlp-http-port "$http_port" --http-port "$api_port" \
  "${admin_args[@]}" ${SERVER_ARGS:-} >"$run/server.log" 2>&1 &
server_pid=$!

for _ in $(seq 1 120); do
  if curl -fsS "http://127.0.0.1:$api_port/-/ready" >/dev/null 2>&1; then break; fi
  kill -0 "$server_pid" 2>/dev/null || { echo "server exited:"; cat "$run/server.log"; exit 1; }
  sleep 0.5
done
curl -fsS "http://127.0.0.1:$api_port/-/ready" >/dev/null || { echo "server not ready"; cat "$run/server.log"; exit 1; }
echo "server pid $server_pid: $(grep -m1 -i 'listening\|ports\|otlp' "$run/server.log" || true)"

query_pid=""
if [[ "${QUERY_CLIENTS:-0}" -gt 0 ]]; then
  python3 "$root/benchmarks/bin/query-load.py" --url "http://127.0.0.1:$api_port" \
    --clients "$QUERY_CLIENTS" >"$run/query-load.out" 2>&1 &
  query_pid=$!
fi
gen_rc=0
# shellcheck disable=SC2086
env -u MALLOC_ARENA_MAX java ${GEN_JAVA_OPTS:--Xmx6g} -cp "$run/benchmarks.jar" dev.tidemark.benchmarks.OtlpLoadGenerator \
  --target "127.0.0.1:$grpc_port" --metrics-url "http://127.0.0.1:$api_port/metrics" --server-pid "$server_pid" \
  ${SERVER_JFR:+--server-jfr "$SERVER_JFR"} "$@" | tee "$run/gen.out" || gen_rc=$?

if [[ -n "$query_pid" ]]; then
  kill -TERM "$query_pid" 2>/dev/null || true
  wait "$query_pid" || true
  cat "$run/query-load.out"
fi
samples="$(sed -n 's/^dataset .* samples=\([0-9]*\) .*/\1/p' "$run/gen.out")"
cpu_total="$(awk '{print ($14+$15)/100}' "/proc/$server_pid/stat")"
hwm_kb="$(awk '/^VmHWM:/{print $2}' "/proc/$server_pid/status")"
# Where the server's CPU went, by thread name (numbering folded: "tidemark-api-3" -> "tidemark-api-#";
# "C1 CompilerThre" and "C2 CompilerThre" kept apart): live threads only, over the server's life.
python3 - "$server_pid" <<'PY' || true
import os, re, sys
pid = sys.argv[1]; hz = os.sysconf("SC_CLK_TCK"); by = {}
for t in os.listdir(f"/proc/{pid}/task"):
    try:
        st = open(f"/proc/{pid}/task/{t}/stat").read()
    except OSError:
        continue
    name = st[st.index("(") + 1:st.rindex(")")]
    f = st[st.rindex(")") + 2:].split()
    key = re.sub(r"(?<=[-#])\d+|\d+$", "#", name)
    by[key] = by.get(key, 0) + (int(f[11]) + int(f[12])) / hz
total = sum(by.values())
for k, v in sorted(by.items(), key=lambda kv: -kv[1])[:14]:
    print(f"RESULT thread-cpu {k:<28} {v:7.2f} s {100 * v / total:5.1f} %")
PY
if [[ -n "${SERVER_NMT:-}" ]]; then
  # needs -XX:NativeMemoryTracking=summary in SERVER_JAVA_OPTS
  jcmd "$server_pid" VM.native_memory summary scale=MB >"$SERVER_NMT" 2>&1 || true
fi
t0=$(date +%s.%N)
kill -TERM "$server_pid"
stop_rc=0
wait "$server_pid" || stop_rc=$?
stop_s=$(echo "$(date +%s.%N) - $t0" | bc)
server_pid=""
bytes="$(du -sb "$run/data" | cut -f1)"
sst="$(find "$run/data" -name '*.sst' -printf '%s\n' | awk '{s+=$1} END {print s+0}')"
wal="$(find "$run/data" -name '*.log' -printf '%s\n' | awk '{s+=$1} END {print s+0}')"
echo "RESULT server total_cpu_s=$cpu_total peak_rss_mb=$((hwm_kb / 1024)) stop_s=$stop_s stop_exit=$stop_rc"
awk -v b="$bytes" -v s="$sst" -v w="$wal" -v n="$samples" 'BEGIN {
  printf "RESULT disk bytes=%d sst_bytes=%d wal_bytes=%d samples=%d bytes_per_sample=%.3f sst_bytes_per_sample=%.3f\n",
    b, s, w, n, b / n, s / n }'

# A second start on the same folder (recovery; RocksDB replays its WAL into SST files), a full
# compaction through the admin API when the server has one, and a second clean stop: the bytes a
# stopped, compacted server keeps.
if [[ "${RESTART_CHECK:-1}" == 1 && "$stop_rc" == 0 ]]; then
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  "$tm_java" $server_opts -jar "$run/tidemark.jar" \
    --data-dir "$run/data" --otlp-grpc-port "$grpc_port" --otlp-http-port "$http_port" --http-port "$api_port" \
    "${admin_args[@]}" ${SERVER_ARGS:-} >"$run/server2.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 240); do
    curl -fsS "http://127.0.0.1:$api_port/-/ready" >/dev/null 2>&1 && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.25
  done
  ready_s=$(echo "$(date +%s.%N) - $t0" | bc)
  head_series="$(curl -fsS "http://127.0.0.1:$api_port/metrics" | awk '/^tidemark_head_series /{print $2}')"
  bucket_compactions() {
    curl -fsS "http://127.0.0.1:$api_port/metrics" | awk '/^tidemark_bucket_compactions_total /{print $2+0}'
  }
  if [[ "${BUCKET_COMPACTION_WAIT_S:-0}" -gt 0 ]]; then
    t1=$(date +%s.%N)
    last=""; stable=0
    for _ in $(seq 1 "$BUCKET_COMPACTION_WAIT_S"); do
      n="$(bucket_compactions)"
      if [[ "${n:-0}" != 0 && "$n" == "$last" ]]; then stable=$((stable + 1)); else stable=0; fi
      last="$n"
      [[ "$stable" -ge 10 ]] && break
      sleep 1
    done
    echo "RESULT bucket-compaction compactions=${last:-0} waited_s=$(echo "$(date +%s.%N) - $t1" | bc)"
  fi
  if [[ ${#admin_args[@]} -gt 0 ]]; then
    # Full compaction through the admin API: drops what sealing deleted (head log ranges).
    t1=$(date +%s.%N)
    java -jar "$run/tidemark.jar" admin compact --address "127.0.0.1:$admin_port" --timeout 10m >"$run/compact.out" 2>&1 \
      || { echo "admin compact failed:"; cat "$run/compact.out"; }
    echo "RESULT compact s=$(echo "$(date +%s.%N) - $t1" | bc)"
  fi
  echo "RESULT bucket-compactions-before-stop $(bucket_compactions) (tidemark_bucket_compactions_total)"
  kill -TERM "$server_pid"; wait "$server_pid" || true; server_pid=""
  bytes2="$(du -sb "$run/data" | cut -f1)"
  sst2="$(find "$run/data" -name '*.sst' -printf '%s\n' | awk '{s+=$1} END {print s+0}')"
  wal2="$(find "$run/data" -name '*.log' -printf '%s\n' | awk '{s+=$1} END {print s+0}')"
  echo "RESULT restart ready_s=$ready_s head_series_after_restart=$head_series ($(grep -m1 -o 'recovery [0-9.]* s' "$run/server2.log" || true))"
  awk -v b="$bytes2" -v s="$sst2" -v w="$wal2" -v n="$samples" 'BEGIN {
    printf "RESULT disk-after-restart-and-compaction bytes=%d sst_bytes=%d wal_bytes=%d bytes_per_sample=%.3f sst_bytes_per_sample=%.3f\n",
      b, s, w, b / n, s / n }'
fi
echo "uptime after: $(uptime)"
if [[ "$gen_rc" != 0 || "$stop_rc" != 0 ]]; then
  echo "FAILED: generator exit $gen_rc, server stop exit $stop_rc" >&2
  tail -20 "$run/server.log" >&2
  exit 1
fi
