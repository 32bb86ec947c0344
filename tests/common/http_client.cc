#include "common/http_client.h"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address_v4.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/beast/http/write.hpp>
#include <chrono>
#include <cstdlib>
#include <deque>

namespace spillway::server_test {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

Clock::time_point After(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// Splits complete SSE events ("...\n\n") of `body` from offset `*from` on, appending the data
// payload of each event that has one; advances `*from` past the last complete event.
template <typename Out>
void SplitSse(std::string_view body, std::size_t* from, Out* out) {
  for (;;) {
    const std::size_t end = body.find("\n\n", *from);
    if (end == std::string_view::npos) {
      return;
    }
    const std::string_view block = body.substr(*from, end - *from);
    *from = end + 2;
    std::optional<std::string> data;
    std::size_t pos = 0;
    while (pos <= block.size()) {
      std::size_t eol = block.find('\n', pos);
      if (eol == std::string_view::npos) {
        eol = block.size();
      }
      std::string_view line = block.substr(pos, eol - pos);
      pos = eol + 1;
      if (!line.empty() && line.back() == '\r') {
        line.remove_suffix(1);
      }
      if (line.starts_with("data:")) {
        line.remove_prefix(5);
        if (line.starts_with(' ')) {
          line.remove_prefix(1);
        }
        data = data.has_value() ? *data + "\n" + std::string(line) : std::string(line);
      }
    }
    if (data.has_value()) {
      out->push_back(std::move(*data));
    }
  }
}

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// Parses one sample line of the text exposition format; false for anything else.
bool ParseSample(std::string_view line, Sample* s) {
  if (line.empty() || line.front() == '#') {
    return false;
  }
  std::size_t i = line.find_first_of("{ ");
  if (i == std::string_view::npos) {
    return false;
  }
  s->name = std::string(line.substr(0, i));
  s->labels.clear();
  if (line[i] == '{') {
    ++i;
    while (i < line.size() && line[i] != '}') {
      const std::size_t eq = line.find('=', i);
      if (eq == std::string_view::npos || eq + 1 >= line.size() || line[eq + 1] != '"') {
        return false;
      }
      std::string key(line.substr(i, eq - i));
      std::string value;
      std::size_t j = eq + 2;
      for (; j < line.size() && line[j] != '"'; ++j) {
        if (line[j] == '\\' && j + 1 < line.size()) {
          ++j;
          value += line[j] == 'n' ? '\n' : line[j];
        } else {
          value += line[j];
        }
      }
      if (j >= line.size()) {
        return false;
      }
      s->labels[std::move(key)] = std::move(value);
      i = j + 1;
      if (i < line.size() && line[i] == ',') {
        ++i;
      }
    }
    if (i >= line.size()) {
      return false;
    }
    ++i;  // '}'
  }
  while (i < line.size() && line[i] == ' ') {
    ++i;
  }
  const std::string value(line.substr(i, line.find(' ', i) - i));
  char* end = nullptr;
  s->value = std::strtod(value.c_str(), &end);
  return !value.empty() && end == value.c_str() + value.size();
}

template <typename F>
void ForEachMatch(const std::string& exposition, std::string_view name,
                  const std::map<std::string, std::string>& labels, F f) {
  std::size_t pos = 0;
  Sample s;
  while (pos < exposition.size()) {
    std::size_t eol = exposition.find('\n', pos);
    if (eol == std::string::npos) {
      eol = exposition.size();
    }
    const std::string_view line(exposition.data() + pos, eol - pos);
    pos = eol + 1;
    if (!ParseSample(line, &s) || s.name != name) {
      continue;
    }
    bool match = true;
    for (const auto& [k, v] : labels) {
      const auto it = s.labels.find(k);
      match = match && it != s.labels.end() && it->second == v;
    }
    if (match) {
      f(s);
    }
  }
}

}  // namespace

std::optional<std::string> HttpResponse::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (EqualsIgnoreCase(k, name)) {
      return v;
    }
  }
  return std::nullopt;
}

