#pragma once
// Writes checklist verdicts back into a policy file's text: `spillway policy verify` records
// what it found in the file itself, so `policy check` and `policy render` read them like any
// other field. Only the two checklist sections change; every other line, comments included,
// stays as written. Pure.

#include <string>
#include <string_view>

#include "policy/policy.h"

namespace spillway::policy {

/// `text` (a policy file that reads) with its top-level `cancellation` and `validation`
/// sections replaced by `policy`'s checklists: every item in the lesson's order with its
/// verdict, and its evidence and checked_at when it has them (YAML-quoted as needed). A section
/// the text lacks is appended at the end. Comment lines at the left margin after a section
/// belong to what follows and are kept.
std::string WithChecklists(std::string_view text, const Policy& policy);

}  // namespace spillway::policy
