#pragma once
// The real `spillway serve` (or `spillway gateway`) binary as a child process of a test: started
// with `--port 0`, its stderr (and stdout) captured in a temporary file that is read to find the
// bound port, and never left behind: the destructor sends SIGTERM, then SIGKILL after a short grace
// period, and reaps the child. The child also gets SIGKILL if the test process dies first
// (PR_SET_PDEATHSIG), so a crashed or killed test binary leaves no server running.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spillway::server_test {

/// In a forked child: dies with `parent` (PR_SET_PDEATHSIG), takes stdin from `in_fd` and
/// stdout/stderr to `out_fd`, closes every other descriptor, restores default signals and
/// execs `argv` (null-terminated); exits 127 when that fails. Async-signal-safe.
[[noreturn]] void ExecChild(pid_t parent, int in_fd, int out_fd, char* const* argv);

class ServerProcess {
 public:
  /// Forks and execs `SPILLWAY_BINARY <command> --port 0 <args...>` (command: "serve" or
  /// "gateway"; both print the same "listening on" line). Check started() (or call
  /// WaitUntilListening) before use; error() says what went wrong.
  explicit ServerProcess(const std::vector<std::string>& args,
                         const std::string& command = "serve");
  /// Stops the server if it still runs (SIGTERM, then SIGKILL after `kill_grace_s`) and removes
  /// the log file.
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  /// Waits until the server prints its "listening on http://HOST:PORT" line. False when the
  /// process exits first or `timeout_s` passes; error() then says which.
  bool WaitUntilListening(double timeout_s);

  std::uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }
  const std::string& error() const { return error_; }
  /// Everything the server wrote to stderr and stdout so far.
  std::string Output() const;
  /// The full command line, for failure messages.
  const std::string& command_line() const { return command_line_; }

  /// Sends `signal` to the server (no-op once it was reaped).
  void Signal(int signal);
  /// Waits up to `timeout_s` for the server to exit; returns its raw wait status (use
  /// WIFEXITED/WEXITSTATUS), or nullopt when it is still running.
  std::optional<int> WaitForExit(double timeout_s);
  /// True while the child has not been reaped (it may be a zombie not yet waited for).
  bool running() const { return pid_ > 0 && !exit_status_.has_value(); }

  /// SIGTERM, up to `grace_s` to exit, then SIGKILL; always reaps the child.
  void Stop(double grace_s = 3.0);

 private:
  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
  std::optional<int> exit_status_;
  std::string log_path_;
  std::string command_line_;
  std::string error_;
};

}  // namespace spillway::server_test
