#include "config/server_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "config/yaml_reader.h"

namespace spillway::server {

namespace {

/// Serve's own keys in each section, beside the engine settings table's.
const std::map<std::string, std::vector<std::string>>& OwnKeys() {
  static const std::map<std::string, std::vector<std::string>> keys = {
      {"server",
       {"host", "port", "threads", "max_connections", "max_body_bytes", "header_timeout_s",
        "idle_timeout_s"}},
      {"engine", {"model", "profile_dir", "default_max_tokens"}},
      {"admission", {}},
      {"timeouts", {"client_timeout_s", "drain_timeout_s"}},
  };
  return keys;
}

}  // namespace

const std::map<std::string, std::vector<std::string>>& ConfigSectionKeys() {
  static const std::map<std::string, std::vector<std::string>> keys = [] {
    std::map<std::string, std::vector<std::string>> all = OwnKeys();
    for (auto& [section, list] : all) {
      const std::vector<std::string> table = config::SettingKeys(section);
      list.insert(list.end(), table.begin(), table.end());
    }
    return all;
  }();
  return keys;
}

namespace {

using config::Field;

/// Upper bound on every *_timeout_s (about 11.6 days). The server turns timeouts into Asio
/// deadlines (std::chrono nanoseconds, milliseconds); 1e300 s would overflow the conversion.
constexpr double kMaxTimeoutS = 1e6;
// Ranges of serve's own keys, for the file and the flags alike.
constexpr std::int64_t kMaxThreads = 256;
constexpr std::int64_t kMaxConnections = 1'000'000;
constexpr std::int64_t kMinBodyBytes = 1024;
constexpr std::int64_t kMaxBodyBytes = std::int64_t{1} << 30;
constexpr std::int64_t kMaxDefaultMaxTokens = 1 << 24;

template <typename T>
void ReadInt(const Field& f, T* out, std::int64_t lo, std::int64_t hi) {
  if (!f.present()) {
    return;
  }
  const std::int64_t v = f.AsInt();
  if (v < lo || v > hi) {
    f.Fail("must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  *out = static_cast<T>(v);
}

/// A timeout in (0, 1e6] s (Asio deadlines are std::chrono nanoseconds: 1e300 s would
/// overflow the conversion).
void ReadTimeout(const Field& f, double* out) {
  if (f.present()) {
    const double v = config::Positive(f, f.AsDouble());
    if (v > kMaxTimeoutS) {
      f.Fail("must be <= 1e6 s");
    }
    *out = v;
  }
}

void LoadListener(const Field& s, ServerConfig* c) {
  s.RequireKnownKeys(ConfigSectionKeys().at("server"));
  c->host = s["host"].String(c->host);
  ReadInt(s["port"], &c->port, 0, 65535);
  ReadInt(s["threads"], &c->threads, 0, kMaxThreads);
  ReadInt(s["max_connections"], &c->max_connections, 1, kMaxConnections);
  ReadInt(s["max_body_bytes"], &c->max_body_bytes, kMinBodyBytes, kMaxBodyBytes);
  ReadTimeout(s["header_timeout_s"], &c->header_timeout_s);
  ReadTimeout(s["idle_timeout_s"], &c->idle_timeout_s);
}

void LoadEngine(const Field& e, ServerConfig* c) {
  config::ReadEngineSettings(e, "engine", OwnKeys().at("engine"), &c->engine);
  c->model = e["model"].String(c->model);
  c->profile_dir = e["profile_dir"].String(c->profile_dir);
  ReadInt(e["default_max_tokens"], &c->default_max_tokens, 1, kMaxDefaultMaxTokens);
}

void LoadTimeouts(const Field& t, ServerConfig* c) {
  config::ReadEngineSettings(t, "timeouts", OwnKeys().at("timeouts"), &c->engine);
  if (t["client_timeout_s"].present()) {
    double v = 0;
    ReadTimeout(t["client_timeout_s"], &v);
    c->client_timeout_s = v;
  }
  ReadTimeout(t["drain_timeout_s"], &c->drain_timeout_s);
}

}  // namespace

void LoadApiKeys(const config::Field& keys, std::map<std::string, ApiKey>* out, bool gateway) {
  if (!keys.present()) {
    return;
  }
  for (const config::Field& k : keys.Items()) {
    if (gateway) {
      k.RequireKnownKeys({"key", "tenant", "rate_rps", "burst", "max_priority", "cascade", "cache",
                          "tokens_per_s", "token_burst", "retry_rps", "retry_burst"});
    } else {
      k.RequireKnownKeys({"key", "tenant", "rate_rps", "burst", "max_priority"});
    }
    const std::string key = k["key"].AsString();
    if (key.empty() || out->count(key) != 0) {
      k["key"].Fail("must be a non-empty key not listed before");
    }
    ApiKey a;
    a.tenant = k["tenant"].AsString();
    // A rate is 0 (none) or in [1e-6, 1e12] a second (one a fortnight at the slowest).
    const auto rate = [&k](const char* name, double* out, double lo) {
      if (const config::Field f = k[name]; f.present()) {
        *out = f.AsDouble();
        if (!(*out == 0 && lo == 0) && !(*out >= std::max(lo, 1e-6) && *out <= 1e12)) {
          f.Fail(lo == 0 ? "must be 0 (no limit) or in [1e-6, 1e12]"
                         : fmt::format("must be in [{:g}, 1e12]", lo));
        }
      }
    };
    rate("rate_rps", &a.rate_rps, 0);
    if (k["burst"].present()) {
      a.burst = k["burst"].AsDouble();
      if (!(a.burst >= 1)) {
        k["burst"].Fail("must be >= 1");
      }
    }
    ReadInt(k["max_priority"], &a.max_priority, 0, 1 << 20);
    rate("tokens_per_s", &a.tokens_per_s, 0);
    rate("token_burst", &a.token_burst, 1);
    rate("retry_rps", &a.retry_rps, 0);
    rate("retry_burst", &a.retry_burst, 1);
    if (k["token_burst"].present() && a.tokens_per_s == 0) {
      k["token_burst"].Fail("needs tokens_per_s (a token rate above 0)");
    }
    if (k["retry_burst"].present() && a.retry_rps == 0) {
      k["retry_burst"].Fail("needs retry_rps (a retry rate above 0)");
    }
    if (const config::Field c = k["cascade"]; c.present()) {
      const std::string v = c.AsString();
      if (v != "allow" && v != "deny") {
        c.Fail("must be allow or deny");
      }
      a.cascade = v == "allow";
    }
    if (const config::Field c = k["cache"]; c.present()) {
      const std::string v = c.AsString();
      if (v != "deterministic" && v != "any" && v != "off") {
        c.Fail("must be deterministic, any or off");
      }
      a.cache = v == "any"   ? ApiKey::Cache::kAny
                : v == "off" ? ApiKey::Cache::kOff
                             : ApiKey::Cache::kDeterministic;
    }
    out->emplace(key, a);
  }
}

namespace {

ServerConfig ParseServerConfig(const Field& root) {
  ServerConfig c;
  if (root.present() && !root.is_map()) {
    root.Fail("must be a map of sections");
  }
  root.RequireKnownKeys({"server", "engine", "admission", "timeouts", "api_keys"});
  LoadListener(root["server"], &c);
  LoadEngine(root["engine"], &c);
  config::ReadEngineSettings(root["admission"], "admission", {}, &c.engine);
  LoadTimeouts(root["timeouts"], &c);
  LoadApiKeys(root["api_keys"], &c.api_keys);
  return c;
}

}  // namespace

ServerConfig LoadServerConfig(const std::string& path) {
  if (path.empty()) {
    return ServerConfig{};
  }
  return ParseServerConfig(Field::LoadFile(path));
}

ServerConfig LoadServerConfigFromString(const std::string& yaml, const std::string& origin) {
  return ParseServerConfig(Field::LoadString(yaml, origin));
}

double ClientTimeoutS(const ServerConfig& c) {
  if (c.client_timeout_s) {
    return *c.client_timeout_s;
  }
  return *config::Overlay(config::EngineDefaults(), c.engine).request_timeout_s + 0.5;
}

void ValidateServerConfig(const ServerConfig& c, const std::string& origin) {
  auto fail = [&](const std::string& what) { throw config::ConfigError(origin + ": " + what); };
  // The same ranges the YAML reader enforces, for values that came from flags.
  config::ValidateEngineSettings(c.engine, origin);
  auto in_range = [&](const char* name, std::int64_t v, std::int64_t lo, std::int64_t hi) {
    if (v < lo || v > hi) {
      fail(fmt::format("{}: must be an integer in [{}, {}], got {}", name, lo, hi, v));
    }
  };
  auto timeout = [&](const char* name, double v) {
    if (!(std::isfinite(v) && v > 0 && v <= kMaxTimeoutS)) {
      fail(fmt::format("{}: must be a number in (0, 1e6] s, got {:g}", name, v));
    }
  };
  in_range("server.port (--port)", c.port, 0, 65535);
  in_range("server.threads (--threads)", c.threads, 0, kMaxThreads);
  in_range("server.max_connections (--max-connections)", c.max_connections, 1, kMaxConnections);
  in_range("server.max_body_bytes (--max-body-bytes)", static_cast<std::int64_t>(c.max_body_bytes),
           kMinBodyBytes, kMaxBodyBytes);
  in_range("engine.default_max_tokens (--default-max-tokens)", c.default_max_tokens, 1,
           kMaxDefaultMaxTokens);
  timeout("server.header_timeout_s (--header-timeout-s)", c.header_timeout_s);
  timeout("server.idle_timeout_s (--idle-timeout-s)", c.idle_timeout_s);
  timeout("timeouts.drain_timeout_s (--drain-timeout-s)", c.drain_timeout_s);
  const double client_timeout_s = ClientTimeoutS(c);
  timeout("timeouts.client_timeout_s (--client-timeout-s)", client_timeout_s);
  if (c.model.empty()) {
    fail("engine.model (--model): must not be empty");
  }
  // The timeout hierarchy of overload-and-failure-handling.txt §3.2, outer to inner.
  const config::EngineSettings e = config::Overlay(config::EngineDefaults(), c.engine);
  const double request_timeout_s = *e.request_timeout_s;
  const double ttft_slo_s = *e.ttft_slo_s;
  if (!(client_timeout_s > request_timeout_s)) {
    fail(fmt::format(
        "timeouts.client_timeout_s ({:g} s) must be greater than timeouts.request_timeout_s "
        "({:g} s): the server must answer before clients leave",
        client_timeout_s, request_timeout_s));
  }
  if (!(request_timeout_s > ttft_slo_s)) {
    fail(fmt::format(
        "timeouts.request_timeout_s ({:g} s) must be greater than admission.ttft_slo_s ({:g} s), "
        "which bounds the queue-ingress deadline",
        request_timeout_s, ttft_slo_s));
  }
  for (const auto& [key, k] : c.api_keys) {
    if (k.tenant.empty()) {
      fail("api_keys: every key needs a tenant");
    }
  }
}

}  // namespace spillway::server
