#pragma once
// Small text helpers for tests that read what a child process wrote.

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace spillway::testing_util {

/// The whole file at `path`; empty when it cannot be read.
inline std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

/// The non-empty lines of `text`, without their newlines.
inline std::vector<std::string> NonEmptyLines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) {
      out.push_back(line);
    }
  }
  return out;
}

}  // namespace spillway::testing_util
