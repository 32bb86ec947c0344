#pragma once
// Building blocks of the Prometheus text exposition format 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/): name checks, number
// formatting and escaping. Pure functions; thread-safe.

#include <cstdint>
#include <string>
#include <string_view>

namespace spillway::metrics {

/// [a-zA-Z_:][a-zA-Z0-9_:]* (the data model's metric name rule; colons allowed).
bool IsValidMetricName(std::string_view name);

/// [a-zA-Z_][a-zA-Z0-9_]* and not starting with "__" (reserved for Prometheus internals).
bool IsValidLabelName(std::string_view name);

/// Appends a sample value: "NaN", "+Inf", "-Inf"; an integral value with |v| <= 2^53 (where
/// every integer is exact) as a plain integer ("1", "1000000", "0" for -0); any other finite
/// value in the shortest form that round-trips (std::to_chars, fixed or exponent notation,
/// whichever is shorter: "0.5", "1e-07", "1e+20", "18014398509481984" for 2^54).
void AppendValue(std::string& out, double v);
void AppendValue(std::string& out, std::uint64_t v);

/// Appends a label value with backslash, double quote and line feed escaped.
void AppendEscapedLabelValue(std::string& out, std::string_view value);

/// Appends HELP text with backslash and line feed escaped (quotes stay as they are).
void AppendEscapedHelp(std::string& out, std::string_view help);

}  // namespace spillway::metrics
