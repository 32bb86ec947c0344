#pragma once
// CLI11 validators shared by the subcommands.

#include <CLI/CLI.hpp>
#include <cmath>
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

/// A non-empty file name.
inline const CLI::Validator kNonEmptyPath(
    [](const std::string& s) {
      return s.empty() ? std::string("needs a file name") : std::string();
    },
    "PATH");

}  // namespace spillway::app
