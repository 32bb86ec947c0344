// Overload cost accounting (report/cost.h): the lesson's own figures (§4.1 and exercise 4 of
// ../shared/seeds/overload-and-failure-handling.txt), and the price carried through a run
// summary's JSON into the comparison table.

#include <string>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "report/cost.h"
#include "report/summary_json.h"
#include "report/summary_reader.h"
#include "report/table.h"

namespace spillway {
namespace {

// $40.96/h for 8 A100-80GB (AWS p4de.24xlarge on demand, the lesson's pricing basis).
constexpr double kA100HourUsd = 40.96 / 8;

TEST(CostTest, TheLessonsFiguresComeOut) {
  EXPECT_NEAR(UsdOf(1, kA100HourUsd), 0.00142, 0.000005);  // $0.00142/s/GPU
  // §4.1 scenario A: ten minutes of one GPU, 90% of it on discarded responses.
  EXPECT_NEAR(UsdOf(600, kA100HourUsd), 0.853, 0.0005);
  EXPECT_NEAR(UsdOf(0.9 * 600, kA100HourUsd), 0.768, 0.0005);
  // Exercise 4: one doomed request's 2.3 s, then 200 of them in a burst.
  EXPECT_NEAR(UsdOf(2.3, kA100HourUsd), 0.00327, 0.000005);
  EXPECT_NEAR(200 * UsdOf(2.3, kA100HourUsd), 0.654, 0.0005);
}

RunSummary PricedRun(std::optional<double> price) {
  RunSummary s;
  s.source = "sim";
  s.scenario = "x";
  s.policy = "unbounded";
  s.duration_s = 60;
  s.engine_busy_s = 600;
  s.wasted_engine_s = 540;
  s.not_completed_engine_s = 560;
  s.gpu_hour_usd = price;
  return s;
}

TEST(CostTest, APricedRunCarriesItsDollarsThroughJsonAndTheTable) {
  const EngineCost cost = CostOf(PricedRun(kA100HourUsd));
  EXPECT_NEAR(*cost.wasted_usd, 0.768, 0.0005);
  EXPECT_FALSE(CostOf(PricedRun(std::nullopt)).wasted_usd.has_value());
  RunSummary unmeasured = PricedRun(kA100HourUsd);
  unmeasured.wasted_engine_s.reset();  // a bench run against a server without the counter
  EXPECT_FALSE(CostOf(unmeasured).wasted_usd.has_value());

  const std::string json = SummaryToJson(PricedRun(kA100HourUsd));
  const boost::json::object o = boost::json::parse(json).as_object();
  EXPECT_DOUBLE_EQ(o.at("gpu_hour_usd").to_number<double>(), kA100HourUsd);
  EXPECT_NEAR(o.at("cost_usd").at("engine_busy").to_number<double>(), 0.8533, 0.0001);
  EXPECT_NEAR(o.at("cost_usd").at("wasted").to_number<double>(), 0.768, 0.0005);
  const std::vector<RunSummary> back = ParseRunSummaries(json, "run.json");
  ASSERT_EQ(back.size(), 1U);
  EXPECT_DOUBLE_EQ(*back[0].gpu_hour_usd, kA100HourUsd);

  const std::string table = CompareTable({PricedRun(kA100HourUsd), unmeasured});
  EXPECT_NE(table.find("$ on wasted engine s"), std::string::npos) << table;
  EXPECT_NE(table.find("$0.768"), std::string::npos) << table;
  EXPECT_NE(table.find("n/a"), std::string::npos) << table;
  EXPECT_EQ(CompareTable({PricedRun(std::nullopt)}).find("$ on wasted"), std::string::npos);

  std::string negative = json;
  negative.replace(negative.find("5.12E0"), 6, "-1E0");
  EXPECT_THROW(ParseRunSummaries(negative, "bad.json"), std::exception);
}

}  // namespace
}  // namespace spillway
