// spillway: overload control for LLM inference serving. See README.md.

#include <CLI/CLI.hpp>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"Spillway: keeps LLM inference serving useful under overload"};
  app.require_subcommand(1);
  int exit_code = 0;
  spillway::app::AddSimCommand(app, &exit_code);
  spillway::app::AddServeCommand(app, &exit_code);
  spillway::app::AddReportCommand(app, &exit_code);
  spillway::app::AddBenchCommand(app, &exit_code);
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
