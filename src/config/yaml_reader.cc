#include "config/yaml_reader.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include <yaml-cpp/eventhandler.h>

#include "config/text_file.h"

namespace spillway::config {
namespace {

std::string Describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) {
    return "nothing";
  }
  if (node.IsScalar()) {
    return "'" + node.Scalar() + "'";
  }
  return node.IsMap() ? "a map" : "a list";
}

/// Counts a YAML stream's documents and remembers where the last one started.
class DocumentCounter final : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override {
    ++count_;
    start_ = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

  std::size_t count() const { return count_; }
  const YAML::Mark& start() const { return start_; }

 private:
  std::size_t count_ = 0;
  YAML::Mark start_ = YAML::Mark::null_mark();
};

/// The number of documents in `text`. yaml-cpp 0.7 (Debian bookworm) never consumes a token
/// that cannot start a node, such as a ',' outside a flow collection, and its LoadAll then
/// yields empty documents forever while memory grows (yaml-cpp issue 1040, fixed upstream
/// after 0.8). A document that starts where the previous one did is that token: an error.
std::size_t CountDocuments(const std::string& text, const std::string& origin) {
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  DocumentCounter counter;
  int previous_pos = -1;
  while (parser.HandleNextDocument(counter)) {
    const YAML::Mark& start = counter.start();
    if (start.pos == previous_pos) {
      const std::size_t at = static_cast<std::size_t>(start.pos);
      const std::string token = at < text.size() ? "'" + text.substr(at, 1) + "'" : "the end";
      throw ConfigError(origin + ":" + std::to_string(start.line + 1) +
                        ": invalid YAML: unexpected " + token);
    }
    previous_pos = start.pos;
  }
  return counter.count();
}

}  // namespace

Field Field::LoadFile(const std::string& path) { return LoadString(ReadInputFile(path), path); }

Field Field::LoadString(const std::string& text, const std::string& origin) {
  try {
    const std::size_t docs = CountDocuments(text, origin);
    if (docs > 1) {
      throw ConfigError(origin + ": holds " + std::to_string(docs) +
                        " YAML documents; expected one");
    }
    return Field(docs == 0 ? YAML::Node() : YAML::Load(text), origin, "");
  } catch (const YAML::Exception& e) {
    throw ConfigError(origin + ":" + std::to_string(e.mark.line + 1) + ": invalid YAML: " + e.msg);
  }
}

Field::Field(YAML::Node node, std::string file, std::string path)
    : node_(node.IsDefined() ? std::move(node) : YAML::Node(YAML::NodeType::Undefined)),
      file_(std::move(file)),
      path_(std::move(path)) {}
// (A missing map key yields an invalid "zombie" node whose type queries throw; a valid
// Undefined node answers IsMap() etc. with false, so absent fields chain safely.)

Field Field::operator[](const std::string& key) const {
  const std::string child_path = path_.empty() ? key : path_ + "." + key;
  Field child(node_.IsMap() ? node_[key] : YAML::Node(YAML::NodeType::Undefined), file_,
              child_path);
  if (!child.node_.IsDefined()) {
    child.parent_line_ = node_.IsDefined() ? node_.Mark().line : parent_line_;
  }
  return child;
}

std::vector<Field> Field::Items() const {
  if (!node_.IsSequence()) {
    Fail("must be a list");
  }
  std::vector<Field> items;
  for (std::size_t i = 0; i < node_.size(); ++i) {
    items.emplace_back(node_[i], file_, path_ + "[" + std::to_string(i) + "]");
  }
  return items;
}

std::vector<std::string> Field::Keys() const {
  if (!node_.IsMap()) {
    Fail("must be a map");
  }
  std::vector<std::string> keys;
  for (const auto& kv : node_) {
    if (kv.first.IsMap() || kv.first.IsSequence()) {
      // YAML allows complex keys ("? [a, b]: x"); config keys are field names.
      Field(kv.first, file_, path_).Fail("keys must be field names, not a map or a list");
    }
    keys.push_back(kv.first.as<std::string>());  // a null key reads as "null"
  }
  return keys;
}

void Field::RequireKnownKeys(const std::vector<std::string>& allowed) const {
  if (!present()) {
    return;
  }
  const std::vector<std::string> keys = Keys();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::string& key = keys[i];
    if (std::find(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(i), key) !=
        keys.begin() + static_cast<std::ptrdiff_t>(i)) {
      (*this)[key].Fail("duplicate key '" + key + "'");
    }
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) {
        list += (list.empty() ? "" : ", ") + a;
      }
      (*this)[key].Fail("unknown field (known: " + list + ")");
    }
  }
}

double Field::AsDouble() const {
  if (!node_.IsScalar()) {
    Fail("must be a number");
  }
  const std::string& s = node_.Scalar();
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(s, &used);
  } catch (const std::exception&) {
    // YAML's own spellings of infinity and NaN (.inf, -.Inf, .NAN) are numbers, not finite.
    std::string word =
        s.substr(s.find_first_not_of("+-") == std::string::npos ? 0 : s.find_first_not_of("+-"));
    std::transform(word.begin(), word.end(), word.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    Fail(word == ".inf" || word == ".nan" ? "must be a finite number" : "must be a number");
  }
  if (used != s.size() || !std::isfinite(value)) {
    Fail("must be a finite number");
  }
  return value;
}

std::int64_t Field::AsInt() const {
  const double value = AsDouble();
  if (value != std::floor(value) || std::fabs(value) > 9.0e15) {
    Fail("must be an integer");
  }
  return static_cast<std::int64_t>(value);
}

bool Field::AsBool() const {
  if (node_.IsScalar()) {
    const std::string& s = node_.Scalar();
    if (s == "true" || s == "yes" || s == "on") {
      return true;
    }
    if (s == "false" || s == "no" || s == "off") {
      return false;
    }
  }
  Fail("must be true or false");
}

std::string Field::AsString() const {
  if (!node_.IsScalar()) {
    Fail("must be a string");
  }
  return node_.Scalar();
}

std::string Field::Where() const {
  std::string where = file_;
  const int line = node_.IsDefined() ? node_.Mark().line : parent_line_;
  if (line >= 0) {
    where += ":" + std::to_string(line + 1);
  }
  return where + ": " + (path_.empty() ? "(top level)" : path_) + ": ";
}

void Field::Fail(const std::string& message) const {
  throw ConfigError(Where() + message + ", got " + Describe(node_));
}

void Field::FailSaying(const std::string& message) const { throw ConfigError(Where() + message); }

double Positive(const Field& f, double value) {
  if (!(value > 0)) {
    f.Fail("must be > 0");
  }
  return value;
}

double NonNegative(const Field& f, double value) {
  if (!(value >= 0)) {
    f.Fail("must be >= 0");
  }
  return value;
}

double InRange(const Field& f, double value, double lo_exclusive, double hi_inclusive) {
  if (!(value > lo_exclusive && value <= hi_inclusive)) {
    std::ostringstream msg;
    msg << "must be in (" << lo_exclusive << ", " << hi_inclusive << "]";
    f.Fail(msg.str());
  }
  return value;
}

}  // namespace spillway::config
