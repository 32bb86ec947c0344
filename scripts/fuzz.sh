#!/usr/bin/env bash
# Builds the libFuzzer targets (CMake preset "fuzz": clang-14, ASan + UBSan, build-fuzz/) and
# runs each for SECONDS (default 30) on a scratch copy of its seed corpus in fuzz/corpus/, so
# the committed corpus never grows. Prints one summary line per target; exits non-zero when
# any target finds a crash, a timeout (> FUZZ_INPUT_TIMEOUT s for one input, default 5), a leak
# or an out-of-memory.
#
#   scripts/fuzz.sh [SECONDS]
#   FUZZ_TARGETS="request_parser_fuzz profile_fuzz" scripts/fuzz.sh 60   # a subset
#   FUZZ_JOBS=2 scripts/fuzz.sh 300                                       # two at a time
#
# A failing input is left in build-fuzz/fuzz-run/TARGET/ (crash-*, timeout-*, leak-*, oom-*);
# reproduce with `build-fuzz/TARGET FILE`, minimise with -minimize_crash=1 (docs/fuzzing.md).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-30}"
jobs="${FUZZ_JOBS:-1}"
# Wall seconds one input may take; CI, which fuzzes beside other work at idle priority, gives 30.
input_timeout="${FUZZ_INPUT_TIMEOUT:-5}"
targets=(${FUZZ_TARGETS:-request_parser_fuzz http_request_fuzz scenario_loader_fuzz
  server_config_fuzz profile_fuzz})

# Symbolized stacks in reports (llvm-14 from scripts/deps.sh).
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ] && [ -x /usr/lib/llvm-14/bin/llvm-symbolizer ]; then
  export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
fi

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)"

run_root=build-fuzz/fuzz-run
rm -rf "$run_root"
mkdir -p "$run_root"

# run_one TARGET: fuzzes TARGET for $seconds; its log and any failing input go to
# $run_root/TARGET/.
run_one() {
  local target="$1"
  local dir="$run_root/$target"
  mkdir -p "$dir/corpus"
  cp -r "fuzz/corpus/$target/." "$dir/corpus/"
  local dict=()
  [ -f "fuzz/dict/$target.dict" ] && dict=("-dict=fuzz/dict/$target.dict")
  # libFuzzer's timeout report can deadlock when the alarm lands inside malloc: `timeout`
  # ends such a run (exit 124) well after -max_total_time.
  timeout --kill-after=30 "$((seconds + input_timeout + 120))" \
    "build-fuzz/$target" "$dir/corpus" "${dict[@]}" \
    -max_total_time="$seconds" -timeout="$input_timeout" -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$dir/" >"$dir/log" 2>&1
}

# summary TARGET STATUS: one line from the libFuzzer log.
summary() {
  local target="$1" status="$2" log="$run_root/$1/log"
  local execs per_s corpus
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  per_s=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  corpus=$(grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' "$log" | tail -1 | cut -d' ' -f2)
  local verdict="ok"
  if [ "$status" -ne 0 ]; then
    local artifact
    artifact=$(ls "$run_root/$target" | grep -E '^(crash|timeout|leak|oom)-' | head -1 || true)
    verdict="FAILED (exit $status) ${artifact:-(no input saved: a hang? see the log)}"
  fi
  printf 'fuzz: %-22s %s s  execs %-10s exec/s %-7s corpus %-12s %s\n' \
    "$target" "$seconds" "${execs:-?}" "${per_s:-?}" "${corpus:-?}" "$verdict"
}

declare -A status
# reap PID:TARGET: waits for one run and records its exit status.
reap() {
  local pid="${1%%:*}" target="${1#*:}" rc=0
  wait "$pid" || rc=$?
  status["$target"]=$rc
}
pending=()
for target in "${targets[@]}"; do
  run_one "$target" &
  pending+=("$!:$target")
  if [ "${#pending[@]}" -ge "$jobs" ]; then
    reap "${pending[0]}"
    pending=("${pending[@]:1}")
  fi
done
for entry in "${pending[@]}"; do
  reap "$entry"
done

failed=0
for target in "${targets[@]}"; do
  summary "$target" "${status[$target]}"
  if [ "${status[$target]}" -ne 0 ]; then
    failed=1
    tail -n 40 "$run_root/$target/log" | sed "s/^/  $target: /"
  fi
done
exit "$failed"
