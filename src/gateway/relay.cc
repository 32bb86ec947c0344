#include "gateway/relay.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_suffix.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <tuple>

#include "api/overload_contract.h"
#include "api/responses.h"
#include "gateway/usage_scan.h"
#include "net/parse_buffered.h"
#include "net/response_head.h"
#include "server/refusal_replies.h"

namespace spillway::gateway {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
constexpr auto kUse = asio::as_tuple(asio::use_awaitable);

/// Largest upstream answer read whole (a non-streaming completion or an error body): beyond
/// it, 502 upstream_answer_too_large (AttemptResult::End::kTooLarge). Streams have no limit.
constexpr std::uint64_t kMaxAnswerBytes = kMaxRelayedAnswerBytes;

/// A reused connection that fails this soon after the request was sent, without a byte of
/// answer, was closed by the endpoint before it read the request (its close and our request
/// crossed, one round trip: well under a millisecond between endpoints in one data centre,
/// with room for a busy event loop); the request is sent again on a new connection.
constexpr Seconds kStaleCloseWithin_s = 0.05;

/// How long the SSE error event that ends a stream at the deadline or the drain may wait for
/// a client that stopped reading, before the connection is simply closed.
constexpr std::chrono::milliseconds kLastEventTimeout{500};

/// Response headers not passed on: hop-by-hop (RFC 9110 §7.6.1) and those the gateway's own
/// framing writes.
bool PassResponseHeader(std::string_view name) {
  for (const std::string_view h :
       {"connection", "keep-alive", "transfer-encoding", "content-length", "content-type", "server",
        "date", "proxy-connection", "te", "trailer", "upgrade"}) {
    if (beast::iequals(name, h)) {
      return false;
    }
  }
  return true;
}

/// The upstream's headers the client gets, with the gateway's `added` in place of any of the
/// same names.
net::Headers PassedHeaders(const http::response_header<>& head, const net::Headers& added) {
  net::Headers out;
  for (const auto& f : head) {
    const std::string_view name = f.name_string();
    const bool replaced = std::any_of(added.begin(), added.end(),
                                      [&](const auto& a) { return beast::iequals(a.first, name); });
    if (!replaced && PassResponseHeader(name)) {
      out.emplace_back(std::string(name), std::string(f.value()));
    }
  }
  const std::size_t first_added = out.size();
  out.insert(out.end(), added.begin(), added.end());
  // X-Degraded is a list: the endpoint's own degradation (its clamp) stays beside the gateway's.
  for (std::size_t i = first_added; i < out.size(); ++i) {
    if (beast::iequals(out[i].first, "X-Degraded")) {
      const auto [from, to] = head.equal_range("X-Degraded");
      for (auto f = from; f != to; ++f) {
        out[i].second += ", " + std::string(f->value());
      }
    }
  }
  return out;
}

std::string HeaderOr(const http::response_header<>& h, std::string_view name) {
  const auto it = h.find(name);
  return it == h.end() ? std::string() : std::string(it->value());
}

}  // namespace

namespace {

/// Registers the attempt (its deadline), starts the client watch, and undoes both when the
/// attempt ends.
class WatchScope {
 public:
  WatchScope(net::HttpConnection& conn, asio::ip::tcp::socket& upstream,
             const asio::any_io_executor& ex, std::chrono::steady_clock::time_point deadline,
             RelayRegistry& registry)
      : watch_(std::make_shared<RelayWatch>()), registry_(registry) {
    watch_->upstream = &upstream;
    watch_->client = &conn;
    watch_->executor = ex;
    watch_->deadline = deadline;
    registry_.Add(watch_);
    conn.WatchClientGone(watch_->peek_byte, watch_->cancel.slot(), [w = watch_](bool gone) {
      if (w->stopped || !gone) {
        return;  // the attempt ended first, or pipelined bytes came
      }
      w->client_gone = true;
      w->CloseUpstream();
    });
  }
  ~WatchScope() {
    registry_.Remove(watch_);
    watch_->stopped = true;
    watch_->upstream = nullptr;
    watch_->client = nullptr;
    watch_->cancel.emit(asio::cancellation_type::terminal);
  }
  WatchScope(const WatchScope&) = delete;
  WatchScope& operator=(const WatchScope&) = delete;
  bool client_gone() const { return watch_->client_gone; }
  bool closed_for_drain() const { return watch_->closed_for_drain; }
  bool deadline_passed() const { return watch_->deadline_passed; }
  /// The upstream socket is handed on (kept idle for reuse): the watch no longer closes it.
  void Release() const { watch_->upstream = nullptr; }

