#pragma once
// The message of the ConfigError a call throws: loader tests compare it with the file, line and
// field they expect.

#include <string>

#include "config/config_error.h"

namespace spillway::testing_util {

/// The ConfigError message of `fn()`, or "" when it does not throw one.
template <typename Fn>
std::string ErrorOf(Fn fn) {
  try {
    fn();
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace spillway::testing_util
