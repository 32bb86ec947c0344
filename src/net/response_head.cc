#include "net/response_head.h"

#include <charconv>

namespace spillway::net {
namespace {

// True when `s` holds no CR, LF or NUL (one pass; string_view::find_first_of would call
// memchr once per character).
bool Clean(std::string_view s) {
  for (const char c : s) {
    if (c == '\r' || c == '\n' || c == '\0') {
      return false;
    }
  }
  return true;
}

// RFC 9110 §15 reason phrases (429 and 431: RFC 6585) of the codes a server sends.
constexpr std::pair<unsigned, std::string_view> kReasons[] = {
    {100, "Continue"},
    {200, "OK"},
    {201, "Created"},
    {202, "Accepted"},
    {204, "No Content"},
    {301, "Moved Permanently"},
    {302, "Found"},
    {304, "Not Modified"},
    {400, "Bad Request"},
    {401, "Unauthorized"},
    {403, "Forbidden"},
    {404, "Not Found"},
    {405, "Method Not Allowed"},
    {408, "Request Timeout"},
    {409, "Conflict"},
    {411, "Length Required"},
    {413, "Content Too Large"},
    {414, "URI Too Long"},
    {415, "Unsupported Media Type"},
    {417, "Expectation Failed"},
    {422, "Unprocessable Content"},
    {429, "Too Many Requests"},
    {431, "Request Header Fields Too Large"},
    {500, "Internal Server Error"},
    {501, "Not Implemented"},
    {502, "Bad Gateway"},
    {503, "Service Unavailable"},
    {504, "Gateway Timeout"},
    {505, "HTTP Version Not Supported"},
};

std::string_view Reason(unsigned status) {
  for (const auto& [code, reason] : kReasons) {
    if (code == status) {
      return reason;
    }
  }
  return {};
}

void AppendHeader(std::string* out, std::string_view name, std::string_view value) {
  out->append(name);
  out->append(": ");
  out->append(value);
  out->append("\r\n");
}

void AppendNumber(std::string* out, std::size_t value, int base) {
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), value, base);
  out->append(digits, end);
}

}  // namespace

void AppendResponseHead(std::string* out, unsigned status, std::string_view content_type,
                        const ResponseFraming& framing, const Headers& headers) {
  const bool http10 = framing.version < 11;
  out->append(http10 ? "HTTP/1.0 " : "HTTP/1.1 ");
  AppendNumber(out, status, 10);
  out->push_back(' ');
  out->append(Reason(status));
  out->append("\r\nServer: spillway\r\n");
  if (!content_type.empty() && Clean(content_type)) {
    AppendHeader(out, "Content-Type", content_type);
  }
  if (framing.content_length.has_value()) {
    out->append("Content-Length: ");
    AppendNumber(out, *framing.content_length, 10);
    out->append("\r\n");
  } else if (framing.chunked && !http10) {
    out->append("Transfer-Encoding: chunked\r\n");
  }
  if (http10 && framing.keep_alive) {
    out->append("Connection: keep-alive\r\n");
  } else if (!http10 && !framing.keep_alive) {
    out->append("Connection: close\r\n");
  }
  for (const auto& [name, value] : headers) {
    if (!name.empty() && Clean(name) && Clean(value)) {
      AppendHeader(out, name, value);
    }
  }
  out->append("\r\n");
}

void AppendRequestHead(std::string* out, std::string_view method, std::string_view target,
                       std::string_view host, const Headers& headers, std::size_t content_length) {
  out->append(method);
  out->push_back(' ');
  out->append(target);
  out->append(" HTTP/1.1\r\n");
  AppendHeader(out, "Host", host);
  for (const auto& [name, value] : headers) {
    if (!name.empty() && Clean(name) && Clean(value)) {
      AppendHeader(out, name, value);
    }
  }
  out->append("Content-Length: ");
  AppendNumber(out, content_length, 10);
  out->append("\r\n\r\n");
}

void AppendChunkSize(std::string* out, std::size_t size) {
  AppendNumber(out, size, 16);
  out->append("\r\n");
}

}  // namespace spillway::net
