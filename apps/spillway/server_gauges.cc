#include "server_gauges.h"

#include <chrono>
#include <thread>

namespace spillway::app {

ServerGauges::ServerGauges(const std::string& target_url,
                           const std::vector<std::string>& metrics_urls) {
  const std::vector<std::string> urls =
      metrics_urls.empty() ? std::vector<std::string>{target_url} : metrics_urls;
  for (const std::string& url : urls) {
    net::Target t = net::ParseTarget(url);
    net::Endpoints e = net::Resolve(ioc_, t);
    sources_.push_back({url, std::move(t), std::move(e)});
  }
}

std::optional<metrics::ServerSnapshot> ServerGauges::ReadSource(const Source& s,
                                                                Seconds timeout_s) {
  const net::GetResult got = net::HttpGetNow(s.endpoints, s.target, "/metrics", timeout_s);
  if (got.status != 200) {
    return std::nullopt;
  }
  metrics::ServerSnapshot snap = metrics::ReadServerSnapshot(got.body);
  if (!snap.running || !snap.kv_usage) {
    return std::nullopt;
  }
  return snap;
}

std::optional<metrics::ServerSnapshot> ServerGauges::Read(Seconds timeout_s) const {
  std::vector<metrics::ServerSnapshot> parts;
  for (const Source& s : sources_) {
    if (std::optional<metrics::ServerSnapshot> snap = ReadSource(s, timeout_s)) {
      parts.push_back(*snap);
    }
  }
  if (parts.empty()) {
    return std::nullopt;
  }
  return metrics::SumSnapshots(parts);
}

std::vector<std::string> ServerGauges::Silent() const {
  std::vector<std::string> silent;
  for (const Source& s : sources_) {
    if (!ReadSource(s, 2)) {
      silent.push_back(s.url);
    }
  }
  return silent;
}

bool ServerGauges::WaitIdle(Seconds limit_s, Seconds fallback_s) const {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  while (true) {
    const std::optional<metrics::ServerSnapshot> snap = Read();
    if (!snap) {
      std::this_thread::sleep_for(std::chrono::duration<double>(fallback_s));
      return true;
    }
    if (snap->running.value_or(0) + snap->waiting.value_or(0) <= 0) {
      return true;
    }
    if (std::chrono::steady_clock::now() >= until) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

}  // namespace spillway::app
