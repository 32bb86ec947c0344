#include "gpu_price.h"

#include <string>

#include "cli_checks.h"
#include "config/config_error.h"
#include "policy/policy_reader.h"

namespace spillway::app {

void AddGpuPriceOptions(CLI::App* cmd, std::optional<double>* usd) {
  CLI::Option* flag =
      cmd->add_option("--gpu-hour-usd", *usd,
                      "Price the engine seconds at this many dollars per GPU hour (one GPU per "
                      "engine)")
          ->check(FiniteIn(0.0, 1e6, /*lo_open=*/false));
  cmd->add_option_function<std::string>(
         "--gpu-price-from",
         [usd](const std::string& path) {
           try {
             const auto price = policy::ReadPolicyFile(path).Number("cost.gpu_hour_usd");
             if (!price || *price <= 0) {
               throw CLI::ValidationError(
                   "--gpu-price-from",
                   path + ": cost.gpu_hour_usd is not set (absent or 0): give the GPU's price");
             }
             *usd = *price;
           } catch (const config::ConfigError& e) {
             throw CLI::ValidationError("--gpu-price-from", e.what());
           }
         },
         "Price the engine seconds at a policy file's cost.gpu_hour_usd (policies/*.yaml)")
      ->check(CLI::ExistingFile)
      ->excludes(flag);
}

}  // namespace spillway::app
