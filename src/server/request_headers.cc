#include "server/request_headers.h"

#include <fmt/format.h>

#include <charconv>

#include "api/openai_types.h"
#include "core/fairness_id.h"

namespace spillway::server {

std::optional<std::int32_t> EmulatedOutputTokens(const net::Request& request) {
  const std::size_t given = request.count(api::kEmulatedOutputTokensHeader);
  if (given == 0) {
    return 0;
  }
  const auto h = request[api::kEmulatedOutputTokensHeader];
  std::int32_t v = 0;
  const auto [end, ec] = std::from_chars(h.data(), h.data() + h.size(), v);
  if (given > 1 || h.empty() || ec != std::errc{} || end != h.data() + h.size() || v < 1 ||
      v > (1 << 24)) {
    return std::nullopt;
  }
  return v;
}

std::optional<std::string> FairnessId(const net::Request& request) {
  const std::size_t given = request.count(api::kFairnessIdHeader);
  if (given == 0) {
    return std::string();
  }
  const auto h = request[api::kFairnessIdHeader];
  const std::string_view id(h.data(), h.size());
  if (given > 1 || !ValidFairnessId(id)) {
    return std::nullopt;
  }
  return std::string(id);
}

std::string InvalidFairnessIdMessage() {
  return fmt::format(
      "{} must be given once, as 1 to {} printable ASCII characters (the request's flow for "
      "fair shedding).",
      api::kFairnessIdHeader, kMaxFairnessIdBytes);
}

}  // namespace spillway::server
