#!/usr/bin/env bash
# The latency `spillway gateway` adds in front of a fast upstream, side by side with nginx's
# `proxy_pass` in the same run: one upstream (nginx answering POST /v1/completions with a fixed
# completion, no model: what is measured is the proxies), reached three ways by the same wrk
# load (keep-alive connections, a small JSON body); the upstream, the nginx proxy and the
# gateway are three processes:
#   direct    wrk -> upstream
#   nginx     wrk -> nginx proxy_pass (HTTP/1.1 and keep-alive to the upstream) -> upstream
#   gateway   wrk -> spillway gateway (round-robin, keep-alive to the upstream) -> upstream
# For each: p50 and p99 latency and the rate wrk reached; the added latency is the difference to
# direct. That is at saturation (wrk sends as fast as answers come). Then the three again at a
# fixed RATE with h2load (--rps, one client: Debian's nghttp2-client), the latency of each
# request from its log: what each hop adds when it is not the bottleneck.
#
#   bench/gateway_latency.sh [SPILLWAY_BINARY]      # default $SPILLWAY, else build/spillway
#
# Environment: DURATION [10s] CONNECTIONS [16] PIN [1] (the proxies and the upstream on CPU 0,
# wrk on CPU 1, with >= 2 CPUs) RATE [1000] (requests/s of the paced runs; 0 skips them)
# ROUNDS [5] (the paced paths take turns in this many slices of DURATION/ROUNDS).
# Needs wrk, nginx and h2load (`scripts/deps.sh bench`). Builds nothing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-${SPILLWAY:-$here/../build/spillway}}
duration=${DURATION:-10s}
connections=${CONNECTIONS:-16}
pin=${PIN:-1}
bench_name=gateway_latency
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
command -v wrk >/dev/null || die "wrk not found (scripts/deps.sh bench)"
nginx=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx" ] || die "nginx not found (scripts/deps.sh bench)"
[ -x "$bin" ] || die "no spillway binary at '$bin'"
pin_cpus "$pin"

up_port=$(free_port)
proxy_port=$(free_port)
body='{"id":"cmpl-1","object":"text_completion","created":0,"model":"fast","choices":[{"index":0,"text":" ok","logprobs":null,"finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}'
# nginx_conf NAME SERVERS: an nginx of one worker, in the foreground, with SERVERS as its
# http block's servers (and upstreams).
nginx_conf() {
  mkdir -p "$tmp/$1"
  cat >"$tmp/$1/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $tmp/$1/nginx.pid;
error_log $tmp/$1/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 10000000;  # not 1,000: a paced client's one connection would close
  client_body_temp_path $tmp/$1/body; proxy_temp_path $tmp/$1/proxy;
  fastcgi_temp_path $tmp/$1/fcgi; uwsgi_temp_path $tmp/$1/uwsgi; scgi_temp_path $tmp/$1/scgi;
$2
}
CONF
  "${server_cpu[@]}" "$nginx" -c "$tmp/$1/nginx.conf" -p "$tmp/$1" >"$tmp/$1/out" 2>&1 &
  pids+=($!)
}
# The upstream and the reference proxy are two processes, as the upstream and the gateway are:
# in one worker, nginx would hand each request to its own upstream without a context switch
# (this script did so until December 2026: docs/gateway.md, "Performance").
nginx_conf upstream "  server {
    listen 127.0.0.1:$up_port;
    location /v1/models { default_type application/json; return 200 '{\"object\":\"list\",\"data\":[{\"id\":\"fast\",\"object\":\"model\"}]}'; }
    location /health { return 200 'ok'; }
    location / { default_type application/json; return 200 '$body'; }
  }"
nginx_conf proxy "  upstream fast { server 127.0.0.1:$up_port; keepalive 64; keepalive_requests 10000000; }
  server {
    listen 127.0.0.1:$proxy_port;
    location / {
      proxy_pass http://fast;
      proxy_http_version 1.1;
      proxy_set_header Connection \"\";
      proxy_buffering off;
    }
  }"
"${server_cpu[@]}" "$bin" gateway --port 0 --threads 1 --router round-robin \
  --endpoint "openai=http://127.0.0.1:$up_port" --model fast >"$tmp/gateway.log" 2>&1 &
