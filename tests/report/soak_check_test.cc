// The soak's verdict (report/soak_check.h) on hand-made records and samples.

#include "report/soak_check.h"

#include "report/run_summary.h"

#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace spillway {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

TEST(ReplyIsDocumentedTest, TheOverloadContractOfServeMd) {
  EXPECT_TRUE(ReplyIsDocumented(200, "completed", ""));
  EXPECT_TRUE(ReplyIsDocumented(200, "dropped", "queue_deadline_exceeded"));
  EXPECT_TRUE(ReplyIsDocumented(429, "dropped", "queue_deadline_exceeded"));
  EXPECT_TRUE(ReplyIsDocumented(200, "failed", "request_timeout"));
  EXPECT_TRUE(ReplyIsDocumented(200, "failed", "preemption_limit"));
  EXPECT_TRUE(ReplyIsDocumented(200, "failed", "draining"));
  for (const char* reason : {"rate_limited", "queue_delay_exceeded", "kv_saturation",
                             "queue_delay_and_kv_saturation", "deadline_unreachable"}) {
    EXPECT_TRUE(ReplyIsDocumented(429, "rejected", reason)) << reason;
    EXPECT_FALSE(ReplyIsDocumented(503, "rejected", reason)) << reason;
  }
  for (const char* reason : {"queue_full", "queued_tokens_full", "draining", "too_many_connections",
                             "preemption_limit"}) {
    EXPECT_TRUE(ReplyIsDocumented(503, "rejected", reason)) << reason;
    EXPECT_FALSE(ReplyIsDocumented(429, "rejected", reason)) << reason;
  }
  EXPECT_TRUE(ReplyIsDocumented(504, "failed", "request_timeout"));
  // The client's own timeouts, before or after the response head.
  EXPECT_TRUE(ReplyIsDocumented(0, "abandoned", "ttft_timeout"));
  EXPECT_TRUE(ReplyIsDocumented(200, "abandoned", "total_timeout"));
}

TEST(ReplyIsDocumentedTest, EverythingElseIsNot) {
  EXPECT_FALSE(ReplyIsDocumented(400, "rejected", "max_tokens_exceeds_deadline"));
  EXPECT_FALSE(ReplyIsDocumented(400, "rejected", "http_400"));
  EXPECT_FALSE(ReplyIsDocumented(500, "failed", "http_500"));
  EXPECT_FALSE(ReplyIsDocumented(502, "failed", "http_502"));
  EXPECT_FALSE(ReplyIsDocumented(429, "rejected", "http_429"));  // no reason given
  EXPECT_FALSE(ReplyIsDocumented(429, "rejected", "something_new"));
  EXPECT_FALSE(ReplyIsDocumented(200, "failed", "stream_broken"));
  EXPECT_FALSE(ReplyIsDocumented(200, "failed", "internal_error"));
  EXPECT_FALSE(ReplyIsDocumented(0, "transport_error", "connection refused"));
  EXPECT_FALSE(ReplyIsDocumented(0, "transport_error", "client_in_flight_limit"));
  EXPECT_FALSE(ReplyIsDocumented(0, "abandoned", "max_request_time"));
  EXPECT_FALSE(ReplyIsDocumented(200, "dropped", "queue_full"));
  EXPECT_FALSE(ReplyIsDocumented(504, "rejected", "request_timeout"));
}

TEST(TallyRepliesTest, CountsByStatusOutcomeAndReasonLargestFirst) {
  const std::string records =
      R"({"request":0,"attempt":1,"status":429,"reason":"queue_delay_exceeded","outcome":"rejected"})"
      "\n"
      R"({"request":1,"attempt":1,"status":200,"reason":"","outcome":"completed"})"
      "\n\n"
      R"({"request":2,"attempt":1,"status":429,"reason":"queue_delay_exceeded","outcome":"rejected"})"
      "\r\n"
      R"({"request":3,"attempt":1,"status":0,"reason":"connection refused","outcome":"transport_error"})";
  const std::vector<ReplyCount> t = TallyReplies(records);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].status, 429);
  EXPECT_EQ(t[0].reason, "queue_delay_exceeded");
  EXPECT_EQ(t[0].count, 2);
  EXPECT_TRUE(t[0].documented);
  EXPECT_EQ(t[1].status, 0);  // ties: by status, outcome, reason
  EXPECT_FALSE(t[1].documented);
  EXPECT_EQ(t[2].status, 200);
  EXPECT_TRUE(t[2].documented);
}

