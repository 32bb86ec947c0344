#pragma once
// RunRecorder: collects a run's events from a driver (the simulator or the load generator)
// and builds the RunSummary. Holds one small record per finished request; inter-token gaps go
// to a LogHistogram. Not thread-safe.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/types.h"
#include "report/percentiles.h"
#include "report/retry_after_check.h"
#include "report/run_summary.h"

namespace spillway {

/// How an admitted request ended, from the client's side.
struct RequestOutcome {
  enum class Kind : std::uint8_t { kCompleted, kAbandoned, kFailed };
  Kind kind = Kind::kCompleted;
  Seconds sent_s = 0;
  Seconds first_token_s = kNever;  ///< kNever when none arrived (before the client left)
  Seconds finished_s = 0;          ///< completion, abandonment or failure time
  std::int32_t output_tokens = 0;
  /// The model that served it (a pool's, when the gateway's cascade may send requests to
  /// another); empty: not counted in RunSummary::served_model.
  std::string_view served_model = {};
  /// Answered from a gateway's exact-result cache (no engine work).
  bool cached = false;
};

class RunRecorder {
 public:
  struct Phase {
    double start_s = 0;
    double end_s = 0;
    double rate_rps = 0;
  };

  RunRecorder(GoodputSlo slo, std::vector<Phase> phases);

  // `class_name` (the scenario's class of the request) feeds RunSummary::classes; empty
  // leaves the event out of the per-class counts.
  void OnOffered(Seconds t, bool first_attempt, std::string_view class_name = {});
  void OnAdmitted(Seconds t, Seconds sent_s, bool degraded, std::string_view class_name = {});
  /// A refusal at the door (sent_s tells which phase it belongs to).
  void OnRejected(Seconds t, Seconds sent_s, int http_status, std::string_view reason,
                  std::string_view class_name = {});
  /// An admitted request dropped at the queue head after its ingress deadline.
  void OnDroppedAtQueueHead(Seconds t, Seconds sent_s, std::string_view class_name = {});
  void OnInterTokenGap(Seconds gap_s) { itl_.Add(gap_s); }
  void OnRequestDone(const RequestOutcome& outcome, std::string_view class_name = {});
  /// Engine-side timing of a request that got its first token: queue and prefill time.
  void OnEngineTiming(Seconds queue_s, Seconds prefill_s) {
    queue_time_.push_back(queue_s);
    prefill_time_.push_back(prefill_s);
  }
  /// A request's TTFT as predicted at admission (`predicted_s`, the engine's forward
  /// prediction) and as admission estimated it (`estimated_s`), against the TTFT it got.
  void OnTtftPrediction(Seconds predicted_s, Seconds estimated_s, Seconds actual_s) {
    prediction_error_.push_back(std::abs(predicted_s - actual_s));
    estimate_error_.push_back(std::abs(estimated_s - actual_s));
    predictions_.emplace_back(predicted_s, actual_s);
  }
  void OnEngineStep(Seconds busy_s, Seconds wasted_s, std::int32_t prefill_tokens);
  /// An admitted request's stay in waiting queue `queue` (retry_after_check.h, QueueSpan):
  /// from its admission until its first prefill, drop or abort, seconds.
  void OnQueueSpan(Seconds entered_s, Seconds left_s, std::int32_t queue = 0) {
    queue_spans_.push_back({entered_s, std::max(entered_s, left_s), queue});
  }
  /// An answer that carried Retry-After `retry_after_s` (seconds) at time `t`, for queue
  /// `queue`; kept for the check when RetryAfterChecked(status, reason, retry_after_s).
  void OnRetryAfter(Seconds t, int http_status, std::string_view reason, Seconds retry_after_s,
                    std::int32_t queue = 0) {
    if (RetryAfterChecked(http_status, reason, retry_after_s)) {
      retry_afters_.push_back({t, retry_after_s, queue});
    }
  }
  /// Gauges at the end of second `second` (summed over engines; kv_usage averaged).
  void OnGauges(std::int64_t second, std::int32_t waiting, std::int32_t running, double kv_usage);
  /// Exact waiting depth after a change (for max_waiting).
  void ObserveWaiting(std::int32_t waiting) { s_.max_waiting = std::max(s_.max_waiting, waiting); }
  void SetEngineTotals(std::int64_t preemptions, std::int64_t recomputed_tokens);
  /// Prefix-cache queries and hits over the run, prompt tokens.
  void SetPrefixCacheTotals(std::int64_t queries_tokens, std::int64_t hits_tokens) {
    s_.prefix_cache_queries_tokens = queries_tokens;
    s_.prefix_cache_hits_tokens = hits_tokens;
  }
  void SetNotCompletedEngineTime(Seconds s) { s_.not_completed_engine_s = s; }

  /// True when `o` meets every SLO (completed outcomes only).
  bool IsGood(const RequestOutcome& o) const;

  /// Builds the summary; `duration_s` is the arrival span (rate denominator).
  RunSummary Finish(double duration_s, double makespan_s);

 private:
  TimeseriesPoint& Point(Seconds t);
  PhaseSummary* PhaseOf(Seconds sent_s);
  struct ClassRecord {
    ClassSummary summary;
    std::vector<double> ttft;
  };
  /// The record of `class_name`, or nullptr when it is empty.
  ClassRecord* ClassOf(std::string_view class_name);

  GoodputSlo slo_;
  RunSummary s_;
  std::vector<double> ttft_;
  std::vector<double> tpot_;
  std::vector<double> e2e_;
  std::vector<double> queue_time_;
  std::vector<double> prefill_time_;
  std::vector<double> prediction_error_;
  std::vector<double> estimate_error_;
  std::vector<std::pair<double, double>> predictions_;  // (predicted, actual) TTFT, seconds
  std::vector<std::vector<double>> phase_ttft_;
  std::vector<QueueSpan> queue_spans_;
  std::vector<RetryAfterSample> retry_afters_;
  std::map<std::string, ClassRecord, std::less<>> classes_;
  std::map<std::string, std::vector<double>, std::less<>> served_ttft_;  ///< by served model
  LogHistogram itl_;
  std::int64_t failed_without_first_token_ = 0;  ///< for RunSummary::ttft_objective_s
};

}  // namespace spillway
