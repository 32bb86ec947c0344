#include "policy_findings.h"

#include <algorithm>

#include "commands.h"
#include "config/config_error.h"
#include "config/profile.h"
#include "policy/engine_flags_check.h"

namespace spillway::app {

std::vector<policy::Finding> PolicyFindings(const policy::Policy& p, std::chrono::sys_days today) {
  std::vector<policy::Finding> all = policy::CheckPolicy(p, today);
  if (const policy::Value* name = p.Find("model.profile")) {
    try {
      const Profile profile = LoadProfileByName(name->text, DefaultProfileDir());
      const std::vector<policy::Finding> flags = policy::CheckEngineFlags(p, profile);
      all.insert(all.end(), flags.begin(), flags.end());
    } catch (const config::ConfigError& e) {
      all.push_back(
          {policy::Severity::kWarning, name->where,
           std::string("the engine flags are not checked against its cost model: ") + e.what()});
    }
  }
  std::stable_partition(all.begin(), all.end(), [](const policy::Finding& f) {
    return f.severity == policy::Severity::kError;
  });
  return all;
}

}  // namespace spillway::app
