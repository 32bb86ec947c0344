#include "report/summary_reader.h"

#include "config/config_error.h"
#include "config/text_file.h"

#include <fmt/format.h>

#include <boost/json.hpp>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

namespace spillway {
namespace json = boost::json;
namespace {

enum class Need : bool { kOptional, kRequired };

std::string KindName(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null:
      return "null";
    case json::kind::bool_:
      return "a boolean";
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_:
      return "a number (" + json::serialize(v) + ")";
    case json::kind::string:
      return "a string";
    case json::kind::array:
      return "an array";
    case json::kind::object:
      return "an object";
  }
  return "?";
}

// One object of a run, at `path` ("" for the run itself, else e.g. "ttft_s" or
// "timeseries[3]"); errors name the input, the run and the key's full path.
class Fields {
 public:
  Fields(const json::object& o, std::string path, const std::string& where)
      : o_(o), path_(std::move(path)), where_(where) {}

  std::string Path(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }

  [[noreturn]] void Fail(std::string_view key, std::string_view what) const {
    throw RunJsonError(fmt::format("{}key '{}': {}", where_, Path(key), what));
  }

  // The value at `key`; nullptr when it is absent and optional.
  const json::value* Get(std::string_view key, Need need) const {
    const json::value* v = o_.if_contains(key);
    if (v == nullptr && need == Need::kRequired) {
      Fail(key, "missing");
    }
    return v;
  }

  double Number(std::string_view key, Need need = Need::kRequired) const {
    const json::value* v = Get(key, need);
    if (v == nullptr) {
      return 0;
    }
    if (!v->is_number()) {
      Fail(key, "expected a number, got " + KindName(*v));
    }
    return v->to_number<double>();
  }

  /// A figure the run may not have measured: nullopt when it is null (or absent and
  /// optional).
  std::optional<double> Measured(std::string_view key, Need need) const {
    const json::value* v = Get(key, need);
    if (v == nullptr || v->is_null()) {
      return std::nullopt;
    }
    if (!v->is_number()) {
      Fail(key, "expected a number or null, got " + KindName(*v));
    }
    return v->to_number<double>();
  }

  /// Every integer of a run summary is a count, a seed or a replica number: >= 0.
  std::int64_t Integer(std::string_view key, Need need = Need::kRequired) const {
    const json::value* v = Get(key, need);
    if (v == nullptr) {
      return 0;
    }
    boost::system::error_code ec;
    const auto n = v->to_number<std::int64_t>(ec);
    if (ec) {
      Fail(key, "expected an integer, got " + KindName(*v));
    }
    if (n < 0) {
      Fail(key, fmt::format("expected an integer >= 0, got {}", n));
    }
    return n;
  }

  std::string String(std::string_view key, Need need = Need::kOptional) const {
    const json::value* v = Get(key, need);
    if (v == nullptr) {
      return "";
    }
    if (!v->is_string()) {
      Fail(key, "expected a string, got " + KindName(*v));
    }
    return std::string(v->get_string());
  }

  // nullopt when absent or null.
  std::optional<bool> OptionalBool(std::string_view key) const {
    const json::value* v = Get(key, Need::kOptional);
    if (v == nullptr || v->is_null()) {
      return std::nullopt;
    }
    return Bool(key, false);
  }

  bool Bool(std::string_view key, bool fallback) const {
    const json::value* v = Get(key, Need::kOptional);
    if (v == nullptr) {
      return fallback;
    }
    if (!v->is_bool()) {
      Fail(key, "expected true or false, got " + KindName(*v));
    }
    return v->get_bool();
  }

  std::optional<Fields> Object(std::string_view key, Need need) const {
    const json::value* v = Get(key, need);
    if (v == nullptr) {
      return std::nullopt;
    }
    if (!v->is_object()) {
      Fail(key, "expected an object, got " + KindName(*v));
    }
    return Fields(v->get_object(), Path(key), where_);
  }

