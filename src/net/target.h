#pragma once
// An HTTP server (the one under test, an upstream endpoint) from a URL like http://127.0.0.1:8000
// (parsed with Boost.URL).

#include <string>
#include <string_view>

namespace spillway::net {

struct Target {
  std::string host;         ///< name or address, without IPv6 brackets
  std::string port;         ///< "80" when the URL gives none
  std::string base_path;    ///< prefix of every request target, no trailing '/' ("" or "/api")
  std::string host_header;  ///< the Host header: host[:port] as written in the URL

  /// base_path + `path` (which starts with '/').
  std::string Path(std::string_view path) const { return base_path + std::string(path); }
  /// host:port/base_path: one endpoint whatever the spelling of its URL (a default port, a
  /// trailing '/' or "/v1").
  std::string Key() const { return host + ":" + port + base_path; }
};

/// Parses `url`: scheme http (https is not supported), a host, an optional port and an
/// optional base path. A trailing "/v1" is dropped (OpenAI SDK base URLs end in it). Throws
/// std::invalid_argument saying what is wrong.
Target ParseTarget(std::string_view url);

}  // namespace spillway::net
