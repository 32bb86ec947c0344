#pragma once
// A fake engine loop for scheduler tests: owns a BlockManager and a Scheduler, plays the
// executor (one token id per sampling sequence), advances a virtual clock by a fixed step
// duration, and records every plan, token event and finished request. No clocks, no sleeps.

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "executor/step_plan.h"
#include "kv/block_manager.h"
#include "sched/request.h"
#include "sched/scheduler.h"

namespace spillway {

// Readable gtest output for the scheduler's enums ("kPreempted" rather than a byte dump).
inline void PrintTo(RequestState state, std::ostream* os) { *os << ToString(state); }
inline void PrintTo(FinishReason reason, std::ostream* os) { *os << ToString(reason); }

}  // namespace spillway

namespace spillway::testing_util {

inline RequestSpec Spec(RequestId id, std::int32_t prompt, std::int32_t max_output,
                        Seconds arrival = 0, std::int32_t priority = 0, Seconds deadline = kNever) {
  RequestSpec s;
  s.id = id;
  s.prompt_tokens = prompt;
  s.max_output_tokens = max_output;
  s.arrival_s = arrival;
  s.priority = priority;
  s.deadline_s = deadline;
  return s;
}

/// The token id the fake executor samples for the `index`-th output of request `id`.
inline std::int32_t FakeToken(RequestId id, std::int32_t index) {
  return static_cast<std::int32_t>(id * 1000 + static_cast<RequestId>(index));
}

class FakeEngine {
 public:
  FakeEngine(SchedulerConfig config, std::int32_t num_blocks, std::int32_t block_size,
             Seconds step_s = 1.0, bool prefix_caching = false)
      : blocks_(num_blocks, block_size, prefix_caching),
        sched_(config, &blocks_),
        step_s_(step_s) {}

  Scheduler& sched() { return sched_; }
  BlockManager& blocks() { return blocks_; }
  Seconds now() const { return now_; }
  void set_now(Seconds now) { now_ = now; }
  void Advance(Seconds dt) { now_ += dt; }

  void Submit(const RequestSpec& spec) { sched_.Submit(spec); }

  /// Step at the current time; records finished requests. Returns a copy of the plan.
  StepPlan Step() {
    StepEvents ev;
    const StepPlan& plan = sched_.Step(now_, &ev);
    Record(ev);
    last_step_finished_ = ev.finished;
    last_plan_ = plan;
    plans_.push_back(plan);
    plan_times_.push_back(now_);
    CheckInvariants("after Step");
    return last_plan_;
  }

  /// Completes the last plan: the clock advances by the step duration, then OnStepDone.
  void Done() {
    StepResult result;
    result.duration_s = step_s_;
    for (const ScheduledSeq& s : last_plan_.seqs) {
      if (s.samples_token) {
        const Request* r = sched_.Find(s.id);
        const std::int32_t index = r == nullptr ? -1 : r->num_output_tokens;
        result.token_ids.push_back(FakeToken(s.id, index));
      }
    }
    now_ += step_s_;
    StepEvents ev;
    sched_.OnStepDone(result, now_, &ev);
    Record(ev);
    last_done_finished_ = ev.finished;
    last_done_tokens_ = ev.tokens;
    CheckInvariants("after OnStepDone");
  }

  /// One full iteration; an empty plan still advances the clock by the step duration.
  StepPlan RunStep() {
    StepPlan plan = Step();
    Done();
    return plan;
  }

  /// Runs until the engine is idle (or `max_steps`); returns the number of steps run.
  int RunUntilIdle(int max_steps = 100000) {
    int n = 0;
    while (!sched_.idle() && n < max_steps) {
      RunStep();
      ++n;
    }
    EXPECT_TRUE(sched_.idle()) << "engine did not drain in " << max_steps << " steps";
    return n;
  }

  /// Runs steps until `id` has finished (or `max_steps`).
  void RunUntilFinished(RequestId id, int max_steps = 10000) {
    for (int n = 0; n < max_steps && !IsFinished(id); ++n) {
      RunStep();
    }
    EXPECT_TRUE(IsFinished(id)) << "request " << id << " did not finish";
  }

