// `spillway policy`: the one-page Overload and Failure Policy as a file (docs/policy.md).
// `policy check FILE` reads it and prints every finding (src/policy/policy_check.h);
// `policy alerts FILE --out RULES.yaml` writes its Prometheus rules (src/policy/alert_rules.h);
// `policy render FILE --out DIR` writes the one page and serve's config (policy_render.h) and
// a Grafana dashboard (grafana_dashboard.h).
// `policy init` is policy_init_command.cc, `policy verify` policy_verify_command.cc.

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>

#include "cli_checks.h"
#include "commands.h"
#include "output_file.h"
#include "policy/alert_rules.h"
#include "policy/policy_check.h"
#include "policy/policy_reader.h"
#include "policy/policy_render.h"
#include "policy_findings.h"

namespace spillway::app {
namespace {

// The policy at `path`, or nullopt after printing why it does not read (file, line, field).
std::optional<policy::Policy> ReadOrSay(const std::string& path) {
  try {
    return policy::ReadPolicyFile(path);
  } catch (const config::ConfigError& e) {
    std::cerr << e.what() << "\n"
              << path << ": FAILED (the file does not read; fix the errors above first)\n";
    return std::nullopt;
  }
}

// A --today: a date YYYY-MM-DD (not "": that would be the clock's, silently).
const CLI::Validator kDay(
    [](const std::string& s) {
      return policy::ParseDay(s) ? std::string() : "must be a date YYYY-MM-DD, got '" + s + "'";
    },
    "YYYY-MM-DD");

struct PolicyCheckArgs {
  std::string file;
  std::string today;  ///< "" for the system clock's UTC date
};

// `--today` as a day, the clock's UTC date when empty; nullopt after saying why it is not one.
std::optional<std::chrono::sys_days> TodayOrSay(const std::string& today) {
  if (today.empty()) {
    return std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now());
  }
  const auto day = policy::ParseDay(today);
  if (!day) {
    std::cerr << "--today: must be a date YYYY-MM-DD, got '" << today << "'\n";
  }
  return day;
}

int RunPolicyCheck(const PolicyCheckArgs& a) {
  const std::optional<std::chrono::sys_days> day = TodayOrSay(a.today);
  if (!day) {
    return 2;
  }
  const std::chrono::sys_days today = *day;
  const std::optional<policy::Policy> read = ReadOrSay(a.file);
  if (!read) {
    return 1;
  }
  const policy::Policy& p = *read;
  const std::vector<policy::Finding> findings = PolicyFindings(p, today);
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

struct PolicyAlertsArgs {
  std::string file;
  std::string out;
};

int RunPolicyAlerts(const PolicyAlertsArgs& a) {
  if (OutputFile::SameFile(a.out, a.file)) {
    std::cerr << "--out: " << a.out << " is the policy it reads: write the rules elsewhere\n";
    return 2;
  }
  std::optional<OutputFile> out;
  try {
    out.emplace(a.out, "--out");
  } catch (const std::runtime_error& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  const std::optional<policy::Policy> read = ReadOrSay(a.file);
  if (!read) {
    return 1;
  }
  const policy::Policy& p = *read;
  *out->stream() << policy::AlertRulesYaml(p);
  try {
    out->Commit();
  } catch (const std::runtime_error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  std::cout << "wrote " << a.out << ": 5 alerts from " << a.file << " (goodput floor "
            << policy::GoodputAlertThresholdRps(p) << " req/s)\n";
  return 0;
}

struct PolicyRenderArgs {
  std::string file;
  std::string out;
  std::string today;
};

int RunPolicyRender(const PolicyRenderArgs& a) {
  const std::optional<std::chrono::sys_days> day = TodayOrSay(a.today);
  if (!day) {
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(a.out, ec);
  if (ec || !std::filesystem::is_directory(a.out)) {
    std::cerr << "--out: cannot create directory " << a.out << ": " << ec.message() << "\n";
    return 2;
  }
  const std::optional<policy::Policy> read = ReadOrSay(a.file);
  if (!read) {
    return 1;
  }
  const policy::RenderContext context{policy::FormatDay(*day), PolicyFindings(*read, *day)};
  const std::vector<policy::RenderedFile> files = policy::RenderFiles(*read, context);
  for (const auto& [name, text] : files) {
    if (OutputFile::SameFile((std::filesystem::path(a.out) / name).string(), a.file)) {
      std::cerr << "--out: " << a.out << " would replace the policy it reads (" << name
                << "): render it elsewhere\n";
      return 2;
    }
  }
  for (const auto& [name, text] : files) {
    const std::string path = (std::filesystem::path(a.out) / name).string();
    try {
      OutputFile out(path, "--out");
      *out.stream() << text;
      out.Commit();
    } catch (const std::runtime_error& e) {
      std::cerr << e.what() << "\n";
      return 1;
    }
  }
  std::cout << "wrote " << a.out
            << "/policy.md, policy.html, serve.yaml, gateway.yaml and grafana-dashboard.json from "
            << a.file << " (check: " << (policy::HasError(context.findings) ? "FAILED" : "ok")
            << ", " << context.findings.size() << " findings)\n";
  return 0;
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
                  "Judge freshness as of this UTC date, YYYY-MM-DD (default: the clock's)")
      ->check(kDay);
  cmd->callback([check, exit_code] { *exit_code = RunPolicyCheck(*check); });

  auto alerts = std::make_shared<PolicyAlertsArgs>();
  CLI::App* rules = policy->add_subcommand(
      "alerts", "Write Prometheus alerting rules from the policy's observability thresholds");
  rules->add_option("FILE", alerts->file, "The policy YAML")->required()->check(CLI::ExistingFile);
  rules->add_option("--out", alerts->out, "The rules file to write (check with promtool)")
      ->required()
      ->check(kNonEmptyPath);
  rules->callback([alerts, exit_code] { *exit_code = RunPolicyAlerts(*alerts); });

  auto render = std::make_shared<PolicyRenderArgs>();
  CLI::App* page =
      policy->add_subcommand("render",
                             "Write the one page (policy.md, policy.html), serve's config "
                             "(serve.yaml) and a Grafana dashboard (grafana-dashboard.json)");
  page->add_option("FILE", render->file, "The policy YAML")->required()->check(CLI::ExistingFile);
  page->add_option("--out", render->out, "The directory to write into (created if missing)")
      ->required()
      ->check(kNonEmptyPath);
  page->add_option("--today", render->today,
                   "The date of the rendering and of its check, YYYY-MM-DD (default: the clock's)")
      ->check(kDay);
  page->callback([render, exit_code] { *exit_code = RunPolicyRender(*render); });

  AddPolicyInitCommand(*policy, exit_code);
  AddPolicyVerifyCommand(*policy, exit_code);
}

}  // namespace spillway::app