  const json::array* Array(std::string_view key, Need need) const {
    const json::value* v = Get(key, need);
    if (v != nullptr && !v->is_array()) {
      Fail(key, "expected an array, got " + KindName(*v));
    }
    return v == nullptr ? nullptr : &v->get_array();
  }

  // Element `i` of the array at `key`, which must be an object.
  Fields Element(std::string_view key, const json::array& a, std::size_t i) const {
    const std::string path = fmt::format("{}[{}]", key, i);
    if (!a[i].is_object()) {
      Fail(path, "expected an object, got " + KindName(a[i]));
    }
    return Fields(a[i].get_object(), Path(path), where_);
  }

  const json::object& object() const { return o_; }

 private:
  const json::object& o_;
  std::string path_;
  const std::string& where_;
};

Percentiles ReadPercentiles(const Fields& run, std::string_view key, Need need) {
  Percentiles p;
  if (const std::optional<Fields> f = run.Object(key, need)) {
    p.p50 = f->Number("p50");
    p.p95 = f->Number("p95");
    p.p99 = f->Number("p99");
    p.mean = f->Number("mean");
    p.max = f->Number("max");
    p.count = f->Integer("count");
  }
  return p;
}

std::map<std::string, std::int64_t> ReadCounts(const Fields& f) {
  std::map<std::string, std::int64_t> out;
  for (const auto& kv : f.object()) {
    out[std::string(kv.key())] = f.Integer(kv.key());
  }
  return out;
}

void ReadIdentity(const Fields& run, RunSummary* s) {
  s->source = run.String("source");
  s->scenario = run.String("scenario");
  s->policy = run.String("policy", Need::kRequired);
  s->profile = run.String("profile");
  s->command = run.String("command");
  s->started_at = run.String("started_at");
  s->seed = static_cast<std::uint64_t>(run.Integer("seed", Need::kOptional));
  s->replicas = static_cast<std::int32_t>(run.Integer("replicas", Need::kOptional));
  s->router = run.String("router");
  s->cancellation_propagation = run.OptionalBool("cancellation_propagation");
  s->duration_s = run.Number("duration_s", Need::kOptional);
  s->makespan_s = run.Number("makespan_s", Need::kOptional);
  if (const std::optional<Fields> slo = run.Object("slo", Need::kOptional)) {
    for (const auto& [key, field] :
         {std::pair{"ttft_s", &GoodputSlo::ttft_s}, std::pair{"tpot_s", &GoodputSlo::tpot_s},
          std::pair{"e2e_s", &GoodputSlo::e2e_s}}) {
      if (slo->Get(key, Need::kOptional) != nullptr) {
        s->slo.*field = slo->Number(key);
      }
    }
  }
}

void ReadCountsAndRates(const Fields& run, RunSummary* s) {
  s->offered = run.Integer("offered");
  s->first_attempts = run.Integer("first_attempts", Need::kOptional);
  s->retries = run.Integer("retries", Need::kOptional);
  s->admitted = run.Integer("admitted");
  s->degraded = run.Integer("degraded", Need::kOptional);
  s->cache_hits = run.Integer("cache_hits", Need::kOptional);
  const Fields rejected = *run.Object("rejected", Need::kRequired);
  s->rejected_total = rejected.Integer("total");
  s->rejected_by_status = ReadCounts(*rejected.Object("by_status", Need::kRequired));
  s->rejected_by_reason = ReadCounts(*rejected.Object("by_reason", Need::kRequired));
  s->dropped_at_queue_head = run.Integer("dropped_at_queue_head", Need::kOptional);
  s->completed = run.Integer("completed");
  s->good = run.Integer("good");
  s->goodput_rps = run.Number("goodput_rps");
  s->throughput_rps = run.Number("throughput_rps", Need::kOptional);
  s->slo_attainment = run.Number("slo_attainment");
  s->abandoned_after_admission = run.Integer("abandoned_after_admission");
  s->failed = run.Integer("failed", Need::kOptional);
}

void ReadLatencies(const Fields& run, RunSummary* s) {
  s->ttft_s = ReadPercentiles(run, "ttft_s", Need::kRequired);
  s->tpot_s = ReadPercentiles(run, "tpot_s", Need::kRequired);
  s->itl_s = ReadPercentiles(run, "itl_s", Need::kRequired);
  s->e2e_s = ReadPercentiles(run, "e2e_s", Need::kRequired);
  s->queue_time_s = ReadPercentiles(run, "queue_time_s", Need::kOptional);
  s->prefill_time_s = ReadPercentiles(run, "prefill_time_s", Need::kOptional);
  s->ttft_prediction_abs_error_s =
      ReadPercentiles(run, "ttft_prediction_abs_error_s", Need::kOptional);
  s->ttft_estimate_abs_error_s = ReadPercentiles(run, "ttft_estimate_abs_error_s", Need::kOptional);
  if (const json::array* bins = run.Array("ttft_calibration", Need::kOptional)) {
    for (std::size_t i = 0; i < bins->size(); ++i) {
      const Fields b = run.Element("ttft_calibration", *bins, i);
      s->ttft_calibration.push_back({b.Number("predicted_lo_s"), b.Integer("count"),
                                     b.Number("actual_mean_s"), b.Number("actual_p95_s")});
    }
  }
}

void ReadHistogram(const Fields& run, RunSummary* s) {
  const std::optional<Fields> h = run.Object("ttft_histogram_s", Need::kOptional);
  if (!h) {
    return;
  }
  const json::array& bounds = *h->Array("bounds", Need::kRequired);
  const json::array& counts = *h->Array("counts", Need::kRequired);
  if (bounds.size() != counts.size()) {
    h->Fail("counts", fmt::format("has {} entries for {} bounds", counts.size(), bounds.size()));
  }
  BucketCounts& out = s->ttft_histogram_s;
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    const std::string key = fmt::format("bounds[{}]", i);
    if (!bounds[i].is_number()) {
      h->Fail(key, "expected a number, got " + KindName(bounds[i]));
    }
    out.bounds.push_back(bounds[i].to_number<double>());
    if (i > 0 && !(out.bounds[i] > out.bounds[i - 1])) {
      h->Fail(key, "bounds must increase");
    }
    boost::system::error_code ec;
    out.counts.push_back(counts[i].to_number<std::int64_t>(ec));
    if (ec || out.counts.back() < 0) {
      h->Fail(fmt::format("counts[{}]", i), "expected a count, got " + KindName(counts[i]));
    }
  }
  out.overflow = h->Integer("overflow", Need::kOptional);
}

