// `spillway bench` against the real `spillway serve` (RunBench in this process, the server a
// child process): arrivals leave on the scenario's clock while the server falls behind, client
// timeouts close connections the server notices, each retry policy shapes the load as the
// simulator says it should, each class asks for its priority with its tenant's key, and a
// trace replays with exact token counts. Time bounds are generous (a loaded 2-core machine);
// the whole file runs in well under a minute.

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <chrono>
#include <csignal>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "api/openai_types.h"
#include "common/http_client.h"
#include "common/server_fixture.h"
#include "common/temp_dir.h"
#include "core/fairness_id.h"
#include "loadgen/bench_runner.h"
#include "loadgen/request_labels.h"
#include "workload/arrivals.h"
#include "workload/scenario.h"

namespace spillway::loadgen {
namespace {

namespace json = boost::json;
using server_test::HttpResponse;
using server_test::MetricSum;

struct BenchRun {
  BenchResult result;
  std::vector<json::object> records;  ///< sorted by (request, attempt)
  std::vector<Arrival> arrivals;      ///< the scenario's first attempts
};

class BenchLiveTest : public server_test::ServerFixture {
 protected:
  Scenario Load(const std::string& yaml) {
    return LoadScenarioFromString(yaml, "test.yaml", dir_.path().string());
  }

  BenchRun Bench(const Scenario& sc, const std::string& api_key = "",
                 const TenantKeys& tenant_keys = {}) {
    BenchOptions o;
    o.api_key = api_key;
    o.api_keys_by_tenant = tenant_keys;
    o.target_url = "http://127.0.0.1:" + std::to_string(server().port());
    o.seed = sc.seed;
    o.policy_label = "test";
    std::ostringstream records;
    o.records = &records;
    BenchRun run;
    run.arrivals = GenerateArrivals(sc, sc.seed);
    run.result = RunBench(sc, o);
    std::istringstream lines(records.str());
    for (std::string line; std::getline(lines, line);) {
      run.records.push_back(json::parse(line).as_object());
    }
    std::sort(run.records.begin(), run.records.end(), [](const auto& a, const auto& b) {
      const auto key = [](const json::object& r) {
        return std::make_pair(r.at("request").to_number<int>(), r.at("attempt").to_number<int>());
      };
      return key(a) < key(b);
    });
    return run;
  }

  static int Count(const BenchRun& run, const std::string& key, const std::string& value) {
    return static_cast<int>(
        std::count_if(run.records.begin(), run.records.end(),
                      [&](const json::object& r) { return r.at(key).as_string() == value; }));
  }

