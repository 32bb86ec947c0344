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
#include <unordered_map>
#include <unordered_set>
#include <vector>

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
  /// Its flow for fair shedding (admission/fair_share.h): the x-gateway-inference-fairness-id
  /// header live, the scenario class's fairness_id in the simulator; empty: the tenant.
  std::string_view fairness_id = {};
  /// Its prompt's shared segments for prefix caching (sched/request.h); null: all its own.
  std::shared_ptr<const PromptSegments> prompt_segments;
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
  /// step times x the measured pace (live steps run slower than modelled on a busy machine;
  /// 1 in the simulator), the step in flight first, at its own end and the server's request
  /// deadline (AdmissionConfig::request_deadline_s) aborting what is still live then. Where output
  /// lengths are unknown (no ignore_eos), each live request stops at a length drawn from
  /// those admission has learned for requests like it, longer than what it has generated:
  /// the mean over kForecastFutures such futures (drawn deterministically from the state).
  /// With mean lengths instead, every request past its mean was expected to stop at once:
  /// forecasts of "next step" came true after 0.14 s on average (seed-burst-eos-varied).
  /// kNever when `id` is not waiting, or one future gives it no token within `horizon_s`
  /// (or before its deadline). Const: the engine is untouched.
  /// O(futures x (steps x batch + live requests)).
  Seconds PredictFirstToken(RequestId id, Seconds now, Seconds horizon_s) const;

  /// When `request` would see its first token, seconds after `now`, if it were admitted now
  /// (queued in its order, its max_tokens as asked): PredictFirstToken for a probe submitted
  /// to the copy, with the requests of more urgent classes expected to arrive meanwhile
  /// (AdmissionController::UrgentClassRates; none under FCFS). kNever when not within
  /// `horizon_s`. The forecast policy's question
  /// (admission.h, TtftForecastFn). Const.
  Seconds ForecastFirstToken(const EngineRequest& request, Seconds now, Seconds horizon_s) const;

  /// What the engine exports for a gateway under the forecast policy (the
  /// spillway_ttft_forecast_queue_seconds gauge; routing/endpoint_state.h reads it): seconds
  /// from `now` until a new request of the mean admitted shape would start its prefill, i.e.
  /// its ForecastFirstToken minus its prefill alone (admission's PrefillEstimate), at least 0.
  /// Forecast to twice the TTFT SLO: a queue longer than that reads as that (late either way).
  /// -1 under other policies or before any request was admitted (nothing to forecast with).
  Seconds QueueForecast(Seconds now) const;

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

  /// Retry-After for a request dropped at the queue head at `now`, seconds, >= 1. Under the
  /// forecast policy, when a request of the mean admitted shape would be forecast to meet the
  /// TTFT SLO again (QueueForecast plus its prefill minus the SLO); else, or when that forecast
  /// reaches past twice the SLO, ceil(W_est) (1 while W_est is unknown).
  Seconds DropRetryAfter(Seconds now) const;
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
  /// Steps `what_if` (a copy of scheduler_ over a copy of blocks_, expected outputs set) from
  /// `now` until `id` sees its first token: seconds after `now`, or kNever. Before each step,
  /// the requests of the `overtakers` classes expected by then arrive (their admission rate
  /// x the time since now, each of the mean admitted size), and queue by the scheduler's
  /// order: under priority scheduling, those that overtake `id`.
  Seconds StepToFirstToken(Scheduler* what_if, RequestId id, Seconds now, Seconds horizon_s,
                           const std::vector<ClassRateEstimate>& overtakers = {}) const;
  /// Sets every live request of `what_if` to stop where future number `future` draws: one of
  /// the output lengths admission has learned for requests like it that are longer than what
  /// it has generated (OutputLengths::SampleBeyond); its max_tokens under ignore_eos or
  /// before anything is learned. False when no length was drawn (every future is the same).
  bool DrawOutputs(Scheduler* what_if, std::uint64_t future) const;
  /// The mean over up to kForecastFutures futures (DrawOutputs) of the time until `id` sees
  /// its first token, each a copy of the scheduler and blocks stepped forward with `probe`
  /// (when not null) submitted; kNever when one is not within `horizon_s`.
  Seconds MeanOverFutures(const RequestSpec* probe, RequestId id, Seconds now, Seconds horizon_s,
                          const std::vector<ClassRateEstimate>& overtakers) const;
  /// Forecast errors: the first tokens and queue-head drops of the requests admitted with a
  /// forecast, fed to admission (AdmissionController::OnForecastObserved).
  void ObserveForecasts(Seconds now);

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
  bool began_ = false;      // a step has begun (begin_s_, account_ hold the last one)
  /// Measured step cycle / modelled step time, exponentially weighted (kPaceWeight per
  /// saturated step): a forecast's steps take this much longer than modelled. 1 in virtual
  /// time; live, the machine's contention and the driver's work between steps.
  double pace_ = 1.0;
  static constexpr double kPaceWeight = 0.05;
  /// At the start of a step: updates pace_ from the last step's real cycle when the engine
  /// was saturated (it began this step as soon as the last ended).
  void MeasurePace(Seconds now);
  bool in_flight_ = false;
  std::unordered_set<RequestId> gone_;
  std::unordered_set<RequestId> deadline_aborts_;  // AbortAtDeadline ids, until they finish
  struct Forecast {
    Seconds arrival_s = 0;
    Seconds ttft_s = 0;
    std::int32_t priority = 0;
    std::int32_t prompt_tokens = 0;  ///< to prefill, as admission saw it
  };
  /// Requests admitted with a finite forecast, until their first token or their end.
  std::unordered_map<RequestId, Forecast> forecasts_;
  /// Under fair shedding, each live request's flow (its fairness ID, else its tenant): a
  /// failure at the request deadline is told to admission (OnFlowFailed).
  std::unordered_map<RequestId, std::string> flows_;
  /// Forecasts made since the engine last changed (a step, an admission, an abort) at one
  /// time `now`, by prompt length, max_tokens and class: in a burst, the arrivals refused between
  /// two steps ask the same question (1,000 at once ask it three times, once per shape). Cleared on
  /// every change; at most kMaxForecastMemo entries.
  struct ForecastMemo {
    std::int32_t prompt_tokens = 0;
    std::int32_t max_tokens = 0;
    std::int32_t priority = 0;
    std::shared_ptr<const PromptSegments> prompt_segments;  // held: its address stays unique
    Seconds horizon_s = 0;
    Seconds forecast_s = 0;
  };
  static constexpr std::size_t kMaxForecastMemo = 64;
  /// Futures a forecast averages when lengths are drawn: p95 error 0.31 s with one, 0.25 s
  /// with four, 0.24 s with eight on seed-burst-eos-varied (goodput in the burst 15.22, 15.27,
  /// 15.43 req/s; predictive 15.42).
  static constexpr std::uint64_t kForecastFutures = 8;
  std::vector<ForecastMemo> forecast_memo_;
  Seconds forecast_memo_now_ = -1;
  /// ForecastFirstToken through forecast_memo_.
  Seconds MemoForecast(const EngineRequest& request, Seconds now, Seconds horizon_s);
  /// The prompt of a request of the mean admitted shape (QueueForecast, DropRetryAfter), >= 1.
  std::int32_t TypicalPromptTokens() const;
  /// Prompt tokens of `request` (to be numbered `id`) the prefix cache holds now.
  std::int64_t CachedPromptTokens(RequestId id, const EngineRequest& request) const;
};

}  // namespace spillway
