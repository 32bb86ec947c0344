#pragma once
// The one-page Overload and Failure Policy of ../shared/seeds/overload-and-failure-handling.txt
// §7 as data. Every field of the lesson's template is a row of PolicyFields(); a policy file
// gives each a value and, as the lesson requires ("each field must reference a measurement,
// physical bound, or a decision"), its source:
//   measured: the run file, the command that made it, when (UTC), the engine and profile;
//   bound:    the arithmetic or datasheet the value follows from;
//   decision: why the value was chosen.
// The two checklists (cancellation propagation, validation) carry a verdict per item.
// Read by policy_reader.h, judged by policy_check.h; the file format is docs/policy.md.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spillway::policy {

enum class ValueKind { kNumber, kInteger, kBool, kText, kChoice };

/// Where a value comes from. kNone only for the descriptive fields (names, paths).
enum class SourceKind { kNone, kMeasured, kBound, kDecision };

/// One field of the template: its dotted path in the file ("capacity.single_replica_mu_rps"),
/// how the one page labels it, its unit (base units: s, req/s, bytes; "" for none), its type
/// and range (numbers: [lo, hi], lo excluded when lo_open), and what source it needs.
struct FieldSpec {
  std::string_view path;
  std::string_view label;
  std::string_view unit;
  ValueKind kind = ValueKind::kNumber;
  double lo = 0;
  double hi = 0;
  bool lo_open = false;
  std::vector<std::string_view> choices;  ///< kChoice: the allowed words
  bool required = true;
  bool descriptive = false;   ///< a name or a path: needs no source
  bool must_measure = false;  ///< the template's "(measured: ______)": only a measurement will do
};

/// The template's fields, in the order of the one page.
const std::vector<FieldSpec>& PolicyFields();
/// The row for `path`, or nullptr.
const FieldSpec* FindField(std::string_view path);

/// The sections of the file, in the order of the one page (the keys allowed at the top).
const std::vector<std::string_view>& PolicySections();

struct Measurement {
  std::string run;      ///< the file the value was read from (a run summary, a probe file)
  std::string command;  ///< the command that wrote it, to redo the measurement
  std::string at;       ///< when, "YYYY-MM-DD" or "YYYY-MM-DDThh:mm:ssZ" (UTC)
  std::string engine;   ///< the engine and version measured ("" when not stated)
  std::string profile;  ///< the executor profile, for an emulated or simulated engine
};

struct Source {
  SourceKind kind = SourceKind::kNone;
  Measurement measured;  ///< kMeasured
  std::string text;      ///< kBound: the arithmetic; kDecision: the reason
};

/// A field's value as read. `where` is "file:line: path: " for messages about it.
struct Value {
  const FieldSpec* spec = nullptr;
  double number = 0;  ///< kNumber, kInteger
  bool flag = false;  ///< kBool
  std::string text;   ///< kText, kChoice; numbers and bools as written
  Source source;
  std::string where;
};

enum class Verdict { kUnchecked, kPass, kFail };

/// One item of a checklist. The ids are fixed (ChecklistItems()); `evidence` says what was
/// seen (a run file, a metric before and after), `checked_at` when.
struct ChecklistItem {
  std::string id;
  Verdict verdict = Verdict::kUnchecked;
  std::string evidence;
  std::string checked_at;
  std::string where;
};

/// The items of the checklist `section` ("cancellation" or "validation"): id and the lesson's
/// wording, in the lesson's order.
const std::vector<std::pair<std::string_view, std::string_view>>& ChecklistItems(
    std::string_view section);

/// A policy file as read: the values given (by path) and both checklists (every item, the
/// ones the file leaves out as kUnchecked).
struct Policy {
  std::string file;
  std::map<std::string, Value, std::less<>> values;
  std::vector<ChecklistItem> cancellation;
  std::vector<ChecklistItem> validation;

  /// The value at `path`, or nullptr when the file does not give it.
  const Value* Find(std::string_view path) const;
  /// The number at `path`, or nullopt when not given.
  std::optional<double> Number(std::string_view path) const;
};

std::string_view VerdictName(Verdict v);

}  // namespace spillway::policy