struct PendingRequest::Impl {
  asio::io_context ioc;
  beast::tcp_stream stream{ioc};
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  HttpResponse head;
  bool head_read = false;
  std::size_t consumed = 0;  // body bytes already returned (as events or a body)
  std::deque<std::string> events;
  std::string error;
  bool failed = false;
  bool closed = false;

  // Runs one asynchronous operation to completion, bounded by `deadline` (the stream closes
  // the socket when it passes; the operation then fails with beast::error::timeout).
  template <typename Initiate>
  beast::error_code Run(Clock::time_point deadline, Initiate&& initiate) {
    beast::error_code result = asio::error::would_block;
    stream.expires_after(std::max(Clock::duration::zero(), deadline - Clock::now()));
    initiate([&result](beast::error_code ec, auto&&...) { result = ec; });
    ioc.restart();
    ioc.run();
    return result;
  }

  void Fail(std::string_view what, const beast::error_code& ec) {
    if (!failed) {
      failed = true;
      error = std::string(what) + ": " + ec.message();
    }
  }

  void ReadHead(Clock::time_point deadline) {
    if (head_read || failed) {
      return;
    }
    const beast::error_code ec = Run(deadline, [this](auto handler) {
      http::async_read_header(stream, buffer, parser, std::move(handler));
    });
    if (ec) {
      Fail("reading the response head", ec);
      head.error = error;
      return;
    }
    head_read = true;
    const auto& msg = parser.get();
    head.status = static_cast<int>(msg.result_int());
    for (const auto& field : msg) {
      head.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
  }
};

PendingRequest::PendingRequest(std::uint16_t port, const HttpRequest& request, double timeout_s)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.parser.body_limit(64 << 20);
  const auto deadline = After(timeout_s);
  const tcp::endpoint endpoint(asio::ip::address_v4::loopback(), port);
  beast::error_code ec = m.Run(deadline, [&m, &endpoint](auto handler) {
    m.stream.async_connect(endpoint, std::move(handler));
  });
  if (ec) {
    m.Fail("connecting to port " + std::to_string(port), ec);
    return;
  }
  http::request<http::string_body> req;
  req.method(http::string_to_verb(request.method));
  if (req.method() == http::verb::unknown) {
    req.method_string(request.method);
  }
  req.target(request.target);
  req.version(11);
  req.set(http::field::host, "127.0.0.1:" + std::to_string(port));
  req.set(http::field::user_agent, "spillway-server-test");
  if (!request.body.empty()) {
    req.set(http::field::content_type, "application/json");
    req.body() = request.body;
  }
  // A name's first value replaces the defaults above; a name listed again is sent again.
  std::vector<std::string_view> named;
  for (const auto& [name, value] : request.headers) {
    if (std::find(named.begin(), named.end(), name) == named.end()) {
      named.push_back(name);
      req.set(name, value);
    } else {
      req.insert(name, value);
    }
  }
  req.keep_alive(false);
  req.prepare_payload();
  ec = m.Run(deadline,
             [&m, &req](auto handler) { http::async_write(m.stream, req, std::move(handler)); });
  if (ec) {
    m.Fail("sending the request", ec);
  }
}

PendingRequest::~PendingRequest() = default;

bool PendingRequest::ok() const { return !impl_->failed; }
const std::string& PendingRequest::error() const { return impl_->error; }
bool PendingRequest::complete() const { return impl_->parser.is_done(); }

const HttpResponse& PendingRequest::ReadHead(double timeout_s) {
  impl_->ReadHead(After(timeout_s));
  if (!impl_->head_read && impl_->head.error.empty()) {
    impl_->head.error = impl_->error;
  }
  return impl_->head;
}

std::optional<std::string> PendingRequest::NextEvent(double timeout_s) {
  Impl& m = *impl_;
  const auto deadline = After(timeout_s);
  m.ReadHead(deadline);
  for (;;) {
    if (!m.events.empty()) {
      std::string data = std::move(m.events.front());
      m.events.pop_front();
      return data;
    }
    if (m.failed || m.closed || m.parser.is_done()) {
      return std::nullopt;
    }
    const beast::error_code ec = m.Run(deadline, [&m](auto handler) {
      http::async_read_some(m.stream, m.buffer, m.parser, std::move(handler));
    });
    SplitSse(m.parser.get().body(), &m.consumed, &m.events);
    if (ec) {
      m.Fail("reading the event stream", ec);
    }
  }
}

