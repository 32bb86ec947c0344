#include "api/json_fields.h"

#include <charconv>
#include <cmath>
#include <limits>

#include <boost/json.hpp>

namespace spillway::api::json_fields {
namespace {

namespace json = boost::json;

constexpr std::size_t kMaxDescribeBytes = 64;
constexpr std::int64_t kMinInt = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMaxInt = std::numeric_limits<std::int64_t>::max();

/// Cuts `text` to at most `max_bytes` without splitting a UTF-8 sequence, marking the cut.
std::string TruncateUtf8(std::string text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) {
    return text;
  }
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
    --cut;  // text[cut] is a continuation byte: move to the start of its character
  }
  text.resize(cut);
  return text + "...";
}

/// Shortest round-trip decimal form of a double ("5.5", "1e+23"); Boost.JSON writes "5.5E0".
std::string FormatDouble(double d) {
  if (!std::isfinite(d)) {
    return d > 0 ? "a number too large for a double" : "a number too small for a double";
  }
  char buf[32];
  const auto result = std::to_chars(buf, buf + sizeof(buf), d);
  return std::string(buf, result.ptr);
}

std::string IntegerRule(std::int64_t lo, std::int64_t hi) {
  if (lo == kMinInt && hi == kMaxInt) {
    return "a 64-bit integer";
  }
  if (hi == kMaxInt) {
    return "an integer >= " + std::to_string(lo);
  }
  if (lo == kMinInt) {
    return "an integer <= " + std::to_string(hi);
  }
  return "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
}

}  // namespace

const json::value* Find(const json::object& object, std::string_view key) {
  const json::value* value = object.if_contains(json::string_view(key.data(), key.size()));
  return value == nullptr || value->is_null() ? nullptr : value;
}

std::string Describe(const json::value& value) {
  if (const double* d = value.if_double()) {
    return FormatDouble(*d);
  }
  return TruncateUtf8(json::serialize(value), kMaxDescribeBytes);
}

ApiError Invalid(std::string_view param, std::string_view expected, const json::value& got,
                 std::string_view code) {
  ApiError error;
  error.message =
      "'" + std::string(param) + "' must be " + std::string(expected) + ", got " + Describe(got);
  error.param = std::string(param);
  error.code = std::string(code);
  return error;
}

ApiError Missing(std::string_view param) {
  ApiError error;
  error.message = "Missing required parameter: '" + std::string(param) + "'.";
  error.param = std::string(param);
  error.code = std::string(kMissing);
  return error;
}

std::optional<std::int64_t> AsInteger(const json::value& value) {
  if (const std::int64_t* i = value.if_int64()) {
    return *i;
  }
  if (const std::uint64_t* u = value.if_uint64()) {
    return *u <= static_cast<std::uint64_t>(kMaxInt) ? std::optional<std::int64_t>(*u)
                                                     : std::nullopt;
  }
  const double* d = value.if_double();
  // 2^63 is exactly representable; every double in [-2^63, 2^63) converts without overflow.
  constexpr double kTwoPow63 = 9223372036854775808.0;
  if (d == nullptr || !std::isfinite(*d) || std::trunc(*d) != *d || *d < -kTwoPow63 ||
      *d >= kTwoPow63) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(*d);
}

bool IsWholeNumber(const json::value& value) {
  const double* d = value.if_double();
  return value.is_number() && (d == nullptr || !std::isfinite(*d) || std::trunc(*d) == *d);
}

std::optional<double> AsFiniteNumber(const json::value& value) {
  if (!value.is_number()) {
    return std::nullopt;
  }
  const double d = value.to_number<double>();  // never throws for the three number kinds
  return std::isfinite(d) ? std::optional<double>(d) : std::nullopt;
}

Status ReadBool(const json::object& object, std::string_view key, bool* out,
                std::string_view param) {
  const json::value* value = Find(object, key);
  if (value == nullptr) {
    return {};
  }
  if (!value->is_bool()) {
    return Invalid(param.empty() ? key : param, "a boolean", *value, kInvalidType);
  }
  *out = value->get_bool();
  return {};
}

Status ReadString(const json::object& object, std::string_view key, std::string* out,
                  std::string_view param) {
  const json::value* value = Find(object, key);
  if (value == nullptr) {
    return {};
  }
  const json::string* text = value->if_string();
  if (text == nullptr) {
    return Invalid(param.empty() ? key : param, "a string", *value, kInvalidType);
  }
  out->assign(text->data(), text->size());
  return {};
}

Status ReadInteger(const json::object& object, std::string_view key, std::int64_t lo,
                   std::int64_t hi, std::optional<std::int64_t>* out) {
  const json::value* value = Find(object, key);
  if (value == nullptr) {
    return {};
  }
  const std::optional<std::int64_t> integer = AsInteger(*value);
  if (!integer.has_value()) {
    if (!IsWholeNumber(*value)) {
      return Invalid(key, IntegerRule(lo, hi), *value, kInvalidType);
    }
    // A whole number beyond int64 (uint64, 1e23, or 1e400 parsed as infinity).
    const bool negative = value->to_number<double>() < 0;
    return Invalid(key, negative ? IntegerRule(lo, kMaxInt) : IntegerRule(kMinInt, hi), *value,
                   kInvalidValue);
  }
  if (*integer < lo) {
    return Invalid(key, IntegerRule(lo, kMaxInt), *value, kInvalidValue);
  }
  if (*integer > hi) {
    return Invalid(key, IntegerRule(kMinInt, hi), *value, kInvalidValue);
  }
  *out = integer;
  return {};
}

Status ReadNumber(const json::object& object, std::string_view key, std::string_view expected,
                  bool (*in_range)(double), double* out) {
  const json::value* value = Find(object, key);
  if (value == nullptr) {
    return {};
  }
  if (!value->is_number()) {
    return Invalid(key, expected, *value, kInvalidType);
  }
  const std::optional<double> number = AsFiniteNumber(*value);
  if (!number.has_value() || !in_range(*number)) {
    return Invalid(key, expected, *value, kInvalidValue);
  }
  *out = *number;
  return {};
}

}  // namespace spillway::api::json_fields
