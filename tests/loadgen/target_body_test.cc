// The target URL (Boost.URL) and the request body (Boost.JSON).

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <stdexcept>

#include "loadgen/request_body.h"
#include "net/target.h"

namespace spillway::loadgen {
namespace {

TEST(ParseTargetTest, HostPortAndBasePath) {
  const net::Target t = net::ParseTarget("http://127.0.0.1:8000");
  EXPECT_EQ(t.host, "127.0.0.1");
  EXPECT_EQ(t.port, "8000");
  EXPECT_EQ(t.Path("/v1/completions"), "/v1/completions");
  EXPECT_EQ(t.host_header, "127.0.0.1:8000");
  EXPECT_EQ(net::ParseTarget("http://localhost").port, "80");
  EXPECT_EQ(net::ParseTarget("http://h:1/api/v1/").Path("/v1/models"), "/api/v1/models");
  EXPECT_EQ(net::ParseTarget("http://[::1]:9/").host, "::1");
  EXPECT_EQ(net::ParseTarget("http://[::1]:9/").host_header, "[::1]:9");
}

TEST(ParseTargetTest, RejectsWhatItCannotServe) {
  EXPECT_THROW(net::ParseTarget("https://example.com"), std::invalid_argument);
  EXPECT_THROW(net::ParseTarget("http://127.0.0.1:99999"), std::invalid_argument) << "port > 65535";
  EXPECT_THROW(net::ParseTarget("http://127.0.0.1:0"), std::invalid_argument);
  EXPECT_THROW(net::ParseTarget("http://127.0.0.1:/"), std::invalid_argument) << "empty port";
  EXPECT_THROW(net::ParseTarget("127.0.0.1:8000"), std::invalid_argument);
  EXPECT_THROW(net::ParseTarget("not a url"), std::invalid_argument);
  EXPECT_THROW(net::ParseTarget("http://h:1/?x=1"), std::invalid_argument);
}

TEST(CompletionBodyTest, ExactTokenIdPromptAndStreamingFields) {
  const boost::json::value v = boost::json::parse(CompletionBody("m", 5, 7, 42));
  const boost::json::array& prompt = v.at("prompt").as_array();
  ASSERT_EQ(prompt.size(), 5u);
  for (const boost::json::value& id : prompt) {
    EXPECT_GE(id.to_number<std::int64_t>(), kFirstTokenId);
    EXPECT_LT(id.to_number<std::int64_t>(), kFirstTokenId + kTokenIdSpan);
  }
  EXPECT_EQ(v.at("model").as_string(), "m");
  EXPECT_EQ(v.at("max_tokens").to_number<int>(), 7);
  EXPECT_TRUE(v.at("ignore_eos").as_bool());
  EXPECT_TRUE(v.at("stream").as_bool());
  EXPECT_TRUE(v.at("stream_options").at("include_usage").as_bool());
  // Deterministic per seed, different across seeds.
  EXPECT_EQ(CompletionBody("m", 5, 7, 42), CompletionBody("m", 5, 7, 42));
  EXPECT_NE(CompletionBody("m", 5, 7, 42), CompletionBody("m", 5, 7, 43));
}

}  // namespace
}  // namespace spillway::loadgen
