// libFuzzer target: the `spillway serve` config loader (LoadServerConfigFromString and
// ValidateServerConfig, server/server_config.h).
//
// The contract: a config, or config::ConfigError; any other exception escapes and libFuzzer
// reports it. A config that loads and validates (as serve does once everything is merged)
// must meet the constraints the loader documents, and be usable: every timeout becomes
// an Asio deadline through net::SteadyClock::At, as the server turns it into one (the request
// deadline in ApiHandler, the header and idle timeouts in HttpServer, the drain budget).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/config_error.h"
#include "config/server_config.h"
#include "core/check.h"
#include "net/clock.h"

namespace {

using spillway::server::ServerConfig;

/// The engine settings with the defaults for what the file leaves unset.
spillway::config::EngineSettings Effective(const ServerConfig& c) {
  return spillway::config::Overlay(spillway::config::EngineDefaults(), c.engine);
}

void CheckTimeoutsConvert(const ServerConfig& c) {
  const spillway::net::SteadyClock clock;
  const spillway::Seconds now = clock.Now();
  for (const double timeout_s :
       {c.header_timeout_s, c.idle_timeout_s, *Effective(c).request_timeout_s,
        spillway::server::ClientTimeoutS(c), c.drain_timeout_s}) {
    SPILLWAY_CHECK(clock.At(now + timeout_s) > clock.At(now));
  }
}

void CheckConstraints(const ServerConfig& c) {
  const spillway::config::EngineSettings e = Effective(c);
  SPILLWAY_CHECK(*e.kv_headroom > 0 && *e.kv_headroom <= 1);
  SPILLWAY_CHECK(spillway::server::ClientTimeoutS(c) > *e.request_timeout_s);
  SPILLWAY_CHECK(*e.request_timeout_s > *e.ttft_slo_s);
  SPILLWAY_CHECK(c.max_body_bytes >= 1024 && c.max_connections >= 1 && c.default_max_tokens >= 1);
  for (const auto& [key, k] : c.api_keys) {
    SPILLWAY_CHECK(!key.empty() && !k.tenant.empty());
    SPILLWAY_CHECK(std::isfinite(k.rate_rps) && k.rate_rps >= 0);
    SPILLWAY_CHECK(std::isfinite(k.burst) && k.burst >= 1);
    SPILLWAY_CHECK(k.max_priority >= 0);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string yaml(reinterpret_cast<const char*>(data), size);
  ServerConfig config;
  try {
    config = spillway::server::LoadServerConfigFromString(yaml, "<fuzz>");
    spillway::server::ValidateServerConfig(config, "<fuzz>");  // as serve does after merging
  } catch (const spillway::config::ConfigError&) {
    return 0;  // the documented failure
  }
  CheckConstraints(config);
  CheckTimeoutsConvert(config);
  return 0;
}
