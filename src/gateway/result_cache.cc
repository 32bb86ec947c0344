#include "gateway/result_cache.h"

#include <algorithm>
#include <boost/json.hpp>
#include <utility>
#include <vector>

namespace spillway::gateway {
namespace {

namespace json = boost::json;

/// `v` with every object's keys in order, recursively.
json::value Sorted(const json::value& v) {
  if (v.is_object()) {
    std::vector<std::pair<std::string_view, const json::value*>> fields;
    for (const auto& kv : v.as_object()) {
      fields.emplace_back(kv.key(), &kv.value());
    }
    std::sort(fields.begin(), fields.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    json::object out;
    out.reserve(fields.size());
    for (const auto& [key, value] : fields) {
      out.emplace(key, Sorted(*value));
    }
    return out;
  }
  if (v.is_array()) {
    json::array out;
    out.reserve(v.as_array().size());
    for (const json::value& e : v.as_array()) {
      out.push_back(Sorted(e));
    }
    return out;
  }
  return v;
}

void AppendField(std::string* out, std::string_view field) {
  *out += std::to_string(field.size());
  *out += ':';
  *out += field;
}

}  // namespace

std::optional<std::string> ResultCacheKey(std::string_view tenant, std::string_view model,
                                          std::string_view body) {
  boost::system::error_code ec;
  const json::value v = json::parse(body, ec);
  if (ec || !v.is_object()) {
    return std::nullopt;
  }
  std::string key;
  AppendField(&key, tenant);
  AppendField(&key, model);
  key += json::serialize(Sorted(v));
  return key;
}

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
  const auto bytes = static_cast<std::int64_t>(key.size() + answer.body.size() +
                                               answer.content_type.size());
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

}  // namespace spillway::gateway
