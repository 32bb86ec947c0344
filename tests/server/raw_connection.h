#pragma once
// A plain TCP connection to the server under test, for what the Beast-based HttpClient cannot
// send: HTTP/1.0 requests, several requests on one keep-alive connection, pipelined or
// malformed bytes, requests left half-sent. POSIX sockets; every read is bounded by a timeout.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/http_client.h"

namespace spillway::server_test {

/// How long the raw-socket tests wait for a reply or a close, seconds: a bound that only a hung
/// server reaches (replies come within milliseconds, timeouts under test within 1 to 5 s).
inline constexpr double kTimeoutS = 10;

/// A response as read off the wire: the status line's version ("HTTP/1.1"), status, headers
/// and the body exactly as sent (chunk framing, if any, left in).
struct RawResponse {
  std::string version;
  int status = 0;
  HeaderList headers;
  std::string body;

  /// The first header called `name` (case-insensitive), or nullopt.
  std::optional<std::string> Header(std::string_view name) const;
};

class RawConnection {
 public:
  /// Connects to 127.0.0.1:`port`; check connected().
  explicit RawConnection(std::uint16_t port);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return fd_ >= 0; }
  /// Fixes the socket's send buffer at about `bytes` (SO_SNDBUF, no autotuning): the client
  /// then cannot finish sending more than that unless the server reads, as over a real network
  /// (on loopback the kernel would otherwise buffer megabytes). False on an error.
  bool SetSendBufferBytes(int bytes);
  /// Sends all of `bytes` within `timeout_s` (a server that stops reading cannot stall the
  /// test); false on an error or the timeout, error() says which.
  bool Send(std::string_view bytes, double timeout_s = 10);
  /// Reads one response: the head, then a Content-Length body, or, without Content-Length,
  /// everything up to the server's close; with `head_only` (the answer to HEAD) the head
  /// alone. nullopt when the head did not arrive within `timeout_s` or was malformed (bytes
  /// read stay buffered for the next call).
  std::optional<RawResponse> ReadResponse(double timeout_s, bool head_only = false);
  /// True when the server closes the connection (EOF or reset) within `timeout_s` without
  /// sending anything more than what is already buffered.
  bool WaitClosedByPeer(double timeout_s);
  /// True once a read saw EOF or a reset.
  bool peer_closed() const { return peer_closed_; }
  /// Why the last failed Send failed ("send: Broken pipe", "send: timed out"); empty if none.
  const std::string& error() const { return error_; }

 private:
  /// Reads what arrives within `timeout_s` (at most one recv) into buffer_; false when nothing
  /// came (timeout, EOF or error).
  bool ReadMore(double timeout_s);

  int fd_ = -1;
  std::string buffer_;
  bool peer_closed_ = false;
  std::string error_;
};

/// `POST target HTTP/1.x` with a JSON body, Host and Content-Length, plus `extra_headers`
/// (each "Name: value\r\n").
std::string RawPost(std::string_view version, std::string_view target, std::string_view body,
                    std::string_view extra_headers = "");

}  // namespace spillway::server_test
