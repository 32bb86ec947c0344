// A fleet live and in the simulator: scenarios/fleet/kill-and-drain-short.yaml (the short
// reference burst at three times its rates against three seed-a100-7b engines behind the
// gateway, engine 1 killed 10 s into the burst and engine 2 drained 20 s into it) run by
// `spillway fleet` (three `spillway serve` processes, `spillway gateway`, the load generator,
// the faults as signals) and by `spillway sim` (the same Engine, the same routing::Pool, the
// faults as events). The admitted counts, goodput and the p95 TTFT of served requests must be
// within 15% of each other, and both must lose requests at the kill (the streams the killed
// engine was running) and none at the drain.
//
// Why 15%: the engines, the routing core and the arrivals are shared; what differs is time
// (timer sleeps on a shared 2-core machine, connection set-up, the gateway's scrapes a few ms
// off their virtual schedule, the faults signalled a few ms late) and predictive admission is a
// threshold on measured rates, so decisions near the boundary flip. Measured here (release
// build, two runs): admitted 1.7% and 2.9% apart, goodput 1.0% apart, p95 TTFT 1.5% and 2.2%
// apart; failed at the kill 32 live, 35 simulated. Since the gateway learns its prediction
// margin (admission/prediction_errors.h; the live one from relayed streams, the simulated one from
// first tokens): admitted 2.3%, goodput 1.6%, p95 TTFT 1.3% apart, failed 31 and 35. 15% is the
// issue's bound. Skipped in sanitizer builds.

#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "common/run_command.h"
#include "common/temp_dir.h"

namespace spillway {
namespace {

namespace json = boost::json;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kFleetSanitized = true;
#else
constexpr bool kFleetSanitized = false;
#endif

json::object SummaryOf(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  json::value v = json::parse(text.str());
  if (v.is_object() && v.as_object().contains("runs")) {
    return v.at("runs").as_array().at(0).as_object();
  }
  return v.as_object();
}

double Number(const json::object& o, std::string_view pointer) {
  return json::value(o).at_pointer(pointer).to_number<double>();
}

/// `scenario` (under scenarios/fleet/) run live by `spillway fleet` and by `spillway sim`, both
/// under predictive admission: their summaries, in that order (a failed run fails the test).
std::pair<json::object, json::object> RunLiveAndSimulated(const std::string& scenario) {
  const std::string path = std::string(SPILLWAY_SOURCE_DIR) + "/scenarios/fleet/" + scenario;
  testing_util::TempDir dir;
  const std::string live_json = (dir.path() / "live.json").string();
  const std::string sim_json = (dir.path() / "sim.json").string();
  const testing_util::CommandResult live = testing_util::RunCommand(
      {SPILLWAY_BINARY, "fleet", "--scenario", path, "--policy", "predictive", "--no-progress",
       "--logs", (dir.path() / "logs").string(), "--json", live_json},
      240);
  EXPECT_TRUE(live.exited && live.exit_code == 0) << live.description << "\n" << live.output;
  const testing_util::CommandResult sim = testing_util::RunCommand(
      {SPILLWAY_BINARY, "sim", "--scenario", path, "--policy", "predictive", "--json", sim_json},
      120);
  EXPECT_TRUE(sim.exited && sim.exit_code == 0) << sim.description << "\n" << sim.output;
  if (::testing::Test::HasFailure()) {
    return {};
  }
  return {SummaryOf(live_json), SummaryOf(sim_json)};
}

/// Each of `keys` (JSON pointers) within 15% between the live and the simulated summary.
void ExpectWithin15Percent(const json::object& l, const json::object& s,
                           std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    const double lv = Number(l, key);
    const double sv = Number(s, key);
    ::testing::Test::RecordProperty(std::string("live") + key, std::to_string(lv));
    ::testing::Test::RecordProperty(std::string("sim") + key, std::to_string(sv));
    EXPECT_NEAR(lv, sv, 0.15 * sv)
        << key << "\nlive: " << json::serialize(l) << "\nsim: " << json::serialize(s);
  }
}

TEST(LiveFleetAgreementTest, KillAndDrainAgreesWithTheSimulatorWithin15Percent) {
  if (kFleetSanitized) {
    GTEST_SKIP() << "timing agreement is measured in the release build";
  }
  const auto [l, s] = RunLiveAndSimulated("kill-and-drain-short.yaml");
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(l.at("router").as_string(), "gateway");
  EXPECT_EQ(s.at("router").as_string(), "gateway");
  ExpectWithin15Percent(l, s, {"/admitted", "/goodput_rps", "/ttft_s/p95"});
  EXPECT_GT(Number(l, "/failed"), 0) << "the killed engine's streams";
  EXPECT_GT(Number(s, "/failed"), 0);
  EXPECT_NEAR(Number(l, "/failed"), Number(s, "/failed"), 0.5 * Number(s, "/failed") + 5);
}

// The model cascade live and simulated: scenarios/fleet/seed-burst-cascade-short.yaml, the short
// reference burst against one seed-a100-7b engine with a Llama-3.2-1B fallback engine behind the
// gateway. Measured (release build): live 1,342 good, 29.23 req/s of goodput in the burst (14.35
// by the 7B, 14.88 by the 1B), p95 TTFT 0.763 s; simulated 1,350, 29.43 (14.93, 14.50), 0.754 s.
// Within 15% of each other, each model's good count too, and both absorb the burst: at least
// 90% of its 30 req/s served within the SLOs, nothing refused at the door.
TEST(LiveFleetAgreementTest, TheCascadeAgreesWithTheSimulatorWithin15Percent) {
  if (kFleetSanitized) {
    GTEST_SKIP() << "timing agreement is measured in the release build";
  }
  const auto [l, s] = RunLiveAndSimulated("seed-burst-cascade-short.yaml");
  ASSERT_FALSE(HasFailure());
  ExpectWithin15Percent(l, s,
                        {"/admitted", "/good", "/goodput_rps", "/ttft_s/p95",
                         "/served_model/llama-2-7b/good", "/served_model/llama-3.2-1b/good"});
  for (const json::object* run : {&l, &s}) {
    EXPECT_GT(Number(*run, "/phases/1/goodput_rps"), 0.9 * 30) << "the burst absorbed";
    EXPECT_EQ(Number(*run, "/rejected/total"), 0) << "nothing refused at the door";
  }
}

}  // namespace
}  // namespace spillway
