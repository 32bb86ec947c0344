#pragma once
// Everything `spillway policy` says about a policy: CheckPolicy's findings and the engine
// flags checked against the profile the policy names (src/policy/engine_flags_check.h), the
// profile looked up among the shipped ones.

#include <chrono>
#include <string>
#include <vector>

#include "policy/policy.h"
#include "policy/policy_check.h"

namespace spillway::app {

/// The policy's workload.scenario `given` as a path: as given, else beside the policy file
/// (and its parent: policies/ sits beside scenarios/); "" when none exists.
std::string FindPolicyScenario(const std::string& given, const std::string& policy_file);

/// Errors first, then warnings. A model.profile that does not load is a warning saying the
/// flags were not checked; so is a workload.scenario that is not there.
std::vector<policy::Finding> PolicyFindings(const policy::Policy& p, std::chrono::sys_days today);

}  // namespace spillway::app
