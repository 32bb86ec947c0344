#pragma once
// One inference engine: the KV block manager, the iteration scheduler, the executor and the
// admission controller, and the step protocol that turns them into an engine. The simulator
// (sim/) drives it in virtual time, the server (server/) on a real clock; both call exactly
// this code, so a decision made here is one the simulator predicts.
//
// Protocol, per iteration:
//   plan = BeginStep(now)   Step(now) (aborts applied, expired requests dropped at the queue
//                           head, batch planned), then the executor runs a non-empty plan;
//                           events() holds the requests Step finished. The driver waits
//                           step().duration_s (virtual or real time) ...
//   EndStep(end)            ... then OnStepDone at `end`: events() holds the step's tokens and
//                           the requests it finished; the measured step feeds the service-rate
//                           estimator.
// Offer() decides admission for an arriving request and enqueues it when admitted;
// ClientGone()/Abort()/FinishStop() end requests at the next BeginStep.
//
// Invariants: a request id is live from an admitting Offer until it appears in
// events().finished; the gone set holds live ids and those finished in the current events().
// Not thread-safe; no clock (now is an argument), no I/O.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>

#include "admission/admission.h"
#include "engine/engine_config.h"
#include "executor/cost_model.h"
#include "executor/executor.h"
#include "kv/block_manager.h"
#include "sched/scheduler.h"

namespace spillway {

/// An arriving request, as admission sees it.
struct EngineRequest {
  std::string_view tenant = "default";
  std::int32_t prompt_tokens = 0;
  std::int32_t max_tokens = 0;  ///< as the client asked (admission may clamp it)
  std::int32_t priority = 0;    ///< lower is more urgent
  /// vLLM's ignore_eos: generate exactly max_tokens (admission then knows the length).
  bool ignore_eos = false;
  /// Emulator only, never read by admission: the output token at which the emulated model
  /// samples EOS (finish reason stop); 0 = never, max_tokens ends it. Ignored under
  /// ignore_eos. From a scenario's hidden length, or live from the emulator-only header
  /// X-Spillway-Emulated-Output-Tokens (docs/serve.md).
  std::int32_t emulated_output_tokens = 0;
};

/// The accounting of the step BeginStep planned.
struct StepAccount {
  Seconds duration_s = 0;           ///< the executor's duration for the plan
  Seconds wasted_s = 0;             ///< share of it spent on sequences whose client has gone
  std::int32_t prefill_tokens = 0;  ///< prompt tokens computed (chunks and recomputes)
  std::int32_t decode_tokens = 0;
  std::int32_t sampled_tokens = 0;  ///< output tokens the step samples
};

class Engine {
 public:
  /// `executor` runs the plans (null: an EmulatedExecutor over config.profile). `now` starts
  /// the tenants' token buckets.
  Engine(EngineConfig config, Seconds now, std::unique_ptr<Executor> executor = nullptr);

  /// Admission for `request` at `now`: CheckFits, then draining, the tenant's bucket and the
  /// policy against the queue ahead of it; when admitted, enqueues it as `id` (unique among
  /// live requests) with the decision's max_tokens and queue-ingress deadline.
  AdmissionDecision Offer(RequestId id, const EngineRequest& request, Seconds now);

  /// Refuses, with 400 and no retry, what this engine can never serve as asked: prompt +
  /// max_tokens over max_model_len (context_length_exceeded) or needing more KV blocks than
  /// the whole pool (kv_capacity_exceeded; max_output_tokens says how many would fit).
  /// Admitted otherwise; spends no token of any bucket.
  AdmissionDecision CheckFits(const EngineRequest& request) const;

  /// Plans and starts the next iteration at `now` (see the protocol above). Must not be called
  /// while a step is in flight. An empty plan: nothing to run (events() may still hold drops).
  const StepPlan& BeginStep(Seconds now);
  /// Ends the step in flight at `now`. Its measured duration is now - the BeginStep time (a
  /// driver in virtual time that ends it at exactly begin + duration_s gets duration_s).
  void EndStep(Seconds now);

