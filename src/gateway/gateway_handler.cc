#include "gateway/gateway_handler.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/json.hpp>
#include <charconv>
#include <cmath>
#include <utility>

#include "api/overload_contract.h"
#include "api/request_parser.h"
#include "api/responses.h"
#include "api/routes.h"
#include "core/check.h"
#include "gateway/cache_key.h"
#include "gateway/exchange.h"
#include "gateway/relay.h"
#include "gateway/stage_request.h"
#include "routing/cascade.h"
#include "server/api_keys.h"
#include "server/prompt_content.h"
#include "server/refusal_replies.h"
#include "server/request_headers.h"

namespace spillway::gateway {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

/// Request headers not passed upstream: hop-by-hop (RFC 9110 §7.6.1) and framing, which the
/// gateway's own request writes.
bool PassRequestHeader(std::string_view name) {
  for (const std::string_view h :
       {"connection", "keep-alive", "transfer-encoding", "content-length", "host",
        "proxy-connection", "te", "trailer", "upgrade", "expect"}) {
    if (beast::iequals(name, h)) {
      return false;
    }
  }
  return true;
}

std::optional<std::int64_t> IntHeader(const net::Request& r, std::string_view name) {
  const auto it = r.find(name);
  if (it == r.end()) {
    return std::nullopt;
  }
  const std::string_view v(it->value().data(), it->value().size());
  std::int64_t out = 0;
  const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || ptr != v.data() + v.size()) {
    return std::nullopt;
  }
  return out;
}

using server::Error;

/// The upstream path of a completion request.
std::string_view relay_path(bool chat) { return chat ? "/v1/chat/completions" : "/v1/completions"; }

/// The degradation of the pool of `model` in `config` (none for a pool discovered from its
/// endpoints).
routing::DegradeConfig DegradeOf(const GatewayConfig& config, std::string_view model) {
  for (const PoolConfig& p : config.pools) {
    if (p.model == model) {
      return p.degrade;
    }
  }
  return {};
}

}  // namespace

GatewayHandler::GatewayHandler(const asio::any_io_executor& executor, const LiveState& state,
                               GatewayMetrics& metrics, const net::SteadyClock& clock,
                               const std::atomic<bool>& draining)
    : state_(state), metrics_(metrics), clock_(clock), draining_(draining) {
  const GatewayConfig& config = *state.Get()->config;
  door_.emplace(server::TenantDoorConfig(config.api_keys), clock.Now());
  quota_ = std::make_unique<SharedQuota>(executor, config.rate_limit, metrics, clock);
  quota_limits_ = QuotaLimitsOf(config.api_keys, config.rate_limit.shared());
  if (const routing::ResultCacheConfig& c = state.Get()->config->cache; c.enabled()) {
    cache_ = std::make_shared<routing::ResultCache>(c);
  }
}

std::shared_ptr<routing::ResultCache> GatewayHandler::Cache() {
  const std::lock_guard lock(door_mu_);
  return cache_;
}

void GatewayHandler::OnReload(const GatewayConfig& before, const GatewayConfig& after) {
  if (before.api_keys != after.api_keys) {
    const std::lock_guard lock(door_mu_);
    door_.emplace(server::TenantDoorConfig(after.api_keys), clock_.Now());
    // (rate_limit is restart-only: the running one's `shared` holds.)
    quota_limits_ = QuotaLimitsOf(after.api_keys, before.rate_limit.shared());
  }
  if (before.cache != after.cache) {
    const std::lock_guard lock(door_mu_);
    cache_ = after.cache.enabled() ? std::make_shared<routing::ResultCache>(after.cache) : nullptr;
  }
}

std::shared_ptr<EndpointPool> GatewayHandler::PoolFor(const GatewayState& state,
                                                      std::string_view model) {
  if (model.empty() && state.pools.size() == 1) {
    return state.pools.front();
  }
  for (const auto& p : state.pools) {
    if (p->model() == model) {
      return p;
    }
  }
  return nullptr;
}

asio::awaitable<void> GatewayHandler::SendError(net::HttpConnection& conn,
                                                const api::ApiError& error,
                                                const net::Headers& headers) {
  std::string body = api::ErrorJson(error);
  co_await conn.Reply(static_cast<unsigned>(error.http_status), "application/json", std::move(body),
                      headers);
}

