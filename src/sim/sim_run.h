#pragma once
// The simulator's run state, internal to src/sim/: the event types, one attempt and one logical
// request as the run tracks them, and the Sim class whose methods live in simulator.cc
// (construction, sending and retrying, the event loop) and sim_steps.cc (engine steps, finished
// requests, client timeouts, fleet faults, gauges and checks). Not for use outside src/sim/.

#include <cstdint>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <string_view>
#include <vector>

#include "admission/admission.h"
#include "core/rng.h"
#include "engine/engine.h"
#include "report/run_recorder.h"
#include "sim/gateway_front.h"
#include "sim/invariant_checker.h"
#include "sim/replica_faults.h"
#include "sim/simulator.h"
#include "workload/arrivals.h"
#include "workload/retry.h"

namespace spillway::sim_detail {

enum class EventType : std::uint8_t {
  kStepDone,
  kTtftTimeout,
  kTotalTimeout,
  kRequestDeadline,
  kRetry,
  kScrape,    // the gateway scrapes every replica's metrics
  kProbe,     // the gateway probes every replica's /ready
  kFault,     // a fleet fault (kill, drain) takes effect; target: its index
  kWaitEnds,  // a request's wait in the gateway's queue ends at the latest; target: attempt
  kTick
};

struct Event {
  Seconds t;
  std::uint64_t seq;
  EventType type;
  std::uint32_t target;  // replica, attempt or logical request, by type
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

// One HTTP attempt from the client's side; its index is the engine RequestId.
struct Attempt {
  std::uint32_t logical = 0;
  std::uint32_t replica = 0;
  Seconds sent_s = 0;
  Seconds first_token_s = kNever;
  Seconds last_token_s = kNever;
  Seconds gone_s = kNever;  // when the client left
  std::int32_t tokens = 0;
  Seconds engine_s = 0;  // this attempt's share of engine steps
  bool done = false;     // a terminal outcome was recorded
  bool completed = false;
  bool alone = false;       // the gateway sent it with nothing predicted ahead (measures prefill)
  bool at_gateway = false;  // waiting in the gateway's queue: no replica has it yet
  Seconds forwarded_s = 0;  // when the gateway sent it to its replica (after any wait)
  Seconds predicted_ttft_s = 0;  // the gateway's prediction for it there (0: none)
  // Admitted at its arrival: the engine's forward prediction of its TTFT and admission's
  // estimate (kNever: none), checked at its first token.
  Seconds engine_predicted_ttft_s = kNever;
  Seconds admission_estimated_ttft_s = kNever;
  std::string cache_key = {};  // its answer goes into the gateway's cache when it completes
  // For its record (SimOptions::on_record): which attempt of its request it is, the forecast
  // it was admitted on (X-Spillway-Ttft-Forecast live; kNever: none) and whether it was
  // admitted degraded (max_tokens clamped).
  std::int32_t attempt = 1;
  Seconds ttft_forecast_s = kNever;
  bool degraded = false;
};

struct Logical {
  std::uint32_t arrival = 0;  // index into arrivals
  std::int32_t attempts = 0;
};

class Sim {
 public:
  Sim(const Scenario& sc, const RunConfig& rc, const SimOptions& opt);
  RunSummary Run();

