#include "gateway/gateway_config.h"

#include <fmt/format.h>
#include <cmath>
#include <optional>
#include <set>

#include "config/config_error.h"
#include "config/yaml_reader.h"
#include "net/redis_client.h"
#include "net/target.h"

namespace spillway::gateway {
namespace {

using config::ConfigError;
using config::Field;

double Timeout(const Field& f, double fallback) {
  return f.present() ? config::InRange(f, f.AsDouble(), 0, 1e6) : fallback;
}

/// A number of seconds in [lo, hi], as ValidateGatewayConfig checks the merged value (so the
/// file's error names its line); `fallback` when absent.
double SecondsIn(const Field& f, double fallback, double lo, double hi) {
  if (!f.present()) {
    return fallback;
  }
  const double v = f.AsDouble();
  if (!(v >= lo && v <= hi)) {
    f.Fail(fmt::format("must be in [{:g}, {:g}] (seconds)", lo, hi));
  }
  return v;
}

/// A number in [0, hi] (0 turns the feature off); `fallback` when absent.
double ZeroOrIn(const Field& f, double fallback, double hi) {
  if (!f.present()) {
    return fallback;
  }
  const double v = f.AsDouble();
  if (!(v >= 0 && v <= hi)) {
    f.Fail(fmt::format("must be in [0, {:g}]", hi));
  }
  return v;
}

std::int32_t IntIn(const Field& f, std::int64_t fallback, std::int64_t lo, std::int64_t hi) {
  const std::int64_t v = f.Int(fallback);
  if (v < lo || v > hi) {
    f.Fail(fmt::format("must be in [{}, {}]", lo, hi));
  }
  return static_cast<std::int32_t>(v);
}

routing::EngineKind KindOf(const Field& f) {
  routing::EngineKind kind{};
  if (!routing::ParseEngineKind(f.AsString(), &kind)) {
    f.Fail("must be one of vllm, sglang, tgi, llamacpp, spillway, openai");
  }
  return kind;
}

void ReadListen(const Field& s, GatewayConfig* c) {
  s.RequireKnownKeys({"host", "port", "threads", "max_connections", "max_body_bytes"});
  c->host = s["host"].String(c->host);
  c->port = static_cast<std::uint16_t>(IntIn(s["port"], c->port, 0, 65535));
  c->threads = IntIn(s["threads"], c->threads, 0, 256);
  c->max_connections = IntIn(s["max_connections"], c->max_connections, 1, 1000000);
  c->max_body_bytes = static_cast<std::size_t>(IntIn(s["max_body_bytes"], 1 << 20, 1024, 1 << 30));
}

void ReadRouter(const Field& s, GatewayConfig* c) {
  s.RequireKnownKeys({"policy", "ttft_slo_s", "stale_after_s", "staleness", "seed",
                      "prediction_quantile", "fair_share_min_ratio", "fair_share_window_s",
                      "prefix_aware", "prefix_block_tokens", "prefix_max_blocks",
                      "prefix_capacity_blocks"});
  routing::RouterConfig& r = c->router;
  if (const Field f = s["policy"];
      f.present() && !routing::ParseRouterPolicy(f.AsString(), &r.policy)) {
    f.Fail("must be one of gateway, round-robin, least-requests, llm-d");
  }
  if (const Field f = s["staleness"];
      f.present() && !routing::ParseStaleness(f.AsString(), &r.staleness)) {
    f.Fail("must be fail-open or fail-close");
  }
  r.ttft_slo_s = SecondsIn(s["ttft_slo_s"], r.ttft_slo_s, 0.001, 1e6);
  r.stale_after_s = SecondsIn(s["stale_after_s"], r.stale_after_s, 0.001, 1e6);
  r.seed = static_cast<std::uint64_t>(IntIn(s["seed"], 1, 0, 2147483647));
  if (const Field f = s["prediction_quantile"]; f.present()) {
    c->prediction.quantile = ZeroOrIn(f, c->prediction.quantile, 1);
  }
  c->fair_share.min_share_ratio =
      ZeroOrIn(s["fair_share_min_ratio"], c->fair_share.min_share_ratio, 1);
  c->fair_share.window_s = SecondsIn(s["fair_share_window_s"], c->fair_share.window_s, 0.001, 1e6);
  routing::PrefixRouting& p = r.prefix;
  p.enabled = s["prefix_aware"].Bool(p.enabled);
  p.block_tokens =
      static_cast<std::int32_t>(IntIn(s["prefix_block_tokens"], p.block_tokens, 1, 4096));
  p.max_blocks = static_cast<std::int32_t>(IntIn(s["prefix_max_blocks"], p.max_blocks, 1, 65536));
  p.capacity_blocks = IntIn(s["prefix_capacity_blocks"], p.capacity_blocks, 1, 100'000'000);
}

/// The URL's problem (net::ParseTarget's, as the gateway will parse it), or empty.
std::string UrlProblem(const std::string& url) {
  try {
    net::ParseTarget(url);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

/// host:port/path of an endpoint URL, to tell two spellings of one endpoint apart from two.
std::string Canonical(const std::string& url) { return net::ParseTarget(url).Key(); }

/// The first fallback of `pool` that is not the model of another of `models` (`twice` false) or
/// is named twice (`twice` true); nullopt when every one is fine.
struct BadFallback {
  std::string model;
  bool twice = false;
};
std::optional<BadFallback> FirstBadFallback(const PoolConfig& pool,
                                            const std::set<std::string>& models) {
  std::set<std::string> seen;
  for (const std::string& f : pool.fallbacks) {
    if (f == pool.model || models.count(f) == 0) {
      return BadFallback{f, false};
    }
    if (!seen.insert(f).second) {
      return BadFallback{f, true};
    }
  }
  return std::nullopt;
}

void ReadPools(const Field& pools, GatewayConfig* c) {
  // What ValidateGatewayConfig checks again once flags are merged, here with the file's lines.
  std::set<std::string> models;
  std::set<std::string> urls;
  const auto once = [&urls](const Field& f, const std::string& url) {
    if (UrlProblem(url).empty() && !urls.insert(Canonical(url)).second) {
      f.Fail("is listed twice (perhaps spelt another way)");
    }
  };
  for (const Field& p : pools.Items()) {
    p.RequireKnownKeys(
        {"model", "fallbacks", "degrade_max_tokens", "degrade_ttft_fraction", "endpoints"});
    PoolConfig pool;
    pool.model = p["model"].String("");
    pool.degrade.max_tokens =
        IntIn(p["degrade_max_tokens"], pool.degrade.max_tokens, 0, std::int64_t{1} << 24);
    if (const Field f = p["degrade_ttft_fraction"]; f.present()) {
      pool.degrade.ttft_fraction = f.AsDouble();
      if (!(pool.degrade.ttft_fraction > 0 && pool.degrade.ttft_fraction <= 1)) {
        f.Fail("must be in (0, 1] (a fraction of the TTFT SLO)");
      }
    }
    if (const Field f = p["fallbacks"]; f.present()) {
      if (!f.is_sequence()) {
        f.Fail("must be a list of model names");
      }
      if (pool.model.empty()) {
        f.Fail("needs the pool's model: a pool discovered from its endpoints has no cascade");
      }
      for (const Field& m : f.Items()) {
        pool.fallbacks.push_back(m.AsString());
      }
    }
    if (!pool.model.empty() && !models.insert(pool.model).second) {
      p["model"].Fail("is listed twice");
    }
    const Field endpoints = p["endpoints"];
    if (!endpoints.present() || !endpoints.is_sequence() || endpoints.Items().empty()) {
      endpoints.Fail("must be a list of at least one {url, kind}");
    }
    for (const Field& e : endpoints.Items()) {
      UpstreamConfig u;
      if (e.is_scalar()) {
        try {
          u = ParseEndpointFlag(e.AsString());
        } catch (const ConfigError& error) {
          e.FailSaying(error.what());  // (it names the value)
        }
      } else {
        e.RequireKnownKeys(
            {"url", "kind", "max_running", "service_rate_rps", "prefill_tokens_per_s"});
        if (!e["url"].present()) {
          e["url"].Fail("is required");
        }
        u.url = e["url"].AsString();
        if (const std::string problem = UrlProblem(u.url); !problem.empty()) {
          e["url"].FailSaying(problem);  // (it names the value)
        }
        if (e["kind"].present()) {
          u.kind = KindOf(e["kind"]);
        }
        routing::EndpointPriors& p = u.priors;
        p.max_running = IntIn(e["max_running"], p.max_running, 1, 1'000'000);
        u.max_running_given = e["max_running"].present();
        if (const Field f = e["service_rate_rps"]; f.present()) {
          p.service_rate_rps = config::InRange(f, f.AsDouble(), 1e-3, 1e9);
        }
        if (const Field f = e["prefill_tokens_per_s"]; f.present()) {
          p.prefill_tokens_per_s = config::InRange(f, f.AsDouble(), 1, 1e12);
        }
      }
      once(e.is_scalar() ? e : e["url"], u.url);
      pool.endpoints.push_back(std::move(u));
    }
    c->pools.push_back(std::move(pool));
  }
  std::size_t i = 0;
  for (const Field& p : pools.Items()) {
    if (const auto bad = FirstBadFallback(c->pools[i++], models)) {
      p["fallbacks"].FailSaying(fmt::format(
          "must name the models of other pools, each once; '{}' is not one", bad->model));
    }
  }
}

void ReadRateLimit(const Field& s, RateLimitConfig* r) {
  s.RequireKnownKeys({"redis", "decision_budget_s", "on_unavailable", "gateways", "key_prefix",
                      "retry_window_s", "reserve_max_tokens", "algorithm"});
  if (const Field f = s["redis"]; f.present()) {
    r->redis = f.AsString();
    std::string error;
    if (r->redis.empty()) {
      f.Fail("must name a Redis (leave rate_limit.redis out for none)");
    }
    if (!net::ParseRedisUrl(r->redis, &error)) {
      f.Fail(error);
    }
  }
  r->decision_budget_s = SecondsIn(s["decision_budget_s"], r->decision_budget_s, 0.0001, 10);
  if (const Field f = s["on_unavailable"]; f.present()) {
    const std::string v = f.AsString();
    if (v != "fail_open" && v != "fail_close") {
      f.Fail("must be fail_open or fail_close");
    }
    r->fail_open = v == "fail_open";
  }
  r->gateways = static_cast<std::int32_t>(IntIn(s["gateways"], r->gateways, 1, 10000));
  if (const Field f = s["key_prefix"]; f.present()) {
    r->key_prefix = f.AsString();
    if (r->key_prefix.empty() || r->key_prefix.find_first_of("{} \t\n") != std::string::npos) {
      f.Fail("must be a non-empty word without braces or spaces");
    }
  }
  r->retry_window_s = SecondsIn(s["retry_window_s"], r->retry_window_s, 0.001, 86400);
  r->reserve_max_tokens =
      static_cast<std::int32_t>(IntIn(s["reserve_max_tokens"], r->reserve_max_tokens, 1, 1 << 24));
  if (const Field f = s["algorithm"]; f.present()) {
    const std::string v = f.AsString();
    if (v != "gcra" && v != "fixed_window") {
      f.Fail("must be gcra or fixed_window");
    }
    r->fixed_window = v == "fixed_window";
  }
}

GatewayConfig Parse(const Field& root) {
  GatewayConfig c;
  if (!root.present()) {
    return c;
  }
  root.RequireKnownKeys({"listen", "router", "scrape", "timeouts", "retries", "queue", "health",
                         "cascade", "cache", "pools", "api_keys", "rate_limit"});
  server::LoadApiKeys(root["api_keys"], &c.api_keys, /*gateway=*/true);
  if (const Field s = root["listen"]; s.present()) {
    ReadListen(s, &c);
  }
  if (const Field s = root["router"]; s.present()) {
    ReadRouter(s, &c);
  }
  if (const Field s = root["scrape"]; s.present()) {
    s.RequireKnownKeys({"interval_s", "timeout_s"});
    c.scrape_interval_s = SecondsIn(s["interval_s"], c.scrape_interval_s, 0.01, 3600);
    c.scrape_timeout_s = SecondsIn(s["timeout_s"], c.scrape_timeout_s, 0.001, 3600);
  }
  if (const Field s = root["timeouts"]; s.present()) {
    s.RequireKnownKeys({"request_timeout_s", "connect_timeout_s", "drain_timeout_s"});
    c.request_timeout_s = SecondsIn(s["request_timeout_s"], c.request_timeout_s, 0.001, 1e6);
    c.connect_timeout_s = SecondsIn(s["connect_timeout_s"], c.connect_timeout_s, 0.001, 1e6);
    c.drain_timeout_s = SecondsIn(s["drain_timeout_s"], c.drain_timeout_s, 0.001, 1e6);
  }
  if (const Field s = root["retries"]; s.present()) {
    s.RequireKnownKeys({"max_attempts", "budget_ratio", "budget_window_s", "min_retries"});
    c.retry.max_attempts = IntIn(s["max_attempts"], c.retry.max_attempts, 1, 10);
    if (const Field f = s["budget_ratio"]; f.present()) {
      c.retry.budget_ratio = config::InRange(f, f.AsDouble(), -1e-12, 1);
    }
    c.retry.budget_window_s = Timeout(s["budget_window_s"], c.retry.budget_window_s);
    c.retry.min_retries = IntIn(s["min_retries"], c.retry.min_retries, 0, 1000000);
  }
  if (const Field s = root["queue"]; s.present()) {
    s.RequireKnownKeys({"max_wait_s", "standing_max_wait_s", "max_queued", "aging_s"});
    c.queue.max_wait_s = ZeroOrIn(s["max_wait_s"], c.queue.max_wait_s, 3600);
    c.queue.standing_max_wait_s =
        ZeroOrIn(s["standing_max_wait_s"], c.queue.standing_max_wait_s, 3600);
    c.queue.max_queued = IntIn(s["max_queued"], c.queue.max_queued, 0, 1000000);
    if (const Field f = s["aging_s"]; f.present()) {
      c.queue.aging_s = config::InRange(f, f.AsDouble(), 0.001, 1e6);
    }
  }
  if (const Field s = root["health"]; s.present()) {
    s.RequireKnownKeys(
        {"probe_interval_s", "eject_after_errors", "eject_base_s", "max_ejected_fraction"});
    c.probe_interval_s = Timeout(s["probe_interval_s"], c.probe_interval_s);
    c.health.eject_after_errors =
        IntIn(s["eject_after_errors"], c.health.eject_after_errors, 1, 1000);
    c.health.eject_base_s = Timeout(s["eject_base_s"], c.health.eject_base_s);
    if (const Field f = s["max_ejected_fraction"]; f.present()) {
      c.health.max_ejected_fraction = config::InRange(f, f.AsDouble(), -1e-12, 1);
    }
  }
  if (const Field s = root["cascade"]; s.present()) {
    s.RequireKnownKeys({"order"});
    if (const Field f = s["order"]; f.present()) {
      if (!f.is_sequence()) {
        f.Fail("must be a list of steps: cache, primary, clamp, fallback, reject");
      }
      c.cascade_order.clear();
      for (const Field& step : f.Items()) {
        routing::CascadeStep parsed{};
        if (!routing::ParseCascadeStep(step.AsString(), &parsed)) {
          step.Fail("must be one of cache, primary, clamp, fallback, reject");
        }
        c.cascade_order.push_back(parsed);
      }
      if (const std::string problem = routing::CascadeOrderError(c.cascade_order);
          !problem.empty()) {
        f.FailSaying(problem);
      }
    }
  }
  if (const Field s = root["rate_limit"]; s.present()) {
    ReadRateLimit(s, &c.rate_limit);
    if (c.rate_limit.fixed_window) {
      for (const auto& [key, k] : c.api_keys) {
        if (k.tokens_per_s > 0 || k.retry_rps > 0) {
          s["algorithm"].Fail(
              "fixed_window limits the request rate only (kept for comparison): a key with "
              "tokens_per_s or retry_rps needs gcra");
        }
      }
      if (!c.rate_limit.shared()) {
        s["algorithm"].Fail("fixed_window is a Redis algorithm: set rate_limit.redis");
      }
    }
  }
  if (const Field s = root["cache"]; s.present()) {
    s.RequireKnownKeys({"max_entries", "max_bytes", "ttl_s", "max_entry_bytes"});
    const auto count = [](const Field& f, std::int64_t fallback, std::int64_t hi) {
      const std::int64_t v = f.Int(fallback);
      if (v < 0 || v > hi) {
        f.Fail(fmt::format("must be in [0, {}]", hi));
      }
      return v;
    };
    routing::ResultCacheConfig& cache = c.cache;
    cache.max_entries = count(s["max_entries"], cache.max_entries, std::int64_t{1} << 32);
    cache.max_bytes = count(s["max_bytes"], cache.max_bytes, std::int64_t{1} << 40);
    cache.max_entry_bytes =
        count(s["max_entry_bytes"], cache.max_entry_bytes, std::int64_t{1} << 40);
    cache.ttl_s = SecondsIn(s["ttl_s"], cache.ttl_s, 0.001, 1e7);
  }
  if (const Field s = root["pools"]; s.present()) {
    if (!s.is_sequence()) {
      s.Fail("must be a list of {model, endpoints}");
    }
    ReadPools(s, &c);
  }
  return c;
}

}  // namespace

GatewayConfig LoadGatewayConfig(const std::string& path) {
  if (path.empty()) {
    return GatewayConfig{};
  }
  return Parse(Field::LoadFile(path));
}

GatewayConfig LoadGatewayConfigFromString(const std::string& yaml, const std::string& origin) {
  return Parse(Field::LoadString(yaml, origin));
}

UpstreamConfig ParseEndpointFlag(const std::string& value) {
  UpstreamConfig u;
  const std::size_t eq = value.find('=');
  const std::size_t scheme = value.find("://");
  if (eq != std::string::npos && (scheme == std::string::npos || eq < scheme)) {
    routing::EngineKind kind{};
    const std::string name = value.substr(0, eq);
    if (!routing::ParseEngineKind(name, &kind)) {
      throw ConfigError(fmt::format(
          "endpoint '{}': kind '{}' must be one of vllm, sglang, tgi, llamacpp, spillway, openai",
          value, name));
    }
    u.kind = kind;
    u.url = value.substr(eq + 1);
  } else {
    u.url = value;
  }
  if (const std::string problem = UrlProblem(u.url); !problem.empty()) {
    throw ConfigError(fmt::format("--endpoint {}", problem));
  }
  return u;
}

void ValidateGatewayConfig(const GatewayConfig& c, const std::string& origin) {
  auto fail = [&](const std::string& what) { throw ConfigError(origin + ": " + what); };
  std::set<std::string> urls;
  std::set<std::string> models;
  std::size_t endpoints = 0;
  for (const PoolConfig& p : c.pools) {
    if (!p.model.empty() && !models.insert(p.model).second) {
      fail(fmt::format("pools: model '{}' is listed twice", p.model));
    }
    if (p.endpoints.empty()) {
      fail(fmt::format("pools: model '{}' has no endpoints", p.model));
    }
    for (const UpstreamConfig& u : p.endpoints) {
      if (const std::string problem = UrlProblem(u.url); !problem.empty()) {
        fail(fmt::format("endpoint {}", problem));
      }
      if (!urls.insert(Canonical(u.url)).second) {
        fail(fmt::format("endpoint '{}' is listed twice (perhaps spelt another way)", u.url));
      }
      ++endpoints;
    }
  }
  if (endpoints == 0) {
    fail("no endpoints: give --endpoint URL (repeatable) or pools in --config");
  }
  for (const PoolConfig& p : c.pools) {
    if (const auto bad = FirstBadFallback(p, models)) {
      fail(
          bad->twice
              ? fmt::format("pools: model '{}': fallback '{}' is listed twice", p.model, bad->model)
              : fmt::format("pools: model '{}': fallback '{}' must be the model of "
                            "another pool{}",
                            p.model, bad->model, bad->model == p.model ? "" : " (none serves it)"));
    }
  }
  // The flags' values get the file's checks.
  const auto in = [&](const char* key, double v, double lo, double hi) {
    if (!(v >= lo && v <= hi)) {
      fail(fmt::format("{} must be in [{:g}, {:g}], got {:g}", key, lo, hi, v));
    }
  };
  in("scrape.interval_s (--scrape-interval-s)", c.scrape_interval_s, 0.01, 3600);
  in("scrape.timeout_s", c.scrape_timeout_s, 0.001, 3600);
  in("router.ttft_slo_s (--ttft-slo-s)", c.router.ttft_slo_s, 0.001, 1e6);
  in("router.stale_after_s (--stale-after-s)", c.router.stale_after_s, 0.001, 1e6);
  in("timeouts.request_timeout_s (--request-timeout-s)", c.request_timeout_s, 0.001, 1e6);
  in("timeouts.connect_timeout_s", c.connect_timeout_s, 0.001, 1e6);
  in("timeouts.drain_timeout_s (--drain-timeout-s)", c.drain_timeout_s, 0.001, 1e6);
  in("listen.threads (--threads)", c.threads, 0, 256);
  in("listen.max_connections (--max-connections)", c.max_connections, 1, 1000000);
  in("retries.max_attempts (--max-attempts)", c.retry.max_attempts, 1, 10);
  in("queue.max_wait_s (--queue-max-wait-s)", c.queue.max_wait_s, 0, 3600);
  in("router.prediction_quantile (--prediction-quantile)", c.prediction.quantile, 0, 1);
  in("router.fair_share_min_ratio (--fair-share-min-ratio)", c.fair_share.min_share_ratio, 0, 1);
  // Then their order (a NaN has failed its range above).
  if (!(c.request_timeout_s > c.queue.max_wait_s)) {
    fail(fmt::format(
        "queue.max_wait_s ({:g} s) must be below timeouts.request_timeout_s ({:g} s): a request "
        "would still wait when the gateway's deadline passes",
        c.queue.max_wait_s, c.request_timeout_s));
  }
  if (!(c.request_timeout_s > c.router.ttft_slo_s)) {
    fail(fmt::format("timeouts.request_timeout_s ({:g} s) must be above router.ttft_slo_s ({:g} s)",
                     c.request_timeout_s, c.router.ttft_slo_s));
  }
}

}  // namespace spillway::gateway
