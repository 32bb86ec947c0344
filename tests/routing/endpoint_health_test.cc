#include "routing/endpoint_health.h"

#include <gtest/gtest.h>

namespace spillway::routing {
namespace {

HealthConfig Ejecting() {
  HealthConfig c;
  c.eject_after_errors = 3;
  c.eject_base_s = 1;
  c.max_ejected_fraction = 0.5;
  return c;
}

TEST(PoolHealthTest, ProbesSetDrainingAndDown) {
  PoolHealth h(2, Ejecting());
  EXPECT_EQ(h.HealthAt(0, 0), EndpointHealth::kHealthy) << "optimistic before any probe";
  h.OnProbe(0, ProbeResult::kNotReady);
  EXPECT_EQ(h.HealthAt(0, 0), EndpointHealth::kDraining);
  h.OnProbe(0, ProbeResult::kUnreachable);
  EXPECT_EQ(h.HealthAt(0, 0), EndpointHealth::kDown);
  h.OnProbe(0, ProbeResult::kReady);
  EXPECT_EQ(h.HealthAt(0, 0), EndpointHealth::kHealthy);
  h.OnDraining(1);
  EXPECT_EQ(h.HealthAt(1, 0), EndpointHealth::kDraining) << "a 503 draining reply";
  h.OnProbe(1, ProbeResult::kReady);
  EXPECT_EQ(h.HealthAt(1, 0), EndpointHealth::kHealthy) << "ready again after a restart";
}

TEST(PoolHealthTest, ConsecutiveErrorsEjectWithDoublingTime) {
  PoolHealth h(4, Ejecting());
  h.OnError(0, 10);
  h.OnError(0, 10);
  h.OnSuccess(0);  // a success (or a refusal) resets the count
  h.OnError(0, 10);
  h.OnError(0, 10);
  EXPECT_EQ(h.HealthAt(0, 10), EndpointHealth::kHealthy);
  h.OnError(0, 10);
  EXPECT_EQ(h.HealthAt(0, 10), EndpointHealth::kEjected);
  EXPECT_EQ(h.HealthAt(0, 10.99), EndpointHealth::kEjected);
  EXPECT_EQ(h.HealthAt(0, 11.0), EndpointHealth::kHealthy) << "1 s the first time";
  for (int i = 0; i < 3; ++i) {
    h.OnError(0, 12);
  }
  EXPECT_EQ(h.HealthAt(0, 13.5), EndpointHealth::kEjected) << "2 s the second time";
  EXPECT_EQ(h.HealthAt(0, 14.0), EndpointHealth::kHealthy);
  EXPECT_EQ(h.ejections(0), 2);
}

TEST(PoolHealthTest, AtMostTheFractionIsEjectedButAlwaysOne) {
  PoolHealth h(4, Ejecting());  // half of 4: two may be out at once
  for (std::size_t e = 0; e < 4; ++e) {
    for (int i = 0; i < 3; ++i) {
      h.OnError(e, 0);
    }
  }
  int ejected = 0;
  for (std::size_t e = 0; e < 4; ++e) {
    ejected += h.HealthAt(e, 0) == EndpointHealth::kEjected ? 1 : 0;
  }
  EXPECT_EQ(ejected, 2);

  PoolHealth one(1, Ejecting());  // floor(0.5 * 1) = 0, but one may always go
  for (int i = 0; i < 3; ++i) {
    one.OnError(0, 0);
  }
  EXPECT_EQ(one.HealthAt(0, 0), EndpointHealth::kEjected);
}

TEST(ProbeResultTest, OnlyTwoHundredsAreReady) {
  EXPECT_EQ(ProbeResultOf(200), ProbeResult::kReady);
  EXPECT_EQ(ProbeResultOf(204), ProbeResult::kReady);
  EXPECT_EQ(ProbeResultOf(503), ProbeResult::kNotReady);  // draining
  EXPECT_EQ(ProbeResultOf(500), ProbeResult::kNotReady);  // vLLM's engine died
  EXPECT_EQ(ProbeResultOf(502), ProbeResult::kNotReady);
  EXPECT_EQ(ProbeResultOf(0), ProbeResult::kUnreachable);
  EXPECT_EQ(ProbeResultOf(404), ProbeResult::kNotReady);  // a wrong URL or base path
  EXPECT_EQ(ProbeResultOf(401), ProbeResult::kNotReady);
  EXPECT_EQ(ProbeResultOf(301), ProbeResult::kNotReady);
}

}  // namespace
}  // namespace spillway::routing
