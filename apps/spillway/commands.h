#pragma once
// Subcommands of the `spillway` binary. Each registers its options on the CLI11 app and
// returns the callback's exit code through `*exit_code`.

#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace spillway::app {

/// Registers `spillway sim`.
void AddSimCommand(CLI::App& app, int* exit_code);

/// Registers `spillway serve`.
void AddServeCommand(CLI::App& app, int* exit_code);

/// Registers `spillway gateway` (docs/gateway.md). Exit codes: 2 a config or flag error; 1 an
/// endpoint that cannot be resolved or asked for its model, or the port taken; 0 after a drain.
void AddGatewayCommand(CLI::App& app, int* exit_code);

/// Registers `spillway fleet` (docs/gateway.md). Exit codes: 0 ran; 2 bad input (scenario,
/// flags); 1 a child that did not start, or the load generator failing.
void AddFleetCommand(CLI::App& app, int* exit_code);

/// Registers `spillway report` (docs/report.md). Exit codes: 0 written; 2 bad input (a file
/// missing or unreadable, invalid JSON, a required key missing or of the wrong type); 1 any
/// other failure (gnuplot not installed or failing, the output directory not writable).
void AddReportCommand(CLI::App& app, int* exit_code);
/// Registers `spillway bench`.
void AddBenchCommand(CLI::App& app, int* exit_code);

/// Registers `spillway soak-check` (docs/soak.md). Exit codes: 0 the soak passed; 1 it failed
/// (or the gnuplot script could not be written); 2 bad input (a file missing or malformed).
void AddSoakCheckCommand(CLI::App& app, int* exit_code);

/// Registers `spillway policy` and its subcommands (docs/policy.md). `policy check` exits 0
/// when the policy has no error (warnings allowed), 1 when it has one (or does not read), 2 on a
/// usage error.
void AddPolicyCommand(CLI::App& app, int* exit_code);
/// Registers `spillway policy verify` on the `policy` command (policy_verify_command.cc).
/// Exit codes: 0 no checklist item failed; 1 one failed; 2 bad input or a target that does not
/// answer; 130 interrupted.
void AddPolicyVerifyCommand(CLI::App& policy, int* exit_code);
/// Registers `spillway policy init` (policy_init_command.cc). Exit codes: 0 written; 1 written,
/// but `policy check` finds an error in it (a stale run); 2 bad input (a run or scenario that
/// does not read, a profile mismatch, --out existing or one of the inputs).
void AddPolicyInitCommand(CLI::App& policy, int* exit_code);

/// Registers `spillway calibrate` (docs/calibrate.md). Exit codes: 0 written (and the live
/// check at mu passed, when run); 1 a calibration request not served, or the live check
/// failed (the profile is written); 2 bad input or a target that does not answer.
void AddCalibrateCommand(CLI::App& app, int* exit_code);

/// Directory of shipped profiles: $SPILLWAY_PROFILE_DIR, else profiles/ beside the build
/// directory, else the source tree's profiles/.
std::string DefaultProfileDir();

}  // namespace spillway::app
