#include "sim/invariant_checker.h"

#include <algorithm>

namespace spillway {

std::string InvariantChecker::AfterStep(const Engine& engine) {
  switch (mode_) {
    case InvariantChecks::kOff:
      return "";
    case InvariantChecks::kAmortized: {
      // A full check costs O(live requests + blocks): run it often enough that its cost per
      // step stays about constant (every step while the engine is small).
      const Scheduler& s = engine.scheduler();
      const std::int64_t size = s.num_waiting() + s.num_running() + engine.blocks().num_total();
      if (++skipped_ < std::max<std::int64_t>(1, size / 256)) {
        return "";
      }
      skipped_ = 0;
      break;
    }
    case InvariantChecks::kEveryStep:
      break;
  }
  std::string error;
  return engine.CheckInvariants(&error) ? "" : error;
}

}  // namespace spillway
