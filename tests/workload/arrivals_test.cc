#include "workload/arrivals.h"
#include "workload/workload_test_util.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "workload/scenario.h"
#include "workload/trace_reader.h"

namespace spillway {
namespace {

using testing_util::TempDir;

using workload_test::kAzureTrace;
using workload_test::kSourceDir;

TokenDist Fixed(std::int32_t value) {
  TokenDist d;
  d.value = value;
  d.min = d.max = value;
  return d;
}

RequestClass Class(const std::string& name, double share, std::int32_t prompt,
                   std::int32_t output) {
  RequestClass c;
  c.name = name;
  c.share = share;
  c.prompt_tokens = Fixed(prompt);
  c.output_tokens = Fixed(output);
  return c;
}

Scenario PoissonScenario(double rate_rps, Seconds duration_s) {
  Scenario s;
  s.arrival.kind = ArrivalProcess::Kind::kPoisson;
  s.arrival.rate_rps = rate_rps;
  s.arrival.duration_s = duration_s;
  s.classes = {Class("only", 1, 10, 20)};
  return s;
}

/// |observed - expected| within `sigmas` standard deviations of a Poisson/binomial count.
void ExpectCountNear(double observed, double expected, double variance, double sigmas = 5) {
  EXPECT_NEAR(observed, expected, sigmas * std::sqrt(variance))
      << "observed " << observed << ", expected " << expected;
}

void ExpectSortedWithin(const std::vector<Arrival>& arrivals, Seconds end_s) {
  ASSERT_TRUE(
      std::is_sorted(arrivals.begin(), arrivals.end(),
                     [](const Arrival& a, const Arrival& b) { return a.time_s < b.time_s; }));
  for (const Arrival& a : arrivals) {
    ASSERT_GE(a.time_s, 0);
    ASSERT_LT(a.time_s, end_s);
  }
}

TEST(ArrivalsTest, PoissonCountAndInterArrivalStatistics) {
  const Scenario s = PoissonScenario(100, 1000);
  const std::vector<Arrival> arrivals = GenerateArrivals(s, 7);
  ExpectCountNear(static_cast<double>(arrivals.size()), 100'000, 100'000);
  ExpectSortedWithin(arrivals, 1000);

  // Exponential gaps: mean 1 / rate, coefficient of variation 1.
  double sum = 0, sum_sq = 0;
  for (std::size_t i = 1; i < arrivals.size(); ++i) {
    const double gap = arrivals[i].time_s - arrivals[i - 1].time_s;
    sum += gap;
    sum_sq += gap * gap;
  }
  const double n = static_cast<double>(arrivals.size() - 1);
  const double mean = sum / n;
  const double cv = std::sqrt(sum_sq / n - mean * mean) / mean;
  EXPECT_NEAR(mean, 0.01, 0.0002);
  EXPECT_NEAR(cv, 1.0, 0.02);
  EXPECT_EQ(arrivals.front().class_index, 0);
  EXPECT_EQ(arrivals.front().prompt_tokens, 10);
  EXPECT_EQ(arrivals.front().output_tokens, 20);
}

TEST(ArrivalsTest, StepsHaveTheirRateInEachSegment) {
  Scenario s = PoissonScenario(0, 0);
  s.arrival.kind = ArrivalProcess::Kind::kSteps;
  s.arrival.steps = {{50, 100, {}}, {200, 100, {}}, {50, 100, {}}};
  EXPECT_DOUBLE_EQ(s.ArrivalSpan(), 300);
  const std::vector<Arrival> arrivals = GenerateArrivals(s, 3);
  ExpectSortedWithin(arrivals, 300);
  double counts[3] = {0, 0, 0};
  for (const Arrival& a : arrivals) {
    counts[std::min(2, static_cast<int>(a.time_s / 100))] += 1;
  }
  ExpectCountNear(counts[0], 5000, 5000);
  ExpectCountNear(counts[1], 20000, 20000);
  ExpectCountNear(counts[2], 5000, 5000);
}

TEST(ArrivalsTest, SeedBurstOffersTheReferenceLoad) {
  const Scenario s = LoadScenario(kSourceDir + "/scenarios/seed-burst.yaml");
  const std::vector<Arrival> arrivals = GenerateArrivals(s, s.seed);
  ExpectSortedWithin(arrivals, 150);
  // 8 x 30 + 30 x 60 + 8 x 60 = 2520 expected; the burst alone 1800.
  ExpectCountNear(static_cast<double>(arrivals.size()), 2520, 2520);
  const auto burst = std::count_if(arrivals.begin(), arrivals.end(), [](const Arrival& a) {
    return a.time_s >= 30 && a.time_s < 90;
  });
  ExpectCountNear(static_cast<double>(burst), 1800, 1800);
  for (const Arrival& a : arrivals) {
    const RequestClass& c = s.classes[static_cast<std::size_t>(a.class_index)];
    ASSERT_EQ(a.prompt_tokens, c.prompt_tokens.value);
    ASSERT_EQ(a.output_tokens, c.output_tokens.value);
    ASSERT_EQ(a.tenant, "default");
  }
}

TEST(ArrivalsTest, ABurstSendsItsCountAtOnce) {
  const Scenario s = LoadScenario(kSourceDir + "/scenarios/cold-burst-1000.yaml");
  EXPECT_EQ(s.ArrivalSpan(), 15);
  const std::vector<Arrival> arrivals = GenerateArrivals(s, s.seed);
  ASSERT_EQ(arrivals.size(), 1000u);
  std::array<int, 3> per_class{};
  for (const Arrival& a : arrivals) {
    ASSERT_EQ(a.time_s, 0.0);
    per_class[static_cast<std::size_t>(a.class_index)] += 1;
  }
  EXPECT_NEAR(per_class[0], 700, 60);  // the 70/20/10 mix
  EXPECT_NEAR(per_class[2], 100, 40);
}

TEST(ArrivalsTest, ClassesFollowNormalisedShares) {
  Scenario s = PoissonScenario(1000, 100);
  s.classes = {Class("chat", 7, 32, 64), Class("coding", 2, 128, 128),
               Class("document", 1, 512, 128)};
  s.classes[2].tenant = "docs";
  s.classes[2].priority = 3;
  const std::vector<Arrival> arrivals = GenerateArrivals(s, 11);
  double counts[3] = {0, 0, 0};
  for (const Arrival& a : arrivals) {
    ASSERT_GE(a.class_index, 0);
    ASSERT_LT(a.class_index, 3);
    const RequestClass& c = s.classes[static_cast<std::size_t>(a.class_index)];
    counts[a.class_index] += 1;
    ASSERT_EQ(a.prompt_tokens, c.prompt_tokens.value);
    ASSERT_EQ(a.priority, c.priority);
    ASSERT_EQ(a.tenant.data(), c.tenant.data());  // points into the scenario
  }
  const double n = static_cast<double>(arrivals.size());
  const double expected[3] = {0.7, 0.2, 0.1};
  for (int i = 0; i < 3; ++i) {
    ExpectCountNear(counts[i], n * expected[i], n * expected[i] * (1 - expected[i]));
  }
}

TEST(ArrivalsTest, DistinctPromptsAreAskedAgainWithTheirOwnShape) {
  Scenario s = PoissonScenario(50, 60);
  s.classes = {Class("faq", 1, 10, 10), Class("new", 1, 10, 10)};
  s.classes[0].distinct_prompts = 5;
  for (RequestClass& c : s.classes) {
    c.prompt_tokens.kind = TokenDist::Kind::kUniform;
    c.prompt_tokens.min = 1;
    c.prompt_tokens.max = 1000;
  }
  std::map<std::uint64_t, std::int32_t> prompt_of;  // prompt id -> its prompt tokens
  std::int64_t unique = 0;
  for (const Arrival& a : GenerateArrivals(s, 3)) {
    if (a.class_index == 1) {
      EXPECT_EQ(a.prompt_id, 0u) << "a class without distinct_prompts asks new prompts";
      ++unique;
      continue;
    }
    ASSERT_NE(a.prompt_id, 0u);
    const auto [it, first] = prompt_of.emplace(a.prompt_id, a.prompt_tokens);
    EXPECT_EQ(it->second, a.prompt_tokens) << "the same prompt is the same length every time";
  }
  EXPECT_EQ(prompt_of.size(), 5u) << "1,500 arrivals ask every one of the 5";
  EXPECT_GT(unique, 1000);
  std::set<std::int32_t> lengths;
  for (const auto& [id, tokens] : prompt_of) {
    lengths.insert(tokens);
  }
  EXPECT_GT(lengths.size(), 1u) << "each prompt its own draw";
}

TEST(ArrivalsTest, DeterministicForASeed) {
  Scenario s = PoissonScenario(50, 60);
  s.classes = {Class("a", 1, 10, 10), Class("b", 1, 20, 20)};
  s.classes[1].prompt_tokens.kind = TokenDist::Kind::kUniform;
  s.classes[1].prompt_tokens.min = 1;
  s.classes[1].prompt_tokens.max = 1000;
  const auto a = GenerateArrivals(s, 5);
  const auto b = GenerateArrivals(s, 5);
  const auto c = GenerateArrivals(s, 6);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].time_s, b[i].time_s);
    ASSERT_EQ(a[i].class_index, b[i].class_index);
    ASSERT_EQ(a[i].prompt_tokens, b[i].prompt_tokens);
  }
  const bool same = a.size() == c.size() && std::equal(a.begin(), a.end(), c.begin(),
                                                       [](const Arrival& x, const Arrival& y) {
                                                         return x.time_s == y.time_s;
                                                       });
  EXPECT_FALSE(same);

  // Times come from their own stream: a different token distribution keeps them.
  s.classes[0].output_tokens = Fixed(999);
  const auto d = GenerateArrivals(s, 5);
  ASSERT_EQ(a.size(), d.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].time_s, d[i].time_s);
  }
}

