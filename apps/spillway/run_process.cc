#include "run_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

extern char** environ;

namespace spillway::app {
namespace {

bool IsExecutableFile(const std::filesystem::path& p) {
  std::error_code ec;
  return ::access(p.c_str(), X_OK) == 0 && std::filesystem::is_regular_file(p, ec);
}

// Owns posix_spawn's file actions and attributes.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

// Waits for `pid` until `deadline`, then SIGKILLs its process group. Returns the wait
// status; sets `*timed_out` when the deadline passed, `*wait_errno` when waitpid failed.
int WaitWithDeadline(pid_t pid, std::chrono::steady_clock::time_point deadline, bool* timed_out,
                     int* wait_errno) {
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      return status;
    }
    if (r < 0 && errno != EINTR) {
      *wait_errno = errno;
      return status;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      *timed_out = true;
      ::kill(-pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

std::string FindExecutable(std::string_view name) {
  if (name.find('/') != std::string_view::npos) {
    return IsExecutableFile(std::string(name)) ? std::string(name) : "";
  }
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "";
  while (!dirs.empty()) {
    const std::size_t colon = dirs.find(':');
    const std::string_view dir = dirs.substr(0, colon);
    dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
    const std::filesystem::path candidate = std::filesystem::path(dir.empty() ? "." : dir) / name;
    if (IsExecutableFile(candidate)) {
      return candidate.string();
    }
  }
  return "";
}

ProcessResult RunProcess(const std::vector<std::string>& argv, const std::string& cwd,
                         const std::string& log_path, double timeout_s) {
  ProcessResult result;
  SpawnSetup setup;
  posix_spawn_file_actions_addopen(&setup.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&setup.actions, STDOUT_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&setup.actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addchdir_np(&setup.actions, cwd.c_str());
  posix_spawnattr_setpgroup(&setup.attr, 0);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&setup.attr, &none);
  posix_spawnattr_setflags(&setup.attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  std::vector<char*> args;
  for (const std::string& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  pid_t pid = -1;
  const int err = ::posix_spawn(&pid, args[0], &setup.actions, &setup.attr, args.data(), environ);
  if (err != 0) {
    result.description = "spawn " + argv[0] + ": " + std::strerror(err);
    return result;
  }
  bool timed_out = false;
  int wait_errno = 0;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<std::int64_t>(timeout_s * 1000));
  const int status = WaitWithDeadline(pid, deadline, &timed_out, &wait_errno);
  if (wait_errno != 0) {
    result.description = std::string("waitpid: ") + std::strerror(wait_errno);
  } else if (timed_out) {
    result.description = "timed out after " + std::to_string(timeout_s) + " s (killed)";
  } else if (WIFEXITED(status)) {
    result.exited = true;
    result.exit_code = WEXITSTATUS(status);
    result.description = "exit code " + std::to_string(result.exit_code);
  } else if (WIFSIGNALED(status)) {
    result.description = "killed by signal " + std::to_string(WTERMSIG(status));
  }
  return result;
}

}  // namespace spillway::app
