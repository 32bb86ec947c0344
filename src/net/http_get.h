#pragma once
// A small asynchronous HTTP/1.1 GET for side requests (the load generator: GET /v1/models at
// the start, GET /metrics once a second; the gateway: scrapes and probes): its own
// connection, one deadline for the whole
// exchange. Boost.Beast stays in http_get.cc.

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <string>
#include <vector>

#include "core/types.h"
#include "net/target.h"

namespace spillway::net {

using Endpoints = std::vector<boost::asio::ip::tcp::endpoint>;

struct GetResult {
  int status = 0;     ///< 0 when no response: `error` says why
  std::string error;  ///< transport error
  std::string body;
};

/// The addresses `target`'s host and port resolve to (blocking; numeric hosts need no DNS).
/// Throws std::runtime_error naming host:port when there is none.
Endpoints Resolve(boost::asio::io_context& ioc, const Target& target);

/// GETs `target.Path(path)` from `endpoints` within `timeout_s` seconds, with `authorization`
/// as the Authorization header when non-empty. Bodies over 16 MiB fail.
boost::asio::awaitable<GetResult> HttpGet(const Endpoints& endpoints, const Target& target,
                                          const std::string& path, const std::string& authorization,
                                          Seconds timeout_s);

/// The same, blocking on an io_context of its own (start-up discovery, a run's last scrape).
GetResult HttpGetNow(const Endpoints& endpoints, const Target& target, const std::string& path,
                     Seconds timeout_s);

}  // namespace spillway::net
