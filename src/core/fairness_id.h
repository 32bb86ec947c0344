#pragma once
// Which fairness IDs are valid (a request's flow for fair shedding, admission/fair_share.h):
// the server's x-gateway-inference-fairness-id header (400 invalid_fairness_id otherwise) and
// a scenario class's `fairness_id`, which `spillway bench` sends as that header.

#include <cstddef>
#include <string_view>

namespace spillway {

inline constexpr std::size_t kMaxFairnessIdBytes = 256;

/// True for 1 to kMaxFairnessIdBytes printable ASCII bytes.
inline bool ValidFairnessId(std::string_view id) {
  for (const char c : id) {
    if (c < 0x20 || c >= 0x7f) {
      return false;
    }
  }
  return !id.empty() && id.size() <= kMaxFairnessIdBytes;
}

}  // namespace spillway
