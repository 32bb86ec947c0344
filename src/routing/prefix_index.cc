#include "routing/prefix_index.h"

#include <algorithm>

namespace spillway::routing {

PrefixIndex::PrefixIndex(std::int64_t capacity_blocks)
    : capacity_(std::max<std::int64_t>(1, capacity_blocks)) {}

std::int32_t PrefixIndex::Match(std::size_t endpoint, std::span<const std::uint64_t> blocks) const {
  if (endpoint >= endpoints_.size()) {
    return 0;
  }
  const Lru& lru = endpoints_[endpoint];
  std::int32_t n = 0;
  for (const std::uint64_t h : blocks) {
    if (!lru.where.contains(h)) {
      break;
    }
    ++n;
  }
  return n;
}

void PrefixIndex::Record(std::size_t endpoint, std::span<const std::uint64_t> blocks) {
  if (blocks.empty()) {
    return;
  }
  if (endpoint >= endpoints_.size()) {
    endpoints_.resize(endpoint + 1);
  }
  Lru& lru = endpoints_[endpoint];
  // Last block first, so the prompt's first block ends most recently used: a chain is dropped
  // from its tail, as the engine evicts a table's last blocks first.
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    if (const auto found = lru.where.find(*it); found != lru.where.end()) {
      lru.order.splice(lru.order.begin(), lru.order, found->second);
    } else {
      lru.order.push_front(*it);
      lru.where.emplace(*it, lru.order.begin());
    }
  }
  Trim(lru);
}

void PrefixIndex::Trim(Lru& lru) const {
  while (static_cast<std::int64_t>(lru.order.size()) > capacity_) {
    lru.where.erase(lru.order.back());
    lru.order.pop_back();
  }
}

void PrefixIndex::Drop(std::size_t endpoint, std::span<const std::uint64_t> blocks) {
  if (endpoint >= endpoints_.size()) {
    return;
  }
  Lru& lru = endpoints_[endpoint];
  for (const std::uint64_t h : blocks) {
    if (const auto found = lru.where.find(h); found != lru.where.end()) {
      lru.order.erase(found->second);
      lru.where.erase(found);
    }
  }
}

void PrefixIndex::Forget(std::size_t endpoint) {
  if (endpoint < endpoints_.size()) {
    endpoints_[endpoint] = Lru{};
  }
}

std::size_t PrefixIndex::size(std::size_t endpoint) const {
  return endpoint < endpoints_.size() ? endpoints_[endpoint].order.size() : 0;
}

void PrefixIndex::set_capacity(std::int64_t capacity_blocks) {
  capacity_ = std::max<std::int64_t>(1, capacity_blocks);
  for (Lru& lru : endpoints_) {
    Trim(lru);
  }
}

}  // namespace spillway::routing
