#include "executor/emulated_executor.h"

namespace spillway {

EmulatedExecutor::EmulatedExecutor(Profile profile)
    : cost_(std::move(profile)), name_("emulated:" + cost_.profile().name) {}

std::int32_t EmulatedExecutor::PlaceholderToken(RequestId id, std::int64_t position) {
  // A fixed mix of id and position (splitmix64 finaliser): reproducible across runs.
  std::uint64_t x = id * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(position);
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  x ^= x >> 31;
  return static_cast<std::int32_t>(x % kVocabSize);
}

StepResult EmulatedExecutor::Run(const StepPlan& plan) {
  StepResult result;
  result.duration_s = cost_.StepTime(plan);
  for (const ScheduledSeq& s : plan.seqs) {
    if (s.samples_token) {
      result.token_ids.push_back(PlaceholderToken(s.id, s.num_context_tokens + s.num_new_tokens));
    }
  }
  return result;
}

}  // namespace spillway
