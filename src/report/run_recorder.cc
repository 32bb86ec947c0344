#include "report/run_recorder.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace spillway {
namespace {

// The percentiles of `samples` plus `failed` samples of +infinity: a request that failed
// missed every latency objective.
Percentiles WithFailuresAsInfinity(std::vector<double> samples, std::int64_t failed) {
  samples.insert(samples.end(), static_cast<std::size_t>(failed),
                 std::numeric_limits<double>::infinity());
  return Summarize(samples);
}

}  // namespace

RunRecorder::RunRecorder(GoodputSlo slo, std::vector<Phase> phases) : slo_(slo) {
  // The simulator measures engine time at every step; a driver that cannot (bench without
  // the server's counters) resets these to nullopt after Finish.
  s_.engine_busy_s = 0.0;
  s_.wasted_engine_s = 0.0;
  s_.not_completed_engine_s = 0.0;
  for (const Phase& p : phases) {
    PhaseSummary ps;
    ps.start_s = p.start_s;
    ps.end_s = p.end_s;
    ps.offered_rate_rps = p.rate_rps;
    s_.phases.push_back(ps);
  }
  phase_ttft_.resize(s_.phases.size());
}

TimeseriesPoint& RunRecorder::Point(Seconds t) {
  const auto second = static_cast<std::size_t>(std::max(0.0, std::floor(t)));
  while (s_.timeseries.size() <= second) {
    TimeseriesPoint p;
    p.t = static_cast<double>(s_.timeseries.size());
    s_.timeseries.push_back(p);
  }
  return s_.timeseries[second];
}

PhaseSummary* RunRecorder::PhaseOf(Seconds sent_s) {
  for (PhaseSummary& p : s_.phases) {
    if (sent_s >= p.start_s && sent_s < p.end_s) {
      return &p;
    }
  }
  return nullptr;
}

RunRecorder::ClassRecord* RunRecorder::ClassOf(std::string_view class_name) {
  if (class_name.empty()) {
    return nullptr;
  }
  auto it = classes_.find(class_name);
  if (it == classes_.end()) {
    it = classes_.emplace(std::string(class_name), ClassRecord{}).first;
  }
  return &it->second;
}

void RunRecorder::OnOffered(Seconds t, bool first_attempt, std::string_view class_name) {
  if (ClassRecord* c = ClassOf(class_name)) {
    ++c->summary.offered;
    c->summary.first_attempts += first_attempt ? 1 : 0;
  }
  ++s_.offered;
  ++(first_attempt ? s_.first_attempts : s_.retries);
  TimeseriesPoint& point = Point(t);
  ++point.offered;
  point.retries += first_attempt ? 0 : 1;
  if (PhaseSummary* p = PhaseOf(t)) {
    ++p->offered;
  }
}

void RunRecorder::OnAdmitted(Seconds t, Seconds sent_s, bool degraded,
                             std::string_view class_name) {
  if (ClassRecord* c = ClassOf(class_name)) {
    ++c->summary.admitted;
  }
  ++s_.admitted;
  s_.degraded += degraded ? 1 : 0;
  ++Point(t).admitted;
  if (PhaseSummary* p = PhaseOf(sent_s)) {
    ++p->admitted;
  }
}

void RunRecorder::OnRejected(Seconds t, Seconds sent_s, int http_status, std::string_view reason,
                             std::string_view class_name) {
  if (ClassRecord* c = ClassOf(class_name)) {
    ++c->summary.rejected;
  }
  ++s_.rejected_total;
  ++s_.rejected_by_status[std::to_string(http_status)];
  ++s_.rejected_by_reason[std::string(reason)];
  ++Point(t).rejected;
  if (PhaseSummary* p = PhaseOf(sent_s)) {
    ++p->rejected;
  }
}

