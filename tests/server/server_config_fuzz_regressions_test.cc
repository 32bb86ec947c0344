// Inputs for the serve-config loader that the fuzz harness (fuzz/server_config_fuzz.cc,
// docs/fuzzing.md) showed break its contract: a config that loads must be usable, so every
// timeout has to become an Asio deadline without overflowing std::chrono.

#include <string>

#include <gtest/gtest.h>

#include "config/config_error.h"
#include "config/server_config.h"
#include "net/clock.h"

namespace spillway::server {
namespace {

/// The message of the ConfigError thrown by loading `yaml` ("" when it loads).
std::string LoadError(const std::string& yaml) {
  try {
    LoadServerConfigFromString(yaml, "serve.yaml");
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "";
}

// drain_timeout_s: 1e300 loaded; turned into a steady_clock deadline it overflowed int64
// nanoseconds (UBSan: "inf is outside the range of representable values of type 'long'"), as
// request_timeout_s does in ApiHandler and header/idle_timeout_s in HttpServer.
TEST(ServerConfigFuzzRegressionsTest, HugeTimeoutsAreRefused) {
  EXPECT_EQ(LoadError("timeouts: {drain_timeout_s: 1e300}\n"),
            "serve.yaml:1: timeouts.drain_timeout_s: must be <= 1e6 s, got '1e300'");
  EXPECT_NE(LoadError("server: {header_timeout_s: 1e7}\n"), "");
  EXPECT_NE(LoadError("server: {idle_timeout_s: 1e7}\n"), "");
  EXPECT_NE(LoadError("timeouts: {client_timeout_s: 1e20, request_timeout_s: 1e19}\n"), "");
}

// `cascade` is a gateway key (its model cascade): serve, which runs one model, does not take it.
TEST(ServerConfigTest, AnApiKeysCascadeIsTheGatewaysOnly) {
  EXPECT_NE(LoadError("api_keys: [{key: a, tenant: a, cascade: deny}]\n").find("cascade"),
            std::string::npos);
  EXPECT_EQ(LoadError("api_keys: [{key: a, tenant: a}]\n"), "");
}

// The timeout hierarchy is checked once the file, a scenario and the flags are merged: a file
// that sets only the clients' timeout is fine with a shorter deadline given as a flag.
TEST(ServerConfigTest, TheHierarchyIsCheckedOnTheMergedSettings) {
  ServerConfig c = LoadServerConfigFromString("timeouts: {client_timeout_s: 2}\n", "k.yaml");
  EXPECT_THROW(ValidateServerConfig(c, "k.yaml"), config::ConfigError);  // 2 s < 4.5 s deadline
  c.engine.request_timeout_s = 1.5;  // as --request-timeout-s 1.5 sets it
  EXPECT_NO_THROW(ValidateServerConfig(c, "k.yaml and flags"));
  // Unset, the clients' timeout follows the deadline: a scenario's 100 s deadline just works.
  ServerConfig d;
  d.engine.request_timeout_s = 100;
  EXPECT_DOUBLE_EQ(ClientTimeoutS(d), 100.5);
  EXPECT_NO_THROW(ValidateServerConfig(d, "flags"));
}

TEST(ServerConfigTest, ServesOwnFlagsKeepTheFilesRanges) {
  ServerConfig c;
  c.threads = 100000;  // as --threads 100000 sets it: once crashed after listening
  EXPECT_THROW(ValidateServerConfig(c, "flags"), config::ConfigError);
  c.threads = 0;
  c.max_body_bytes = 2'000'000'000;
  EXPECT_THROW(ValidateServerConfig(c, "flags"), config::ConfigError);
  c.max_body_bytes = 1 << 20;
  c.model = "";
  EXPECT_THROW(ValidateServerConfig(c, "flags"), config::ConfigError);
}

TEST(ServerConfigFuzzRegressionsTest, LargestTimeoutsStillBecomeDeadlines) {
  const ServerConfig c = LoadServerConfigFromString(
      "server: {header_timeout_s: 1e6, idle_timeout_s: 1e6}\n"
      "timeouts: {client_timeout_s: 1e6, request_timeout_s: 999999, drain_timeout_s: 1e6}\n",
      "serve.yaml");
  const net::SteadyClock clock;
  EXPECT_GT(clock.At(clock.Now() + ClientTimeoutS(c)), clock.At(clock.Now()));
  ServerConfig flags = c;
  flags.engine.request_timeout_s = 2e6;  // as a --request-timeout-s flag would set it
  EXPECT_THROW(ValidateServerConfig(flags, "flags"), config::ConfigError);
}

}  // namespace
}  // namespace spillway::server