HttpResponse PendingRequest::ReadResponse(double timeout_s) {
  Impl& m = *impl_;
  const auto deadline = After(timeout_s);
  m.ReadHead(deadline);
  if (!m.failed && !m.parser.is_done()) {
    const beast::error_code ec = m.Run(deadline, [&m](auto handler) {
      http::async_read(m.stream, m.buffer, m.parser, std::move(handler));
    });
    if (ec) {
      m.Fail("reading the response body (status " + std::to_string(m.head.status) + ")", ec);
    }
  }
  HttpResponse r = m.head;
  const std::string& body = m.parser.get().body();
  r.body = body.substr(std::min(m.consumed, body.size()));
  m.consumed = body.size();
  if (m.failed) {
    r.status = 0;
    r.error = m.error;
  }
  return r;
}

bool PendingRequest::ResponseStarted() {
  Impl& m = *impl_;
  if (m.head_read || m.buffer.size() > 0) {
    return true;
  }
  beast::error_code ec;
  const std::size_t available = m.stream.socket().available(ec);
  return !ec && available > 0;
}

void PendingRequest::Close() {
  beast::error_code ec;
  impl_->stream.socket().close(ec);
  impl_->closed = true;
}

HttpResponse HttpClient::Send(const HttpRequest& request, double timeout_s) const {
  PendingRequest pending(port_, request, timeout_s);
  if (!pending.ok()) {
    HttpResponse r;
    r.error = pending.error();
    return r;
  }
  return pending.ReadResponse(timeout_s);
}

HttpResponse HttpClient::Get(const std::string& target, double timeout_s) const {
  HttpRequest request;
  request.target = target;
  return Send(request, timeout_s);
}

HttpResponse HttpClient::Post(const std::string& target, const std::string& body,
                              const HeaderList& headers, double timeout_s) const {
  HttpRequest request;
  request.method = "POST";
  request.target = target;
  request.body = body;
  request.headers = headers;
  return Send(request, timeout_s);
}

std::vector<std::string> SseDataPayloads(const std::string& body) {
  std::vector<std::string> out;
  std::size_t from = 0;
  SplitSse(body, &from, &out);
  return out;
}

double MetricSum(const std::string& exposition, std::string_view name,
                 const std::map<std::string, std::string>& labels) {
  double sum = 0;
  ForEachMatch(exposition, name, labels, [&sum](const Sample& s) { sum += s.value; });
  return sum;
}

int MetricCount(const std::string& exposition, std::string_view name,
                const std::map<std::string, std::string>& labels) {
  int n = 0;
  ForEachMatch(exposition, name, labels, [&n](const Sample&) { ++n; });
  return n;
}

bool IsValidUtf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    int extra = 0;
    std::uint32_t cp = 0;
    if (b < 0x80) {
      ++i;
      continue;
    } else if (b >= 0xC2 && b <= 0xDF) {
      extra = 1;
      cp = b & 0x1F;
    } else if (b >= 0xE0 && b <= 0xEF) {
      extra = 2;
      cp = b & 0x0F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      extra = 3;
      cp = b & 0x07;
    } else {
      return false;
    }
    if (i + static_cast<std::size_t>(extra) >= s.size()) {
      return false;
    }
    for (int k = 1; k <= extra; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0) != 0x80) {
        return false;
      }
      cp = (cp << 6) | (c & 0x3F);
    }
    if ((extra == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (extra == 3 && (cp < 0x10000 || cp > 0x10FFFF))) {
      return false;
    }
    i += static_cast<std::size_t>(extra) + 1;
  }
  return true;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
    if (lower(a[i]) != lower(b[i])) {
      return false;
    }
  }
  return true;
}

}  // namespace spillway::server_test
