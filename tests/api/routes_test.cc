// Request targets to paths (api/routes.h).

#include "api/routes.h"

#include <gtest/gtest.h>

namespace spillway::api {
namespace {

TEST(RoutesTest, PathDropsTheQueryString) {
  EXPECT_EQ(PathOf("/v1/models?x=1"), "/v1/models");
  EXPECT_EQ(PathOf("/v1/completions"), "/v1/completions");
}

TEST(RoutesTest, AnAbsoluteFormTargetGivesItsPath) {
  // RFC 9112 section 3.2.2: a server must accept the absolute form.
  EXPECT_EQ(PathOf("http://x/v1/completions"), "/v1/completions");
  EXPECT_EQ(PathOf("HTTPS://host:8000/v1/chat/completions?a=b"), "/v1/chat/completions");
  EXPECT_EQ(PathOf("http://host"), "/");
  EXPECT_TRUE(IsCompletionsPath(PathOf("http://127.0.0.1:8000/v1/completions")));
  EXPECT_EQ(PathOf("http:/v1"), "http:/v1");  // not a URL: left as it is
}

}  // namespace
}  // namespace spillway::api
