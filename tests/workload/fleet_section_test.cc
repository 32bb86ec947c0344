// A scenario's fleet: section (workload/fleet.h): replicas, router, scrape settings and endpoint
// faults, with load errors naming the file, line and field.

#include <string>

#include <gtest/gtest.h>

#include "workload/scenario.h"
#include "workload/workload_test_util.h"

namespace spillway {
namespace {

using workload_test::LoadError;

constexpr char kBase[] = R"(name: fleet
arrival: {process: poisson, rate: 10, duration_s: 10}
classes:
  - {name: chat, share: 1, prompt_tokens: 10, output_tokens: 10}
)";

std::string WithFleet(const std::string& fleet) { return std::string(kBase) + fleet; }

TEST(FleetSectionTest, ReadsReplicasRouterAndFaults) {
  const Scenario sc = LoadScenarioFromString(WithFleet(R"(fleet:
  replicas: 3
  router: llm-d
  scrape_interval_s: 0.05
  staleness: fail-close
  stale_after_s: 2
  faults:
    - {fault: kill, endpoint: 1, at_s: 45}
    - {fault: drain, endpoint: 2, at_s: 60}
    - {fault: stale_metrics, endpoint: 0, at_s: 40, until_s: 50}
    - {fault: slow, endpoint: 0, at_s: 40, until_s: 50, factor: 2}
)"),
                                             "test.yaml", ".");
  EXPECT_EQ(sc.fleet.replicas, 3);
  EXPECT_EQ(sc.fleet.router, "llm-d");
  EXPECT_EQ(sc.fleet.scrape_interval_s, 0.05);
  EXPECT_EQ(sc.fleet.staleness, "fail-close");
  ASSERT_EQ(sc.fleet.faults.size(), 4u);
  EXPECT_EQ(sc.fleet.faults[0].kind, FleetFault::Kind::kKill);
  EXPECT_EQ(sc.fleet.faults[0].endpoint, 1);
  EXPECT_EQ(sc.fleet.faults[1].kind, FleetFault::Kind::kDrain);
  EXPECT_EQ(sc.fleet.faults[2].kind, FleetFault::Kind::kStaleMetrics);
  EXPECT_TRUE(sc.fleet.faults[2].ActiveAt(40));
  EXPECT_FALSE(sc.fleet.faults[2].ActiveAt(50));
  EXPECT_EQ(sc.fleet.faults[3].factor, 2);
}

TEST(FleetSectionTest, ReadsPoolsAndTheirFallbacks) {
  const Scenario sc = LoadScenarioFromString(WithFleet(R"(fleet:
  pools:
    - {model: big, replicas: 2, fallbacks: [small]}
    - {model: small, profile: a100-llama3.2-1b}
  faults:
    - {fault: kill, endpoint: 2, at_s: 5}
)"),
                                             "test.yaml", ".");
  ASSERT_EQ(sc.fleet.pools.size(), 2u);
  EXPECT_EQ(sc.fleet.pools[0].model, "big");
  EXPECT_EQ(sc.fleet.pools[0].replicas, 2);
  EXPECT_EQ(sc.fleet.pools[0].fallbacks, std::vector<std::string>{"small"});
  EXPECT_TRUE(sc.fleet.pools[0].profile.empty()) << "the scenario's engine";
  EXPECT_EQ(sc.fleet.pools[1].replicas, 1);
  EXPECT_EQ(sc.fleet.pools[1].profile, "a100-llama3.2-1b");
  EXPECT_EQ(sc.fleet.replicas, 3) << "the pools' sum";
}

TEST(FleetSectionTest, BadPoolsNameTheLineAndField) {
  EXPECT_NE(LoadError(WithFleet("fleet:\n  replicas: 2\n  pools: [{model: a}]\n"))
                .find("fleet.replicas: is given per pool"),
            std::string::npos);
  EXPECT_NE(LoadError(WithFleet("fleet:\n  pools: [{model: a}, {model: a}]\n"))
                .find("fleet.pools[1].model"),
            std::string::npos);
  EXPECT_NE(LoadError(WithFleet("fleet:\n  pools: [{model: a, fallbacks: [b]}]\n"))
                .find("fleet.pools[0].fallbacks: must name the models of other pools"),
            std::string::npos);
  EXPECT_NE(LoadError(WithFleet("fleet:\n  pools: [{model: a, fallbacks: [a]}]\n")).find("got 'a'"),
            std::string::npos);
  EXPECT_NE(LoadError(WithFleet("fleet:\n  pools: []\n")).find("at least one pool"),
            std::string::npos);
  EXPECT_NE(LoadError(WithFleet("fleet:\n  pools: [{model: a, replicas: 0}]\n"))
                .find("fleet.pools[0].replicas"),
            std::string::npos);
}

TEST(FleetSectionTest, ReadsAPoolsClampAndTheCascadeOrder) {
  const Scenario sc = LoadScenarioFromString(WithFleet(R"(fleet:
  cascade_order: [primary, fallback, clamp, reject]
  pools:
    - {model: big, fallbacks: [small], degrade_max_tokens: 32, degrade_ttft_fraction: 0.25}
    - {model: small}
)"),
                                             "test.yaml", ".");
  EXPECT_EQ(sc.fleet.cascade_order,
            (std::vector<std::string>{"primary", "fallback", "clamp", "reject"}));
  EXPECT_EQ(sc.fleet.pools[0].degrade_max_tokens, 32);
  EXPECT_EQ(sc.fleet.pools[0].degrade_ttft_fraction, 0.25);
  EXPECT_EQ(sc.fleet.pools[1].degrade_max_tokens, 0) << "no clamp unless given";
  EXPECT_TRUE(LoadScenarioFromString(WithFleet("fleet:\n  replicas: 1\n"), "t.yaml", ".")
                  .fleet.cascade_order.empty())
      << "the default order";

  const std::string pools = "  pools: [{model: a}]\n";
  EXPECT_NE(LoadError(WithFleet("fleet:\n  cascade_order: [primary, lru]\n" + pools))
                .find("fleet.cascade_order[1]"),
            std::string::npos);
  for (const char* order : {"[clamp, primary]", "[fallback, primary]", "[primary, clamp, clamp]",
                            "[primary, reject, clamp]", "[cache]"}) {
    EXPECT_NE(LoadError(WithFleet(std::string("fleet:\n  cascade_order: ") + order + "\n" + pools))
                  .find("fleet.cascade_order: must name primary"),
              std::string::npos)
        << order;
  }
  EXPECT_NE(LoadError(WithFleet("fleet:\n  pools: [{model: a, degrade_ttft_fraction: 1.5}]\n"))
                .find("fleet.pools[0].degrade_ttft_fraction: must be in (0, 1]"),
            std::string::npos);
  EXPECT_NE(LoadError(WithFleet("fleet:\n  pools: [{model: a, degrade_max_tokens: -1}]\n"))
                .find("fleet.pools[0].degrade_max_tokens"),
            std::string::npos);
}

TEST(FleetSectionTest, ReadsTheGatewaysCache) {
  const Scenario sc = LoadScenarioFromString(
      WithFleet("fleet:\n  replicas: 1\n  cache: {max_entries: 100, ttl_s: 30}\n"), "t.yaml", ".");
  EXPECT_EQ(sc.fleet.cache_max_entries, 100);
  EXPECT_EQ(sc.fleet.cache_ttl_s, 30);
  EXPECT_NE(
      LoadError(WithFleet("fleet:\n  cache: {max_entries: -1}\n")).find("fleet.cache.max_entries"),
      std::string::npos);
  EXPECT_NE(LoadError(WithFleet("fleet:\n  cache: {entries: 1}\n")).find("fleet.cache"),
            std::string::npos);
}

TEST(FleetSectionTest, AScenarioWithoutAFleetHasAnEmptyOne) {
  const Scenario sc = LoadScenarioFromString(kBase, "test.yaml", ".");
  EXPECT_EQ(sc.fleet.replicas, 0);
  EXPECT_TRUE(sc.fleet.router.empty());
  EXPECT_TRUE(sc.fleet.faults.empty());
}

TEST(FleetSectionTest, BadFleetsNameTheLineAndField) {
  EXPECT_EQ(LoadError(WithFleet("fleet:\n  router: nginx\n")),
            "test.yaml:6: fleet.router: must be one of: least-loaded, gateway, round-robin, "
            "least-requests, llm-d, got 'nginx'");
  EXPECT_NE(LoadError(WithFleet("fleet:\n  replicas: 2\n  faults:\n"
                                "    - {fault: kill, endpoint: 2, at_s: 1}\n"))
                .find("fleet.faults[0].endpoint"),
            std::string::npos);
  EXPECT_NE(LoadError(WithFleet("fleet:\n  faults:\n    - {fault: slow, endpoint: 0, at_s: 1}\n"))
                .find("until_s"),
            std::string::npos);
  EXPECT_NE(LoadError(WithFleet("fleet:\n  faults:\n"
                                "    - {fault: stale_metrics, endpoint: 0, at_s: 5, until_s: 4}\n"))
                .find("must be after at_s"),
            std::string::npos);
  EXPECT_NE(LoadError(WithFleet("fleet:\n  faults:\n    - {fault: kill, endpoint: 0, at_s: 1, "
                                "factor: 2}\n"))
                .find("applies to slow only"),
            std::string::npos);
  EXPECT_NE(LoadError(WithFleet("fleet:\n  faults:\n    - {fault: reboot, endpoint: 0, at_s: 1}\n"))
                .find("fault"),
            std::string::npos);
  EXPECT_NE(LoadError(WithFleet("fleet:\n  replica: 2\n")).find("replica"), std::string::npos);
}

}  // namespace
}  // namespace spillway
