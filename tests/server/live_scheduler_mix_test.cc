// Issue 12, the scheduler under adversarial mixes, live: each test starts `spillway serve` (the
// emulated engine) with the flags of one finding and sends the mix that exposed it. The
// simulator's versions drive the same Engine in virtual time (tests/engine/).

#include <algorithm>
#include <chrono>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/http_client.h"
#include "common/server_fixture.h"

namespace spillway {
namespace {

using server_test::CompletionBody;
using server_test::HttpResponse;

/// Sends `body` to /v1/completions from `clients` threads released together; the answers in
/// order.
std::vector<HttpResponse> Burst(const server_test::HttpClient& client, int clients,
                                const std::string& body, double timeout_s) {
  std::vector<HttpResponse> responses(static_cast<std::size_t>(clients));
  std::latch go(clients);
  std::vector<std::jthread> threads;
  for (int i = 0; i < clients; ++i) {
    threads.emplace_back([&, i] {
      go.arrive_and_wait();
      responses[static_cast<std::size_t>(i)] = client.Post("/v1/completions", body, {}, timeout_s);
    });
  }
  threads.clear();  // joins
  return responses;
}

// Finding 7: four batch slots and a queue of ten; a burst of twenty landing within a step.
class LiveTailDropTest : public server_test::ServerFixture {
 protected:
  std::vector<std::string> ServerArgs() override {
    return {"--policy",
            "tail-drop",
            "--max-num-seqs",
            "4",
            "--max-num-queued-reqs",
            "10",
            "--request-timeout-s",
            "20",
            "--client-timeout-s",
            "21"};
  }
};

TEST_F(LiveTailDropTest, ABurstFillsTheFreeSlotsBeforeTheQueueCounts) {
  // 60 output tokens: a batch of four takes about a second, so none finishes before the burst
  // has been decided. Before the fix 11 or 12 were admitted (the four that start at the next
  // step counted against the queue of ten).
  const std::vector<HttpResponse> responses =
      Burst(client(), 20, R"({"prompt":[1,2,3,4,5,6,7,8],"max_tokens":60})", 30);
  int ok = 0;
  int queue_full = 0;
  for (const HttpResponse& r : responses) {
    ok += r.status == 200;
    if (r.status == 503) {
      EXPECT_EQ(r.Header("X-Overload-Reason").value_or(""), "queue_full") << r.body;
      ++queue_full;
    }
  }
  EXPECT_EQ(ok, 14);
  EXPECT_EQ(queue_full, 6);
}

// Finding 5: a fresh server on the h100-llama3-8b profile and a burst of 100 requests of 200
// prompt tokens, all of which it serves within the SLO (tests/engine/cold_start_test.cc; 120
// before the profile's fit to public runs, and a 520-sequence batch). Under predictive, whose
// cold-start priors the finding was about: the forecast plans a burst that lands before the
// first step at the model's pace, and under AddressSanitizer (steps slower than modelled,
// forecasts slower still) it served 93 of 120.
class LiveColdStartTest : public server_test::ServerFixture {
 protected:
  std::vector<std::string> ServerArgs() override {
    return {"--policy", "predictive", "--profile", "h100-llama3-8b"};
  }
};

TEST_F(LiveColdStartTest, AFreshServerServesABurstItCanServe) {
  // Before the fix 10 or so were admitted (429 queue_delay_exceeded: "estimated queue delay
  // 0.97 s + prefill 0.097 s" from a full batch's prefill rate).
  const std::vector<HttpResponse> responses = Burst(client(), 100, CompletionBody(200, 16), 30);
  int ok = 0;
  for (const HttpResponse& r : responses) {
    ok += r.status == 200;
    EXPECT_TRUE(r.status == 200 || r.status == 429) << r.status << " " << r.body;
  }
  RecordProperty("served", ok);
  // Measured: 97 to 99, idle and beside two busy cores (the simulator admits 88).
  EXPECT_GE(ok, 80);
}

// Finding 3: four batch slots by count, priority scheduling; four class-10 requests decoding
// 200 tokens each fill the batch, then a class-0 request arrives.
class LivePriorityInversionTest : public server_test::ServerFixture {
 protected:
  std::vector<std::string> ServerArgs() override {
    return {"--scheduling", "priority", "--max-num-seqs", "4"};
  }
};

TEST_F(LivePriorityInversionTest, AnUrgentRequestIsServedBesideAFullBatchOfLessUrgentOnes) {
  std::vector<HttpResponse> streams(4);
  std::vector<std::jthread> threads;
  for (std::size_t i = 0; i < streams.size(); ++i) {
    threads.emplace_back([&, i] {
      streams[i] = client().Post("/v1/completions", CompletionBody(16, 200),
                                 {{"X-Priority-Class", "10"}}, 30);
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the four are decoding
  const auto start = std::chrono::steady_clock::now();
  const HttpResponse urgent =
      client().Post("/v1/completions", CompletionBody(16, 16), {{"X-Priority-Class", "0"}}, 30);
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  threads.clear();
  RecordProperty("urgent_elapsed_s", std::to_string(elapsed_s));
  // Before the fix: 429 queue_deadline_exceeded after about 1 s, without a token. Now one
  // stream is preempted and the urgent request takes its slot: 16 tokens in about 0.28 s
  // (measured 0.28 to 0.29 s; bound 0.8 s, under the 1 s TTFT SLO).
  EXPECT_EQ(urgent.status, 200) << urgent.body;
  EXPECT_LT(elapsed_s, 0.8);
  for (const HttpResponse& r : streams) {
    EXPECT_EQ(r.status, 200) << r.body;  // the displaced stream resumes and finishes
  }
}

// Finding 4: priority scheduling with the old aging of 10 s a class and a steady class-0 load
// at twice what the emulated engine serves, with one class-10 request in the middle of it.
class LiveStarvationTest : public server_test::ServerFixture {
 protected:
  std::vector<std::string> ServerArgs() override { return Args(); }

 public:
  static std::vector<std::string> Args(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--scheduling", "priority", "--priority-aging-s", "10"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  /// The load, and the class-10 request sent at 4 s: its answer and how long it took.
  std::pair<HttpResponse, double> LowClassBesideSteadyLoad() {
    std::vector<std::jthread> load;
    HttpResponse low;
    double low_elapsed_s = 0;
    for (int k = 0; k < 120; ++k) {  // 20 req/s for 6 s
      load.emplace_back([this] {
        client().Post("/v1/completions", CompletionBody(64, 64), {{"X-Priority-Class", "0"}}, 30);
      });
      if (k == 80) {
        load.emplace_back([&] {
          const auto start = std::chrono::steady_clock::now();
          low = client().Post("/v1/completions", CompletionBody(64, 64),
                              {{"X-Priority-Class", "10"}}, 30);
          low_elapsed_s =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        });
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    load.clear();
    return {low, low_elapsed_s};
  }
};

// Predictive admission: the class-10 request is refused at the door with Retry-After (measured
// within 1 ms), never left to a 504 at the request deadline.
TEST_F(LiveStarvationTest, ARequestThatWouldBeOvertakenIsRefusedAtOnceWithRetryAfter) {
  const auto [low, elapsed_s] = LowClassBesideSteadyLoad();
  RecordProperty("elapsed_s", std::to_string(elapsed_s));
  EXPECT_EQ(low.status, 429) << low.body;
  EXPECT_EQ(low.Header("X-Overload-Reason").value_or(""), "queue_delay_exceeded");
  EXPECT_TRUE(low.Header("Retry-After").has_value());
  EXPECT_LT(elapsed_s, 1.0);
}

// A bounded FIFO with queue-ingress deadlines admits it; overtaken, it is dropped at its
// deadline (429 queue_deadline_exceeded with Retry-After, about 1 s after it arrived) wherever
// it is in the queue. Before the fix only the head was checked: it waited for the 504 at the
// 4.5 s request deadline.
class LiveStarvationTailDropTest : public LiveStarvationTest {
 protected:
  std::vector<std::string> ServerArgs() override {
    return Args(
        {"--policy", "tail-drop", "--queue-deadline", "true", "--max-num-queued-reqs", "1000"});
  }
};

TEST_F(LiveStarvationTailDropTest, AnOvertakenRequestIsDroppedAtItsDeadlineWithRetryAfter) {
  const auto [low, elapsed_s] = LowClassBesideSteadyLoad();
  EXPECT_EQ(low.status, 429) << low.body;
  EXPECT_EQ(low.Header("X-Overload-Reason").value_or(""), "queue_deadline_exceeded");
  EXPECT_TRUE(low.Header("Retry-After").has_value());
  RecordProperty("elapsed_s", std::to_string(elapsed_s));
  EXPECT_LT(elapsed_s, 1.6);  // measured 1.0 s; before the fix 2.9 s (at the head, late)
}

// Finding 6: after a burst that measures prefill beside a batch of decodes (a token budget of
// 64, most of it decodes: about 3,300 prompt tokens/s), an idle server gets a 100k-token
// prompt. It prefills it in about 6 s; at the rate measured under load it needed 30 s, and it
// was refused with 400 max_tokens_exceeds_deadline (no retry helps) against a 15 s deadline.
// Under predictive: the forecast plans a burst that lands before the first step at the model's
// pace, and under ThreadSanitizer (steps several times slower) it admitted 80 and dropped 77 at
// the queue head, so the engine never measured itself under load.
class LiveLongPromptAfterLoadTest : public server_test::ServerFixture {
 protected:
  std::vector<std::string> ServerArgs() override {
    return {"--policy",
            "predictive",
            "--profile",
            "h100-llama3.2-1b",
            "--max-num-seqs",
            "64",
            "--max-num-batched-tokens",
            "64",
            "--request-timeout-s",
            "15",
            "--client-timeout-s",
            "16"};
  }
};

TEST_F(LiveLongPromptAfterLoadTest, AnIdleServerServesALongPromptAfterLoad) {
  const std::vector<HttpResponse> burst = Burst(client(), 80, CompletionBody(64, 600), 30);
  int served = 0;
  for (const HttpResponse& r : burst) {
    served += r.status == 200;
  }
  ASSERT_GE(served, 32);  // the engine measured itself under load (64 of 80 in the simulator)
  const auto start = std::chrono::steady_clock::now();
  const HttpResponse r = client().Post("/v1/completions", CompletionBody(100000, 16), {}, 30);
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RecordProperty("long_prompt_elapsed_s", std::to_string(elapsed_s));
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_LT(elapsed_s, 15);  // measured 6.1 s
}

// Finding 2: four 11k-token prompts land at once on an h100-llama3-8b server (a token budget of
// 585), then ten 200-token requests. Before, the short ones waited for the long prompts'
// prefill, each taking every step's whole budget (or were refused for it under predictive).
class LiveLongPrefillHolTest : public server_test::ServerFixture {
 protected:
  std::vector<std::string> ServerArgs() override {
    return {"--profile", "h100-llama3-8b", "--max-model-len", "32768"};
  }
};

TEST_F(LiveLongPrefillHolTest, ShortRequestsArePrefilledBesideLongOnes) {
  std::vector<HttpResponse> longs(4);
  std::vector<std::jthread> threads;
  for (std::size_t i = 0; i < longs.size(); ++i) {
    threads.emplace_back(
        [&, i] { longs[i] = client().Post("/v1/completions", CompletionBody(11000, 4), {}, 30); });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the long ones are prefilling
  const auto start = std::chrono::steady_clock::now();
  const std::vector<HttpResponse> shorts = Burst(client(), 10, CompletionBody(200, 4), 30);
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  threads.clear();
  RecordProperty("shorts_elapsed_s", std::to_string(elapsed_s));
  for (const HttpResponse& r : shorts) {
    EXPECT_EQ(r.status, 200) << r.body;
  }
  EXPECT_LT(elapsed_s, 0.75);  // measured 0.19 to 0.20 s; before the fix 0.93 s
  // The long ones queue behind each other: predictive serves those that start within the SLO
  // (two of the four) and refuses the rest at the door.
  int served = 0;
  for (const HttpResponse& r : longs) {
    EXPECT_TRUE(r.status == 200 || r.status == 429) << r.status << " " << r.body;
    served += r.status == 200;
  }
  EXPECT_GE(served, 1);
}

// Finding 1 (vLLM #25538): a 16k-token prompt arrives beside eight decodes (500 prompt, 300
// output tokens) in a pool of 1,200 KV blocks, about 1.2 such prompts. Before, it started on
// one chunk's free blocks, ran out, was preempted and re-admitted again and again (37 times in
// the simulator) and the decodes took 19 s instead of about 3 s.
class LiveRecomputeThrashTest : public server_test::ServerFixture {
 protected:
  std::vector<std::string> ServerArgs() override {
    return {"--profile",
            "h100-llama3-8b",
            "--max-model-len",
            "32768",
            "--num-gpu-blocks",
            "1200",
            "--max-num-batched-tokens",
            "2048",
            "--policy",
            "unbounded",
            "--request-timeout-s",
            "60",
            "--client-timeout-s",
            "61"};
  }
};

TEST_F(LiveRecomputeThrashTest, ALongPromptWaitsForRoomAndTheDecodesFinishOnTime) {
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::vector<HttpResponse> decodes(8);
  std::vector<double> decodes_done_s(8);
  std::vector<std::jthread> threads;
  for (std::size_t i = 0; i < decodes.size(); ++i) {
    threads.emplace_back([&, i] {
      decodes[i] = client().Post("/v1/completions", CompletionBody(500, 300), {}, 60);
      decodes_done_s[i] = elapsed();
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const HttpResponse long_prompt =
      client().Post("/v1/completions", CompletionBody(16000, 16), {}, 60);
  const double long_done_s = elapsed();
  threads.clear();
  for (const HttpResponse& r : decodes) {
    EXPECT_EQ(r.status, 200) << r.body;
  }
  EXPECT_EQ(long_prompt.status, 200) << long_prompt.body;
  const double last_decode_s = *std::max_element(decodes_done_s.begin(), decodes_done_s.end());
  RecordProperty("decodes_done_s", std::to_string(last_decode_s));
  RecordProperty("long_prompt_done_s", std::to_string(long_done_s));
  EXPECT_EQ(server_test::MetricSum(Metrics(), "vllm:num_preemptions_total"), 0);
  EXPECT_LT(last_decode_s, 6);  // 2.9 s in the simulator; 19.1 s before the fix
}

// The trial's follow-up: short requests behind the blocked long prompt no longer wait for the
// decodes to finish; they pass it because they finish before its blocks free up (backfill).
// The same server, so the same fixture's flags.
class LivePrefillBackfillTest : public LiveRecomputeThrashTest {};

TEST_F(LivePrefillBackfillTest, ShortRequestsPassALongPromptWaitingForKvRoom) {
  std::vector<std::jthread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back(
        [&] { client().Post("/v1/completions", CompletionBody(500, 300), {}, 60); });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  threads.emplace_back(
      [&] { client().Post("/v1/completions", CompletionBody(16000, 16), {}, 60); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // One short request after another while the long prompt waits for the decodes to finish
  // (about 3 s; the 128 steps requests could pass it before took about 1.3 s).
  const auto first = std::chrono::steady_clock::now();
  double slowest_s = 0;
  while (std::chrono::steady_clock::now() - first < std::chrono::milliseconds(2400)) {
    const auto start = std::chrono::steady_clock::now();
    const HttpResponse r = client().Post("/v1/completions", CompletionBody(200, 10), {}, 60);
    const double took_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(r.status, 200) << r.body;
    slowest_s = std::max(slowest_s, took_s);
  }
  threads.clear();
  RecordProperty("slowest_short_s", std::to_string(slowest_s));
  EXPECT_LT(slowest_s, 1.0);  // 0.11 s; 2.16 s when every request waited after 128 steps
}

}  // namespace
}  // namespace spillway
