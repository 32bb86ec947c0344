#pragma once
// The run summary: the same result type from `spillway sim` and `spillway bench`
// (architecture.md, "Run summary"). Times in seconds; rates per second of the arrival span.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/histogram.h"
#include "report/percentiles.h"

namespace spillway {

/// One second of the run. Counts are events in [t, t+1); gauges are sampled at t+1.
struct TimeseriesPoint {
  double t = 0;
  std::int64_t offered = 0;    ///< attempts sent, retries included
  std::int64_t retries = 0;    ///< of which retries (attempts after the first of a request)
  std::int64_t admitted = 0;   ///< accepted into the engine's queue
  std::int64_t rejected = 0;   ///< refused at the door or dropped at the queue head
  std::int64_t completed = 0;  ///< finished with the client still there
  std::int64_t good = 0;       ///< completions that met every per-request SLO
  std::int32_t waiting = 0;
  std::int32_t running = 0;
  double kv_usage = 0;
};

/// A slice of the run (one step of a `steps` arrival process), attributed by send time.
struct PhaseSummary {
  double start_s = 0;
  double end_s = 0;
  double offered_rate_rps = 0;  ///< nominal arrival rate of the phase
  std::int64_t offered = 0;
  std::int64_t admitted = 0;
  std::int64_t rejected = 0;  ///< refused at the door
  std::int64_t dropped = 0;   ///< admitted, then dropped at the queue head
  std::int64_t good = 0;
  double goodput_rps = 0;  ///< good requests sent in the phase / phase length
  Percentiles ttft_s;      ///< of requests sent in the phase that got a first token
};

/// One request class (the scenario's `classes[].name`), attributed by each attempt's class.
/// Lets a run show who was served: short vs long prompts, interactive vs batch.
struct ClassSummary {
  std::int64_t offered = 0;         ///< attempts, retries included
  std::int64_t first_attempts = 0;  ///< the class's requests (its offered load)
  std::int64_t admitted = 0;
  std::int64_t rejected = 0;  ///< refused at the door
  std::int64_t dropped = 0;   ///< admitted, then dropped at the queue head
  std::int64_t completed = 0;
  std::int64_t good = 0;
  std::int64_t abandoned = 0;  ///< admitted; the client gave up first
  std::int64_t failed = 0;
  Percentiles ttft_s;  ///< attempts of the class that got a first token
};

/// A class's share of the run's offered load (its first attempts over every class's) and of
/// what was served (its good requests over every class's), each in [0, 1]; 0 when the run had
/// none. Fair shedding (admission/fair_share.h) bounds how far the second may fall below the
/// first.
struct ClassShares {
  double offered = 0;
  double served = 0;
};
inline ClassShares SharesOf(const std::map<std::string, ClassSummary>& classes,
                            const std::string& name) {
  std::int64_t offered = 0;
  std::int64_t good = 0;
  for (const auto& [n, c] : classes) {
    offered += c.first_attempts;
    good += c.good;
  }
  const auto it = classes.find(name);
  if (it == classes.end()) {
    return {};
  }
  return {offered > 0 ? static_cast<double>(it->second.first_attempts) / offered : 0.0,
          good > 0 ? static_cast<double>(it->second.good) / good : 0.0};
}

/// The requests one model served (RunSummary::served_model).
struct ServedModelSummary {
  std::int64_t completed = 0;
  std::int64_t good = 0;
  /// Per phase (as RunSummary::phases): its good requests sent in the phase / phase length.
  std::vector<double> phase_goodput_rps;
  /// TTFT of the requests it completed, seconds (a cascade's fallback TTFT; zeros in a run
  /// written before it was recorded).
  Percentiles ttft_s;
};

/// Per-request SLOs; a request is good when it completes within every one given.
struct GoodputSlo {
  std::optional<double> ttft_s;
  std::optional<double> tpot_s;
  std::optional<double> e2e_s;
};

/// Retry-After of overload answers against the true drain time of their queue
/// (report/retry_after_check.h has the definitions). Exact in the simulator; estimated from
/// the client's records in `spillway bench` (docs/bench.md).
struct RetryAfterSummary {
  std::int64_t checked = 0;     ///< 429/503 answers with a Retry-After (not rate_limited/draining)
  std::int64_t shortfalls = 0;  ///< of those, Retry-After < drain time - tolerance_s
  double tolerance_s = 1.0;     ///< Retry-After is whole seconds
  /// max over checked answers of drain time - Retry-After, seconds: negative when every
  /// Retry-After exceeded its drain time; 0 when none was checked.
  double max_shortfall_s = 0;
  double max_drain_s = 0;         ///< the longest drain time of a checked answer, seconds
  double mean_drain_s = 0;        ///< mean drain time of the checked answers, seconds
  double mean_retry_after_s = 0;  ///< mean Retry-After of the checked answers, seconds
};

struct ObjectiveResult {
  std::string name;  ///< e.g. "e2e_p99_s"
  double target = 0;
  /// The run's figure; +infinity when a latency percentile falls on a failed request
  /// (report/objectives.h).
  double value = 0;
  bool pass = false;
};

/// Width of a TTFT calibration bin, seconds.
inline constexpr double kTtftCalibrationBinS = 0.1;

/// Requests whose predicted TTFT fell in [predicted_lo_s, predicted_lo_s + kTtftCalibrationBinS).
struct TtftCalibrationBin {
  double predicted_lo_s = 0;
  std::int64_t count = 0;
  double actual_mean_s = 0;
  double actual_p95_s = 0;
};

struct RunSummary {
  std::string source;  ///< "sim" or "bench"
  /// The command line that made the run and when it began (UTC, "YYYY-MM-DDThh:mm:ssZ"): a
  /// measurement's evidence (a policy cites them). In the JSON only when set.
  std::string command;
  std::string started_at;
  std::string scenario;
  std::string policy;
  std::string profile;
  std::uint64_t seed = 0;
  std::int32_t replicas = 1;
  /// How requests reached the replicas: "least-loaded" (the simulator's oracle), a gateway
  /// router ("gateway", "round-robin", "least-requests", "llm-d"); empty when not known (bench
  /// against a URL) or one replica without a gateway. In the JSON only when set.
  std::string router;
  /// Whether the engine aborted a request when its client left: the simulator's setting
  /// (engine.propagate_cancellation); nullopt when the run measured an engine from outside
  /// (bench, fleet), which cannot see it. In the JSON as null then.
  std::optional<bool> cancellation_propagation;

