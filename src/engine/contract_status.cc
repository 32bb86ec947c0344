#include "engine/contract_status.h"

#include <array>
#include <cstddef>

#include "api/overload_contract.h"

namespace spillway {

int ContractStatus(OverloadReason reason) {
  static const auto kStatus = [] {
    constexpr auto kLast = static_cast<std::size_t>(OverloadReason::kKvCapacityExceeded);
    std::array<int, kLast + 1> status{};
    status[0] = 200;  // kNone
    for (std::size_t r = 1; r <= kLast; ++r) {
      status[r] = api::StatusOf(ToString(static_cast<OverloadReason>(r)));
    }
    return status;
  }();
  return kStatus[static_cast<std::size_t>(reason)];
}

}  // namespace spillway
