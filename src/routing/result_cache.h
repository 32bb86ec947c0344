#pragma once
// The gateway's exact-result cache: the `cache` step of the cascade (routing/cascade.h; the
// lesson's fallback cascade ends in a cache, overload-and-failure-handling.txt §3.3 and its
// policy: "Return cached FAQ completions -> 0 GPU cost"). A complete answer is stored under
// the tenant, the model asked for and the request's canonical body (every field, sampling
// parameters included: seed, n, stop, max_tokens, stream), and the same tenant asking the same
// again gets it back without engine work. Exact, not semantic: one byte of difference in a
// field's value is another request (the order of an object's keys is not).
//
// Which requests and answers the gateway may cache is its policy (gateway_handler.cc,
// docs/gateway.md): deterministic requests only (temperature 0 or a seed) unless the key opts
// in; complete 200 answers of the model asked for, not degraded. The live gateway keys an
// answer by the request's canonical body (gateway/cache_key.h), the simulator by the
// scenario's prompt (sim/gateway_front.h). This store only keeps them:
// bounded by entries and bytes (the least recently used leave first) and by age (ttl_s).
// Thread-safe (one mutex: a lookup is a hash and a list splice); no clock (callers pass now),
// no I/O.

#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/types.h"

namespace spillway::routing {

/// The `cache` section of the gateway config.
struct ResultCacheConfig {
  std::int64_t max_entries = 0;                          ///< 0: no cache (the default)
  std::int64_t max_bytes = std::int64_t{64} << 20;       ///< keys and answers together
  Seconds ttl_s = 300;                                   ///< an entry older than this is not served
  std::int64_t max_entry_bytes = std::int64_t{1} << 20;  ///< a larger answer is not stored
  bool enabled() const { return max_entries > 0; }
  bool operator==(const ResultCacheConfig&) const = default;
};

/// An answer as the client got it.
struct CachedAnswer {
  std::string content_type;  ///< application/json, or text/event-stream for a stream
  std::string body;          ///< the whole JSON, or the stream's SSE bytes as relayed
  bool streamed = false;
};

class ResultCache {
 public:
  explicit ResultCache(ResultCacheConfig config) : config_(config) {}

  /// The answer stored under `key` if younger than ttl_s at `now` (it becomes the most
  /// recently used); an older one is dropped. Nullopt when none.
  std::optional<CachedAnswer> Find(const std::string& key, Seconds now);

  /// Stores `answer` under `key` at `now` (replacing one there), evicting the least recently
  /// used entries until it fits; returns how many were evicted, or -1 when it is larger than
  /// max_entry_bytes or max_bytes (not stored).
  std::int64_t Store(const std::string& key, CachedAnswer answer, Seconds now);

  struct Stats {
    std::int64_t entries = 0;
    std::int64_t bytes = 0;
  };
  Stats stats() const;
  const ResultCacheConfig& config() const { return config_; }

 private:
  struct Entry {
    std::string key;
    CachedAnswer answer;
    Seconds stored_s = 0;
    std::int64_t bytes = 0;
  };
  using List = std::list<Entry>;
  void EraseLocked(List::iterator it);

  const ResultCacheConfig config_;
  mutable std::mutex mu_;
  List lru_;                                                    // most recently used first
  std::unordered_map<std::string_view, List::iterator> index_;  // views of the entries' keys
  std::int64_t bytes_ = 0;
};

}  // namespace spillway::routing