void GatewayHandler::CacheGauges(const routing::ResultCache& cache) {
  const routing::ResultCache::Stats st = cache.stats();
  metrics_.cache_entries->Set(static_cast<double>(st.entries));
  metrics_.cache_bytes->Set(static_cast<double>(st.bytes));
}

asio::awaitable<void> GatewayHandler::SendCached(Exchange& x, routing::CachedAnswer answer) {
  metrics_.cache_lookups_total->With({x.model, "hit"}).Inc();
  metrics_.cascade_steps_total->With({x.model, "cache"}).Inc();
  x.Finish(metrics_, metrics_.completed_total, 200, "ok", "cache");
  const net::Headers headers = {{"X-Cache", "hit"}, {"X-Spillway-Served-Model", x.model}};
  if (!answer.streamed) {
    co_await x.conn.Reply(200, answer.content_type, std::move(answer.body), headers);
    co_return;
  }
  // The recorded stream, replayed at once.
  if (co_await x.conn.StartStream(headers) && co_await x.conn.WriteChunk(answer.body)) {
    co_await x.conn.EndStream();
  }
}

asio::awaitable<void> GatewayHandler::operator()(net::HttpConnection& conn) {
  const std::string_view path = api::PathOf(conn.target());
  const http::verb method = conn.request().method();
  const bool get = method == http::verb::get || method == http::verb::head;
  const bool completions = api::IsCompletionsPath(path);
  if (completions && method == http::verb::post) {
    co_await Completions(conn, path == "/v1/chat/completions");
    co_return;
  }
  // As serve: the wrong method on a known route is 405 with Allow.
  const bool get_route =
      path == "/v1/models" || path == "/health" || path == "/ready" || path == "/metrics";
  if (completions || (get_route && !get)) {
    const net::Headers allow = {{"Allow", completions ? "POST" : "GET, HEAD"}};
    co_await SendError(conn,
                       Error(405, completions ? "Use POST." : "Use GET.", "invalid_request_error",
                             "method_not_allowed"),
                       allow);
    co_return;
  }
  unsigned status = 200;
  std::string body;
  std::string_view type = "application/json";
  const std::shared_ptr<const GatewayState> state = state_.Get();
  if (path == "/v1/models" && get) {
    boost::json::array data;
    for (const auto& p : state->pools) {
      data.push_back({{"id", p->model()}, {"object", "model"}, {"owned_by", "spillway-gateway"}});
    }
    body =
        boost::json::serialize(boost::json::object{{"object", "list"}, {"data", std::move(data)}});
  } else if (path == "/health" && get) {
    body = R"({"status":"ok"})";
  } else if (path == "/ready" && get) {
    // Ready while not draining and some endpoint of every pool takes work.
    const Seconds now = clock_.Now();
    bool ready = !draining_.load();
    for (const auto& p : state->pools) {
      bool any = false;
      for (const EndpointView& v : p->View(now)) {
        any = any || v.health == routing::EndpointHealth::kHealthy;
      }
      ready = ready && any;
    }
    status = ready ? 200 : 503;
    body = draining_.load() ? R"({"status":"draining"})"
           : ready          ? R"({"status":"ready"})"
                            : R"({"status":"no_endpoint"})";
  } else if (path == "/metrics" && get) {
    body = metrics_.Render(state->pools, clock_.Now());
    type = "text/plain; version=0.0.4; charset=utf-8";
  } else {
    status = 404;
    body = api::ErrorJson(Error(404, "No route for " + std::string(path) + ".",
                                "invalid_request_error", "not_found"));
  }
  co_await conn.Reply(status, type, std::move(body));
}

