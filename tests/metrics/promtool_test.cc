// The rendered text passes `promtool check metrics` (Prometheus's own parser and linter) with
// vLLM-style names. The only report allowed is promlint's colon rule for "vllm:" names
// ("<name> metric names should not contain ':'"), which vLLM's own /metrics also triggers.
// Skipped when promtool (Debian package `prometheus`) is not installed.

#include <sys/wait.h>

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "metrics/buckets.h"
#include "metrics/metrics.h"

namespace spillway::metrics {
namespace {

constexpr std::string_view kColonLint = " metric names should not contain ':'";

bool HavePromtool() { return std::system("command -v promtool >/dev/null 2>&1") == 0; }

// Runs `command` through the shell; returns its combined output and sets `*exit_code`.
std::string RunShell(const std::string& command, int* exit_code) {
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    *exit_code = -1;
    return output;
  }
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof(buf), pipe)) > 0;) {
    output.append(buf, n);
  }
  const int status = pclose(pipe);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return output;
}

void FillVllmStyleRegistry(Registry& registry) {
  Family<Gauge>& running =
      registry.AddGauge("vllm:num_requests_running",
                        "Number of requests in model execution batches.", {"model_name"});
  running.With({"org/model-7b"}).Set(32);
  registry
      .AddGauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.",
                {"model_name"})
      .With({"org/model-7b"})
      .Set(45);
  registry.AddGauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.")
      .Get()
      .Set(0.88);
  registry.AddCounter("vllm:num_preemptions_total", "Cumulative number of preemptions.").Get();
  Family<Counter>& success =
      registry.AddCounter("vllm:request_success_total", "Count of successfully processed requests.",
                          {"model_name", "finished_reason"});
  success.With({"org/model-7b", "stop"}).Inc(120);
  success.With({"org/model-7b", "length"}).Inc(7);
  Family<Histogram>& ttft = registry.AddHistogram("vllm:time_to_first_token_seconds",
                                                  "Histogram of time to first token in seconds.",
                                                  LatencyBucketsSeconds(), {"model_name"});
  for (const double v : {0.0004, 0.03, 0.2, 1.7, 3000.0}) {
    ttft.With({"org/model-7b"}).Observe(v);
  }
  Family<Counter>& rejected = registry.AddCounter(
      "spillway_rejected_total", "Requests rejected by admission, by status and reason.",
      {"status", "reason"});
  rejected.With({"429", "rate_limited"}).Inc(3);
  rejected.With({"503", "odd \"value\" with \\ and\nnewline"}).Inc();
  registry
      .AddHistogram("spillway_queue_delay_seconds", "Queue delay \\ with \"quotes\".\nMore.",
                    ExponentialBuckets(0.001, 2, 12))
      .Get()
      .Observe(0.0123);
  registry.AddGauge("spillway_tenant_tokens", "Tokens left per tenant (no tenant yet).",
                    {"tenant"});
}

TEST(PromtoolTest, CheckMetricsReportsOnlyTheColonLint) {
  if (!HavePromtool()) {
    GTEST_SKIP() << "promtool not installed (Debian package `prometheus`)";
  }
  Registry registry;
  FillVllmStyleRegistry(registry);
  const std::string path =
      testing::TempDir() + "spillway_metrics_promtool_" + std::to_string(getpid()) + ".txt";
  std::ofstream(path) << registry.Render();

  int exit_code = 0;
  const std::string output = RunShell("promtool check metrics < '" + path + "' 2>&1", &exit_code);
  std::remove(path.c_str());

  std::set<std::string> flagged;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    const bool colon_lint = line.starts_with("vllm:") && line.ends_with(kColonLint);
    EXPECT_TRUE(colon_lint) << "unexpected promtool output: " << line;
    if (colon_lint) {
      flagged.insert(line.substr(0, line.size() - kColonLint.size()));
    }
  }
  // promtool exits 3 when it reports lint problems, 0 when there are none.
  EXPECT_EQ(exit_code, flagged.empty() ? 0 : 3) << output;
  for (const std::string& name : flagged) {
    EXPECT_NE(name.find(':'), std::string::npos) << name;
  }
}

}  // namespace
}  // namespace spillway::metrics
