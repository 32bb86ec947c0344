#pragma once
// Paths and helpers shared by the workload tests (one unity batch: names at file scope are
// unique within a test binary).

#include <string>

#include "common/config_error_of.h"
#include "workload/scenario.h"

namespace spillway::workload_test {

inline const std::string kSourceDir = SPILLWAY_SOURCE_DIR;
/// The Azure LLM inference trace (conversation), read from ../shared/traces/.
inline const std::string kAzureTrace =
    std::string(SPILLWAY_SHARED_DIR) + "/traces/AzureLLMInferenceTrace_conv.csv";

/// The message of the ConfigError thrown by loading `yaml` as test.yaml ("" when it loads);
/// relative paths in it resolve against `base_dir`.
inline std::string LoadError(const std::string& yaml, const std::string& base_dir = ".") {
  return testing_util::ErrorOf([&] { LoadScenarioFromString(yaml, "test.yaml", base_dir); });
}

}  // namespace spillway::workload_test