pids+=($!)
gw_url=""
for _ in $(seq 100); do
  gw_url=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$tmp/gateway.log" | head -1)
  [ -n "$gw_url" ] && curl -s -o /dev/null "http://127.0.0.1:$proxy_port/health" && break
  sleep 0.1
done
[ -n "$gw_url" ] || die "the gateway did not start: $(cat "$tmp/gateway.log")"

run() {  # run NAME URL: one wrk run; prints "NAME p50_us p99_us rps errors"
  local out
  out=$("${client_cpu[@]}" wrk -t1 -c"$connections" -d"$duration" -s "$here/gateway_latency.lua" "$2/v1/completions")
  awk -v name="$1" '
    $1 == "latency_us" { p50 = $3; p99 = $5 }
    $1 == "requests" { rps = $2 / ($4 / 1e6) }
    $1 == "errors" { errs = $3 + $5 }
    END { printf "%s %d %d %.0f %d\n", name, p50, p99, rps, errs }' <<<"$out"
}
results=$(run direct "http://127.0.0.1:$up_port"; run nginx "http://127.0.0.1:$proxy_port"; run gateway "$gw_url")
# table COUNT_HEADER ERRORS_HEADER: the runs on stdin ("NAME p50 p99 COUNT ERRORS", direct
# first) as a table, with what each adds to direct.
table() {
  awk -v count="$1" -v errors="$2" '
    { name[NR] = $1; p50[NR] = $2; p99[NR] = $3; n[NR] = $4; err[NR] = $5 }
    END {
      printf "%-8s %10s %10s %14s %14s %10s %7s\n", "path", "p50 us", "p99 us", "added p50 us",
             "added p99 us", count, errors
      for (i = 1; i <= NR; ++i)
        printf "%-8s %10d %10d %14d %14d %10d %7d\n", name[i], p50[i], p99[i], p50[i] - p50[1],
               p99[i] - p99[1], n[i], err[i]
    }'
}
echo "gateway_latency: $connections connections, $duration each, wrk on its own CPU when pinned"
table req/s errors <<<"$results"

# Paced: RATE requests/s from one h2load client (--rps RATE: a request every 1/RATE s on one
# keep-alive connection). One client, not several: h2load's clients fire their timers
# together, and ten of them made bursts of ten (direct p99 about 7 ms). The three paths take
# turns, ROUNDS slices of DURATION/ROUNDS each, and each path's percentiles are over all its
# slices: the VM's speed drifts within seconds (a direct p99 of 330 us in one 8 s run, 700 in
# the next), and a path measured in one block would carry its block's drift as its own.
rate=${RATE:-1000}
[ "$rate" -gt 0 ] || exit 0
command -v h2load >/dev/null || die "h2load not found (scripts/deps.sh bench; RATE=0 skips it)"
rounds=${ROUNDS:-5}
slice_s=$(((${duration%s} + rounds - 1) / rounds))
printf '{"prompt":[1,2,3],"max_tokens":1}' >"$tmp/body.json"
paced_slice() {  # paced_slice NAME URL: appends one slice's requests to $tmp/paced.NAME
  rm -f "$tmp/h2load.log"  # h2load appends to its log
  "${client_cpu[@]}" h2load --h1 -c 1 --rps "$rate" -D "$slice_s" \
    -d "$tmp/body.json" -H 'Content-Type: application/json' --log-file="$tmp/h2load.log" \
    "$2/v1/completions" >/dev/null
  cat "$tmp/h2load.log" >>"$tmp/paced.$1"
}
paced_summary() {  # paced_summary NAME: prints "NAME p50_us p99_us requests non2xx"
  sort -n -k3 "$tmp/paced.$1" | awk -v name="$1" '
    { us[NR] = $3; if ($2 < 200 || $2 > 299) bad++ }
    END { printf "%s %d %d %d %d\n", name, us[int(NR * 0.5)], us[int(NR * 0.99)], NR, bad }'
}
rm -f "$tmp"/paced.*
for _ in $(seq "$rounds"); do
  paced_slice direct "http://127.0.0.1:$up_port"
  paced_slice nginx "http://127.0.0.1:$proxy_port"
  paced_slice gateway "$gw_url"
done
paced_results=$(paced_summary direct; paced_summary nginx; paced_summary gateway)
echo "gateway_latency: paced at $rate requests/s (h2load, one client), $rounds slices of ${slice_s}s each, taking turns"
table requests non-2xx <<<"$paced_results"
