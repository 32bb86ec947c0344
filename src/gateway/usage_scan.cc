#include "gateway/usage_scan.h"

#include <boost/json.hpp>

namespace spillway::gateway {

std::optional<std::int64_t> UsageTokens(std::string_view json) {
  boost::system::error_code ec;
  const boost::json::value v = boost::json::parse(json, ec);
  const boost::json::object* o = ec ? nullptr : v.if_object();
  const boost::json::value* u = o != nullptr ? o->if_contains("usage") : nullptr;
  const boost::json::object* usage = u != nullptr ? u->if_object() : nullptr;
  if (usage == nullptr) {
    return std::nullopt;
  }
  const auto count = [usage](std::string_view name) -> std::optional<std::int64_t> {
    const boost::json::value* n = usage->if_contains(name);
    if (n == nullptr) {
      return std::nullopt;
    }
    if (const std::int64_t* i = n->if_int64(); i != nullptr && *i >= 0) {
      return *i;
    }
    if (const std::uint64_t* i = n->if_uint64(); i != nullptr && *i < (1ULL << 62)) {
      return static_cast<std::int64_t>(*i);
    }
    return std::nullopt;
  };
  if (const auto total = count("total_tokens")) {
    return total;
  }
  const auto prompt = count("prompt_tokens");
  const auto completion = count("completion_tokens");
  if (prompt.has_value() && completion.has_value()) {
    return *prompt + *completion;
  }
  return std::nullopt;
}

void StreamUsage::Feed(std::string_view chunk) {
  while (!chunk.empty()) {
    const std::size_t nl = chunk.find('\n');
    const std::string_view part = chunk.substr(0, nl);
    if (line_.size() + part.size() <= kMaxLineBytes) {
      line_.append(part);
    } else {
      too_long_ = true;
    }
    if (nl == std::string_view::npos) {
      return;
    }
    chunk.remove_prefix(nl + 1);
    if (!too_long_ && line_.starts_with("data:") && line_.find("\"usage\"") != std::string::npos) {
      if (const auto t = UsageTokens(std::string_view(line_).substr(5))) {
        tokens_ = t;
      }
    }
    line_.clear();
    too_long_ = false;
  }
}

}  // namespace spillway::gateway
