#pragma once
// A Debian `redis-server` for a test, on a unix socket in a temporary directory (no port to
// race for), without persistence: Start, Kill (SIGKILL, as a crash) and Start again on the same
// socket. Tests skip themselves when redis-server is not installed (`scripts/deps.sh test`).

#include <hiredis/hiredis.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/run_command.h"

namespace spillway::testing_util {

class RedisProcess {
 public:
  RedisProcess() : binary_(FindOnPath("redis-server")) {
    // (A short path of its own: a unix socket's path has at most 107 bytes.)
    char dir[] = "/tmp/spillway-redis-XXXXXX";
    if (::mkdtemp(dir) != nullptr) {
      dir_ = dir;
    } else {
      binary_.reset();  // nowhere to put its socket: the tests skip
    }
    if (!binary_.has_value() && ::access("/usr/bin/redis-server", X_OK) == 0) {
      binary_ = "/usr/bin/redis-server";
    }
  }
  ~RedisProcess() {
    Kill();
    if (!dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }
  RedisProcess(const RedisProcess&) = delete;
  RedisProcess& operator=(const RedisProcess&) = delete;

  bool installed() const { return binary_.has_value(); }
  std::string socket() const { return dir_ + "/redis.sock"; }
  /// The URL the gateway's rate_limit.redis takes.
  std::string url() const { return "unix://" + socket(); }

  /// Starts it and waits (up to 5 s) until it answers PING; false if it does not.
  bool Start() {
    Kill();
    std::vector<std::string> words = {
        *binary_,       "--port", "0",     "--unixsocket", socket(),    "--save",           "",
        "--appendonly", "no",     "--dir", dir_,           "--logfile", dir_ + "/redis.log"};
    std::vector<char*> argv;
    for (std::string& w : words) {
      argv.push_back(w.data());
    }
    argv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < give_up) {
      if (Command({"PING"}) == "PONG") {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  /// SIGKILL, as a crash: clients see their connection reset.
  void Kill() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
      ::unlink(socket().c_str());
    }
  }

  /// Runs one command on a connection of its own: its string, status or integer reply as
  /// text; "(nil)", "(error) ..." or "" (no connection).
  std::string Command(const std::vector<std::string>& args) const {
    redisContext* c = redisConnectUnix(socket().c_str());
    if (c == nullptr || c->err != 0) {
      if (c != nullptr) {
        redisFree(c);
      }
      return "";
    }
    std::vector<const char*> argv;
    std::vector<std::size_t> lens;
    for (const std::string& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    auto* r = static_cast<redisReply*>(
        redisCommandArgv(c, static_cast<int>(argv.size()), argv.data(), lens.data()));
    std::string out;
    if (r != nullptr) {
      out = r->type == REDIS_REPLY_INTEGER ? std::to_string(r->integer)
            : r->type == REDIS_REPLY_NIL   ? "(nil)"
            : r->type == REDIS_REPLY_ERROR ? "(error) " + std::string(r->str, r->len)
            : r->type == REDIS_REPLY_ARRAY ? ArrayText(*r)
                                           : std::string(r->str, r->len);
      freeReplyObject(r);
    }
    redisFree(c);
    return out;
  }

 private:
  /// An array of integers as "a b c".
  static std::string ArrayText(const redisReply& r) {
    std::string out;
    for (std::size_t i = 0; i < r.elements; ++i) {
      out += (i == 0 ? "" : " ") + (r.element[i]->type == REDIS_REPLY_INTEGER
                                        ? std::to_string(r.element[i]->integer)
                                        : std::string(r.element[i]->str, r.element[i]->len));
    }
    return out;
  }

  std::optional<std::string> binary_;
  std::string dir_;
  pid_t pid_ = -1;
};

}  // namespace spillway::testing_util
