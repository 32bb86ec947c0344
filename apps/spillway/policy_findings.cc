#include "policy_findings.h"

#include <algorithm>
#include <filesystem>

#include "commands.h"
#include "config/config_error.h"
#include "config/profile.h"
#include "policy/engine_flags_check.h"

namespace spillway::app {

std::string FindPolicyScenario(const std::string& given, const std::string& policy_file) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(policy_file).parent_path();
  for (const fs::path& p : {fs::path(given), dir / given, dir.parent_path() / given}) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) {
      return p.string();
    }
  }
  return "";
}

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
  if (const policy::Value* scenario = p.Find("workload.scenario");
      scenario != nullptr && FindPolicyScenario(scenario->text, p.file).empty()) {
    all.push_back({policy::Severity::kWarning, scenario->where,
                   "no such file (as given, nor beside the policy): verify needs it"});
  }
  std::stable_partition(all.begin(), all.end(), [](const policy::Finding& f) {
    return f.severity == policy::Severity::kError;
  });
  return all;
}

}  // namespace spillway::app
