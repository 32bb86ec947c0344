#include "gateway/stage_request.h"

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/json.hpp>

#include "gateway/cache_key.h"

namespace spillway::gateway {

bool StageBody(const std::string& body, bool chat, std::string_view model,
               std::optional<std::int32_t> clamp, std::string* out) {
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(body, ec);
  if (ec || !v.is_object() || !FiniteNumbers(v)) {
    return false;
  }
  boost::json::object& o = v.as_object();
  if (!model.empty()) {
    o["model"] = model;
  }
  if (clamp.has_value()) {
    const bool completion_field = chat && o.contains("max_completion_tokens");
    if (completion_field) {
      o["max_completion_tokens"] = *clamp;
    }
    if (o.contains("max_tokens") || !completion_field) {
      o["max_tokens"] = *clamp;
    }
  }
  *out = boost::json::serialize(v);
  return true;
}

bool HasCacheDirective(const net::Request& r, std::string_view directive) {
  const auto [from, to] = r.equal_range(boost::beast::http::field::cache_control);
  for (auto f = from; f != to; ++f) {
    std::string_view list(f->value().data(), f->value().size());
    while (!list.empty()) {
      const std::size_t comma = list.find(',');
      std::string_view item = list.substr(0, comma);
      list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
      item = item.substr(0, item.find('='));
      while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) {
        item.remove_prefix(1);
      }
      while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) {
        item.remove_suffix(1);
      }
      if (boost::beast::iequals(item, directive)) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace spillway::gateway
