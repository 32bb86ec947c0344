#pragma once
// Shared by the live failure-injection tests (tests/failure/): the shipped
// scenarios/failure/*.yaml, shortened, replayed by the load generator (RunBench, in this
// process) against the real `spillway serve` (a child process on the emulated seed-a100-7b
// engine). The pass criteria are those of the simulator's tests (tests/sim/failure_*), with
// bounds loosened where a live run on a shared 2-core machine is noisier than virtual time;
// each loosening is stated where it is made.
//
// Environment (how `make bench-failure` runs the long versions):
//   SPILLWAY_FAILURE_SCALE  multiplies every step's duration on top of the test's own
//                           shortening; a value that undoes it runs the scenario at full length
//                           (the test's scale x this, capped at 1: never longer than shipped).
//   SPILLWAY_FAILURE_OUT    a directory: each run's summary JSON is written there as
//                           SCENARIO_NAME[-LABEL].json (LABEL unless "live"), for
//                           `spillway report` beside the simulator's run of the same file.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "common/server_fixture.h"
#include "loadgen/bench_runner.h"
#include "report/percentiles.h"
#include "report/soak_check.h"
#include "report/summary_json.h"
#include "workload/scenario.h"

namespace spillway::failure_test {

namespace json = boost::json;

/// `spillway sim --scenario scenarios/seed-burst.yaml --measure-capacity` (seed 1), req/s.
constexpr double kCapacityRps = 10.34;

/// The extra length factor from SPILLWAY_FAILURE_SCALE (1 when unset or not a positive number).
inline double LengthScaleFromEnv() {
  const char* text = std::getenv("SPILLWAY_FAILURE_SCALE");
  if (text == nullptr) {
    return 1.0;
  }
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  return end != text && v > 0 ? v : 1.0;
}

/// True when SPILLWAY_FAILURE_SCALE asks for more than the test's short version.
inline bool LongVersion() { return LengthScaleFromEnv() > 1.0; }

/// The shipped scenarios/DIR/NAME.yaml (DIR: failure, or fleet for those run through the
/// gateway) with every step `scale` x SPILLWAY_FAILURE_SCALE times as long (capped at the
/// shipped length).
inline Scenario Shortened(const std::string& name, double scale,
                          const std::string& dir = "failure") {
  Scenario sc =
      LoadScenario(std::string(SPILLWAY_SOURCE_DIR) + "/scenarios/" + dir + "/" + name + ".yaml");
  const double factor = std::min(1.0, scale * LengthScaleFromEnv());
  for (RateStep& step : sc.arrival.steps) {
    step.duration_s *= factor;
  }
  return sc;
}

/// `spillway serve` flags that serve the engine scenarios/failure/NAME.yaml describes (its
/// engine, admission, timeouts and slo sections), as `spillway sim` resolves it.
inline std::vector<std::string> ScenarioArgs(const std::string& name) {
  return {"--scenario", std::string(SPILLWAY_SOURCE_DIR) + "/scenarios/failure/" + name + ".yaml"};
}

/// One bench run: its result and its per-attempt records (the --records JSON lines).
struct LiveRun {
  loadgen::BenchResult result;
  std::vector<json::object> records;
};

/// Writes `summary` to SPILLWAY_FAILURE_OUT (when set) as SCENARIO_NAME[-LABEL].json.
inline void SaveSummary(const RunSummary& summary, const std::string& scenario_name,
                        const std::string& label) {
  const char* dir = std::getenv("SPILLWAY_FAILURE_OUT");
  if (dir == nullptr || *dir == '\0') {
    return;
  }
  std::string name = scenario_name;
  if (label != "live") {
    name += "-" + label;
  }
  std::ofstream(std::string(dir) + "/" + name + ".json") << SummaryToJson(summary);
}

/// Runs `sc` with the load generator against the server on loopback `port`, with API key
/// `api_key` (and `tenant_keys` per tenant); `label` names the run (the summary's policy and,
/// with SPILLWAY_FAILURE_OUT set, the file name).
inline LiveRun BenchAt(std::uint16_t port, const Scenario& sc, const std::string& api_key,
                       const loadgen::TenantKeys& tenant_keys, Seconds duration_limit_s = kNever,
                       const std::string& label = "live") {
  loadgen::BenchOptions o;
  o.api_key = api_key;
  o.api_keys_by_tenant = tenant_keys;
  o.duration_limit_s = duration_limit_s;
  o.target_url = "http://127.0.0.1:" + std::to_string(port);
  o.seed = sc.seed;
  o.policy_label = label;
  std::ostringstream records;
  o.records = &records;
  LiveRun run;
  run.result = loadgen::RunBench(sc, o);
  std::istringstream lines(records.str());
  for (std::string line; std::getline(lines, line);) {
    run.records.push_back(json::parse(line).as_object());
  }
  SaveSummary(run.result.summary, sc.name, label);
  return run;
}

/// Issue 14's goal: at most 1% of the admitted requests broken (dropped at the queue head,
/// abandoned by their client, or completed outside an SLO) at full length. A short run's bound
/// is 3%: its burst starts after a fraction of the warm-up, when admission has learned few
/// output lengths and its margin few forecast errors (seed-burst-eos short, alone on the idle
/// machine: 5 and 8 broken of about 408 admitted; three live runs at once: 6).
inline void ExpectPromisesKept(const RunSummary& s) {
  const PromiseFigures p = PromisesOf(s, std::nullopt);  // as `spillway soak-check` counts
  ::testing::Test::RecordProperty("broken_promises", std::to_string(p.broken()));
  EXPECT_LE(p.broken(), p.admitted * (LongVersion() ? 1 : 3) / 100)
      << p.dropped_at_queue_head << " dropped at the head, " << p.abandoned << " abandoned, "
      << p.late << " completed outside an SLO, of " << p.admitted;
}

/// The 99th percentile of the seconds between sending a refused attempt and its refusal, at
/// the client (`e2e_s` of the records whose outcome is `rejected`); 0 when none was refused.
inline double RefusalP99(const LiveRun& run) {
  std::vector<double> seconds;
  for (const json::object& r : run.records) {
    if (r.at("outcome").as_string() == "rejected" && r.at("e2e_s").is_number()) {
      seconds.push_back(r.at("e2e_s").to_number<double>());
    }
  }
  const double p99 = Summarize(seconds).p99;
  ::testing::Test::RecordProperty("refusal_p99_s", std::to_string(p99));
  return p99;
}

/// A priority-skew run's two classes (the test fails when either is missing).
struct SkewClasses {
  const ClassSummary* interactive = nullptr;
  const ClassSummary* batch = nullptr;
};
inline SkewClasses SkewClassesOf(const LiveRun& run) {
  const RunSummary& s = run.result.summary;
  EXPECT_EQ(run.result.transport_errors, 0);
  SkewClasses out;
  if (s.classes.count("interactive") == 1 && s.classes.count("batch") == 1) {
    out.interactive = &s.classes.at("interactive");
    out.batch = &s.classes.at("batch");
    ::testing::Test::RecordProperty("interactive_ttft_p95_s",
                                    std::to_string(out.interactive->ttft_s.p95));  // in XML
    ::testing::Test::RecordProperty("batch_ttft_p95_s", std::to_string(out.batch->ttft_s.p95));
    ::testing::Test::RecordProperty("batch_ttft_max_s", std::to_string(out.batch->ttft_s.max));
  }
  return out;
}

/// Batch requests completed, by whether they were sent before `phase_end_s` or after.
inline std::array<std::int64_t, 2> BatchCompletedPerPhase(const LiveRun& run, double phase_end_s) {
  std::array<std::int64_t, 2> done = {0, 0};
  for (const json::object& r : run.records) {
    if (r.at("class").as_string() == "batch" && r.at("outcome").as_string() == "completed") {
      ++done[r.at("sent_s").to_number<double>() < phase_end_s ? 0 : 1];
    }
  }
  ::testing::Test::RecordProperty("batch_completed_per_phase",
                                  std::to_string(done[0]) + "," + std::to_string(done[1]));
  return done;
}

class LiveFailureTest : public server_test::ServerFixture {
 protected:
  void SetUp() override {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "live timing criteria are checked in the release build";
#endif
    ServerFixture::SetUp();
  }

  /// Runs `sc` against the fixture's server (BenchAt).
  LiveRun Bench(const Scenario& sc, Seconds duration_limit_s = kNever,
                const std::string& label = "live") {
    return BenchAt(server().port(), sc, api_key_, tenant_keys_, duration_limit_s, label);
  }

  /// API keys Bench sends (BenchOptions::api_key and api_keys_by_tenant); none by default.
  std::string api_key_;
  loadgen::TenantKeys tenant_keys_;
};

}  // namespace spillway::failure_test