  double duration_s = 0;  ///< arrival span: the denominator of every rate
  double makespan_s = 0;  ///< until the last request left

  std::int64_t offered = 0;         ///< attempts, retries included
  std::int64_t first_attempts = 0;  ///< logical requests
  std::int64_t retries = 0;
  std::int64_t admitted = 0;        ///< accepted into the engine's queue
  std::int64_t degraded = 0;        ///< admitted with max_tokens clamped
  std::int64_t cache_hits = 0;      ///< completed from a gateway's exact-result cache
  std::int64_t rejected_total = 0;  ///< refused at the door: offered = admitted + rejected
  std::map<std::string, std::int64_t> rejected_by_status;  ///< "429", "503", "400", ...
  std::map<std::string, std::int64_t> rejected_by_reason;  ///< X-Overload-Reason tokens
  /// Admitted, then dropped at the queue head after the ingress deadline (429
  /// queue_deadline_exceeded to the client, no prefill spent).
  std::int64_t dropped_at_queue_head = 0;
  std::int64_t completed = 0;                  ///< finished with the client still connected
  std::int64_t good = 0;                       ///< completed and within every per-request SLO
  std::int64_t abandoned_after_admission = 0;  ///< admitted; the client gave up first
  std::int64_t failed = 0;                     ///< admitted; ended in an engine error

  double goodput_rps = 0;     ///< good / duration_s (vLLM bench --goodput)
  double throughput_rps = 0;  ///< completed / duration_s
  double slo_attainment = 0;  ///< good / offered

  GoodputSlo slo;  ///< the per-request SLOs that defined `good`

