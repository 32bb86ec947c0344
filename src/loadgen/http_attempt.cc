#include "loadgen/http_attempt.h"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <cmath>
#include <vector>

#include "api/openai_types.h"
#include "loadgen/classify.h"
#include "loadgen/sse_parser.h"
#include "loadgen/stream_tracker.h"

namespace spillway::loadgen {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace {

constexpr auto kUse = asio::as_tuple(asio::use_awaitable);

/// Largest response body read, bytes (an error body, or a whole stream).
constexpr std::uint64_t kMaxBodyBytes = std::uint64_t{256} << 20;

/// The attempt's deadlines on the run clock, and which one applies at a given moment.
class Deadlines {
 public:
  Deadlines(const AttemptContext& c, Seconds sent_s)
      : ttft_s_(sent_s + c.ttft_timeout_s),
        total_s_(sent_s + std::min(c.total_timeout_s, c.max_request_s)),
        total_is_cap_(c.max_request_s < c.total_timeout_s) {}

  /// Arms the stream's timer for the next operation: the TTFT deadline until the first token,
  /// then the total one.
  void Arm(beast::tcp_stream& stream, const net::SteadyClock& clock, bool got_token) const {
    const Seconds d = got_token ? total_s_ : std::min(ttft_s_, total_s_);
    if (std::isinf(d)) {
      stream.expires_never();
    } else {
      stream.expires_at(clock.At(d));
    }
  }

  /// Which deadline a timeout was, for the classification.
  StreamStop Which(bool got_token) const {
    return !got_token && ttft_s_ <= total_s_ ? StreamStop::kTtftTimeout : StreamStop::kTotalTimeout;
  }
  bool total_is_cap() const { return total_is_cap_; }

 private:
  Seconds ttft_s_;
  Seconds total_s_;
  bool total_is_cap_;
};

// Ends `r` with the client's timeout (before any response head) or a transport error.
void EndWithoutStream(AttemptRecord* r, const Deadlines& d, const beast::error_code& ec,
                      const char* step, Seconds now) {
  r->finished_s = now;
  if (ec == beast::error::timeout) {
    r->outcome = AttemptOutcome::kAbandoned;
    r->reason = d.Which(false) == StreamStop::kTtftTimeout ? "ttft_timeout"
                : d.total_is_cap()                         ? "max_request_time"
                                                           : "total_timeout";
  } else {
    r->outcome = AttemptOutcome::kTransportError;
    r->reason = std::string(step) + ": " + ec.message();
  }
}

std::string HeaderOr(const http::response_header<>& h, std::string_view name) {
  const auto it = h.find(name);
  return it == h.end() ? std::string() : std::string(it->value());
}

http::request<http::string_body> MakeRequest(const AttemptContext& c, const AttemptRecord& r,
                                             const std::string& body,
                                             const std::string& authorization) {
  http::request<http::string_body> req{http::verb::post, c.target->Path(c.path), 11};
  req.set(http::field::host, c.target->host_header);
  req.set(http::field::user_agent, "spillway-bench");
  req.set(http::field::content_type, "application/json");
  req.set(http::field::accept, "text/event-stream");
  if (!authorization.empty()) {
    req.set(http::field::authorization, authorization);
  }
  if (r.priority_requested.has_value()) {
    req.set("X-Priority-Class", std::to_string(*r.priority_requested));
  }
  if (!r.fairness_id.empty()) {
    req.set(api::kFairnessIdHeader, r.fairness_id);
  }
  if (r.emulated_output_tokens > 0) {
    req.set(api::kEmulatedOutputTokensHeader, std::to_string(r.emulated_output_tokens));
  }
  req.keep_alive(false);
  req.body() = body;
  req.prepare_payload();
  return req;
}

}  // namespace

asio::awaitable<AttemptRecord> RunAttempt(const AttemptContext& c, const AttemptRecord& record,
                                          const std::string& body,
                                          const std::string& authorization) {
  const net::SteadyClock& clock = *c.clock;
  AttemptRecord r = record;
  r.sent_s = clock.Now();
  const Deadlines deadlines(c, r.sent_s);
  beast::tcp_stream stream(co_await asio::this_coro::executor);

  deadlines.Arm(stream, clock, false);
  auto [connect_ec, endpoint] = co_await stream.async_connect(*c.endpoints, kUse);
  if (connect_ec) {
    EndWithoutStream(&r, deadlines, connect_ec, "connect", clock.Now());
    co_return r;
  }
  beast::error_code ignored;
  stream.socket().set_option(asio::ip::tcp::no_delay(true), ignored);
  const http::request<http::string_body> req = MakeRequest(c, r, body, authorization);
  auto [write_ec, written] = co_await http::async_write(stream, req, kUse);
  if (write_ec) {
    EndWithoutStream(&r, deadlines, write_ec, "write", clock.Now());
    co_return r;
  }
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxBodyBytes);
  auto [head_ec, head_bytes] = co_await http::async_read_header(stream, buffer, parser, kUse);
  if (head_ec) {
    EndWithoutStream(&r, deadlines, head_ec, "read head", clock.Now());
    co_return r;
  }
  r.head_s = clock.Now();
  r.status = static_cast<int>(parser.get().result_int());
  r.priority_class = ParsePriorityClass(HeaderOr(parser.get(), "X-Priority-Class"));
  r.served_model = HeaderOr(parser.get(), "X-Spillway-Served-Model");
  r.cache_hit = HeaderOr(parser.get(), "X-Cache") == "hit";
  r.ttft_forecast_s = ParseTtftForecast(HeaderOr(parser.get(), api::kTtftForecastHeader));
  const auto [degraded_first, degraded_last] = parser.get().equal_range("X-Degraded");
  for (auto it = degraded_first; it != degraded_last; ++it) {
    r.degraded = r.degraded || it->value().find("max_tokens") != beast::string_view::npos;
  }
  if (r.status != 200) {
    // The error body names the reason when no X-Overload-Reason does; best effort.
    co_await http::async_read(stream, buffer, parser, kUse);
    const HeadVerdict v = ClassifyHead(r.status, HeaderOr(parser.get(), "X-Overload-Reason"),
                                       HeaderOr(parser.get(), "Retry-After"), parser.get().body());
    r.outcome = v.outcome;
    r.reason = v.reason;
    r.retry_after_s = v.retry_after_s;
    r.finished_s = clock.Now();
    co_return r;
  }

