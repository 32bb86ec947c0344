#pragma once
// Command-line flags generated from the engine settings table (config/engine_settings.h): one
// flag a row (--max-num-seqs N, --no-chunked-prefill, ...), shared by `spillway serve` and
// `spillway sim`, so both take the same names with the same ranges and help.

#include <string_view>
#include <vector>

#include "config/engine_settings.h"

namespace CLI {
class App;
}

namespace spillway::app {

/// Adds a flag for every row except those whose key is in `skip`; a given flag sets its field
/// of `*out` (which must outlive parsing). Values are range-checked afterwards with
/// config::ValidateEngineSettings.
void AddSettingFlags(CLI::App* cmd, config::EngineSettings* out,
                     const std::vector<std::string_view>& skip = {});

}  // namespace spillway::app
