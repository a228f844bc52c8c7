#!/usr/bin/env bash
# Reproduce docs/seeds.md: seeds at RTT 0 and 3.3 ms, targets, and the sweep,
# against a volley-server and a redis-server that are already running.
#   cargo build --release -p volley-bench -p volley-server
#   target/release/volley-server --port 6380 --save '' &
#   redis-server --port 6379 --save '' --appendonly no &
#   bench/issue7_publish.sh 6380 6379 bench-out/issue7
set -euo pipefail
VP=${1:-6380}
RP=${2:-6379}
OUT=${3:-bench-out/issue7}
BIN=${VOLLEY_BENCH:-target/release/volley-bench}
mkdir -p "$OUT"
for rtt in 0 3.3ms; do
  for s in "volley $VP" "redis $RP"; do
    set -- $s
    echo "== seeds $1 rtt $rtt" >&2
    "$BIN" seeds -h 127.0.0.1 -p "$2" --rtt "$rtt" > "$OUT/seeds_${1}_rtt${rtt}.txt"
  done
done
echo "== targets" >&2
"$BIN" targets -h 127.0.0.1 -p "$VP" --redis-port "$RP" > "$OUT/targets.txt" || true
echo "== sweep" >&2
"$BIN" sweep --servers "volley=127.0.0.1:$VP,redis=127.0.0.1:$RP" \
  --depths 1,10,100,1000,10000 --rtts 0,0.2,1,3.3,10 --repeat 3 --budget 500ms \
  --out "$OUT/sweep" > "$OUT/sweep.txt"
echo "done: $OUT" >&2
