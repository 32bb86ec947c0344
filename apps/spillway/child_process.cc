#include "child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace spillway::app {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& args, std::string log_path)
    : log_path_(std::move(log_path)) {
  const int log_fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    throw std::runtime_error("cannot write " + log_path_ + ": " + std::strerror(errno));
  }
  // This binary's own path, so the children show as `.../spillway serve ...` in ps and pgrep.
  std::string self(4096, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size() - 1);
  self.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  std::vector<std::string> words = {self.empty() ? std::string("/proc/self/exe") : self};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) {
    argv.push_back(w.data());
  }
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) {
      ::_exit(127);
    }
    const int null_fd = ::open("/dev/null", O_RDONLY);
    ::dup2(null_fd, STDIN_FILENO);
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(log_fd);
  if (pid < 0) {
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  }
  pid_ = pid;
}

ChildProcess::~ChildProcess() { Stop(3.0); }

std::string ChildProcess::WaitUntilListening(double timeout_s) {
  const std::string marker = "listening on http://";
  const auto give_up = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(static_cast<int>(timeout_s * 1000));
  for (;;) {
    const std::string log = ReadFile(log_path_);
    if (const std::size_t at = log.find(marker); at != std::string::npos) {
      const std::size_t start = at + std::string("listening on ").size();
      const std::size_t end = log.find_first_of(" \n", start);
      return log.substr(start, end - start);
    }
    if (Reap(0) || std::chrono::steady_clock::now() > give_up) {
      throw std::runtime_error("a child did not start listening (" + log_path_ + "):\n" + log);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void ChildProcess::Signal(int signal) {
  if (pid_ > 0) {
    ::kill(pid_, signal);
    if (signal == SIGKILL) {
      Reap(2.0);  // no zombie left for the rest of the run
    }
  }
}

bool ChildProcess::Reap(double timeout_s) {
  if (pid_ <= 0) {
    return true;
  }
  const auto give_up = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(static_cast<int>(timeout_s * 1000));
  for (;;) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return true;
    }
    if (std::chrono::steady_clock::now() >= give_up) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void ChildProcess::Stop(double grace_s) {
  if (pid_ <= 0) {
    return;
  }
  ::kill(pid_, SIGTERM);
  if (!Reap(grace_s)) {
    ::kill(pid_, SIGKILL);
    Reap(5.0);
  }
}

}  // namespace spillway::app
