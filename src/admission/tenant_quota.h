#pragma once
// A tenant's quotas beyond its request bucket, decided in one place: a request-rate limit, a
// token-rate limit (prompt tokens plus max_tokens, reserved at admission and corrected by the
// reply's usage) and a retry limit (a request seen before from the same tenant within a window,
// by Idempotency-Key or body, spends a bucket of its own as well), each a GCRA
// (admission/gcra.h). All must allow a request for any to be spent. Pure: time is passed in.
//
// This is the gateway's local mirror of the shared decision its Redis script makes
// (gateway/quota_script.h): it decides alone when no Redis is configured, and when Redis is
// unreachable in fail-open mode, at a share (1/N for N gateways) of each rate.

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "admission/gcra.h"
#include "core/types.h"

namespace spillway {

/// A tenant's limits; an unset one does not limit.
struct TenantQuotaLimits {
  std::optional<GcraLimit> requests;  ///< requests a second
  std::optional<GcraLimit> tokens;    ///< prompt + max_tokens a second
  std::optional<GcraLimit> retries;   ///< retries a second
  bool any() const { return requests.has_value() || tokens.has_value() || retries.has_value(); }
  bool operator==(const TenantQuotaLimits&) const = default;
};

/// Which limit refused a request (kNone: allowed), in the order they are checked.
enum class QuotaLimit : std::uint8_t { kNone, kRequests, kTokens, kRetries };

/// The overload-contract token of a refusal by `limit`: rate_limited, token_rate_limited,
/// retry_rate_limited ("" for kNone).
std::string_view QuotaReason(QuotaLimit limit);

/// One request to decide.
struct QuotaAsk {
  std::string_view tenant;
  double tokens = 0;              ///< reserved: prompt tokens + max_tokens
  std::string_view identity;      ///< Idempotency-Key or a digest of the body ("" : none)
  std::int32_t request_cost = 1;  ///< 0: the request limit is decided elsewhere
};

struct QuotaDecision {
  QuotaLimit refused_by = QuotaLimit::kNone;
  bool retry = false;  ///< the identity was seen within the window
  Seconds retry_after_s = 0;
  /// The tokens an allowed request spent: its reservation, or the token burst when that is
  /// smaller (what a correction is relative to).
  double tokens_charged = 0;
  bool allowed() const { return refused_by == QuotaLimit::kNone; }
};

class TenantQuota {
 public:
  /// Identities are remembered for `retry_window_s` (> 0), at most `max_identities` of them
  /// (the oldest forgotten first).
  explicit TenantQuota(Seconds retry_window_s, std::size_t max_identities = 100000);

  /// Decides `ask` against its tenant's `limits` at `now`, each rate and burst scaled by
  /// `share` (in (0, 1]; a burst never below 1). An allowed request spends every limit; its
  /// identity is remembered either way.
  QuotaDecision Decide(const TenantQuotaLimits& limits, const QuotaAsk& ask, Seconds now,
                       double share = 1);

  /// Spends `ask` on every limit it would spend, without refusing (a bucket at most empties):
  /// keeps this mirror near what the tenant spent while another place decided (Redis), so that
  /// a fall back to it does not find a full bucket. Its identity is remembered.
  void Charge(const TenantQuotaLimits& limits, const QuotaAsk& ask, Seconds now, double share = 1);

  /// Corrects `tenant`'s token reservation by `delta` tokens (negative: given back).
  void AdjustTokens(const TenantQuotaLimits& limits, std::string_view tenant, double delta,
                    Seconds now, double share = 1);

 private:
  struct State {
    Seconds requests_tat = 0;
    Seconds tokens_tat = 0;
    Seconds retries_tat = 0;
  };
  /// Whether `tenant` sent `identity` within the window; remembers it (again) from `now`.
  bool SeenBefore(std::string_view tenant, std::string_view identity, Seconds now);

  std::map<std::string, State, std::less<>> state_;
  Seconds retry_window_s_;
  std::size_t max_identities_;
  std::unordered_map<std::string, Seconds> seen_;      ///< identity -> last seen
  std::deque<std::pair<std::string, Seconds>> order_;  ///< (identity, seen at), oldest first
};

/// `limit` scaled by `share` (rate and burst; the burst never below 1).
GcraLimit ScaledLimit(const GcraLimit& limit, double share);

}  // namespace spillway
