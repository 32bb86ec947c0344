// Refusals decided from the request's head alone, before its body is read or parsed
// (ApiHandler::Head, net::HttpServer's HeadHandler), as nginx's limit_req decides: a tenant out
// of tokens gets 429 rate_limited even for a body that is not JSON (parsed, it would be 400);
// the body is read and dropped, so the keep-alive connection serves the next requests, pipelined
// ones included; a client that sent "Expect: 100-continue" gets the refusal instead of the 100;
// and the refusal is counted as the engine's own refusals are.

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/http_client.h"
#include "common/server_fixture.h"
#include "common/temp_dir.h"
#include "server/raw_connection.h"

namespace spillway {
namespace {

using server_test::HeaderList;
using server_test::IsOpenAiError;
using server_test::MetricSum;
using server_test::RawConnection;
using server_test::RawPost;

class HeadRefusalTest : public server_test::ServerFixture {
 protected:
  std::vector<std::string> ServerArgs() override {
    const std::string config = dir_.Write("head_refusal.yaml",
                                          "engine:\n"
                                          "  default_max_tokens: 4\n"
                                          "api_keys:\n"
                                          "  - {key: key-limited, tenant: limited, rate_rps: "
                                          "0.001, burst: 1}\n"
                                          "  - {key: key-free, tenant: free}\n");
    return {"--config", config};
  }
  void SetUp() override {
    ServerFixture::SetUp();
    // The limited tenant's one token, spent.
    ASSERT_EQ(client()
                  .Post("/v1/completions", server_test::SmallCompletionBody(1),
                        {{"Authorization", "Bearer key-limited"}})
                  .status,
              200);
  }

  testing_util::TempDir dir_;
};

TEST_F(HeadRefusalTest, AnEmptyBucketRefusesABodyThatWouldNotEvenParse) {
  const server_test::HttpResponse r =
      client().Post("/v1/completions", "{not json", {{"Authorization", "Bearer key-limited"}});
  EXPECT_TRUE(IsOpenAiError(r, 429, "rate_limited")) << "the body was parsed: " << r.body;
  EXPECT_TRUE(r.Header("Retry-After").has_value());
  EXPECT_EQ(r.Header("X-Overload-Reason"), std::optional<std::string>("rate_limited"));
  const std::string m = client().Get("/metrics").body;
  EXPECT_EQ(MetricSum(m, "spillway_admission_decisions_total",
                      {{"decision", "reject"}, {"reason", "rate_limited"}, {"tenant", "limited"}}),
            1);
  EXPECT_EQ(MetricSum(m, "spillway_http_requests_total", {{"status", "429"}}), 1);
  // The free tenant's bad body is still parsed and refused as bad.
  EXPECT_TRUE(IsOpenAiError(
      client().Post("/v1/completions", "{not json", {{"Authorization", "Bearer key-free"}}), 400,
      "invalid_json"));
}

TEST_F(HeadRefusalTest, TheConnectionServesPipelinedRequestsAfterARefusal) {
  RawConnection conn(server().port());
  ASSERT_TRUE(conn.connected());
  const std::string limited = "Authorization: Bearer key-limited\r\n";
  const std::string body = R"({"prompt":[1,2,3],"max_tokens":1})";
  ASSERT_TRUE(conn.Send(
      RawPost("HTTP/1.1", "/v1/completions", body, limited) +
      RawPost("HTTP/1.1", "/v1/completions", body, limited) +
      RawPost("HTTP/1.1", "/v1/completions", body, "Authorization: Bearer key-free\r\n")));
  for (const int want : {429, 429, 200}) {
    const std::optional<server_test::RawResponse> r = conn.ReadResponse(server_test::kTimeoutS);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, want) << r->body;
    EXPECT_NE(r->Header("Connection"), std::optional<std::string>("close"));
  }
  EXPECT_FALSE(conn.peer_closed());
}

TEST_F(HeadRefusalTest, ARefusalGoesBeforeABodyStillOnItsWayAndIsCountedOnce) {
  RawConnection conn(server().port());
  ASSERT_TRUE(conn.connected());
  const std::string body(2000, ' ');
  ASSERT_TRUE(conn.Send(
      "POST /v1/completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer key-limited\r\n"
      "Content-Type: application/json\r\nContent-Length: 2000\r\n\r\n" +
      body.substr(0, 10)));
  // Well before the server's 10 s request deadline: the refusal does not wait for the body.
  const std::optional<server_test::RawResponse> r = conn.ReadResponse(2.0);
  ASSERT_TRUE(r.has_value()) << "no answer while the body was incomplete";
  EXPECT_EQ(r->status, 429);
  // The rest of the body comes: read and dropped, and the connection serves the next request.
  ASSERT_TRUE(conn.Send(body.substr(10) + RawPost("HTTP/1.1", "/v1/completions",
                                                  R"({"prompt":[1],"max_tokens":1})",
                                                  "Authorization: Bearer key-free\r\n")));
  const std::optional<server_test::RawResponse> next = conn.ReadResponse(server_test::kTimeoutS);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->status, 200) << next->body;
  const std::string m = client().Get("/metrics").body;
  EXPECT_EQ(MetricSum(m, "spillway_http_requests_total", {{"status", "429"}}), 1);
  EXPECT_EQ(MetricSum(m, "spillway_http_requests_total", {{"status", "408"}}), 0);
}

TEST_F(HeadRefusalTest, ExpectContinueGetsTheRefusalInsteadOfThe100) {
  RawConnection conn(server().port());
  ASSERT_TRUE(conn.connected());
  ASSERT_TRUE(conn.Send(
      "POST /v1/completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer key-limited\r\n"
      "Content-Type: application/json\r\nContent-Length: 1000\r\nExpect: 100-continue\r\n\r\n"));
  const std::optional<server_test::RawResponse> r = conn.ReadResponse(server_test::kTimeoutS);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 429) << "not a 100 Continue first";
  EXPECT_EQ(r->Header("Connection"), std::optional<std::string>("close"));
  EXPECT_TRUE(conn.WaitClosedByPeer(server_test::kTimeoutS))
      << "the body it may not send is not waited for forever";
}

}  // namespace
}  // namespace spillway
