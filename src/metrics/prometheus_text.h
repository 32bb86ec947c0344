#pragma once
// Parses a Prometheus text exposition (format 0.0.4, what GET /metrics returns; also the
// OpenMetrics text a scrape may get, up to its `# EOF`) into samples:
//
//   name [{label="value", ...}] value [timestamp]
//
// (https://prometheus.io/docs/instrumenting/exposition_formats/). `#` lines (HELP, TYPE and
// comments) carry nothing a sample lookup needs and are skipped. The one parser of exposition text
// in the project: the gateway's scrapers (routing/engine_metrics.h), bench's server snapshot
// and soak-check (metrics_text.h) read through it. Pure; thread-safe.
//
// Lenient as a scraper must be: a malformed line is skipped and counted, never fatal, so one
// odd sample from an engine does not cost the gateway the whole scrape.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace spillway::metrics {

/// Label name and (unescaped) value pairs, in the order the sample gave them.
using SampleLabels = std::vector<std::pair<std::string, std::string>>;

struct Sample {
  std::string name;
  SampleLabels labels;
  double value = 0;  ///< may be NaN or +-Inf
  /// The label's value, or nullptr when the sample has no such label.
  const std::string* Label(std::string_view label) const;
};

/// A parsed exposition.
struct Exposition {
  std::vector<Sample> samples;       ///< in the order of the text
  std::int32_t malformed_lines = 0;  ///< lines that were neither a sample nor a comment

  /// Whether any sample is called `name`.
  bool Has(std::string_view name) const;
  /// Whether any sample's name starts with `prefix` (e.g. "sglang:").
  bool HasPrefix(std::string_view prefix) const;
  /// Sum of the values of every sample called `name`, whatever its labels; nullopt when none.
  std::optional<double> Sum(std::string_view name) const;
  /// Mean of the values of every sample called `name`; nullopt when none.
  std::optional<double> Mean(std::string_view name) const;
};

/// Parses `text` (LF or CRLF lines). Never throws but for memory exhaustion.
Exposition ParseExposition(std::string_view text);

}  // namespace spillway::metrics
