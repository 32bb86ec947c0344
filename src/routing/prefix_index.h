#pragma once
// What the gateway believes each endpoint holds in its prefix cache, from what it sent there
// (the Gateway API Inference Extension's approximate prefix-cache index, "estimation mode"):
// per endpoint, the hashes of the prompt blocks it was sent, least recently used dropped past
// a capacity. The engine's own cache evicts on its own terms, so the index is a guess: right
// when requests of a prefix keep going to the same endpoint, wrong after the engine evicted.
//
// A request's blocks are its prompt's chained block hashes (sched/block_hashes.h
// SharedPrefixBlockHashes): equal hashes mean equal prefixes, so an endpoint's match is the
// number of the request's leading blocks found there, stopping at the first missing one.
// Pure: no clock, no I/O. Not thread-safe.

#include <cstdint>
#include <list>
#include <span>
#include <unordered_map>
#include <vector>

namespace spillway::routing {

class PrefixIndex {
 public:
  /// `capacity_blocks` (> 0): block hashes kept per endpoint (GIE's lruCapacityPerServer).
  explicit PrefixIndex(std::int64_t capacity_blocks);

  /// Leading blocks of `blocks` that `endpoint` is believed to hold. O(match).
  std::int32_t Match(std::size_t endpoint, std::span<const std::uint64_t> blocks) const;
  /// `blocks` were sent to `endpoint`: each becomes its most recently used, the least recently
  /// used dropped past the capacity. O(blocks).
  void Record(std::size_t endpoint, std::span<const std::uint64_t> blocks);
  /// `blocks` are no longer believed held by `endpoint` (a request sent there was refused
  /// before it started: the engine may never have computed them). Conservative: a block it
  /// held from an earlier request is dropped too. O(blocks).
  void Drop(std::size_t endpoint, std::span<const std::uint64_t> blocks);
  /// Forgets everything believed of `endpoint` (it restarted, or left the pool).
  void Forget(std::size_t endpoint);
  /// Block hashes held for `endpoint`.
  std::size_t size(std::size_t endpoint) const;
  /// A config reload's capacity: an endpoint holding more drops its least recently used.
  void set_capacity(std::int64_t capacity_blocks);

 private:
  struct Lru {
    std::list<std::uint64_t> order;  // most recently used first
    std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator> where;
  };
  void Trim(Lru& lru) const;

  std::int64_t capacity_;
  std::vector<Lru> endpoints_;  // grown on Record
};

}  // namespace spillway::routing
