// The completion body's prompt with shared segments (core/prompt_segments.h): the segments'
// tokens first, the same for the same segment id in every body, then the request's own, exactly
// prompt_tokens in all; without segments the body is what it was before segments existed.

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "core/prompt_segments.h"
#include "loadgen/request_body.h"

namespace spillway::loadgen {
namespace {

namespace json = boost::json;

/// The prompt's token ids of a completion body.
std::vector<std::int64_t> PromptIdsOf(const std::string& body) {
  const json::value parsed = json::parse(body);
  std::vector<std::int64_t> ids;
  for (const json::value& id : parsed.at("prompt").as_array()) {
    ids.push_back(id.to_number<std::int64_t>());
  }
  return ids;
}

/// `ids[first, first + count)`.
std::vector<std::int64_t> Slice(const std::vector<std::int64_t>& ids, std::size_t first,
                                std::size_t count) {
  return {ids.begin() + static_cast<std::ptrdiff_t>(first),
          ids.begin() + static_cast<std::ptrdiff_t>(first + count)};
}

TEST(SegmentedPromptBodyTest, ArrivalsSharingASegmentShareItsTokensAndNothingElse) {
  const PromptSegments system{512, {0xABCDEF}};
  const std::vector<std::int64_t> a = PromptIdsOf(CompletionBody("m", 600, 8, 1, true, &system));
  const std::vector<std::int64_t> b = PromptIdsOf(CompletionBody("m", 600, 8, 2, true, &system));
  ASSERT_EQ(a.size(), 600u);
  ASSERT_EQ(b.size(), 600u);
  EXPECT_EQ(Slice(a, 0, 512), Slice(b, 0, 512));
  EXPECT_NE(a[512], b[512]) << "the own tokens differ from the first";
  EXPECT_NE(Slice(a, 512, 88), Slice(b, 512, 88));
  for (const std::int64_t id : a) {
    EXPECT_GE(id, kFirstTokenId);
    EXPECT_LT(id, kFirstTokenId + kTokenIdSpan);
  }
  // A different segment id is different tokens.
  const PromptSegments other{512, {0xABCDEE}};
  EXPECT_NE(Slice(PromptIdsOf(CompletionBody("m", 600, 8, 1, true, &other)), 0, 512),
            Slice(a, 0, 512));
}

TEST(SegmentedPromptBodyTest, ASegmentsTokensDependOnItsIdAloneWhereverItIs) {
  const PromptSegments two{100, {5, 7}};
  const PromptSegments one{100, {7}};
  const std::vector<std::int64_t> a = PromptIdsOf(CompletionBody("m", 250, 8, 1, true, &two));
  const std::vector<std::int64_t> b = PromptIdsOf(CompletionBody("m", 150, 8, 9, false, &one));
  EXPECT_EQ(Slice(a, 100, 100), Slice(b, 0, 100));
  EXPECT_NE(Slice(a, 0, 100), Slice(a, 100, 100));
}

TEST(SegmentedPromptBodyTest, ThePromptIsExactlyPromptTokensLong) {
  const PromptSegments trace{512, {1, 2, 3}};  // a Mooncake record's hash_ids
  const std::vector<std::int64_t> full = PromptIdsOf(CompletionBody("m", 2000, 8, 4, true, &trace));
  EXPECT_EQ(full.size(), 2000u);
  // Segments past the prompt are cut: a shorter prompt is the start of a longer one's segments.
  for (const std::int32_t n : {0, 1, 511, 512, 513, 1300, 1536}) {
    const std::vector<std::int64_t> ids = PromptIdsOf(CompletionBody("m", n, 8, 4, true, &trace));
    ASSERT_EQ(ids.size(), static_cast<std::size_t>(n));
    const auto shared = static_cast<std::size_t>(std::min(n, 1536));
    EXPECT_EQ(Slice(ids, 0, shared), Slice(full, 0, shared)) << n;
  }
  const PromptSegments empty{512, {}};
  EXPECT_EQ(PromptIdsOf(CompletionBody("m", 40, 8, 4, true, &empty)).size(), 40u);
}

TEST(SegmentedPromptBodyTest, WithoutSegmentsTheBodyIsUnchanged) {
  // The bodies the load generator sent before prompts had segments (commit bf8be69's).
  EXPECT_EQ(CompletionBody("m", 6, 5, 42, true, nullptr),
            R"({"model":"m","prompt":[6413,3291,4858,6764,4250,10062],"max_tokens":5,)"
            R"("temperature":0E0,"ignore_eos":true,"stream":true,)"
            R"("stream_options":{"include_usage":true}})");
  EXPECT_EQ(CompletionBody("m", 6, 5, 42, false, nullptr),
            R"({"model":"m","prompt":[6413,3291,4858,6764,4250,10062],"max_tokens":5,)"
            R"("temperature":0E0,"stream":true,"stream_options":{"include_usage":true}})");
  // A retry (the same arrival) sends the same body.
  const PromptSegments system{16, {3}};
  EXPECT_EQ(CompletionBody("m", 40, 8, 4, true, &system),
            CompletionBody("m", 40, 8, 4, true, &system));
}

}  // namespace
}  // namespace spillway::loadgen
