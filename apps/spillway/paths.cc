#include <cstdlib>
#include <filesystem>

#include "commands.h"

namespace spillway::app {

std::string DefaultProfileDir() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("SPILLWAY_PROFILE_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path beside = exe.parent_path().parent_path() / "profiles";
    if (fs::is_directory(beside, ec)) {
      return beside.string();
    }
  }
  return std::string(SPILLWAY_SOURCE_DIR) + "/profiles";
}

}  // namespace spillway::app
