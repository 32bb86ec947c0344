#pragma once
// Typed reading of YAML config and scenario files with the field path, file and line in every
// error (style.md rule 6: "policy.yaml:12: admission.kv_headroom: must be in (0, 1], got 1.5").
//
// Exceptions are the error lane here: config load happens at start-up only. Every failure is a
// ConfigError whose what() is the complete message for the user.

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "config/config_error.h"

namespace spillway::config {

/// A YAML node plus where it came from. Cheap to copy.
class Field {
 public:
  /// Parses `path` (a YAML file). Throws ConfigError naming the file on I/O or syntax errors,
  /// on a directory, and on a file longer than config::kMaxInputFileBytes (text_file.h).
  static Field LoadFile(const std::string& path);
  /// Parses YAML text; `origin` names it in errors (e.g. "<inline>").
  static Field LoadString(const std::string& text, const std::string& origin);

  Field(YAML::Node node, std::string file, std::string path);

  bool present() const { return node_.IsDefined() && !node_.IsNull(); }
  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }
  const std::string& path() const { return path_; }
  const std::string& file() const { return file_; }
  const YAML::Node& node() const { return node_; }

  /// The child `key` of a map (absent children are allowed; check present()).
  Field operator[](const std::string& key) const;
  /// The children of a sequence, in order. Throws unless this is a sequence.
  std::vector<Field> Items() const;
  /// The keys of a map, in file order. Throws unless this is a map.
  std::vector<std::string> Keys() const;

  /// Throws unless every key of this map is in `allowed` (catches typos in field names).
  void RequireKnownKeys(const std::vector<std::string>& allowed) const;

  double AsDouble() const;
  std::int64_t AsInt() const;
  bool AsBool() const;
  std::string AsString() const;

  double Double(double fallback) const { return present() ? AsDouble() : fallback; }
  std::int64_t Int(std::int64_t fallback) const { return present() ? AsInt() : fallback; }
  bool Bool(bool fallback) const { return present() ? AsBool() : fallback; }
  std::string String(const std::string& fallback) const {
    return present() ? AsString() : fallback;
  }

  /// A ConfigError "file:line: path: message, got VALUE" (for an absent field, the line of
  /// the map that lacks it).
  [[noreturn]] void Fail(const std::string& message) const;
  /// The same without ", got VALUE", for a message that names the value itself.
  [[noreturn]] void FailSaying(const std::string& message) const;

  /// "file:line: path: ", the start of an error about this field found later (when a value
  /// is checked against something the file does not hold, such as a profile directory).
  std::string Where() const;

 private:
  YAML::Node node_;
  std::string file_;
  std::string path_;
  int parent_line_ = -1;  // an absent field's: the line of the map it is missing from (0-based)
};

/// Range checks that throw Field::Fail with a uniform message.
double Positive(const Field& f, double value);
double NonNegative(const Field& f, double value);
double InRange(const Field& f, double value, double lo_exclusive, double hi_inclusive);

}  // namespace spillway::config
