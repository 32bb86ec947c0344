#include "server/api_handler.h"

#include "engine/contract_status.h"

#include <fmt/format.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/verb.hpp>
#include <cctype>
#include <ctime>

#include "api/overload_contract.h"
#include "api/request_parser.h"
#include "api/responses.h"
#include "api/routes.h"
#include "server/api_keys.h"
#include "server/generation_end.h"
#include "server/prompt_content.h"
#include "server/refusal_replies.h"
#include "server/request_headers.h"

namespace spillway::server {
namespace {

namespace http = boost::beast::http;
constexpr auto kUse = asio::as_tuple(asio::use_awaitable);

/// GET /v1/models/{model}.
constexpr std::string_view kModelsPrefix = "/v1/models/";

/// 404 model_not_found (param "model") for a model this server does not serve.
api::ApiError ModelNotFound(std::string_view asked, std::string_view served) {
  return Error(
      404, fmt::format("The model '{}' does not exist; this server serves '{}'.", asked, served),
      "invalid_request_error", "model_not_found", "model");
}

}  // namespace

// One admitted generation, as the session drives it.
struct Generation {
  api::CompletionRequest request;
  api::ResponseMeta meta;
  std::int32_t prompt_tokens = 0;
  SubmitResult admitted;
  net::Headers headers;
  Seconds deadline_s = 0;  // the server's request deadline (SteadyClock seconds)
};

namespace {

// Watches, beside a request's event stream, for its client leaving and for the server's
// deadline, and reports either as an event on the request's own channel. The session then
// waits on the channel alone and never cancels a receive: Boost 1.81's channels can refuse
// later sends after a cancelled receive (chriskohlhoff/asio#1241, fixed after 1.81).
struct WatchState {
  bool stopped = false;
  asio::cancellation_signal cancel;  // must outlive the watcher's pending operations
};

asio::awaitable<void> Watch(net::HttpConnection& conn, std::shared_ptr<EventChannel> events,
                            std::chrono::steady_clock::time_point deadline,
                            std::shared_ptr<WatchState> state) {
  using namespace asio::experimental::awaitable_operators;
  asio::steady_timer timer(co_await asio::this_coro::executor, deadline);
  bool watch_socket = true;
  StreamEvent ev;
  for (;;) {
    if (watch_socket) {
      auto r = co_await (conn.WaitClientGone() || timer.async_wait(kUse));
      if (state->stopped) {
        co_return;  // the request is over; conn may belong to the next one
      }
      if (r.index() == 0 && !std::get<0>(r)) {
        watch_socket = false;  // the client sent more bytes (pipelining): only the deadline
        continue;
      }
      ev.kind = r.index() == 0 ? StreamEvent::Kind::kClientGone : StreamEvent::Kind::kTimeout;
    } else {
      co_await timer.async_wait(kUse);
      if (state->stopped) {
        co_return;
      }
      ev.kind = StreamEvent::Kind::kTimeout;
    }
    events->try_send(boost::system::error_code{}, ev);
    co_return;
  }
}

// Runs Watch for the lifetime of one generation.
class RequestWatch {
 public:
  RequestWatch(net::HttpConnection& conn, const std::shared_ptr<EventChannel>& events,
               std::chrono::steady_clock::time_point deadline, const asio::any_io_executor& ex)
      : state_(std::make_shared<WatchState>()) {
    // The completion handler keeps the state (and so the signal) alive until the watcher is
    // done with it.
    asio::co_spawn(ex, Watch(conn, events, deadline, state_),
                   asio::bind_cancellation_slot(state_->cancel.slot(),
                                                [keep = state_](const std::exception_ptr&) {}));
  }
  ~RequestWatch() {
    state_->stopped = true;
    state_->cancel.emit(asio::cancellation_type::terminal);
  }
  RequestWatch(const RequestWatch&) = delete;
  RequestWatch& operator=(const RequestWatch&) = delete;

