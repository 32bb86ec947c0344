#include "policy/policy_reader.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>

#include "config/yaml_reader.h"

namespace spillway::policy {
namespace {

using config::Field;

// The errors of a whole file: each part is read on its own, so that one error does not hide
// the next; ThrowIfAny throws them all, a line each, in the file's order of reading.
class Errors {
 public:
  template <typename Read>
  void Try(Read read) {
    try {
      read();
    } catch (const config::ConfigError& e) {
      messages_.emplace_back(e.what());
    }
  }
  void ThrowIfAny() const {
    if (messages_.empty()) {
      return;
    }
    std::string all;
    for (const std::string& m : messages_) {
      all += (all.empty() ? "" : "\n") + m;
    }
    throw config::ConfigError(all);
  }

 private:
  std::vector<std::string> messages_;
};

std::string FormatRange(const FieldSpec& spec) {
  const char* open = spec.lo_open ? "(" : "[";
  if (std::isinf(spec.hi)) {
    return spec.lo_open ? fmt::format("> {}", spec.lo) : fmt::format(">= {}", spec.lo);
  }
  return fmt::format("in {}{}, {}]", open, spec.lo, spec.hi);
}

// The value of a field: the scalar itself, or `value` of the {value, source} map.
void ReadScalar(const Field& f, const FieldSpec& spec, Value* out) {
  switch (spec.kind) {
    case ValueKind::kNumber:
    case ValueKind::kInteger: {
      const double v =
          spec.kind == ValueKind::kInteger ? static_cast<double>(f.AsInt()) : f.AsDouble();
      if (v < spec.lo || v > spec.hi || (spec.lo_open && v == spec.lo)) {
        f.Fail("must be " + std::string(spec.kind == ValueKind::kInteger ? "an integer " : "") +
               FormatRange(spec));
      }
      out->number = v;
      out->text = f.AsString();
      return;
    }
    case ValueKind::kBool:
      out->flag = f.AsBool();
      out->text = out->flag ? "true" : "false";
      return;
    case ValueKind::kChoice: {
      out->text = f.AsString();
      if (std::find(spec.choices.begin(), spec.choices.end(), out->text) == spec.choices.end()) {
        std::string list;
        for (const std::string_view c : spec.choices) {
          list += (list.empty() ? "" : ", ") + std::string(c);
        }
        f.Fail("must be one of " + list);
      }
      return;
    }
    case ValueKind::kText:
      out->text = f.AsString();
      if (out->text.empty()) {
        f.FailSaying("must not be empty");
      }
      return;
  }
}

std::string RequiredText(const Field& f) {
  if (!f.present()) {
    f.FailSaying("is required");
  }
  const std::string text = f.AsString();
  if (text.empty()) {
    f.FailSaying("must not be empty");
  }
  return text;
}

Measurement ReadMeasurement(const Field& m) {
  if (!m.is_map()) {
    m.Fail("must be a map of run, command, at, engine, profile");
  }
  m.RequireKnownKeys({"run", "command", "at", "engine", "profile"});
  Measurement out;
  out.run = RequiredText(m["run"]);
  out.command = RequiredText(m["command"]);
  out.at = RequiredText(m["at"]);
  out.engine = m["engine"].String("");
  out.profile = m["profile"].String("");
  return out;
}

Value ReadValue(const Field& f, const FieldSpec& spec) {
  Value out;
  out.spec = &spec;
  out.where = f.Where();
  if (!f.is_map()) {
    ReadScalar(f, spec, &out);
    return out;
  }
  f.RequireKnownKeys({"value", "measured", "bound", "decision"});
  const Field value = f["value"];
  if (!value.present()) {
    value.FailSaying("is required (a field given as a map is {value, measured|bound|decision})");
  }
  ReadScalar(value, spec, &out);
  int sources = 0;
  if (const Field m = f["measured"]; m.present()) {
    out.source.kind = SourceKind::kMeasured;
    out.source.measured = ReadMeasurement(m);
    ++sources;
  }
  if (const Field b = f["bound"]; b.present()) {
    out.source.kind = SourceKind::kBound;
    out.source.text = RequiredText(b);
    ++sources;
  }
  if (const Field d = f["decision"]; d.present()) {
    out.source.kind = SourceKind::kDecision;
    out.source.text = RequiredText(d);
    ++sources;
  }
  if (sources > 1) {
    f.FailSaying("has more than one source: give one of measured, bound or decision");
  }
  return out;
}

Verdict ReadVerdict(const Field& f) {
  const std::string word = f.AsString();
  if (word == "pass") {
    return Verdict::kPass;
  }
  if (word == "fail") {
    return Verdict::kFail;
  }
  if (word == "unchecked") {
    return Verdict::kUnchecked;
  }
  f.Fail("must be one of pass, fail, unchecked");
}

std::vector<ChecklistItem> ReadChecklist(const Field& section, std::string_view name) {
  const auto& items = ChecklistItems(name);
  std::vector<std::string> ids;
  for (const auto& [id, label] : items) {
    ids.emplace_back(id);
  }
  if (section.present()) {
    if (!section.is_map()) {
      section.Fail("must be a map of checklist items");
    }
    section.RequireKnownKeys(ids);
  }
  std::vector<ChecklistItem> out;
  for (const std::string& id : ids) {
    ChecklistItem item;
    item.id = id;
    const Field f = section[id];
    item.where = f.Where();
    if (f.present()) {
      if (!f.is_map()) {
        f.Fail("must be a map of verdict, evidence, checked_at");
      }
      f.RequireKnownKeys({"verdict", "evidence", "checked_at"});
      item.verdict = f["verdict"].present() ? ReadVerdict(f["verdict"]) : Verdict::kUnchecked;
      item.evidence = f["evidence"].String("");
      item.checked_at = f["checked_at"].String("");
      if (item.verdict != Verdict::kUnchecked && item.evidence.empty()) {
        f["evidence"].FailSaying("is required with a verdict of pass or fail");
      }
      if (item.verdict != Verdict::kUnchecked && item.checked_at.empty()) {
        f["checked_at"].FailSaying(
            "is required with a verdict of pass or fail (the date it was checked)");
      }
    }
    out.push_back(std::move(item));
  }
  return out;
}

Policy ReadPolicy(const Field& root) {
  if (!root.is_map()) {
    root.Fail("a policy file must be a map of sections");
  }
  Errors errors;
  std::vector<std::string> sections(PolicySections().begin(), PolicySections().end());
  errors.Try([&] { root.RequireKnownKeys(sections); });
  Policy policy;
  policy.file = root.file();
  for (const std::string& section : sections) {
    const Field s = root[section];
    if (section == "cancellation" || section == "validation") {
      continue;
    }
    std::vector<std::string> keys;
    for (const FieldSpec& spec : PolicyFields()) {
      if (spec.path.substr(0, spec.path.find('.')) == section) {
        keys.emplace_back(spec.path.substr(spec.path.find('.') + 1));
      }
    }
    if (s.present() && !s.is_map()) {
      errors.Try([&] { s.Fail("must be a map"); });
      continue;
    }
    if (s.present()) {
      errors.Try([&] { s.RequireKnownKeys(keys); });
    }
    for (const std::string& key : keys) {
      errors.Try([&] {
        const FieldSpec& spec = *FindField(section + "." + key);
        const Field f = s[key];
        if (!f.present()) {
          if (spec.required) {
            f.FailSaying("is required (" + std::string(spec.label) + ")");
          }
          return;
        }
        policy.values.emplace(std::string(spec.path), ReadValue(f, spec));
      });
    }
  }
  errors.Try([&] { policy.cancellation = ReadChecklist(root["cancellation"], "cancellation"); });
  errors.Try([&] { policy.validation = ReadChecklist(root["validation"], "validation"); });
  errors.ThrowIfAny();
  return policy;
}

}  // namespace

Policy ReadPolicyFile(const std::string& path) { return ReadPolicy(Field::LoadFile(path)); }

Policy ReadPolicyString(const std::string& yaml, const std::string& origin) {
  return ReadPolicy(Field::LoadString(yaml, origin));
}

}  // namespace spillway::policy
