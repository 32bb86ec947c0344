#pragma once
// CLI11 validators shared by the subcommands.

#include <CLI/CLI.hpp>
#include <cctype>
#include <cmath>
#include <sstream>
#include <string>

namespace spillway::app {

/// A finite number > 0. (CLI11's number validators let NaN through; this one does not.)
inline const CLI::Validator kFinitePositive(
    [](std::string& s) -> std::string {
      try {
        const double v = std::stod(s);
        return std::isfinite(v) && v > 0 ? "" : "must be a finite number > 0, got " + s;
      } catch (const std::exception&) {
        return "must be a number, got " + s;
      }
    },
    "FINITE>0");

/// A finite number >= 0.
inline const CLI::Validator kFiniteNonNegative(
    [](std::string& s) -> std::string {
      try {
        const double v = std::stod(s);
        return std::isfinite(v) && v >= 0 ? "" : "must be a finite number >= 0, got " + s;
      } catch (const std::exception&) {
        return "must be a number, got " + s;
      }
    },
    "FINITE>=0");

/// A finite number in (lo, hi] when `lo_open`, else in [lo, hi], with one message for every way
/// a value misses it (CLI's `&` of two validators prints both messages).
inline CLI::Validator FiniteIn(double lo, double hi, bool lo_open) {
  std::ostringstream range;
  range << (lo_open ? "> " : ">= ") << lo << " and <= " << hi;
  const std::string want = "must be a finite number " + range.str();
  return CLI::Validator(
      [lo, hi, lo_open, want](std::string& s) -> std::string {
        try {
          std::size_t used = 0;
          const double v = std::stod(s, &used);
          const bool above = lo_open ? v > lo : v >= lo;
          return used == s.size() && std::isfinite(v) && above && v <= hi ? ""
                                                                          : want + ", got " + s;
        } catch (const std::exception&) {
          return want + ", got " + s;
        }
      },
      "FINITE " + range.str());
}

/// A TCP port, 0 to 65535 (CLI11's own refusal of 80000 for a uint16_t is "Could not convert").
inline const CLI::Validator kPort(
    [](std::string& s) -> std::string {
      const bool digits =
          !s.empty() && s.size() <= 5 && s.find_first_not_of("0123456789") == std::string::npos;
      return digits && std::stol(s) <= 65535 ? ""
                                             : "must be a port number 0 to 65535, got '" + s + "'";
    },
    "PORT");

/// One of the words CLI11 reads as a bool; CLI11's own refusal ("Could not convert") does not
/// say which words those are.
inline const CLI::Validator kBoolWord(
    [](std::string& s) -> std::string {
      std::string v = s;
      for (char& c : v) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
      for (const char* word : {"true", "false", "1", "0", "on", "off", "yes", "no"}) {
        if (v == word) {
          return "";
        }
      }
      return "must be true or false, got '" + s + "'";
    },
    "true|false");

/// A non-empty file name.
inline const CLI::Validator kNonEmptyPath(
    [](const std::string& s) {
      return s.empty() ? std::string("needs a file name") : std::string();
    },
    "PATH");

}  // namespace spillway::app
