// `spillway policy`: the one-page Overload and Failure Policy as a file (docs/policy.md).
// `policy check FILE` reads it and prints every finding (src/policy/policy_check.h).

#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "policy/policy_check.h"
#include "policy/policy_reader.h"

namespace spillway::app {
namespace {

struct PolicyCheckArgs {
  std::string file;
  std::string today;  ///< "" for the system clock's UTC date
};

int RunPolicyCheck(const PolicyCheckArgs& a) {
  std::chrono::sys_days today =
      std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now());
  if (!a.today.empty()) {
    const auto day = policy::ParseDay(a.today);
    if (!day) {
      std::cerr << "--today: must be a date YYYY-MM-DD, got '" << a.today << "'\n";
      return 2;
    }
    today = *day;
  }
  policy::Policy p;
  try {
    p = policy::ReadPolicyFile(a.file);
  } catch (const config::ConfigError& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  const std::vector<policy::Finding> findings = policy::CheckPolicy(p, today);
  int errors = 0;
  for (const policy::Finding& f : findings) {
    std::cout << f.Text() << "\n";
    errors += f.severity == policy::Severity::kError ? 1 : 0;
  }
  int measured = 0;
  for (const auto& [path, value] : p.values) {
    measured += value.source.kind == policy::SourceKind::kMeasured ? 1 : 0;
  }
  std::cout << a.file << ": " << (errors == 0 ? "ok" : "FAILED") << " (" << p.values.size()
            << " fields, " << measured << " measured; " << errors << " errors, "
            << findings.size() - static_cast<std::size_t>(errors) << " warnings)\n";
  return errors == 0 ? 0 : 1;
}

}  // namespace

void AddPolicyCommand(CLI::App& app, int* exit_code) {
  CLI::App* policy = app.add_subcommand(
      "policy", "The one-page Overload and Failure Policy as a file (docs/policy.md)");
  policy->require_subcommand(1);

  auto check = std::make_shared<PolicyCheckArgs>();
  CLI::App* cmd = policy->add_subcommand(
      "check", "Check a policy file: sources, freshness, timeout hierarchy, consistency");
  cmd->add_option("FILE", check->file, "The policy YAML")->required()->check(CLI::ExistingFile);
  cmd->add_option("--today", check->today,
                  "Judge freshness as of this UTC date, YYYY-MM-DD (default: the clock's)");
  cmd->callback([check, exit_code] { *exit_code = RunPolicyCheck(*check); });
}

}  // namespace spillway::app
