#include "gateway/cache_key.h"

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

}  // namespace spillway::gateway
