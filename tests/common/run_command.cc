#include "common/run_command.h"

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
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace spillway::testing_util {
namespace {

// This process's environment with `changes` ("NAME=value") applied.
std::vector<std::string> Environment(const std::vector<std::string>& changes) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const std::string& c : changes) {
      replaced = replaced || c.substr(0, c.find('=')) == name;
    }
    if (!replaced) {
      out.push_back(entry);
    }
  }
  out.insert(out.end(), changes.begin(), changes.end());
  return out;
}

std::vector<char*> CStrings(std::vector<std::string>& words) {
  std::vector<char*> out;
  for (std::string& w : words) {
    out.push_back(w.data());
  }
  out.push_back(nullptr);
  return out;
}

}  // namespace

std::optional<std::string> FindOnPath(std::string_view name) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "";
  while (!dirs.empty()) {
    const std::size_t colon = dirs.find(':');
    const std::string_view dir = dirs.substr(0, colon);
    dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
    const std::filesystem::path candidate = std::filesystem::path(dir.empty() ? "." : dir) / name;
    std::error_code ec;
    if (::access(candidate.c_str(), X_OK) == 0 && std::filesystem::is_regular_file(candidate, ec)) {
      return candidate.string();
    }
  }
  return std::nullopt;
}

CommandResult RunCommand(const std::vector<std::string>& argv, double timeout_s,
                         const std::vector<std::string>& env) {
  CommandResult result;
  char log_template[] = "/tmp/spillway_command_XXXXXX";
  const int log_fd = ::mkstemp(log_template);
  if (log_fd < 0) {
    result.description = std::string("mkstemp: ") + std::strerror(errno);
    return result;
  }
  ::close(log_fd);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_template, O_WRONLY | O_TRUNC, 0);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  std::vector<std::string> words = argv;
  std::vector<std::string> environment = Environment(env);
  std::vector<char*> args = CStrings(words);
  std::vector<char*> envp = CStrings(environment);
  pid_t pid = -1;
  const int err = ::posix_spawnp(&pid, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (err != 0) {
    result.description = "spawn " + argv[0] + ": " + std::strerror(err);
    std::filesystem::remove(log_template);
    return result;
  }
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<std::int64_t>(timeout_s * 1000));
  int status = 0;
  bool timed_out = false;
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) {
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      timed_out = true;
      ::kill(-pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(-pid, SIGKILL);  // whatever the program left running in its group
  std::ifstream in(log_template, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  result.output = text.str();
  std::filesystem::remove(log_template);
  if (timed_out) {
    result.description = "timed out after " + std::to_string(timeout_s) + " s (killed)";
  } else if (WIFEXITED(status)) {
    result.exited = true;
    result.exit_code = WEXITSTATUS(status);
    result.description = "exit code " + std::to_string(result.exit_code);
  } else {
    result.description = "killed by signal " + std::to_string(WTERMSIG(status));
  }
  return result;
}

}  // namespace spillway::testing_util
