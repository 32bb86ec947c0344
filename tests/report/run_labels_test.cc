#include "report/run_labels.h"

#include <gtest/gtest.h>

namespace spillway {
namespace {

using Labels = std::vector<std::string>;

TEST(ReportLabelsTest, PolicyAloneWhenItIsEnough) {
  EXPECT_EQ(RunLabels({{"unbounded", "burst", "runs.json"}, {"predictive", "burst", "runs.json"}}),
            (Labels{"unbounded", "predictive"}));
}

TEST(ReportLabelsTest, ScenarioWhenScenariosDiffer) {
  EXPECT_EQ(RunLabels({{"predictive", "burst", "a.json"}, {"predictive", "steady", "b.json"}}),
            (Labels{"predictive (burst)", "predictive (steady)"}));
}

TEST(ReportLabelsTest, FileNameWhenStillAmbiguousThenNumbers) {
  EXPECT_EQ(RunLabels({{"predictive", "burst", "out/seed1.json"},
                       {"predictive", "burst", "out/seed2.json"},
                       {"unbounded", "burst", "out/seed2.json"}}),
            (Labels{"predictive [seed1.json]", "predictive [seed2.json]", "unbounded"}));
  EXPECT_EQ(RunLabels({{"p", "s", "a/runs.json"}, {"p", "s", "b/runs.json"}, {"", "s", "c"}}),
            (Labels{"p [runs.json] #1", "p [runs.json] #2", "run"}));
}

}  // namespace
}  // namespace spillway
