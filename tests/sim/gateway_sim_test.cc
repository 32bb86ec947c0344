// The simulator with a gateway in front of three replicas (SimOptions::gateway): the reference
// burst at three times its rate (scenarios/fleet/seed-burst-x3.yaml). The gateway's ledger is
// checked after every event inside the simulator (a broken one throws SimInvariantError).

#include <gtest/gtest.h>

#include "report/summary_json.h"
#include "sim_fixture.h"

namespace spillway {
namespace {

using simtest::RepoPath;
using simtest::Resolve;

constexpr std::size_t kBurst = 1;  // steps: 24 req/s, 90 req/s (the burst), 24 req/s

class GatewaySimTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scenario_ = new Scenario(LoadScenario(RepoPath("scenarios/fleet/seed-burst-x3.yaml")));
  }
  static void TearDownTestSuite() { delete scenario_; }

  /// Three replicas under `admission`, behind `router` (nullopt: least-loaded, no gateway).
  static RunSummary Run(AdmissionPolicy admission, std::optional<routing::RouterPolicy> router) {
    SimOptions opt;
    opt.replicas = 3;
    opt.invariant_checks = InvariantChecks::kAmortized;
    if (router.has_value()) {
      opt.gateway = SimGateway{};
      opt.gateway->router.policy = *router;
    }
    return Simulate(*scenario_, Resolve(*scenario_, admission), opt);
  }

  static Scenario* scenario_;
};

Scenario* GatewaySimTest::scenario_ = nullptr;

TEST_F(GatewaySimTest, EveryRouterAccountsForEveryAttempt) {
  for (const routing::RouterPolicy router :
       {routing::RouterPolicy::kGateway, routing::RouterPolicy::kRoundRobin,
        routing::RouterPolicy::kLeastRequests, routing::RouterPolicy::kLlmd}) {
    SCOPED_TRACE(routing::ToString(router));
    const RunSummary s = Run(AdmissionPolicy::kPredictive, router);
    EXPECT_EQ(s.offered, s.rejected_total + s.dropped_at_queue_head + s.completed + s.failed +
                             s.abandoned_after_admission);
    EXPECT_GT(s.completed, 0);
  }
}

// The first stage alone: engines that admit everything (unbounded) collapse behind any balancer
// (measured: burst goodput 1.23 req/s behind round-robin), while the gateway sheds what no
// replica can serve within the TTFT SLO (measured: 26.2 req/s). Bounds at half and twice those.
TEST_F(GatewaySimTest, TheGatewayAloneKeepsGoodputWhereABalancerCollapses) {
  const RunSummary gateway = Run(AdmissionPolicy::kUnbounded, routing::RouterPolicy::kGateway);
  const RunSummary balancer = Run(AdmissionPolicy::kUnbounded, routing::RouterPolicy::kRoundRobin);
  ASSERT_EQ(gateway.phases.size(), 3u);
  EXPECT_GT(gateway.phases[kBurst].goodput_rps, 13.0);
  EXPECT_LT(balancer.phases[kBurst].goodput_rps, 2.5);
  EXPECT_GT(gateway.rejected_total, 0) << "the gateway shed";
  EXPECT_EQ(balancer.rejected_total, 0) << "nothing sheds in front of unbounded engines";
}

TEST_F(GatewaySimTest, TheSameSeedGivesTheSameSummary) {
  EXPECT_EQ(SummaryToJson(Run(AdmissionPolicy::kPredictive, routing::RouterPolicy::kGateway)),
            SummaryToJson(Run(AdmissionPolicy::kPredictive, routing::RouterPolicy::kGateway)));
}

}  // namespace
}  // namespace spillway
