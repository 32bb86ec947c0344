#!/usr/bin/env bash
# Reject-path throughput of `spillway serve`: how many 429s per second the server answers end to
# end (HTTP parse, API-key lookup, JSON parse, admission on the engine strand, error reply) on
# keep-alive connections.
#
#   bench/reject_throughput.sh [SPILLWAY_BINARY]        # default $SPILLWAY, else build/spillway
#
# The server gets an API key whose tenant's token bucket holds 1 token refilled at 0.001/s: one
# warm-up request spends it, and from then on every request is answered 429 rate_limited. wrk
# then POSTs /v1/completions (bench/reject_throughput.lua) for DURATION and the script checks
# that every response was a 429 on a kept-alive connection (no other status, no socket errors,
# no "Connection: close"), and that /metrics counted at least as many 429s. Builds nothing.
#
# Environment (defaults in brackets):
#   DURATION [10s]  CONNECTIONS [64]  WRK_THREADS [1]  SERVER_THREADS [1]
#   PIN [1]: with >= 2 CPUs, pin the server to CPU 0 and wrk to CPU 1 (taskset), so the two do
#            not migrate across each other's core; PIN=0 leaves placement to the kernel.
# Prints wrk's report, the status counts and a line "reject_throughput: N 429/s; ...", with
# the server's CPU time per 429 (user + system, from /proc), which varies less than the rate
# when other processes share the machine. Then the same wrk run against nginx's limit_req on
# the same CPU (the reference: "reject_throughput nginx: ...") and the ratio of the two rates.
#   NGINX [1]: 0 skips the nginx run.
# Exits non-zero when the server does not start or a check fails.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-${SPILLWAY:-$here/../build/spillway}}
duration=${DURATION:-10s}
connections=${CONNECTIONS:-64}
wrk_threads=${WRK_THREADS:-1}
server_threads=${SERVER_THREADS:-1}
pin=${PIN:-1}
key=sk-bench

die() {
  echo "reject_throughput: $*" >&2
  exit 1
}
command -v wrk >/dev/null || die "wrk not found (Debian: apt-get install wrk)"
command -v curl >/dev/null || die "curl not found"
[ -x "$bin" ] || die "no spillway binary at '$bin' (build it, or pass its path / set SPILLWAY)"

server_cpu=() client_cpu=() placement="unpinned"
if [ "$pin" = 1 ] && [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
  server_cpu=(taskset -c 0) client_cpu=(taskset -c 1) placement="server on CPU 0, wrk on CPU 1"
fi

tmp=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 50); do
      kill -0 "$server_pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cat >"$tmp/config.yaml" <<YAML
server:
  threads: $server_threads
  max_connections: 4096
admission:
  policy: predictive
timeouts:
  drain_timeout_s: 1
api_keys:
  - key: $key
    tenant: bench
    rate_rps: 0.001
    burst: 1
YAML

"${server_cpu[@]}" "$bin" serve --port 0 --config "$tmp/config.yaml" >"$tmp/server.log" 2>&1 &
server_pid=$!
port=""
for _ in $(seq 150); do
  port=$(sed -n 's|.*listening on http://[^ ]*:\([0-9][0-9]*\).*|\1|p' "$tmp/server.log")
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$port" ] || die "server did not start: $(cat "$tmp/server.log")"
url="http://127.0.0.1:$port"

# Spend the bucket's one token, then make sure the next request is refused as planned.
post() {
  curl -s -o /dev/null -w '%{http_code}' -X POST "$url/v1/completions" \
    -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
    -d '{"prompt":[1,2,3],"max_tokens":4}'
}
first=$(post)
[ "$first" = 200 ] || die "warm-up request got $first, want 200"
probe=$(post)
[ "$probe" = 429 ] || die "probe request got $probe, want 429"

count_429() {
  curl -s "$url/metrics" | awk '/^spillway_http_requests_total\{status="429"\}/ {print $2}'
}
# The server's CPU time (user and system, clock ticks) from /proc: CPU per 429 holds up better
# than requests/s when other processes share the machine.
cpu_ticks() { awk '{print $14, $15}' "/proc/$server_pid/stat" 2>/dev/null || echo 0 0; }
before=$(count_429)
read -r user_before sys_before <<<"$(cpu_ticks)"

BENCH_KEY=$key "${client_cpu[@]}" wrk -t"$wrk_threads" -c"$connections" -d"$duration" \
  --latency -s "$here/reject_throughput.lua" "$url/v1/completions" | tee "$tmp/wrk.out"

read -r user_after sys_after <<<"$(cpu_ticks)"
after=$(count_429)
kill -0 "$server_pid" 2>/dev/null || die "the server died during the run"

