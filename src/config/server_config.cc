#include "config/server_config.h"

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

void ReadPositive(const Field& f, double* out) {
  if (f.present()) {
    *out = config::Positive(f, f.AsDouble());
  }
}

void LoadListener(const Field& s, ServerConfig* c) {
  s.RequireKnownKeys(ConfigSectionKeys().at("server"));
  c->host = s["host"].String(c->host);
  ReadInt(s["port"], &c->port, 0, 65535);
  ReadInt(s["threads"], &c->threads, 0, 256);
  ReadInt(s["max_connections"], &c->max_connections, 1, 1'000'000);
  ReadInt(s["max_body_bytes"], &c->max_body_bytes, 1024, 1 << 30);
  ReadPositive(s["header_timeout_s"], &c->header_timeout_s);
  ReadPositive(s["idle_timeout_s"], &c->idle_timeout_s);
}

void LoadEngine(const Field& e, ServerConfig* c) {
  config::ReadEngineSettings(e, "engine", OwnKeys().at("engine"), &c->engine);
  c->model = e["model"].String(c->model);
  c->profile_dir = e["profile_dir"].String(c->profile_dir);
  ReadInt(e["default_max_tokens"], &c->default_max_tokens, 1, 1 << 24);
}

void LoadTimeouts(const Field& t, ServerConfig* c) {
  config::ReadEngineSettings(t, "timeouts", OwnKeys().at("timeouts"), &c->engine);
  ReadPositive(t["client_timeout_s"], &c->client_timeout_s);
  ReadPositive(t["drain_timeout_s"], &c->drain_timeout_s);
}

void LoadKeys(const Field& keys, ServerConfig* c) {
  if (!keys.present()) {
    return;
  }
  for (const Field& k : keys.Items()) {
    k.RequireKnownKeys({"key", "tenant", "rate_rps", "burst", "max_priority"});
    const std::string key = k["key"].AsString();
    if (key.empty() || c->api_keys.count(key) != 0) {
      k["key"].Fail("must be a non-empty key not listed before");
    }
    ApiKey a;
    a.tenant = k["tenant"].AsString();
    if (k["rate_rps"].present()) {
      a.rate_rps = config::NonNegative(k["rate_rps"], k["rate_rps"].AsDouble());
    }
    if (k["burst"].present()) {
      a.burst = k["burst"].AsDouble();
      if (!(a.burst >= 1)) {
        k["burst"].Fail("must be >= 1");
      }
    }
    ReadInt(k["max_priority"], &a.max_priority, 0, 1 << 20);
    c->api_keys.emplace(key, a);
  }
}

ServerConfig ParseServerConfig(const Field& root, const std::string& origin) {
  ServerConfig c;
  if (root.present() && !root.is_map()) {
    root.Fail("must be a map of sections");
  }
  root.RequireKnownKeys({"server", "engine", "admission", "timeouts", "api_keys"});
  LoadListener(root["server"], &c);
  LoadEngine(root["engine"], &c);
  config::ReadEngineSettings(root["admission"], "admission", {}, &c.engine);
  LoadTimeouts(root["timeouts"], &c);
  LoadKeys(root["api_keys"], &c);
  ValidateServerConfig(c, origin);
  return c;
}

}  // namespace

ServerConfig LoadServerConfig(const std::string& path) {
  if (path.empty()) {
    return ServerConfig{};
  }
  return ParseServerConfig(Field::LoadFile(path), path);
}

ServerConfig LoadServerConfigFromString(const std::string& yaml, const std::string& origin) {
  return ParseServerConfig(Field::LoadString(yaml, origin), origin);
}

void ValidateServerConfig(const ServerConfig& c, const std::string& origin) {
  auto fail = [&](const std::string& what) { throw config::ConfigError(origin + ": " + what); };
  // The same ranges the YAML reader enforces, for values that came from flags.
  config::ValidateEngineSettings(c.engine, origin);
  auto positive = [&](const char* name, double v) {
    if (!(std::isfinite(v) && v > 0)) {
      fail(std::string(name) + ": must be a finite number > 0, got " + std::to_string(v));
    }
  };
  auto at_least = [&](const char* name, std::int64_t v, std::int64_t lo) {
    if (v < lo) {
      fail(std::string(name) + ": must be >= " + std::to_string(lo) + ", got " + std::to_string(v));
    }
  };
  auto timeout = [&](const char* name, double v) {
    positive(name, v);
    if (v > kMaxTimeoutS) {
      fail(std::string(name) + ": must be <= 1e6 s, got " + std::to_string(v));
    }
  };
  timeout("server.header_timeout_s", c.header_timeout_s);
  timeout("server.idle_timeout_s", c.idle_timeout_s);
  timeout("timeouts.client_timeout_s", c.client_timeout_s);
  timeout("timeouts.drain_timeout_s", c.drain_timeout_s);
  at_least("server.threads", c.threads, 0);
  at_least("server.max_connections", c.max_connections, 1);
  at_least("server.max_body_bytes", static_cast<std::int64_t>(c.max_body_bytes), 1024);
  at_least("engine.default_max_tokens", c.default_max_tokens, 1);
  // The timeout hierarchy of overload-and-failure-handling.txt §3.2, outer to inner.
  const config::EngineSettings e = config::Overlay(config::EngineDefaults(), c.engine);
  const double request_timeout_s = *e.request_timeout_s;
  const double ttft_slo_s = *e.ttft_slo_s;
  if (!(c.client_timeout_s > request_timeout_s)) {
    fail("timeouts.client_timeout_s (" + std::to_string(c.client_timeout_s) +
         ") must be greater than timeouts.request_timeout_s (" + std::to_string(request_timeout_s) +
         "): the server must answer before clients leave");
  }
  if (!(request_timeout_s > ttft_slo_s)) {
    fail("timeouts.request_timeout_s (" + std::to_string(request_timeout_s) +
         ") must be greater than admission.ttft_slo_s (" + std::to_string(ttft_slo_s) +
         "), which bounds the queue-ingress deadline");
  }
  for (const auto& [key, k] : c.api_keys) {
    if (k.tenant.empty()) {
      fail("api_keys: every key needs a tenant");
    }
  }
}

}  // namespace spillway::server
