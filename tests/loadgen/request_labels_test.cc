// What bench attaches to each request from the scenario (loadgen/request_labels.h): the class,
// the X-Priority-Class it asks for, its fairness ID, and the API key of the class's tenant.

#include "loadgen/request_labels.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "workload/arrivals.h"
#include "workload/scenario.h"

namespace spillway::loadgen {
namespace {

Scenario TwoClasses() {
  return LoadScenarioFromString(R"(name: skew
arrival: {process: poisson, rate: 10, duration_s: 2}
classes:
  - {name: interactive, prompt_tokens: 8, output_tokens: 4, priority: 0, tenant: web}
  - {name: batch, prompt_tokens: 8, output_tokens: 4, priority: 1, tenant: jobs, fairness_id: bulk}
  - {name: plain, prompt_tokens: 8, output_tokens: 4}
)",
                                "skew.yaml");
}

Arrival Of(const Scenario& sc, std::int32_t class_index) {
  Arrival a;
  const RequestClass& c = sc.classes[static_cast<std::size_t>(class_index)];
  a.class_index = class_index;
  a.priority = c.priority;
  a.tenant = c.tenant;
  return a;
}

TEST(RequestLabelsTest, ClassAndPriorityFromTheScenarioWhenItGivesOne) {
  const Scenario sc = TwoClasses();
  const RequestLabels interactive = LabelsFor(sc, Of(sc, 0), "", {});
  EXPECT_EQ(interactive.class_name, "interactive");
  EXPECT_EQ(interactive.priority, 0) << "an explicit class 0 is sent too";
  EXPECT_EQ(interactive.api_key, "");
  const RequestLabels batch = LabelsFor(sc, Of(sc, 1), "", {});
  EXPECT_EQ(batch.class_name, "batch");
  EXPECT_EQ(batch.priority, 1);
  const RequestLabels plain = LabelsFor(sc, Of(sc, 2), "", {});
  EXPECT_EQ(plain.class_name, "plain");
  EXPECT_FALSE(plain.priority.has_value()) << "no priority in the file: no header";
}

TEST(RequestLabelsTest, TheFairnessIdIsTheClasssElseItsName) {
  const Scenario sc = TwoClasses();
  EXPECT_EQ(LabelsFor(sc, Of(sc, 0), "", {}).fairness_id, "interactive");
  EXPECT_EQ(LabelsFor(sc, Of(sc, 1), "", {}).fairness_id, "bulk");
  Arrival trace;
  trace.class_index = -1;
  EXPECT_TRUE(LabelsFor(sc, trace, "", {}).fairness_id.empty()) << "a trace record: its tenant";
}

TEST(RequestLabelsTest, EveryGeneratedArrivalCarriesItsClass) {
  const Scenario sc = TwoClasses();
  const std::vector<Arrival> arrivals = GenerateArrivals(sc, 7);
  ASSERT_FALSE(arrivals.empty());
  for (const Arrival& a : arrivals) {
    const RequestLabels l = LabelsFor(sc, a, "", {});
    EXPECT_EQ(l.class_name, sc.classes[static_cast<std::size_t>(a.class_index)].name);
  }
}

TEST(RequestLabelsTest, TheTenantsKeyElseTheDefaultKey) {
  const Scenario sc = TwoClasses();
  TenantKeys keys;
  AddTenantKey("jobs=sk-batch", &keys);
  EXPECT_EQ(LabelsFor(sc, Of(sc, 1), "sk-default", keys).api_key, "sk-batch");
  EXPECT_EQ(LabelsFor(sc, Of(sc, 0), "sk-default", keys).api_key, "sk-default");
  EXPECT_EQ(LabelsFor(sc, Of(sc, 0), "", keys).api_key, "") << "no key at all: none sent";
}

TEST(RequestLabelsTest, TraceRecordsHaveNoClassAndTheFirstClasssPriority) {
  Scenario sc = TwoClasses();
  Arrival a;
  a.class_index = -1;
  a.priority = sc.classes[0].priority;
  a.tenant = sc.classes[0].tenant;
  const RequestLabels l = LabelsFor(sc, a, "", {});
  EXPECT_TRUE(l.class_name.empty());
  EXPECT_EQ(l.priority, 0);
  sc.classes[0].priority_given = false;
  EXPECT_FALSE(LabelsFor(sc, a, "", {}).priority.has_value());
}

TEST(TenantKeysTest, ParsesTenantEqualsKeyAndRefusesTheRest) {
  TenantKeys keys;
  AddTenantKey("web=sk-1", &keys);
  AddTenantKey("jobs=sk=2", &keys);  // split at the first '='
  EXPECT_EQ(keys.at("web"), "sk-1");
  EXPECT_EQ(keys.at("jobs"), "sk=2");
  EXPECT_THROW(AddTenantKey("web=sk-3", &keys), std::invalid_argument) << "tenant twice";
  EXPECT_THROW(AddTenantKey("nokey", &keys), std::invalid_argument);
  EXPECT_THROW(AddTenantKey("=sk", &keys), std::invalid_argument);
  EXPECT_THROW(AddTenantKey("web2=", &keys), std::invalid_argument);
}

TEST(TenantKeysTest, ATenantNoClassHasIsAnError) {
  const Scenario sc = TwoClasses();
  TenantKeys keys;
  AddTenantKey("jobs=sk-batch", &keys);
  EXPECT_NO_THROW(CheckTenantKeys(sc, keys));
  AddTenantKey("job=sk-typo", &keys);
  EXPECT_THROW(CheckTenantKeys(sc, keys), std::invalid_argument);
}

}  // namespace
}  // namespace spillway::loadgen