asio::awaitable<void> GatewayHandler::Completions(net::HttpConnection& conn, bool chat) {
  const net::Request& request = conn.request();
  // The config and pools of this request, from its arrival to its end.
  const std::shared_ptr<const GatewayState> state = state_.Get();
  const GatewayConfig& config = *state->config;
  // Head passed it (its key, priority header, tenant's bucket and framing): who asks, and how
  // urgently. (A reload between the two may have removed its key: 401 then.)
  const auto auth = request[http::field::authorization];
  const server::ApiKey* key =
      server::FindApiKey(config.api_keys, std::string_view(auth.data(), auth.size()));
  if (key == nullptr) {
    metrics_.requests_total->With({"", "401", "invalid_api_key", "gateway"}).Inc();
    co_await SendError(conn, server::Unauthorized());
    co_return;
  }
  const auto h = request["X-Priority-Class"];
  const std::int32_t priority =  // (Head refused a header that is not a class)
      server::PriorityFor(*key, {h.data(), h.size()}).value_or(key->max_priority);
  auto parsed = api::ParseCompletionRequest(
      request.body(), chat ? api::Endpoint::kChatCompletions : api::Endpoint::kCompletions);
  if (!parsed) {
    metrics_.requests_total
        ->With({"", std::to_string(parsed.error().http_status), parsed.error().code, "gateway"})
        .Inc();
    co_await SendError(conn, parsed.error());
    co_return;
  }
  const api::CompletionRequest& req = *parsed;
  const std::shared_ptr<EndpointPool> pool = PoolFor(*state, req.model);
  if (pool == nullptr) {
    std::string served;
    for (const auto& p : state->pools) {
      served += (served.empty() ? "'" : ", '") + p->model() + "'";
    }
    if (req.model.empty()) {
      metrics_.requests_total->With({"", "400", "missing_required_parameter", "gateway"}).Inc();
      co_await SendError(conn,
                         Error(400, fmt::format("Name the model: this gateway serves {}.", served),
                               "invalid_request_error", "missing_required_parameter", "model"));
      co_return;
    }
    metrics_.requests_total->With({"", "404", "model_not_found", "gateway"}).Inc();
    co_await SendError(
        conn, Error(404,
                    fmt::format("The model '{}' does not exist; this gateway serves {}.", req.model,
                                served),
                    "invalid_request_error", "model_not_found", "model"));
    co_return;
  }
  const std::string& model = pool->model();

  routing::RouteRequest route;
  route.prompt_tokens = !req.prompt_token_ids.empty()
                            ? static_cast<std::int32_t>(req.prompt_token_ids.size())
                        : chat ? tokenizer_.CountChatTokens(req.messages)
                               : tokenizer_.CountTokens(req.prompt_text);
  route.priority = priority;
  if (request.find("x-llm-d-slo-ttft-ms") != request.end()) {
    const std::optional<std::int64_t> ms = IntHeader(request, "x-llm-d-slo-ttft-ms");
    if (!ms.has_value() || *ms <= 0 || *ms > 3'600'000) {
      metrics_.requests_total->With({model, "400", "invalid_slo", "gateway"}).Inc();
      co_await SendError(conn, Error(400,
                                     "x-llm-d-slo-ttft-ms must be a whole number of milliseconds "
                                     "in [1, 3600000].",
                                     "invalid_request_error", "invalid_slo"));
      co_return;
    }
    route.ttft_slo_s = static_cast<double>(*ms) / 1000.0;
  }
  // The flow fair shedding counts (routing::PoolConfig::fair_share), checked as serve does.
  const std::optional<std::string> fairness_id = server::FairnessId(request);
  if (!fairness_id.has_value()) {
    metrics_.requests_total->With({model, "400", "invalid_fairness_id", "gateway"}).Inc();
    co_await SendError(conn, Error(400, server::InvalidFairnessIdMessage(), "invalid_request_error",
                                   "invalid_fairness_id"));
    co_return;
  }
  route.flow = fairness_id->empty() ? key->tenant : *fairness_id;
  // Prefix-aware routing: the prompt's blocks named by their content, as serve names them.
  if (config.router.prefix.enabled) {
    route.prefix_blocks = routing::PromptPrefixBlocks(config.router.prefix, server::SegmentsOf(req),
                                                      route.prompt_tokens);
  }

  bool cascade = key->cascade;
  if (const auto it = request.find("X-Spillway-Cascade"); it != request.end()) {
    const std::string_view v(it->value().data(), it->value().size());
    if (!beast::iequals(v, "on") && !beast::iequals(v, "off")) {
      metrics_.requests_total->With({model, "400", "invalid_cascade", "gateway"}).Inc();
      co_await SendError(conn, Error(400, "X-Spillway-Cascade must be on or off.",
                                     "invalid_request_error", "invalid_cascade"));
      co_return;
    }
    cascade = cascade && beast::iequals(v, "on");
  }

  // The tenant's quotas (a cache hit spends them too); the token reservation is corrected when
  // the request ends: by the reply's usage, or all of it given back when no endpoint took it.
  const TenantQuotaLimits limits = QuotaLimitsFor(key->tenant);
  const double reserved_tokens =
      route.prompt_tokens + req.max_tokens.value_or(config.rate_limit.reserve_max_tokens);
  double charged_tokens = 0;  // (a reservation over the token burst spends the burst)
  if (limits.any()) {
    const bool allowed =
        co_await DecideQuota(conn, model, *key, limits, reserved_tokens, &charged_tokens);
    if (!allowed) {
      co_return;
    }
  }

  // The exact-result cache: whether the cache step may answer this request (the key's rule,
  // deterministic unless it says any, and the client's Cache-Control) and keep its answer.
  std::shared_ptr<routing::ResultCache> cache;
  std::optional<std::string> cache_key;
  bool cache_read = false;
  if (std::find(config.cascade_order.begin(), config.cascade_order.end(),
                routing::CascadeStep::kCache) != config.cascade_order.end() &&
      key->cache != server::ApiKey::Cache::kOff &&
      (key->cache == server::ApiKey::Cache::kAny || req.temperature == 0 || req.seed.has_value())) {
    cache = Cache();
    if (cache != nullptr && !HasCacheDirective(request, "no-store")) {
      cache_key = ResultCacheKey(key->tenant, model, relay_path(chat), request.body());
      cache_read = !HasCacheDirective(request, "no-cache");
    }
  }
  RelayCapture capture;
  if (cache_key.has_value()) {
    capture.limit = static_cast<std::size_t>(cache->config().max_entry_bytes);
  }

  Exchange x{conn,  config,      model, std::move(route), clock_.Now(), 0, {},
             false, key->tenant, false, std::nullopt};
  x.slo_s = x.route.ttft_slo_s.value_or(config.router.ttft_slo_s);
  // The token reservation's correction, at the request's end however it ends (a refusal's
  // before it is sent, so that the client's next request finds the tokens back).
  struct TokenCorrection {
    SharedQuota& quota;
    const TenantQuotaLimits& limits;
    const Exchange& x;
    double charged;  ///< what the token limit spent at admission
    bool settled = false;
    void Settle() {
      if (!std::exchange(settled, true)) {
        const double used = x.usage_tokens.has_value() ? static_cast<double>(*x.usage_tokens)
                            : x.relayed                ? charged
                                                       : 0.0;
        quota.AdjustTokens(limits, x.tenant, used - charged);
      }
    }
    ~TokenCorrection() { Settle(); }
  } correction{*quota_, limits, x, charged_tokens};
  pool->OnReceived(x.received_s);
  metrics_.received_total->Inc();
  metrics_.in_flight->Inc();

  RelayRequest& relay = x.relay;
  relay.path = std::string(relay_path(chat));
  relay.body = &request.body();
  relay.deadline_s = x.received_s + config.request_timeout_s;
  relay.connect_timeout_s = config.connect_timeout_s;
  relay.registry = &relays_;
  relay.want_usage = limits.tokens.has_value();
  for (const auto& f : request) {
    if (PassRequestHeader(f.name_string()) &&
        !beast::iequals(f.name_string(), "X-Priority-Class") &&
        !beast::iequals(f.name_string(), "X-Spillway-Cascade")) {
      relay.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    }
  }
  if (request.find("X-Priority-Class") != request.end() || priority != 0) {
    relay.headers.emplace_back("X-Priority-Class", std::to_string(priority));  // as clamped
  }

  // The model's pool, then its fallbacks in order; the cascade's stages over them.
  std::vector<std::shared_ptr<EndpointPool>> chain = {pool};
  std::vector<routing::DegradeConfig> degrade;
  for (const PoolConfig& p : config.pools) {
    if (p.model == model) {
      degrade.push_back(p.degrade);
      for (const std::string& f : p.fallbacks) {
        if (std::shared_ptr<EndpointPool> fallback = PoolFor(*state, f)) {
          chain.push_back(std::move(fallback));
        }
      }
    }
  }
  for (std::size_t k = degrade.size(); k < chain.size(); ++k) {
    degrade.push_back(DegradeOf(config, chain[k]->model()));
  }
  const std::vector<routing::CascadeStage> stages =
      routing::PlanCascade(config.cascade_order, degrade, cascade);
  std::string stage_body;  // the body as a stage sends it (another model, max_tokens clamped)
  std::optional<Refusal> refused;
  bool looked_up = false;  // the cache step missed: the answer says X-Cache: miss
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const routing::CascadeStage& stage = stages[s];
    if (stage.step == routing::CascadeStep::kCache) {
      if (cache_read && !looked_up) {
        if (std::optional<routing::CachedAnswer> hit = cache->Find(*cache_key, clock_.Now())) {
          co_await SendCached(x, std::move(*hit));
          co_return;
        }
        metrics_.cache_lookups_total->With({model, "miss"}).Inc();
        CacheGauges(*cache);  // (an expired entry found was dropped)
        looked_up = true;
      }
      continue;
    }
    EndpointPool& p = *chain[stage.pool];
    const Seconds now = clock_.Now();
    if (refused.has_value()) {  // what is left of the TTFT budget, after the stages before
      const std::optional<Seconds> budget = routing::CascadeBudget(x.slo_s, now - x.received_s);
      if (draining_.load() || !budget.has_value() || !routing::CascadesOn(refused->reason)) {
        break;
      }
      x.route.ttft_slo_s = *budget * stage.slo_fraction;
      // Every endpoint again: a clamped request is another request for the one that refused it
      // as asked (and a pool whose every endpoint was excluded would say 503 no_endpoint
      // instead of passing on its refusal).
      x.route.exclude.clear();
      const bool first_offer = std::none_of(stages.begin(), stages.begin() + s, [&](auto& e) {
        return e.step != routing::CascadeStep::kCache && e.pool == stage.pool;
      });
      if (first_offer) {
        p.OnReceived(now);
        metrics_.cascaded_total->With({model, p.model()}).Inc();
      }
    } else if (stage.slo_fraction < 1) {
      x.route.ttft_slo_s = x.slo_s * stage.slo_fraction;
    }
    x.route.may_wait = stage.may_wait;
    const std::optional<std::int32_t> clamp =
        routing::ClampedMaxTokens(req.max_tokens, stage.clamp_max_tokens);
    relay.reply_headers = {{"X-Spillway-Served-Model", p.model()}};
    std::vector<std::string> degraded;
    if (stage.pool != 0) {
      degraded.emplace_back("cascade");
    }
    if (clamp.has_value()) {
      degraded.push_back(fmt::format("max_tokens={}", *clamp));
    }
    if (!degraded.empty()) {
      relay.reply_headers.emplace_back("X-Degraded", fmt::format("{}", fmt::join(degraded, ", ")));
    }
    relay.body = &request.body();
    if (stage.pool != 0 || clamp.has_value()) {
      if (!StageBody(request.body(), chat, stage.pool != 0 ? p.model() : std::string_view(), clamp,
                     &stage_body)) {
        continue;  // a body the gateway cannot rewrite (never primary's: sent as asked)
      }
      relay.body = &stage_body;
    }
    if (looked_up) {
      relay.reply_headers.emplace_back("X-Cache", "miss");
    }
    // Only the model asked for, as asked, is kept: a degraded answer is not the request's.
    const bool keep = cache_key.has_value() && stage.step == routing::CascadeStep::kPrimary;
    relay.capture = keep ? &capture : nullptr;
    refused = co_await OnPool(x, p);
    if (!refused.has_value()) {
      metrics_.cascade_steps_total->With({model, std::string(routing::ToString(stage.step))}).Inc();
      if (clamp.has_value()) {
        metrics_.max_tokens_clamped_total->With({model}).Inc();
      }
      if (keep && x.storable) {
        const std::int64_t evicted =
            capture.complete ? cache->Store(*cache_key, std::move(capture.answer), clock_.Now())
                             : -1;
        if (evicted > 0) {
          metrics_.cache_evictions_total->Inc(static_cast<double>(evicted));
        }
        metrics_.cache_stores_total->With({model, evicted >= 0 ? "stored" : "not_kept"}).Inc();
        CacheGauges(*cache);
      }
      co_return;
    }
  }
  // (The primary stage, always there and before any other pool's, ended in a refusal.)
  SPILLWAY_CHECK(refused.has_value());
  metrics_.cascade_steps_total->With({model, "reject"}).Inc();
  correction.Settle();
  co_await SendRefusal(x, *refused);
}

}  // namespace spillway::gateway
