#pragma once
// The gateway in front of the simulator's replicas (SimOptions::gateway): one routing core
// routing::Pool per model pool, the object the live gateway drives (gateway/endpoint_pool.h),
// and the ledger of every request it received. Forward runs the live gateway's send-and-retry
// loop (gateway/pool_attempts.cc) against the replicas' immediate answers, and its cascade
// (routing/cascade.h): every request asks for the first pool's model and is offered to the
// stages of its cascade in turn (the pool as asked, with max_tokens clamped, the fallbacks).
// Scrapes and probes arrive as the simulator's events. Replicas are numbered across the pools in
// order. No clock, no I/O.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.h"
#include "engine/engine_config.h"
#include "routing/cascade.h"
#include "routing/pool.h"

namespace spillway {

struct SimGateway;
struct SimPool;

class GatewayFront {
 public:
  /// One endpoint per replica of each pool, starting from its engine's own estimator priors
  /// (`run`: the engine of the pools that give none).
  GatewayFront(const SimGateway& config, const std::vector<SimPool>& pools,
               const EngineConfig& run);

  /// What a replica did with a request the gateway sent it.
  struct Answer {
    enum class Kind : std::uint8_t { kAccepted, kRefused, kUnreachable };
    Kind kind = Kind::kAccepted;
    int status = 0;  ///< kRefused: the replica's status, reason and Retry-After
    std::string_view reason;
    Seconds retry_after_s = 0;
  };
  /// Sends the request to `replica`, with max_tokens clamped to `clamp_max_tokens` when > 0.
  using TryReplica = std::function<Answer(std::uint32_t replica, std::int32_t clamp_max_tokens)>;

  /// How the gateway answered a request: sent to `replica` (accepted there), or refused with
  /// `status`, `reason` and `retry_after_s` (its own refusal, or the replica's passed on).
  struct Outcome {
    bool forwarded = false;
    bool queued = false;        ///< waiting in the gateway's queue until DispatchNext
    Seconds expires_s = 0;      ///< queued: when its wait ends at the latest
    bool by_gateway = false;    ///< refused by the gateway itself (not a replica's refusal)
    bool shed = false;          ///< by_gateway's router or queue before any send (else a failure)
    std::uint32_t replica = 0;  ///< forwarded: where it runs; refused: the last one tried
    std::int32_t pool = 0;      ///< the pool of `replica` (> 0: sent on by the cascade)
    bool alone = false;         ///< sent with nothing predicted ahead: its TTFT measures prefill
    Seconds predicted_ttft_s = 0;         ///< forwarded: the gateway's TTFT prediction there
    std::int32_t clamped_max_tokens = 0;  ///< forwarded: > 0 when sent with max_tokens clamped
    bool cached = false;    ///< answered from the exact-result cache (completed at once)
    bool storable = false;  ///< forwarded as asked to the first pool: store it when completed
    int status = 0;
    std::string_view reason;
    Seconds retry_after_s = 0;
  };
  /// Routes a request that passed the door at `now`, asking for `max_tokens`, as the live
  /// gateway does, through the stages of its cascade: at each, route, send
  /// (`try_replica`), and after a refusal or an unreachable replica retry on another one within
  /// the retry settings and budget (routing::Pool::MayRetry); what is left is refused.
  /// A request the gateway cannot start within its TTFT SLO now may instead wait in its queue
  /// (routing::Pool::Admit): then `queued`, and DispatchNext says later how it left.
  /// `cache_key` (empty: not cacheable) names its answer in the exact-result cache; `flow`
  /// is the request's flow for the pools' fair shedding (routing::RouteRequest::flow); the
  /// prompt's shared segments name its blocks for prefix-aware routing.
  struct Prompt {
    std::int32_t tokens = 0;
    std::shared_ptr<const PromptSegments> segments = nullptr;
  };
  Outcome Forward(routing::Ticket ticket, const Prompt& prompt, std::int32_t max_tokens,
                  std::int32_t priority, std::string_view flow, std::string cache_key, Seconds now,
                  const TryReplica& try_replica);
  /// A `storable` request completed at `now`: its answer goes into the cache under `key`.
  void StoreAnswer(const std::string& key, Seconds now);

