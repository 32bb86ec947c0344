#include "setting_flags.h"

#include "cli_checks.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>

namespace spillway::app {

void AddSettingFlags(CLI::App* cmd, config::EngineSettings* out,
                     const std::vector<std::string_view>& skip) {
  for (const config::SettingSpec& spec : config::EngineSettingSpecs()) {
    if (std::find(skip.begin(), skip.end(), spec.key) != skip.end()) {
      continue;
    }
    const std::string name = config::FlagName(spec);
    // A --no-* flag turns the setting off; its help says what the setting does when on.
    std::string help =
        spec.flag.empty() ? std::string(spec.help) : "Turn off: " + std::string(spec.help);
    if (const std::string d = config::DefaultText(spec); !d.empty()) {
      help += " [default: " + d + "]";
    }
    help += " (" + std::string(spec.section) + "." + std::string(spec.key) + ")";
    std::visit(
        [&](auto member) {
          using T = typename std::remove_reference_t<decltype(out->*member)>::value_type;
          if constexpr (std::is_same_v<T, bool>) {
            if (!spec.flag.empty()) {
              cmd->add_flag_callback(
                  name, [out, member] { out->*member = false; }, help);
              return;
            }
          }
          CLI::Option* option = cmd->add_option_function<T>(
              name, [out, member](const T& v) { out->*member = v; }, help);
          // CLI11 reads "" as 0 for a number: an empty value is a mistake, not a zero.
          option->check([](const std::string& v) {
            return v.empty() ? std::string("needs a value") : std::string();
          });
          if constexpr (std::is_same_v<T, bool>) {
            option->check(kBoolWord);
          }
        },
        spec.member);
  }
}

}  // namespace spillway::app