 private:
  std::shared_ptr<RelayWatch> watch_;
  RelayRegistry& registry_;
};

/// The request's head as sent to `up` (keep-alive: a reply read to its end leaves the
/// connection for the next request); its body is RelayRequest::body, sent as it came.
std::string RequestHead(const Upstream& up, const RelayRequest& r) {
  std::string head;
  head.reserve(256);
  net::AppendRequestHead(&head, "POST", up.target.Path(r.path), up.target.host_header, r.headers,
                         r.body->size());
  return head;
}

/// Puts an idle connection of `up`, if it has one, into `socket`; true when it did.
bool AdoptIdle(const Upstream& up, asio::ip::tcp::socket& socket) {
  std::optional<ConnectionCache::Socket> idle = up.connections->Take();
  if (!idle.has_value()) {
    return false;
  }
  socket = std::move(*idle);
  return true;
}

/// Hands `socket`'s connection to `up`'s idle connections when the answer was read to its end
/// with keep-alive and nothing came after it (bytes past the answer would be read as the next
/// request's answer); the watch no longer closes it. Otherwise leaves it to be closed.
void KeepIdleIfClean(const Upstream& up, asio::ip::tcp::socket& socket,
                     const http::response_parser<http::string_body>& parser,
                     const beast::flat_buffer& buffer, const WatchScope& watch) {
  if (!parser.is_done() || !parser.keep_alive() || buffer.size() > 0) {
    return;
  }
  watch.Release();
  up.connections->Give(std::move(socket));
}

/// Connects `socket` to `up` (non-blocking, no Nagle) within `by`.
asio::awaitable<beast::error_code> Connect(asio::ip::tcp::socket& socket, const Upstream& up,
                                           std::chrono::steady_clock::time_point by) {
  beast::tcp_stream connecting(socket.get_executor());  // for its connect timeout
  connecting.expires_at(by);
  auto [ec, endpoint] = co_await connecting.async_connect(up.addresses, kUse);
  if (!ec) {
    socket = connecting.release_socket();
    beast::error_code ignored;
    socket.set_option(asio::ip::tcp::no_delay(true), ignored);
    socket.non_blocking(true, ec);
  }
  co_return ec;
}

/// Sends `buffers` as far as the socket takes them without waiting (the usual case: one
/// gathered send), the rest asynchronously.
asio::awaitable<beast::error_code> Send(asio::ip::tcp::socket& socket,
                                        const std::array<asio::const_buffer, 2>& buffers) {
  beast::error_code ec;
  const std::size_t sent = socket.send(buffers, 0, ec);
  if (!ec && sent == asio::buffer_size(buffers)) {
    co_return ec;
  }
  if (ec && ec != asio::error::would_block && ec != asio::error::try_again) {
    co_return ec;
  }
  beast::buffers_suffix<std::array<asio::const_buffer, 2>> rest(buffers);
  rest.consume(ec ? 0 : sent);
  std::tie(ec, std::ignore) = co_await asio::async_write(socket, rest, kUse);
  co_return ec;
}

/// The SSE error event that ends a stream the gateway cannot finish.
std::string StreamError(std::string_view reason, std::string_view message) {
  return api::SseData(api::ErrorJson(server::ContractError(reason, std::string(message))));
}

/// Scans a relayed stream, across chunk boundaries (the last bytes of each chunk are kept to
/// scan with the next), for its SSE error event (`data: {"error": ...}`, as serve and vLLM send
/// one) and its end (`data: [DONE]`, as every OpenAI-compatible server ends a stream).
class StreamScan {
 public:
  /// Scans `chunk`; true once an error event was seen (code() then names it).
  bool Feed(std::string_view chunk) {
    window_.append(chunk);
    done_ = done_ || window_.find("data: [DONE]") != std::string::npos;
    if (code_.empty()) {
      if (const std::size_t at = window_.find(R"(data: {"error")"); at != std::string::npos) {
        constexpr std::string_view kCode = R"("code":")";
        const std::size_t c = window_.find(kCode, at);
        const std::size_t end = c == std::string::npos ? c : window_.find('"', c + kCode.size());
        code_ = end == std::string::npos ? "stream_error"
                                         : window_.substr(c + kCode.size(), end - c - kCode.size());
      }
    }
    if (window_.size() > kKeep) {
      window_.erase(0, window_.size() - kKeep);
    }
    return !code_.empty();
  }
  const std::string& code() const { return code_; }
  /// The stream said it was over: `data: [DONE]`, or an error event.
  bool ended() const { return done_ || !code_.empty(); }

 private:
  static constexpr std::size_t kKeep = 64;
  std::string window_;
  std::string code_;
  bool done_ = false;
};

}  // namespace