# Checks on what the Lua done() printed; prints the result, or what failed.
result=$(awk -v before="${before:-0}" -v after="${after:-0}" \
  -v user="$((user_after - user_before))" -v sys="$((sys_after - sys_before))" \
  -v hz="$(getconf CLK_TCK)" '
  $1 == "status" { n[$2] += $3; if ($2 != 429) bad += $3 }
  $1 == "closes" { closes = $2 }
  $1 == "errors" { errs = $3 + $5 + $7 + $9 }
  $1 == "requests" { requests = $2; seconds = $4 / 1e6 }
  END {
    fail = 0
    if (requests == 0) { print "check: wrk completed no requests"; fail = 1 }
    if (bad > 0) { print "check: " bad " responses were not 429"; fail = 1 }
    if (n[429] != requests) { print "check: 429s " n[429] " != requests " requests; fail = 1 }
    if (errs > 0) { print "check: " errs " socket errors (connect/read/write/timeout)"; fail = 1 }
    if (closes > 0) { print "check: " closes " responses said Connection: close"; fail = 1 }
    if (after - before < requests) {
      print "check: /metrics counted " after - before " 429s, fewer than wrk saw"; fail = 1
    }
    if (fail) exit 1
    cpu = (user + sys) / hz
    served = after - before
    us = cpu > 0 && served > 0 ? 1e6 * cpu / served : 0
    per_cpu_s = us > 0 ? 1e6 / us : 0
    printf "%.0f 429/s; server CPU %.2f s (user %.2f, sys %.2f): %.1f us per 429, " \
      "%.0f 429/s per server CPU-second\n",
      requests / seconds, cpu, user / hz, sys / hz, us, per_cpu_s
  }' "$tmp/wrk.out" 2>&1) || die "checks failed: $result"

echo "reject_throughput: $result (wrk -t$wrk_threads -c$connections" \
  "-d$duration, keep-alive; server threads $server_threads; $placement; $(nproc) CPUs)"
spillway_rate=${result%% 429/s*}

# The reference in the same run, on the same CPU with the same wrk: nginx's limit_req answering
# 429 (its default error page and a Retry-After header) to the same POSTs, keyed by the same
# Authorization header, one worker process. Skipped when nginx is not installed (NGINX=0 too).
nginx=$(command -v nginx || echo /usr/sbin/nginx)
if [ "${NGINX:-1}" = 0 ]; then
  exit 0
fi
[ -x "$nginx" ] || die "nginx not found, the reference of this benchmark (scripts/deps.sh bench; NGINX=0 skips it)"
nginx_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$tmp/nginx"
cat >"$tmp/nginx/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log crit;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $tmp/nginx/body; proxy_temp_path $tmp/nginx/proxy;
  fastcgi_temp_path $tmp/nginx/fcgi; uwsgi_temp_path $tmp/nginx/uwsgi; scgi_temp_path $tmp/nginx/scgi;
  limit_req_zone \$http_authorization zone=tenants:1m rate=1r/m;
  server {
    listen 127.0.0.1:$nginx_port;
    location /v1/completions {
      limit_req zone=tenants;
      limit_req_status 429;
      limit_req_log_level info;
      add_header Retry-After 60 always;
      proxy_pass http://127.0.0.1:9;  # never reached after the first request
    }
  }
}
CONF
"${server_cpu[@]}" "$nginx" -c "$tmp/nginx/nginx.conf" -p "$tmp/nginx" >"$tmp/nginx/out" 2>&1 &
nginx_pid=$!
nginx_url="http://127.0.0.1:$nginx_port"
for _ in $(seq 50); do
  curl -s -o /dev/null "$nginx_url/" && break
  sleep 0.1
done
url=$nginx_url post >/dev/null  # spends the one request a minute
[ "$(url=$nginx_url post)" = 429 ] || die "nginx: the probe request was not refused 429"
nginx_ticks() { awk '{print $14, $15}' "/proc/$nginx_pid/stat" 2>/dev/null || echo 0 0; }
read -r user_before sys_before <<<"$(nginx_ticks)"
BENCH_KEY=$key "${client_cpu[@]}" wrk -t"$wrk_threads" -c"$connections" -d"$duration" \
  --latency -s "$here/reject_throughput.lua" "$nginx_url/v1/completions" >"$tmp/nginx.wrk"
read -r user_after sys_after <<<"$(nginx_ticks)"
kill -TERM "$nginx_pid" 2>/dev/null || true
wait "$nginx_pid" 2>/dev/null || true
nginx_result=$(awk -v user="$((user_after - user_before))" -v sys="$((sys_after - sys_before))" \
  -v hz="$(getconf CLK_TCK)" '
  $1 == "status" { n[$2] += $3; if ($2 != 429) bad += $3 }
  $1 == "errors" { errs = $3 + $5 + $7 + $9 }
  $1 == "requests" { requests = $2; seconds = $4 / 1e6 }
  $1 == "99%" { p99 = $2 }
  END {
    if (requests == 0 || bad > 0 || errs > 0) { print "check: not every response was a 429"; exit 1 }
    cpu = (user + sys) / hz
    printf "%.0f 429/s; nginx CPU %.2f s (user %.2f, sys %.2f): %.1f us per 429; p99 %s\n",
      requests / seconds, cpu, user / hz, sys / hz, 1e6 * cpu / requests, p99
  }' "$tmp/nginx.wrk") || die "nginx: $nginx_result"
spillway_p99=$(awk '$1 == "99%" { print $2 }' "$tmp/wrk.out")
echo "reject_throughput nginx: $nginx_result"
awk -v a="$spillway_rate" -v b="${nginx_result%% 429/s*}" -v p="$spillway_p99" 'BEGIN {
  printf "reject_throughput vs nginx limit_req: %.2fx its 429/s (spillway p99 %s)\n", a / b, p }'
