#pragma once
// Reading a policy file (docs/policy.md) into a Policy. Structural errors (YAML syntax, an
// unknown section or field, a value of the wrong type or out of range, a required field or a
// measurement's run/command/at missing, two sources for one value) throw config::ConfigError
// naming file, line and field: every such error of the file, a line each (a YAML syntax error
// or a file that is not a map stops the reading at it); what the values mean together is
// policy_check.h's job.

#include <string>

#include "config/config_error.h"
#include "policy/policy.h"

namespace spillway::policy {

/// Reads the policy file at `path`. Throws config::ConfigError as above.
Policy ReadPolicyFile(const std::string& path);
/// Reads policy YAML text; `origin` names it in errors.
Policy ReadPolicyString(const std::string& yaml, const std::string& origin);

}  // namespace spillway::policy
