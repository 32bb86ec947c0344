#include "invocation.h"

#include <fstream>
#include <iterator>

namespace spillway::app {
namespace {

std::string Quoted(const std::string& arg) {
  if (!arg.empty() && arg.find_first_of(" \t\n'\"\\$`&|;<>()*?[]{}~!#") == std::string::npos) {
    return arg;
  }
  std::string out = "'";
  for (const char c : arg) {
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return out + "'";
}

}  // namespace

std::string Invocation() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string out = "spillway";
  std::size_t start = raw.find('\0');  // past argv[0]
  while (start != std::string::npos && start + 1 < raw.size()) {
    const std::size_t end = raw.find('\0', start + 1);
    out += " " + Quoted(raw.substr(start + 1,
                                   end == std::string::npos ? std::string::npos : end - start - 1));
    start = end;
  }
  return out;
}

}  // namespace spillway::app
