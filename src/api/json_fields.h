#pragma once
// Typed readers over one parsed Boost.JSON object, used by the request parser. Each reader
// either stores the field or returns the ApiError (HTTP 400, `param`, `code`) saying what was
// expected and what was got, in the OpenAI style ("'max_tokens' must be an integer >= 1, got
// -5"). Internal to src/api; only the forward declarations of Boost.JSON are included here.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/fwd.hpp>

#include "api/openai_types.h"
#include "core/result.h"

namespace spillway::api::json_fields {

/// Ok when a reader succeeded, else the error to hand back (core/result.h).
using Status = spillway::Status<ApiError>;

/// Error codes (ApiError::code) shared by the parser's rules.
inline constexpr std::string_view kInvalidType = "invalid_type";
inline constexpr std::string_view kInvalidValue = "invalid_value";
inline constexpr std::string_view kMissing = "missing_required_parameter";

/// The member `key` of `object`, or nullptr when it is absent or JSON null: the OpenAI API
/// treats an explicit null optional parameter as omitted. Duplicate keys: the last one wins
/// (Boost.JSON keeps the last).
const boost::json::value* Find(const boost::json::object& object, std::string_view key);

/// A short rendering of `value` for error messages: JSON text (numbers in shortest form, so
/// 5.5 not 5.5E0), at most 64 bytes, cut at a UTF-8 character boundary with "..." appended.
/// The result is valid UTF-8 because Boost.JSON only parses valid UTF-8.
std::string Describe(const boost::json::value& value);

/// 400 "'<param>' must be <expected>, got <Describe(got)>" with `code`.
ApiError Invalid(std::string_view param, std::string_view expected, const boost::json::value& got,
                 std::string_view code);
/// 400 "Missing required parameter: '<param>'." (OpenAI's wording), code kMissing.
ApiError Missing(std::string_view param);

/// `value` as an integer: an int64 / uint64 JSON number, or a finite double without a
/// fraction (5.0 -> 5, 5.5 -> nullopt), within the int64 range; nullopt otherwise.
std::optional<std::int64_t> AsInteger(const boost::json::value& value);
/// True for a JSON number without a fractional part, of any size: 7, 5.0, 1e23, 2^64 - 1, and
/// 1e400 (parsed as infinity). Such a number that AsInteger rejects is out of range, not of
/// the wrong type.
bool IsWholeNumber(const boost::json::value& value);
/// `value` as a finite number; nullopt for non-numbers and for +-infinity (Boost.JSON parses
/// 1e400 to infinity).
std::optional<double> AsFiniteNumber(const boost::json::value& value);

/// Optional readers: absent or null leaves `*out` unchanged. `param` names the field in
/// errors; empty means `key`.
Status ReadBool(const boost::json::object& object, std::string_view key, bool* out,
                std::string_view param = {});
Status ReadString(const boost::json::object& object, std::string_view key, std::string* out,
                  std::string_view param = {});
/// An integer in [lo, hi]. Type errors say "an integer in [lo, hi]" (or ">= lo" / "<= hi" when
/// the other bound is the int64 limit); range errors name the violated bound.
Status ReadInteger(const boost::json::object& object, std::string_view key, std::int64_t lo,
                   std::int64_t hi, std::optional<std::int64_t>* out);
/// A finite number accepted by `in_range`, described as `expected` ("a number in [0, 2]").
Status ReadNumber(const boost::json::object& object, std::string_view key,
                  std::string_view expected, bool (*in_range)(double), double* out);

}  // namespace spillway::api::json_fields
