#include "metrics/text_format.h"

#include <charconv>
#include <cmath>
#include <system_error>

#include "core/check.h"

namespace spillway::metrics {
namespace {

bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

// Every integer with magnitude up to 2^53 is exactly representable as a double.
constexpr double kMaxExactInteger = 9007199254740992.0;

template <typename T>
void AppendChars(std::string& out, T v) {
  char buf[64];  // the longest shortest-round-trip double is 24 characters
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), v);
  SPILLWAY_CHECK(r.ec == std::errc());
  out.append(buf, r.ptr);
}

void AppendEscaped(std::string& out, std::string_view text, bool escape_quote) {
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && escape_quote) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

}  // namespace

bool IsValidMetricName(std::string_view name) {
  if (name.empty() || IsAsciiDigit(name.front())) {
    return false;
  }
  for (const char c : name) {
    if (!IsAsciiLetter(c) && !IsAsciiDigit(c) && c != '_' && c != ':') {
      return false;
    }
  }
  return true;
}

bool IsValidLabelName(std::string_view name) {
  if (name.empty() || IsAsciiDigit(name.front()) || name.starts_with("__")) {
    return false;
  }
  for (const char c : name) {
    if (!IsAsciiLetter(c) && !IsAsciiDigit(c) && c != '_') {
      return false;
    }
  }
  return true;
}

void AppendValue(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
  } else if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
  } else if (std::trunc(v) == v && std::fabs(v) <= kMaxExactInteger) {
    AppendChars(out, static_cast<std::int64_t>(v));
  } else {
    AppendChars(out, v);
  }
}

void AppendValue(std::string& out, std::uint64_t v) { AppendChars(out, v); }

void AppendEscapedLabelValue(std::string& out, std::string_view value) {
  AppendEscaped(out, value, /*escape_quote=*/true);
}

void AppendEscapedHelp(std::string& out, std::string_view help) {
  AppendEscaped(out, help, /*escape_quote=*/false);
}

}  // namespace spillway::metrics
