#!/usr/bin/env bash
# The exact-result cache's hit, side by side with nginx's proxy_cache in the same run: one
# emulated engine (`spillway serve --model m`), and the same deterministic request (64 tokens,
# temperature 0; bench/gateway_latency.lua with WRK_BODY) sent by wrk on keep-alive connections through
#   gateway   spillway gateway with `cache: {max_entries: 1000}` -> the engine
#   nginx     nginx proxy_cache (POST cached, keyed by the request body) -> the engine
# Each is filled by one request first, so every measured request is a hit. Prints the engine
# time a hit saves (the same request sent to the engine, timed by curl) and, per path, p50 and
# p99 latency of the hits and the rate wrk reached; then the gateway's own count of hits and of
# attempts sent to the engine (1: the fill).
#
#   bench/cache_hit.sh [SPILLWAY_BINARY]      # default $SPILLWAY, else build/spillway
#
# Environment: DURATION [10s] CONNECTIONS [16] PIN [1] (servers on CPU 0, wrk on CPU 1).
# Needs wrk, nginx and curl (`scripts/deps.sh bench`). Builds nothing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-${SPILLWAY:-$here/../build/spillway}}
duration=${DURATION:-10s}
connections=${CONNECTIONS:-16}
pin=${PIN:-1}
bench_name=cache_hit
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
command -v wrk >/dev/null || die "wrk not found (scripts/deps.sh bench)"
command -v curl >/dev/null || die "curl not found (scripts/deps.sh bench)"
nginx=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx" ] || die "nginx not found (scripts/deps.sh bench)"
[ -x "$bin" ] || die "no spillway binary at '$bin'"
pin_cpus "$pin"

"${server_cpu[@]}" "$bin" serve --port 0 --model m >"$tmp/serve.log" 2>&1 &
pids+=($!)
engine=$(wait_url "$tmp/serve.log")
engine_port=${engine##*:}
printf 'cache: {max_entries: 1000}\npools:\n  - model: m\n    endpoints: ["%s"]\n' "$engine" \
  >"$tmp/gateway.yaml"
"${server_cpu[@]}" "$bin" gateway --port 0 --threads 1 --config "$tmp/gateway.yaml" \
  >"$tmp/gateway.log" 2>&1 &
pids+=($!)
gateway=$(wait_url "$tmp/gateway.log")

proxy_port=$(free_port)
mkdir -p "$tmp/nginx/cache"
cat >"$tmp/nginx/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 10000000;
  client_body_temp_path $tmp/nginx/body; proxy_temp_path $tmp/nginx/proxy;
  fastcgi_temp_path $tmp/nginx/fcgi; uwsgi_temp_path $tmp/nginx/uwsgi; scgi_temp_path $tmp/nginx/scgi;
  proxy_cache_path $tmp/nginx/cache keys_zone=answers:10m max_size=64m;
  upstream engine { server 127.0.0.1:$engine_port; keepalive 64; }
  server {
    listen 127.0.0.1:$proxy_port;
    client_body_buffer_size 64k;  # the body in memory: \$request_body in the key
    location / {
      proxy_pass http://engine;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_cache answers;
      proxy_cache_methods POST;
      proxy_cache_key "\$request_uri|\$request_body";
      proxy_cache_valid 200 5m;
    }
  }
}
CONF
"${server_cpu[@]}" "$nginx" -c "$tmp/nginx/nginx.conf" -p "$tmp/nginx" >"$tmp/nginx/out" 2>&1 &
pids+=($!)
nginx_url="http://127.0.0.1:$proxy_port"
for _ in $(seq 50); do
  curl -s -o /dev/null "$nginx_url/health" && break
  sleep 0.1
done

body='{"model":"m","prompt":[1,2,3],"max_tokens":64,"temperature":0}'
export WRK_BODY=$body  # bench/gateway_latency.lua sends it
post() {  # post URL: the request once; prints curl's total time in seconds
  curl -s -o /dev/null -w '%{time_total}' -H 'Content-Type: application/json' -d "$body" \
    "$1/v1/completions"
}
engine_s=$(post "$engine")
post "$gateway" >/dev/null  # the fills
post "$nginx_url" >/dev/null

run() {  # run NAME URL: one wrk run; prints "NAME p50_us p99_us rps errors"
  local out
  out=$("${client_cpu[@]}" wrk -t1 -c"$connections" -d"$duration" -s "$here/gateway_latency.lua" "$2/v1/completions")
  awk -v name="$1" '
    $1 == "latency_us" { p50 = $3; p99 = $5 }
    $1 == "requests" { rps = $2 / ($4 / 1e6) }
    $1 == "errors" { errs = $3 + $5 }
    END { printf "%-8s %10d %10d %10.0f %7d\n", name, p50, p99, rps, errs }' <<<"$out"
}
echo "cache_hit: the engine answers the request in ${engine_s} s (the time a hit saves); hits, $connections connections, $duration each"
printf '%-8s %10s %10s %10s %7s\n' path "p50 us" "p99 us" "req/s" errors
run gateway "$gateway"
run nginx "$nginx_url"
metrics=$(curl -s "$gateway/metrics")
hits=$(awk '$1 ~ /^spillway_gateway_cache_lookups_total\{.*result="hit"/ { s += $2 } END { printf "%d", s }' <<<"$metrics")
sent=$(awk '$1 ~ /^spillway_gateway_forwarded_total\{/ { s += $2 } END { printf "%d", s }' <<<"$metrics")
echo "cache_hit: the gateway answered $hits from its cache and sent $sent to the engine"
