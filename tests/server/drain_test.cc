// Graceful shutdown: on SIGTERM the server turns /ready to 503, refuses new completions with
// 503 and X-Overload-Reason draining, lets in-flight streams run to [DONE], and exits 0.

#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/http_client.h"
#include "common/server_fixture.h"

namespace spillway {
namespace {

using server_test::HttpRequest;
using server_test::HttpResponse;
using server_test::IntAt;
using server_test::ParseJson;
using server_test::PendingRequest;
using server_test::StringAt;

class DrainTest : public server_test::ServerFixture {
 protected:
  // A request deadline far above the streams' ~2 s: they end by finishing, not by timing out.
  std::vector<std::string> ServerArgs() override {
    return {"--drain-timeout-s", "20", "--request-timeout-s", "15", "--client-timeout-s", "20"};
  }
};

TEST_F(DrainTest, SigtermRefusesNewWorkFinishesInFlightStreamsAndExitsZero) {
  constexpr int kStreams = 3;
  constexpr int kMaxTokens = 100;
  HttpRequest request;
  request.method = "POST";
  request.target = "/v1/chat/completions";
  request.body = R"({"messages":[{"role":"user","content":"Tell a long story."}],"max_tokens":)" +
                 std::to_string(kMaxTokens) +
                 R"(,"stream":true,"stream_options":{"include_usage":true}})";
  std::vector<std::unique_ptr<PendingRequest>> streams;
  std::vector<std::vector<std::string>> events(kStreams);
  for (int i = 0; i < kStreams; ++i) {
    streams.push_back(std::make_unique<PendingRequest>(client().port(), request, 10));
    ASSERT_TRUE(streams[i]->ok()) << streams[i]->error();
    ASSERT_EQ(streams[i]->ReadHead(10).status, 200) << streams[i]->error();
    // The first token: the request is admitted and generating.
    const std::optional<std::string> first = streams[i]->NextEvent(10);
    ASSERT_TRUE(first.has_value()) << streams[i]->error();
    events[i].push_back(*first);
  }

  server().Signal(SIGTERM);

  // Readiness fails promptly, so a load balancer stops sending work here.
  HttpResponse ready;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  do {
    ready = client().Get("/ready", 5);
    if (ready.status == 503) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() < give_up);
  EXPECT_EQ(ready.status, 503) << ready.error << ready.body;

  // New work is refused with the draining reason; the streams above are still running
  // (100 tokens take far longer than the refusals).
  const HttpResponse refused =
      client().Post("/v1/completions", server_test::SmallCompletionBody(), {}, 5);
  EXPECT_TRUE(server_test::IsOpenAiError(refused, 503, "draining"));
  EXPECT_EQ(refused.Header("X-Overload-Reason"), "draining");
  EXPECT_TRUE(refused.Header("Retry-After").has_value());

  // Every in-flight stream runs to the end: all its tokens, a usage chunk, then [DONE].
  for (int i = 0; i < kStreams; ++i) {
    SCOPED_TRACE("stream " + std::to_string(i));
    while (auto data = streams[i]->NextEvent(20)) {
      events[i].push_back(*data);
    }
    EXPECT_TRUE(streams[i]->ok()) << streams[i]->error();
    EXPECT_TRUE(streams[i]->complete());
    ASSERT_FALSE(events[i].empty());
    EXPECT_EQ(events[i].back(), "[DONE]");
    int content_chunks = 0;
    std::optional<std::int64_t> completion_tokens;
    for (const std::string& data : events[i]) {
      const auto chunk = ParseJson(data);
      if (!chunk.has_value()) {
        continue;  // [DONE]
      }
      if (StringAt(*chunk, "/choices/0/delta/content").has_value()) {
        ++content_chunks;
      }
      if (const auto n = IntAt(*chunk, "/usage/completion_tokens")) {
        completion_tokens = n;
      }
    }
    EXPECT_EQ(content_chunks, kMaxTokens);
    EXPECT_EQ(completion_tokens, kMaxTokens);
  }

  // With nothing left in flight, the process exits 0 well within its 20 s drain budget.
  const std::optional<int> status = server().WaitForExit(30);
  ASSERT_TRUE(status.has_value()) << "still running 30 s after the streams finished";
  EXPECT_TRUE(WIFEXITED(*status)) << "wait status " << *status
                                  << (WIFSIGNALED(*status)
                                          ? " (signal " + std::to_string(WTERMSIG(*status)) + ")"
                                          : std::string());
  EXPECT_EQ(WIFEXITED(*status) ? WEXITSTATUS(*status) : -1, 0);
}

class DrainTimeoutTest : public server_test::ServerFixture {
 protected:
  // A 1 s drain budget, far shorter than the in-flight stream below (2000 tokens).
  std::vector<std::string> ServerArgs() override {
    return {"--drain-timeout-s", "1", "--request-timeout-s", "20", "--client-timeout-s", "30"};
  }
};

TEST_F(DrainTimeoutTest, AtTheDrainBudgetInFlightRequestsGetA503DrainingAndTheProcessExitsZero) {
  HttpRequest request;
  request.method = "POST";
  request.target = "/v1/completions";
  // About 9 s of decoding at idle: still running when the 1 s drain budget ends.
  request.body = R"({"prompt":[1,2,3],"max_tokens":500,"stream":true})";
  HttpRequest plain = request;
  plain.body = R"({"prompt":[1,2,3],"max_tokens":500})";
  PendingRequest waiting(client().port(), plain, 10);
  ASSERT_TRUE(waiting.ok()) << waiting.error();
  PendingRequest stream(client().port(), request, 10);
  ASSERT_TRUE(stream.ok()) << stream.error();
  ASSERT_EQ(stream.ReadHead(10).status, 200) << stream.error();
  ASSERT_TRUE(stream.NextEvent(10).has_value()) << stream.error();

  const auto sigterm = std::chrono::steady_clock::now();
  server().Signal(SIGTERM);
  const std::optional<int> status = server().WaitForExit(15);
  ASSERT_TRUE(status.has_value()) << "still running 15 s after SIGTERM with a 1 s drain budget";
  const double exit_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - sigterm).count();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << "wait status " << *status;
  EXPECT_GE(exit_s, 0.5) << "the server did not wait for its in-flight stream at all";

  // The cut stream ends with an SSE error event (503 draining) and [DONE], not a bare close.
  std::vector<std::string> events;
  while (auto e = stream.NextEvent(10)) {
    events.push_back(*e);
  }
  EXPECT_EQ(stream.error().find("timeout"), std::string::npos) << stream.error();
  ASSERT_GE(events.size(), 2u);
  EXPECT_LT(events.size(), 500u);
  EXPECT_EQ(events.back(), "[DONE]");
  const std::optional<server_test::json::value> error = ParseJson(events[events.size() - 2]);
  ASSERT_TRUE(error.has_value()) << events[events.size() - 2];
  EXPECT_EQ(StringAt(*error, "/error/code"), "draining") << events[events.size() - 2];

  // The non-streaming request gets the documented 503 draining with the overload headers.
  const HttpResponse r = waiting.ReadResponse(10);
  EXPECT_TRUE(server_test::IsOpenAiError(r, 503, "draining"));
  EXPECT_EQ(r.Header("X-Overload-Reason"), "draining");
  EXPECT_TRUE(r.Header("Retry-After").has_value());
}

}  // namespace
}  // namespace spillway
