// ApproxTokenizer: ceil(bytes / 4) counts, the chat template overhead, and placeholder decoding.

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "api/tokenizer.h"

namespace spillway::api {
namespace {

TEST(ApproxTokenizerTest, CountsCeilBytesOverFour) {
  const ApproxTokenizer tokenizer;
  EXPECT_EQ(tokenizer.CountTokens(""), 0);
  EXPECT_EQ(tokenizer.CountTokens("a"), 1);
  EXPECT_EQ(tokenizer.CountTokens("ab"), 1);
  EXPECT_EQ(tokenizer.CountTokens("abc"), 1);
  EXPECT_EQ(tokenizer.CountTokens("abcd"), 1);
  EXPECT_EQ(tokenizer.CountTokens("abcde"), 2);
  EXPECT_EQ(tokenizer.CountTokens("abcdefgh"), 2);
  EXPECT_EQ(tokenizer.CountTokens("abcdefghi"), 3);
  EXPECT_EQ(tokenizer.CountTokens(std::string(4000, 'x')), 1000);
}

TEST(ApproxTokenizerTest, MultibyteUtf8CountsBytes) {
  const ApproxTokenizer tokenizer;
  EXPECT_EQ(tokenizer.CountTokens("\xc3\xa9"), 1);                  // é: 2 bytes
  EXPECT_EQ(tokenizer.CountTokens("\xe2\x82\xac\xe2\x82\xac"), 2);  // €€: 6 bytes
  EXPECT_EQ(tokenizer.CountTokens("\xf0\x9f\x98\x80"), 1);          // U+1F600: 4 bytes
  EXPECT_EQ(tokenizer.CountTokens("\xf0\x9f\x98\x80!"), 2);         // 5 bytes
}

TEST(ApproxTokenizerTest, ChatAddsThreePerMessageAndThreeForTheReply) {
  const ApproxTokenizer tokenizer;
  EXPECT_EQ(tokenizer.CountChatTokens({}), 3);
  EXPECT_EQ(tokenizer.CountChatTokens({{"user", ""}}), 6);
  EXPECT_EQ(tokenizer.CountChatTokens({{"system", "abcde"}, {"user", "abcd"}}), 3 + 5 + 4);
}

TEST(ApproxTokenizerTest, DecodeIsDeterministicAsciiWordsWithALeadingSpace) {
  const ApproxTokenizer tokenizer;
  std::set<std::string> words;
  for (std::int32_t id = 0; id < 1000; ++id) {
    const std::string word = tokenizer.Decode(id);
    EXPECT_EQ(word, tokenizer.Decode(id));
    ASSERT_GE(word.size(), 2u);
    EXPECT_EQ(word[0], ' ');
    for (const char c : word) {
      EXPECT_TRUE(c > 0 && c < 0x7F) << word;
    }
    words.insert(word);
  }
  EXPECT_GE(words.size(), 64u);
}

TEST(ApproxTokenizerTest, DecodeIsValidUtf8ForEveryKindOfId) {
  const ApproxTokenizer tokenizer;
  std::string text;
  for (const std::int32_t id : {0, 1, 63, 64, 65, 1000003, 2147483647, -1, -2147483647 - 1}) {
    text += tokenizer.Decode(id);
  }
  // Boost.JSON rejects invalid UTF-8, so a JSON string holding the text checks it.
  boost::json::error_code ec;
  const boost::json::value value = boost::json::parse("\"" + text + "\"", ec);
  ASSERT_FALSE(ec) << text;
  EXPECT_EQ(value.as_string(), text);
}

TEST(ApproxTokenizerTest, Name) { EXPECT_EQ(ApproxTokenizer().name(), "approx-4-bytes-per-token"); }

}  // namespace
}  // namespace spillway::api
