#pragma once
// The status line and header block of an HTTP/1.x response (and the request line and headers
// of the gateway's requests to its endpoints), written by hand into a reusable string: one
// pass, no per-field allocation, and one buffer to send, where Beast's serializer walks a nest
// of buffer-sequence views (it was the largest single cost of a 429 reply). No Asio or Beast
// here.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace spillway::net {

/// Extra response headers, in order (name, value).
using Headers = std::vector<std::pair<std::string, std::string>>;

/// How the response ends its body and what it says about the connection.
struct ResponseFraming {
  /// The request's HTTP version times ten (10 or 11); the status line repeats it.
  unsigned version = 11;
  /// Content-Length; nullopt for a body without one (chunked, or ended by closing).
  std::optional<std::size_t> content_length;
  bool chunked = false;  ///< Transfer-Encoding: chunked (never for version 10)
  /// Whether the connection stays open. HTTP/1.1 says `Connection: close` when not;
  /// HTTP/1.0 says `Connection: keep-alive` when so (RFC 9112 §9.3).
  bool keep_alive = true;
};

/// Appends the head (status line, `Server: spillway`, `Content-Type` when not empty, the
/// framing headers, `headers`, blank line) to `out`. The reason phrase is the standard one
/// for `status` (empty for an unknown code). A header whose name or value holds CR, LF or NUL
/// is dropped rather than sent (no response splitting).
void AppendResponseHead(std::string* out, unsigned status, std::string_view content_type,
                        const ResponseFraming& framing, const Headers& headers = {});

/// Appends an HTTP/1.1 request head with a body of `content_length` bytes to `out`: the request
/// line, `Host`, `headers` in order (duplicates kept, as a proxy passes them), `Content-Length`,
/// blank line; the connection is kept alive (HTTP/1.1's default). A header whose name or value
/// holds CR, LF or NUL is dropped (no request smuggling).
void AppendRequestHead(std::string* out, std::string_view method, std::string_view target,
                       std::string_view host, const Headers& headers, std::size_t content_length);

/// Appends the chunk-size line of an HTTP/1.1 chunk of `size` bytes ("1a\r\n") to `out`.
void AppendChunkSize(std::string* out, std::size_t size);

}  // namespace spillway::net
