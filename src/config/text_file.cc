#include "config/text_file.h"

#include <filesystem>
#include <fstream>

#include "config/config_error.h"

namespace spillway::config {

std::string ReadInputFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ConfigError(path + ": is a directory, not a file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ConfigError(path + ": cannot open file");
  }
  // Read until the end or past the cap.
  std::string text;
  char chunk[1 << 16];
  while (in && text.size() <= kMaxInputFileBytes) {
    in.read(chunk, sizeof chunk);
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
  }
  if (text.size() > kMaxInputFileBytes) {
    throw ConfigError(path + ": longer than " + std::to_string(kMaxInputFileBytes >> 20) +
                      " MiB: not an input of Spillway's");
  }
  if (in.bad()) {
    throw ConfigError(path + ": cannot read file");
  }
  return text;
}

}  // namespace spillway::config
