#pragma once
// A minimal virtual-time driver of one Engine for the scheduler tests of adversarial mixes
// (tests/engine/): requests are offered at given times, steps run back to back for their
// modelled duration, and every request's outcome is kept. The simulator (sim/) does the same
// with workloads, clients and metrics; these tests need only the engine's own decisions.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "config/engine_settings.h"
#include "engine/engine.h"
#include "engine/resolve.h"

namespace spillway::enginetest {

/// Engine settings resolved as `spillway serve` resolves its flags (profiles/ of this repo).
inline EngineConfig Resolve(const config::EngineSettings& settings) {
  return ResolveEngine(settings, std::string(SPILLWAY_SOURCE_DIR) + "/profiles");
}

/// A KV pool that holds about 1.2 prompts of 16k tokens (1,200 blocks of 16 tokens) with a
/// 2,048-token budget, h100-llama3-8b: the pool of the recompute-thrash and backfill tests.
inline config::EngineSettings TightKvPool(const char* policy) {
  config::EngineSettings s;
  s.profile = "h100-llama3-8b";
  s.max_model_len = 32768;
  s.max_num_batched_tokens = 2048;
  s.num_gpu_blocks = 1200;
  s.policy = policy;
  return s;
}

/// seed-a100-7b (the lesson's reference engine) under `policy`, the rest defaults.
inline config::EngineSettings Seed(const char* policy) {
  config::EngineSettings s;
  s.profile = "seed-a100-7b";
  s.policy = policy;
  return s;
}

/// A request of `prompt_tokens` asking for `max_tokens`: exactly that many under `ignore_eos`,
/// else until the emulated model's EOS after `emulated_output_tokens` (0: none).
inline EngineRequest Ask(std::int32_t prompt_tokens, std::int32_t max_tokens, bool ignore_eos,
                         std::int32_t emulated_output_tokens = 0) {
  EngineRequest r;
  r.prompt_tokens = prompt_tokens;
  r.max_tokens = max_tokens;
  r.ignore_eos = ignore_eos;
  r.emulated_output_tokens = emulated_output_tokens;
  return r;
}

/// What became of one offered request.
struct Outcome {
  AdmissionDecision decision;  ///< at Offer
  Seconds offered_s = 0;
  Seconds first_token_s = kNever;
  Seconds finished_s = kNever;
  FinishReason finish_reason = FinishReason::kNone;  ///< kNone while live or refused
  std::int32_t num_preemptions = 0;
  std::int32_t num_displacements = 0;
  std::int64_t recomputed_tokens = 0;
  std::int32_t output_tokens = 0;  ///< generated, when finished
  Seconds ttft_s() const { return first_token_s - offered_s; }
};

class EngineDriver {
 public:
  explicit EngineDriver(EngineConfig config) : engine_(std::move(config), 0) {}

  /// Offers a request at the driver's current time; returns its id.
  RequestId Offer(std::int32_t prompt_tokens, std::int32_t max_tokens, std::int32_t priority = 0) {
    EngineRequest request;
    request.prompt_tokens = prompt_tokens;
    request.max_tokens = max_tokens;
    request.priority = priority;
    return Offer(request);
  }
  RequestId Offer(const EngineRequest& request) {
    const RequestId id = next_id_++;
    Outcome& o = outcomes_[id];
    o.offered_s = now_;
    o.decision = engine_.Offer(id, request, now_);
    return id;
  }

  /// Runs steps back to back until virtual time `until_s` (idle time jumps ahead).
  void RunUntil(Seconds until_s) {
    while (now_ < until_s) {
      const StepPlan& plan = engine_.BeginStep(now_);
      Collect();
      if (plan.empty()) {
        now_ = until_s;
        return;
      }
      now_ += engine_.step().duration_s;
      engine_.EndStep(now_);
      Collect();
      prefill_tokens_ += engine_.step().prefill_tokens;
    }
  }

  /// Runs until the engine is idle or `limit_s` passes.
  void RunToIdle(Seconds limit_s) {
    while (!engine_.idle() && now_ < limit_s) {
      RunUntil(now_ + 0.001);
    }
  }

  Seconds now() const { return now_; }
  Engine& engine() { return engine_; }
  const Outcome& outcome(RequestId id) const { return outcomes_.at(id); }
  const std::map<RequestId, Outcome>& outcomes() const { return outcomes_; }
  /// Prompt tokens computed by every step so far (recomputes included).
  std::int64_t prefill_tokens() const { return prefill_tokens_; }

 private:
  void Collect() {
    for (const TokenEvent& t : engine_.events().tokens) {
      Outcome& o = outcomes_.at(t.id);
      if (t.index == 0) {
        o.first_token_s = now_;
      }
    }
    for (const Request& r : engine_.events().finished) {
      Outcome& o = outcomes_.at(r.spec.id);
      o.finished_s = now_;
      o.finish_reason = r.finish_reason;
      o.num_preemptions = r.num_preemptions;
      o.num_displacements = r.num_displacements;
      o.recomputed_tokens = r.num_recomputed_tokens;
      o.output_tokens = r.num_output_tokens;
    }
  }

  Engine engine_;
  Seconds now_ = 0;
  RequestId next_id_ = 1;
  std::map<RequestId, Outcome> outcomes_;
  std::int64_t prefill_tokens_ = 0;
};

}  // namespace spillway::enginetest
