#pragma once
// The Executor interface: runs one batch iteration. Implementations: EmulatedExecutor (a cost
// model, no GPU); a real model runner would implement the same interface.

#include <string_view>

#include "executor/step_plan.h"

namespace spillway {

class Executor {
 public:
  virtual ~Executor() = default;

  /// Runs `plan` (non-empty) and returns its duration and one token per sampling sequence.
  virtual StepResult Run(const StepPlan& plan) = 0;

  /// Short name for logs and /v1/models, e.g. "emulated:seed-a100-7b".
  virtual std::string_view name() const = 0;

  /// True when no model is executed (the duration and tokens are modelled).
  virtual bool is_emulated() const = 0;
};

}  // namespace spillway
