#!/usr/bin/env bash
# Restart with a full head (issue #22): a fresh Tidemark with the launcher's JVM options is fed
# INSTANCES x 100 series (default 10,000 = 1M active series) for 10 minutes at 15 s by the peer
# harness' load generator, killed with SIGKILL while the whole head is in memory, and restarted on
# the same folder; prints the time to /-/ready, the recovery the server logged and the series found.
#
#   PEERS_HOME=<scratch> benchmarks/bin/restart-1m.sh [INSTANCES]
#
# Environment: PEERS_DIR (default: ../shared/bench/peers next to this checkout), PEERS_HOME (its
# scratch folder), TIDEMARK_JAR (default: server/target/tidemark.jar).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PEERS_DIR="${PEERS_DIR:-$root/../shared/bench/peers}"
# shellcheck disable=SC1091 # the harness' helpers: $B, need_loadgen, $LOADGEN_JAR
. "$PEERS_DIR/bin/common.sh"
need_loadgen
inst="${1:-10000}"
cd "$root"
# shellcheck source=launcher-java.sh
. "$root/benchmarks/bin/launcher-java.sh"
# The harness starts `java` from the PATH: the launcher's JDK first for the server only.
tm_path="$(dirname "$tm_java"):$PATH"
TM_JAVA_OPTS="$tm_java_opts"
export TM_JAVA_OPTS TIDEMARK_JAR="${TIDEMARK_JAR:-$root/server/target/tidemark.jar}"
echo "server java: $tm_java $tm_java_opts"
d="$PEERS_HOME/data/restart-tm"
rm -rf "$d"
PATH="$tm_path" MALLOC_ARENA_MAX=2 "$B/start-tm.sh" "$d"
pid="$(cat "$PEERS_HOME/tm.pid")"
start=$((($(date +%s) / 15 * 15) * 1000 - 660000))
java -Xmx10g -jar "$LOADGEN_JAR" otlp-grpc 127.0.0.1:14317 --instances="$inst" --hours=0.16667 \
  --start-ms="$start" --threads=4 --batch=2000 2>&1 | grep -E "RESULT|FAILED" | head -3
active() { curl -s http://127.0.0.1:19090/metrics | awk '/^tidemark_head_active_series /{print $2}'; }
echo "before kill: $("$B/procstat.sh" "$pid") head_active_series=$(active)"
kill -9 "$pid"
sleep 1
t0=$(date +%s.%N)
PATH="$tm_path" MALLOC_ARENA_MAX=2 "$B/start-tm.sh" "$d"
pid="$(cat "$PEERS_HOME/tm.pid")"
for _ in $(seq 1 600); do curl -sf http://127.0.0.1:19090/-/ready >/dev/null && break; sleep 0.2; done
echo "RESULT restart ready_s=$(echo "$(date +%s.%N) - $t0" | bc)"
echo "after restart: $("$B/procstat.sh" "$pid") head_active_series=$(active)"
grep -i "recovered head" "$PEERS_HOME/logs/tm.log" | tail -1 || true
t=$((start / 1000 + 600 - 15))
echo "series at the last step: $(curl -s "http://127.0.0.1:19090/api/v1/query?query=count(%7B__name__%3D~%22.%2B%22%7D)&time=$t" | head -c 200)"
kill "$pid"