 private:
  std::shared_ptr<WatchState> state_;
};

// Truncates `text` at the first stop string; true when one matched.
bool ApplyStop(std::string* text, const std::vector<std::string>& stop) {
  std::size_t cut = std::string::npos;
  for (const std::string& s : stop) {
    const std::size_t at = s.empty() ? std::string::npos : text->find(s);
    cut = std::min(cut, at);
  }
  if (cut == std::string::npos) {
    return false;
  }
  text->resize(cut);
  return true;
}

}  // namespace

ApiHandler::ApiHandler(const ServerConfig& config, std::int32_t max_model_len,
                       EngineService& engine, ServerMetrics& metrics,
                       const api::Tokenizer& tokenizer, const net::SteadyClock& clock,
                       const std::atomic<bool>& draining)
    : config_(config),
      max_model_len_(max_model_len),
      engine_(engine),
      metrics_(metrics),
      tokenizer_(tokenizer),
      clock_(clock),
      draining_(draining),
      door_(TenantDoorConfig(config.api_keys), clock.Now()) {}

net::EarlyReply ApiHandler::Early(const api::ApiError& error, net::Headers headers) {
  metrics_.http_requests_total->With({std::to_string(error.http_status)}).Inc();
  return {static_cast<unsigned>(error.http_status), api::ErrorJson(error), std::move(headers)};
}

std::optional<net::EarlyReply> ApiHandler::Head(const net::Request& head) {
  if (head.method() != http::verb::post ||
      !api::IsCompletionsPath(api::PathOf({head.target().data(), head.target().size()}))) {
    return std::nullopt;
  }
  const ApiKey* key = Authenticate(head);
  if (key == nullptr) {
    return Early(Unauthorized());
  }
  // A POST with neither Content-Length nor chunked framing has no body by HTTP's rules
  // (RFC 9112 section 6.3); say so rather than "invalid JSON".
  if (!head.has_content_length() && !head.chunked()) {
    return Early(Error(411, "The request needs a JSON body with Content-Length.",
                       "invalid_request_error", "length_required"));
  }
  if (const auto h = head["X-Priority-Class"];
      head.count("X-Priority-Class") > 1 ||
      !PriorityFor(*key, std::string_view(h.data(), h.size()))) {
    return Early(InvalidPriority());
  }
  AdmissionDecision d;
  net::EarlyReply reply;
  {
    const std::lock_guard lock(door_mu_);
    d = draining_.load() ? AdmissionController::Refusal(OverloadReason::kDraining, 1.0)
                         : door_.DecideRateLimit(AdmissionRequest{key->tenant, 0, 0}, clock_.Now());
    if (d.admitted()) {
      return std::nullopt;
    }
    reply.status = static_cast<unsigned>(ContractStatus(d.reason));
    reply.headers = OverloadHeaders(d);
    if (last_refusal_.body.empty() || last_refusal_.reason != d.reason ||
        last_refusal_.headers != reply.headers) {
      last_refusal_ = {
          d.reason, reply.headers,
          api::ErrorJson(OverloadError(d, engine_.config().admission.ttft_slo_s,
                                       engine_.config().admission.request_deadline_s))};
    }
    reply.body = last_refusal_.body;
  }
  metrics_.admission_decisions_total->With({"reject", std::string(ToString(d.reason)), key->tenant})
      .Inc();
  metrics_.http_requests_total->With({std::to_string(reply.status)}).Inc();
  return reply;
}

asio::awaitable<void> ApiHandler::Send(net::HttpConnection& conn, unsigned status,
                                       std::string&& body, const net::Headers& headers,
                                       std::string_view content_type) {
  metrics_.http_requests_total->With({std::to_string(status)}).Inc();
  co_await conn.Reply(status, content_type, std::move(body), headers);
}

asio::awaitable<void> ApiHandler::SendError(net::HttpConnection& conn, const api::ApiError& error,
                                            const net::Headers& headers) {
  co_await Send(conn, static_cast<unsigned>(error.http_status), api::ErrorJson(error), headers);
}

asio::awaitable<void> ApiHandler::operator()(net::HttpConnection& conn) {
  const std::string_view path = api::PathOf(conn.target());
  const auto method = conn.request().method();
  const bool get = method == http::verb::get || method == http::verb::head;
  if (api::IsCompletionsPath(path)) {
    if (method != http::verb::post) {
      const net::Headers allow = {{std::string("Allow"), std::string("POST")}};
      co_await SendError(
          conn, Error(405, "Use POST.", "invalid_request_error", "method_not_allowed"), allow);
      co_return;
    }
    co_await Completions(conn, path == "/v1/chat/completions");
  } else if ((path == "/v1/models" || path.starts_with(kModelsPrefix)) &&
             Authenticate(conn.request()) == nullptr) {
    // As vLLM with --api-key: the /v1 API needs a key; /health, /ready and /metrics do not.
    co_await SendError(conn, Unauthorized());
  } else if (!get && (path == "/v1/models" || path.starts_with(kModelsPrefix) ||
                      path == "/health" || path == "/ready" || path == "/metrics")) {
    const net::Headers allow = {{std::string("Allow"), std::string("GET, HEAD")}};
    co_await SendError(conn, Error(405, "Use GET.", "invalid_request_error", "method_not_allowed"),
                       allow);
  } else if (path == "/v1/models" && get) {
    const auto& exec = engine_.config().profile;
    co_await Send(conn, 200,
                  api::ModelsJson(config_.model, std::time(nullptr), "emulated:" + exec.name, true,
                                  max_model_len_));
  } else if (path.starts_with(kModelsPrefix) && get) {
    // OpenAI's "Retrieve model": GET /v1/models/{model}.
    const std::string_view id = path.substr(kModelsPrefix.size());
    if (id != config_.model) {
      co_await SendError(conn, ModelNotFound(id, config_.model));
      co_return;
    }
    const auto& exec = engine_.config().profile;
    co_await Send(conn, 200,
                  api::ModelJson(config_.model, std::time(nullptr), "emulated:" + exec.name, true,
                                 max_model_len_));
  } else if (path == "/health" && get) {
    // Liveness: the engine loop shows a sign of life at least once a second, even idle.
    const double silent_s = clock_.Now() - engine_.last_heartbeat_s();
    const bool alive = silent_s < 5.0;
    co_await Send(conn, alive ? 200 : 503,
                  fmt::format(R"({{"status":"{}","engine_silent_s":{:.3f}}})",
                              alive ? "ok" : "engine_stuck", silent_s));
  } else if (path == "/ready" && get) {
    const bool ready = !draining_.load();
    std::string body = ready ? R"({"status":"ready"})" : R"({"status":"draining"})";
    co_await Send(conn, ready ? 200 : 503, std::move(body));
  } else if (path == "/metrics" && get) {
    if (metrics_stalled_ != nullptr) {
      asio::steady_timer timer(co_await asio::this_coro::executor);
      for (int i = 0; i < 1200 && metrics_stalled_->load(); ++i) {
        timer.expires_after(std::chrono::milliseconds(50));
        co_await timer.async_wait(kUse);
      }
    }
    const net::Headers none;
    co_await Send(conn, 200, metrics_.Render(), none, "text/plain; version=0.0.4; charset=utf-8");
  } else {
    co_await SendError(conn, Error(404, "No route for " + std::string(path) + ".",
                                   "invalid_request_error", "not_found"));
  }
}

const ApiKey* ApiHandler::Authenticate(const net::Request& request) const {
  const auto auth = request[http::field::authorization];
  return FindApiKey(config_.api_keys, std::string_view(auth.data(), auth.size()));
}

asio::awaitable<void> ApiHandler::Completions(net::HttpConnection& conn, bool chat) {
  // Head passed this request: its key, framing, priority header and tenant's bucket.
  const ApiKey* key = Authenticate(conn.request());
  if (key == nullptr) {  // (not reached: Head refused it)
    co_await SendError(conn, Unauthorized());
    co_return;
  }
  const std::string tenant = key->tenant;
  auto parsed = api::ParseCompletionRequest(
      conn.request().body(), chat ? api::Endpoint::kChatCompletions : api::Endpoint::kCompletions);
  if (!parsed) {
    co_await SendError(conn, parsed.error());
    co_return;
  }
  Generation g;
  g.request = *std::move(parsed);
  const api::CompletionRequest& req = g.request;
  if (!req.model.empty() && req.model != config_.model) {
    co_await SendError(conn, ModelNotFound(req.model, config_.model));
    co_return;
  }
  // Prompt length, exact for token ids, approximate for text (see api/tokenizer.h).
  if (!req.prompt_token_ids.empty()) {
    g.prompt_tokens = static_cast<std::int32_t>(req.prompt_token_ids.size());
  } else if (chat) {
    g.prompt_tokens = tokenizer_.CountChatTokens(req.messages);
  } else {
    g.prompt_tokens = tokenizer_.CountTokens(req.prompt_text);
  }
  const std::int32_t room = max_model_len_ - g.prompt_tokens;
  const std::int32_t max_tokens =
      req.max_tokens.value_or(std::min(config_.default_max_tokens, std::max(room, 0)));
  if (room <= 0 || max_tokens > room) {
    co_await SendError(
        conn,
        Error(
            400,
            fmt::format("This model's maximum context length is {} tokens. However, you "
                        "requested {} tokens ({} in the prompt, {} for the completion).",
                        max_model_len_, g.prompt_tokens + max_tokens, g.prompt_tokens, max_tokens),
            "invalid_request_error", "context_length_exceeded", chat ? "messages" : "prompt"));
    co_return;
  }
  // Priority class: X-Priority-Class, never more urgent than the key allows.
  const auto h = conn.request()["X-Priority-Class"];
  const std::optional<std::int32_t> applied = PriorityFor(*key, {h.data(), h.size()});
  if (!applied.has_value()) {  // (not reached: Head refused it)
    co_await SendError(conn, InvalidPriority());
    co_return;
  }
  const std::int32_t priority = *applied;
  const std::optional<std::int32_t> emulated_output = EmulatedOutputTokens(conn.request());
  if (!emulated_output.has_value()) {
    co_await SendError(
        conn, Error(400,
                    fmt::format("{} must be given once, as an integer in [1, 16777216] (emulator "
                                "only: the output length at which the emulated model stops).",
                                api::kEmulatedOutputTokensHeader),
                    "invalid_request_error", "invalid_emulated_output_tokens"));
    co_return;
  }
  const std::optional<std::string> fairness_id = FairnessId(conn.request());
  if (!fairness_id.has_value()) {
    co_await SendError(conn, Error(400, InvalidFairnessIdMessage(), "invalid_request_error",
                                   "invalid_fairness_id"));
    co_return;
  }
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  // The prompt's content only matters to a prefix cache: not hashed without one.
  std::shared_ptr<const PromptSegments> segments =
      engine_.config().enable_prefix_caching ? SegmentsOf(req) : nullptr;
  const SubmitRequest submit{tenant,         g.prompt_tokens,  max_tokens,   priority,
                             req.ignore_eos, *emulated_output, *fairness_id, std::move(segments)};
  g.admitted = co_await engine_.Submit(submit, executor);
  const AdmissionDecision& d = g.admitted.decision;
  if (d.verdict == Verdict::kNeverFits) {  // no retry helps
    co_await SendError(conn, NeverServable(d, g.prompt_tokens, max_tokens, engine_.config()));
    co_return;
  }
  if (!d.admitted()) {
    co_await SendError(conn,
                       OverloadError(d, engine_.config().admission.ttft_slo_s,
                                     engine_.config().admission.request_deadline_s),
                       OverloadHeaders(d));
    co_return;
  }
  if (d.verdict == Verdict::kDegrade) {
    g.headers.emplace_back("X-Degraded", fmt::format("max_tokens={}", d.max_output_tokens));
  }
  g.headers.emplace_back("X-Priority-Class", std::to_string(priority));  // the class applied
  if (d.ttft_forecast_s >= 0 && std::isfinite(d.ttft_forecast_s)) {
    g.headers.emplace_back(std::string(api::kTtftForecastHeader),
                           fmt::format("{:.4f}", d.ttft_forecast_s));
  }
  g.meta.endpoint = req.endpoint;
  g.meta.id = fmt::format("{}-{:016x}", chat ? "chatcmpl" : "cmpl", next_response_id_++);
  g.meta.created_s = std::time(nullptr);
  g.meta.model = config_.model;
  g.deadline_s = clock_.Now() + engine_.config().admission.request_deadline_s;
  if (req.stream) {
    co_await Stream(conn, g);
  } else {
    co_await Generate(conn, g);
  }
}

GenerationLimits ApiHandler::Limits() const {
  return {engine_.config().admission.ttft_slo_s, engine_.config().admission.request_deadline_s,
          config_.drain_timeout_s};
}

asio::awaitable<void> ApiHandler::Generate(net::HttpConnection& conn, const Generation& g) {
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  const RequestWatch watch(conn, g.admitted.events, clock_.At(g.deadline_s), executor);
  const RequestId id = g.admitted.id;
  std::string text;
  std::int32_t tokens = 0;
  for (;;) {
    auto [ec, ev] = co_await g.admitted.events->async_receive(kUse);
    if (!ec && ev.kind == StreamEvent::Kind::kToken) {
      text += tokenizer_.Decode(ev.token_id);
      ++tokens;
      if (ApplyStop(&text, g.request.stop)) {
        engine_.FinishStop(id);
        co_await Send(conn, 200,
                      api::CompletionJson(g.meta, text, "stop", {g.prompt_tokens, tokens}),
                      g.headers);
        co_return;
      }
      continue;
    }
    const GenerationEnd end = EndOf(ev, static_cast<bool>(ec), Limits());
    if (end.abort) {
      engine_.Abort(id, *end.abort);
    }
    switch (end.kind) {
      case GenerationEnd::Kind::kClientGone:
        metrics_.http_requests_total->With({"499"}).Inc();  // nginx's "client closed request"
        conn.set_close();
        break;
      case GenerationEnd::Kind::kError:
        co_await SendError(conn, end.error, end.headers);
        break;
      case GenerationEnd::Kind::kFinished:
        co_await Send(conn, 200,
                      api::CompletionJson(g.meta, text, end.finish_reason,
                                          {g.prompt_tokens, ev.completion_tokens}),
                      g.headers);
        break;
    }
    co_return;
  }
}

asio::awaitable<void> ApiHandler::Stream(net::HttpConnection& conn, const Generation& g) {
  const RequestId id = g.admitted.id;
  metrics_.http_requests_total->With({"200"}).Inc();
  if (!co_await conn.StartStream(g.headers)) {
    engine_.Abort(id, AbortCause::kClientDisconnect);
    co_return;
  }
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  const RequestWatch watch(conn, g.admitted.events, clock_.At(g.deadline_s), executor);
  std::string text;  // only kept when stop strings need matching
  std::int32_t tokens = 0;
  auto finish = [&](std::string_view reason) -> asio::awaitable<void> {
    std::string out = api::SseData(api::StreamChunkJson(g.meta, "", tokens == 0, reason));
    if (g.request.include_usage) {
      out += api::SseData(api::UsageChunkJson(g.meta, {g.prompt_tokens, tokens}));
    }
    out += api::kSseDone;
    if (co_await conn.WriteChunk(out)) {
      co_await conn.EndStream();
    }
  };
  for (;;) {
    auto [ec, ev] = co_await g.admitted.events->async_receive(kUse);
    if (!ec && ev.kind == StreamEvent::Kind::kToken) {
      std::string piece = tokenizer_.Decode(ev.token_id);
      bool stopped = false;
      if (!g.request.stop.empty()) {
        const std::size_t before = text.size();
        text += piece;
        stopped = ApplyStop(&text, g.request.stop);
        piece = before < text.size() ? text.substr(before) : std::string();
      }
      if (!piece.empty() && !co_await conn.WriteChunk(api::SseData(
                                api::StreamChunkJson(g.meta, piece, tokens == 0, std::nullopt)))) {
        engine_.Abort(id, AbortCause::kClientDisconnect);
        co_return;
      }
      ++tokens;
      if (stopped) {
        engine_.FinishStop(id);
        co_await finish("stop");
        co_return;
      }
      continue;
    }
    const GenerationEnd end = EndOf(ev, static_cast<bool>(ec), Limits());
    if (end.abort) {
      engine_.Abort(id, *end.abort);
    }
    if (end.kind == GenerationEnd::Kind::kFinished) {
      co_await finish(end.finish_reason);
    } else if (end.kind == GenerationEnd::Kind::kError) {
      // The status went out with the 200 head: the error travels as an SSE event.
      const std::string out = api::SseData(api::ErrorJson(end.error)) + std::string(api::kSseDone);
      if (co_await conn.WriteChunk(out)) {
        co_await conn.EndStream();
      }
    }
    co_return;
  }
}

}  // namespace spillway::server