  Percentiles ttft_s;  ///< requests that got a first token
  /// The same TTFT samples in TtftBucketBoundsSeconds() buckets (seconds), for plotting the
  /// distribution.
  BucketCounts ttft_histogram_s;
  Percentiles tpot_s;  ///< completed, > 1 output token: (e2e - ttft) / (tokens - 1)
  Percentiles itl_s;   ///< every gap between consecutive tokens
  Percentiles e2e_s;   ///< completed requests
  /// For the objectives (report/objectives.h), which cover every admitted request that
  /// completed or failed: the TTFT samples with each failed request that got no first token
  /// counted as +infinity, and the E2E samples with each failed request counted as +infinity
  /// (it never finished). Equal to ttft_s / e2e_s when nothing failed. Not in the JSON (the
  /// objectives' results are).
  Percentiles ttft_objective_s;
  Percentiles e2e_objective_s;
  Percentiles queue_time_s;    ///< engine side: arrival to first scheduled (vLLM queue time)
  Percentiles prefill_time_s;  ///< engine side: first scheduled to first token
  /// The TTFT predicted for each request admitted at its arrival, against the TTFT it got
  /// (those that got a first token; in the simulator, and live from the server's
  /// X-Spillway-Ttft-Forecast, there measured at the client; count 0 elsewhere), absolute errors in
  /// seconds: of the engine's forward prediction (Engine::PredictFirstToken; under the
  /// forecast policy, the forecast it admitted on), and of the estimate admission decided on,
  /// W_est + t_prefill (AdmissionDecision; the forecast under the forecast policy).
  Percentiles ttft_prediction_abs_error_s;
  Percentiles ttft_estimate_abs_error_s;
  /// The same requests binned by their predicted TTFT (kTtftCalibrationBinS wide, from 0; the
  /// non-empty bins, in order): how many, and the mean and p95 of the TTFT they got. A
  /// calibrated forecast puts the means on the diagonal. Empty without predictions.
  std::vector<TtftCalibrationBin> ttft_calibration;

  /// The admission controller's estimates at the end of the run (engine 0), for checking
  /// them against what the run measured: mu_hat, prefill throughput beside decodes, step time.
  double est_service_rate_rps = 0;
  double est_prefill_tokens_per_s = 0;
  double est_step_time_s = 0;

  // Engine time, seconds; nullopt when the run did not measure it (JSON null, the table's
  // "n/a"): a `spillway bench` run takes each from the server's counters, so it has none
  // against a server that does not export that counter or with --no-metrics. The simulator
  // (RunRecorder) always measures all three.
  std::optional<double> engine_busy_s;
  /// Engine time on requests whose client had already gone.
  std::optional<double> wasted_engine_s;
  /// Engine time on requests that never completed for their client (abandoned, failed or
  /// dropped), before or after the client left; includes wasted_engine_s.
  std::optional<double> not_completed_engine_s;
  /// The price of one engine's GPU for an hour, dollars, when the run was given one
  /// (--gpu-hour-usd; report/cost.h prices the engine seconds with it).
  std::optional<double> gpu_hour_usd;
  std::int32_t max_waiting = 0;
  std::int64_t preemptions = 0;
  std::int64_t prefill_tokens = 0;
  std::int64_t recomputed_tokens = 0;
  /// Prefix caching, prompt tokens: of the requests scheduled from the queue, and of those
  /// found cached (vllm:prefix_cache_queries_total / _hits_total); 0 with caching off.
  std::int64_t prefix_cache_queries_tokens = 0;
  std::int64_t prefix_cache_hits_tokens = 0;
  RetryAfterSummary retry_after;

  std::vector<ObjectiveResult> objectives;
  std::vector<PhaseSummary> phases;
  std::map<std::string, ClassSummary> classes;  ///< by class name; empty for trace replays
  /// Completed requests by the model that served them: with pools of several models (the
  /// gateway's model cascade) the fallbacks' share; empty when the run has one model.
  std::map<std::string, ServedModelSummary> served_model;
  std::vector<TimeseriesPoint> timeseries;
};

}  // namespace spillway