void RunRecorder::OnDroppedAtQueueHead(Seconds t, Seconds sent_s, std::string_view class_name) {
  if (ClassRecord* c = ClassOf(class_name)) {
    ++c->summary.dropped;
  }
  ++s_.dropped_at_queue_head;
  ++Point(t).rejected;
  if (PhaseSummary* p = PhaseOf(sent_s)) {
    ++p->dropped;
  }
}

bool RunRecorder::IsGood(const RequestOutcome& o) const {
  if (o.kind != RequestOutcome::Kind::kCompleted || o.first_token_s == kNever) {
    return false;
  }
  const double ttft = o.first_token_s - o.sent_s;
  const double e2e = o.finished_s - o.sent_s;
  if (slo_.ttft_s && ttft > *slo_.ttft_s) {
    return false;
  }
  if (slo_.e2e_s && e2e > *slo_.e2e_s) {
    return false;
  }
  if (slo_.tpot_s && o.output_tokens > 1 && (e2e - ttft) / (o.output_tokens - 1) > *slo_.tpot_s) {
    return false;
  }
  return true;
}

void RunRecorder::OnRequestDone(const RequestOutcome& o, std::string_view class_name) {
  s_.cache_hits += o.cached ? 1 : 0;
  PhaseSummary* phase = PhaseOf(o.sent_s);
  ClassRecord* cls = ClassOf(class_name);
  if (o.first_token_s != kNever) {
    ttft_.push_back(o.first_token_s - o.sent_s);
    if (phase != nullptr) {
      phase_ttft_[static_cast<std::size_t>(phase - s_.phases.data())].push_back(ttft_.back());
    }
    if (cls != nullptr) {
      cls->ttft.push_back(ttft_.back());
    }
  }
  switch (o.kind) {
    case RequestOutcome::Kind::kAbandoned:
      ++s_.abandoned_after_admission;
      if (cls != nullptr) {
        ++cls->summary.abandoned;
      }
      return;
    case RequestOutcome::Kind::kFailed:
      ++s_.failed;
      failed_without_first_token_ += o.first_token_s == kNever ? 1 : 0;
      if (cls != nullptr) {
        ++cls->summary.failed;
      }
      return;
    case RequestOutcome::Kind::kCompleted:
      break;
  }
  ++s_.completed;
  const bool good = IsGood(o);
  if (cls != nullptr) {
    ++cls->summary.completed;
    cls->summary.good += good ? 1 : 0;
  }
  if (!o.served_model.empty()) {
    ServedModelSummary& m = s_.served_model[std::string(o.served_model)];
    ++m.completed;
    if (o.first_token_s != kNever) {
      served_ttft_[std::string(o.served_model)].push_back(o.first_token_s - o.sent_s);
    }
    m.good += good ? 1 : 0;
    m.phase_goodput_rps.resize(s_.phases.size());
    if (good && phase != nullptr) {
      m.phase_goodput_rps[static_cast<std::size_t>(phase - s_.phases.data())] += 1;  // a count
    }
  }
  TimeseriesPoint& point = Point(o.finished_s);
  ++point.completed;
  const double e2e = o.finished_s - o.sent_s;
  e2e_.push_back(e2e);
  if (o.output_tokens > 1 && o.first_token_s != kNever) {
    tpot_.push_back((e2e - (o.first_token_s - o.sent_s)) / (o.output_tokens - 1));
  }
  if (good) {
    ++s_.good;
    ++point.good;
    if (phase != nullptr) {
      ++phase->good;
    }
  }
}

void RunRecorder::OnEngineStep(Seconds busy_s, Seconds wasted_s, std::int32_t prefill_tokens) {
  s_.engine_busy_s = s_.engine_busy_s.value_or(0) + busy_s;
  s_.wasted_engine_s = s_.wasted_engine_s.value_or(0) + wasted_s;
  s_.prefill_tokens += prefill_tokens;
}

