#!/usr/bin/env bash
# Before/after of two release builds of a2a-bench on the same host, rounds interleaved: each
# round starts each build's server on core 0 (`serve <kind>`), warms it up, drives it from core 1
# (`drive`), and stops it. Prints one line per workload, round and build, then the median rate
# of each build and their ratio (after ÷ before).
#
#   bench/ab.sh BEFORE_BIN AFTER_BIN [ROUNDS]
#
# Workloads: JSON-RPC SendMessage at 16 and 64 connections, SSE (one stream at a time), the
# agent card, and SendMessage with ten extensions activated (`ours10ext`). Everything listens on
# 127.0.0.1; every server is stopped by its PID.
set -euo pipefail
before=$1
after=$2
rounds=${3:-5}
port=39200
pin_server="taskset -c 0"
pin_load="taskset -c 1"
[ "$(nproc)" -ge 2 ] || { pin_server=""; pin_load=""; }

# kind workload conns warmup measured
workloads=(
  "ours send 16 20000 100000"
  "ours send 64 20000 100000"
  "ours stream 1 50 400"
  "ours card 16 20000 150000"
  "ours10ext send-ext10 16 10000 60000"
)

declare -A rates
for w in "${workloads[@]}"; do
  read -r kind what conns warm n <<<"$w"
  for r in $(seq 1 "$rounds"); do
    for side in before after; do
      bin=${!side}
      port=$((port + 1))
      $pin_server "$bin" serve "$kind" "$port" >/dev/null 2>&1 &
      pid=$!
      for _ in $(seq 1 300); do
        curl -sf "http://127.0.0.1:$port/.well-known/agent-card.json" >/dev/null && break
        sleep 0.1
      done
      $pin_load "$bin" drive "127.0.0.1:$port" "$what" "$conns" "$warm" >/dev/null
      line=$($pin_load "$bin" drive "127.0.0.1:$port" "$what" "$conns" "$n")
      kill "$pid"
      wait "$pid" 2>/dev/null || true
      rate=$(sed -nE 's/.*: ([0-9]+)(\/s| events\/s).*/\1/p' <<<"$line")
      echo "$what/$conns round $r $side: $line"
      rates["$what/$conns $side"]+="$rate "
    done
  done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo
echo "| workload | before (median) | after (median) | after ÷ before |"
echo "|---|---:|---:|---:|"
for w in "${workloads[@]}"; do
  read -r kind what conns _ _ <<<"$w"
  b=$(median <<<"${rates["$what/$conns before"]}")
  a=$(median <<<"${rates["$what/$conns after"]}")
  echo "| $what/$conns | $b | $a | $(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", a / b}') |"
done
