#include "server/api_keys.h"

#include <algorithm>

#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "server/refusal_replies.h"

namespace spillway::server {
namespace {

bool IsBearer(std::string_view value) {
  constexpr std::string_view kScheme = "bearer";
  if (value.size() <= kScheme.size() || value[kScheme.size()] != ' ') {
    return false;
  }
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(value[i])) != kScheme[i]) {
      return false;
    }
  }
  return true;
}

// One or more spaces separate the scheme from the token; trailing blanks are not part of it.
std::string_view BearerToken(std::string_view value) {
  const std::size_t start = value.find_first_not_of(' ', 6);
  if (start == std::string_view::npos) {
    return {};
  }
  value.remove_prefix(start);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) {
    value.remove_suffix(1);
  }
  return value;
}

}  // namespace

const ApiKey* FindApiKey(const std::map<std::string, ApiKey>& keys,
                         std::string_view authorization) {
  static const ApiKey kNoKeys{"default", 0, 1, 0};
  if (keys.empty()) {
    return &kNoKeys;
  }
  const auto it =
      IsBearer(authorization) ? keys.find(std::string(BearerToken(authorization))) : keys.end();
  return it == keys.end() ? nullptr : &it->second;
}

std::map<std::string, TenantLimit, std::less<>> TenantLimitsOf(
    const std::map<std::string, ApiKey>& keys) {
  std::map<std::string, TenantLimit, std::less<>> tenants;
  for (const auto& [key, k] : keys) {
    if (k.rate_rps > 0 && tenants.count(k.tenant) == 0) {
      tenants[k.tenant] = TenantLimit{k.rate_rps, k.burst};
    }
  }
  return tenants;
}

api::ApiError Unauthorized() {
  return Error(401, "Missing or unknown API key (Authorization: Bearer).", "authentication_error",
               "invalid_api_key");
}

std::optional<std::int32_t> ParsePriorityClass(std::string_view h) {
  std::int32_t v = 0;
  const auto [end, ec] = std::from_chars(h.data(), h.data() + h.size(), v);
  if (h.empty() || ec != std::errc{} || end != h.data() + h.size() || v < 0 ||
      v > kMaxPriorityClass) {
    return std::nullopt;
  }
  return v;
}

std::optional<std::int32_t> PriorityFor(const ApiKey& key, std::string_view header) {
  if (header.empty()) {
    return key.max_priority;
  }
  const std::optional<std::int32_t> asked = ParsePriorityClass(header);
  if (!asked.has_value()) {
    return std::nullopt;
  }
  return std::max(*asked, key.max_priority);
}

api::ApiError InvalidPriority() {
  return Error(400,
               fmt::format("X-Priority-Class must be given once, as an integer in [0, {}].",
                           kMaxPriorityClass),
               "invalid_request_error", "invalid_priority");
}

AdmissionConfig TenantDoorConfig(const std::map<std::string, ApiKey>& keys) {
  AdmissionConfig door;
  door.policy = AdmissionPolicy::kUnbounded;  // buckets only: what is behind decides the rest
  door.tenants = TenantLimitsOf(keys);
  return door;
}

}  // namespace spillway::server
