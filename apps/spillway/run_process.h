#pragma once
// Runs an external program (gnuplot) without a shell: posix_spawn with an argument vector, a
// working directory, the output in a log file, and a deadline.

#include <string>
#include <string_view>
#include <vector>

namespace spillway::app {

struct ProcessResult {
  bool exited = false;      ///< false: not started, killed at the deadline, or by a signal
  int exit_code = -1;       ///< when it exited
  std::string description;  ///< "exit code 1", "timed out after 120 s (killed)", "spawn: ..."
};

/// The first executable file `name` in a $PATH directory, or "" when there is none. A name
/// with a '/' is returned as it is when it is executable.
std::string FindExecutable(std::string_view name);

/// Runs `argv` (argv[0] a path to the program) in directory `cwd` with stdin from /dev/null
/// and stdout and stderr written to `log_path` (truncated), in a process group of its own that
/// gets SIGKILL after `timeout_s`. Blocks until it ends; the child is always reaped.
ProcessResult RunProcess(const std::vector<std::string>& argv, const std::string& cwd,
                         const std::string& log_path, double timeout_s);

}  // namespace spillway::app
