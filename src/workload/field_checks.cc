#include "workload/field_checks.h"

#include <algorithm>

namespace spillway::field_checks {

using config::Field;

Field Required(const Field& f, const std::string& key) {
  Field child = f[key];
  if (!child.present()) {
    f.Fail("missing required field '" + key + "'");
  }
  return child;
}

double RequiredPositive(const Field& f, const std::string& key) {
  const Field child = Required(f, key);
  return config::Positive(child, child.AsDouble());
}

double RequiredNonNegative(const Field& f, const std::string& key) {
  const Field child = Required(f, key);
  return config::NonNegative(child, child.AsDouble());
}

std::int64_t IntIn(const Field& f, std::int64_t lo, std::int64_t hi) {
  const std::int64_t value = f.AsInt();
  if (value < lo) {
    f.Fail("must be >= " + std::to_string(lo));
  }
  if (value > hi) {
    f.Fail("must be <= " + std::to_string(hi));
  }
  return value;
}

std::optional<std::int64_t> OptIntIn(const Field& f, std::int64_t lo, std::int64_t hi) {
  return f.present() ? std::optional<std::int64_t>(IntIn(f, lo, hi)) : std::nullopt;
}

std::optional<double> OptPositive(const Field& f) {
  return f.present() ? std::optional<double>(config::Positive(f, f.AsDouble())) : std::nullopt;
}

std::optional<double> OptNonNegative(const Field& f) {
  return f.present() ? std::optional<double>(config::NonNegative(f, f.AsDouble())) : std::nullopt;
}

std::optional<bool> OptBool(const Field& f) {
  return f.present() ? std::optional<bool>(f.AsBool()) : std::nullopt;
}

std::string EnumOf(const Field& f, const std::vector<std::string>& allowed) {
  const std::string value = f.AsString();
  if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
    std::string list;
    for (const std::string& a : allowed) {
      list += (list.empty() ? "" : ", ") + a;
    }
    f.Fail("must be one of: " + list);
  }
  return value;
}

std::string NonEmptyString(const Field& f) {
  std::string value = f.AsString();
  if (value.empty()) {
    f.Fail("must not be empty");
  }
  return value;
}

}  // namespace spillway::field_checks
