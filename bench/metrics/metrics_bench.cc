// Spillway's metrics registry (src/metrics/) against the Prometheus C++ client (Debian's
// prometheus-cpp 1.0, its core library) on what `serve` and the gateway do per request and per
// scrape: a labelled counter looked up by its label values and incremented (the replies by
// status and reason), a counter held by reference, a histogram observation (TTFT), and the
// text exposition of a registry the size of the gateway's (30 families, 300 series, 3
// histograms). The question it answers: would moving onto prometheus-cpp cost the hot path?
//
//   make bench-metrics     (or build/spillway_metrics_bench [--benchmark_filter=...])
//
// Built only where prometheus-cpp-dev is installed (scripts/deps.sh bench).

#include <benchmark/benchmark.h>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <memory>
#include <string>
#include <vector>

#include "metrics/metrics.h"

namespace {

const std::vector<double> kTtftBounds = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                         0.75,  1.0,  2.5,   5.0,  7.5, 10.0};
const std::vector<std::string> kStatuses = {"200", "429", "503", "504"};
const std::vector<std::string> kReasons = {"ok", "queue_delay_exceeded", "rate_limited",
                                           "no_endpoint"};

// --- A labelled counter looked up per request ---------------------------------------------------

void BM_Spillway_LabelledCounterLookup(benchmark::State& state) {
  spillway::metrics::Registry registry;
  auto& family = registry.AddCounter("spillway_gateway_requests_total", "Replies.",
                                     {"model", "status", "reason", "by"});
  std::size_t i = 0;
  for (auto _ : state) {
    const std::string& status = kStatuses[i % 4];
    const std::string& reason = kReasons[i % 4];
    family.With({"llama-2-7b", status, reason, "gateway"}).Inc();
    ++i;
  }
}
BENCHMARK(BM_Spillway_LabelledCounterLookup);

void BM_PrometheusCpp_LabelledCounterLookup(benchmark::State& state) {
  prometheus::Registry registry;
  auto& family = prometheus::BuildCounter()
                     .Name("spillway_gateway_requests_total")
                     .Help("Replies.")
                     .Register(registry);
  std::size_t i = 0;
  for (auto _ : state) {
    const std::string& status = kStatuses[i % 4];
    const std::string& reason = kReasons[i % 4];
    family.Add({{"model", "llama-2-7b"}, {"status", status}, {"reason", reason}, {"by", "gateway"}})
        .Increment();
    ++i;
  }
}
BENCHMARK(BM_PrometheusCpp_LabelledCounterLookup);

// --- A counter held by reference, from one and two threads --------------------------------------

void BM_Spillway_HeldCounter(benchmark::State& state) {
  static spillway::metrics::Registry registry;
  static spillway::metrics::Counter& counter =
      registry.AddCounter("spillway_received_total", "Received.").Get();
  for (auto _ : state) {
    counter.Inc();
  }
}
BENCHMARK(BM_Spillway_HeldCounter)->Threads(1)->Threads(2);

void BM_PrometheusCpp_HeldCounter(benchmark::State& state) {
  static prometheus::Registry registry;
  static prometheus::Counter& counter = prometheus::BuildCounter()
                                            .Name("spillway_received_total")
                                            .Help("Received.")
                                            .Register(registry)
                                            .Add({});
  for (auto _ : state) {
    counter.Increment();
  }
}
BENCHMARK(BM_PrometheusCpp_HeldCounter)->Threads(1)->Threads(2);

// --- A histogram observation --------------------------------------------------------------------

void BM_Spillway_HistogramObserve(benchmark::State& state) {
  spillway::metrics::Registry registry;
  auto& h = registry.AddHistogram("spillway_ttft_seconds", "TTFT.", kTtftBounds).Get();
  double v = 0;
  for (auto _ : state) {
    h.Observe(v);
    v = v > 10 ? 0 : v + 0.037;
  }
}
BENCHMARK(BM_Spillway_HistogramObserve);

void BM_PrometheusCpp_HistogramObserve(benchmark::State& state) {
  prometheus::Registry registry;
  auto& h = prometheus::BuildHistogram()
                .Name("spillway_ttft_seconds")
                .Help("TTFT.")
                .Register(registry)
                .Add({}, kTtftBounds);
  double v = 0;
  for (auto _ : state) {
    h.Observe(v);
    v = v > 10 ? 0 : v + 0.037;
  }
}
BENCHMARK(BM_PrometheusCpp_HistogramObserve);

// --- The exposition of a gateway-sized registry -------------------------------------------------

/// 27 counter families of 10 series and 3 histograms of 1 series each, filled.
void FillSpillway(spillway::metrics::Registry& r) {
  for (int f = 0; f < 27; ++f) {
    auto& family = r.AddCounter("spillway_family_" + std::to_string(f) + "_total", "A family.",
                                {"model", "endpoint"});
    for (int s = 0; s < 10; ++s) {
      family.With({"llama-2-7b", "http://10.0.0." + std::to_string(s) + ":8000"}).Inc(s + f);
    }
  }
  for (int f = 0; f < 3; ++f) {
    auto& h = r.AddHistogram("spillway_hist_" + std::to_string(f) + "_seconds", "A histogram.",
                             kTtftBounds)
                  .Get();
    for (int k = 0; k < 100; ++k) {
      h.Observe(k * 0.05);
    }
  }
}

void FillPrometheusCpp(prometheus::Registry& r) {
  for (int f = 0; f < 27; ++f) {
    auto& family = prometheus::BuildCounter()
                       .Name("spillway_family_" + std::to_string(f) + "_total")
                       .Help("A family.")
                       .Register(r);
    for (int s = 0; s < 10; ++s) {
      family
          .Add({{"model", "llama-2-7b"},
                {"endpoint", "http://10.0.0." + std::to_string(s) + ":8000"}})
          .Increment(s + f);
    }
  }
  for (int f = 0; f < 3; ++f) {
    auto& h = prometheus::BuildHistogram()
                  .Name("spillway_hist_" + std::to_string(f) + "_seconds")
                  .Help("A histogram.")
                  .Register(r)
                  .Add({}, kTtftBounds);
    for (int k = 0; k < 100; ++k) {
      h.Observe(k * 0.05);
    }
  }
}

void BM_Spillway_Render(benchmark::State& state) {
  spillway::metrics::Registry registry;
  FillSpillway(registry);
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string text = registry.Render();
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_Spillway_Render);

void BM_PrometheusCpp_Render(benchmark::State& state) {
  prometheus::Registry registry;
  FillPrometheusCpp(registry);
  const prometheus::TextSerializer serializer;
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string text = serializer.Serialize(registry.Collect());
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_PrometheusCpp_Render);

}  // namespace

BENCHMARK_MAIN();
