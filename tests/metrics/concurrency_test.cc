// Lock-free updates from several threads lose nothing: 4 threads x 100,000 updates give the
// exact total; concurrent With() calls for the same labels share one child.

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "metrics/metrics.h"

namespace spillway::metrics {
namespace {

constexpr int kThreads = 4;
constexpr int kPerThread = 100'000;
constexpr std::uint64_t kTotal = std::uint64_t{kThreads} * kPerThread;

template <typename Fn>
void RunOnThreads(Fn fn) {
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back(fn, t);
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
}

TEST(ConcurrencyTest, CounterIncrementsGiveExactTotal) {
  Registry registry;
  Counter& counter = registry.AddCounter("c_total", "h").Get();
  RunOnThreads([&](int /*t*/) {
    for (int i = 0; i < kPerThread; ++i) {
      counter.Inc();
    }
  });
  EXPECT_EQ(counter.value(), static_cast<double>(kTotal));
  EXPECT_EQ(registry.Render(), "# HELP c_total h\n# TYPE c_total counter\nc_total 400000\n");
}

TEST(ConcurrencyTest, GaugeIncAndDecCancel) {
  Registry registry;
  Gauge& gauge = registry.AddGauge("g", "h").Get();
  RunOnThreads([&](int t) {
    for (int i = 0; i < kPerThread; ++i) {
      t % 2 == 0 ? gauge.Inc(2) : gauge.Dec(2);
    }
  });
  EXPECT_EQ(gauge.value(), 0.0);
}

TEST(ConcurrencyTest, HistogramObservationsGiveExactCountsAndSum) {
  Registry registry;
  Histogram& histogram = registry.AddHistogram("h_seconds", "h", {1, 2}).Get();
  RunOnThreads([&](int t) {
    for (int i = 0; i < kPerThread; ++i) {
      histogram.Observe(t % 2 == 0 ? 0.5 : 1.5);  // exact in binary, so the sum is exact
    }
  });
  EXPECT_EQ(histogram.count(), kTotal);
  EXPECT_EQ(histogram.sum(), 0.5 * (kTotal / 2) + 1.5 * (kTotal / 2));
  EXPECT_EQ(histogram.CumulativeCounts(), (std::vector<std::uint64_t>{kTotal / 2, kTotal, kTotal}));
  const std::string text = registry.Render();
  EXPECT_NE(text.find("h_seconds_bucket{le=\"+Inf\"} 400000\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h_seconds_count 400000\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h_seconds_sum 400000\n"), std::string::npos) << text;
}

TEST(ConcurrencyTest, ConcurrentWithSharesChildrenWhileRendering) {
  Registry registry;
  Family<Counter>& family = registry.AddCounter("c_total", "h", {"k"});
  constexpr int kKeys = 50;
  std::vector<std::vector<Counter*>> seen(kThreads, std::vector<Counter*>(kKeys));
  std::thread renderer([&] {
    for (int i = 0; i < 50; ++i) {
      EXPECT_FALSE(registry.Render().empty());
    }
  });
  RunOnThreads([&](int t) {
    for (int i = 0; i < kPerThread / 10; ++i) {
      Counter& c = family.With({std::to_string(i % kKeys)});
      c.Inc();
      seen[t][i % kKeys] = &c;
    }
  });
  renderer.join();
  for (int k = 0; k < kKeys; ++k) {
    Counter& c = family.With({std::to_string(k)});
    for (int t = 0; t < kThreads; ++t) {
      EXPECT_EQ(seen[t][k], &c);
    }
    EXPECT_EQ(c.value(), kThreads * (kPerThread / 10 / kKeys));
  }
}

}  // namespace
}  // namespace spillway::metrics