void ReadEngine(const Fields& run, RunSummary* s) {
  if (const std::optional<Fields> e = run.Object("estimates", Need::kOptional)) {
    s->est_service_rate_rps = e->Number("service_rate_rps", Need::kOptional);
    s->est_prefill_tokens_per_s = e->Number("prefill_tokens_per_s", Need::kOptional);
    s->est_step_time_s = e->Number("step_time_s", Need::kOptional);
  }
  s->engine_busy_s = run.Measured("engine_busy_s", Need::kRequired);
  s->wasted_engine_s = run.Measured("wasted_engine_s", Need::kRequired);
  s->not_completed_engine_s = run.Measured("not_completed_engine_s", Need::kOptional);
  s->gpu_hour_usd = run.Measured("gpu_hour_usd", Need::kOptional);
  if (s->gpu_hour_usd && !(*s->gpu_hour_usd >= 0)) {
    run.Fail("gpu_hour_usd", "must be a price >= 0 or null");
  }
  s->max_waiting = static_cast<std::int32_t>(run.Integer("max_waiting"));
  s->preemptions = run.Integer("preemptions");
  s->prefill_tokens = run.Integer("prefill_tokens", Need::kOptional);
  s->recomputed_tokens = run.Integer("recomputed_tokens", Need::kOptional);
  if (const std::optional<Fields> pc = run.Object("prefix_cache", Need::kOptional)) {
    s->prefix_cache_queries_tokens = pc->Integer("queries_tokens", Need::kOptional);
    s->prefix_cache_hits_tokens = pc->Integer("hits_tokens", Need::kOptional);
  }
  if (const std::optional<Fields> ra = run.Object("retry_after", Need::kOptional)) {
    RetryAfterSummary& r = s->retry_after;
    r.checked = ra->Integer("checked", Need::kOptional);
    r.shortfalls = ra->Integer("shortfalls", Need::kOptional);
    r.tolerance_s = ra->Get("tolerance_s", Need::kOptional) != nullptr ? ra->Number("tolerance_s")
                                                                       : r.tolerance_s;
    r.max_shortfall_s = ra->Number("max_shortfall_s", Need::kOptional);
    r.max_drain_s = ra->Number("max_drain_s", Need::kOptional);
    r.mean_drain_s = ra->Number("mean_drain_s", Need::kOptional);
    r.mean_retry_after_s = ra->Number("mean_retry_after_s", Need::kOptional);
  }
}