  /// When the waiting request `id` will see its first token, seconds after `now`, predicted by
  /// stepping a copy of the scheduler and the KV blocks forward with the profile's modelled
  /// step times (the step in flight first, at its own end), every live request generating the
  /// mean output length admission has learned for it (OutputLengths::Mean; at least one more
  /// token than it has). kNever when `id` is not waiting, or gets no token within
  /// `horizon_s`. Const: the engine is untouched. O(steps x batch + live requests).
  Seconds PredictFirstToken(RequestId id, Seconds now, Seconds horizon_s) const;

  /// Events of the last BeginStep or EndStep.
  const StepEvents& events() const { return events_; }
  /// The step in flight's (or the last step's) accounting.
  const StepAccount& step() const { return account_; }
  /// A sequence's share of that step's time, by its share of the step's tokens, seconds.
  Seconds ShareOf(const ScheduledSeq& seq) const {
    return account_.duration_s * seq.num_new_tokens /
           (account_.prefill_tokens + account_.decode_tokens);
  }
  bool step_in_flight() const { return in_flight_; }

  /// The client of `id` left: its remaining work counts as wasted; with cancellation
  /// propagation on it is aborted at the next iteration. Unknown or finished ids are ignored.
  void ClientGone(RequestId id);
  /// Aborts `id` at the next iteration whatever the cancellation setting (server deadline,
  /// slow client, shutdown); it counts as gone.
  void Abort(RequestId id);
  /// Abort() for the server's request deadline: a request that was generating when it ran out
  /// of time teaches admission that requests with its max_tokens can run that long (it counts
  /// as one that ran to its cap, OutputLengths).
  void AbortAtDeadline(RequestId id);
  /// Ends `id` with finish reason stop at the next iteration (a stop string matched by the
  /// driver); nothing more is delivered for it.
  void FinishStop(RequestId id);
  /// True when `id`'s client left, or it was aborted or stopped by the driver; stays valid for
  /// a finished request while it is in events().
  bool gone(RequestId id) const { return gone_.contains(id); }

  /// Retry-After for a request dropped at the queue head: ceil(W_est), >= 1 s (1 while W_est
  /// is unknown).
  Seconds DropRetryAfter() const;
  /// W_est for the whole queue, seconds (+inf while unknown).
  Seconds QueueDelayEstimate() const { return admission_.QueueDelayEstimate(scheduler_.stats()); }

  /// Refuses new requests with 503 draining from now on (or accepts them again).
  void SetDraining(bool draining) { admission_.SetDraining(draining); }

  EngineStats stats() const { return scheduler_.stats(); }
  bool idle() const { return scheduler_.idle(); }
  bool CheckInvariants(std::string* error) const { return scheduler_.CheckInvariants(error); }

  const EngineConfig& config() const { return config_; }
  const Scheduler& scheduler() const { return scheduler_; }
  const BlockManager& blocks() const { return blocks_; }
  const AdmissionController& admission() const { return admission_; }
  const Executor& executor() const { return *executor_; }

 private:
  /// Drops the gone marks of the requests in events() (before they are replaced).
  void ForgetFinished();

  EngineConfig config_;
  BlockManager blocks_;
  Scheduler scheduler_;
  std::unique_ptr<Executor> executor_;
  AdmissionController admission_;
  CostModel cost_model_;  // PredictFirstToken's step times
  StepEvents events_;
  StepResult result_;
  StepAccount account_;
  Seconds begin_s_ = 0;
  bool saturated_ = false;  // the step in flight was planned with a queue or a full batch
  bool in_flight_ = false;
  std::unordered_set<RequestId> gone_;
  std::unordered_set<RequestId> deadline_aborts_;  // AbortAtDeadline ids, until they finish
};

}  // namespace spillway
