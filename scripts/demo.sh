#!/usr/bin/env bash
# The main job (make demo): the reference burst served live three ways, three engines behind
# the gateway losing two of them mid-burst, a real trace, then the one-page overload policy
# verified against a live engine.
#
#   scripts/demo.sh                  the demo (about 13 minutes after the build)
#   scripts/demo.sh --burst-runs N   only step 2 (the live burst, three policies and the cascade), N times, then
#                                    one table per policy with a column per run: how much the
#                                    live figures vary from run to run (README.md quotes it)
#
# `spillway serve` runs an EMULATED engine (a roofline cost model of the GPU paces each
# iteration; no model runs, the text is placeholder words); `spillway bench` sends the
# scenario's requests over HTTP, open loop, streaming, and measures at the client. Outputs
# (run summaries, per-request records, HTML reports) go to out/.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=./build/spillway
out=out
mkdir -p "$out"
trace=${TRACE:-../shared/traces/AzureLLMInferenceTrace_conv.csv}
server_pid=""

say() { printf '\n\033[1m%s\033[0m\n' "$*"; }

stop_server() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  server_pid=""
}
trap stop_server EXIT

# shellcheck source=scripts/serve_lib.sh
source scripts/serve_lib.sh  # (the working directory is the repository root)

# live_burst DIR [LABEL_SUFFIX]: step 2, `spillway serve --policy P` and `spillway bench` on
# scenarios/seed-burst-short.yaml for each policy; the summaries (DIR/live-P.json), records,
# bench output and server logs go to DIR, the summaries' paths to live_runs.
live_burst() {
  local dir=$1 suffix=${2:-} policy
  live_runs=()
  for policy in unbounded tail-drop predictive forecast; do
    printf '   %-11s ' "$policy:"
    start_server "$dir/serve-$policy.log" --policy "$policy"
    $bin bench --target "$url" --scenario scenarios/seed-burst-short.yaml \
      --policy-label "$policy$suffix" --no-progress --json "$dir/live-$policy.json" \
      --records "$dir/live-$policy.jsonl" --gpu-price-from policies/reference.yaml >"$dir/bench-$policy.txt"
    stop_server
    echo "done ($dir/bench-$policy.txt)"
    live_runs+=("$dir/live-$policy.json")
  done
  # The fifth column: the same arrivals against the 7B engine behind the gateway, with a 1B
  # fallback pool (the model cascade).
  printf '   %-11s ' "cascade:"
  $bin fleet --scenario scenarios/fleet/seed-burst-cascade-short.yaml --policy predictive \
    --policy-label "cascade$suffix" --no-progress --logs "$dir/fleet-cascade" \
    --json "$dir/live-cascade.json" >"$dir/fleet-cascade.txt" 2>&1
  echo "done ($dir/fleet-cascade.txt)"
  live_runs+=("$dir/live-cascade.json")
}

