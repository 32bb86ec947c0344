#include "metrics/metrics_text.h"

#include <charconv>

namespace spillway::metrics {
namespace {

// The value of `line` when it is a sample of `name`; nullopt otherwise (another metric, a
// comment, or a malformed line).
std::optional<double> SampleValue(std::string_view line, std::string_view name) {
  if (!line.starts_with(name) || line.size() == name.size()) {
    return std::nullopt;
  }
  std::size_t i = name.size();
  if (line[i] == '{') {
    // Skip the label set; label values are quoted and may hold '}' or escaped quotes.
    bool quoted = false;
    for (++i; i < line.size(); ++i) {
      const char c = line[i];
      if (quoted && c == '\\') {
        ++i;
      } else if (c == '"') {
        quoted = !quoted;
      } else if (!quoted && c == '}') {
        break;
      }
    }
    if (i >= line.size()) {
      return std::nullopt;
    }
    ++i;
  } else if (line[i] != ' ' && line[i] != '\t') {
    return std::nullopt;  // a longer name that starts with `name`
  }
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) {
    ++i;
  }
  std::size_t end = line.find_first_of(" \t", i);
  end = end == std::string_view::npos ? line.size() : end;
  if (i < end && line[i] == '+') {
    ++i;  // "+Inf"
  }
  double value = 0;
  const auto [ptr, ec] = std::from_chars(line.data() + i, line.data() + end, value);
  if (ec != std::errc() || ptr != line.data() + end || i == end) {
    return std::nullopt;
  }
  return value;
}

template <typename F>
void ForEachSample(std::string_view text, std::string_view name, F f) {
  while (!text.empty()) {
    const std::size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    if (const std::optional<double> v = SampleValue(line, name)) {
      f(*v);
    }
  }
}

}  // namespace

std::optional<double> SampleSum(std::string_view exposition, std::string_view name) {
  std::optional<double> sum;
  ForEachSample(exposition, name, [&sum](double v) { sum = sum.value_or(0) + v; });
  return sum;
}

std::optional<double> SampleMean(std::string_view exposition, std::string_view name) {
  double sum = 0;
  int n = 0;
  ForEachSample(exposition, name, [&](double v) {
    sum += v;
    ++n;
  });
  return n > 0 ? std::optional<double>(sum / n) : std::nullopt;
}

ServerSnapshot ReadServerSnapshot(std::string_view exposition) {
  ServerSnapshot s;
  s.waiting = SampleSum(exposition, "vllm:num_requests_waiting");
  s.running = SampleSum(exposition, "vllm:num_requests_running");
  s.kv_usage = SampleMean(exposition, "vllm:kv_cache_usage_perc");
  if (!s.kv_usage.has_value()) {
    s.kv_usage = SampleMean(exposition, "vllm:gpu_cache_usage_perc");
  }
  s.preemptions = SampleSum(exposition, "vllm:num_preemptions_total");
  s.prompt_tokens = SampleSum(exposition, "vllm:prompt_tokens_total");
  s.recomputed_tokens = SampleSum(exposition, "spillway_recomputed_prefill_tokens_total");
  s.engine_busy_s = SampleSum(exposition, "spillway_engine_busy_seconds_total");
  s.wasted_engine_s = SampleSum(exposition, "spillway_wasted_engine_seconds_total");
  s.not_completed_engine_s = SampleSum(exposition, "spillway_not_completed_engine_seconds_total");
  s.service_rate_rps = SampleSum(exposition, "spillway_service_rate_requests_per_second");
  s.prefill_tokens_per_s = SampleSum(exposition, "spillway_prefill_throughput_tokens_per_second");
  return s;
}

}  // namespace spillway::metrics
