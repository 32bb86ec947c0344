// The latency objectives count every admitted request that completed or failed: a failed one
// (a 504, an error event in the stream, an error after admission) is +infinity in e2e_p99_s
// and, without a first token, in ttft_p95_s. The same code judges sim and bench runs
// (RunRecorder, EvaluateObjectives).

#include "report/objectives.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "report/run_recorder.h"
#include "report/summary_json.h"
#include "report/summary_reader.h"
#include "report/table.h"

namespace spillway {
namespace {

using Kind = RequestOutcome::Kind;

Objectives E2eP99(double target_s) {
  Objectives o;
  o.e2e_p99_s = target_s;
  return o;
}

// `completed` requests with TTFT 0.5 s and E2E 1 s, then `failed` ones that got no first token
// (a 504 at 4.5 s), then `abandoned` ones; objectives evaluated as sim and bench do.
RunSummary Judged(int completed, int failed, int abandoned, const Objectives& objectives) {
  RunRecorder r(GoodputSlo{}, {});
  double t = 0;
  for (int i = 0; i < completed; ++i, t += 0.1) {
    r.OnRequestDone({Kind::kCompleted, t, t + 0.5, t + 1.0, 8});
  }
  for (int i = 0; i < failed; ++i, t += 0.1) {
    r.OnRequestDone({Kind::kFailed, t, kNever, t + 4.5, 0});
  }
  for (int i = 0; i < abandoned; ++i, t += 0.1) {
    r.OnRequestDone({Kind::kAbandoned, t, kNever, t + 2.0, 0});
  }
  RunSummary s = r.Finish(10, 10);
  s.policy = "p";
  EvaluateObjectives(objectives, &s);
  return s;
}

TEST(ObjectivesTest, NothingFailedJudgesTheServedRequests) {
  const RunSummary s = Judged(50, 0, 0, E2eP99(5));
  ASSERT_EQ(s.objectives.size(), 1u);
  EXPECT_TRUE(s.objectives[0].pass);
  EXPECT_DOUBLE_EQ(s.objectives[0].value, 1.0);
  EXPECT_DOUBLE_EQ(s.objectives[0].value, s.e2e_s.p99);
}

TEST(ObjectivesTest, FailedRequestsCountAsInfiniteE2e) {
  // 1 of 100 failed: the p99 (rank 99 of 100) is still a served request's 1 s.
  const RunSummary one = Judged(99, 1, 0, E2eP99(5));
  EXPECT_TRUE(one.objectives[0].pass);
  EXPECT_DOUBLE_EQ(one.objectives[0].value, 1.0);
  // 2 of 101 failed (more than 1%): the p99 (rank 100 of 101) falls on a failure.
  const RunSummary two = Judged(99, 2, 0, E2eP99(5));
  EXPECT_FALSE(two.objectives[0].pass);
  EXPECT_TRUE(std::isinf(two.objectives[0].value));
  // The table's "E2E p99 s" row still covers the completed requests only.
  EXPECT_DOUBLE_EQ(two.e2e_s.p99, 1.0);
  EXPECT_EQ(two.e2e_s.count, 99);
  EXPECT_EQ(two.e2e_objective_s.count, 101);
}

TEST(ObjectivesTest, ACollapsedRunWithManyFailuresFailsItsE2eObjective) {
  // As the live unbounded burst: fast completions beside many 504s used to read "pass".
  const RunSummary s = Judged(563, 136, 661, E2eP99(5));
  EXPECT_FALSE(s.objectives[0].pass);
  EXPECT_TRUE(std::isinf(s.objectives[0].value));
}

TEST(ObjectivesTest, AbandonedRequestsAreNotInTheLatencyObjectives) {
  const RunSummary s = Judged(99, 0, 50, E2eP99(5));
  EXPECT_TRUE(s.objectives[0].pass);
  EXPECT_EQ(s.e2e_objective_s.count, 99);
}

TEST(ObjectivesTest, TtftCountsFailuresWithoutAFirstTokenAsInfinite) {
  Objectives o;
  o.ttft_p95_s = 1.0;
  // 5 of 100 failed without a first token: p95 (rank 95) is a served 0.5 s.
  EXPECT_TRUE(Judged(95, 5, 0, o).objectives[0].pass);
  // 6 of 100: rank 95 falls on a failure.
  const RunSummary s = Judged(94, 6, 0, o);
  EXPECT_FALSE(s.objectives[0].pass);
  EXPECT_TRUE(std::isinf(s.objectives[0].value));
  EXPECT_DOUBLE_EQ(s.ttft_s.p95, 0.5) << "the served TTFT rows are unchanged";

  // A request that failed after its first token keeps its real TTFT.
  RunRecorder r(GoodputSlo{}, {});
  r.OnRequestDone({Kind::kFailed, 0, 0.3, 3.0, 5});
  RunSummary f = r.Finish(1, 1);
  EvaluateObjectives(o, &f);
  EXPECT_TRUE(f.objectives[0].pass);
  EXPECT_DOUBLE_EQ(f.objectives[0].value, 0.3);
  EXPECT_TRUE(std::isinf(f.e2e_objective_s.p99)) << "but it never finished";
}

TEST(ObjectivesTest, AnInfiniteValueIsNullInJsonAndInfInTheTable) {
  const RunSummary s = Judged(10, 3, 0, E2eP99(5));
  const std::string json = SummaryToJson(s);
  EXPECT_NE(json.find(R"("value":null)"), std::string::npos) << json;
  const std::vector<RunSummary> back = ParseRunSummaries(json, "run.json");
  ASSERT_EQ(back.size(), 1u);
  ASSERT_EQ(back[0].objectives.size(), 1u);
  EXPECT_FALSE(back[0].objectives[0].pass);
  EXPECT_TRUE(std::isinf(back[0].objectives[0].value));
  for (const RunSummary& run : {s, back[0]}) {
    const std::vector<TableRow> rows = CompareRows({run});
    ASSERT_EQ(rows.back().label, "objective e2e_p99_s <= 5");
    EXPECT_EQ(rows.back().cells, std::vector<std::string>{"FAIL inf"});
  }
}

}  // namespace
}  // namespace spillway