  testing_util::TempDir dir_;
};

// --- The scenario clock -----------------------------------------------------------------------

class LiveScheduleUnderLoadTest : public BenchLiveTest {
 protected:
  // Two running sequences at a time: the server falls far behind 40 req/s.
  std::vector<std::string> ServerArgs() override {
    return {"--policy", "unbounded", "--max-num-seqs", "2"};
  }
};

TEST_F(LiveScheduleUnderLoadTest, ArrivalsLeaveOnTheScenarioClockWhateverTheServerDoes) {
  const Scenario sc = Load(R"(name: clock
seed: 5
arrival: {process: steps, steps: [{rate: 40, duration_s: 2}, {rate: 5, duration_s: 1}]}
classes: [{name: c, prompt_tokens: 16, output_tokens: 32}]
client: {total_timeout_s: 2.5}
)");
  const BenchRun run = Bench(sc);
  ASSERT_EQ(run.records.size(), run.arrivals.size());  // no retries: one attempt each
  EXPECT_EQ(run.result.summary.offered, static_cast<std::int64_t>(run.arrivals.size()));
  EXPECT_EQ(run.result.transport_errors, 0);
  double max_lag_s = 0;
  for (std::size_t i = 0; i < run.records.size(); ++i) {
    const json::object& r = run.records[i];
    ASSERT_EQ(r.at("request").to_number<std::size_t>(), i);
    EXPECT_NEAR(r.at("scheduled_s").to_number<double>(), run.arrivals[i].time_s, 1e-9);
    max_lag_s = std::max(max_lag_s, r.at("sent_s").to_number<double>() - run.arrivals[i].time_s);
  }
  EXPECT_LT(max_lag_s, 0.25) << "a request left late by " << max_lag_s << " s";
  // The server did fall behind: many requests were in flight at once, and some ran out of time.
  EXPECT_GE(run.result.max_in_flight, 20);
  EXPECT_GT(run.result.summary.abandoned_after_admission, 0);
  EXPECT_EQ(run.result.summary.source, "bench");
  EXPECT_EQ(run.result.summary.policy, "test");
  EXPECT_EQ(run.result.summary.profile, "spillway-emulated");  // from GET /v1/models
}

// --- Client timeouts ------------------------------------------------------------------------

class TimeoutTest : public BenchLiveTest {
 protected:
  std::vector<std::string> ServerArgs() override {
    return {"--policy",           "unbounded", "--max-num-seqs", "2", "--request-timeout-s", "60",
            "--client-timeout-s", "90"};
  }
};

TEST_F(TimeoutTest, TimedOutClientsCloseTheirConnectionsAndTheServerAbortsTheirRequests) {
  const std::map<std::string, std::string> disconnect = {{"cause", "client_disconnect"}};
  const double before = MetricSum(Metrics(), "spillway_aborts_total", disconnect);
  // Requests of 2000 tokens: two run (and reach the total timeout), the rest wait (and reach
  // the TTFT timeout).
  const Scenario sc = Load(R"(name: timeouts
seed: 2
arrival: {process: poisson, rate: 20, duration_s: 0.5}
classes: [{name: c, prompt_tokens: 8, output_tokens: 2000}]
client: {ttft_timeout_s: 0.4, total_timeout_s: 0.8}
)");
  const BenchRun run = Bench(sc);
  const auto n = static_cast<std::int64_t>(run.arrivals.size());
  ASSERT_GE(n, 4);
  EXPECT_EQ(run.result.summary.abandoned_after_admission, n);
  EXPECT_EQ(run.result.summary.completed, 0);
  EXPECT_EQ(Count(run, "outcome", "abandoned"), n);
  EXPECT_GT(Count(run, "reason", "ttft_timeout"), 0);
  EXPECT_GT(Count(run, "reason", "total_timeout"), 0);
  for (const json::object& r : run.records) {
    const double e2e = r.at("e2e_s").to_number<double>();
    const double limit = r.at("reason").as_string() == "ttft_timeout" ? 0.4 : 0.8;
    EXPECT_GE(e2e, limit - 0.01);
    EXPECT_LT(e2e, limit + 0.3) << "the client gave up late";
  }
  bool held = false;
  const std::string text = PollMetrics(
      [&](const std::string& t) {
        // The gauges follow at the engine's next step.
        return MetricSum(t, "spillway_aborts_total", disconnect) - before >=
                   static_cast<double>(n) &&
               MetricSum(t, "vllm:num_requests_running") == 0 &&
               MetricSum(t, "vllm:num_requests_waiting") == 0;
      },
      5.0, &held);
  EXPECT_TRUE(held) << "client_disconnect aborts rose by "
                    << MetricSum(text, "spillway_aborts_total", disconnect) - before << ", want "
                    << n << "; the engine should then be empty:\n"
                    << text;
  EXPECT_EQ(MetricSum(text, "spillway_aborts_total", disconnect) - before, static_cast<double>(n));
}

// --- Retry policies -------------------------------------------------------------------------

// One running and one queued request at most: nearly everything else gets 503 queue_full.
class RetryTest : public BenchLiveTest {
 protected:
  std::vector<std::string> ServerArgs() override {
    return {"--policy", "tail-drop", "--max-num-queued-reqs", "1", "--max-num-seqs", "1"};
  }

