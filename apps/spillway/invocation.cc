#include "invocation.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <fstream>
#include <iterator>
#include <string_view>

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

// Flags whose value is a secret: the value is written as "***".
constexpr std::array<std::string_view, 2> kSecretFlags = {"--api-key", "--api-key-for"};

bool IsSecretFlag(std::string_view arg) {
  return std::find(kSecretFlags.begin(), kSecretFlags.end(), arg) != kSecretFlags.end();
}

// "--api-key=KEY" as "--api-key=***"; other arguments unchanged.
std::string Masked(const std::string& arg) {
  const std::size_t eq = arg.find('=');
  if (eq != std::string::npos && IsSecretFlag(std::string_view(arg).substr(0, eq))) {
    return arg.substr(0, eq + 1) + "***";
  }
  return arg;
}

}  // namespace

std::string Invocation() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string out = "spillway";
  bool secret_next = false;
  std::size_t start = raw.find('\0');  // past argv[0]
  while (start != std::string::npos && start + 1 < raw.size()) {
    const std::size_t end = raw.find('\0', start + 1);
    const std::string arg =
        raw.substr(start + 1, end == std::string::npos ? std::string::npos : end - start - 1);
    out += " " + (secret_next ? std::string("***") : Quoted(Masked(arg)));
    secret_next = IsSecretFlag(arg);
    start = end;
  }
  return out;
}

std::string UtcNow() {
  const auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", now);
}

}  // namespace spillway::app
