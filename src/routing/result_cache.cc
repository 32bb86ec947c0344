#include "routing/result_cache.h"

#include <utility>

namespace spillway::routing {

std::optional<CachedAnswer> ResultCache::Find(const std::string& key, Seconds now) {
  const std::lock_guard lock(mu_);
  const auto it = index_.find(key);
  if (it == index_.end()) {
    return std::nullopt;
  }
  if (!(now - it->second->stored_s < config_.ttl_s)) {
    EraseLocked(it->second);
    return std::nullopt;
  }
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->answer;
}

std::int64_t ResultCache::Store(const std::string& key, CachedAnswer answer, Seconds now) {
  const auto bytes =
      static_cast<std::int64_t>(key.size() + answer.body.size() + answer.content_type.size());
  if (!config_.enabled() || bytes > config_.max_entry_bytes || bytes > config_.max_bytes) {
    return -1;
  }
  const std::lock_guard lock(mu_);
  if (const auto it = index_.find(key); it != index_.end()) {
    EraseLocked(it->second);
  }
  std::int64_t evicted = 0;
  while (!lru_.empty() && (bytes_ + bytes > config_.max_bytes ||
                           static_cast<std::int64_t>(lru_.size()) >= config_.max_entries)) {
    EraseLocked(std::prev(lru_.end()));
    ++evicted;
  }
  lru_.push_front(Entry{key, std::move(answer), now, bytes});
  index_.emplace(lru_.front().key, lru_.begin());
  bytes_ += bytes;
  return evicted;
}

ResultCache::Stats ResultCache::stats() const {
  const std::lock_guard lock(mu_);
  return {static_cast<std::int64_t>(lru_.size()), bytes_};
}

void ResultCache::EraseLocked(List::iterator it) {
  bytes_ -= it->bytes;
  index_.erase(it->key);
  lru_.erase(it);
}

}  // namespace spillway::routing
