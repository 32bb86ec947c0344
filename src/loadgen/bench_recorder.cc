#include "loadgen/bench_recorder.h"

#include <algorithm>
#include <boost/json.hpp>
#include <cmath>
#include <limits>

namespace spillway::loadgen {
namespace {

double Delta(const std::optional<double>& first, const std::optional<double>& last) {
  return first.has_value() && last.has_value() ? std::max(0.0, *last - *first) : 0.0;
}

// End minus start of a counter; nullopt when a scrape lacks it (not measured).
std::optional<double> MeasuredDelta(const std::optional<double>& first,
                                    const std::optional<double>& last) {
  return first.has_value() && last.has_value() ? std::optional(std::max(0.0, *last - *first))
                                               : std::nullopt;
}

}  // namespace

BenchRecorder::BenchRecorder(GoodputSlo slo, std::vector<RunRecorder::Phase> phases)
    : recorder_(slo, std::move(phases)) {}

std::optional<QueueSpan> QueueSpanOf(const AttemptRecord& r) {
  if (r.outcome == AttemptOutcome::kRejected || r.outcome == AttemptOutcome::kTransportError) {
    return std::nullopt;
  }
  const Seconds entered_s = r.head_s != kNever ? r.head_s : r.finished_s;
  const Seconds left_s = r.first_token_s != kNever ? r.first_token_s : r.finished_s;
  return QueueSpan{entered_s, std::max(entered_s, left_s), 0};
}

void BenchRecorder::OnAttemptDone(const AttemptRecord& r) {
  --in_flight_;
  ++offered_;
  const std::string_view c = r.class_name;  // empty for trace records: no per-class counts
  recorder_.OnOffered(r.sent_s, r.attempt == 1, c);
  const Seconds head_s = r.head_s != kNever ? r.head_s : r.finished_s;
  if (const std::optional<QueueSpan> span = QueueSpanOf(r)) {
    recorder_.OnQueueSpan(span->entered_s, span->left_s);
  }
  recorder_.OnRetryAfter(head_s, r.status, r.reason, r.retry_after_s);
  const auto done = [&](RequestOutcome::Kind kind) {
    recorder_.OnAdmitted(head_s, r.sent_s, r.degraded, c);
    recorder_.OnRequestDone({kind, r.sent_s, r.first_token_s, r.finished_s, r.output_tokens,
                             r.served_model, r.cache_hit},
                            c);
  };
  switch (r.outcome) {
    case AttemptOutcome::kRejected:
      ++shed_;
      recorder_.OnRejected(head_s, r.sent_s, r.status, r.reason, c);
      break;
    case AttemptOutcome::kDroppedAtQueueHead:
      ++shed_;
      recorder_.OnAdmitted(head_s, r.sent_s, false, c);
      recorder_.OnDroppedAtQueueHead(r.finished_s, r.sent_s, c);
      break;
    case AttemptOutcome::kCompleted: {
      ++completed_;
      if (std::isfinite(r.ttft_forecast_s) && r.first_token_s != kNever) {
        // Calibrated at the client: the forecast is the engine's, the TTFT adds the network.
        recorder_.OnTtftPrediction(r.ttft_forecast_s, r.ttft_forecast_s,
                                   r.first_token_s - r.sent_s);
      }
      const RequestOutcome o{RequestOutcome::Kind::kCompleted, r.sent_s, r.first_token_s,
                             r.finished_s, r.output_tokens};
      good_ += recorder_.IsGood(o) ? 1 : 0;
      done(RequestOutcome::Kind::kCompleted);
      break;
    }
    case AttemptOutcome::kFailed:
      done(RequestOutcome::Kind::kFailed);
      break;
    case AttemptOutcome::kAbandoned:
      ++abandoned_;
      done(RequestOutcome::Kind::kAbandoned);
      break;
    case AttemptOutcome::kTransportError:
      ++transport_errors_;
      break;
  }
}

void BenchRecorder::SampleInFlight(std::int64_t second) {
  const auto index = static_cast<std::size_t>(std::max<std::int64_t>(second, 0));
  if (in_flight_series_.size() <= index) {
    in_flight_series_.resize(index + 1, 0);
  }
  in_flight_series_[index] = in_flight_;
}

void BenchRecorder::OnServerGauges(std::int64_t second, const ServerSnapshot& server) {
  const auto count = [](const std::optional<double>& v) {
    return static_cast<std::int32_t>(
        std::clamp(std::llround(v.value_or(0)), 0LL,
                   static_cast<long long>(std::numeric_limits<std::int32_t>::max())));
  };
  recorder_.OnGauges(second, count(server.waiting), count(server.running),
                     server.kv_usage.value_or(0));
}

void BenchRecorder::SetServerTotals(const ServerSnapshot& first, const ServerSnapshot& last) {
  first_ = first;
  last_ = last;
}

RunSummary BenchRecorder::Finish(double duration_s, double makespan_s) {
  if (first_.has_value() && last_.has_value()) {
    const ServerSnapshot& a = *first_;
    const ServerSnapshot& b = *last_;
    recorder_.SetEngineTotals(std::llround(Delta(a.preemptions, b.preemptions)),
                              std::llround(Delta(a.recomputed_tokens, b.recomputed_tokens)));
    // OnEngineStep takes the prefill tokens as int32: hand over a large total in pieces.
    auto prefill = std::llround(Delta(a.prompt_tokens, b.prompt_tokens));
    constexpr long long kPiece = std::numeric_limits<std::int32_t>::max();
    for (; prefill > 0; prefill -= kPiece) {
      recorder_.OnEngineStep(0, 0, static_cast<std::int32_t>(std::min(prefill, kPiece)));
    }
  }
  RunSummary s = recorder_.Finish(duration_s, makespan_s);
  if (first_.has_value() && last_.has_value()) {
    // The server's prefix cache (vLLM's counters, in tokens): 0 and 0 where it has none.
    s.prefix_cache_queries_tokens =
        std::llround(Delta(first_->prefix_cache_queries, last_->prefix_cache_queries));
    s.prefix_cache_hits_tokens =
        std::llround(Delta(first_->prefix_cache_hits, last_->prefix_cache_hits));
  }
  // The client cannot measure engine time: each figure is the server's counter (end minus
  // start), or not measured.
  const bool scraped = first_.has_value() && last_.has_value();
  s.engine_busy_s =
      scraped ? MeasuredDelta(first_->engine_busy_s, last_->engine_busy_s) : std::nullopt;
  s.wasted_engine_s =
      scraped ? MeasuredDelta(first_->wasted_engine_s, last_->wasted_engine_s) : std::nullopt;
  s.not_completed_engine_s =
      scraped ? MeasuredDelta(first_->not_completed_engine_s, last_->not_completed_engine_s)
              : std::nullopt;
  if (last_.has_value()) {
    s.est_service_rate_rps = last_->service_rate_rps.value_or(0);
    s.est_prefill_tokens_per_s = last_->prefill_tokens_per_s.value_or(0);
  }
  return s;
}

std::string TimeseriesJsonl(const RunSummary& summary, const std::vector<std::int64_t>& in_flight) {
  std::string out;
  const std::size_t n = std::max(summary.timeseries.size(), in_flight.size());
  for (std::size_t i = 0; i < n; ++i) {
    const TimeseriesPoint p =
        i < summary.timeseries.size() ? summary.timeseries[i] : TimeseriesPoint{};
    boost::json::object o;
    o["t"] = static_cast<double>(i);
    o["offered"] = p.offered;
    o["admitted"] = p.admitted;
    o["shed"] = p.rejected;
    o["completed"] = p.completed;
    o["good"] = p.good;
    o["in_flight"] = i < in_flight.size() ? in_flight[i] : 0;
    o["waiting"] = p.waiting;
    o["running"] = p.running;
    o["kv_usage"] = p.kv_usage;
    out += boost::json::serialize(o);
    out += '\n';
  }
  return out;
}

}  // namespace spillway::loadgen
