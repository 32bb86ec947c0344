#pragma once
// Assertions for programmer errors. They stay on in release builds (style.md, "errors in two
// lanes"): a broken invariant stops the process with the condition, file and line.

#include <cstdio>
#include <cstdlib>

namespace spillway::detail {
[[noreturn]] inline void CheckFailed(const char* cond, const char* file, int line) {
  std::fprintf(stderr, "spillway: check failed: %s (%s:%d)\n", cond, file, line);
  std::abort();
}
}  // namespace spillway::detail

#define SPILLWAY_CHECK(cond)                                      \
  do {                                                            \
    if (!(cond)) {                                                \
      ::spillway::detail::CheckFailed(#cond, __FILE__, __LINE__); \
    }                                                             \
  } while (false)
