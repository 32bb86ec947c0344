#!/usr/bin/env bash
# One tenant's limit held by 2, 3 and 4 gateways sharing one Redis (Debian's redis-server, on
# a unix socket), side by side with a fixed-window limiter (rate_limit.algorithm: fixed_window,
# Envoy's ratelimit counting) in the same run; then Redis killed and restarted mid-run, in both
# unavailable modes; then the decision's latency under load.
#
#   bench/shared_limit.sh [SPILLWAY_BINARY]     # default $SPILLWAY, else build/spillway
#
# Accuracy: nginx round-robins one `spillway bench` (one clock) over the gateways, offering
# RATE_X times the tenant's rate (Poisson) for DURATION seconds; admitted = every answer but the
# limiter's 429s (rate_limited, rate_limiter_unavailable); the bound is rate x seconds + burst. "peak 1 s" is the most admitted in any
# one-second span of send times, against rate + burst. Outage: 2 gateways, 30 s at the same
# load, Redis killed at 10 s and started again (empty) at 20 s; admitted per 10 s phase, and how
# long after the restart the first gateway decided in Redis again. Latency: wrk against one
# gateway, every request a shared decision (a tenant with only a token limit, refused), and the
# gateways' own histogram of the round trip (spillway_gateway_rate_limit_decision_seconds).
#
# Environment: RATE [20] BURST [5] RATE_X [3] DURATION [60] GATEWAYS ["2 3 4"] WRK_DURATION [10s]
# Needs redis-server, nginx, wrk, curl and python3 (`scripts/deps.sh bench`). Builds nothing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-${SPILLWAY:-$here/../build/spillway}}
rate=${RATE:-20}
burst=${BURST:-5}
rate_x=${RATE_X:-3}
duration=${DURATION:-60}
gateway_counts=${GATEWAYS:-"2 3 4"}
wrk_duration=${WRK_DURATION:-10s}
bench_name=shared_limit
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
redis=$(command -v redis-server || echo /usr/bin/redis-server)
[ -x "$redis" ] || die "redis-server not found (scripts/deps.sh bench)"
redis_cli=$(command -v redis-cli || echo /usr/bin/redis-cli)
[ -x "$redis_cli" ] || die "redis-cli not found (scripts/deps.sh bench)"
nginx=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx" ] || die "nginx not found (scripts/deps.sh bench)"
command -v wrk >/dev/null || die "wrk not found (scripts/deps.sh bench)"
command -v curl >/dev/null || die "curl not found (scripts/deps.sh bench)"
[ -x "$bin" ] || die "no spillway binary at '$bin'"

metric() {  # metric URL NAME_REGEX: the sum of the samples whose name and labels match
  curl -s "$1/metrics" | awk -v re="$2" '$1 ~ re { s += $2 } END { printf "%g", s + 0 }'
}

sock=$tmp/redis.sock
redis_pid=""
start_redis() {
  "$redis" --port 0 --unixsocket "$sock" --save '' --appendonly no --dir "$tmp" \
    --logfile "$tmp/redis.log" &
  redis_pid=$!
  pids+=("$redis_pid")
  for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
}
kill_redis() { kill -KILL "$redis_pid" 2>/dev/null || true; wait "$redis_pid" 2>/dev/null || true; rm -f "$sock"; }
start_redis

"$bin" serve --port 0 --model m >"$tmp/serve.log" 2>&1 &
pids+=($!)
engine=$(wait_url "$tmp/serve.log")

