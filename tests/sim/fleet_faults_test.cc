// Endpoint faults in the simulator (a scenario's fleet: section, sim/replica_faults.h): engines
// killed and drained behind the gateway (the routing core the live gateway runs, with its
// probes and retries) and behind the least-loaded oracle. The gateway's ledger is checked after
// every event inside the simulator.

#include <gtest/gtest.h>

#include "config/config_error.h"
#include "sim_fixture.h"

namespace spillway {
namespace {

using simtest::RepoPath;
using simtest::Resolve;

/// A short steady load (10 req/s for 20 s of short chats) for `replicas` engines.
Scenario SteadyFleet(std::int32_t replicas, std::vector<FleetFault> faults) {
  Scenario sc = LoadScenario(RepoPath("scenarios/fleet/seed-burst-x3.yaml"));
  sc.arrival.kind = ArrivalProcess::Kind::kPoisson;
  sc.arrival.rate_rps = 10;
  sc.arrival.duration_s = 20;
  sc.arrival.steps.clear();
  sc.fleet.replicas = replicas;
  sc.fleet.faults = std::move(faults);
  return sc;
}

RunSummary RunFleet(const Scenario& sc, bool gateway) {
  SimOptions opt;
  opt.replicas = sc.fleet.replicas;
  opt.faults = sc.fleet.faults;
  if (gateway) {
    opt.gateway = SimGateway{};
  }
  return Simulate(sc, Resolve(sc, AdmissionPolicy::kPredictive), opt);
}

std::int64_t Rejected(const RunSummary& s, const std::string& reason) {
  const auto it = s.rejected_by_reason.find(reason);
  return it == s.rejected_by_reason.end() ? 0 : it->second;
}

FleetFault Fault(FleetFault::Kind kind, std::int32_t endpoint, Seconds at_s,
                 Seconds until_s = kNever, double factor = 1) {
  return FleetFault{kind, endpoint, at_s, until_s, factor};
}

TEST(FleetFaultsTest, TheOnlyEngineKilledLeavesNoEndpointAfterTheProbe) {
  const Scenario sc = SteadyFleet(1, {Fault(FleetFault::Kind::kKill, 0, 5.2)});
  const RunSummary s = RunFleet(sc, /*gateway=*/true);
  // About 150 of the 200 requests arrive after the kill: until the next probe (0.5 s) they find
  // a refused connection and nothing to retry on (503 upstream_unavailable), then the pool has
  // no endpoint (503 no_endpoint).
  EXPECT_GT(Rejected(s, "no_endpoint"), 120);
  EXPECT_GE(Rejected(s, "upstream_unavailable"), 1);
  EXPECT_LE(Rejected(s, "upstream_unavailable"), 15) << "one probe interval's worth";
  EXPECT_GE(s.failed, 1) << "the requests it was running when it died";
  EXPECT_EQ(s.offered, s.rejected_total + s.dropped_at_queue_head + s.completed + s.failed +
                           s.abandoned_after_admission);
}

TEST(FleetFaultsTest, BehindTheGatewayAKilledEngineCostsOnlyWhatItWasRunning) {
  const RunSummary healthy = RunFleet(SteadyFleet(3, {}), true);
  const RunSummary killed =
      RunFleet(SteadyFleet(3, {Fault(FleetFault::Kind::kKill, 1, 5.2)}), true);
  // Two engines carry 10 req/s with room to spare: the retries and the probe leave nothing
  // refused, and what fails is what engine 1 held at t = 5 s (about mu x TTFT+E2E, a few).
  EXPECT_EQ(killed.rejected_total, healthy.rejected_total);
  EXPECT_GE(killed.failed, 1);
  EXPECT_LE(killed.failed, 10);
  EXPECT_EQ(killed.completed + killed.failed, healthy.completed + healthy.failed);
}

TEST(FleetFaultsTest, ADrainedEngineFinishesWhatItRunsAndTakesNothingNew) {
  const RunSummary drained =
      RunFleet(SteadyFleet(3, {Fault(FleetFault::Kind::kDrain, 2, 5)}), true);
  EXPECT_EQ(drained.failed, 0) << "a drain loses no admitted request";
  EXPECT_EQ(drained.rejected_total, 0) << "503 draining is retried on another engine";
  const RunSummary oracle =
      RunFleet(SteadyFleet(3, {Fault(FleetFault::Kind::kDrain, 2, 5)}), false);
  EXPECT_EQ(oracle.failed, 0);
  EXPECT_EQ(oracle.rejected_total, 0);
}

TEST(FleetFaultsTest, StaleMetricsFailCloseShedWhatFailOpenRoutes) {
  // Every engine's metrics stale for 5 s: fail-close counts them all saturated (429), fail-open
  // routes on the gateway's own counts.
  std::vector<FleetFault> stale;
  for (std::int32_t e = 0; e < 3; ++e) {
    stale.push_back(Fault(FleetFault::Kind::kStaleMetrics, e, 5, 10));
  }
  const Scenario sc = SteadyFleet(3, stale);
  SimOptions opt;
  opt.replicas = 3;
  opt.faults = sc.fleet.faults;
  opt.gateway = SimGateway{};
  opt.gateway->router.staleness = routing::Staleness::kFailClose;
  const RunSummary close = Simulate(sc, Resolve(sc, AdmissionPolicy::kPredictive), opt);
  opt.gateway->router.staleness = routing::Staleness::kFailOpen;
  const RunSummary open = Simulate(sc, Resolve(sc, AdmissionPolicy::kPredictive), opt);
  // About 4 s past the 1 s staleness threshold at 10 req/s: some 40 refused by fail-close.
  EXPECT_GT(Rejected(close, "queue_delay_exceeded"), 25);
  EXPECT_EQ(Rejected(open, "queue_delay_exceeded"), 0);
}

TEST(FleetFaultsTest, ASlowedEngineTakesLongerSteps) {
  const RunSummary normal = RunFleet(SteadyFleet(1, {}), false);
  const RunSummary slow =
      RunFleet(SteadyFleet(1, {Fault(FleetFault::Kind::kSlow, 0, 0, 1000, 1.5)}), false);
  // Per token (E2E also falls with what the slowed engine now refuses: its admission plans
  // decode at the measured pace of its steps, so fewer long requests are admitted).
  EXPECT_GT(slow.tpot_s.p50, normal.tpot_s.p50 * 1.3);
}

TEST(FleetFaultsTest, AFaultOnAReplicaThatDoesNotExistIsAConfigError) {
  const Scenario sc = SteadyFleet(2, {Fault(FleetFault::Kind::kKill, 2, 5)});
  EXPECT_THROW(RunFleet(sc, true), config::ConfigError);
}

TEST(FleetFaultsTest, KillAndDrainIsDeterministicAndSurvives) {
  const Scenario sc = LoadScenario(RepoPath("scenarios/fleet/kill-and-drain.yaml"));
  ASSERT_EQ(sc.fleet.replicas, 3);
  ASSERT_EQ(sc.fleet.router, "gateway");
  ASSERT_EQ(sc.fleet.faults.size(), 2u);
  SimOptions opt;
  opt.replicas = 3;
  opt.faults = sc.fleet.faults;
  opt.gateway = SimGateway{};
  opt.invariant_checks = InvariantChecks::kAmortized;
  const RunSummary a = Simulate(sc, Resolve(sc, AdmissionPolicy::kPredictive), opt);
  const RunSummary b = Simulate(sc, Resolve(sc, AdmissionPolicy::kPredictive), opt);
  EXPECT_EQ(a.completed, b.completed);
  EXPECT_EQ(a.good, b.good);
  ASSERT_EQ(a.phases.size(), 3u);
  // One engine left for the last 30 s of the burst and the recovery: it still serves within
  // its SLOs (measured 21.1 req/s of goodput over the run; bound at three quarters).
  EXPECT_GT(a.goodput_rps, 15.0);
  EXPECT_GT(a.phases[2].goodput_rps, 5.0) << "the recovery at 24 req/s on one engine";
}

}  // namespace
}  // namespace spillway