asio::awaitable<AttemptResult> RelayAttempt(net::HttpConnection& conn, const Upstream& up,
                                            const RelayRequest& request,
                                            const net::SteadyClock& clock,
                                            const FirstBytes& on_first_bytes,
                                            const NotServed& on_not_served) {
  AttemptResult out;
  const auto ex = co_await asio::this_coro::executor;
  asio::ip::tcp::socket socket(ex);
  const Seconds sent_s = clock.Now();
  const auto deadline = clock.At(request.deadline_s);
  const auto connect_by = std::min(deadline, clock.At(sent_s + request.connect_timeout_s));
  const WatchScope watch(conn, socket, ex, deadline, *request.registry);
  auto ended = [&](AttemptResult::End end, const beast::error_code& ec) {
    out.end = watch.client_gone()        ? AttemptResult::End::kClientGone
              : watch.closed_for_drain() ? AttemptResult::End::kDraining
              : watch.deadline_passed() ||
                      (ec == beast::error::timeout && clock.Now() >= request.deadline_s)
                  ? AttemptResult::End::kDeadline
                  : end;
    out.error = ec.message();
    return out;
  };

  const std::string head_bytes = RequestHead(up, request);
  const std::array<asio::const_buffer, 2> req = {asio::buffer(head_bytes),
                                                 asio::buffer(*request.body)};
  beast::flat_buffer buffer;
  std::optional<http::response_parser<http::string_body>> fresh;  // one per try
  // An idle keep-alive connection first; when the endpoint had closed it after all, once more
  // on a new one, but only when the endpoint cannot have begun the work: the request never
  // went out whole, or the connection failed without a byte of answer within
  // kStaleCloseWithin_s of the send (the endpoint's keep-alive timeout crossing the request).
  // A later failure may come after the endpoint started generating: it is the caller's to
  // retry, counted and under the retry budget, on another endpoint.
  for (bool reused = AdoptIdle(up, socket);; reused = false) {
    if (!reused) {
      const beast::error_code connect_ec = co_await Connect(socket, up, connect_by);
      if (connect_ec || watch.client_gone() || watch.closed_for_drain()) {
        co_return ended(AttemptResult::End::kUnreachable, connect_ec);
      }
    }
    fresh.emplace();
    fresh->body_limit(kMaxAnswerBytes);  // before the head: Beast checks Content-Length there
    beast::error_code head_ec = co_await Send(socket, req);
    const bool delivered = !head_ec;
    const Seconds delivered_s = clock.Now();
    bool heard = false;  // an interim answer came: the endpoint has the request
    if (!head_ec) {
      std::tie(head_ec, std::ignore) =
          co_await http::async_read_header(socket, buffer, *fresh, kUse);
    }
    // An interim answer (100 Continue, 103 Early Hints) is not the answer: read past it (RFC
    // 9110 §15.2). A switch of protocols (101) is not one a completion can take.
    while (!head_ec && fresh->get().result_int() / 100 == 1) {
      heard = true;
      if (fresh->get().result_int() == 101) {
        head_ec = http::error::bad_status;
        break;
      }
      fresh.emplace();
      fresh->body_limit(kMaxAnswerBytes);
      std::tie(head_ec, std::ignore) =
          co_await http::async_read_header(socket, buffer, *fresh, kUse);
    }
    if (!head_ec) {
      break;
    }
    if (head_ec == http::error::body_limit) {  // its Content-Length says too large
      co_return ended(AttemptResult::End::kTooLarge, head_ec);
    }
    const bool endpoint_may_have_it =
        heard || buffer.size() > 0 ||
        (delivered && clock.Now() - delivered_s > kStaleCloseWithin_s);
    if (!reused || endpoint_may_have_it || watch.deadline_passed() || watch.client_gone() ||
        watch.closed_for_drain()) {
      co_return ended(AttemptResult::End::kUnreachable, head_ec);
    }
    beast::error_code ignored;
    socket.close(ignored);
  }
  http::response_parser<http::string_body>& parser = *fresh;
  const auto& head = parser.get();
  out.status = head.result_int();
  out.degraded = head.find("X-Degraded") != head.end();
  const bool sse = head[http::field::content_type].starts_with("text/event-stream");
  if (out.status != 200 || !sse) {
    beast::error_code body_ec;
    net::ParseBuffered(parser, buffer, body_ec);  // a small answer came with its head
    if (!body_ec && !parser.is_done()) {
      std::tie(body_ec, std::ignore) = co_await http::async_read(socket, buffer, parser, kUse);
    }
    if (body_ec) {
      co_return ended(body_ec == http::error::body_limit ? AttemptResult::End::kTooLarge
                                                         : AttemptResult::End::kUnreachable,
                      body_ec);
    }
    if (out.status != 200 && on_not_served) {
      on_not_served(out.status);
    }
    if (out.status == 429 || out.status == 503) {
      KeepIdleIfClean(up, socket, parser, buffer, watch);
      out.end = AttemptResult::End::kRefused;
      out.overload_reason = HeaderOr(head, "X-Overload-Reason");
      out.headers = PassedHeaders(head, {});
      out.body = std::move(parser.get().body());
      co_return out;
    }
    const std::string content_type = HeaderOr(head, "Content-Type");
    net::Headers headers = PassedHeaders(head, request.reply_headers);
    // Before the client's write: the next request may use the connection at once.
    KeepIdleIfClean(up, socket, parser, buffer, watch);
    std::string body = std::move(parser.get().body());
    if (request.want_usage && out.status == 200) {
      out.usage_tokens = UsageTokens(body);
    }
    if (RelayCapture* cap = request.capture; cap != nullptr && out.status == 200) {
      // Only an answer whose end was framed: one delimited by the close may have been cut.
      cap->complete = body.size() <= cap->limit && (head.has_content_length() || head.chunked());
      cap->answer = {content_type, cap->complete ? body : std::string(), false};
    }
    co_await conn.Reply(out.status, content_type, std::move(body), headers);
    out.end = watch.client_gone() ? AttemptResult::End::kClientGone : AttemptResult::End::kRelayed;
    co_return out;
  }

  // An SSE stream: chunk by chunk, each upstream read after the client took the last chunk;
  // nothing accumulates, so no limit on its length.
  out.streamed = true;
  parser.body_limit(boost::none);
  // A write to the client that failed: the client left, or the deadline or the drain cut it.
  const auto cut = [&] {
    return watch.deadline_passed()    ? AttemptResult::End::kDeadline
           : watch.closed_for_drain() ? AttemptResult::End::kDraining
                                      : AttemptResult::End::kClientGone;
  };
  if (!co_await conn.StartStream(PassedHeaders(head, request.reply_headers))) {
    out.end = cut();
    co_return out;
  }
  RelayCapture* cap = request.capture;
  if (cap != nullptr) {
    cap->answer = {"text/event-stream", {}, true};
    cap->complete = true;
  }
  bool first = true;
  StreamScan errors;
  StreamUsage usage;
  // A close-delimited stream (neither chunked nor with a length) ends when the connection
  // closes, which a crash does too: it is complete only once it said so ([DONE], an error).
  const bool close_delimited = !head.chunked() && !head.has_content_length();
  std::string& bytes = parser.get().body();
  beast::error_code ec;
  while (!ec && !parser.is_done()) {
    std::tie(ec, std::ignore) = co_await http::async_read_some(socket, buffer, parser, kUse);
    if (!bytes.empty()) {
      if (first && on_first_bytes) {
        on_first_bytes(clock.Now() - sent_s);
      }
      first = false;
      if (errors.Feed(bytes)) {
        out.stream_error = errors.code();
      }
      if (request.want_usage) {
        usage.Feed(bytes);
        out.usage_tokens = usage.tokens();
      }
      if (cap != nullptr && cap->complete) {
        cap->complete = cap->answer.body.size() + bytes.size() <= cap->limit;
        if (cap->complete) {
          cap->answer.body += bytes;
        } else {
          cap->answer.body.clear();
        }
      }
      if (!co_await conn.WriteChunk(bytes)) {
        out.end = cut();
        co_return out;  // closing `socket` tells the upstream
      }
      bytes.clear();
    }
  }
  if (!ec && close_delimited && !errors.ended()) {
    ec = http::error::partial_message;
  }
  // A reset, EOF before the last chunk (partial_message), a close-delimited stream closed
  // before it said it was over, the deadline or the drain: the stream ends with an error event.
  if (ec && !(parser.is_done() && errors.ended())) {
    if (cap != nullptr) {
      cap->complete = false;
    }
    ended(AttemptResult::End::kBroken, ec);
    if (out.end == AttemptResult::End::kClientGone) {
      co_return out;
    }
    // (Built before the co_await: GCC 12 destroys a temporary of a conditional expression
    // inside a co_await twice.)
    const std::string event =
        out.end == AttemptResult::End::kDeadline
            ? StreamError("request_timeout", "The gateway's request deadline passed.")
        : out.end == AttemptResult::End::kDraining
            ? StreamError("draining", "The gateway shut down before the stream ended.")
            : StreamError("upstream_unavailable", "The endpoint failed mid-stream.");
    if (out.end != AttemptResult::End::kBroken) {
      conn.set_write_timeout(kLastEventTimeout);  // the attempt's time is already up
    }
    co_await conn.WriteChunk(event);
    co_await conn.EndStream();
    co_return out;
  }
  co_await conn.EndStream();
  out.end = watch.client_gone() ? AttemptResult::End::kClientGone : AttemptResult::End::kRelayed;
  co_return out;
}

}  // namespace spillway::gateway