  /// The next waiting request that leaves a pool's queue at `now` (routing::Pool::DispatchNext):
  /// its ticket and outcome, sent with `try_for(ticket)`; an expired one goes on to the next
  /// stage of the cascade (where it may be `queued` again), else it is refused 429
  /// queue_deadline_exceeded by the gateway. Nullopt when none can leave yet.
  struct Dispatched {
    routing::Ticket ticket = 0;
    Outcome outcome;
    bool expired = false;
  };
  std::optional<Dispatched> DispatchNext(Seconds now,
                                         const std::function<TryReplica(routing::Ticket)>& try_for);
  /// The client of waiting `ticket` left (kCancelled) or the server's deadline passed
  /// (kFailed): it leaves the queue.
  std::size_t waiting() const;

  enum class Ending : std::uint8_t { kCompleted, kFailed, kCancelled };
  /// A waiting request's end before it was sent (its client left, or the deadline passed).
  void EndWaiting(routing::Ticket ticket, Ending ending);
  /// A forwarded request ended at `replica`.
  void OnEnded(std::uint32_t replica, Seconds now, Ending ending);
  /// `ttft_s` from the gateway's send to the replica (not from the client's, which includes a
  /// wait in the gateway's queue), as the live gateway measures it.
  void OnFirstToken(std::uint32_t replica, std::int32_t prompt_tokens, Seconds ttft_s, bool alone,
                    Seconds predicted_ttft_s) {
    Slot& s = SlotOf(replica);
    s.pool.OnFirstToken(replica - s.first, prompt_tokens, ttft_s, alone, predicted_ttft_s);
  }
  /// A scrape of every replica at `now` (engines[i] is replica i) for which `answers(i)`.
  void Scrape(const std::vector<std::unique_ptr<Engine>>& engines, Seconds now,
              const std::function<bool(std::size_t)>& answers);
  /// A probe of every replica at `now`.
  void Probe(Seconds now, const std::function<routing::ProbeResult(std::size_t)>& probe);

  /// Empty when the ledger balances (and, with `at_end`, nothing is in flight), else what is
  /// wrong.
  std::string LedgerError(bool at_end) const;
  Seconds scrape_interval_s() const { return scrape_interval_s_; }
  Seconds probe_interval_s() const { return probe_interval_s_; }

 private:
  struct Slot {
    routing::Pool pool;
    std::uint32_t first = 0;  ///< its first replica's number
  };
  /// What the cascade's stages need of a request: when it arrived, the max_tokens it asked for
  /// and its routing request.
  struct Asked {
    Seconds received_s = 0;
    std::int32_t max_tokens = 0;
    routing::RouteRequest route;
    std::string cache_key = {};  ///< empty: not cacheable
    bool looked_up = false;      ///< the cache step was passed (a miss)
  };
  /// A request waiting in the queue of its stage `stage`.
  struct Waiting {
    std::size_t stage = 0;
    Asked asked;
  };
  Slot& SlotOf(std::uint32_t replica);
  /// The send-and-retry loop on pool `k` from a first pick: sends (max_tokens clamped to
  /// `clamp` when > 0), and after a refusal or an unreachable replica routes again within the
  /// retry settings. Counts nothing in the ledger.
  Outcome Send(std::size_t k, routing::RouteRequest request, routing::Pool::Pick pick,
               std::int32_t clamp, Seconds now, const TryReplica& try_replica);
  /// Offers the request to the cascade's stages from `s` on while each refuses it for load
  /// (`left`: stage s's queue let it go with this placement); then counts the outcome in the
  /// ledger (a request that queues is counted when it leaves).
  Outcome Offer(routing::Ticket ticket, std::size_t s, Asked asked,
                std::optional<routing::Pool::Placement> left, Seconds now,
                const TryReplica& try_replica);

  std::vector<Slot> pools_;
  std::vector<routing::CascadeStage> stages_;  ///< pools named by index into pools_
  std::map<routing::Ticket, Waiting> waiting_;
  std::unique_ptr<routing::ResultCache> cache_;  ///< null: off
  Seconds ttft_slo_s_;
  routing::RouteLedger ledger_;
  Seconds scrape_interval_s_;
  Seconds probe_interval_s_;
};

}  // namespace spillway
