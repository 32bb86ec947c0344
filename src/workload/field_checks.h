#pragma once
// Small typed readers over config::Field used by the scenario loader: required children,
// bounded integers, optional numbers and booleans, enum strings. Every failure is a
// config::ConfigError from Field::Fail, so it names the file, line, field path and value.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/yaml_reader.h"

namespace spillway::field_checks {

/// The child `key` of map `f`; fails on `f` ("missing required field 'key'") when absent.
config::Field Required(const config::Field& f, const std::string& key);
/// The required child `key` of `f` as a number > 0.
double RequiredPositive(const config::Field& f, const std::string& key);
/// The required child `key` of `f` as a number >= 0.
double RequiredNonNegative(const config::Field& f, const std::string& key);

/// An integer in [lo, hi]; fails on non-integers ("must be an integer") and out-of-range values.
std::int64_t IntIn(const config::Field& f, std::int64_t lo, std::int64_t hi);
/// IntIn when present, else nullopt.
std::optional<std::int64_t> OptIntIn(const config::Field& f, std::int64_t lo, std::int64_t hi);

/// A number > 0 when present, else nullopt.
std::optional<double> OptPositive(const config::Field& f);
/// A number >= 0 when present, else nullopt.
std::optional<double> OptNonNegative(const config::Field& f);
/// A boolean when present, else nullopt.
std::optional<bool> OptBool(const config::Field& f);

/// A string that is one of `allowed` ("must be one of: a, b").
std::string EnumOf(const config::Field& f, const std::vector<std::string>& allowed);
/// A non-empty string.
std::string NonEmptyString(const config::Field& f);

}  // namespace spillway::field_checks
