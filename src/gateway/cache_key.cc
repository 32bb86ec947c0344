#include "gateway/cache_key.h"

#include <algorithm>
#include <boost/json.hpp>
#include <cmath>
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
                                          std::string_view path, std::string_view body) {
  boost::system::error_code ec;
  const json::value v = json::parse(body, ec);
  if (ec || !v.is_object()) {
    return std::nullopt;
  }
  if (!FiniteNumbers(v)) {
    return std::nullopt;  // a number beyond a double's range: not told apart from another
  }
  std::string key;
  AppendField(&key, tenant);
  AppendField(&key, model);
  AppendField(&key, path);
  key += json::serialize(Sorted(v));
  return key;
}

bool FiniteNumbers(const json::value& v) {
  if (v.is_double()) {
    return std::isfinite(v.get_double());
  }
  if (v.is_array()) {
    return std::all_of(v.get_array().begin(), v.get_array().end(),
                       [](const json::value& e) { return FiniteNumbers(e); });
  }
  if (v.is_object()) {
    return std::all_of(v.get_object().begin(), v.get_object().end(),
                       [](const auto& kv) { return FiniteNumbers(kv.value()); });
  }
  return true;
}

}  // namespace spillway::gateway
