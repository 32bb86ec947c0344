#pragma once
// EmulatedExecutor: an Executor that runs no model. It returns each step's duration from the
// roofline CostModel and deterministic placeholder tokens. It is an emulator: latencies are
// modelled, not measured on a GPU, and the text it produces is meaningless.

#include <string>
#include <string_view>

#include "executor/cost_model.h"
#include "executor/executor.h"

namespace spillway {

/// The engine a run on this executor names (a policy's engine.version, a capacity run's
/// "engine"): no GPU, a roofline cost model paces each iteration.
inline constexpr std::string_view kEmulatedEngineName = "spillway emulated executor";

class EmulatedExecutor final : public Executor {
 public:
  explicit EmulatedExecutor(Profile profile);

  StepResult Run(const StepPlan& plan) override;
  std::string_view name() const override { return name_; }
  bool is_emulated() const override { return true; }

  const CostModel& cost_model() const { return cost_; }

  /// The placeholder token at `position` (0-based, in the whole sequence: prompt then output)
  /// of request `id`; deterministic, so a recompute after preemption samples the same token.
  static std::int32_t PlaceholderToken(RequestId id, std::int64_t position);

  /// Size of the placeholder vocabulary: token ids are in [0, kVocabSize).
  static constexpr std::int32_t kVocabSize = 32000;

 private:
  CostModel cost_;
  std::string name_;
};

}  // namespace spillway
