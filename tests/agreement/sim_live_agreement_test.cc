// The live server and the simulator agree: one short burst scenario (3 s at 8 req/s, then 9 s
// at 30 req/s against an engine that sustains about 10, the seed mix of prompt and output
// lengths) is run by `spillway sim --policy predictive` and replayed against `spillway serve`
// (predictive, the same profile and batch budgets) with the very same arrivals: every request
// is sent at its arrival time as a streaming completion with a token-id prompt and
// ignore_eos, and its client reads to the end. The admitted counts and the p95 TTFT of served
// requests must be within 15% of each other.
//
// Why 15%: both runs share the engine core, the cost model and the arrivals, so what differs
// is time itself. The live engine's steps are timer sleeps on a shared 2-core machine (each
// wake-up late by a fraction of a millisecond against ~30 ms steps), a request reaches the
// engine a connection set-up after its arrival time, and the service-rate estimator measures
// these slightly longer steps; predictive admission is a threshold on those measurements, so
// a few decisions near the boundary flip. Measured on this 2-core machine (release build, four
// runs, other builds running): admitted 1-4% apart, p95 TTFT 1-10% apart; 15% is the issue's
// bound and leaves room for a loaded CI machine. The
// test is skipped in sanitizer builds, whose server runs several times slower than the model.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "common/http_client.h"
#include "common/server_fixture.h"
#include "common/temp_dir.h"
#include "workload/arrivals.h"
#include "workload/scenario.h"

namespace spillway {
namespace {

namespace json = boost::json;
using server_test::HttpRequest;
using server_test::PendingRequest;

// The scenario both runs use: `spillway sim --scenario` and `spillway serve --scenario` resolve
// the same engine from it (engine/resolve.h), batch budgets included. A long request deadline
// keeps the comparison about queueing, not about which long requests the deadline refuses.
constexpr const char* kScenario = R"(name: agreement-burst
seed: 11
arrival:
  process: steps
  steps:
    - {rate: 8, duration_s: 3}
    - {rate: 30, duration_s: 9}
classes:
  - {name: chat, share: 0.7, prompt_tokens: 32, output_tokens: 64}
  - {name: coding, share: 0.2, prompt_tokens: 128, output_tokens: 128}
  - {name: document, share: 0.1, prompt_tokens: 512, output_tokens: 128}
slo:
  ttft_s: 1.0
  tpot_s: 0.035
engine:
  profile: seed-a100-7b
timeouts:
  request_timeout_s: 60
)";

constexpr double kTolerance = 0.15;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

struct RunResult {
  std::int64_t admitted = 0;
  double ttft_p95_s = 0;
  std::int64_t served = 0;  ///< requests that got a first token
};

// Nearest-rank p95 (what the simulator's report uses for its percentiles is close enough at
// these sample sizes; both are order statistics of the same distribution).
double P95(std::vector<double> v) {
  if (v.empty()) {
    return 0;
  }
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(0.95 * static_cast<double>(v.size())));
  return v[std::max<std::size_t>(rank, 1) - 1];
}

class LiveAgreementTest : public server_test::ServerFixture {
 protected:
  std::vector<std::string> ServerArgs() override {
    // The engine the scenario describes, as the simulator runs it; only the listener and the
    // clients' timeout (validated against the request deadline) are serve's own.
    return {"--scenario",         ScenarioPath(), "--policy",          "predictive",
            "--client-timeout-s", "90",           "--max-connections", "4096"};
  }

  std::string ScenarioPath() {
    const std::filesystem::path path = dir_.path() / "agreement.yaml";
    if (!std::filesystem::exists(path)) {
      dir_.Write("agreement.yaml", kScenario);
    }
    return path.string();
  }

