#include "loadgen/target.h"

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <stdexcept>

namespace spillway::loadgen {

Target ParseTarget(std::string_view url) {
  const auto parsed = boost::urls::parse_uri(url);
  if (!parsed) {
    throw std::invalid_argument("--target: not a URL (" + parsed.error().message() + "): '" +
                                std::string(url) + "'");
  }
  const boost::urls::url_view u = *parsed;
  if (u.scheme_id() != boost::urls::scheme::http) {
    throw std::invalid_argument("--target: only http:// URLs are supported, got '" +
                                std::string(url) + "'");
  }
  if (u.encoded_host().empty()) {
    throw std::invalid_argument("--target: no host in '" + std::string(url) + "'");
  }
  if (u.has_query() || u.has_fragment() || u.has_userinfo()) {
    throw std::invalid_argument(
        "--target: give scheme, host, port and path only (no user, query or fragment), got '" +
        std::string(url) + "'");
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

}  // namespace spillway::loadgen
