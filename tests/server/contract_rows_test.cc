// Each row of the overload contract (api/overload_contract.h), provoked against the real
// `spillway serve`, is answered as the table says: its status, X-Overload-Reason and a
// Retry-After of whole seconds on 429 and 503 (with x-llm-d-request-dropped-reason where the
// row has one), and an OpenAI error body whose `type` is the
// row's and whose `code` is the reason. Rows that need load the tests here cannot produce on
// demand are checked elsewhere against the same table: queue_delay_and_kv_saturation and
// queue_deadline_exceeded (overload_test.cc, a burst), draining (drain_test.cc),
// preemption_limit (tests/failure/live_long_prompt_test.cc) and deadline_unreachable
// (tests/failure/live_ramp_retry_test.cc); the admission controller's unit tests give every
// reason (tests/admission/).

#include <gtest/gtest.h>

#include <charconv>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api/overload_contract.h"
#include "common/server_fixture.h"
#include "common/temp_dir.h"
#include "raw_connection.h"

namespace spillway {
namespace {

using server_test::CompletionBody;
using server_test::HttpRequest;
using server_test::HttpResponse;
using server_test::PendingRequest;

HttpRequest Stream(int prompt_tokens, int max_tokens) {
  HttpRequest r;
  r.method = "POST";
  r.target = "/v1/completions";
  r.body = CompletionBody(prompt_tokens, max_tokens, true);
  return r;
}

/// The reply is the contract's row for `reason`.
::testing::AssertionResult IsContractReply(const HttpResponse& r, const std::string& reason) {
  const api::ContractRow* row = api::FindContractRow(reason);
  if (row == nullptr) {
    return ::testing::AssertionFailure() << reason << " is not a row of the contract";
  }
  if (auto body = server_test::IsOpenAiError(r, row->http_status, reason); !body) {
    return body;
  }
  const auto v = server_test::ParseJson(r.body);
  if (server_test::StringAt(*v, "/error/type") != std::string(row->error_type)) {
    return ::testing::AssertionFailure()
           << "error type, want " << row->error_type << ": " << r.body;
  }
  if (row->http_status == 429 || row->http_status == 503) {
    if (r.Header("X-Overload-Reason") != reason) {
      return ::testing::AssertionFailure() << "X-Overload-Reason, want " << reason;
    }
    if (!row->dropped_reason.empty() &&
        r.Header("x-llm-d-request-dropped-reason") != std::string(row->dropped_reason)) {
      return ::testing::AssertionFailure()
             << "x-llm-d-request-dropped-reason, want " << row->dropped_reason;
    }
    const std::optional<std::string> retry = r.Header("Retry-After");
    int seconds = 0;
    if (!retry ||
        std::from_chars(retry->data(), retry->data() + retry->size(), seconds).ec != std::errc{} ||
        seconds < 1) {
      return ::testing::AssertionFailure()
             << "Retry-After of whole seconds >= 1, got " << retry.value_or("none");
    }
  }
  return ::testing::AssertionSuccess();
}

// --- Rows an idle server answers (400s) ---

class NeverServableRowsTest : public server_test::ServerFixture {
 protected:
  // 100 KV blocks of 16 tokens (1,600 tokens); the default 4.5 s request deadline.
  std::vector<std::string> ServerArgs() override {
    return {"--num-gpu-blocks", "100", "--max-model-len", "4096"};
  }
};

TEST_F(NeverServableRowsTest, ContextLengthKvCapacityAndDeadlineRowsAre400s) {
  EXPECT_TRUE(IsContractReply(client().Post("/v1/completions", CompletionBody(5000, 4)),
                              "context_length_exceeded"));
  EXPECT_TRUE(IsContractReply(client().Post("/v1/completions", CompletionBody(2000, 4)),
                              "kv_capacity_exceeded"));
  EXPECT_TRUE(IsContractReply(client().Post("/v1/completions", CompletionBody(3, 1000)),
                              "max_tokens_exceeds_deadline"));
}

// The KV 400 names what would help: a smaller max_tokens, or when the prompt alone is too long,
// a shorter prompt (it said "at most 0 max_tokens fit": a new user's trial of issue 12).
TEST_F(NeverServableRowsTest, TheKvCapacityAnswerNamesWhatWouldFit) {
  const HttpResponse too_many = client().Post("/v1/completions", CompletionBody(1500, 400));
  EXPECT_NE(too_many.body.find("at most 100 max_tokens fit"), std::string::npos) << too_many.body;
  EXPECT_NE(too_many.body.find(R"("param":"max_tokens")"), std::string::npos) << too_many.body;
  const HttpResponse too_long = client().Post("/v1/completions", CompletionBody(2000, 4));
  EXPECT_NE(too_long.body.find("shorten the prompt"), std::string::npos) << too_long.body;
  EXPECT_NE(too_long.body.find(R"("param":"prompt")"), std::string::npos) << too_long.body;
}

// --- Rows that need one request running (and one waiting) first ---

/// Starts a stream of `max_tokens` and returns once its first token arrived (it is running).
std::unique_ptr<PendingRequest> StartRunning(std::uint16_t port, int prompt_tokens,
                                             int max_tokens) {
  auto r = std::make_unique<PendingRequest>(port, Stream(prompt_tokens, max_tokens), 60);
  EXPECT_EQ(r->ReadHead(30).status, 200) << r->error();
  EXPECT_TRUE(r->NextEvent(30).has_value()) << r->error();
  return r;
}

/// Tail-drop with one batch slot and the hard limit `flag` at `value`.
std::vector<std::string> OneSlotTailDrop(const std::string& flag, const std::string& value) {
  return {"--policy",
          "tail-drop",
          "--max-num-seqs",
          "1",
          flag,
          value,
          "--request-timeout-s",
          "30",
          "--client-timeout-s",
          "40"};
}

class QueueFullRowTest : public server_test::ServerFixture {
 protected:
  std::vector<std::string> ServerArgs() override {
    return OneSlotTailDrop("--max-num-queued-reqs", "1");
  }
};

TEST_F(QueueFullRowTest, OneRunningOneWaitingThenA503) {
  const auto running = StartRunning(client().port(), 16, 400);
  PendingRequest waiting(client().port(), Stream(16, 4), 60);
  ASSERT_EQ(waiting.ReadHead(30).status, 200);  // admitted: it waits for the one slot
  EXPECT_TRUE(
      IsContractReply(client().Post("/v1/completions", CompletionBody(16, 4)), "queue_full"));
}

class QueuedTokensRowTest : public server_test::ServerFixture {
 protected:
  std::vector<std::string> ServerArgs() override {
    return OneSlotTailDrop("--max-num-queued-tokens", "24");
  }
};

// A prompt over the bound on its own is served when nothing waits (a 503 would be retried for
// ever: a new user's trial of issue 12); beside a waiting prompt, it is the 503.
TEST_F(QueuedTokensRowTest, APromptOverTheTokenBoundBesideAWaitingOneIsA503) {
  EXPECT_EQ(client().Post("/v1/completions", CompletionBody(40, 4)).status, 200);
  const auto running = StartRunning(client().port(), 16, 400);
  PendingRequest waiting(client().port(), Stream(16, 4), 60);
  ASSERT_EQ(waiting.ReadHead(30).status, 200);  // 16 of the 24 tokens wait
  EXPECT_TRUE(IsContractReply(client().Post("/v1/completions", CompletionBody(16, 4)),
                              "queued_tokens_full"));
}

class QueueDelayRowTest : public server_test::ServerFixture {
 protected:
  // One batch slot: a request behind the running one would wait its whole generation
  // (seconds) against a 1 s TTFT SLO. The default policy, forecast, steps the engine forward
  // and sees it; predictive (W_est = Q / mu-hat) sees it once one waits.
  std::vector<std::string> ServerArgs() override {
    return {"--max-num-seqs", "1", "--request-timeout-s", "30", "--client-timeout-s", "40"};
  }
};

TEST_F(QueueDelayRowTest, AQueueAheadOfASingleSlotIsA429) {
  const auto running = StartRunning(client().port(), 16, 400);
  EXPECT_TRUE(IsContractReply(client().Post("/v1/completions", CompletionBody(16, 4)),
                              "queue_delay_exceeded"));
}

class PredictiveQueueDelayRowTest : public QueueDelayRowTest {
 protected:
  std::vector<std::string> ServerArgs() override {
    std::vector<std::string> args = QueueDelayRowTest::ServerArgs();
    args.insert(args.end(), {"--policy", "predictive"});
    return args;
  }
};

TEST_F(PredictiveQueueDelayRowTest, AQueueAheadOfASingleSlotIsA429) {
  const auto running = StartRunning(client().port(), 16, 400);
  PendingRequest waiting(client().port(), Stream(16, 4), 60);
  ASSERT_EQ(waiting.ReadHead(30).status, 200);
  EXPECT_TRUE(IsContractReply(client().Post("/v1/completions", CompletionBody(16, 4)),
                              "queue_delay_exceeded"));
}

class KvSaturationRowTest : public server_test::ServerFixture {
 protected:
  // 100 blocks; a running 320-token request holds over 20 of them, far above 5% headroom.
  std::vector<std::string> ServerArgs() override {
    return {"--num-gpu-blocks",    "100", "--kv-headroom",      "0.05",
            "--request-timeout-s", "30",  "--client-timeout-s", "40"};
  }
};

TEST_F(KvSaturationRowTest, NewWorkAboveTheKvHeadroomIsA429) {
  const auto running = StartRunning(client().port(), 320, 400);
  EXPECT_TRUE(
      IsContractReply(client().Post("/v1/completions", CompletionBody(16, 4)), "kv_saturation"));
}

// --- The tenant's bucket, the connection cap and the request deadline ---

class RateLimitRowTest : public server_test::ServerFixture {
 protected:
  std::vector<std::string> ServerArgs() override {
    keys_ = dir_.Write("keys.yaml",
                       "api_keys:\n  - {key: sk-a, tenant: a, rate_rps: 0.001, burst: 1}\n");
    return {"--config", keys_};
  }
  testing_util::TempDir dir_;
  std::string keys_;
};

TEST_F(RateLimitRowTest, ASecondRequestFromAnEmptyBucketIsA429WithItsResetTime) {
  const server_test::HeaderList auth = {{"Authorization", "Bearer sk-a"}};
  ASSERT_EQ(client().Post("/v1/completions", CompletionBody(4, 2), auth).status, 200);
  const HttpResponse r = client().Post("/v1/completions", CompletionBody(4, 2), auth);
  EXPECT_TRUE(IsContractReply(r, "rate_limited"));
  EXPECT_TRUE(r.Header("X-RateLimit-Reset").has_value());
}

class ConnectionCapRowTest : public server_test::ServerFixture {
 protected:
  std::vector<std::string> ServerArgs() override { return {"--max-connections", "1"}; }
};

TEST_F(ConnectionCapRowTest, AConnectionOverTheCapIsA503) {
  server_test::RawConnection held(client().port());  // holds the only slot, sends nothing
  ASSERT_TRUE(held.connected());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // accepted by the server
  EXPECT_TRUE(IsContractReply(client().Post("/v1/completions", CompletionBody(4, 2)),
                              "too_many_connections"));
}

class RequestTimeoutRowTest : public server_test::ServerFixture {
 protected:
  // The naive queue admits what the deadline then cuts: 400 tokens take seconds, the deadline
  // is 0.3 s.
  std::vector<std::string> ServerArgs() override {
    return {"--policy",           "unbounded", "--ttft-slo-s", "0.1", "--request-timeout-s", "0.3",
            "--client-timeout-s", "1"};
  }
};

TEST_F(RequestTimeoutRowTest, ARequestUnansweredAtTheDeadlineIsA504) {
  EXPECT_TRUE(IsContractReply(client().Post("/v1/completions", CompletionBody(16, 400), {}, 10),
                              "request_timeout"));
}

}  // namespace
}  // namespace spillway
