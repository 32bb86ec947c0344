#include "metrics/prometheus_text.h"

#include <charconv>
#include <cmath>
#include <limits>

namespace spillway::metrics {
namespace {

bool IsNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }
bool IsBlank(char c) { return c == ' ' || c == '\t'; }

/// A cursor over one line.
class LineReader {
 public:
  explicit LineReader(std::string_view line) : s_(line) {}

  void SkipBlanks() {
    while (i_ < s_.size() && IsBlank(s_[i_])) {
      ++i_;
    }
  }
  bool AtEnd() const { return i_ >= s_.size(); }
  bool Consume(char c) {
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  /// A metric or label name; empty when none starts here.
  std::string_view Name() {
    const std::size_t start = i_;
    if (i_ < s_.size() && IsNameStart(s_[i_])) {
      ++i_;
      while (i_ < s_.size() && IsNameChar(s_[i_])) {
        ++i_;
      }
    }
    return s_.substr(start, i_ - start);
  }
  /// A double-quoted label value with \\, \" and \n unescaped; false when unterminated.
  bool QuotedValue(std::string* out) {
    if (!Consume('"')) {
      return false;
    }
    while (i_ < s_.size()) {
      const char c = s_[i_++];
      if (c == '"') {
        return true;
      }
      if (c == '\\' && i_ < s_.size()) {
        const char e = s_[i_++];
        out->push_back(e == 'n' ? '\n' : e);
      } else {
        out->push_back(c);
      }
    }
    return false;
  }
  /// The next blank-delimited token.
  std::string_view Token() {
    const std::size_t start = i_;
    while (i_ < s_.size() && !IsBlank(s_[i_])) {
      ++i_;
    }
    return s_.substr(start, i_ - start);
  }

 private:
  std::string_view s_;
  std::size_t i_ = 0;
};

/// A sample value: a float in Go's ParseFloat syntax as Prometheus writes it, or NaN, +Inf,
/// -Inf (Inf, case as written by the common clients).
std::optional<double> ParseValue(std::string_view t) {
  if (t == "NaN" || t == "nan") {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (t == "+Inf" || t == "Inf" || t == "+inf" || t == "inf") {
    return std::numeric_limits<double>::infinity();
  }
  if (t == "-Inf" || t == "-inf") {
    return -std::numeric_limits<double>::infinity();
  }
  if (t.starts_with('+')) {
    t.remove_prefix(1);
  }
  double v = 0;
  const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size() || std::isnan(v)) {
    return std::nullopt;
  }
  return v;
}

/// One sample line into `out`; false when malformed.
bool ParseSample(std::string_view line, Sample* out) {
  LineReader r(line);
  const std::string_view name = r.Name();
  if (name.empty()) {
    return false;
  }
  out->name.assign(name);
  r.SkipBlanks();
  if (r.Consume('{')) {
    for (;;) {
      r.SkipBlanks();
      if (r.Consume('}')) {
        break;
      }
      const std::string_view label = r.Name();
      r.SkipBlanks();
      if (label.empty() || !r.Consume('=')) {
        return false;
      }
      r.SkipBlanks();
      std::string value;
      if (!r.QuotedValue(&value)) {
        return false;
      }
      out->labels.emplace_back(std::string(label), std::move(value));
      r.SkipBlanks();
      if (!r.Consume(',')) {
        r.SkipBlanks();
        if (!r.Consume('}')) {
          return false;
        }
        break;
      }
    }
  }
  r.SkipBlanks();
  const std::optional<double> value = ParseValue(r.Token());
  if (!value.has_value()) {
    return false;
  }
  out->value = *value;
  // A timestamp (and an OpenMetrics exemplar after it) may follow: not needed here.
  return true;
}

template <typename F>
void ForEachNamed(const Exposition& e, std::string_view name, F f) {
  for (const Sample& s : e.samples) {
    if (s.name == name) {
      f(s.value);
    }
  }
}

}  // namespace

const std::string* Sample::Label(std::string_view label) const {
  for (const auto& [k, v] : labels) {
    if (k == label) {
      return &v;
    }
  }
  return nullptr;
}

bool Exposition::Has(std::string_view name) const {
  for (const Sample& s : samples) {
    if (s.name == name) {
      return true;
    }
  }
  return false;
}

bool Exposition::HasPrefix(std::string_view prefix) const {
  for (const Sample& s : samples) {
    if (std::string_view(s.name).starts_with(prefix)) {
      return true;
    }
  }
  return false;
}

std::optional<double> Exposition::Sum(std::string_view name) const {
  std::optional<double> sum;
  ForEachNamed(*this, name, [&sum](double v) { sum = sum.value_or(0) + v; });
  return sum;
}

std::optional<double> Exposition::Mean(std::string_view name) const {
  double sum = 0;
  int n = 0;
  ForEachNamed(*this, name, [&](double v) {
    sum += v;
    ++n;
  });
  return n > 0 ? std::optional<double>(sum / n) : std::nullopt;
}

Exposition ParseExposition(std::string_view text) {
  Exposition e;
  while (!text.empty()) {
    const std::size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    while (!line.empty() && IsBlank(line.front())) {
      line.remove_prefix(1);
    }
    if (line.empty()) {
      continue;
    }
    if (line.front() == '#') {
      if (line == "# EOF") {
        break;  // OpenMetrics: nothing follows
      }
      continue;  // HELP, TYPE or a comment
    }
    Sample s;
    if (ParseSample(line, &s)) {
      e.samples.push_back(std::move(s));
    } else {
      ++e.malformed_lines;
    }
  }
  return e;
}

}  // namespace spillway::metrics
