// `spillway policy verify`'s verdicts (src/policy/verify_verdicts.h) on made-up runs: each item
// passes on the run that meets its criterion and fails (or stays unchecked, saying why) on the
// one beside it.

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "policy/policy_reader.h"
#include "policy/verify_verdicts.h"

namespace spillway::policy {
namespace {

const std::string kVerdictPolicy = std::string(SPILLWAY_SOURCE_DIR) + "/policies/reference.yaml";

// A run of `n` requests over 20 s, all good, p95 TTFT `ttft` and TPOT `tpot`.
RunSummary Served(std::int64_t n, double ttft, double tpot) {
  RunSummary r;
  r.duration_s = 20;
  r.first_attempts = r.offered = r.admitted = r.completed = r.good = n;
  r.goodput_rps = static_cast<double>(n) / r.duration_s;
  r.ttft_s.p95 = ttft;
  r.ttft_s.count = n;
  r.tpot_s.p95 = tpot;
  r.tpot_s.count = n;
  return r;
}

TEST(VerifyVerdictsTest, TheBaselinePassesWithinTheSlosAndFailsOnTpotOrGoodputShare) {
  const Policy p = ReadPolicyFile(kVerdictPolicy);
  EXPECT_EQ(JudgeBaseline(p, Served(160, 0.1, 0.03), "b.json").verdict, Verdict::kPass);
  EXPECT_EQ(JudgeBaseline(p, Served(160, 0.1, 0.036), "b.json").verdict, Verdict::kFail);
  RunSummary missed = Served(1000, 0.1, 0.03);
  missed.good = 998;  // 99.8% against the policy's 99.9%
  const ChecklistItem item = JudgeBaseline(p, missed, "b.json");
  EXPECT_EQ(item.verdict, Verdict::kFail);
  EXPECT_NE(item.evidence.find("99.80% of requests (objective 99.9%)"), std::string::npos)
      << item.evidence;
  EXPECT_EQ(JudgeBaseline(p, RunSummary{}, "b.json").verdict, Verdict::kUnchecked);
  // The chunked-prefill baseline takes the baseline's verdict: the policy enables it.
  EXPECT_EQ(JudgeChunkedPrefill(p, item).verdict, Verdict::kFail);
}

TEST(VerifyVerdictsTest, AdmissionPassesWhenItRefusesAndKeepsTheSloFailsWhenItDoesNot) {
  const Policy p = ReadPolicyFile(kVerdictPolicy);
  RunSummary shed = Served(300, 0.95, 0.03);
  shed.first_attempts = shed.offered = 600;
  shed.rejected_total = 300;
  shed.rejected_by_status["429"] = 300;
  EXPECT_EQ(JudgeAdmission(p, shed, "burst.json").verdict, Verdict::kPass);
  RunSummary late = Served(600, 1.2, 0.03);  // admitted everything, first tokens late
  const ChecklistItem item = JudgeAdmission(p, late, "burst.json");
  EXPECT_EQ(item.verdict, Verdict::kFail);
  EXPECT_NE(item.evidence.find("p95 TTFT of those served 1200 ms (SLO 1000 ms)"), std::string::npos)
      << item.evidence;
  EXPECT_EQ(JudgeAdmission(p, Served(600, 0.3, 0.03), "burst.json").verdict, Verdict::kUnchecked);
  RunSummary errors = shed;
  errors.rejected_by_status["500"] = 1;
  EXPECT_EQ(JudgeAdmission(p, errors, "burst.json").verdict, Verdict::kFail);
  // The target died mid-burst: requests failed and others got no response at all.
  RunSummary crashed = shed;
  crashed.offered = crashed.first_attempts = 700;
  crashed.failed = 40;
  const ChecklistItem died = JudgeAdmission(p, crashed, "burst.json");
  EXPECT_EQ(died.verdict, Verdict::kFail);
  EXPECT_NE(died.evidence.find("failed 40 admitted requests and left 100 unanswered"),
            std::string::npos)
      << died.evidence;
}

TEST(VerifyVerdictsTest, TheCascadePassesOnAnyOfItsStepsAndStaysUncheckedWithoutOne) {
  const Policy p = ReadPolicyFile(kVerdictPolicy);
  RunSummary burst = Served(300, 0.9, 0.03);
  EXPECT_EQ(JudgeCascade(p, burst, "m", "burst.json").verdict, Verdict::kUnchecked);
  burst.served_model["m"].completed = 200;
  burst.served_model["m-1b"].completed = 100;
  const ChecklistItem item = JudgeCascade(p, burst, "m", "burst.json");
  EXPECT_EQ(item.verdict, Verdict::kPass);
  EXPECT_NE(item.evidence.find("served by a fallback model 100 [m-1b (100)]"), std::string::npos)
      << item.evidence;
}

// 70 refused clients retrying: `spread_s` wide windows of jitter after 1 s.
std::vector<AttemptSend> Storm(double spread_s) {
  std::vector<AttemptSend> sends;
  for (int i = 0; i < 100; ++i) {
    sends.push_back({1, 0.001 * i / 100});
  }
  for (int i = 0; i < 70; ++i) {
    sends.push_back({2, 1.0 + spread_s * i / 70});
  }
  for (int i = 0; i < 40; ++i) {
    sends.push_back({3, 2.0 + spread_s * i / 40});
  }
  return sends;
}

TEST(VerifyVerdictsTest, RetriesSpreadByJitterPassAndSynchronisedRetriesFail) {
  const RetryStormFigures spread = MeasureRetryStorm(Storm(0.5));
  EXPECT_EQ(spread.clients, 100);
  EXPECT_EQ(spread.retries, 110);
  EXPECT_EQ(spread.peak_per_100ms, 100);
  ASSERT_EQ(spread.rounds.size(), 2U);
  EXPECT_EQ(spread.rounds[0].retries, 70);
  EXPECT_GE(spread.rounds[0].peak_per_100ms, 14);  // 70 over five windows
  EXPECT_LE(spread.rounds[0].peak_per_100ms, 15);
  EXPECT_EQ(JudgeRetryStorm(spread, "s.jsonl").verdict, Verdict::kPass);
  // A fixed delay: each round lands within one 100 ms window.
  const ChecklistItem synced = JudgeRetryStorm(MeasureRetryStorm(Storm(0.05)), "s.jsonl");
  EXPECT_EQ(synced.verdict, Verdict::kFail);
  EXPECT_NE(synced.evidence.find("retry 1: 70 sent, at most 70 (100%) in one 100 ms"),
            std::string::npos)
      << synced.evidence;
  // Nothing refused: nothing to judge.
  EXPECT_EQ(JudgeRetryStorm(MeasureRetryStorm({{1, 0}, {1, 0.01}}), "s.jsonl").verdict,
            Verdict::kUnchecked);
}

DisconnectObservation Disconnect(std::optional<Seconds> freed_after_s) {
  DisconnectObservation d;
  d.streams = 8;
  d.left_mid_stream = 8;
  d.metrics = true;
  d.running_peak = 8;
  d.kv_peak = 0.05;
  d.freed_after_s = freed_after_s;
  d.remaining_s = 2.0;
  return d;
}

TEST(VerifyVerdictsTest, ADisconnectPassesWhenTheEngineFreesWithinTheBoundAndFailsWhenItRunsOn) {
  const std::vector<ChecklistItem> fast = JudgeDisconnect(Disconnect(0.04), "d.json");
  ASSERT_EQ(fast.size(), 5U);
  for (const ChecklistItem& item : fast) {
    EXPECT_EQ(item.verdict, Verdict::kPass) << item.id << ": " << item.evidence;
  }
  EXPECT_EQ(fast[4].id, "disconnect_frees_kv");
  // Let run to its end: 1.7 s of the 2 s the streams had left (bound: half of that, 1 s).
  DisconnectObservation slow = Disconnect(1.7);
  for (const ChecklistItem& item : JudgeDisconnect(slow, "d.json")) {
    EXPECT_EQ(item.verdict, Verdict::kFail) << item.id;
  }
  slow.remaining_s = 0.6;  // short streams: the bound shrinks to 0.3 s
  EXPECT_DOUBLE_EQ(DisconnectFreedBoundS(slow), 0.3);
  DisconnectObservation held = Disconnect(std::nullopt);
  held.kv_after = 0.05;
  held.waited_s = 5;
  EXPECT_EQ(JudgeDisconnect(held, "d.json")[3].verdict, Verdict::kFail);
  DisconnectObservation half = Disconnect(0.04);  // behind a gateway, one engine of two read
  half.running_peak = 4;
  EXPECT_EQ(JudgeDisconnect(half, "d.json")[0].verdict, Verdict::kUnchecked);
  EXPECT_NE(JudgeDisconnect(half, "d.json")[0].evidence.find("saw 4 of the 8 streams"),
            std::string::npos);
  EXPECT_NE(JudgeDisconnect(slow, "d.json")[1].evidence.find("went on generating"),
            std::string::npos);
  DisconnectObservation no_metrics = Disconnect(0.04);
  no_metrics.metrics = false;
  EXPECT_EQ(JudgeDisconnect(no_metrics, "d.json")[0].verdict, Verdict::kUnchecked);
}

TEST(VerifyVerdictsTest, TheReplayPassesWithin15PercentOfTheSimulatorAndFailsBeyond) {
  const RunSummary sim = Served(400, 0.9, 0.03);
  EXPECT_EQ(JudgeReplay(Served(380, 0.95, 0.03), sim, "l.json", "s.json").verdict, Verdict::kPass);
  EXPECT_EQ(JudgeReplay(Served(300, 0.95, 0.03), sim, "l.json", "s.json").verdict,
            Verdict::kFail);  // goodput 25% short
  EXPECT_EQ(JudgeReplay(Served(400, 1.2, 0.03), sim, "l.json", "s.json").verdict,
            Verdict::kFail);  // p95 TTFT 33% long
}

}  // namespace
}  // namespace spillway::policy
