#include "common/server_process.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

namespace spillway::server_test {
namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point After(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

// Runs in the forked child: only async-signal-safe calls until execv.
[[noreturn]] void ExecChild(pid_t parent, int null_fd, int log_fd, char* const* argv) {
  // Die with the test process, even if it is SIGKILLed; the check after prctl closes the race
  // with a parent that died before the call.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) {
    ::_exit(127);
  }
  ::dup2(null_fd, STDIN_FILENO);
  ::dup2(log_fd, STDOUT_FILENO);
  ::dup2(log_fd, STDERR_FILENO);
  // Sockets of the test's own clients must not live on in the server: a client "closing" its
  // connection would otherwise leave it open through the child's copy.
  ::close_range(3, ~0U, 0);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::signal(SIGPIPE, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  ::signal(SIGINT, SIG_DFL);
  ::execv(argv[0], argv);
  ::_exit(127);
}

namespace {}  // namespace

ServerProcess::ServerProcess(const std::vector<std::string>& args, const std::string& command) {
  std::vector<std::string> words = {SPILLWAY_BINARY, command, "--port", "0"};
  words.insert(words.end(), args.begin(), args.end());
  for (const std::string& w : words) {
    command_line_ += (command_line_.empty() ? "" : " ") + w;
  }
  std::string templ = ::testing::TempDir() + "spillway_serve_XXXXXX.log";
  std::vector<char> path(templ.begin(), templ.end());
  path.push_back('\0');
  const int log_fd = ::mkstemps(path.data(), 4);
  if (log_fd < 0) {
    error_ = "mkstemps(" + templ + "): " + std::strerror(errno);
    return;
  }
  log_path_ = path.data();
  ::fcntl(log_fd, F_SETFD, FD_CLOEXEC);
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  std::vector<char*> argv;
  for (std::string& w : words) {
    argv.push_back(w.data());
  }
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ExecChild(parent, null_fd, log_fd, argv.data());
  }
  ::close(log_fd);
  ::close(null_fd);
  if (pid < 0) {
    error_ = std::string("fork: ") + std::strerror(errno);
    return;
  }
  pid_ = pid;
}

ServerProcess::~ServerProcess() {
  Stop();
  if (!log_path_.empty()) {
    ::unlink(log_path_.c_str());
  }
}

std::string ServerProcess::Output() const { return log_path_.empty() ? "" : ReadFile(log_path_); }

namespace {

// The port of "listening on http://HOST:PORT" in the server's output, if it is there yet.
std::optional<std::uint16_t> ListeningPort(const std::string& out) {
  const std::string marker = "listening on http://";
  const std::size_t at = out.find(marker);
  if (at == std::string::npos) {
    return std::nullopt;
  }
  const std::size_t colon = out.find(':', at + marker.size());
  std::size_t end = colon + 1;
  while (colon != std::string::npos && end < out.size() && std::isdigit(out[end]) != 0) {
    ++end;
  }
  if (colon == std::string::npos || end == colon + 1) {
    return std::nullopt;
  }
  return static_cast<std::uint16_t>(std::stoi(out.substr(colon + 1, end - colon - 1)));
}

}  // namespace

bool ServerProcess::WaitUntilListening(double timeout_s) {
  if (pid_ <= 0) {
    return false;
  }
  const auto give_up = After(timeout_s);
  for (;;) {
    const std::string out = Output();
    if (const auto port = ListeningPort(out)) {
      port_ = *port;
      return true;
    }
    if (WaitForExit(0).has_value()) {
      error_ = "the server exited (wait status " + std::to_string(*exit_status_) +
               ") before listening; output:\n" + Output();
      return false;
    }
    if (Clock::now() > give_up) {
      error_ = "no 'listening on' line within " + std::to_string(timeout_s) + " s; output:\n" + out;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void ServerProcess::Signal(int signal) {
  if (running()) {
    ::kill(pid_, signal);
  }
}

std::optional<int> ServerProcess::WaitForExit(double timeout_s) {
  if (exit_status_.has_value() || pid_ <= 0) {
    return exit_status_;
  }
  const auto give_up = After(timeout_s);
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exit_status_ = status;
      return exit_status_;
    }
    if (r < 0 && errno != EINTR) {
      exit_status_ = -1;  // not our child any more: nothing left to wait for
      return exit_status_;
    }
    if (Clock::now() >= give_up) {
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void ServerProcess::Stop(double grace_s) {
  if (!running()) {
    return;
  }
  Signal(SIGTERM);
  if (WaitForExit(grace_s).has_value()) {
    return;
  }
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  exit_status_ = status;
}

}  // namespace spillway::server_test
