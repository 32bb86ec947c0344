// libFuzzer target: api::ParseCompletionRequest on /v1/completions and /v1/chat/completions
// bodies, plus the JSON field readers it is built on (api/json_fields.h).
//
// Input: byte 0 chooses the endpoint (bit 0: chat) and the limits (bit 1: tight ones, so that
// short inputs reach the "too many" branches); the rest is the body. Every outcome must be a
// request meeting the header's promises or a 400 ApiError (request_checks.h); nothing may
// throw or crash.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

#include "api/json_fields.h"
#include "core/check.h"
#include "request_checks.h"

namespace {

namespace json = boost::json;
namespace json_fields = spillway::api::json_fields;

/// Values visited per input by CheckFieldReaders: bounds the work on wide arrays.
constexpr std::size_t kMaxValuesVisited = 512;

/// The number readers agree with each other, and Describe stays short.
void CheckValue(const json::value& value) {
  const std::optional<std::int64_t> integer = json_fields::AsInteger(value);
  if (integer.has_value()) {
    SPILLWAY_CHECK(json_fields::IsWholeNumber(value));
  }
  if (const std::int64_t* i = value.if_int64()) {
    SPILLWAY_CHECK(integer == *i);
  }
  if (const std::optional<double> d = json_fields::AsFiniteNumber(value)) {
    SPILLWAY_CHECK(std::isfinite(*d));
  }
  SPILLWAY_CHECK(json_fields::Describe(value).size() <= 64 + 3);  // 64 bytes + "..."
}

/// Parses `body` as the request parser does and runs the readers on its values.
void CheckFieldReaders(std::string_view body) {
  json::parse_options options;
  options.max_depth = 64;
  json::error_code ec;
  const json::value root =
      json::parse(json::string_view(body.data(), body.size()), ec, {}, options);
  if (ec) {
    return;
  }
  std::vector<const json::value*> pending = {&root};
  for (std::size_t visited = 0; !pending.empty() && visited < kMaxValuesVisited; ++visited) {
    const json::value* value = pending.back();
    pending.pop_back();
    CheckValue(*value);
    if (const json::object* object = value->if_object()) {
      for (const auto& member : *object) {
        SPILLWAY_CHECK(json_fields::Find(*object, member.key()) != nullptr ||
                       object->at(member.key()).is_null());
        pending.push_back(&member.value());
      }
    } else if (const json::array* array = value->if_array()) {
      for (const json::value& element : *array) {
        pending.push_back(&element);
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) {
    return 0;
  }
  const auto endpoint = (data[0] & 1) != 0 ? spillway::api::Endpoint::kChatCompletions
                                           : spillway::api::Endpoint::kCompletions;
  spillway::api::RequestLimits limits;
  if ((data[0] & 2) != 0) {
    limits.max_stop_sequences = 1;
    limits.max_stop_bytes = 4;
    limits.max_prompt_token_ids = 8;
    limits.max_messages = 2;
  }
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  spillway::fuzz::ParseAndCheckRequest(body, endpoint, limits);
  CheckFieldReaders(body);
  return 0;
}