gw_pids=() gw_urls=()
# start_gateways N ALGORITHM MODE: N gateways sharing the Redis, each deciding in it.
start_gateways() {
  cat >"$tmp/gateway.yaml" <<CONF
rate_limit: {redis: "unix://$sock", algorithm: $2, on_unavailable: $3}
pools:
  - model: m
    endpoints: ["$engine"]
api_keys:
  - {key: sk-acme, tenant: acme, rate_rps: $rate, burst: $burst}
CONF
  if [ "$2" = gcra ]; then  # (fixed_window limits requests only)
    echo "  - {key: sk-tokens, tenant: tokens, tokens_per_s: 0.001, token_burst: 1}" >>"$tmp/gateway.yaml"
  fi
  gw_pids=() gw_urls=()
  for i in $(seq "$1"); do
    "$bin" gateway --port 0 --threads 1 --config "$tmp/gateway.yaml" >"$tmp/gateway$i.log" 2>&1 &
    gw_pids+=($!)
    gw_urls+=("$(wait_url "$tmp/gateway$i.log")")
  done
  for u in "${gw_urls[@]}"; do
    for _ in $(seq 100); do
      [ "$(metric "$u" 'rate_limiter_mode\{mode="shared"')" = 1 ] && break
      sleep 0.05
    done
  done
  # nginx round-robin over them, as a load balancer in front of gateway replicas.
  local servers="" u
  for u in "${gw_urls[@]}"; do servers+="server ${u#http://};"; done
  nginx_port=$(free_port)
  mkdir -p "$tmp/nginx"
  cat >"$tmp/nginx/nginx.conf" <<CONF
daemon off; master_process off; worker_processes 1; pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $tmp/nginx/body; proxy_temp_path $tmp/nginx/proxy;
  fastcgi_temp_path $tmp/nginx/fcgi; uwsgi_temp_path $tmp/nginx/uwsgi; scgi_temp_path $tmp/nginx/scgi;
  upstream gateways { $servers keepalive 64; }
  server {
    listen 127.0.0.1:$nginx_port;
    location / { proxy_pass http://gateways; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
CONF
  "$nginx" -c "$tmp/nginx/nginx.conf" -p "$tmp/nginx" >"$tmp/nginx/out" 2>&1 &
  nginx_pid=$!
  for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$nginx_port/health" && break; sleep 0.1; done
}
stop_gateways() {
  kill -TERM "${gw_pids[@]}" "$nginx_pid" 2>/dev/null || true
  wait "${gw_pids[@]}" "$nginx_pid" 2>/dev/null || true
}

# offer SECONDS OUT: RATE_X x the rate for SECONDS through nginx; the attempts in OUT.
offer() {
  cat >"$tmp/offer.yaml" <<SCEN
name: shared-limit
seed: 1
arrival: {process: steps, steps: [{rate: $((rate * rate_x)), duration_s: $1}]}
classes:
  - {name: tiny, share: 1, prompt_tokens: 8, output_tokens: 1, tenant: acme}
client: {total_timeout_s: 5, retry: {policy: none}}
slo: {ttft_s: 1.0}
SCEN
  "$bin" bench --target "http://127.0.0.1:$nginx_port" --scenario "$tmp/offer.yaml" --model m \
    --api-key sk-acme --records "$2" --no-metrics --no-progress >/dev/null
}

# The admitted (every answer but the tenant quotas' 429s) in RECORDS: total and peak in 1 s; with
# PHASE_S, per phase of that many seconds.
admitted() {
  python3 - "$1" "${2:-0}" <<'PY'
import json, sys
LIMITER = {"rate_limited", "token_rate_limited", "retry_rate_limited", "rate_limiter_unavailable"}
sent = []
other = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["status"] == 429 and r["reason"] in LIMITER:
        continue
    if r["status"] != 200:
        other[(r["status"], r["reason"])] = other.get((r["status"], r["reason"]), 0) + 1
    sent.append(r["sent_s"])
sent.sort()
peak, j = 0, 0
for i, t in enumerate(sent):
    while sent[j] <= t - 1.0:
        j += 1
    peak = max(peak, i - j + 1)
phase = float(sys.argv[2])
if phase > 0:
    counts = [0, 0, 0]
    for t in sent:
        counts[min(2, int(t // phase))] += 1
    print(" ".join(str(c) for c in counts), end="")
else:
    print(len(sent), peak, end="")
if other:
    print("  (admitted, then", ", ".join(f"{n} x {s} {why}" for (s, why), n in other.items()) + ")", end="")
print()
PY
}

echo "shared_limit: tenant rate $rate req/s, burst $burst; offered ${rate_x}x for ${duration} s; bound $((rate * duration + burst))"
printf '%-9s %-13s %9s %8s %12s\n' gateways algorithm admitted "of bound" "peak 1 s"
for algorithm in gcra fixed_window; do
  for n in $gateway_counts; do
    "$redis_cli" -s "$sock" flushall >/dev/null
    start_gateways "$n" "$algorithm" fail_open
    offer "$duration" "$tmp/records.jsonl"
    read -r got peak rest <<<"$(admitted "$tmp/records.jsonl")"
    printf '%-9s %-13s %9s %7.2f%% %5s (%s)%s\n' "$n" "$algorithm" "$got" \
      "$(python3 -c "print(100 * $got / ($rate * $duration + $burst))")" "$peak" \
      "$((rate + burst))" "${rest:+ $rest}"
    stop_gateways
  done
done

echo "shared_limit: Redis killed at 10 s and started again at 20 s (2 gateways, offered ${rate_x}x for 30 s)"
printf '%-11s %14s %14s %14s %22s\n' mode "0-10 s shared" "10-20 s down" "20-30 s back" "shared again after s"
for mode in fail_open fail_close; do
  "$redis_cli" -s "$sock" flushall >/dev/null
  start_gateways 2 gcra "$mode"
  offer 30 "$tmp/outage.jsonl" &
  load=$!
  sleep 10
  kill_redis
  sleep 10
  start_redis
  back=$(python3 -c 'import time; print(time.time())')
  for _ in $(seq 100); do
    [ "$(metric "${gw_urls[0]}" 'rate_limiter_mode\{mode="shared"')" = 1 ] && break
    sleep 0.02
  done
  resumed=$(python3 -c "import time; print(f'{time.time() - $back:.2f}')")
  wait "$load"
  read -r p1 p2 p3 _ <<<"$(admitted "$tmp/outage.jsonl" 10)"
  printf '%-11s %14s %14s %14s %22s\n' "$mode" "$p1" "$p2" "$p3" "$resumed"
  stop_gateways
done

echo "shared_limit: decision latency, wrk -t1 -c8 for $wrk_duration against one gateway (each request a shared decision, refused)"
"$redis_cli" -s "$sock" flushall >/dev/null
start_gateways 1 gcra fail_open
export WRK_BODY='{"model":"m","prompt":[1,2,3],"max_tokens":4}'
export WRK_AUTHORIZATION='Bearer sk-tokens'
wrk -t1 -c8 -d"$wrk_duration" -s "$here/gateway_latency.lua" "${gw_urls[0]}/v1/completions" |
  awk '$1 == "latency_us" { printf "request (client side): p50 %d us, p99 %d us\n", $3, $5 }
       $1 == "requests" { printf "requests: %d (%.0f/s)\n", $2, $2 / ($4 / 1e6) }'
curl -s "${gw_urls[0]}/metrics" | python3 -c '
import re, sys
buckets = []
for line in sys.stdin:
    m = re.match(r"spillway_gateway_rate_limit_decision_seconds_bucket\{le=\"([^\"]+)\"\} (\S+)", line)
    if m:
        buckets.append((float(m.group(1)), float(m.group(2))))
total = buckets[-1][1]
def quantile(q):
    rank, lo, below = q * total, 0.0, 0.0
    for le, n in buckets:
        if n >= rank:
            if le == float("inf"):
                return lo
            return lo + (le - lo) * (rank - below) / max(n - below, 1)
        lo, below = le, n
print(f"shared decision (the gateway'"'"'s round trip to Redis, {int(total)} decisions): p50 {quantile(0.5) * 1e6:.0f} us, p99 {quantile(0.99) * 1e6:.0f} us")
'
stop_gateways
