#pragma once
// A small synchronous HTTP/1.1 client for the server integration tests, on Boost.Beast (which
// stays in http_client.cc): one connection per request, every operation bounded by a timeout,
// and a PendingRequest for responses read piece by piece (SSE) or abandoned (a client that
// disconnects). Also a reader for the Prometheus text exposition the server's /metrics serves.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace spillway::server_test {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method = "GET";
  std::string target = "/";
  std::string body;  ///< sent with Content-Type application/json when non-empty
  HeaderList headers;
};

struct HttpResponse {
  int status = 0;     ///< 0: no (complete) response; `error` says why
  std::string error;  ///< transport error: connect failure, timeout, reset, ...
  HeaderList headers;
  std::string body;

  /// The first header called `name` (case-insensitive), or nullopt.
  std::optional<std::string> Header(std::string_view name) const;
};

/// One request on its own connection: connects and sends in the constructor, then lets the
/// caller read the head, read SSE events one by one, read the whole response, or close the
/// socket without reading.
class PendingRequest {
 public:
  PendingRequest(std::uint16_t port, const HttpRequest& request, double timeout_s);
  ~PendingRequest();
  PendingRequest(const PendingRequest&) = delete;
  PendingRequest& operator=(const PendingRequest&) = delete;

  /// False when connecting or sending failed (or a later read failed); error() says why.
  bool ok() const;
  const std::string& error() const;

  /// Reads the status line and headers (once). The result has an empty body.
  const HttpResponse& ReadHead(double timeout_s);
  /// Reads the next SSE event and returns its `data:` payload (lines joined by '\n');
  /// nullopt at the end of the response or on an error (see ok()).
  std::optional<std::string> NextEvent(double timeout_s);
  /// Reads the rest of the response; body holds everything not yet returned by NextEvent.
  HttpResponse ReadResponse(double timeout_s);
  /// True once the complete response (for chunked encoding, the last chunk) was read.
  bool complete() const;
  /// True when response bytes wait unread in the socket or the client's buffer, i.e. the
  /// server has begun to answer.
  bool ResponseStarted();
  /// Closes the socket now, read or not (the server sees the client leave).
  void Close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class HttpClient {
 public:
  explicit HttpClient(std::uint16_t port) : port_(port) {}

  HttpResponse Send(const HttpRequest& request, double timeout_s = 10) const;
  HttpResponse Get(const std::string& target, double timeout_s = 10) const;
  HttpResponse Post(const std::string& target, const std::string& body,
                    const HeaderList& headers = {}, double timeout_s = 10) const;

  std::uint16_t port() const { return port_; }

 private:
  std::uint16_t port_;
};

/// The `data:` payloads of a complete SSE body, in order.
std::vector<std::string> SseDataPayloads(const std::string& body);

/// Prometheus text exposition: the sum of the values of every sample named `name` whose
/// labels include all of `labels` (0 when none matches: a counter series not yet created).
double MetricSum(const std::string& exposition, std::string_view name,
                 const std::map<std::string, std::string>& labels = {});
/// The number of samples `MetricSum` would add up.
int MetricCount(const std::string& exposition, std::string_view name,
                const std::map<std::string, std::string>& labels = {});

/// ASCII case-insensitive equality (HTTP header names).
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

/// True when `s` is well-formed UTF-8 (no overlongs, surrogates or code points past U+10FFFF).
bool IsValidUtf8(std::string_view s);

}  // namespace spillway::server_test
