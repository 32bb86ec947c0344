#pragma once
// The command line this process was started with, to cite as the command that made a file
// (a measurement's evidence in a policy).

#include <string>

namespace spillway::app {

/// "spillway ARG ..." from /proc/self/cmdline (the binary named `spillway` whatever its
/// path; an argument with a space or a shell metacharacter single-quoted; the values of
/// --api-key and --api-key-for written as "***": the line is written into files); "spillway"
/// when it cannot be read.
std::string Invocation();

/// The time now, UTC, to the second: "YYYY-MM-DDThh:mm:ssZ" (when a measurement was made).
std::string UtcNow();

}  // namespace spillway::app
