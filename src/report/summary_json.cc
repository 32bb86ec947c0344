#include "report/summary_json.h"

#include "report/cost.h"

#include <algorithm>
#include <boost/json.hpp>
#include <cmath>
#include <sstream>

namespace spillway {
namespace json = boost::json;
namespace {

// A figure the run may not have measured: null when it did not.
// null when not measured, or not a number JSON can hold (an overflow: never "Infinity").
json::value Measured(const std::optional<double>& v) {
  return v.has_value() && std::isfinite(*v) ? json::value(*v) : json::value(nullptr);
}

json::object PercentilesJson(const Percentiles& p) {
  return {{"p50", p.p50},   {"p95", p.p95}, {"p99", p.p99},
          {"mean", p.mean}, {"max", p.max}, {"count", p.count}};
}

json::object ClassesJson(const std::map<std::string, ClassSummary>& classes) {
  json::object out;
  for (const auto& [name, c] : classes) {
    const ClassShares shares = SharesOf(classes, name);
    out[name] = json::object{{"offered", c.offered},
                             {"first_attempts", c.first_attempts},
                             {"offered_share", shares.offered},
                             {"served_share", shares.served},
                             {"admitted", c.admitted},
                             {"rejected", c.rejected},
                             {"dropped", c.dropped},
                             {"completed", c.completed},
                             {"good", c.good},
                             {"abandoned", c.abandoned},
                             {"failed", c.failed},
                             {"ttft_s", PercentilesJson(c.ttft_s)}};
  }
  return out;
}

json::object CountsJson(const std::map<std::string, std::int64_t>& counts) {
  json::object o;
  for (const auto& [k, v] : counts) {
    o[k] = v;
  }
  return o;
}

json::object BucketCountsJson(const BucketCounts& h) {
  json::array bounds(h.bounds.begin(), h.bounds.end());
  json::array counts(h.counts.begin(), h.counts.end());
  return {{"bounds", std::move(bounds)}, {"counts", std::move(counts)}, {"overflow", h.overflow}};
}

// Only the SLOs the run had: {"ttft_s": 1, "tpot_s": 0.035}.
json::object SloJson(const GoodputSlo& slo) {
  json::object o;
  for (const auto& [key, value] : {std::pair{"ttft_s", slo.ttft_s}, std::pair{"tpot_s", slo.tpot_s},
                                   std::pair{"e2e_s", slo.e2e_s}}) {
    if (value) {
      o[key] = *value;
    }
  }
  return o;
}

json::array TimeseriesJson(const std::vector<TimeseriesPoint>& points) {
  json::array a;
  a.reserve(points.size());
  for (const TimeseriesPoint& p : points) {
    a.push_back(json::object{{"t", p.t},
                             {"offered", p.offered},
                             {"retries", p.retries},
                             {"admitted", p.admitted},
                             {"rejected", p.rejected},
                             {"completed", p.completed},
                             {"good", p.good},
                             {"waiting", p.waiting},
                             {"running", p.running},
                             {"kv_usage", p.kv_usage}});
  }
  return a;
}

json::array PhasesJson(const std::vector<PhaseSummary>& phases) {
  json::array a;
  for (const PhaseSummary& p : phases) {
    a.push_back(json::object{{"start_s", p.start_s},
                             {"end_s", p.end_s},
                             {"offered_rate_rps", p.offered_rate_rps},
                             {"offered", p.offered},
                             {"admitted", p.admitted},
                             {"rejected", p.rejected},
                             {"dropped_at_queue_head", p.dropped},
                             {"good", p.good},
                             {"goodput_rps", p.goodput_rps},
                             {"ttft_s", PercentilesJson(p.ttft_s)}});
  }
  return a;
}

json::object ToValue(const RunSummary& s) {
  json::object o;
  o["source"] = s.source;
  o["scenario"] = s.scenario;
  o["policy"] = s.policy;
  o["profile"] = s.profile;
  if (!s.command.empty()) {
    o["command"] = s.command;
  }
  if (!s.started_at.empty()) {
    o["started_at"] = s.started_at;
  }
  o["seed"] = s.seed;
  o["replicas"] = s.replicas;
  if (!s.router.empty()) {
    o["router"] = s.router;
  }
  if (s.cancellation_propagation) {
    o["cancellation_propagation"] = *s.cancellation_propagation;
  } else {
    o["cancellation_propagation"] = nullptr;
  }
  o["duration_s"] = s.duration_s;
  o["makespan_s"] = s.makespan_s;
  o["offered"] = s.offered;
  o["first_attempts"] = s.first_attempts;
  o["retries"] = s.retries;
  o["admitted"] = s.admitted;
  o["degraded"] = s.degraded;
  o["cache_hits"] = s.cache_hits;
  o["rejected"] = json::object{{"total", s.rejected_total},
                               {"by_status", CountsJson(s.rejected_by_status)},
                               {"by_reason", CountsJson(s.rejected_by_reason)}};
  o["dropped_at_queue_head"] = s.dropped_at_queue_head;
  o["completed"] = s.completed;
  o["good"] = s.good;
  o["goodput_rps"] = s.goodput_rps;
  o["throughput_rps"] = s.throughput_rps;
  o["slo_attainment"] = s.slo_attainment;
  o["abandoned_after_admission"] = s.abandoned_after_admission;
  o["failed"] = s.failed;
  o["slo"] = SloJson(s.slo);
  o["ttft_s"] = PercentilesJson(s.ttft_s);
  o["ttft_histogram_s"] = BucketCountsJson(s.ttft_histogram_s);
  o["tpot_s"] = PercentilesJson(s.tpot_s);
  o["itl_s"] = PercentilesJson(s.itl_s);
  o["e2e_s"] = PercentilesJson(s.e2e_s);
  o["queue_time_s"] = PercentilesJson(s.queue_time_s);
  o["prefill_time_s"] = PercentilesJson(s.prefill_time_s);
  o["ttft_prediction_abs_error_s"] = PercentilesJson(s.ttft_prediction_abs_error_s);
  o["ttft_estimate_abs_error_s"] = PercentilesJson(s.ttft_estimate_abs_error_s);
  json::array calibration;
  for (const TtftCalibrationBin& b : s.ttft_calibration) {
    calibration.push_back(json::object{{"predicted_lo_s", b.predicted_lo_s},
                                       {"count", b.count},
                                       {"actual_mean_s", b.actual_mean_s},
                                       {"actual_p95_s", b.actual_p95_s}});
  }
  o["ttft_calibration"] = std::move(calibration);
  o["estimates"] = json::object{{"service_rate_rps", s.est_service_rate_rps},
                                {"prefill_tokens_per_s", s.est_prefill_tokens_per_s},
                                {"step_time_s", s.est_step_time_s}};
  o["engine_busy_s"] = Measured(s.engine_busy_s);
  o["wasted_engine_s"] = Measured(s.wasted_engine_s);
  o["not_completed_engine_s"] = Measured(s.not_completed_engine_s);
  const EngineCost cost = CostOf(s);
  o["gpu_hour_usd"] = Measured(s.gpu_hour_usd);
  o["cost_usd"] = json::object{{"engine_busy", Measured(cost.busy_usd)},
                               {"wasted", Measured(cost.wasted_usd)},
                               {"not_completed", Measured(cost.not_completed_usd)}};
  o["max_waiting"] = s.max_waiting;
  o["preemptions"] = s.preemptions;
  o["prefill_tokens"] = s.prefill_tokens;
  o["recomputed_tokens"] = s.recomputed_tokens;
  o["prefix_cache"] = json::object{{"queries_tokens", s.prefix_cache_queries_tokens},
                                   {"hits_tokens", s.prefix_cache_hits_tokens}};
  const RetryAfterSummary& ra = s.retry_after;
  o["retry_after"] = json::object{{"checked", ra.checked},
                                  {"shortfalls", ra.shortfalls},
                                  {"tolerance_s", ra.tolerance_s},
                                  {"max_shortfall_s", ra.max_shortfall_s},
                                  {"max_drain_s", ra.max_drain_s},
                                  {"mean_drain_s", ra.mean_drain_s},
                                  {"mean_retry_after_s", ra.mean_retry_after_s}};
  json::array objectives;
  for (const ObjectiveResult& r : s.objectives) {
    // JSON has no infinity: an objective whose percentile fell on a failed request
    // (+infinity, report/objectives.h) has the value null.
    const json::value value = std::isfinite(r.value) ? json::value(r.value) : json::value(nullptr);
    objectives.push_back(
        json::object{{"name", r.name}, {"target", r.target}, {"value", value}, {"pass", r.pass}});
  }
  o["objectives"] = std::move(objectives);
  o["phases"] = PhasesJson(s.phases);
  o["classes"] = ClassesJson(s.classes);
  json::object served;
  for (const auto& [model, m] : s.served_model) {
    json::array phases;
    for (const double r : m.phase_goodput_rps) {
      phases.push_back(r);
    }
    served[model] = json::object{{"completed", m.completed},
                                 {"good", m.good},
                                 {"phase_goodput_rps", std::move(phases)},
                                 {"ttft_s", PercentilesJson(m.ttft_s)}};
  }
  o["served_model"] = std::move(served);
  o["timeseries"] = TimeseriesJson(s.timeseries);
  return o;
}

// Indented output: one key per line, except that arrays of scalars-only objects (the time
// series) keep one element per line and arrays of scalars (histogram bounds) stay on one line.
void Pretty(std::ostringstream& out, const json::value& v, int indent) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  if (v.is_object() && !v.as_object().empty()) {
    const auto& obj = v.as_object();
    bool flat = true;
    for (const auto& kv : obj) {
      flat = flat && !kv.value().is_structured();
    }
    if (flat && indent > 2) {
      out << json::serialize(v);
      return;
    }
    out << "{\n";
    std::size_t i = 0;
    for (const auto& kv : obj) {
      out << pad << "  " << json::serialize(json::string(kv.key())) << ": ";
      Pretty(out, kv.value(), indent + 2);
      out << (++i < obj.size() ? ",\n" : "\n");
    }
    out << pad << "}";
  } else if (v.is_array() && !v.as_array().empty()) {
    const auto& arr = v.as_array();
    if (std::none_of(arr.begin(), arr.end(),
                     [](const json::value& e) { return e.is_structured(); })) {
      out << json::serialize(v);
      return;
    }
    out << "[\n";
    for (std::size_t i = 0; i < arr.size(); ++i) {
      out << pad << "  ";
      Pretty(out, arr[i], indent + 2);
      out << (i + 1 < arr.size() ? ",\n" : "\n");
    }
    out << pad << "]";
  } else {
    out << json::serialize(v);
  }
}

}  // namespace

std::string SummaryToJson(const RunSummary& summary) {
  std::ostringstream out;
  Pretty(out, ToValue(summary), 0);
  out << "\n";
  return out.str();
}

std::string SummariesToJson(const std::vector<RunSummary>& summaries) {
  json::array a;
  for (const RunSummary& s : summaries) {
    a.push_back(ToValue(s));
  }
  std::ostringstream out;
  Pretty(out, a, 0);
  out << "\n";
  return out.str();
}

}  // namespace spillway
