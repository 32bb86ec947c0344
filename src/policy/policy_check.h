#pragma once
// What `spillway policy check` judges once a policy file reads (policy_reader.h): that every
// value has a source as the lesson requires, that measurements are fresh and were taken on
// the engine and profile the policy names, and that the numbers agree with each other (the
// timeout hierarchy strictly ordered, the ingress deadline within the TTFT SLO, the alerts
// above the admission gates, capacity against the workload). Pure: the date is a parameter.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/policy.h"

namespace spillway::policy {

enum class Severity { kError, kWarning };

/// One finding: `where` is "file:line: path: " (the field it is about), `message` the rest.
struct Finding {
  Severity severity = Severity::kError;
  std::string where;
  std::string message;

  std::string Text() const;  ///< "where" + "error: " or "warning: " + message
};

/// Parses "YYYY-MM-DD" or "YYYY-MM-DDThh:mm:ss[.frac]Z" (UTC) to its day; nullopt when it is
/// neither or not a calendar date.
std::optional<std::chrono::sys_days> ParseDay(std::string_view text);

/// `day` as "YYYY-MM-DD".
std::string FormatDay(std::chrono::sys_days day);

/// Every finding about `policy` as of `today` (measurements older than policy.max_age_days
/// are errors, as are dates after today). Errors first, then warnings, each in the order of the one
/// page.
std::vector<Finding> CheckPolicy(const Policy& policy, std::chrono::sys_days today);

/// Whether `findings` hold an error.
bool HasError(const std::vector<Finding>& findings);

}  // namespace spillway::policy
