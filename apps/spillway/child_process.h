#pragma once
// A `spillway` child process for `spillway fleet`: this same binary run with a subcommand
// (serve, gateway), its stderr and stdout in a log file, dying with its parent
// (PR_SET_PDEATHSIG) and never left behind (the destructor stops and reaps it).

#include <sys/types.h>

#include <string>
#include <vector>

namespace spillway::app {

class ChildProcess {
 public:
  /// Starts this binary (/proc/self/exe's target) with ARGS... with output to `log_path`. Throws
  /// std::runtime_error when fork or the log file fails.
  ChildProcess(const std::vector<std::string>& args, std::string log_path);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  /// Waits up to `timeout_s` for the "listening on http://HOST:PORT" line and returns the URL.
  /// Throws std::runtime_error (with the log) when the child exits first or does not listen.
  std::string WaitUntilListening(double timeout_s);

  /// Sends `signal`; after SIGKILL, also reaps the child.
  void Signal(int signal);
  /// SIGTERM, up to `grace_s` to exit, then SIGKILL; reaps the child. Idempotent.
  void Stop(double grace_s);
  bool running() const { return pid_ > 0; }
  const std::string& log_path() const { return log_path_; }

 private:
  /// Reaps the child if it exited (waits up to `timeout_s`); true once reaped.
  bool Reap(double timeout_s);

  pid_t pid_ = -1;
  std::string log_path_;
};

}  // namespace spillway::app
