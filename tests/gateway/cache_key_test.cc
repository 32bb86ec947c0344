// The live gateway's key of a request in the exact-result cache (gateway/cache_key.h).

#include "gateway/cache_key.h"

#include <gtest/gtest.h>

namespace spillway::gateway {
namespace {

TEST(ResultCacheKeyTest, TheTenantTheModelAndEveryFieldButNotTheirOrder) {
  const auto key = [](std::string_view tenant, std::string_view model, std::string_view body) {
    return ResultCacheKey(tenant, model, "/v1/completions", body).value_or("?");
  };
  const std::string a = key("a", "m", R"({"prompt":"hi","seed":1,"max_tokens":8})");
  EXPECT_EQ(a, key("a", "m", R"({"max_tokens":8,"seed":1,"prompt":"hi"})"));
  EXPECT_EQ(key("a", "m", R"({"x":{"b":1,"a":[{"d":1,"c":2}]}})"),
            key("a", "m", R"({"x":{"a":[{"c":2,"d":1}],"b":1}})"))
      << "nested objects too";
  EXPECT_NE(a, key("b", "m", R"({"prompt":"hi","seed":1,"max_tokens":8})")) << "another tenant";
  EXPECT_NE(a, key("a", "n", R"({"prompt":"hi","seed":1,"max_tokens":8})")) << "another model";
  EXPECT_NE(a, key("a", "m", R"({"prompt":"hi","seed":2,"max_tokens":8})")) << "another seed";
  EXPECT_NE(a, key("a", "m", R"({"prompt":"hi","seed":1,"max_tokens":8,"stream":true})"));
  EXPECT_NE(key("ab", "m", "{}"), key("a", "bm", "{}")) << "fields cannot run into each other";
  EXPECT_NE(a, ResultCacheKey("a", "m", "/v1/chat/completions",
                              R"({"prompt":"hi","seed":1,"max_tokens":8})"))
      << "another route: a chat answer is no completion";
  EXPECT_FALSE(ResultCacheKey("a", "m", "/v1/completions", "[1]").has_value());
  EXPECT_FALSE(ResultCacheKey("a", "m", "/v1/completions", "{").has_value());
  EXPECT_FALSE(ResultCacheKey("a", "m", "/v1/completions", R"({"x":1e400})").has_value())
      << "beyond a double: 1e400 and 1e401 would read the same";
}

}  // namespace
}  // namespace spillway::gateway
