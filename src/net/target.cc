#include "net/target.h"

#include <charconv>
#include <cstdint>
#include <string_view>
#include <system_error>

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <stdexcept>

namespace spillway::net {

Target ParseTarget(std::string_view url) {
  const auto parsed = boost::urls::parse_uri(url);
  if (!parsed) {
    throw std::invalid_argument("'" + std::string(url) +
                                "' is not a URL like http://127.0.0.1:8000");
  }
  const boost::urls::url_view u = *parsed;
  if (u.scheme_id() == boost::urls::scheme::https) {
    throw std::invalid_argument("'" + std::string(url) +
                                "': https is not supported yet (TLS); use an http:// URL");
  }
  if (u.scheme_id() != boost::urls::scheme::http) {
    throw std::invalid_argument("'" + std::string(url) + "': only http:// URLs are supported");
  }
  if (u.encoded_host().empty()) {
    throw std::invalid_argument("'" + std::string(url) + "' has no host");
  }
  if (u.has_query() || u.has_fragment() || u.has_userinfo()) {
    throw std::invalid_argument(
        "'" + std::string(url) +
        "': give scheme, host, port and path only (no user, query or fragment)");
  }
  std::uint32_t port = 80;
  if (u.has_port()) {
    const std::string_view text = u.port();
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
      port = 0;
    }
  }
  if (port == 0 || port > 65535) {
    throw std::invalid_argument("'" + std::string(url) + "': the port must be 1 to 65535, got '" +
                                std::string(u.port()) + "'");
  }
  Target t;
  t.host = u.host_address();
  t.port = u.has_port() ? std::string(u.port()) : std::string("80");
  t.host_header = std::string(u.encoded_host());
  if (u.has_port()) {
    t.host_header += ":" + t.port;
  }
  std::string path = u.path();
  while (!path.empty() && path.back() == '/') {
    path.pop_back();
  }
  if (path.ends_with("/v1")) {
    path.resize(path.size() - 3);
  }
  t.base_path = path;
  return t;
}

}  // namespace spillway::net