TEST(TallyRepliesTest, MalformedLinesNameTheirNumber) {
  try {
    TallyReplies("{\"status\":200,\"reason\":\"\",\"outcome\":\"completed\"}\nnot json\n");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "line 2: not a JSON object");
  }
  EXPECT_THROW(TallyReplies(R"({"status":"200","reason":"","outcome":"completed"})"),
               std::invalid_argument);
  EXPECT_THROW(TallyReplies(R"({"status":200,"outcome":"completed"})"), std::invalid_argument);
  EXPECT_THROW(TallyReplies(R"({"status":-1,"reason":"","outcome":"completed"})"),
               std::invalid_argument);
  EXPECT_THROW(TallyReplies("[1, 2]"), std::invalid_argument);
  EXPECT_TRUE(TallyReplies("").empty());
}

TEST(ProcessSamplesTest, ParsesTheCsv) {
  const std::vector<ProcessSampleRow> rows =
      ParseProcessSamples("t_s,rss_bytes,open_fds\n0.0,1048576,9\n5.1,2097152,40\r\n\n");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].t_s, 5.1);
  EXPECT_EQ(rows[1].rss_bytes, 2097152);
  EXPECT_EQ(rows[1].open_fds, 40);
}

TEST(ProcessSamplesTest, RejectsMalformedInput) {
  EXPECT_THROW(ParseProcessSamples(""), std::invalid_argument);
  EXPECT_THROW(ParseProcessSamples("t_s,rss_bytes,open_fds\n"), std::invalid_argument);
  EXPECT_THROW(ParseProcessSamples("t,rss\n0,1\n"), std::invalid_argument);
  EXPECT_THROW(ParseProcessSamples("t_s,rss_bytes,open_fds\n0,1\n"), std::invalid_argument);
  EXPECT_THROW(ParseProcessSamples("t_s,rss_bytes,open_fds\n0,1,2,3\n"), std::invalid_argument);
  EXPECT_THROW(ParseProcessSamples("t_s,rss_bytes,open_fds\n0,-1,2\n"), std::invalid_argument);
  EXPECT_THROW(ParseProcessSamples("t_s,rss_bytes,open_fds\n0,nan,2\n"), std::invalid_argument);
  EXPECT_THROW(ParseProcessSamples("t_s,rss_bytes,open_fds\n0,1x,2\n"), std::invalid_argument);
  EXPECT_THROW(ParseProcessSamples("t_s,rss_bytes,open_fds\n5,1,2\n4,1,2\n"),
               std::invalid_argument);
  try {
    ParseProcessSamples("t_s,rss_bytes,open_fds\n0,1,2\n1,,2\n");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "line 3: rss_bytes must be a finite number >= 0, got ''");
  }
}

// Samples every 5 s over a 600 s soak (and one after it): RSS `base` + `slope` x t, plus
// `spike` at t = 300 s; 20 open fds, `fds_after` in the last.
std::vector<ProcessSampleRow> Samples(double base, double slope, double spike = 0,
                                      double fds_after = 20) {
  std::vector<ProcessSampleRow> rows;
  for (int t = 0; t <= 600; t += 5) {
    rows.push_back({static_cast<double>(t), base + slope * t + (t == 300 ? spike : 0), 20});
  }
  rows.push_back({612, base, fds_after});
  return rows;
}

