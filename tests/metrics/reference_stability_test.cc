// References returned by Family::With stay valid and keep their identity however many more
// children are created afterwards.

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "metrics/metrics.h"

namespace spillway::metrics {
namespace {

constexpr int kMoreChildren = 20'000;

TEST(ReferenceStabilityTest, CounterReferenceSurvivesManyNewChildren) {
  Registry registry;
  Family<Counter>& family = registry.AddCounter("c_total", "h", {"tenant"});
  Counter& first = family.With({"first"});
  first.Inc();
  for (int i = 0; i < kMoreChildren; ++i) {
    family.With({"t" + std::to_string(i)}).Inc(i);
  }
  first.Inc(2);
  EXPECT_EQ(&family.With({"first"}), &first);
  EXPECT_EQ(first.value(), 3.0);
  const std::string text = registry.Render();
  // Still first in creation order, with its own value.
  EXPECT_NE(text.find("# TYPE c_total counter\nc_total{tenant=\"first\"} 3\n"), std::string::npos);
}

TEST(ReferenceStabilityTest, HistogramReferencesSurviveManyNewChildren) {
  Registry registry;
  Family<Histogram>& family = registry.AddHistogram("h_seconds", "h", {1, 2}, {"a", "b"});
  std::vector<Histogram*> early;
  for (int i = 0; i < 10; ++i) {
    early.push_back(&family.With({"early", std::to_string(i)}));
  }
  for (int i = 0; i < kMoreChildren; ++i) {
    family.With({"late", std::to_string(i)});
  }
  for (int i = 0; i < 10; ++i) {
    early[i]->Observe(1.5);
    EXPECT_EQ(&family.With({"early", std::to_string(i)}), early[i]);
    EXPECT_EQ(early[i]->count(), 1u);
    EXPECT_EQ(early[i]->bounds(), (std::vector<double>{1, 2}));
  }
}

TEST(ReferenceStabilityTest, GetOnUnlabelledFamilyIsTheDeclaredChild) {
  Registry registry;
  Family<Gauge>& family = registry.AddGauge("g", "h");
  Gauge& g = family.Get();
  for (int i = 0; i < 1000; ++i) {
    registry.AddGauge("other_" + std::to_string(i), "h");
  }
  EXPECT_EQ(&family.Get(), &g);
  EXPECT_EQ(&family.With({}), &g);
}

}  // namespace
}  // namespace spillway::metrics
