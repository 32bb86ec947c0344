#!/usr/bin/env bash
# The soak (make soak; docs/soak.md): scenarios/soak.yaml, ten times the engine's capacity for
# ten minutes, replayed by `spillway bench` against `spillway serve` (the EMULATED engine,
# policy predictive unless SOAK_POLICY says otherwise), while the server's resident memory and
# open descriptors are sampled from /proc. Then `spillway soak-check` judges the run: every reply one the overload
# contract documents (docs/serve.md), memory flat after warm-up, descriptors back where they
# were, /health still 200, a clean exit on SIGTERM and, under forecast, at most 1% of the
# admitted broken (dropped at the queue head, abandoned, late). Exit status 0 only when all hold.
#
# Environment:
#   SPILLWAY       the binary (default build/spillway)
#   SOAK_SECONDS   length of the load, whole seconds in [10, 600] (default 600)
#   SOAK_SAMPLE_S  seconds between samples (default 5; 1 when SOAK_SECONDS < 300)
#   SOAK_OUT       output directory (default out/soak)
#   SOAK_RSS_BOUND_MIB  the RSS growth bound, MiB (default 4, see docs/soak.md)
#   SOAK_POLICY    serve's admission policy (default predictive, as docs/soak.md was first
#                  measured; forecast is serve's own default)
#
# Outputs in $SOAK_OUT: rss.csv (t_s,rss_bytes,open_fds; t from the load's start, the last row
# taken after the run), rss.svg (+ rss.gp), summary.json, records.jsonl and timeseries.jsonl
# from bench, bench.txt (its table), metrics-end.txt (/metrics after the run), serve.log,
# verdict.txt (the check's report; its last line is the verdict).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${SPILLWAY:-./build/spillway}
out=${SOAK_OUT:-out/soak}
seconds=${SOAK_SECONDS:-600}
scenario=scenarios/soak.yaml
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 10 ] || [ "$seconds" -gt 600 ]; then
  echo "soak: SOAK_SECONDS must be a whole number of seconds in [10, 600], got '$seconds'" >&2
  exit 2
fi
default_sample_s=5
[ "$seconds" -ge 300 ] || default_sample_s=1
sample_s=${SOAK_SAMPLE_S:-$default_sample_s}
# A decimal number > 0 (not 0, 0.0, 0.00, ...).
positive_number() { [[ "$1" =~ ^[0-9]+(\.[0-9]+)?$ && "$1" =~ [1-9] ]]; }
if ! positive_number "$sample_s"; then
  echo "soak: SOAK_SAMPLE_S must be a number of seconds > 0, got '$sample_s'" >&2
  exit 2
fi
rss_bound_mib=${SOAK_RSS_BOUND_MIB:-4}
if ! positive_number "$rss_bound_mib"; then
  echo "soak: SOAK_RSS_BOUND_MIB must be a number of MiB > 0, got '$rss_bound_mib'" >&2
  exit 2
fi
policy=${SOAK_POLICY:-predictive}
case "$policy" in
  unbounded | tail-drop | predictive | forecast) ;;
  *)
    echo "soak: SOAK_POLICY must be unbounded, tail-drop, predictive or forecast, got '$policy'" >&2
    exit 2
    ;;
esac
if [ ! -x "$bin" ]; then
  echo "soak: $bin is not an executable (build it: make soak, or set SPILLWAY)" >&2
  exit 2
fi
mkdir -p "$out"
rm -f "$out"/{rss.csv,rss.svg,rss.gp,summary.json,records.jsonl,timeseries.jsonl,bench.txt} \
  "$out"/{metrics-end.txt,serve.log,verdict.txt}
server_pid=""
sampler_pid=""

