#!/usr/bin/env bash
# Thousands of concurrent SSE streams through `spillway gateway`: what it adds to the
# inter-token latency (ITL) and how much memory a stream costs it. One `spillway serve` made
# cheap per token but slow per step (a copy of profiles/seed-a100-7b.yaml with num_params 1e6,
# step_overhead_s STEP_S, no per-sequence cost: every stream gets a token per step, so streams
# stay open), the same open-loop load from `spillway bench` (Poisson RATE/s for DURATION_S s,
# 4 prompt / 20 output tokens, streaming) sent twice in one run:
#   direct    bench -> serve
#   gateway   bench -> spillway gateway (round-robin, one upstream) -> serve
# For each: completed, peak streams in flight, TTFT and ITL p50/p99; for the gateway its peak
# resident memory (sampled every 0.2 s) and that less its idle size per peak stream.
#
#   bench/gateway_streams.sh [SPILLWAY_BINARY]      # default $SPILLWAY, else build/spillway
#
# Environment: RATE [2000] DURATION_S [3] STEP_S [0.15]. Needs an open-file limit above about
# three times the streams (ulimit -n). Builds nothing; loopback only.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-${SPILLWAY:-$here/../build/spillway}}
rate=${RATE:-2000}
duration_s=${DURATION_S:-3}
step_s=${STEP_S:-0.15}
bench_name=gateway_streams
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
[ -x "$bin" ] || die "no spillway binary at '$bin'"
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
need=$((rate * duration_s * 3 + 1000))
[ "$(ulimit -n)" = unlimited ] || [ "$(ulimit -n)" -ge "$need" ] ||
  die "open-file limit $(ulimit -n) is below the $need this load needs (ulimit -n)"

sed -e 's/^name: seed-a100-7b/name: slowstep/' -e 's/num_params: 6.74e9.*/num_params: 1e6/' \
  -e "s/step_overhead_s: 0.002.*/step_overhead_s: $step_s/" \
  -e 's/per_seq_overhead_s: 0.00043.*/per_seq_overhead_s: 0/' \
  "$here/../profiles/seed-a100-7b.yaml" >"$tmp/slowstep.yaml"
cat >"$tmp/streams.yaml" <<YAML
name: streams
seed: 1
arrival: {process: poisson, rate: $rate, duration_s: $duration_s}
classes:
  - {name: stream, share: 1, prompt_tokens: 4, output_tokens: 20, priority: 0, tenant: default}
client:
  total_timeout_s: 60
  retry: {policy: none}
YAML

serve_port=$(free_port)
gw_port=$(free_port)
"$bin" serve --port "$serve_port" --profile "$tmp/slowstep.yaml" --policy unbounded \
  --max-num-seqs 8192 --max-num-batched-tokens 65536 --num-gpu-blocks 100000 \
  --max-connections 19000 --request-timeout-s 60 --client-timeout-s 90 >"$tmp/serve.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  curl -s -o /dev/null "http://127.0.0.1:$serve_port/health" && break
  sleep 0.1
done
"$bin" gateway --port "$gw_port" --router round-robin --max-connections 19000 \
  --request-timeout-s 60 --endpoint "http://127.0.0.1:$serve_port" >"$tmp/gateway.log" 2>&1 &
gw_pid=$!
pids+=($gw_pid)
for _ in $(seq 100); do
  curl -s -o /dev/null "http://127.0.0.1:$gw_port/ready" && break
  sleep 0.1
done
curl -s -o /dev/null "http://127.0.0.1:$gw_port/ready" || die "the gateway did not start: $(cat "$tmp/gateway.log")"
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
idle_kib=$(rss_kib "$gw_pid")

run() {  # run NAME PORT: one bench run; prints "NAME completed peak ttft_p50 ttft_p99 itl_p50 itl_p99"
  "$bin" bench --target "http://127.0.0.1:$2" --scenario "$tmp/streams.yaml" --no-progress \
    --json "$tmp/$1.json" >"$tmp/$1.txt" 2>&1 || die "bench ($1) failed: $(tail -5 "$tmp/$1.txt")"
  local peak
  peak=$(sed -n 's/.*peak in flight \([0-9]*\).*/\1/p' "$tmp/$1.txt")
  python3 - "$1" "$peak" "$tmp/$1.json" <<'PY'
import json, sys
name, peak, path = sys.argv[1], sys.argv[2], sys.argv[3]
s = json.load(open(path))
ms = lambda v: v * 1000
print(name, s["completed"], peak, ms(s["ttft_s"]["p50"]), ms(s["ttft_s"]["p99"]),
      ms(s["itl_s"]["p50"]), ms(s["itl_s"]["p99"]))
PY
}
direct=$(run direct "$serve_port")
(
  peak=0
  while kill -0 "$gw_pid" 2>/dev/null; do
    r=$(rss_kib "$gw_pid" 2>/dev/null || echo 0)
    if [ "${r:-0}" -gt "$peak" ]; then
      peak=$r
      echo "$peak" >"$tmp/rss_peak"
    fi
    sleep 0.2
  done
) &
sampler=$!
gateway=$(run gateway "$gw_port")
kill "$sampler" 2>/dev/null || true
peak_kib=$(cat "$tmp/rss_peak" 2>/dev/null || echo "$idle_kib")

echo "gateway_streams: Poisson $rate/s for $duration_s s, 20 tokens each, a step every ~$step_s s"
printf '%-8s %9s %12s %13s %13s %12s %12s\n' path completed "peak streams" "TTFT p50 ms" \
  "TTFT p99 ms" "ITL p50 ms" "ITL p99 ms"
printf '%s\n%s\n' "$direct" "$gateway" |
  awk '{ printf "%-8s %9d %12d %13.1f %13.1f %12.1f %12.1f\n", $1, $2, $3, $4, $5, $6, $7 }'
printf '%s\n%s\n' "$direct" "$gateway" | awk '
  NR == 1 { t50 = $4; t99 = $5; i50 = $6; i99 = $7 }
  NR == 2 { printf "added by the gateway: TTFT p50 %+.1f ms, p99 %+.1f ms; ITL p50 %+.1f ms, p99 %+.1f ms\n",
            $4 - t50, $5 - t99, $6 - i50, $7 - i99; peak = $3 }'
gw_peak_streams=$(awk '{print $3}' <<<"$gateway")
awk -v idle="$idle_kib" -v peak="$peak_kib" -v n="$gw_peak_streams" 'BEGIN {
  printf "gateway memory: %.1f MB idle, %.1f MB at peak, %.1f KB per stream\n",
         idle / 1024, peak / 1024, (n > 0 ? (peak - idle) / n : 0) }'