 private:
  void Push(Seconds t, EventType type, std::uint32_t target) {
    heap_.push(Event{t, next_seq_++, type, target});
  }
  /// The scenario class of an arrival or attempt (empty for trace records).
  std::string_view ClassName(const Arrival& a) const {
    return a.class_index >= 0 ? std::string_view(sc_.classes[a.class_index].name)
                              : std::string_view();
  }
  std::string_view ClassOf(const Attempt& a) const {
    return ClassName(arrivals_[logical_[a.logical].arrival]);
  }
  void SendAttempt(std::uint32_t logical, Seconds now);
  /// Replica `to`'s answer to attempt `id` sent by the gateway at `now`: unreachable when
  /// dead, 503 draining, else its admission (`*d`).
  GatewayFront::TryReplica TryReplicaFor(std::uint32_t id, const EngineRequest& request,
                                         Seconds now, AdmissionDecision* d);
  /// The client's timeouts and the server's deadline of attempt `id`, sent at `sent_s`.
  void ArmTimeouts(std::uint32_t id, Seconds sent_s);
  EngineRequest RequestOf(std::uint32_t logical) const;
  /// Sends what can leave the gateway's queue at `now`, until the next must keep waiting.
  void DispatchWaiting(Seconds now);
  /// Attempt `id` left the gateway's queue refused: expired (429 queue_deadline_exceeded,
  /// counted as admitted by the gateway and dropped at its queue head, as the load generator
  /// counts that answer) or another refusal.
  void RefusedFromQueue(std::uint32_t id, const GatewayFront::Dispatched& d, Seconds now);
  /// A refusal at the door by replica `r`'s admission (or by the shared door in front of it).
  /// `queue`: the replica whose queue its Retry-After is checked against (kAnyQueue: the pool).
  /// `sent_s`: when the attempt was sent (before `now` when it waited in the gateway's queue).
  void OnRejected(std::uint32_t logical, std::int32_t queue, Seconds now, int status,
                  std::string_view reason, Seconds retry_after_s, Seconds sent_s);
  void MaybeRetry(std::uint32_t logical, Seconds now, Seconds retry_after_s);
  void StartStep(std::uint32_t r, Seconds now);
  void OnStepDone(std::uint32_t r, Seconds now);
  void HandleFinished(std::uint32_t r, Seconds now);
  /// The client of `attempt` leaves: `why` is "ttft_timeout" or "total_timeout".
  void Abandon(std::uint32_t attempt, Seconds now, std::string_view why);
  /// The server's request deadline passed before the answer was complete: 504, aborted.
  void TimeOut(std::uint32_t attempt, Seconds now);
  /// Attempt `id` ends while waiting in the gateway's queue (its client left: kAbandoned; the
  /// server's deadline: kFailed).
  void EndWhileWaiting(std::uint32_t id, Seconds now, RequestOutcome::Kind kind,
                       std::string_view why);
  // The per-attempt records (sim_records.cc), built only when SimOptions::on_record is set.
  bool recording() const { return static_cast<bool>(opt_.on_record); }
  /// What every record of attempt `attempt` of logical request `logical` shares.
  AttemptRecord RecordOf(std::uint32_t logical, std::int32_t attempt, Seconds sent_s) const;
  /// Attempt `id` (admitted, or waiting at the gateway) ended at `now` as `outcome`.
  void RecordEnd(std::uint32_t id, Seconds now, AttemptOutcome outcome, int status,
                 std::string_view reason, Seconds retry_after_s = 0);
  /// A refusal at the door (or from the gateway's queue) of logical request `logical`.
  void RecordRefusal(std::uint32_t logical, Seconds sent_s, Seconds now, int status,
                     std::string_view reason, Seconds retry_after_s);
  void Tick(std::int64_t second);
  /// The least-loaded replica of the first pool that is up; nullopt when none is.
  std::optional<std::uint32_t> PickReplica() const;
  void ApplyFault(const FleetFault& fault, Seconds now);
  /// Replica `r` dies: its unfinished attempts fail (their streams break), it takes no work.
  void Kill(std::uint32_t r, Seconds now);
  /// A draining replica whose work is done exits.
  void MaybeExit(std::uint32_t r);
  void Check(const Engine& engine);
  /// The gateway's view of how attempt `id` ended (no-op without a gateway).
  void EndAtGateway(std::uint32_t id, Seconds now, GatewayFront::Ending ending) {
    if (gateway_.has_value()) {
      gateway_->OnEnded(attempts_[id].replica, now, ending);
    }
  }
  /// Throws SimInvariantError when the gateway's ledger does not balance.
  void CheckLedger(bool at_end) const;
  /// The model that served attempt `a` (empty with one pool: nothing to tell apart).
  /// The exact-result cache's key of an arrival (every one asks the first pool's model): its
  /// tenant and prompt; empty for a prompt no other arrival asks.
  static std::string CacheKey(const Arrival& a) {
    return a.prompt_id == 0 ? std::string()
                            : std::string(a.tenant) + '\n' + std::to_string(a.prompt_id);
  }
  /// The model of the first pool, as ServedModel names it (empty with one pool).
  std::string_view FirstModel() const { return pools_.size() < 2 ? "" : pools_.front().model; }
  std::string_view ServedModel(const Attempt& a) const {
    if (pools_.size() < 2) {
      return {};
    }
    return pools_[static_cast<std::size_t>(replica_pool_[a.replica])].model;
  }

  const Scenario& sc_;
  const RunConfig& rc_;
  SimOptions opt_;
  Rng rng_;
  std::vector<Arrival> arrivals_;
  std::vector<Logical> logical_;
  std::vector<Attempt> attempts_;
  std::vector<std::unique_ptr<Engine>> replicas_;
  AdmissionController door_;  // the tenants' token buckets, shared by all replicas
  RunRecorder recorder_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> heap_;
  std::uint64_t next_seq_ = 0;
  std::int32_t periodic_ = 0;  // ticks and scrapes in the heap: they never keep the run going
  RetryPlanner retry_;
  std::optional<GatewayFront> gateway_;
  Seconds last_event_s_ = 0;
  InvariantChecker checker_;
  ReplicaFaults faults_;
  std::vector<SimPool> pools_;              // one, or SimOptions::pools
  std::vector<std::int32_t> replica_pool_;  // replica -> its pool
};

/// The replicas of a run: SimOptions::replicas, or the sum of its pools'.
std::int32_t ReplicasOf(const SimOptions& opt);
/// The door in front of the replicas: the tenants' token buckets only.
AdmissionConfig DoorConfig(const AdmissionConfig& a);

}  // namespace spillway::sim_detail