if [ "${1:-}" = "--burst-runs" ]; then
  runs=${2:-}
  [[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "usage: scripts/demo.sh [--burst-runs N]" >&2; exit 2; }
  rm -rf "$out/burst-runs"
  for k in $(seq 1 "$runs"); do
    say "Live burst, run $k of $runs (load average $(cut -d' ' -f1-3 /proc/loadavg))"
    mkdir -p "$out/burst-runs/$k"
    live_burst "$out/burst-runs/$k" "#$k"
  done
  for policy in unbounded tail-drop predictive forecast cascade; do
    say "$policy, $runs runs"
    files=()
    for k in $(seq 1 "$runs"); do
      files+=("$out/burst-runs/$k/live-$policy.json")
    done
    $bin report "${files[@]}" --out "$out/burst-runs/report-$policy" --table | sed 's/^/   /'
  done
  exit 0
fi

say "1. What does the reference engine sustain? (seed-a100-7b: Llama-2-7B on A100, emulated)"
echo "   Bisection in the simulator on a steady Poisson rate of the 70/20/10 chat/coding/document"
echo "   mix until p95 TTFT or p95 TPOT leaves its SLO (1.0 s / 35 ms)."
mkdir -p "$out/policy"
$bin sim --scenario scenarios/seed-burst.yaml --measure-capacity \
  --json "$out/policy/capacity.json" | tail -1

say "2. The reference burst, live: 8 req/s for 10 s, 30 req/s for 40 s, 8 req/s for 10 s"
cat <<'TXT'
   Four times: `spillway serve --policy P` (emulated engine, the lesson's 4.5 s gateway
   deadline) and `spillway bench` replaying scenarios/seed-burst-short.yaml against it, about
   a minute each; then a fifth with a 1B fallback engine behind `spillway gateway`. Clients give up after 2 s without a first token. Goodput = completed within
   TTFT 1 s and TPOT 35 ms, measured at the client (vLLM bench --goodput). Engine seconds are
   priced at the lesson's $5.12 per A100 hour (§4.1: one GPU per engine), read from
   policies/reference.yaml (`--gpu-price-from`).
TXT
live_burst "$out"
echo
$bin report "${live_runs[@]}" --out "$out/live-report" --table | sed 's/^/   /'
cat <<'TXT'

   unbounded:  everything is admitted; during the burst the queue outgrows the clients'
               patience, so the engine serves requests that have waited ~2 s: goodput collapses.
   tail-drop:  a 32-request queue (503 queue_full) still holds more than a second of work:
               the requests it serves miss the 1 s TTFT SLO.
   predictive: W_est = queue / measured service rate; a request that cannot get its first
               token within the SLO is refused at once (429 + Retry-After), and one that
               could not finish before the 4.5 s gateway deadline too (deadline_unreachable):
               the engine spends its time on requests that will be good.
   forecast:   predictive, but each request's first token is forecast by stepping a copy of
               the engine forward (its batch, KV blocks, prefill budget and the queue ahead),
               with a margin from the forecasts' measured errors: what is admitted starts in
               time, so nothing is dropped at the queue head after a wait.
   cascade:    the same predictive engine behind `spillway gateway`, with a Llama-3.2-1B
               engine as its fallback (the lesson's model cascade, 7B -> 1B): what the 7B
               refuses for load is served by the 1B (X-Degraded: cascade) instead of refused.
               The rows "served by" split the good requests by the model that ran them.
TXT

say "3. The simulator on the same scenario (virtual time, the same engine and admission code)"
echo "   The same rows as the live table, for scenarios/seed-burst-short.yaml (README.md shows both)."
$bin sim --scenario scenarios/seed-burst-short.yaml --compare unbounded,tail-drop,predictive,forecast --gpu-price-from policies/reference.yaml \
  --json "$out/sim-seed-burst-short.json" | sed 's/^/   /'
echo "   (The simulator measures engine time exactly; live, bench reads it from the server's /metrics.)"

say "4. Three engines behind spillway gateway, one killed and one drained mid-burst (live)"
cat <<'TXT'
   scenarios/fleet/kill-and-drain-short.yaml: the burst above at three times its rates against
   three emulated engines; engine 1 is killed (SIGKILL) 10 s into the burst and engine 2
   drained (SIGTERM) 20 s into it, so one engine carries the rest. `spillway fleet` starts the
   engines, the gateway and the load, and sends the faults; twice, about a minute each: what
   most fleets run (engines that admit everything behind round-robin), and the two stages
   (predictive engines behind the gateway, which routes on predicted TTFT and sheds early).
TXT
fleet_runs=()
for run in "unbounded round-robin" "predictive gateway"; do
  read -r policy router <<<"$run"
  printf '   %-22s ' "$policy@$router:"
  $bin fleet --scenario scenarios/fleet/kill-and-drain-short.yaml --policy "$policy" \
    --router "$router" --no-progress --logs "$out/fleet-$policy-$router" \
    --json "$out/fleet-$policy-$router.json" >"$out/fleet-$policy-$router.txt" 2>&1
  echo "done ($out/fleet-$policy-$router.txt)"
  fleet_runs+=("$out/fleet-$policy-$router.json")
done
echo
$bin report "${fleet_runs[@]}" --out "$out/fleet-report" --table | sed 's/^/   /'
cat <<'TXT'

   Behind round-robin the surviving engine's queue outgrows the clients' patience and goodput
   collapses; behind the gateway the killed engine costs only the streams it was running
   (they end with an SSE error event, never as if complete), the drained one finishes its
   work, and the gateway keeps sending only what the last engine can serve in time. The
   simulator runs the same fleet in virtual time with the same routing code:
TXT
$bin sim --scenario scenarios/fleet/kill-and-drain-short.yaml --router round-robin,gateway \
  --compare unbounded,predictive | grep -E '^(policy|admitted|completed|failed|goodput|TTFT p95)' \
  | sed 's/^/   /'

if [ -f "$trace" ]; then
  say "5. A real trace, live: Azure LLM inference (conversation), 2 minutes, on h100-llama3-8b"
  echo "   Source: the Azure LLM inference trace 2023, conversation service: Azure/AzurePublicDataset,"
  echo "   data/AzureLLMInferenceTrace_conv.csv, CC-BY-4.0 (read from $trace)."
  echo "   Predictive admission (TTFT SLO 2 s, TPOT 100 ms), at 1x and 3x the recorded load."
  # scenarios/azure-conv.yaml names ../shared's copy; a copy of it names $trace instead.
  trace_abs="$(cd "$(dirname "$trace")" && pwd)/$(basename "$trace")"
  sed "s|^  file: .*|  file: $trace_abs|" scenarios/azure-conv.yaml >"$out/azure-conv.yaml"
  trace_runs=()
  for m in 1 3; do
    printf '   %sx: ' "$m"
    start_server "$out/serve-azure-${m}x.log" --profile h100-llama3-8b --policy predictive \
      --ttft-slo-s 2 --tpot-slo-s 0.1 --request-timeout-s 100 --client-timeout-s 130
    $bin bench --target "$url" --scenario "$out/azure-conv.yaml" --rate-multiplier "$m" \
      --policy-label "predictive ${m}x" --no-progress --json "$out/live-azure-${m}x.json" \
      >"$out/bench-azure-${m}x.txt"
    stop_server
    echo "done ($out/bench-azure-${m}x.txt)"
    trace_runs+=("$out/live-azure-${m}x.json")
  done
  echo
  $bin report "${trace_runs[@]}" --out "$out/azure-report" --table | sed 's/^/   /'
  cat <<'TXT'

   At 3x the recorded load the engine cannot serve everything: predictive admission refuses
   the excess at the door (429 with Retry-After) and keeps what it admits within the SLOs.
TXT
else
  say "5. (skipped: no trace at $trace)"
  cat <<'TXT'
   The trace is AzureLLMInferenceTrace_conv.csv, the Azure LLM inference trace 2023
   (conversation service) of the Azure/AzurePublicDataset repository on GitHub, file
   data/AzureLLMInferenceTrace_conv.csv, license CC-BY-4.0. Put it at
   ../shared/traces/ beside this checkout, or run TRACE=path/to/it make demo.
TXT
fi

say "6. The one-page Overload and Failure Policy, from these runs, verified against a live engine"
cat <<'TXT'
   `policy init` fills the lesson's §7 template from step 1's capacity run
   (out/policy/capacity.json: mu and the binding SLO, with the command and time that measured
   them), step 2's live unbounded run (the wasted cost under naive FIFO: its engine seconds on
   work that never served its client, priced) and its cascade run (the fallback model and
   its p95 TTFT), and the scenario (rates, SLOs, the engine's
   flags, the profile's physical figures);
   `policy render` turns it into serve's config; `policy verify` runs the lesson's validation
   checklist against a serve started on that config (baseline at 8 req/s, the 30 req/s burst, a
   retry storm of 100 clients, streams closed mid-generation, a replay against the simulator:
   about two minutes) and writes each verdict and its evidence into out/policy/policy.yaml and
   its page. (policies/reference.yaml is the same policy kept by hand, with its reasons.)
TXT
$bin policy init --calibration "$out/policy/capacity.json" --scenario scenarios/seed-burst.yaml \
  --out "$out/policy/draft.yaml" --force \
  --name "reference (emulated seed-a100-7b behind spillway serve), from make demo's runs" \
  --gpu-hour-usd 5.12 --naive-run "$out/live-unbounded.json" \
  --cascade-run "$out/live-cascade.json" \
  --gpu-price-source "AWS EC2 p4de.24xlarge on demand, \$40.96/h for 8 A100-80GB (the lesson's §10, 2026-11)" \
  | sed 's/^/   /'
$bin policy render "$out/policy/draft.yaml" --out "$out/policy" | sed 's/^/   /'
start_server "$out/policy/serve.log" --config "$out/policy/serve.yaml"
verify_status=0
$bin policy verify "$out/policy/draft.yaml" --target "$url" --out "$out/policy" \
  --baseline-s 20 --burst-s 20 --replay-s 40 --no-progress | sed 's/^/   /' || verify_status=$?
stop_server
$bin policy alerts "$out/policy/policy.yaml" --out "$out/policy/alerts.yaml" | sed 's/^/   /'
$bin policy check "$out/policy/policy.yaml" | sed "s/^/   /" || true
echo "   The page: $out/policy/policy.html (Markdown: $out/policy/policy.md)."
if [ "$verify_status" -ne 0 ]; then
  echo "   policy verify found an item failing (exit $verify_status): its evidence is above and in the page."
fi

say "Reports: open $out/live-report/index.html, $out/fleet-report/index.html, $out/policy/policy.html (and $out/azure-report/index.html) in a browser."
echo "Run summaries (JSON, per-second time series), per-request records and logs are in $out/."
exit "$verify_status"