  RunResult RunSim(const std::string& scenario_path) {
    const std::string json_path = (dir_.path() / "sim.json").string();
    const std::string command = std::string(SPILLWAY_BINARY) + " sim --scenario '" + scenario_path +
                                "' --policy predictive --json '" + json_path + "' > '" +
                                (dir_.path() / "sim.txt").string() + "' 2>&1";
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
    std::ifstream in(json_path);
    std::stringstream text;
    text << in.rdbuf();
    const std::optional<json::value> v = server_test::ParseJson(text.str());
    RunResult r;
    if (!v.has_value()) {
      ADD_FAILURE() << "no JSON summary from " << command;
      return r;
    }
    r.admitted = server_test::IntAt(*v, "/admitted").value_or(-1);
    r.served = server_test::IntAt(*v, "/ttft_s/count").value_or(-1);
    const json::value* p95 = server_test::At(*v, "/ttft_s/p95");
    r.ttft_p95_s = p95 != nullptr && p95->is_number() ? p95->to_number<double>() : -1;
    return r;
  }

  RunResult RunLive(const std::vector<Arrival>& arrivals) {
    std::mutex mu;
    std::vector<double> ttfts;
    std::atomic<std::int64_t> admitted{0};
    std::atomic<int> transport_errors{0};
    const std::uint16_t port = client().port();
    {
      std::vector<std::jthread> clients;
      clients.reserve(arrivals.size());
      const auto start = std::chrono::steady_clock::now();
      for (const Arrival& a : arrivals) {
        std::this_thread::sleep_until(
            start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                        std::chrono::duration<double>(a.time_s)));
        HttpRequest request;
        request.method = "POST";
        request.target = "/v1/completions";
        std::string prompt;
        for (std::int32_t i = 0; i < a.prompt_tokens; ++i) {
          prompt += (i == 0 ? "" : ",") + std::to_string(100 + i % 1000);
        }
        request.body = "{\"prompt\":[" + prompt +
                       "],\"max_tokens\":" + std::to_string(a.output_tokens) +
                       ",\"stream\":true,\"ignore_eos\":true}";
        clients.emplace_back([&, request = std::move(request)] {
          const auto sent = std::chrono::steady_clock::now();
          PendingRequest pending(port, request, 60);
          const server_test::HttpResponse& head = pending.ReadHead(60);
          if (head.status == 0) {
            ++transport_errors;
            return;
          }
          if (head.status != 200) {
            return;  // shed at the door
          }
          ++admitted;
          bool first = true;
          while (std::optional<std::string> event = pending.NextEvent(60)) {
            if (first && event->find("\"choices\"") != std::string::npos) {
              const double ttft =
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
              const std::lock_guard lock(mu);
              ttfts.push_back(ttft);
            }
            first = false;
          }
        });
      }
    }  // joins every client
    EXPECT_EQ(transport_errors.load(), 0);
    RunResult r;
    r.admitted = admitted.load();
    r.served = static_cast<std::int64_t>(ttfts.size());
    r.ttft_p95_s = P95(std::move(ttfts));
    return r;
  }

  testing_util::TempDir dir_;
};

TEST_F(LiveAgreementTest, BurstAdmittedCountsAndP95TtftAgreeWithin15Percent) {
  if (kSanitized) {
    GTEST_SKIP() << "timing agreement is measured in the release build";
  }
  const std::string scenario_path = ScenarioPath();
  const Scenario scenario = LoadScenario(scenario_path);
  const std::vector<Arrival> arrivals = GenerateArrivals(scenario, scenario.seed);
  ASSERT_GT(arrivals.size(), 250u);

  const RunResult sim = RunSim(scenario_path);
  const RunResult live = RunLive(arrivals);
  std::cout << "arrivals " << arrivals.size() << "; sim: admitted " << sim.admitted << ", served "
            << sim.served << ", TTFT p95 " << sim.ttft_p95_s << " s; live: admitted "
            << live.admitted << ", served " << live.served << ", TTFT p95 " << live.ttft_p95_s
            << " s\n";

  // The burst is an overload: predictive sheds a good part of it in both runs.
  ASSERT_GT(sim.admitted, 0);
  ASSERT_LT(sim.admitted, static_cast<std::int64_t>(arrivals.size()) * 3 / 4);
  ASSERT_GT(sim.ttft_p95_s, 0);
  EXPECT_NEAR(static_cast<double>(live.admitted), static_cast<double>(sim.admitted),
              kTolerance * static_cast<double>(sim.admitted));
  EXPECT_NEAR(live.ttft_p95_s, sim.ttft_p95_s, kTolerance * sim.ttft_p95_s);
}

}  // namespace
}  // namespace spillway