cleanup() {
  if [ -n "$sampler_pid" ]; then
    kill "$sampler_pid" 2>/dev/null || true
    wait "$sampler_pid" 2>/dev/null || true
  fi
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT

# shellcheck source=scripts/serve_lib.sh
source scripts/serve_lib.sh  # (the working directory is the repository root)

# One row of rss.csv for the server now: seconds since $t0, VmRSS in bytes, open descriptors.
sample() {
  local rss fds
  rss=$(awk '/^VmRSS:/ { printf "%d", $2 * 1024 }' "/proc/$server_pid/status" 2>/dev/null) || return 0
  [ -n "$rss" ] || return 0
  fds=$(ls "/proc/$server_pid/fd" 2>/dev/null | wc -l)
  awk -v now="$EPOCHREALTIME" -v t0="$t0" -v rss="$rss" -v fds="$fds" \
    'BEGIN { printf "%.1f,%s,%s\n", now - t0, rss, fds }'
}

echo "soak: ${seconds} s of scenarios/soak.yaml (111 req/s, 10x capacity) against spillway serve --policy $policy"
start_server "$out/serve.log" --policy "$policy"
echo "soak: server pid $server_pid at $url; samples every ${sample_s} s into $out/rss.csv"
t0=$EPOCHREALTIME
echo "t_s,rss_bytes,open_fds" >"$out/rss.csv"
sample >>"$out/rss.csv"
(
  while sleep "$sample_s" && kill -0 "$server_pid" 2>/dev/null; do
    sample >>"$out/rss.csv"
  done
) &
sampler_pid=$!

bench_status=0
"$bin" bench --target "$url" --scenario "$scenario" --duration-limit-s "$seconds" \
  --policy-label soak --no-progress --json "$out/summary.json" --records "$out/records.jsonl" \
  --timeseries "$out/timeseries.jsonl" >"$out/bench.txt" 2>&1 || bench_status=$?
kill "$sampler_pid" 2>/dev/null || true
wait "$sampler_pid" 2>/dev/null || true
sampler_pid=""
cat "$out/bench.txt"
if [ "$bench_status" -ne 0 ]; then
  echo "soak: FAIL: spillway bench exited with status $bench_status" | tee "$out/verdict.txt"
  exit 1
fi

# After the run: let the last connections close, take the final sample, ask /health and
# /metrics, then stop the server the way an orchestrator would (SIGTERM) and keep its status.
sleep 2
sample >>"$out/rss.csv"
health=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$url/health" || true)
[[ "$health" =~ ^[0-9]+$ ]] || health=0
curl -s --max-time 5 -o "$out/metrics-end.txt" "$url/metrics" || : >"$out/metrics-end.txt"
server_exit=0
if kill -0 "$server_pid" 2>/dev/null; then
  kill -TERM "$server_pid"
fi
wait "$server_pid" || server_exit=$?
server_pid=""

echo
check_status=0
# Issue 14's goal under forecast: at most 1% of the admitted dropped at the queue head,
# abandoned or outside an SLO (predictive admits at the edge and drops a third at 10x: its
# figure is reported, not bounded).
promise_bound=()
[ "$policy" != forecast ] || promise_bound=(--max-broken-share 0.01)
"$bin" soak-check --records "$out/records.jsonl" --samples "$out/rss.csv" \
  --summary "$out/summary.json" "${promise_bound[@]}" \
  --duration-s "$seconds" --metrics "$out/metrics-end.txt" --health-status "$((10#$health))" \
  --server-exit-code "$server_exit" --rss-growth-bound-mib "$rss_bound_mib" \
  --gnuplot "$out/rss.gp" >"$out/verdict.txt" || check_status=$?
cat "$out/verdict.txt"
if [ "$check_status" -eq 2 ]; then
  exit 2
fi
if command -v gnuplot >/dev/null 2>&1; then
  (cd "$out" && gnuplot rss.gp) || echo "soak: gnuplot failed to draw $out/rss.svg" >&2
else
  echo "soak: gnuplot not found (make deps installs gnuplot-nox): no $out/rss.svg" >&2
fi
echo "soak: outputs in $out (rss.csv, rss.svg, summary.json, records.jsonl, verdict.txt)"
exit "$check_status"