void ReadObjectivesAndPhases(const Fields& run, RunSummary* s) {
  if (const json::array* objectives = run.Array("objectives", Need::kOptional)) {
    for (std::size_t i = 0; i < objectives->size(); ++i) {
      const Fields o = run.Element("objectives", *objectives, i);
      // A null value is +infinity (summary_json.h): the percentile fell on a failed request.
      const std::optional<double> value = o.Measured("value", Need::kRequired);
      s->objectives.push_back({o.String("name", Need::kRequired), o.Number("target"),
                               value.value_or(std::numeric_limits<double>::infinity()),
                               o.Bool("pass", false)});
    }
  }
  if (const json::array* phases = run.Array("phases", Need::kOptional)) {
    for (std::size_t i = 0; i < phases->size(); ++i) {
      const Fields f = run.Element("phases", *phases, i);
      PhaseSummary p;
      p.start_s = f.Number("start_s");
      p.end_s = f.Number("end_s");
      p.offered_rate_rps = f.Number("offered_rate_rps", Need::kOptional);
      p.offered = f.Integer("offered", Need::kOptional);
      p.admitted = f.Integer("admitted", Need::kOptional);
      p.rejected = f.Integer("rejected", Need::kOptional);
      p.dropped = f.Integer("dropped_at_queue_head", Need::kOptional);
      p.good = f.Integer("good", Need::kOptional);
      p.goodput_rps = f.Number("goodput_rps", Need::kOptional);
      p.ttft_s = ReadPercentiles(f, "ttft_s", Need::kOptional);
      s->phases.push_back(p);
    }
  }
}

void ReadServedModels(const Fields& run, RunSummary* s) {
  const std::optional<Fields> served = run.Object("served_model", Need::kOptional);
  if (!served.has_value()) {
    return;
  }
  for (const auto& entry : served->object()) {
    const std::string model(entry.key());
    const Fields m = *served->Object(model, Need::kRequired);
    ServedModelSummary out;
    out.completed = m.Integer("completed");
    out.good = m.Integer("good");
    if (const json::array* phases = m.Array("phase_goodput_rps", Need::kOptional)) {
      for (const json::value& v : *phases) {
        if (!v.is_number()) {
          m.Fail("phase_goodput_rps", "expected numbers, got " + KindName(v));
        }
        out.phase_goodput_rps.push_back(v.to_number<double>());
      }
    }
    out.ttft_s = ReadPercentiles(m, "ttft_s", Need::kOptional);
    s->served_model[model] = std::move(out);
  }
}

// The per-class counts (optional: runs written before them have none).
void ReadClasses(const Fields& run, RunSummary* s) {
  const std::optional<Fields> classes = run.Object("classes", Need::kOptional);
  if (!classes.has_value()) {
    return;
  }
  for (const auto& entry : classes->object()) {
    const std::string name(entry.key());
    const Fields f = *classes->Object(name, Need::kRequired);
    ClassSummary c;
    c.offered = f.Integer("offered");
    c.first_attempts = f.Integer("first_attempts", Need::kOptional);
    c.admitted = f.Integer("admitted");
    c.rejected = f.Integer("rejected");
    c.dropped = f.Integer("dropped");
    c.completed = f.Integer("completed");
    c.good = f.Integer("good");
    c.abandoned = f.Integer("abandoned");
    c.failed = f.Integer("failed");
    c.ttft_s = ReadPercentiles(f, "ttft_s", Need::kOptional);
    s->classes[name] = c;
  }
}

