#include "server/server_config.h"

#include <cmath>

#include "config/yaml_reader.h"

namespace spillway::server {

const std::map<std::string, std::vector<std::string>>& ConfigSectionKeys() {
  static const std::map<std::string, std::vector<std::string>> keys = {
      {"server",
       {"host", "port", "threads", "max_connections", "max_body_bytes", "header_timeout_s",
        "idle_timeout_s"}},
      {"engine",
       {"model", "profile", "profile_dir", "max_num_seqs", "max_num_batched_tokens", "slo_budgets",
        "slo_budget_context_tokens", "enable_chunked_prefill", "scheduling", "priority_aging_s",
        "max_preemptions", "long_prefill_token_threshold", "num_gpu_blocks", "max_model_len",
        "default_max_tokens", "propagate_cancellation"}},
      {"admission",
       {"policy", "ttft_slo_s", "tpot_slo_s", "kv_headroom", "max_num_queued_reqs",
        "max_num_queued_tokens", "degrade_max_tokens"}},
      {"timeouts", {"client_timeout_s", "request_timeout_s", "drain_timeout_s"}},
  };
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

template <typename T>
void ReadOptionalInt(const Field& f, std::optional<T>* out, std::int64_t lo, std::int64_t hi) {
  if (f.present()) {
    T v{};
    ReadInt(f, &v, lo, hi);
    *out = v;
  }
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
  e.RequireKnownKeys(ConfigSectionKeys().at("engine"));
  c->model = e["model"].String(c->model);
  c->profile = e["profile"].String(c->profile);
  c->profile_dir = e["profile_dir"].String(c->profile_dir);
  ReadOptionalInt(e["max_num_seqs"], &c->max_num_seqs, 1, 1 << 20);
  ReadOptionalInt(e["max_num_batched_tokens"], &c->max_num_batched_tokens, 1, 1 << 24);
  c->slo_budgets = e["slo_budgets"].Bool(c->slo_budgets);
  ReadInt(e["slo_budget_context_tokens"], &c->slo_budget_context_tokens, 1, 1 << 24);
  c->enable_chunked_prefill = e["enable_chunked_prefill"].Bool(c->enable_chunked_prefill);
  if (e["scheduling"].present()) {
    const std::string s = e["scheduling"].AsString();
    if (s != "fcfs" && s != "priority") {
      e["scheduling"].Fail("must be fcfs or priority");
    }
    c->scheduling = s == "priority" ? SchedulingPolicy::kPriority : SchedulingPolicy::kFcfs;
  }
  ReadPositive(e["priority_aging_s"], &c->priority_aging_s);
  ReadInt(e["max_preemptions"], &c->max_preemptions, 0, 1 << 20);
  ReadInt(e["long_prefill_token_threshold"], &c->long_prefill_token_threshold, 0, 1 << 20);
  ReadOptionalInt(e["num_gpu_blocks"], &c->num_gpu_blocks, 1, 1 << 30);
  ReadOptionalInt(e["max_model_len"], &c->max_model_len, 1, 1 << 24);
  ReadInt(e["default_max_tokens"], &c->default_max_tokens, 1, 1 << 24);
  c->propagate_cancellation = e["propagate_cancellation"].Bool(c->propagate_cancellation);
}

void LoadAdmission(const Field& a, ServerConfig* c) {
  a.RequireKnownKeys(ConfigSectionKeys().at("admission"));
  if (a["policy"].present() && !ParseAdmissionPolicy(a["policy"].AsString(), &c->policy)) {
    a["policy"].Fail("must be unbounded, tail-drop or predictive");
  }
  ReadPositive(a["ttft_slo_s"], &c->ttft_slo_s);
  ReadPositive(a["tpot_slo_s"], &c->tpot_slo_s);
  if (a["kv_headroom"].present()) {
    c->kv_headroom = config::InRange(a["kv_headroom"], a["kv_headroom"].AsDouble(), 0, 1);
  }
  ReadInt(a["max_num_queued_reqs"], &c->max_num_queued_reqs, 0, 1 << 24);
  ReadInt(a["max_num_queued_tokens"], &c->max_num_queued_tokens, 0, std::int64_t{1} << 40);
  ReadInt(a["degrade_max_tokens"], &c->degrade_max_tokens, 0, 1 << 24);
}

void LoadTimeouts(const Field& t, ServerConfig* c) {
  t.RequireKnownKeys(ConfigSectionKeys().at("timeouts"));
  ReadPositive(t["client_timeout_s"], &c->client_timeout_s);
  ReadPositive(t["request_timeout_s"], &c->request_timeout_s);
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
  LoadAdmission(root["admission"], &c);
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
  positive("admission.ttft_slo_s", c.ttft_slo_s);
  positive("admission.tpot_slo_s", c.tpot_slo_s);
  positive("engine.priority_aging_s", c.priority_aging_s);
  timeout("timeouts.client_timeout_s", c.client_timeout_s);
  timeout("timeouts.request_timeout_s", c.request_timeout_s);
  timeout("timeouts.drain_timeout_s", c.drain_timeout_s);
  if (!(c.kv_headroom > 0 && c.kv_headroom <= 1)) {
    fail("admission.kv_headroom: must be in (0, 1], got " + std::to_string(c.kv_headroom));
  }
  at_least("server.threads", c.threads, 0);
  at_least("server.max_connections", c.max_connections, 1);
  at_least("server.max_body_bytes", static_cast<std::int64_t>(c.max_body_bytes), 1024);
  at_least("engine.max_num_seqs", c.max_num_seqs.value_or(1), 1);
  at_least("engine.max_num_batched_tokens", c.max_num_batched_tokens.value_or(1), 1);
  at_least("engine.num_gpu_blocks", c.num_gpu_blocks.value_or(1), 1);
  at_least("engine.max_model_len", c.max_model_len.value_or(1), 1);
  at_least("engine.default_max_tokens", c.default_max_tokens, 1);
  at_least("engine.max_preemptions", c.max_preemptions, 0);
  at_least("engine.long_prefill_token_threshold", c.long_prefill_token_threshold, 0);
  at_least("engine.slo_budget_context_tokens", c.slo_budget_context_tokens, 1);
  if (c.slo_budget_context_tokens > (1 << 24)) {
    fail("engine.slo_budget_context_tokens: must be <= 16777216, got " +
         std::to_string(c.slo_budget_context_tokens));
  }
  at_least("admission.max_num_queued_reqs", c.max_num_queued_reqs, 0);
  at_least("admission.max_num_queued_tokens", c.max_num_queued_tokens, 0);
  at_least("admission.degrade_max_tokens", c.degrade_max_tokens, 0);
  // The timeout hierarchy of overload-and-failure-handling.txt §3.2, outer to inner.
  if (!(c.client_timeout_s > c.request_timeout_s)) {
    fail("timeouts.client_timeout_s (" + std::to_string(c.client_timeout_s) +
         ") must be greater than timeouts.request_timeout_s (" +
         std::to_string(c.request_timeout_s) + "): the server must answer before clients leave");
  }
  if (!(c.request_timeout_s > c.ttft_slo_s)) {
    fail("timeouts.request_timeout_s (" + std::to_string(c.request_timeout_s) +
         ") must be greater than admission.ttft_slo_s (" + std::to_string(c.ttft_slo_s) +
         "), which bounds the queue-ingress deadline");
  }
  if (c.api_keys.empty()) {
    return;
  }
  for (const auto& [key, k] : c.api_keys) {
    if (k.tenant.empty()) {
      fail("api_keys: every key needs a tenant");
    }
  }
}

}  // namespace spillway::server
