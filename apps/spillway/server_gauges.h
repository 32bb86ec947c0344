#pragma once
// The live gauges of the engines under test (waiting, running, KV usage), read from their
// /metrics for `spillway policy verify`: whether the deployment is idle before a test, and how
// soon a disconnect frees what its requests held.

#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "core/types.h"
#include "metrics/metrics_text.h"
#include "net/http_get.h"
#include "net/target.h"

namespace spillway::app {

class ServerGauges {
 public:
  /// Reads `target_url`'s /metrics, or when `metrics_urls` is not empty those servers' summed
  /// (the engines behind a gateway). Throws std::invalid_argument for a bad URL and
  /// std::runtime_error for a host that does not resolve.
  ServerGauges(const std::string& target_url, const std::vector<std::string>& metrics_urls);

  /// The servers' snapshot summed (metrics::SumSnapshots), or nullopt when none answered with
  /// both vllm:num_requests_running and a KV usage gauge.
  std::optional<metrics::ServerSnapshot> Read(Seconds timeout_s = 2) const;

  /// Waits until no request is waiting or running (polling every 250 ms), at most `limit_s`;
  /// without the gauges, sleeps `fallback_s` instead. Returns false when the limit passed
  /// with requests still in the engines.
  bool WaitIdle(Seconds limit_s, Seconds fallback_s) const;

  /// The sources (their URLs) that answer no snapshot with both gauges right now.
  std::vector<std::string> Silent() const;

 private:
  struct Source {
    std::string url;
    net::Target target;
    net::Endpoints endpoints;
  };
  // One source's snapshot when it answers with both gauges.
  static std::optional<metrics::ServerSnapshot> ReadSource(const Source& s, Seconds timeout_s);

  boost::asio::io_context ioc_;
  std::vector<Source> sources_;
};

}  // namespace spillway::app
