#!/usr/bin/env bash
# A cold simultaneous burst: how fast the refusals reach the client, beside nginx answering 429
# to the same burst from the same load generator (issue 14's goal row: "every refusal answered
# at the door, p99 under 50 ms live").
#
#   bench/cold_burst.sh [SPILLWAY_BINARY]        # default $SPILLWAY, else build/spillway
#
# For each scenario (COUNTS: scenarios/cold-burst-N.yaml, every request at 0 s), RUNS times:
# a fresh `spillway serve --scenario FILE --policy forecast`, then `spillway bench --records`
# against it; then the same bench against nginx answering every POST 429 at once (a static
# reply with Retry-After, one worker process: the fastest refusal this machine's TCP stack and
# this client allow). Prints per run the outcomes and the refusals' p50 / p99 / max at the
# client (`e2e_s` of the records: from the request's send to its answer), and the ratio of
# Spillway's p99 to nginx's in the same run.
#
# Environment (defaults in brackets): COUNTS ["100 1000"]  RUNS [3]
# Exits non-zero when a server does not start or an admitted request was dropped at the head.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-${SPILLWAY:-$here/../build/spillway}}
bench_name=cold_burst
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
counts=${COUNTS:-"100 1000"}
runs=${RUNS:-3}
[ -x "$bin" ] || die "no spillway binary at '$bin' (build it, or pass its path / set SPILLWAY)"
nginx=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx" ] || die "nginx not found, the reference of this benchmark (scripts/deps.sh bench)"

# refusals RECORDS: "completed C rejected R dropped D; refusals p50 A ms p99 B ms max M ms".
refusals() {
  python3 - "$1" <<'PY'
import json, math, sys
from collections import Counter
records = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
outcomes = Counter(r["outcome"] for r in records)
times = sorted(r["e2e_s"] for r in records if r["outcome"] == "rejected")
def rank(q):
    return times[max(0, math.ceil(q * len(times)) - 1)] * 1e3 if times else float("nan")
print("completed %d rejected %d dropped %d; refusals p50 %.1f ms p99 %.1f ms max %.1f ms"
      % (outcomes["completed"], outcomes["rejected"], outcomes["dropped"], rank(0.5), rank(0.99),
         rank(1.0)))
PY
}

# nginx: every POST answered 429 with Retry-After, GET /v1/models 200 (bench asks for the model).
nginx_port=$(free_port)
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
  server {
    listen 127.0.0.1:$nginx_port backlog=4096;
    location = /v1/models {
      default_type application/json;
      return 200 '{"object":"list","data":[{"id":"spillway-emulated","object":"model"}]}';
    }
    location / {
      add_header Retry-After 1 always;
      default_type application/json;
      return 429 '{"error":{"message":"overloaded","type":"overloaded","code":"queue_delay_exceeded"}}';
    }
  }
}
CONF

status=0
for n in $counts; do
  scenario="$here/../scenarios/cold-burst-$n.yaml"
  [ -f "$scenario" ] || die "no scenario $scenario"
  for run in $(seq "$runs"); do
    "$bin" serve --port 0 --scenario "$scenario" --policy forecast >"$tmp/serve.log" 2>&1 &
    server_pid=$!
    pids+=("$server_pid")
    url=$(wait_url "$tmp/serve.log")
    "$bin" bench --target "$url" --scenario "$scenario" --records "$tmp/spillway.jsonl" \
      --no-progress >/dev/null 2>"$tmp/bench.err" || die "bench failed: $(cat "$tmp/bench.err")"
    kill -TERM "$server_pid"
    wait "$server_pid" 2>/dev/null || true

    "$nginx" -c "$tmp/nginx/nginx.conf" -p "$tmp/nginx" >"$tmp/nginx/out" 2>&1 &
    nginx_pid=$!
    pids+=("$nginx_pid")
    for _ in $(seq 50); do
      curl -s -o /dev/null "http://127.0.0.1:$nginx_port/v1/models" && break
      sleep 0.1
    done
    "$bin" bench --target "http://127.0.0.1:$nginx_port" --scenario "$scenario" --no-metrics \
      --records "$tmp/nginx.jsonl" --no-progress >/dev/null 2>"$tmp/bench.err" ||
      die "bench against nginx failed: $(cat "$tmp/bench.err")"
    kill -TERM "$nginx_pid"
    wait "$nginx_pid" 2>/dev/null || true

    ours=$(refusals "$tmp/spillway.jsonl")
    theirs=$(refusals "$tmp/nginx.jsonl")
    echo "cold_burst $n run $run: spillway: $ours"
    echo "cold_burst $n run $run: nginx:    $theirs"
    p99_ours=$(sed -n 's/.*p99 \([0-9.]*\) ms.*/\1/p' <<<"$ours")
    p99_theirs=$(sed -n 's/.*p99 \([0-9.]*\) ms.*/\1/p' <<<"$theirs")
    python3 -c "print('cold_burst $n run $run: refusals p99 spillway / nginx = %.2f' % ($p99_ours / $p99_theirs))"
    case "$ours" in *"dropped 0;"*) ;; *) status=1 ;; esac
  done
done
exit "$status"