  Scenario WithRetry(const std::string& retry) {
    return Load(R"(name: retries
seed: 3
arrival: {process: poisson, rate: 20, duration_s: 1.5}
classes: [{name: c, prompt_tokens: 8, output_tokens: 8}]
client:
  total_timeout_s: 10
  retry: )" + retry +
                "\n");
  }
};

TEST_F(RetryTest, NoneSendsEachRequestOnce) {
  const RunSummary s = Bench(WithRetry("{policy: none}")).result.summary;
  EXPECT_EQ(s.retries, 0);
  EXPECT_GT(s.rejected_by_reason.count("queue_full"), 0u);
}

TEST_F(RetryTest, FixedShortRetriesAmplifyTheLoad) {
  const BenchRun run = Bench(WithRetry("{policy: fixed, max_attempts: 10, interval_s: 0.05}"));
  const RunSummary& s = run.result.summary;
  EXPECT_GT(s.offered, 2 * s.first_attempts)
      << "offered " << s.offered << " for " << s.first_attempts << " requests";
  EXPECT_GT(s.rejected_by_status.at("503"), s.first_attempts);
  // Retries leave interval_s after the refusal.
  for (std::size_t i = 1; i < run.records.size(); ++i) {
    const json::object& r = run.records[i];
    if (r.at("attempt").to_number<int>() > 1) {
      EXPECT_GE(
          r.at("sent_s").to_number<double>() - run.records[i - 1].at("sent_s").to_number<double>(),
          0.05);
    }
  }
}

TEST_F(RetryTest, BackoffWithJitterAndABudgetDoesNot) {
  const RunSummary s =
      Bench(WithRetry("{policy: backoff-jitter, max_attempts: 3, base_s: 1, jitter_s: 0.2, "
                      "max_backoff_s: 2, budget: 0.2}"))
          .result.summary;
  EXPECT_LE(s.retries, static_cast<std::int64_t>(0.2 * static_cast<double>(s.first_attempts)) + 1);
  EXPECT_LT(static_cast<double>(s.offered), 1.5 * static_cast<double>(s.first_attempts));
  EXPECT_GT(s.rejected_total, 0);
}

// --- Priority classes and per-tenant keys ---------------------------------------------------

class PriorityClassTest : public BenchLiveTest {
 protected:
  // Tenant web may ask for class 0; tenant jobs at best for class 1.
  std::vector<std::string> ServerArgs() override {
    return {"--config", dir_.Write("keys.yaml",
                                   "api_keys:\n"
                                   "  - {key: sk-web, tenant: web}\n"
                                   "  - {key: sk-jobs, tenant: jobs, max_priority: 1}\n")};
  }
};

TEST_F(PriorityClassTest, EachClassSendsItsPriorityWithItsTenantsKeyAndRecordsTheClassApplied) {
  // batch asks for class 0, which its key does not allow; plain asks for none.
  const Scenario sc = Load(R"(name: classes
seed: 5
arrival: {process: poisson, rate: 20, duration_s: 1.5}
classes:
  - {name: interactive, prompt_tokens: 8, output_tokens: 4, priority: 0, tenant: web}
  - {name: batch, prompt_tokens: 8, output_tokens: 4, priority: 0, tenant: jobs}
  - {name: plain, prompt_tokens: 8, output_tokens: 4, tenant: web}
client: {total_timeout_s: 10}
)");
  TenantKeys keys;
  AddTenantKey("jobs=sk-jobs", &keys);
  const BenchRun run = Bench(sc, "sk-web", keys);
  std::map<std::string, int> completed;
  for (const json::object& r : run.records) {
    ASSERT_EQ(r.at("outcome").as_string(), "completed") << json::serialize(r);
    const std::string name(r.at("class").as_string());
    ++completed[name];
    const json::value& asked = r.at("priority_requested");
    const std::int64_t applied = r.at("priority_class").to_number<std::int64_t>();
    if (name == "plain") {
      EXPECT_TRUE(asked.is_null()) << json::serialize(r);
    } else {
      EXPECT_EQ(asked.to_number<std::int64_t>(), 0) << json::serialize(r);
    }
    EXPECT_EQ(applied, name == "batch" ? 1 : 0) << json::serialize(r);
  }
  EXPECT_GT(completed["interactive"], 0);
  EXPECT_GT(completed["batch"], 0);
  EXPECT_GT(completed["plain"], 0);
  const RunSummary& s = run.result.summary;
  ASSERT_EQ(s.classes.size(), 3u);
  EXPECT_EQ(s.classes.at("batch").completed, completed["batch"]);
  EXPECT_EQ(s.classes.at("interactive").ttft_s.count, completed["interactive"]);
}

// --- Trace replay ---------------------------------------------------------------------------

class TraceReplayTest : public BenchLiveTest {
 protected:
  /// tiny.csv: four Azure records 0.3-0.4 s apart, output lengths 5, 3, 8 and 2.
  void WriteTinyTrace() {
    dir_.Write("tiny.csv",
               "TIMESTAMP,ContextTokens,GeneratedTokens\n"
               "2023-11-16 18:15:46.6805900,37,5\n"
               "2023-11-16 18:15:46.9805900,120,3\n"
               "2023-11-16 18:15:47.2805900,15,8\n"
               "2023-11-16 18:15:47.6805900,64,2\n");
  }
};

TEST_F(TraceReplayTest, ReplaysATinyAzureTraceWithExactTokenCounts) {
  WriteTinyTrace();
  const Scenario sc = Load(R"(name: tiny-trace
seed: 9
arrival: {process: trace, file: tiny.csv, time_scale: 0.5, rate_multiplier: 2}
)");
  const std::string before = Metrics();
  const BenchRun run = Bench(sc);
  ASSERT_EQ(run.arrivals.size(), 8u);  // four records, each twice
  ASSERT_EQ(run.records.size(), 8u);
  double prompt_tokens = 0;
  for (std::size_t i = 0; i < run.records.size(); ++i) {
    const json::object& r = run.records[i];
    EXPECT_NEAR(r.at("scheduled_s").to_number<double>(), run.arrivals[i].time_s, 1e-9);
    EXPECT_EQ(r.at("prompt_tokens").to_number<int>(), run.arrivals[i].prompt_tokens);
    EXPECT_EQ(r.at("outcome").as_string(), "completed") << json::serialize(r);
    EXPECT_EQ(r.at("output_tokens").to_number<int>(), run.arrivals[i].output_tokens);
    prompt_tokens += run.arrivals[i].prompt_tokens;
  }
  EXPECT_LT(run.records.back().at("scheduled_s").to_number<double>(), 0.5 + 1e-9);  // 1 s x 0.5
  const RunSummary& s = run.result.summary;
  EXPECT_EQ(s.completed, 8);
  EXPECT_DOUBLE_EQ(s.duration_s, 0.5);
  // Token-id prompts are counted exactly by the server.
  const std::string after = Metrics();
  EXPECT_DOUBLE_EQ(
      MetricSum(after, "vllm:prompt_tokens_total") - MetricSum(before, "vllm:prompt_tokens_total"),
      prompt_tokens);
  EXPECT_EQ(s.prefill_tokens, static_cast<std::int64_t>(prompt_tokens));
  EXPECT_TRUE(run.result.metrics_scraped);
  // Engine time is the server's own counters, end minus start (nothing else ran meanwhile).
  const auto delta = [&](const char* name) {
    return MetricSum(after, name) - MetricSum(before, name);
  };
  ASSERT_TRUE(s.engine_busy_s.has_value());
  EXPECT_GT(*s.engine_busy_s, 0);
  EXPECT_NEAR(*s.engine_busy_s, delta("spillway_engine_busy_seconds_total"), 1e-9);
  ASSERT_TRUE(s.wasted_engine_s.has_value());
  EXPECT_NEAR(*s.wasted_engine_s, delta("spillway_wasted_engine_seconds_total"), 1e-9);
  // spillway_not_completed_engine_seconds_total: the server's figure when it exports it,
  // else not measured.
  if (after.find("spillway_not_completed_engine_seconds_total") != std::string::npos) {
    ASSERT_TRUE(s.not_completed_engine_s.has_value());
    EXPECT_NEAR(*s.not_completed_engine_s, delta("spillway_not_completed_engine_seconds_total"),
                1e-9);
  } else {
    EXPECT_FALSE(s.not_completed_engine_s.has_value());
  }
}

TEST_F(TraceReplayTest, ACappedReplaySendsTheCapAndTheEmulatedEngineStopsAtTheRecordsLength) {
  WriteTinyTrace();
  const Scenario sc = Load(R"(name: capped-trace
seed: 9
arrival: {process: trace, file: tiny.csv, time_scale: 0.5, max_tokens: 6}
)");
  const std::string before = Metrics();
  const BenchRun run = Bench(sc);
  ASSERT_EQ(run.records.size(), 4u);
  const int lengths[] = {5, 3, 8, 2};
  for (std::size_t i = 0; i < run.records.size(); ++i) {
    const json::object& r = run.records[i];
    EXPECT_EQ(r.at("outcome").as_string(), "completed") << json::serialize(r);
    EXPECT_EQ(r.at("max_tokens").to_number<int>(), 6);
    EXPECT_EQ(r.at("emulated_output_tokens").to_number<int>(), lengths[i]);
    EXPECT_EQ(r.at("output_tokens").to_number<int>(), std::min(lengths[i], 6));
  }
  // Three stopped at EOS, one ran into its cap (vLLM's finished_reason label).
  const std::string after = Metrics();
  const auto finished = [&](const char* reason) {
    const std::map<std::string, std::string> label = {{"finished_reason", reason}};
    return MetricSum(after, "vllm:request_success_total", label) -
           MetricSum(before, "vllm:request_success_total", label);
  };
  EXPECT_EQ(finished("stop"), 3);
  EXPECT_EQ(finished("length"), 1);
}

TEST_F(TraceReplayTest, TheFairnessIdHeaderIsChecked) {
  const std::string header(api::kFairnessIdHeader);
  const std::string body = R"({"prompt": [1, 2, 3, 4], "max_tokens": 2})";
  for (const std::vector<std::pair<std::string, std::string>>& headers :
       std::vector<std::vector<std::pair<std::string, std::string>>>{
           {{header, ""}},
           {{header, std::string(kMaxFairnessIdBytes + 1, 'x')}},
           {{header, "tab\there"}},
           {{header, "a"}, {header, "b"}}}) {
    const HttpResponse bad = client().Post("/v1/completions", body, headers);
    EXPECT_TRUE(server_test::IsOpenAiError(bad, 400, "invalid_fairness_id"))
        << headers.front().second.size() << ": " << bad.status << " " << bad.body;
  }
  const HttpResponse ok =
      client().Post("/v1/completions", body, {{header, std::string(kMaxFairnessIdBytes, 'x')}});
  EXPECT_EQ(ok.status, 200) << ok.body;
}

TEST_F(TraceReplayTest, TheEmulatedLengthHeaderIsCheckedAndIgnoreEosWins) {
  const std::string header(api::kEmulatedOutputTokensHeader);
  const std::string body = R"({"prompt": [1, 2, 3, 4, 5, 6, 7, 8], "max_tokens": 16)";
  const HttpResponse bad = client().Post("/v1/completions", body + "}", {{header, "0"}});
  EXPECT_TRUE(server_test::IsOpenAiError(bad, 400, "invalid_emulated_output_tokens"));
  EXPECT_TRUE(
      server_test::IsOpenAiError(client().Post("/v1/completions", body + "}", {{header, ""}}), 400,
                                 "invalid_emulated_output_tokens"));
  EXPECT_TRUE(server_test::IsOpenAiError(
      client().Post("/v1/completions", body + "}", {{header, "3"}, {header, "6"}}), 400,
      "invalid_emulated_output_tokens"));
  const HttpResponse stopped = client().Post("/v1/completions", body + "}", {{header, "5"}});
  ASSERT_EQ(stopped.status, 200) << stopped.body;
  const json::value answer = json::parse(stopped.body);
  EXPECT_EQ(answer.at_pointer("/choices/0/finish_reason").as_string(), "stop");
  EXPECT_EQ(answer.at_pointer("/usage/completion_tokens").to_number<int>(), 5);
  // ignore_eos: the whole max_tokens whatever the header says.
  const HttpResponse full =
      client().Post("/v1/completions", body + R"(, "ignore_eos": true})", {{header, "5"}});
  ASSERT_EQ(full.status, 200) << full.body;
  EXPECT_EQ(json::parse(full.body).at_pointer("/choices/0/finish_reason").as_string(), "length");
  EXPECT_EQ(json::parse(full.body).at_pointer("/usage/completion_tokens").to_number<int>(), 16);
}

TEST_F(TraceReplayTest, WithoutMetricsEngineTimeIsNotMeasured) {
  const Scenario sc = Load(R"(name: no-metrics
seed: 4
arrival: {process: poisson, rate: 10, duration_s: 0.3}
classes: [{name: c, prompt_tokens: 8, output_tokens: 4}]
)");
  BenchOptions o;
  o.target_url = "http://127.0.0.1:" + std::to_string(server().port());
  o.scrape_metrics = false;  // --no-metrics: as against a server without /metrics
  const BenchResult r = RunBench(sc, o);
  EXPECT_FALSE(r.metrics_scraped);
  EXPECT_GT(r.summary.completed, 0);
  EXPECT_FALSE(r.summary.engine_busy_s.has_value());
  EXPECT_FALSE(r.summary.wasted_engine_s.has_value());
  EXPECT_FALSE(r.summary.not_completed_engine_s.has_value());
}

// --- A cold burst under the forecast policy ---------------------------------------------------

// The rejected attempts' times from send to answer at the client, sorted; each a 429.
std::vector<double> SortedRefusalTimes(const BenchRun& run) {
  std::vector<double> out;
  for (const json::object& r : run.records) {
    if (r.at("outcome").as_string() == "rejected") {
      EXPECT_EQ(r.at("status").to_number<int>(), 429) << json::serialize(r);
      out.push_back(r.at("e2e_s").to_number<double>());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

class LiveColdBurstTest : public BenchLiveTest {
 protected:
  std::vector<std::string> ServerArgs() override {
    return {"--scenario", std::string(SPILLWAY_SOURCE_DIR) + "/scenarios/cold-burst-100.yaml",
            "--policy", "forecast"};
  }
};

TEST_F(LiveColdBurstTest, AHundredAtOnceGetTheBatchAndTheRestAreRefusedAtTheDoor) {
  // Issue 14: 100 requests at once to an idle server got 27 answers and 73 refusals, the
  // slowest of them after 1 s (admitted, then dropped at the queue head). The forecast admits
  // what can start within the 1 s SLO (one batch of 27, as in the simulator) and refuses the
  // rest at once. Measured: 27 completed, 73 refused with 429, none dropped; the refusals'
  // p99 11.9 to 13.6 ms (the bound, 50 ms, is the issue's goal: 3.5x the measurement; checked
  // in the release build only: 114 ms under ASan, 140 ms under TSan in CI).
  const Scenario sc =
      LoadScenario(std::string(SPILLWAY_SOURCE_DIR) + "/scenarios/cold-burst-100.yaml");
  const BenchRun run = Bench(sc);
  ASSERT_EQ(run.records.size(), 100u);
  EXPECT_EQ(Count(run, "outcome", "dropped"), 0);
  EXPECT_EQ(Count(run, "outcome", "completed"), 27);
  for (const json::object& r : run.records) {
    if (r.at("outcome").as_string() == "rejected") {
      EXPECT_GE(r.at("retry_after_s").to_number<double>(), 1) << json::serialize(r);
    }
  }
  const std::vector<double> refusals_s = SortedRefusalTimes(run);
  ASSERT_EQ(refusals_s.size(), 73u);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)  // release build wall time
  EXPECT_LT(refusals_s[static_cast<std::size_t>(0.99 * 73)], 0.05);
#endif
  EXPECT_EQ(run.result.summary.good, 27);
  // Every admitted reply carried the forecast it was admitted on (X-Spillway-Ttft-Forecast),
  // which the summary calibrates against the TTFT the client measured.
  for (const json::object& r : run.records) {
    if (r.at("outcome").as_string() == "completed") {
      ASSERT_TRUE(r.at("ttft_forecast_s").is_number()) << json::serialize(r);
      EXPECT_LE(r.at("ttft_forecast_s").to_number<double>(), 1.0);
    } else {
      EXPECT_TRUE(r.at("ttft_forecast_s").is_null()) << json::serialize(r);
    }
  }
  std::int64_t calibrated = 0;
  for (const TtftCalibrationBin& b : run.result.summary.ttft_calibration) {
    calibrated += b.count;
  }
  EXPECT_EQ(calibrated, 27);
  EXPECT_EQ(run.result.summary.ttft_prediction_abs_error_s.count, 27);
}

class LiveColdBurstThousandTest : public BenchLiveTest {
 protected:
  std::vector<std::string> ServerArgs() override {
    return {"--scenario", std::string(SPILLWAY_SOURCE_DIR) + "/scenarios/cold-burst-1000.yaml",
            "--policy", "forecast"};
  }
};

TEST_F(LiveColdBurstThousandTest, AThousandAtOnceGetTheBatchAndTheRestAreRefusedAtTheDoor) {
  // Issue 14's cold burst of 1,000: the batch of 27 served, the other 973 refused at the door,
  // none admitted and then dropped. Measured (bench/cold_burst.sh, three runs): the refusals'
  // p99 99 to 108 ms at the client, nginx answering a static 429 to the same burst from the same
  // client 78 to 84 ms; the bound, 0.5 s, is 4.6x the slowest. A release-build row: under a
  // sanitizer the burst measures the instrumentation (the burst of 100 above covers the logic).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "release build only: wall time of 1,000 connections";
#endif
  const Scenario sc =
      LoadScenario(std::string(SPILLWAY_SOURCE_DIR) + "/scenarios/cold-burst-1000.yaml");
  const BenchRun run = Bench(sc);
  ASSERT_EQ(run.records.size(), 1000u);
  EXPECT_EQ(Count(run, "outcome", "dropped"), 0);
  EXPECT_EQ(Count(run, "outcome", "completed"), 27);
  const std::vector<double> refusals_s = SortedRefusalTimes(run);
  ASSERT_EQ(refusals_s.size(), 973u);
  RecordProperty("refusals_p99_s",
                 std::to_string(refusals_s[static_cast<std::size_t>(0.99 * 973)]));
  EXPECT_LT(refusals_s[static_cast<std::size_t>(0.99 * 973)], 0.5);
}

TEST(BenchUnreachableTest, NoServerIsAnErrorAtTheStart) {
  const Scenario sc = LoadScenarioFromString(R"(name: x
arrival: {process: poisson, rate: 1, duration_s: 1}
classes: [{name: c, prompt_tokens: 1, output_tokens: 1}]
)",
                                             "x.yaml");
  BenchOptions o;
  o.target_url = "http://127.0.0.1:1";
  EXPECT_THROW(RunBench(sc, o), std::runtime_error);
}

// --- A server that dies mid-run ------------------------------------------------------------

class ServerDiesMidRunTest : public BenchLiveTest {
 protected:
  std::vector<std::string> ServerArgs() override { return {"--policy", "unbounded"}; }
};

// The engine's counters at the end are unknown: its figures are not measured (null), not the
// last per-second scrape's partial totals (found by a new user: after a kill -9 at 12 s, bench
// reported 10.9 engine seconds and 0.0 on not-completed work beside 38 failed).
TEST_F(ServerDiesMidRunTest, TheEngineFiguresAreNotMeasured) {
  const Scenario sc = Load(R"(name: dies
seed: 3
arrival: {process: steps, steps: [{rate: 10, duration_s: 3}]}
classes: [{name: c, prompt_tokens: 16, output_tokens: 32}]
client: {total_timeout_s: 5}
)");
  std::thread killer([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    server().Signal(SIGKILL);
  });
  const BenchRun run = Bench(sc);
  killer.join();
  EXPECT_TRUE(run.result.metrics_scraped);
  EXPECT_GT(run.result.transport_errors, 0);
  EXPECT_FALSE(run.result.summary.engine_busy_s.has_value());
  EXPECT_FALSE(run.result.summary.wasted_engine_s.has_value());
  EXPECT_FALSE(run.result.summary.not_completed_engine_s.has_value());
}

}  // namespace
}  // namespace spillway::loadgen
