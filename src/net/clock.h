#pragma once
// The live driver's clock: seconds since the process started, from std::chrono::steady_clock.
// Only the network runtime reads the real clock; the core is handed `now`.

#include <chrono>

#include "core/types.h"

namespace spillway::net {

class SteadyClock {
 public:
  SteadyClock() : start_(std::chrono::steady_clock::now()) {}
  /// Seconds since construction.
  Seconds Now() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  /// The steady_clock time point of `t` (seconds since construction), for Asio timers.
  std::chrono::steady_clock::time_point At(Seconds t) const {
    return start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                        std::chrono::duration<double>(t));
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace spillway::net