TEST(ArrivalsTest, OneMillionPoissonArrivals) {
  // 1e4 req/s for 100 s; timed by the test runner (well under a second in a release build).
  const Scenario s = PoissonScenario(10'000, 100);
  const std::vector<Arrival> arrivals = GenerateArrivals(s, 1);
  ExpectCountNear(static_cast<double>(arrivals.size()), 1e6, 1e6);
  EXPECT_LT(arrivals.back().time_s, 100);
}

// ---- Draw --------------------------------------------------------------------------------

TEST(DrawTest, FixedIsAtLeastOne) {
  Rng rng(1);
  EXPECT_EQ(Draw(Fixed(17), rng), 17);
  EXPECT_EQ(Draw(Fixed(0), rng), 1);
}

TEST(DrawTest, UniformStaysWithinBoundsAndCoversThem) {
  TokenDist d;
  d.kind = TokenDist::Kind::kUniform;
  d.min = 10;
  d.max = 30;
  Rng rng(2);
  double sum = 0;
  std::int32_t lo = 1 << 30, hi = 0;
  const int n = 100'000;
  for (int i = 0; i < n; ++i) {
    const std::int32_t v = Draw(d, rng);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  EXPECT_EQ(lo, 10);
  EXPECT_EQ(hi, 30);
  EXPECT_NEAR(sum / n, d.Mean(), 0.1);
}

TEST(DrawTest, LognormalHasTheRequestedMeanAndCv) {
  TokenDist d;
  d.kind = TokenDist::Kind::kLognormal;
  d.mean = 200;
  d.cv = 0.8;
  d.min = 1;
  d.max = 1'000'000;
  Rng rng(3);
  double sum = 0, sum_sq = 0;
  const int n = 400'000;
  for (int i = 0; i < n; ++i) {
    const double v = Draw(d, rng);
    sum += v;
    sum_sq += v * v;
  }
  const double mean = sum / n;
  const double cv = std::sqrt(sum_sq / n - mean * mean) / mean;
  EXPECT_NEAR(mean, 200, 2);  // standard error 0.25
  EXPECT_NEAR(cv, 0.8, 0.04);
}

TEST(DrawTest, LognormalIsClampedToItsBounds) {
  TokenDist d;
  d.kind = TokenDist::Kind::kLognormal;
  d.mean = 100;
  d.cv = 2;
  d.min = 50;
  d.max = 150;
  Rng rng(4);
  bool saw_min = false, saw_max = false;
  for (int i = 0; i < 10'000; ++i) {
    const std::int32_t v = Draw(d, rng);
    ASSERT_GE(v, 50);
    ASSERT_LE(v, 150);
    saw_min |= v == 50;
    saw_max |= v == 150;
  }
  EXPECT_TRUE(saw_min);
  EXPECT_TRUE(saw_max);
}

// ---- Trace replay ------------------------------------------------------------------------

/// A Mooncake trace with `n` records `gap_s` apart; record i has input_length i + 1.
std::string MooncakeTrace(int n, double gap_s) {
  std::string text;
  for (int i = 0; i < n; ++i) {
    text += "{\"timestamp\": " + std::to_string(i * gap_s * 1000) +
            ", \"input_length\": " + std::to_string(i + 1) + ", \"output_length\": 7}\n";
  }
  return text;
}

Scenario TraceScenario(const std::string& file, const std::string& extra) {
  return LoadScenarioFromString(
      "name: t\narrival:\n  process: trace\n  file: " + file + "\n" + extra, "t.yaml");
}

TEST(TraceArrivalsTest, WindowAndTimeScale) {
  const TempDir dir;
  std::string csv = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  for (int i = 0; i < 10; ++i) {
    csv += "2024-05-01 12:00:0" + std::to_string(i) + ".0000000," + std::to_string(i + 1) + ",9\n";
  }
  const std::string file = dir.Write("t.csv", csv);
  // Scaled times 0, 2, ..., 18; the window [4, 10) keeps 4, 6, 8 -> 0, 2, 4.
  Scenario s = TraceScenario(file,
                             "  time_scale: 2\n  start_s: 4\n  duration_s: 6\n"
                             "classes: [{name: t, priority: 2, tenant: acme}]\n");
  EXPECT_DOUBLE_EQ(s.ArrivalSpan(), 6);
  const std::vector<Arrival> arrivals = GenerateArrivals(s, 1);
  ASSERT_EQ(arrivals.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(arrivals[i].time_s, 2.0 * static_cast<double>(i), 1e-9);
    EXPECT_EQ(arrivals[i].prompt_tokens, static_cast<std::int32_t>(i) + 3);
    EXPECT_EQ(arrivals[i].output_tokens, 9);
    EXPECT_EQ(arrivals[i].class_index, -1);
    EXPECT_EQ(arrivals[i].priority, 2);
    EXPECT_EQ(arrivals[i].tenant, "acme");
  }
}

TEST(TraceArrivalsTest, WholeTraceWithoutClassesUsesDefaults) {
  const TempDir dir;
  const std::string file = dir.Write("t.jsonl", MooncakeTrace(5, 1.5));
  Scenario s = TraceScenario(file, "  start_s: 1\n");
  EXPECT_DOUBLE_EQ(s.ArrivalSpan(), 5);  // last record at 6 s, minus start_s
  const std::vector<Arrival> arrivals = GenerateArrivals(s, 1);
  ASSERT_EQ(arrivals.size(), 4u);  // the record at 0 s is before start_s
  EXPECT_DOUBLE_EQ(arrivals[0].time_s, 0.5);
  EXPECT_EQ(arrivals[0].prompt_tokens, 2);
  EXPECT_EQ(arrivals[0].priority, 0);
  EXPECT_EQ(arrivals[0].tenant, "default");
}

TEST(TraceArrivalsTest, IntegerRateMultiplierReplaysEachRecordThatManyTimes) {
  const TempDir dir;
  const std::string file = dir.Write("t.jsonl", MooncakeTrace(100, 1.0));
  const Scenario s = TraceScenario(file, "  rate_multiplier: 3\n  duration_s: 100\n");
  const std::vector<Arrival> arrivals = GenerateArrivals(s, 9);
  ASSERT_EQ(arrivals.size(), 300u);
  ExpectSortedWithin(arrivals, 100);
  // Record i (input_length i + 1, at i s): one copy at i s exactly, two within [i, i + 1).
  std::vector<int> copies(100, 0), exact(100, 0);
  for (const Arrival& a : arrivals) {
    const int i = a.prompt_tokens - 1;
    ++copies[static_cast<std::size_t>(i)];
    exact[static_cast<std::size_t>(i)] += a.time_s == i ? 1 : 0;
    ASSERT_GE(a.time_s, i);
    ASSERT_LT(a.time_s, i + 1);
  }
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(copies[static_cast<std::size_t>(i)], 3);
    EXPECT_GE(exact[static_cast<std::size_t>(i)], 1);
  }
}

TEST(TraceArrivalsTest, FractionalRateMultiplier) {
  const TempDir dir;
  const std::string file = dir.Write("t.jsonl", MooncakeTrace(2000, 0.1));
  const Scenario up = TraceScenario(file, "  rate_multiplier: 2.5\n");
  // Each record 2 or 3 times: 2000 x 2.5 expected, binomial variance 2000 x 0.25.
  ExpectCountNear(static_cast<double>(GenerateArrivals(up, 1).size()), 5000, 500);
  const Scenario down = TraceScenario(file, "  rate_multiplier: 0.5\n");
  const std::vector<Arrival> thinned = GenerateArrivals(down, 1);
  ExpectCountNear(static_cast<double>(thinned.size()), 1000, 500);
  for (const Arrival& a : thinned) {  // thinning keeps records at their own times
    ASSERT_NEAR(a.time_s, (a.prompt_tokens - 1) * 0.1, 1e-9);
  }
}

TEST(TraceArrivalsTest, AzureConvScenarioReplaysItsWindow) {
  if (!std::filesystem::exists(kAzureTrace)) {
    GTEST_SKIP() << "trace not present: " << kAzureTrace;
  }
  const Scenario s = LoadScenario(kSourceDir + "/scenarios/azure-conv.yaml");
  const std::vector<Arrival> arrivals = GenerateArrivals(s, s.seed);
  ExpectSortedWithin(arrivals, 120);
  const std::vector<TraceRecord> records = ReadTrace(kAzureTrace, TraceFormat::kAzureCsv);
  const auto in_window = std::count_if(records.begin(), records.end(), [](const TraceRecord& r) {
    return r.time_s >= 600 && r.time_s < 720;
  });
  EXPECT_EQ(static_cast<std::ptrdiff_t>(arrivals.size()), in_window);
  EXPECT_GT(arrivals.size(), 300u);  // about 5.5 req/s
}

}  // namespace
}  // namespace spillway