  bool IsFinished(RequestId id) const { return finished_.count(id) != 0; }
  const Request& Finished(RequestId id) const {
    static const Request kMissing;
    const auto it = finished_.find(id);
    EXPECT_NE(it, finished_.end()) << "request " << id << " has not finished";
    return it == finished_.end() ? kMissing : it->second;
  }
  const std::map<RequestId, Request>& finished() const { return finished_; }
  const std::vector<TokenEvent>& tokens() const { return tokens_; }
  std::vector<TokenEvent> TokensOf(RequestId id) const {
    std::vector<TokenEvent> out;
    for (const TokenEvent& t : tokens_) {
      if (t.id == id) {
        out.push_back(t);
      }
    }
    return out;
  }
  const std::vector<StepPlan>& plans() const { return plans_; }
  const std::vector<Seconds>& plan_times() const { return plan_times_; }
  const StepPlan& last_plan() const { return last_plan_; }
  const std::vector<Request>& last_step_finished() const { return last_step_finished_; }
  const std::vector<Request>& last_done_finished() const { return last_done_finished_; }
  const std::vector<TokenEvent>& last_done_tokens() const { return last_done_tokens_; }

  /// True when `id` appears in any plan so far.
  bool EverPlanned(RequestId id) const {
    for (const StepPlan& p : plans_) {
      for (const ScheduledSeq& s : p.seqs) {
        if (s.id == id) {
          return true;
        }
      }
    }
    return false;
  }

  /// The live request `id`; a test failure (and a blank request) when it has left the engine.
  const Request& Live(RequestId id) const {
    static const Request kMissing;
    const Request* r = sched_.Find(id);
    EXPECT_NE(r, nullptr) << "request " << id << " is not live";
    return r == nullptr ? kMissing : *r;
  }

  /// Request state, or kFinished when it has left the engine.
  RequestState StateOf(RequestId id) const {
    const Request* r = sched_.Find(id);
    return r == nullptr ? RequestState::kFinished : r->state;
  }

 private:
  void Record(const StepEvents& ev) {
    for (const TokenEvent& t : ev.tokens) {
      tokens_.push_back(t);
    }
    for (const Request& r : ev.finished) {
      const bool first = finished_.emplace(r.spec.id, r).second;
      EXPECT_TRUE(first) << "request " << r.spec.id << " finished twice";
    }
  }

  void CheckInvariants(const char* where) {
    std::string err;
    EXPECT_TRUE(sched_.CheckInvariants(&err)) << where << " at t=" << now_ << ": " << err;
  }

  BlockManager blocks_;
  Scheduler sched_;
  Seconds step_s_;
  Seconds now_ = 0;
  StepPlan last_plan_;
  std::vector<StepPlan> plans_;
  std::vector<Seconds> plan_times_;
  std::map<RequestId, Request> finished_;
  std::vector<TokenEvent> tokens_;
  std::vector<Request> last_step_finished_;
  std::vector<Request> last_done_finished_;
  std::vector<TokenEvent> last_done_tokens_;
};

/// A scheduler configuration with the given batch limits (vLLM's defaults otherwise).
inline SchedulerConfig Config(std::int32_t max_num_seqs = 256, std::int32_t max_batched = 2048,
                              bool chunked = true) {
  SchedulerConfig c;
  c.max_num_seqs = max_num_seqs;
  c.max_num_batched_tokens = max_batched;
  c.enable_chunked_prefill = chunked;
  return c;
}

/// Finds `id` in `plan`, or nullptr.
inline const ScheduledSeq* FindSeq(const StepPlan& plan, RequestId id) {
  for (const ScheduledSeq& s : plan.seqs) {
    if (s.id == id) {
      return &s;
    }
  }
  return nullptr;
}

/// The ids of `plan`'s sequences, in plan order.
inline std::vector<RequestId> Ids(const StepPlan& plan) {
  std::vector<RequestId> ids;
  for (const ScheduledSeq& s : plan.seqs) {
    ids.push_back(s.id);
  }
  return ids;
}

}  // namespace spillway::testing_util
