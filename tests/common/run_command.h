#pragma once
// Runs a program from a test without a shell: an argument vector, an optional environment
// change, stdout and stderr captured, and a deadline after which its process group is killed.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spillway::testing_util {

struct CommandResult {
  bool exited = false;      ///< false: not started, killed at the deadline, or by a signal
  int exit_code = -1;       ///< when it exited
  std::string output;       ///< stdout and stderr, interleaved
  std::string description;  ///< "exit code 2", "timed out after 60 s (killed)", ...
};

/// Runs `argv` (argv[0] a path, or a name looked up on this process's PATH) with stdin from
/// /dev/null, in a process group of its own that gets SIGKILL after `timeout_s` and once it
/// exits (so no helper process it started outlives it). `env` entries "NAME=value" are added
/// to this process's environment, replacing a variable of the same name.
CommandResult RunCommand(const std::vector<std::string>& argv, double timeout_s,
                         const std::vector<std::string>& env = {});

/// The first executable `name` in a PATH directory, or nullopt.
std::optional<std::string> FindOnPath(std::string_view name);

}  // namespace spillway::testing_util
