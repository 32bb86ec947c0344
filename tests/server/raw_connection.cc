#include "server/raw_connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>

namespace spillway::server_test {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsLeft(Clock::time_point deadline) {
  return std::chrono::duration<double>(deadline - Clock::now()).count();
}

// Parses "HTTP/1.1 200 OK\r\nName: value\r\n...\r\n" (without the blank line) into `r`.
bool ParseHead(std::string_view head, RawResponse* r) {
  const std::size_t eol = head.find("\r\n");
  const std::string_view status_line = head.substr(0, eol);
  const std::size_t sp = status_line.find(' ');
  if (sp == std::string_view::npos || status_line.size() < sp + 4) {
    return false;
  }
  r->version = std::string(status_line.substr(0, sp));
  const char* digits = status_line.data() + sp + 1;
  if (std::from_chars(digits, digits + 3, r->status).ec != std::errc{}) {
    return false;
  }
  std::size_t pos = eol == std::string_view::npos ? head.size() : eol + 2;
  while (pos < head.size()) {
    std::size_t end = head.find("\r\n", pos);
    if (end == std::string_view::npos) {
      end = head.size();
    }
    const std::string_view line = head.substr(pos, end - pos);
    const std::size_t colon = line.find(':');
    if (colon != std::string_view::npos) {
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') {
        value.remove_prefix(1);
      }
      r->headers.emplace_back(std::string(line.substr(0, colon)), std::string(value));
    }
    pos = end + 2;
  }
  return true;
}

}  // namespace

std::optional<std::string> RawResponse::Header(std::string_view name) const {
  for (const auto& [n, v] : headers) {
    if (EqualsIgnoreCase(n, name)) {
      return v;
    }
  }
  return std::nullopt;
}

RawConnection::RawConnection(std::uint16_t port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    return;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

RawConnection::~RawConnection() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

bool RawConnection::SetSendBufferBytes(int bytes) {
  return fd_ >= 0 && ::setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes)) == 0;
}

bool RawConnection::Send(std::string_view bytes, double timeout_s) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_s));
  while (fd_ >= 0 && !bytes.empty()) {
    pollfd p{fd_, POLLOUT, 0};
    const double left_s = SecondsLeft(deadline);
    if (left_s <= 0 || ::poll(&p, 1, static_cast<int>(left_s * 1000) + 1) == 0) {
      error_ = "send: timed out";
      return false;
    }
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) {
      continue;
    }
    if (n <= 0) {
      error_ = std::string("send: ") + std::strerror(errno);
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return fd_ >= 0;
}

bool RawConnection::ReadMore(double timeout_s) {
  if (fd_ < 0 || peer_closed_ || timeout_s <= 0) {
    return false;
  }
  pollfd p{fd_, POLLIN, 0};
  const int ready = ::poll(&p, 1, static_cast<int>(timeout_s * 1000) + 1);
  if (ready <= 0) {
    return false;
  }
  char chunk[16384];
  const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
  if (n <= 0) {
    peer_closed_ = true;  // EOF or reset
    return false;
  }
  buffer_.append(chunk, static_cast<std::size_t>(n));
  return true;
}

std::optional<RawResponse> RawConnection::ReadResponse(double timeout_s, bool head_only) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_s));
  std::size_t head_end = buffer_.find("\r\n\r\n");
  while (head_end == std::string::npos) {
    if (!ReadMore(SecondsLeft(deadline))) {
      return std::nullopt;
    }
    head_end = buffer_.find("\r\n\r\n");
  }
  RawResponse r;
  if (!ParseHead(std::string_view(buffer_).substr(0, head_end), &r)) {
    return std::nullopt;
  }
  const std::size_t body_start = head_end + 4;
  const std::optional<std::string> length = r.Header("Content-Length");
  std::size_t want = 0;
  if (head_only) {
    want = 0;
  } else if (length.has_value()) {
    std::from_chars(length->data(), length->data() + length->size(), want);
    while (buffer_.size() - body_start < want && ReadMore(SecondsLeft(deadline))) {
    }
  } else {
    while (ReadMore(SecondsLeft(deadline))) {
    }
    want = buffer_.size() - body_start;
  }
  want = std::min(want, buffer_.size() - body_start);
  r.body = buffer_.substr(body_start, want);
  buffer_.erase(0, body_start + want);
  return r;
}

bool RawConnection::WaitClosedByPeer(double timeout_s) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_s));
  while (!peer_closed_ && SecondsLeft(deadline) > 0) {
    ReadMore(SecondsLeft(deadline));
  }
  return peer_closed_;
}

std::string RawPost(std::string_view version, std::string_view target, std::string_view body,
                    std::string_view extra_headers) {
  std::string out = "POST ";
  out.append(target).append(" ").append(version).append("\r\n");
  out.append("Host: 127.0.0.1\r\nContent-Type: application/json\r\n");
  out.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
  out.append(extra_headers).append("\r\n").append(body);
  return out;
}

}  // namespace spillway::server_test
