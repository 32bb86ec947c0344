#include "routing/endpoint_state.h"

#include <algorithm>
#include <utility>

namespace spillway::routing {
namespace {

/// Busy seconds a service-rate measurement spans, and the weight of each new one.
constexpr Seconds kRateWindowS = 1.0;
constexpr double kRateAlpha = 0.3;
/// Weight of each new prefill measurement.
constexpr double kPrefillAlpha = 0.2;
// The shortest prompt whose TTFT measures prefill throughput: a shorter one's TTFT is mostly the
// engine's step and the network hop (2 tokens in 20 ms is not 100 tokens/s of prefill), and
// learning from it made the gateway refuse every long prompt on an idle pool, for good, since
// only short prompts were then sent.
constexpr std::int32_t kMinPrefillSampleTokens = 256;

double Smooth(const std::optional<double>& old, double sample, double alpha) {
  return old.has_value() ? *old + alpha * (sample - *old) : sample;
}

}  // namespace

EndpointState::EndpointState(std::string name, bool exports_metrics, EndpointPriors priors)
    : name_(std::move(name)), exports_metrics_(exports_metrics), priors_(priors) {}

void EndpointState::OnScrape(const EndpointLoad& load, Seconds now) {
  load_ = load;
  scraped_at_s_ = now;
  forwarded_since_scrape_ = 0;
  ended_since_scrape_ = 0;
  // A queue means the batch was full: its running count is the engine's concurrency ceiling.
  // A scrape without one only raises the ceiling (a lightly loaded engine runs few).
  if (load.num_waiting > 0 || load.num_running > MaxRunning()) {
    max_running_seen_ = std::max(max_running_seen_, load.num_running);
  }
}

void EndpointState::AdvanceBusy(Seconds now) {
  if (in_flight_ > 0 && now > last_event_s_) {
    window_busy_s_ += now - last_event_s_;
  }
  last_event_s_ = std::max(last_event_s_, now);
}

void EndpointState::OnForward(Seconds now) {
  AdvanceBusy(now);
  ++in_flight_;
  ++forwarded_since_scrape_;
}

void EndpointState::OnFirstToken(std::int32_t prompt_tokens, Seconds ttft_s, bool alone) {
  if (alone && prompt_tokens >= kMinPrefillSampleTokens && ttft_s > 0) {
    prefill_tokens_per_s_ = Smooth(prefill_tokens_per_s_, prompt_tokens / ttft_s, kPrefillAlpha);
  }
}

void EndpointState::OnFinish(Seconds now, bool completed) {
  AdvanceBusy(now);
  in_flight_ = std::max(0, in_flight_ - 1);
  ++ended_since_scrape_;
  if (!completed) {
    return;
  }
  ++window_completions_;
  if (window_busy_s_ >= kRateWindowS) {
    service_rate_rps_ = Smooth(service_rate_rps_, window_completions_ / window_busy_s_, kRateAlpha);
    window_busy_s_ = 0;
    window_completions_ = 0;
  }
}

Seconds EndpointState::MetricsAge(Seconds now) const {
  return exports_metrics_ ? now - scraped_at_s_ : kNever;
}

double EndpointState::QueueAhead(bool fresh) const {
  const double load = fresh ? static_cast<double>(load_.num_waiting) + load_.num_running +
                                  forwarded_since_scrape_ - ended_since_scrape_
                            : static_cast<double>(in_flight_);
  return std::max(0.0, load - MaxRunning());
}

double EndpointState::ServiceRate() const {
  return service_rate_rps_.value_or(priors_.service_rate_rps);
}

double EndpointState::PrefillRate() const {
  return prefill_tokens_per_s_.value_or(priors_.prefill_tokens_per_s);
}

std::int32_t EndpointState::MaxRunning() const {
  return max_running_seen_ > 0 ? max_running_seen_ : priors_.max_running;
}

Seconds EndpointState::PredictPrefill(std::int32_t prompt_tokens) const {
  const double tps = PrefillRate();
  return tps > 0 ? prompt_tokens / tps : kNever;
}

Seconds EndpointState::PredictTtft(std::int32_t prompt_tokens, bool fresh,
                                   std::int32_t priority) const {
  const double mu = ServiceRate();
  const double ahead = QueueAhead(fresh);
  Seconds wait = ahead <= 0 ? 0.0 : (mu > 0 ? ahead / mu : kNever);
  if (fresh && load_.queue_forecast_s >= 0 && mu > 0 && priority <= 0) {
    // The engine's own forecast of the wait at the scrape, moved by what the gateway has sent
    // and seen end since: the queue now against the queue then, over mu.
    const double ahead_then =
        std::max(0.0, static_cast<double>(load_.num_waiting) + load_.num_running - MaxRunning());
    wait = std::max(0.0, load_.queue_forecast_s + (ahead - ahead_then) / mu);
  }
  return wait + PredictPrefill(prompt_tokens);
}

}  // namespace spillway::routing
