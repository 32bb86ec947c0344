// Inputs the scenario fuzzer found (fuzz/scenario_loader_fuzz.cc, docs/fuzzing.md), minimised:
// each broke the loader's contract (a Scenario or a ConfigError, nothing undefined on the way).

#include <string>

#include <gtest/gtest.h>

#include "config/yaml_reader.h"
#include "workload/scenario.h"

namespace spillway {
namespace {

/// The message of the ConfigError thrown by loading `yaml` ("" when it loads).
std::string LoadError(const std::string& yaml) {
  try {
    LoadScenarioFromString(yaml, "s.yaml");
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "";
}

// The "too many arrivals" message converted rate x duration (4.4e19) to int64: undefined
// behaviour (UBSan: "outside the range of representable values of type 'long'").
TEST(ScenarioFuzzRegressionsTest, HugeArrivalCountIsReportedWithoutOverflow) {
  EXPECT_EQ(
      LoadError("name: d\narrival: {process: poisson, rate: 22222222222222222221, duration_s: 2}\n"
                "classes"),
      "s.yaml:2: arrival.rate: asks for about 4.44e+19 arrivals (rate x duration), more than "
      "the limit of 10000000, got '22222222222222222221'");
  EXPECT_EQ(LoadError("name: d\narrival: {process: poisson, rate: 6000, duration_s: 2000}\n"),
            "s.yaml:2: arrival.rate: asks for about 12000000 arrivals (rate x duration), more "
            "than the limit of 10000000, got '6000'");
}

}  // namespace
}  // namespace spillway
