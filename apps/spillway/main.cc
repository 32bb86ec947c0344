// spillway: overload control for LLM inference serving. See README.md.

#include <CLI/CLI.hpp>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"Spillway: keeps LLM inference serving useful under overload"};
  app.require_subcommand(1);
  int exit_code = 0;
  spillway::app::AddSimCommand(app, &exit_code);
  spillway::app::AddServeCommand(app, &exit_code);
  spillway::app::AddGatewayCommand(app, &exit_code);
  spillway::app::AddFleetCommand(app, &exit_code);
  spillway::app::AddReportCommand(app, &exit_code);
  spillway::app::AddBenchCommand(app, &exit_code);
  spillway::app::AddSoakCheckCommand(app, &exit_code);
  spillway::app::AddPolicyCommand(app, &exit_code);
  spillway::app::AddCalibrateCommand(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version print and succeed; any other command-line error prints its message
    // and exits 2, as every usage error of the subcommands does (docs/bench.md).
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  return exit_code;
}
