// GatewayHandler's work on one pool of a request's cascade: its placement (at once, or after a
// wait in the pool's queue), the attempts on its endpoints with the retries the pool allows, and
// the refusal it ends with when none served the request (gateway_handler.h says the contract).

#include <fmt/format.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <utility>

#include "api/overload_contract.h"
#include "api/responses.h"
#include "gateway/exchange.h"
#include "gateway/gateway_handler.h"
#include "gateway/relay.h"
#include "server/refusal_replies.h"

namespace spillway::gateway {

namespace {
namespace asio = boost::asio;
}  // namespace

asio::awaitable<void> GatewayHandler::SendRefusal(Exchange& x, const Refusal& r) {
  if (r.endpoint.has_value()) {  // an endpoint's refusal, passed on as it sent it
    const AttemptResult& a = *r.endpoint;
    x.Finish(metrics_, metrics_.failed_total, a.status, r.reason.empty() ? "relayed" : r.reason,
             "endpoint");
    std::string body = a.body;
    co_await x.conn.Reply(a.status, "application/json", std::move(body), a.headers);
    co_return;
  }
  x.Finish(metrics_, r.bucket, static_cast<unsigned>(r.error.http_status), r.error.code, "gateway");
  co_await SendError(x.conn, r.error, api::ContractHeaders(r.error.code, r.retry_after_s));
}

asio::awaitable<std::optional<GatewayHandler::Refusal>> GatewayHandler::OnPool(Exchange& x,
                                                                               EndpointPool& pool) {
  const GatewayConfig& config = x.config;
  routing::RouteRequest& route = x.route;
  const std::string& served = pool.model();
  auto finish = [&](metrics::Counter* bucket, unsigned status, std::string_view reason,
                    std::string_view by) { x.Finish(metrics_, bucket, status, reason, by); };

  // The first stage: routed at once, or after a wait in the pool's queue for a slot.
  const routing::Ticket ticket = next_ticket_.fetch_add(1);
  std::shared_ptr<Waiter> waiter;  // only where requests may wait (the queue is on)
  if (config.queue.max_wait_s > 0) {
    waiter = std::make_shared<Waiter>(co_await asio::this_coro::executor);
  }
  const Seconds arrived_s = clock_.Now();
  routing::Pool::Placement placement = pool.Admit(ticket, route, arrived_s, waiter);
  if (placement.kind == routing::Pool::Placement::Kind::kQueued) {
    std::optional<routing::Pool::Placement> left =
        co_await WaitInQueue(x.conn, pool, ticket, waiter, placement.expires_s);
    metrics_.queue_wait_seconds->Observe(clock_.Now() - arrived_s);
    if (!left.has_value()) {
      finish(metrics_.cancelled_total, 499, "client_gone", "client");
      co_return std::nullopt;
    }
    placement = std::move(*left);
  }
  routing::Pool::Pick pick = placement.pick;

  std::optional<AttemptResult> last_refusal;  // an endpoint's refusal, passed on if no retry
  std::int32_t attempts = 0;
  for (;;) {
    if (attempts > 0) {
      pick = pool.Route(route, clock_.Now());
    }
    const routing::RouteDecision& d = pick.decision;
    if (!d.forwarded()) {
      if (last_refusal.has_value()) {
        break;  // the retry found no other endpoint: pass the endpoint's refusal on
      }
      Refusal r;
      r.error = RefusalError(d, attempts > 0, served, placement.waited_s, config);
      r.reason = r.error.code;
      r.retry_after_s = d.retry_after_s;
      r.bucket = attempts > 0 ? metrics_.failed_total : metrics_.shed_total;
      co_return r;
    }
    const auto i = static_cast<std::size_t>(d.endpoint);
    if (attempts > 0) {
      metrics_.retries_total->Inc();
    }
    ++attempts;
    const std::shared_ptr<const Upstream> upstream = pool.upstream(i);
    metrics_.forwarded_total->With({served, upstream->url}).Inc();
    metrics_.prefix_prompt_tokens_total->With({served}).Inc(route.prompt_tokens);
    metrics_.prefix_matched_tokens_total->With({served}).Inc(d.cached_tokens);
    // The engine did not take it: its blocks may not be there. Taken back once, before the
    // client hears the answer (its next request must not be routed by the old belief).
    bool taken_back = false;
    auto take_back = [&] {
      if (!std::exchange(taken_back, true)) {
        pool.OnNotStarted(i, route);
      }
    };
    const AttemptResult r = co_await RelayAttempt(
        x.conn, *upstream, x.relay, clock_,
        [&](Seconds ttft_s) {
          pool.OnFirstToken(i, route.prompt_tokens, ttft_s, pick.alone,
                            pick.decision.predicted_ttft_s);
          metrics_.ttft_seconds->Observe(ttft_s);
        },
        [&](unsigned /*status*/) { take_back(); });
    const Seconds now = clock_.Now();
    pool.OnFinish(i, now, r.end == AttemptResult::End::kRelayed && r.status == 200);
    using End = AttemptResult::End;
    x.relayed = x.relayed || (r.end != End::kRefused && r.end != End::kUnreachable);
    if (r.status != 200 || r.end == End::kRefused || r.end == End::kUnreachable) {
      take_back();
    }
    if (r.usage_tokens.has_value()) {
      x.usage_tokens = r.usage_tokens;
    }
    switch (r.end) {
      case End::kRelayed:
        if (r.status >= 500) {
          pool.OnError(i, now);
        } else {
          pool.OnSuccess(i);
        }
        metrics_.served_total->With({x.model, served}).Inc();
        if (r.status == 200 && !r.stream_error.empty()) {
          finish(metrics_.failed_total, 200, r.stream_error, "endpoint");
        } else if (r.status == 200) {
          metrics_.e2e_seconds->Observe(now - x.received_s);
          x.storable = !r.degraded;
          finish(metrics_.completed_total, 200, "ok", "endpoint");
        } else {
          finish(metrics_.failed_total, r.status, "relayed", "endpoint");
        }
        co_return std::nullopt;
      case End::kBroken:
        pool.OnError(i, now);
        finish(metrics_.failed_total, 200, "upstream_unavailable", "gateway");
        co_return std::nullopt;
      case End::kDeadline:
        if (!r.streamed) {
          co_await SendError(
              x.conn,
              server::ContractError("request_timeout",
                                    fmt::format("The gateway's request deadline of {:g} s passed.",
                                                config.request_timeout_s)));
        }
        finish(metrics_.failed_total, r.streamed ? 200 : 504, "request_timeout", "gateway");
        co_return std::nullopt;
      case End::kTooLarge:  // the endpoint answered: not its failure, the gateway's limit
        pool.OnSuccess(i);
        co_await SendError(
            x.conn,
            server::Error(
                502,
                fmt::format("The endpoint's answer is larger than the {} MiB the gateway relays "
                            "whole; ask for less (max_tokens, n, logprobs) or stream it.",
                            kMaxRelayedAnswerBytes >> 20),
                "api_error", "upstream_answer_too_large"));
        finish(metrics_.failed_total, 502, "upstream_answer_too_large", "gateway");
        co_return std::nullopt;
      case End::kClientGone:
        x.conn.set_close();  // (net::HttpConnection::WatchClientGone says why)
        finish(metrics_.cancelled_total, 499, "client_gone", "client");
        co_return std::nullopt;
      case End::kDraining:  // the drain ran out of time
        if (!r.streamed) {
          co_await SendError(
              x.conn,
              server::ContractError("draining", "The gateway shut down before the reply came."),
              api::ContractHeaders("draining", 1));
        }
        finish(metrics_.failed_total, r.streamed ? 200 : 503, "draining", "gateway");
        co_return std::nullopt;
      case End::kRefused:
        pool.OnSuccess(i);
        pool.OnEndpointRefused(
            route.flow, api::IsRefusalForLoad(static_cast<int>(r.status), r.overload_reason), now);
        if (r.overload_reason == "draining") {
          pool.OnDraining(i, now);
        }
        last_refusal = r;
        break;
      case End::kUnreachable:
        pool.OnError(i, now);
        last_refusal.reset();
        break;
    }
    routing::RetryDenial why{};
    if (!pool.MayRetry(&route, d.endpoint, attempts, clock_.Now(), &why)) {
      metrics_.retries_denied_total->With({std::string(routing::ToString(why))}).Inc();
      break;
    }
  }
  // No retry: the endpoint's refusal as it sent it, or that the endpoint failed.
  Refusal out;
  out.bucket = metrics_.failed_total;
  if (last_refusal.has_value()) {
    out.reason = last_refusal->overload_reason;
    out.endpoint = std::move(last_refusal);
    co_return out;
  }
  out.retry_after_s = pool.DrainTime(clock_.Now());
  out.error = server::ContractError(
      "upstream_unavailable",
      fmt::format("The endpoint failed (refused, reset or closed the connection) and no other "
                  "endpoint could be tried. Retry after {:.0f} s.",
                  out.retry_after_s));
  out.reason = out.error.code;
  co_return out;
}

api::ApiError GatewayHandler::RefusalError(const routing::RouteDecision& d, bool after_attempts,
                                           const std::string& model, Seconds waited_s,
                                           const GatewayConfig& config) {
  if (after_attempts) {
    return server::ContractError(
        "upstream_unavailable",
        "The endpoint failed and no other endpoint of the pool could be tried.");
  }
  const std::string reason(ToString(d.reason));
  switch (d.reason) {
    case OverloadReason::kDraining:
      return server::ContractError(reason,
                                   "The gateway is shutting down; the request was not sent.");
    case OverloadReason::kQueueDeadlineExceeded:
      return server::ContractError(
          reason, fmt::format("The request waited {:.0f} ms in the gateway's queue and no "
                              "endpoint of '{}' could start it within the TTFT SLO. Retry after "
                              "{:.0f} s.",
                              waited_s * 1000, model, d.retry_after_s));
    case OverloadReason::kFairShare:
      return server::ContractError(
          reason, fmt::format("'{}' is overloaded and this request's flow (its fairness ID, "
                              "else its tenant) is served above its share while another flow is "
                              "refused. Retry after {:.0f} s.",
                              model, d.retry_after_s));
    default:
      break;
  }
  if (d.verdict == Verdict::kShed) {
    const char* no_wait = config.queue.max_wait_s > 0
                              ? ", and it cannot wait for one here (the wait queue is full, or its "
                                "prefill alone would miss the SLO)"
                              : "";
    return server::ContractError(
        reason, fmt::format("No endpoint of '{}' can start this request within the TTFT SLO{}. "
                            "Retry after {:.0f} s.",
                            model, no_wait, d.retry_after_s));
  }
  return server::ContractError(
      reason, fmt::format("No endpoint of '{}' takes work (all down, ejected or draining). Retry "
                          "after {:.0f} s.",
                          model, d.retry_after_s));
}

asio::awaitable<std::optional<routing::Pool::Placement>> GatewayHandler::WaitInQueue(
    net::HttpConnection& conn, EndpointPool& pool, routing::Ticket ticket,
    std::shared_ptr<Waiter> waiter, Seconds expires_s) {
  using namespace asio::experimental::awaitable_operators;
  constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
  waiter->timer.expires_at(clock_.At(expires_s));
  // Woken by the pool (the timer cancelled), by the timer, or by the client leaving.
  auto woke = co_await (waiter->timer.async_wait(kTuple) || conn.WaitClientGone());
  if (woke.index() == 1 && !std::get<1>(woke)) {
    co_await waiter->timer.async_wait(kTuple);  // bytes from the client (pipelining): the timer
  }
  const bool gone = woke.index() == 1 && std::get<1>(woke);
  const Seconds now = clock_.Now();
  std::optional<routing::Pool::Placement> left = pool.Resolve(ticket, *waiter, gone, now);
  if (gone && left.has_value()) {
    if (left->pick.decision.forwarded()) {  // routed just as the client left: nothing is sent
      pool.OnFinish(static_cast<std::size_t>(left->pick.decision.endpoint), now, false);
    }
    left.reset();
  }
  co_return left;
}

}  // namespace spillway::gateway
