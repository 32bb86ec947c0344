#pragma once
// Reading an input file whole (a config, a scenario, a run summary, a capacity run) with the
// refusals every reader needs: a directory, a file that cannot be opened or read, and one
// longer than kMaxInputFileBytes (a device such as /dev/zero, which never ends).

#include <cstddef>
#include <string>

namespace spillway::config {

/// The longest input file read, bytes (every input of Spillway's is far shorter).
inline constexpr std::size_t kMaxInputFileBytes = std::size_t{64} << 20;

/// The text of `path`. Throws ConfigError "PATH: why" on a directory, a file that cannot be
/// opened or read, or one longer than kMaxInputFileBytes.
std::string ReadInputFile(const std::string& path);

}  // namespace spillway::config
