#pragma once
// How often the simulator checks an engine's invariants (SimOptions::invariant_checks): after
// every step, amortized so a check costs O(1) per step on average, or never.

#include <cstdint>
#include <string>

#include "engine/engine.h"
#include "sim/simulator.h"

namespace spillway {

class InvariantChecker {
 public:
  explicit InvariantChecker(InvariantChecks mode) : mode_(mode) {}

  /// Called after each step of `engine`: empty, or what is broken when this call checked.
  std::string AfterStep(const Engine& engine);

 private:
  InvariantChecks mode_;
  std::int64_t skipped_ = 0;
};

}  // namespace spillway
