#pragma once
// Fair shedding across flows: a bound on how far a flow's share of the admitted requests may
// fall below its share of the offered ones.
//
// Under overload, admission by a TTFT prediction prefers short prompts (their prefill fits):
// on the reference burst with varied lengths, documents are 10% of what is offered and 3% of
// what is served. A flow is what the Gateway API Inference Extension's flow control calls one:
// the request's fairness ID (the x-gateway-inference-fairness-id header; the tenant without
// one). With min_share_ratio r > 0, a flow G is *starved* while it was refused for load within
// the last contention_s and its admitted share is below r x its offered share; while any flow
// is starved, a request of a flow admitted above r x its own offered share is refused (429
// fair_share, retry after 1 s; so yielding never takes a flow below the bound itself), which
// shortens the queue for the starved flow's next request. A flow whose admitted requests mostly
// fail at the request deadline is never starved. Counts are exponentially decayed with time
// constant window_s, so shares are recent ones.
//
// Not thread-safe; no clock, no I/O. Memory: at most kMaxFlows flows (the rest share one).

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/types.h"

namespace spillway {

struct FairShareConfig {
  /// A flow's admitted share may fall to this fraction of its offered share before flows
  /// served above theirs yield to it; 0 turns fair shedding off (the default), 1 asks for
  /// admitted shares equal to offered ones.
  double min_share_ratio = 0;
  /// The time constant of the decayed offered and admitted counts, seconds.
  Seconds window_s = 10;
  /// A flow contends while it was refused for load within this long, seconds.
  Seconds contention_s = 2;
};

/// One flow's recent shares (for metrics and tests).
struct FlowShare {
  std::string flow;
  double offered_share = 0;   ///< of the decayed offered requests, in [0, 1]
  double admitted_share = 0;  ///< of the decayed admitted requests, in [0, 1]
  bool starved = false;
};

class FairShare {
 public:
  static constexpr std::size_t kMaxFlows = 64;
  /// The flow that flows beyond kMaxFlows are counted under.
  static constexpr std::string_view kOtherFlows = "(other)";
  /// A flow whose admitted requests fail at the request deadline more often than this is not
  /// starved:
  /// queue room is not what it lacks (a prompt too long for the deadline would take room from
  /// the others and fail anyway).
  static constexpr double kMaxFailedFraction = 0.5;

  explicit FairShare(FairShareConfig config = {}) : config_(config) {}

  bool enabled() const { return config_.min_share_ratio > 0; }
  const FairShareConfig& config() const { return config_; }
  /// New settings from now on; the counts so far stay.
  void set_config(const FairShareConfig& config) { config_ = config; }

  /// A request of `flow` reached the policy (past the tenant's bucket) at `now`.
  void OnOffered(std::string_view flow, Seconds now);
  /// It was admitted.
  void OnAdmitted(std::string_view flow, Seconds now);
  /// An admission of `flow` counted by OnAdmitted is taken back (a gateway forwarded the
  /// request and the endpoint refused it): its admitted count falls by one, to 0 at least.
  void OnAdmissionWithdrawn(std::string_view flow, Seconds now);
  /// An admitted request of `flow` failed at the server's request deadline (504).
  void OnFailed(std::string_view flow, Seconds now);
  /// It was refused for load (queue delay, KV, deadline, a full queue): the flow contends.
  void OnRefusedForLoad(std::string_view flow, Seconds now);

  /// True when a request of `flow` should yield at `now`: another flow is starved and `flow`
  /// is admitted above min_share_ratio x its offered share. Always false when disabled.
  bool ShouldYield(std::string_view flow, Seconds now) const;

  /// Every flow's shares at `now`, by flow name.
  std::vector<FlowShare> Shares(Seconds now) const;

 private:
  struct Flow {
    double offered = 0;  // decayed counts, as of last_s
    double admitted = 0;
    double failed = 0;  // admitted, then failed at the request deadline
    Seconds last_s = 0;
    Seconds refused_s = kNever;  // the last refusal for load; kNever: none
  };
  Flow& FlowOf(std::string_view flow, Seconds now);
  /// `f`'s counts decayed to `now`: (offered, admitted).
  /// The decay of `f`'s counts from its last update to `now`, in (0, 1].
  double Decay(const Flow& f, Seconds now) const;
  std::pair<double, double> At(const Flow& f, Seconds now) const;
  /// Every flow's decayed counts at `now`, summed: (offered, admitted).
  std::pair<double, double> Totals(Seconds now) const;
  bool Starved(const Flow& f, double offered_total, double admitted_total, Seconds now) const;

  FairShareConfig config_;
  std::map<std::string, Flow, std::less<>> flows_;
};

}  // namespace spillway