void RunRecorder::OnGauges(std::int64_t second, std::int32_t waiting, std::int32_t running,
                           double kv_usage) {
  TimeseriesPoint& p = Point(static_cast<double>(second));
  p.waiting = waiting;
  p.running = running;
  p.kv_usage = kv_usage;
  s_.max_waiting = std::max(s_.max_waiting, waiting);
}

void RunRecorder::SetEngineTotals(std::int64_t preemptions, std::int64_t recomputed_tokens) {
  s_.preemptions = preemptions;
  s_.recomputed_tokens = recomputed_tokens;
}

namespace {
// RunSummary::ttft_calibration from (predicted, actual) TTFT pairs.
std::vector<TtftCalibrationBin> Calibration(std::vector<std::pair<double, double>> predictions) {
  std::vector<TtftCalibrationBin> bins;
  const auto bin_of = [](double predicted_s) {
    return static_cast<std::int64_t>(std::floor(std::max(0.0, predicted_s) / kTtftCalibrationBinS));
  };
  std::sort(predictions.begin(), predictions.end());
  for (std::size_t i = 0; i < predictions.size();) {
    const std::int64_t bin = bin_of(predictions[i].first);
    std::vector<double> actual;
    for (; i < predictions.size() && bin_of(predictions[i].first) == bin; ++i) {
      actual.push_back(predictions[i].second);
    }
    const Percentiles p = Summarize(actual);
    // The edge rounded to a microsecond: 3 x 0.1 prints as 0.3, not 0.30000000000000004.
    const double lo_s = std::round(static_cast<double>(bin) * kTtftCalibrationBinS * 1e6) / 1e6;
    bins.push_back({lo_s, p.count, p.mean, p.p95});
  }
  return bins;
}
}  // namespace

RunSummary RunRecorder::Finish(double duration_s, double makespan_s) {
  s_.duration_s = duration_s;
  s_.makespan_s = makespan_s;
  s_.goodput_rps = duration_s > 0 ? s_.good / duration_s : 0;
  s_.throughput_rps = duration_s > 0 ? s_.completed / duration_s : 0;
  s_.slo_attainment = s_.offered > 0 ? static_cast<double>(s_.good) / s_.offered : 0;
  s_.slo = slo_;
  s_.ttft_histogram_s = CountInBuckets(ttft_, TtftBucketBoundsSeconds());
  s_.ttft_s = Summarize(ttft_);
  s_.tpot_s = Summarize(tpot_);
  s_.e2e_s = Summarize(e2e_);
  s_.ttft_objective_s = WithFailuresAsInfinity(ttft_, failed_without_first_token_);
  s_.e2e_objective_s = WithFailuresAsInfinity(e2e_, s_.failed);
  s_.itl_s = itl_.Summary();
  s_.queue_time_s = Summarize(queue_time_);
  s_.prefill_time_s = Summarize(prefill_time_);
  s_.ttft_prediction_abs_error_s = Summarize(prediction_error_);
  s_.ttft_estimate_abs_error_s = Summarize(estimate_error_);
  s_.ttft_calibration = Calibration(predictions_);
  s_.retry_after = CheckRetryAfter(queue_spans_, retry_afters_);
  for (std::size_t i = 0; i < s_.phases.size(); ++i) {
    PhaseSummary& p = s_.phases[i];
    const double len = p.end_s - p.start_s;
    p.goodput_rps = len > 0 ? p.good / len : 0;
    p.ttft_s = Summarize(phase_ttft_[i]);
    for (auto& [model, m] : s_.served_model) {
      m.phase_goodput_rps[i] = len > 0 ? m.phase_goodput_rps[i] / len : 0;  // counts to rates
    }
  }
  for (auto& [model, ttft] : served_ttft_) {
    s_.served_model[model].ttft_s = Summarize(ttft);
  }
  for (auto& [name, c] : classes_) {
    c.summary.ttft_s = Summarize(c.ttft);
    s_.classes[name] = c.summary;
  }
  return s_;
}

}  // namespace spillway
