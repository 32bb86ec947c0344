#pragma once
// A scripted HTTP/1.1 upstream for the live gateway tests: it behaves as real servers sometimes
// do (answers the tests write byte by byte), on loopback, one thread per connection.

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <sys/socket.h>

namespace spillway::gateway_test {

/// A completion as an OpenAI-compatible server answers one (model "scripted").
constexpr std::string_view kCompletionJson =
    R"({"id":"cmpl-1","object":"text_completion","created":0,"model":"scripted","choices":)"
    R"([{"index":0,"text":" ok","logprobs":null,"finish_reason":"length"}],)"
    R"("usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}})";

/// A complete keep-alive answer with `body`.
inline std::string Answer200(std::string_view body) {
  return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

/// An HTTP/1.1 upstream on loopback that answers GETs (the gateway's probes) with a model list
/// and every POST, read to the end of its body, with `answer(socket, nth)`, `nth` counting the
/// POSTs on that connection from 1; one thread per connection, all joined on destruction.
class ScriptedUpstream {
 public:
  using tcp = boost::asio::ip::tcp;
  using Answer = std::function<void(tcp::socket&, int nth)>;
  explicit ScriptedUpstream(Answer answer)
      : answer_(std::move(answer)),
        acceptor_(ioc_, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0)),
        listen_fd_(acceptor_.native_handle()),
        port_(acceptor_.local_endpoint().port()),
        accept_thread_([this] { AcceptLoop(); }) {}
  ~ScriptedUpstream() {
    // Raw shutdowns wake the threads blocked in accept and reads (closing an Asio object that
    // another thread is using would race); the objects are closed once the threads are done.
    stop_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    accept_thread_.join();
    {
      const std::lock_guard lock(mu_);
      for (const int fd : fds_) {
        ::shutdown(fd, SHUT_RDWR);
      }
    }
    for (std::thread& t : threads_) {
      t.join();
    }
  }
  ScriptedUpstream(const ScriptedUpstream&) = delete;
  ScriptedUpstream& operator=(const ScriptedUpstream&) = delete;

  std::uint16_t port() const { return port_; }
  /// POSTs received, on all connections.
  int posts() const { return posts_; }

 private:
  void AcceptLoop() {
    while (!stop_) {
      auto socket = std::make_shared<tcp::socket>(ioc_);
      boost::system::error_code ec;
      acceptor_.accept(*socket, ec);
      if (ec) {
        return;
      }
      const std::lock_guard lock(mu_);
      fds_.push_back(socket->native_handle());
      threads_.emplace_back([socket, this] { Serve(*socket); });
    }
  }
  void Serve(tcp::socket& socket) {
    boost::asio::streambuf in;
    int posts_here = 0;
    for (;;) {
      boost::system::error_code ec;
      const std::size_t head_bytes = boost::asio::read_until(socket, in, "\r\n\r\n", ec);
      if (ec) {
        return;
      }
      std::string head(
          boost::asio::buffers_begin(in.data()),
          boost::asio::buffers_begin(in.data()) + static_cast<std::ptrdiff_t>(head_bytes));
      in.consume(head_bytes);
      std::size_t length = 0;
      if (const auto at = head.find("Content-Length: "); at != std::string::npos) {
        length = std::stoul(head.substr(at + 16));
      }
      if (in.size() < length) {
        boost::asio::read(socket, in, boost::asio::transfer_exactly(length - in.size()), ec);
      }
      in.consume(length);
      if (ec) {
        return;
      }
      if (head.starts_with("GET")) {
        const std::string models =
            R"({"object":"list","data":[{"id":"scripted","object":"model"}]})";
        boost::asio::write(
            socket,
            boost::asio::buffer("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                "Content-Length: " +
                                std::to_string(models.size()) + "\r\n\r\n" + models),
            ec);
      } else {
        ++posts_;
        answer_(socket, ++posts_here);
      }
      if (ec) {
        return;
      }
    }
  }

  Answer answer_;
  boost::asio::io_context ioc_;
  tcp::acceptor acceptor_;
  int listen_fd_;
  std::uint16_t port_;
  std::atomic<bool> stop_{false};
  std::atomic<int> posts_{0};
  std::mutex mu_;
  std::vector<int> fds_;  // of the connections, for the shutdowns
  std::vector<std::thread> threads_;
  std::thread accept_thread_;  // last: started once the rest exists
};

}  // namespace spillway::gateway_test
