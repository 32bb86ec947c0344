#!/usr/bin/env bash
# The failure-injection suite at full length (issue 5, docs/failure.md): every scenario of
# scenarios/failure/ run by the simulator and live (`spillway bench` against `spillway serve`),
# and the two of scenarios/fleet/ that replay them through the gateway (retry storm, priority
# skew: three engines behind `spillway gateway`),
# each checked against its pass criteria by the same tests CI runs in short form
# (tests/sim/failure_*, tests/failure/), then one HTML report per scenario, sim beside live.
#
# Usage: scripts/failure_suite.sh [BUILD_DIR]   (default build/; `make bench-failure`)
# Output: out/failure/{sim,live}/SCENARIO.json and out/failure/SCENARIO/index.html; issue 14's
# goal rows (forecast, sim beside live) as out/failure/sim-ROW.json and out/failure/ROW/.
# Exit status: non-zero when any criterion failed (every step still runs).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=out/failure
status=0

rm -rf "$out" && mkdir -p "$out/sim" "$out/live"

echo "== simulator: pass criteria (tests/sim/failure_*)"
"$build/sim_test" --gtest_filter='Failure*' --gtest_brief=1 || status=1
for scenario in scenarios/failure/*.yaml; do
  name=$(basename "$scenario" .yaml)
  case $name in  # the admission policy the live test starts serve with
    cancellation | long-prompt-burst) policy=unbounded ;;
    *) policy=forecast ;;  # serve's default
  esac
  "$build/spillway" sim --scenario "$scenario" --policy "$policy" --json "$out/sim/$name.json" \
    >/dev/null || status=1
done
for scenario in scenarios/fleet/retry-storm.yaml scenarios/fleet/priority-skew.yaml; do
  name=$(sed -n 's/^name: *//p' "$scenario")  # the live run's file is named after it
  "$build/spillway" sim --scenario "$scenario" --policy predictive --json "$out/sim/$name.json" \
    >/dev/null || status=1
done

echo "== live, full length: pass criteria (tests/failure/, about 22 minutes)"
SPILLWAY_FAILURE_SCALE=1000 SPILLWAY_FAILURE_OUT="$out/live" \
  "$build/failure_test" --gtest_brief=1 || status=1

echo "== reports"
declare -A reported=()
# Issue 14's goal rows (tests/failure/live_forecast_goals_test.cc), forecast in both.
goal() {  # NAME SCENARIO LIVE_JSON [sim flags...]
  local name=$1 scenario=$2 live_json=$3
  shift 3
  "$build/spillway" sim --scenario "$scenario" --policy forecast --json "$out/sim-$name.json" \
    "$@" >/dev/null || status=1
  local runs=("$out/sim-$name.json")
  [[ -f $live_json ]] && runs+=("$live_json") && reported[$live_json]=1
  echo "-- $name"
  "$build/spillway" report "${runs[@]}" --out "$out/$name" --table || status=1
}
goal seed-burst-eos scenarios/seed-burst-eos.yaml "$out/live/seed-burst-eos-forecast.json"
goal azure-conv scenarios/azure-conv.yaml "$out/live/azure-conv-forecast.json"
goal azure-conv-x3 scenarios/azure-conv.yaml "$out/live/azure-conv-forecast-x3.json" \
  --time-scale 0.3333333333
for sim_json in "$out"/sim/*.json; do
  name=$(basename "$sim_json" .json)
  runs=("$sim_json")
  for live_json in "$out/live/$name.json" "$out/live/$name"-*.json; do
    [[ -f $live_json ]] && runs+=("$live_json") && reported[$live_json]=1
  done
  echo "-- $name"
  "$build/spillway" report "${runs[@]}" --out "$out/$name" --table || status=1
done
for live_json in "$out"/live/*.json; do  # live runs without a scenario file here (drain)
  [[ -f $live_json && -z ${reported[$live_json]:-} ]] || continue
  name=$(basename "$live_json" .json)
  echo "-- $name"
  "$build/spillway" report "$live_json" --out "$out/$name" --table || status=1
done

if ((status == 0)); then
  echo "failure suite: every criterion passed; reports under $out/*/index.html"
else
  echo "failure suite: FAILED (see above); reports under $out/*/index.html" >&2
fi
exit "$status"
