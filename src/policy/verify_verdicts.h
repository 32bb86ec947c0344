#pragma once
// The verdicts of `spillway policy verify`: each checklist item of the policy (the lesson's
// VALIDATION CHECKLIST and its cancellation checklist, ../shared/seeds/overload-and-failure-
// handling.txt §7) judged from what a verification run measured, with its evidence (the
// figures and the run file they came from). Pure: the runs are arguments; the live driver
// (apps/spillway/policy_verify_command.cc) makes them. The criteria are docs/policy.md's
// "Verify" table.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/types.h"
#include "policy/policy.h"
#include "report/run_summary.h"

namespace spillway::policy {

/// Relative tolerance of the trace replay's figures against the simulator's (the live-vs-sim
/// agreement suite's, tests/agreement), with absolute floors for small figures.
inline constexpr double kReplayTolerance = 0.15;
inline constexpr double kReplayGoodputFloorRps = 0.25;
inline constexpr Seconds kReplayTtftFloorS = 0.05;
inline constexpr double kReplayAdmittedFloor = 0.02;  ///< of the admitted share (0-1)

/// How soon after the last client left its running requests and KV blocks must be back to
/// their idle levels, seconds, at most: the lesson asks for the next step boundary (tens of
/// ms); the bound leaves room for the metrics poll (every 20 ms) and the scrape itself. It is
/// also at most half the time the streams had left to generate, so that an engine which lets
/// them run to their end fails (DisconnectFreedBoundS).
inline constexpr Seconds kDisconnectFreedBoundS = 1.0;
/// KV usage (0-1) within this of the idle level counts as freed.
inline constexpr double kKvUsageSlack = 0.005;

/// A retry round holding more than this share of its retries in one 100 ms window re-formed
/// the synchronised spike the jitter is there to break (a fixed retry delay puts them all in
/// one window; 0.5 s of jitter spreads them over five).
inline constexpr double kRetryRoundPeakShare = 0.5;
/// Rounds with fewer retries than this are not judged (too few to show a spike).
inline constexpr std::int64_t kRetryRoundMinRetries = 10;

/// The replica baseline (Poisson at the base rate): pass when p95 TTFT and p95 TPOT are within
/// the policy's SLOs and the goodput share (good / requests) reaches slo.goodput_share.
ChecklistItem JudgeBaseline(const Policy& policy, const RunSummary& baseline,
                            std::string_view run_file);

/// The chunked-prefill baseline: the baseline's verdict when the policy enables chunked
/// prefill (the baseline ran on the engine as the policy configures it), else unchecked.
ChecklistItem JudgeChunkedPrefill(const Policy& policy, const ChecklistItem& baseline);

/// Admission under the burst: pass when the target refused part of the burst and what it
/// served got its first token within the TTFT SLO at p95; fail when the SLO broke (or a 500
/// answered load); unchecked when nothing was refused and the SLO held (the burst did not
/// overload the target).
ChecklistItem JudgeAdmission(const Policy& policy, const RunSummary& burst,
                             std::string_view run_file);

/// The fallback cascade, from the burst: pass when one of its steps answered part of it (a
/// model other than `asked_model` served, max_tokens clamped, an exact-result cache hit);
/// unchecked otherwise, naming what was looked for (a bare engine has no cascade: verify the
/// gateway that runs it).
ChecklistItem JudgeCascade(const Policy& policy, const RunSummary& burst,
                           std::string_view asked_model, std::string_view run_file);

/// One attempt of the retry storm: which attempt of its request (1 = the first) and when it
/// was sent, seconds from the start.
struct AttemptSend {
  std::int32_t attempt = 1;
  Seconds sent_s = 0;
};

/// The retries of one round (every request's attempt number `attempt`).
struct RetryRound {
  std::int32_t attempt = 2;
  std::int64_t retries = 0;
  std::int64_t peak_per_100ms = 0;  ///< the most of them sent within one 100 ms window
};

/// Arrivals at the target during the storm, in 100 ms windows from its first send.
struct RetryStormFigures {
  std::int64_t clients = 0;  ///< first attempts
  std::int64_t attempts = 0;
  std::int64_t retries = 0;
  Seconds span_s = 0;               ///< first send to last
  std::int64_t peak_per_100ms = 0;  ///< every attempt (the first wave is the clients' own)
  double mean_per_100ms = 0;        ///< every attempt over the span's windows
  std::int64_t peak_retries_per_100ms = 0;
  std::vector<RetryRound> rounds;  ///< attempt 2, 3, ... in order
};

/// The storm's figures from its attempts' send times.
RetryStormFigures MeasureRetryStorm(const std::vector<AttemptSend>& sends);

/// Pass when no retry round of kRetryRoundMinRetries or more put more than
/// kRetryRoundPeakShare of its retries into one 100 ms window; unchecked when no round had
/// that many (the target refused too little to retry).
ChecklistItem JudgeRetryStorm(const RetryStormFigures& storm, std::string_view run_file);

/// What the disconnect test saw: requests that left mid-stream, and the target's running
/// requests and KV usage (vllm:num_requests_running, vllm:kv_cache_usage_perc) when idle
/// before, at their peak while streaming, and once back (or when the wait ended).
struct DisconnectObservation {
  std::int32_t streams = 0;
  std::int64_t left_mid_stream = 0;  ///< had a first token when the client closed
  bool metrics = false;              ///< the target (or --metrics-url) exported both gauges
  double running_idle = 0;
  double running_peak = 0;
  double running_after = 0;
  double kv_idle = 0;
  double kv_peak = 0;
  double kv_after = 0;
  /// From the last client closing until both gauges were back at their idle levels; nullopt
  /// when they were not within the wait.
  std::optional<Seconds> freed_after_s;
  Seconds waited_s = 0;
  /// How long the streams would have gone on generating after their clients left (their
  /// remaining tokens at the measured TPOT), seconds.
  Seconds remaining_s = 0;
};

/// The bound the disconnect is judged by: kDisconnectFreedBoundS, or half of `remaining_s`
/// when that is less.
Seconds DisconnectFreedBoundS(const DisconnectObservation& seen);

/// The cancellation checklist's four items (disconnect_seen, disconnect_polled,
/// abort_at_iteration, kv_freed) and the validation checklist's disconnect_frees_kv, in that
/// order.
std::vector<ChecklistItem> JudgeDisconnect(const DisconnectObservation& seen,
                                           std::string_view run_file);

/// The trace replay against the simulator's prediction for the same scenario on the policy's
/// profile: pass when goodput, the admitted share and p95 TTFT agree within kReplayTolerance
/// (or the floors).
ChecklistItem JudgeReplay(const RunSummary& live, const RunSummary& sim, std::string_view live_file,
                          std::string_view sim_file);

}  // namespace spillway::policy