  StreamTracker tracker;
  SseParser sse;
  std::vector<SseEvent> events;
  StreamStop stop = StreamStop::kEnded;
  Seconds ended_s = kNever;  // when [DONE] or an error event came
  while (!parser.is_done()) {
    deadlines.Arm(stream, clock, tracker.first_token_s() != kNever);
    auto [read_ec, n] = co_await http::async_read_some(stream, buffer, parser, kUse);
    const Seconds now = clock.Now();
    std::string& bytes = parser.get().body();
    if (!bytes.empty() && !tracker.ended()) {
      sse.Feed(bytes, &events);
      for (const SseEvent& e : events) {
        if (const std::optional<Seconds> gap = tracker.OnPayload(e.data, now); gap && c.on_gap) {
          c.on_gap(*gap);
        }
        if (tracker.ended()) {
          ended_s = now;
          break;
        }
      }
      events.clear();
    }
    bytes.clear();
    if (read_ec) {
      if (!tracker.ended()) {
        stop = read_ec == beast::error::timeout ? deadlines.Which(tracker.first_token_s() != kNever)
                                                : StreamStop::kBroken;
      }
      break;
    }
  }
  r.finished_s = ended_s != kNever ? ended_s : clock.Now();
  r.first_token_s = tracker.first_token_s();
  r.output_tokens = tracker.output_tokens();
  EndVerdict v = ClassifyStreamEnd(tracker, stop);
  if (stop == StreamStop::kTotalTimeout && deadlines.total_is_cap() &&
      v.outcome == AttemptOutcome::kAbandoned) {
    v.reason = "max_request_time";
  }
  r.outcome = v.outcome;
  r.reason = std::move(v.reason);
  co_return r;
}

}  // namespace spillway::loadgen