TEST(CheckMemoryTest, FlatMemoryPassesAndASpikeInTheMiddleDoesNotCount) {
  SoakBounds b;
  const MemoryVerdict m = CheckMemory(Samples(30 * kMiB, 0, 100 * kMiB), b);
  EXPECT_EQ(m.window_s, 60);
  EXPECT_EQ(m.warm_samples, 12);  // 60, 65, ..., 115
  EXPECT_EQ(m.end_samples, 13);   // 540, ..., 600
  EXPECT_EQ(m.growth_bytes, 0);
  EXPECT_EQ(m.max_rss_bytes, 130 * kMiB);
  EXPECT_TRUE(m.rss_flat);
  EXPECT_TRUE(m.fds_back);
}

TEST(CheckMemoryTest, GrowthBetweenTheWindowMaximaAgainstTheBound) {
  SoakBounds b;
  // The bound over the 485 s between the windows' maxima (at 115 s and 600 s).
  const double slope = b.rss_growth_bound_bytes / (600 - 115);
  const MemoryVerdict above = CheckMemory(Samples(30 * kMiB, slope * 1.01), b);
  EXPECT_NEAR(above.growth_bytes, 1.01 * b.rss_growth_bound_bytes, 1);
  EXPECT_FALSE(above.rss_flat);
  const MemoryVerdict below = CheckMemory(Samples(30 * kMiB, slope * 0.99), b);
  EXPECT_TRUE(below.rss_flat);
}

TEST(CheckMemoryTest, ShortSoaksUseAFifthOfTheDuration) {
  SoakBounds b;
  b.duration_s = 20;
  std::vector<ProcessSampleRow> rows;
  for (int t = 0; t <= 27; ++t) {
    rows.push_back({static_cast<double>(t), 10 * kMiB, 12});
  }
  const MemoryVerdict m = CheckMemory(rows, b);
  EXPECT_EQ(m.window_s, 4);
  EXPECT_EQ(m.warm_samples, 4);  // 4..7
  EXPECT_EQ(m.end_samples, 5);   // 16..20
  EXPECT_TRUE(m.rss_flat);
}

TEST(CheckMemoryTest, MissingWindowsAndLeakedDescriptorsFail) {
  SoakBounds b;
  const MemoryVerdict m = CheckMemory({{0, kMiB, 10}, {30, kMiB, 10}, {700, kMiB, 19}}, b);
  EXPECT_FALSE(m.windows_covered);
  EXPECT_FALSE(m.rss_flat);
  EXPECT_FALSE(m.fds_back);  // 19 > 10 + 8
  EXPECT_TRUE(CheckMemory({{0, kMiB, 10}, {700, kMiB, 18}}, b).fds_back);
}

TEST(JudgeTest, PassesOnlyWhenEveryCheckHolds) {
  SoakBounds b;
  const MemoryVerdict flat = CheckMemory(Samples(30 * kMiB, 0), b);
  const std::vector<ReplyCount> good = {{429, "rejected", "queue_delay_exceeded", 900, true},
                                        {200, "completed", "", 100, true}};
  const SoakVerdict pass = Judge(good, flat, {200, 0}, {}, b);
  EXPECT_TRUE(pass.passed());
  EXPECT_EQ(pass.attempts, 1000);
  const std::string report = FormatSoakReport(pass, b);
  EXPECT_NE(report.find("soak: PASS (1000 attempts over 600 s"), std::string::npos) << report;
  EXPECT_EQ(report.back(), '\n');

  std::vector<ReplyCount> bad = good;
  bad.push_back({0, "transport_error", "connection reset", 3, false});
  const SoakVerdict undocumented = Judge(bad, flat, {200, 0}, {}, b);
  EXPECT_FALSE(undocumented.passed());
  EXPECT_EQ(undocumented.undocumented, 3);
  const std::string bad_report = FormatSoakReport(undocumented, b);
  EXPECT_NE(bad_report.find("UNDOCUMENTED"), std::string::npos);
  EXPECT_NE(bad_report.find("soak: FAIL: 3 of 1003 replies undocumented"), std::string::npos)
      << bad_report;

  EXPECT_FALSE(Judge(good, flat, {0, 0}, {}, b).passed());      // /health did not answer
  EXPECT_FALSE(Judge(good, flat, {503, 0}, {}, b).passed());    // engine stuck
  EXPECT_FALSE(Judge(good, flat, {200, 139}, {}, b).passed());  // SIGSEGV
  EXPECT_FALSE(Judge({}, flat, {200, 0}, {}, b).passed());      // no attempt
  const MemoryVerdict leak = CheckMemory(Samples(30 * kMiB, kMiB), b);
  const SoakVerdict leaking = Judge(good, leak, {200, 0}, {}, b);
  ASSERT_EQ(leaking.failures.size(), 1u);
  EXPECT_EQ(leaking.failures[0], "RSS grew by 485.0 MiB after warm-up (bound 4.0 MiB)");
}

