// Failure injection 2 (long-prompt burst), live: bench against `spillway serve`
// (live_failure_fixture.h). The simulator's version is tests/sim/failure_long_prompt_test.cc.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "failure/live_failure_fixture.h"

namespace spillway::failure_test {
namespace {

constexpr const char* kScenario = "long-prompt-burst";

/// p99 by nearest rank (as report/percentiles.h), seconds; 0 when empty.
double P99(std::vector<double> v) {
  if (v.empty()) {
    return 0;
  }
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(v.size())));
  return v[std::max<std::size_t>(rank, 1) - 1];
}

class LiveLongPromptTest : public LiveFailureTest {
 protected:
  // The scenario's engine section as serve flags (the tight pool of 550 KV blocks, vLLM's
  // long_prefill_token_threshold of 128, at most 4 preemptions per request), the naive queue as
  // in the simulator's test, and a request deadline of the scenario client's total_timeout_s
  // (20 s) instead of 4.5 s: a 4,000-token prompt preempted and recomputed during the burst
  // takes 3 to 4 s, which the simulator, without that deadline, lets finish.
  std::vector<std::string> ServerArgs() override {
    // The scenario's engine (tight KV pool, long-prefill threshold, preemption cap, deadline).
    std::vector<std::string> args = ScenarioArgs(kScenario);
    args.insert(args.end(), {"--policy", "unbounded", "--client-timeout-s", "25"});
    return args;
  }
};

// Short requests keep their TTFT through the burst, every long prompt completes, nothing is
// preempted past the cap, and recomputation stays a small share of the prefill.
//
// Head-of-line blocking (a request that fits skipped while blocks are free) is checked by the
// simulator's invariant checker after every event; live it shows as the short requests' TTFT
// during the burst: they start beside a long prompt's 128-token chunks instead of behind its
// 4,000 tokens. Measured with the threshold at 0 (no cap), their p99 during the burst was
// 1.6 s against 0.04 s before it.
TEST_F(LiveLongPromptTest, ShortRequestsKeepTheirTtftAndRecomputeStaysSmall) {
  const Scenario sc = Shortened(kScenario, 0.5);  // 10 s per phase: 10 s short, 10 s burst, 10 s
  ASSERT_EQ(sc.arrival.steps.size(), 3u);
  const LiveRun run = Bench(sc);
  const RunSummary& s = run.result.summary;
  EXPECT_EQ(run.result.transport_errors, 0);
  ASSERT_TRUE(run.result.metrics_scraped);
  ASSERT_EQ(s.classes.count("long"), 1u);
  EXPECT_EQ(s.classes.at("long").completed, s.classes.at("long").offered);

  // The baseline is the first phase (the short traffic alone, before any long prompt), the
  // burst the second; both from the records by send time.
  const double burst_start_s = sc.arrival.steps[0].duration_s;
  const double burst_end_s = burst_start_s + sc.arrival.steps[1].duration_s;
  std::vector<double> base_ttft;
  std::vector<double> burst_ttft;
  for (const json::object& r : run.records) {
    if (r.at("class").as_string() != "short" || r.at("ttft_s").is_null()) {
      continue;
    }
    const double sent_s = r.at("sent_s").to_number<double>();
    const double ttft_s = r.at("ttft_s").to_number<double>();
    if (sent_s < burst_start_s) {
      base_ttft.push_back(ttft_s);
    } else if (sent_s < burst_end_s) {
      burst_ttft.push_back(ttft_s);
    }
  }
  ASSERT_GT(base_ttft.size(), 20u);
  ASSERT_GT(burst_ttft.size(), 20u);
  const double base_p99 = P99(base_ttft);
  const double burst_p99 = P99(burst_ttft);
  RecordProperty("short_ttft_p99_base_s", std::to_string(base_p99));  // in --gtest_output=xml
  RecordProperty("short_ttft_p99_burst_s", std::to_string(burst_p99));
  RecordProperty("preemptions", std::to_string(s.preemptions));
  RecordProperty("recomputed_tokens", std::to_string(s.recomputed_tokens));
  RecordProperty("prefill_tokens", std::to_string(s.prefill_tokens));
  // Live: 2x the baseline plus 0.35 s. The baseline p99 is 40 to 60 ms (a step or two), so a
  // single scheduling hiccup of a loaded 2-core machine doubles it; during the burst each step
  // carries a 128-token chunk more, and while a long prompt waits for KV room the shorts that
  // would delay its start wait behind it (EASY backfill, issue 12): the shorts' burst-phase
  // p99 measured 0.18 to 0.27 s live in six runs (0.10 to 0.12 s before the backfill, when
  // they passed it freely for 128 steps and could hold its start back). Blocking behind a long
  // prompt costs more than 1 s, so the check still catches it. (The simulator's test compares
  // whole runs with and without the burst, which dilutes the burst; this compares the burst
  // phase itself with the phase before it.)
  EXPECT_LE(burst_p99, 2 * base_p99 + 0.35)
      << "short p99 TTFT " << burst_p99 << " s during the burst vs " << base_p99 << " s before";

  // Nothing went past the cap silently: a request over it fails with the reason
  // preemption_limit (none here, as in the simulator). The tight pool preempted about 20
  // times before the scheduler reserved a prompt's whole prefill (issue 12, finding 1); a
  // long prompt now starts only when it fits, and preempts rarely if at all.
  EXPECT_LE(s.preemptions, 5);
  for (const json::object& r : run.records) {
    if (r.at("outcome").as_string() == "failed") {
      EXPECT_EQ(r.at("reason").as_string(), "preemption_limit") << json::serialize(r);
    }
  }
  EXPECT_EQ(s.failed, 0);

  // Recomputed prefill tokens (spillway_recomputed_prefill_tokens_total) under 25% of all
  // prefill tokens (vllm:prompt_tokens_total, recomputation included), as the server counts
  // them over the run.
  ASSERT_GT(s.prefill_tokens, 0);
  EXPECT_LT(static_cast<double>(s.recomputed_tokens), 0.25 * static_cast<double>(s.prefill_tokens))
      << s.recomputed_tokens << " recomputed of " << s.prefill_tokens << " prefill tokens";
}

}  // namespace
}  // namespace spillway::failure_test
