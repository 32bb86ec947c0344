#pragma once
// Helpers shared by the executor tests (one unity batch: names at file scope are unique within
// a test binary).

#include <string>

#include "common/config_error_of.h"
#include "config/profile.h"

namespace spillway::executor_test {

/// profiles/seed-a100-7b.yaml, the profile every default run uses.
inline Profile SeedProfile() {
  return LoadProfile(std::string(SPILLWAY_SOURCE_DIR) + "/profiles/seed-a100-7b.yaml");
}

/// The message of the ConfigError thrown by loading the profile file at `path` ("" when it
/// loads).
inline std::string LoadError(const std::string& path) {
  return testing_util::ErrorOf([&] { LoadProfile(path); });
}

/// The same for a profile given as YAML text, named p.yaml in messages.
inline std::string LoadTextError(const std::string& yaml) {
  return testing_util::ErrorOf([&] { LoadProfileFromString(yaml, "p.yaml"); });
}

}  // namespace spillway::executor_test