TEST(PromisesTest, BrokenCountsDroppedAbandonedAndLateAgainstTheBound) {
  RunSummary s;
  s.admitted = 1000;
  s.dropped_at_queue_head = 4;
  s.abandoned_after_admission = 3;
  s.completed = 990;
  s.good = 987;
  const PromiseFigures p = PromisesOf(s, 0.01);
  EXPECT_EQ(p.broken(), 10);
  SoakBounds b;
  const std::vector<ReplyCount> replies = {{200, "completed", "", 990, true}};
  const MemoryVerdict flat = CheckMemory(Samples(30 * kMiB, 0), b);
  SoakVerdict at_bound = Judge(replies, flat, {200, 0}, {}, b);
  AddPromises(p, &at_bound);  // 10 of 1,000 is 1%: within
  EXPECT_TRUE(at_bound.passed());
  EXPECT_NE(FormatSoakReport(at_bound, b)
                .find("admitted 1000: broken 10 (1.00%) = 4 dropped at the queue head + 3 "
                      "abandoned + 3 completed outside an SLO (bound 1%)"),
            std::string::npos)
      << FormatSoakReport(at_bound, b);

  s.good = 986;  // one more late: 11 of 1,000
  SoakVerdict over = Judge(replies, flat, {200, 0}, {}, b);
  AddPromises(PromisesOf(s, 0.01), &over);
  ASSERT_EQ(over.failures.size(), 1u);
  EXPECT_EQ(over.failures[0], "11 (1.10%) of 1000 admitted broke their promise (bound 1%)");

  SoakVerdict reported = Judge(replies, flat, {200, 0}, {}, b);
  AddPromises(PromisesOf(s, std::nullopt), &reported);  // no bound: reported only
  EXPECT_TRUE(reported.passed());
  EXPECT_NE(FormatSoakReport(reported, b).find("broken 11 (1.10%)"), std::string::npos);
}

TEST(ProcessFiguresTest, ReadsTheProcessFamilies) {
  const ProcessFigures f = ReadProcessFigures(
      "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 12.5\n"
      "process_resident_memory_bytes 3.2e+07\nprocess_open_fds 11\n");
  EXPECT_EQ(f.cpu_seconds, 12.5);
  EXPECT_EQ(f.resident_memory_bytes, 3.2e7);
  EXPECT_EQ(f.open_fds, 11);
  EXPECT_FALSE(f.max_fds.has_value());
}

TEST(RssChartScriptTest, DrawsTheSamplesWithWindowsAndBound) {
  SoakBounds b;
  const MemoryVerdict m = CheckMemory(Samples(32 * kMiB, 0), b);
  const std::string s = RssChartScript("rss.csv", "rss.svg", m, b);
  EXPECT_NE(s.find("set output 'rss.svg'"), std::string::npos) << s;
  EXPECT_NE(s.find("rect from 60, graph 0 to 120, graph 1"), std::string::npos) << s;
  EXPECT_NE(s.find("rect from 540, graph 0 to 600, graph 1"), std::string::npos) << s;
  EXPECT_NE(s.find("     36 with lines"), std::string::npos) << s;  // 32 MiB + 4 MiB
  EXPECT_NE(s.find("'rss.csv' using 1:3 skip 1 with lines"), std::string::npos) << s;
  EXPECT_NE(s.find("growth bound (4 MiB)"), std::string::npos) << s;
}

}  // namespace
}  // namespace spillway
