// The locustfile (loadtest/locustfile.py) against `spillway serve` beside `spillway bench`, on
// the same 30 s of steady and burst arrivals (scenarios/steady-burst-30s.yaml; the locustfile
// replays the arrivals `spillway sim --records` writes, which are bench's: same scenario, same
// seed), each against a fresh server: the counts of 200, 429 and 503 and the p95 TTFT of the
// answered streams agree within 10% (counts of a handful within 5 requests). Locust is the
// independent cross-check of bench's measurements (another HTTP client, another SSE reader,
// another clock); bench stays the tool of record.

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "common/run_command.h"
#include "common/server_process.h"
#include "common/temp_dir.h"

namespace spillway {
namespace {

namespace json = boost::json;
using testing_util::CommandResult;
using testing_util::RunCommand;

const std::string kLocustSource = SPILLWAY_SOURCE_DIR;
const std::string kScenario = kLocustSource + "/scenarios/steady-burst-30s.yaml";

struct ToolRun {
  std::map<int, std::int64_t> by_status;
  std::int64_t Count(int status) const {
    const auto it = by_status.find(status);
    return it == by_status.end() ? 0 : it->second;
  }
  double ttft_p95_s = 0;
  std::int64_t offered = 0;
};

// Nearest rank, as the locustfile's summary.
double P95(std::vector<double> v) {
  if (v.empty()) {
    return 0;
  }
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(0.95 * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

// bench's records: each first attempt's status, and the TTFT of those with a first token.
ToolRun FromRecords(const std::string& path) {
  ToolRun out;
  std::vector<double> ttfts;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const json::object r = json::parse(line).as_object();
    if (r.at("attempt").to_number<int>() != 1) {
      continue;
    }
    ++out.offered;
    ++out.by_status[r.at("status").to_number<int>()];
    if (!r.at("ttft_s").is_null()) {
      ttfts.push_back(r.at("ttft_s").to_number<double>());
    }
  }
  out.ttft_p95_s = P95(ttfts);
  return out;
}

ToolRun FromLocustSummary(const std::string& path) {
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const json::object s = json::parse(text).as_object();
  ToolRun out;
  out.offered = s.at("offered").to_number<std::int64_t>();
  for (const auto& [status, count] : s.at("by_status").as_object()) {
    out.by_status[std::stoi(std::string(status))] = count.to_number<std::int64_t>();
  }
  out.ttft_p95_s = s.at("ttft_s").at("p95").to_number<double>();
  return out;
}

TEST(LiveLocustTest, CountsByStatusAndP95TtftAgreeWithBenchWithinTenPercent) {
  const std::optional<std::string> locust = testing_util::FindOnPath("locust");
  ASSERT_TRUE(locust.has_value())
      << "locust is not installed: scripts/deps.sh test installs python3-locust";
  const testing_util::TempDir tmp;
  const std::string arrivals = (tmp.path() / "arrivals.jsonl").string();
  const CommandResult sim =
      RunCommand({SPILLWAY_BINARY, "sim", "--scenario", kScenario, "--records", arrivals}, 120);
  ASSERT_EQ(sim.exit_code, 0) << sim.output;

  const std::string bench_records = (tmp.path() / "bench.jsonl").string();
  {
    server_test::ServerProcess serve({"--scenario", kScenario});
    ASSERT_TRUE(serve.WaitUntilListening(15)) << serve.error();
    const CommandResult bench = RunCommand(
        {SPILLWAY_BINARY, "bench", "--target", "http://127.0.0.1:" + std::to_string(serve.port()),
         "--scenario", kScenario, "--records", bench_records, "--no-progress"},
        180);
    ASSERT_EQ(bench.exit_code, 0) << bench.output;
  }
  const std::string summary = (tmp.path() / "locust.json").string();
  {
    server_test::ServerProcess serve({"--scenario", kScenario});
    ASSERT_TRUE(serve.WaitUntilListening(15)) << serve.error();
    const CommandResult run = RunCommand(
        {*locust, "-f", kLocustSource + "/loadtest/locustfile.py", "--headless", "--host",
         "http://127.0.0.1:" + std::to_string(serve.port()), "--users", "1", "--spawn-rate", "1",
         "--run-time", "150s", "--only-summary", "--exit-code-on-error", "0"},
        180, {"SPILLWAY_ARRIVALS=" + arrivals, "SPILLWAY_SUMMARY=" + summary});
    ASSERT_EQ(run.exit_code, 0) << run.output;
  }
  const ToolRun b = FromRecords(bench_records);
  const ToolRun l = FromLocustSummary(summary);
  std::cout << "bench: 200 " << b.Count(200) << ", 429 " << b.Count(429) << ", 503 " << b.Count(503)
            << ", p95 TTFT " << b.ttft_p95_s << " s; locust: 200 " << l.Count(200) << ", 429 "
            << l.Count(429) << ", 503 " << l.Count(503) << ", p95 TTFT " << l.ttft_p95_s << " s\n";
  ASSERT_GT(b.offered, 500);
  EXPECT_EQ(l.offered, b.offered);
  for (const int status : {200, 429, 503}) {
    const std::int64_t bench_count = b.Count(status);
    const std::int64_t locust_count = l.Count(status);
    const double bound = std::max(5.0, 0.10 * static_cast<double>(bench_count));
    EXPECT_LE(std::abs(static_cast<double>(locust_count - bench_count)), bound)
        << "HTTP " << status << ": locust " << locust_count << ", bench " << bench_count;
  }
  EXPECT_GT(b.Count(429), 50) << "the burst must be refused in part";
  EXPECT_NEAR(l.ttft_p95_s, b.ttft_p95_s, 0.10 * b.ttft_p95_s)
      << "p95 TTFT: locust " << l.ttft_p95_s << " s, bench " << b.ttft_p95_s << " s";
  EXPECT_EQ(l.by_status.count(0), 0u) << "locust had requests without an answer";
}

}  // namespace
}  // namespace spillway