void ReadTimeseries(const Fields& run, RunSummary* s) {
  const json::array& points = *run.Array("timeseries", Need::kRequired);
  s->timeseries.reserve(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Fields f = run.Element("timeseries", points, i);
    TimeseriesPoint p;
    p.t = f.Number("t");
    p.offered = f.Integer("offered");
    p.retries = f.Integer("retries", Need::kOptional);
    p.admitted = f.Integer("admitted");
    p.rejected = f.Integer("rejected");
    p.completed = f.Integer("completed");
    p.good = f.Integer("good");
    p.waiting = static_cast<std::int32_t>(f.Integer("waiting"));
    p.running = static_cast<std::int32_t>(f.Integer("running"));
    p.kv_usage = f.Number("kv_usage");
    s->timeseries.push_back(p);
  }
}

RunSummary ReadRun(const json::value& v, const std::string& where) {
  if (!v.is_object()) {
    throw RunJsonError(where + "expected a run object, got " + KindName(v));
  }
  const Fields run(v.get_object(), "", where);
  RunSummary s;
  ReadIdentity(run, &s);
  ReadCountsAndRates(run, &s);
  ReadLatencies(run, &s);
  ReadHistogram(run, &s);
  ReadEngine(run, &s);
  ReadObjectivesAndPhases(run, &s);
  ReadServedModels(run, &s);
  ReadClasses(run, &s);
  ReadTimeseries(run, &s);
  return s;
}

// "line L, column C" of byte `offset` in `text` (both from 1).
std::string LineColumn(std::string_view text, std::size_t offset) {
  std::size_t line = 1;
  std::size_t column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return fmt::format("line {}, column {}", line, column);
}

json::value ParseJson(std::string_view text, std::string_view source) {
  json::stream_parser parser;
  boost::system::error_code ec;
  const std::size_t used = parser.write_some(text.data(), text.size(), ec);
  if (!ec) {
    parser.finish(ec);
  }
  if (ec) {
    // A first line that is a whole JSON value with more after it: JSON Lines, another file.
    const std::size_t newline = text.find('\n');
    if (newline != std::string_view::npos &&
        text.find_first_not_of(" \t\r\n", newline) != std::string_view::npos) {
      boost::system::error_code line_ec;
      json::parse(text.substr(0, newline), line_ec);
      if (!line_ec) {
        throw RunJsonError(fmt::format(
            "{}: one JSON value per line (JSON Lines, such as a --records or --timeseries "
            "file); expected a run summary (--json) or an array of them",
            source));
      }
    }
    throw RunJsonError(
        fmt::format("{}: invalid JSON at {}: {}", source, LineColumn(text, used), ec.message()));
  }
  return parser.release();
}

}  // namespace

std::vector<RunSummary> ParseRunSummaries(std::string_view text, std::string_view source) {
  const json::value root = ParseJson(text, source);
  std::vector<RunSummary> runs;
  if (!root.is_array()) {
    runs.push_back(ReadRun(root, fmt::format("{}: ", source)));
    return runs;
  }
  const json::array& a = root.get_array();
  if (a.empty()) {
    throw RunJsonError(fmt::format("{}: an empty array: no run to report", source));
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    runs.push_back(ReadRun(a[i], fmt::format("{}: run {} of {}: ", source, i + 1, a.size())));
  }
  return runs;
}

std::vector<RunSummary> ReadRunSummaries(const std::string& path) {
  std::string text;
  try {
    text = config::ReadInputFile(path);
  } catch (const config::ConfigError& e) {
    throw RunJsonError(e.what());
  }
  return ParseRunSummaries(text, path);
}

}  // namespace spillway
