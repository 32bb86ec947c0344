#pragma once
// The gateway in front of the simulator's replicas (SimOptions::gateway): the routing core's
// routing::Pool, the object the live gateway drives (gateway/endpoint_pool.h), and the ledger
// of every request it received. Forward runs the live gateway's send-and-retry loop
// (gateway/gateway_handler.cc) against the replicas' immediate answers; scrapes and probes
// arrive as the simulator's events. No clock, no I/O.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.h"
#include "engine/engine_config.h"
#include "routing/pool.h"

namespace spillway {

struct SimGateway;

class GatewayFront {
 public:
  /// One endpoint per replica, starting from the engine's own estimator priors.
  GatewayFront(const SimGateway& config, const EngineConfig& engine, std::int32_t replicas);

  /// What a replica did with a request the gateway sent it.
  struct Answer {
    enum class Kind : std::uint8_t { kAccepted, kRefused, kUnreachable };
    Kind kind = Kind::kAccepted;
    int status = 0;  ///< kRefused: the replica's status, reason and Retry-After
    std::string_view reason;
    Seconds retry_after_s = 0;
  };
  using TryReplica = std::function<Answer(std::uint32_t replica)>;

  /// How the gateway answered a request: sent to `replica` (accepted there), or refused with
  /// `status`, `reason` and `retry_after_s` (its own refusal, or the replica's passed on).
  struct Outcome {
    bool forwarded = false;
    bool queued = false;           ///< waiting in the gateway's queue until DispatchNext
    Seconds expires_s = 0;         ///< queued: when its wait ends at the latest
    bool by_gateway = false;       ///< refused by the gateway itself (not a replica's refusal)
    std::uint32_t replica = 0;     ///< forwarded: where it runs; refused: the last one tried
    bool alone = false;            ///< sent with nothing predicted ahead: its TTFT measures prefill
    Seconds predicted_ttft_s = 0;  ///< forwarded: the gateway's TTFT prediction there
    int status = 0;
    std::string_view reason;
    Seconds retry_after_s = 0;
  };
  /// Routes a request that passed the door at `now`, as the live gateway does: route, send
  /// (`try_replica`), and after a refusal or an unreachable replica retry on another one within
  /// the retry settings and budget (routing::Pool::MayRetry); what is left is refused.
  /// A request the gateway cannot start within its TTFT SLO now may instead wait in its queue
  /// (routing::Pool::Admit): then `queued`, and DispatchNext says later how it left.
  Outcome Forward(routing::Ticket ticket, std::int32_t prompt_tokens, std::int32_t priority,
                  Seconds now, const TryReplica& try_replica);

  /// The next waiting request that leaves the queue at `now` (routing::Pool::DispatchNext):
  /// its ticket and outcome, sent with `try_for(ticket)`; an expired one is refused 429
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
  std::size_t waiting() const { return pool_.waiting(); }

  enum class Ending : std::uint8_t { kCompleted, kFailed, kCancelled };
  /// A waiting request's end before it was sent (its client left, or the deadline passed).
  void EndWaiting(routing::Ticket ticket, Ending ending);
  /// A forwarded request ended at `replica`.
  void OnEnded(std::uint32_t replica, Seconds now, Ending ending);
  /// `ttft_s` from the gateway's send to the replica (not from the client's, which includes a
  /// wait in the gateway's queue), as the live gateway measures it.
  void OnFirstToken(std::uint32_t replica, std::int32_t prompt_tokens, Seconds ttft_s, bool alone,
                    Seconds predicted_ttft_s) {
    pool_.OnFirstToken(replica, prompt_tokens, ttft_s, alone, predicted_ttft_s);
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
  /// The send-and-retry loop from a first pick: sends, and after a refusal or an unreachable
  /// replica routes again within the retry settings; counts the outcome in the ledger.
  Outcome Send(routing::RouteRequest request, routing::Pool::Pick pick, Seconds now,
               const TryReplica& try_replica);

  routing::Pool pool_;
  routing::RouteLedger ledger_;
  Seconds scrape_interval_s_;
  Seconds probe_interval_s_;
};

}  // namespace spillway
