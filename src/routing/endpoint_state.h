#pragma once
// What the gateway knows of one upstream endpoint (an inference engine's replica): the load its
// last /metrics scrape reported, the requests the gateway itself sent there since, and what the
// gateway measures from the replies it relays (completions per second, prefill throughput, TTFT).
// An endpoint that exports no metrics (a hosted OpenAI-compatible API) is known by the gateway's
// own counts and measurements alone.
//
// From these it predicts the TTFT a new request would get there (PredictTtft): the wait behind
// the requests ahead of it, from the measured service rate, plus its prefill, from the measured
// prefill throughput. Pure: no clock (now is passed in), no I/O; the live gateway and the
// simulator feed it the same events.

#include <cstdint>
#include <optional>
#include <string>

#include "core/types.h"

namespace spillway::routing {

/// One scrape of an endpoint's /metrics, in engine-neutral terms (the scraper maps each kind's
/// names: vLLM's vllm:num_requests_waiting, SGLang's sglang:num_queue_reqs, ...).
struct EndpointLoad {
  std::int32_t num_waiting = 0;  ///< requests queued in the engine, not yet running
  std::int32_t num_running = 0;  ///< requests in the running batch
  double kv_usage = 0;           ///< KV cache usage, [0, 1]
  /// A Spillway engine's own forecast of the wait before a new request's prefill starts,
  /// seconds (spillway_ttft_forecast_queue_seconds, under its forecast policy); < 0: none.
  Seconds queue_forecast_s = -1;
  /// The engine caches prompt prefixes (vLLM's vllm:cache_config_info
  /// enable_prefix_caching="True"; SGLang's radix cache): a prompt it was sent before is
  /// prefilled only past what it kept.
  bool prefix_caching = false;
};

enum class EndpointHealth : std::uint8_t {
  kHealthy,
  kDraining,  ///< /ready fails or it answered 503 draining: no new work, in-flight finishes
  kEjected,   ///< passive outlier ejection after consecutive errors
  kDown,      ///< connect errors, or removed
};

/// Starting values used until the gateway has measured an endpoint. For an endpoint without
/// metrics, max_running is never measured (it is learned from scrapes that see a queue): it
/// stays what is given here.
struct EndpointPriors {
  double service_rate_rps = 10;  ///< completions per second of a saturated endpoint
  double prefill_tokens_per_s = 4000;
  std::int32_t max_running = 16;  ///< the running batch a saturated endpoint holds
};

/// One endpoint's state. Not thread-safe.
class EndpointState {
 public:
  EndpointState(std::string name, bool exports_metrics, EndpointPriors priors);

  const std::string& name() const { return name_; }
  bool exports_metrics() const { return exports_metrics_; }

  /// A scrape taken at `now`: replaces the load and restarts the since-scrape counts.
  void OnScrape(const EndpointLoad& load, Seconds now);
  /// A request sent there at `now`.
  void OnForward(Seconds now);
  /// The first token of a request of `prompt_tokens` arrived `ttft_s` after it was sent;
  /// `alone` says it was sent with nothing predicted ahead of it, so its TTFT measures prefill
  /// (learned from prompts of at least 256 tokens; a shorter one's TTFT is mostly fixed cost).
  void OnFirstToken(std::int32_t prompt_tokens, Seconds ttft_s, bool alone);
  /// A request sent there ended at `now` (`completed`: it ran to its end; else it failed, was
  /// cancelled or refused).
  void OnFinish(Seconds now, bool completed);

  void set_health(EndpointHealth health) { health_ = health; }
  /// A config reload's priors: used where nothing was measured yet (what was, stays).
  void set_priors(const EndpointPriors& priors) { priors_ = priors; }
  EndpointHealth health() const { return health_; }
  /// Healthy: the only state that takes new work.
  bool takes_work() const { return health_ == EndpointHealth::kHealthy; }

  /// Seconds since the last scrape (+inf before the first, or without metrics).
  Seconds MetricsAge(Seconds now) const;
  /// The last scrape's load (zeros before the first).
  const EndpointLoad& load() const { return load_; }
  /// Requests the gateway sent there that have not ended.
  std::int32_t in_flight() const { return in_flight_; }

  /// Requests ahead of a new one, from the scrape: waiting + running + forwarded since the
  /// scrape - ended since the scrape, less the batch's slots (max_running). With `fresh` false
  /// (stale or no metrics), from the gateway's own in-flight count instead.
  double QueueAhead(bool fresh) const;
  /// Completions per second: measured while the endpoint was busy, else the prior.
  double ServiceRate() const;
  /// Prompt tokens per second of prefill: measured from requests sent alone, else the prior.
  double PrefillRate() const;
  /// The running batch: the most requests seen running in a scrape that also saw a queue (the
  /// batch was full: the concurrency ceiling, learned while metrics were fresh) or that ran
  /// more than the ceiling so far; else the prior.
  std::int32_t MaxRunning() const;
  /// Predicted TTFT, seconds, of a request of `prompt_tokens` sent now: QueueAhead / ServiceRate
  /// + prompt_tokens / PrefillRate. With fresh metrics from a Spillway engine that forecasts
  /// (EndpointLoad::queue_forecast_s), the wait of a request of the most urgent class
  /// (`priority` 0, the class the engine forecasts for) is its forecast at the scrape plus the
  /// change in QueueAhead since the scrape / ServiceRate (at least 0); a less urgent request
  /// is overtaken by what arrives after it, which the forecast does not see: counts as above.
  Seconds PredictTtft(std::int32_t prompt_tokens, bool fresh, std::int32_t priority = 0) const;
  /// The prefill part of PredictTtft: prompt_tokens / PrefillRate.
  Seconds PredictPrefill(std::int32_t prompt_tokens) const;

 private:
  /// Adds the busy time since the last event (when anything was in flight) up to `now`.
  void AdvanceBusy(Seconds now);

  std::string name_;
  bool exports_metrics_;
  EndpointPriors priors_;
  EndpointHealth health_ = EndpointHealth::kHealthy;

  EndpointLoad load_;
  Seconds scraped_at_s_ = -kNever;
  std::int32_t forwarded_since_scrape_ = 0;
  std::int32_t ended_since_scrape_ = 0;
  std::int32_t in_flight_ = 0;
  std::int32_t max_running_seen_ = 0;

  // Service rate: completions over busy time, windows of at least kRateWindowS, smoothed.
  Seconds last_event_s_ = 0;
  Seconds window_busy_s_ = 0;
  std::int32_t window_completions_ = 0;
  std::optional<double> service_rate_rps_;
  std::optional<double> prefill_tokens_per_s_;
};

}  // namespace spillway::routing
