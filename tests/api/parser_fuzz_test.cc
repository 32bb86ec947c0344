// Robustness: random byte strings and random mutations of valid bodies never make the parser
// throw or crash; every outcome is a request with a prompt or a 400 error whose JSON rendering
// is valid. Seeded, so failures reproduce.

#include <array>
#include <cstdint>
#include <random>
#include <string>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "api/request_parser.h"
#include "api/responses.h"

namespace spillway::api {
namespace {

constexpr int kRandomInputs = 20000;
constexpr int kMutatedInputs = 20000;

const std::array<std::string, 3> kSeeds = {
    R"({"model": "m", "prompt": "Hello wörld", "max_tokens": 16, "temperature": 0.7,
        "top_p": 0.9, "n": 1, "stop": ["\n", "END"], "seed": 7, "stream": true,
        "stream_options": {"include_usage": true}, "ignore_eos": false, "user": "u"})",
    R"({"model": "m", "prompt": [[1, 2, 3, 2147483647]], "max_tokens": 5.0, "stop": "x"})",
    R"({"model": "m", "messages": [{"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "Hi "},
        {"type": "text", "text": "there"}]}, {"role": "assistant", "content": null}],
        "max_completion_tokens": 32, "max_tokens": 8, "stream": false})"};

/// Fragments worth splicing in: structure, edge numbers, bad UTF-8 and escapes.
const std::array<std::string, 24> kFragments = {"{",
                                                "}",
                                                "[",
                                                "]",
                                                "\"",
                                                ",",
                                                ":",
                                                "null",
                                                "true",
                                                "-1",
                                                "0",
                                                "1e400",
                                                "-1e400",
                                                "5.5",
                                                "2147483648",
                                                "\xff",
                                                "\xc3",
                                                "\\",
                                                "\\ud800",
                                                "\\u0",
                                                "[[[[[[[[",
                                                "\"prompt\"",
                                                "\"messages\"",
                                                "\"n\":2"};

/// Bytes from a JSON-ish alphabet half the time (so some inputs parse), else any byte.
std::string RandomBytes(std::mt19937& rng) {
  static constexpr std::string_view kJsonish = "{}[]\",:0123456789.eE-+ truenlfas\\u";
  std::string out(std::uniform_int_distribution<int>(0, 64)(rng), '\0');
  const bool jsonish = rng() % 2 == 0;
  for (char& c : out) {
    c = jsonish ? kJsonish[rng() % kJsonish.size()] : static_cast<char>(rng() & 0xFF);
  }
  return out;
}

/// Applies 1-4 random edits: overwrite, delete, insert a byte, or splice in a fragment.
std::string Mutate(std::string body, std::mt19937& rng) {
  const int edits = std::uniform_int_distribution<int>(1, 4)(rng);
  for (int e = 0; e < edits; ++e) {
    const std::size_t pos = body.empty() ? 0 : rng() % body.size();
    switch (rng() % 4) {
      case 0:
        if (!body.empty()) body[pos] = static_cast<char>(rng() & 0xFF);
        break;
      case 1:
        body.erase(pos, rng() % 8);
        break;
      case 2:
        body.insert(pos, 1, static_cast<char>(rng() & 0xFF));
        break;
      default:
        body.insert(pos, kFragments[rng() % kFragments.size()]);
    }
  }
  return body;
}

/// Empty when the outcome of parsing `body` is acceptable, else a description of the problem.
std::string CheckOutcome(const std::string& body, Endpoint endpoint) {
  Result<CompletionRequest, ApiError> result;
  try {
    result = ParseCompletionRequest(body, endpoint);
  } catch (...) {
    return "threw";
  }
  if (!result) {
    const ApiError error = result.error();
    if (error.http_status != 400 || error.message.empty()) {
      return "error without status 400 or message: " + error.message;
    }
    boost::json::error_code ec;
    boost::json::parse(ErrorJson(error), ec);
    return ec ? "ErrorJson is not valid JSON: " + ec.message() : "";
  }
  const CompletionRequest& request = *result;
  const bool has_prompt = endpoint == Endpoint::kChatCompletions
                              ? !request.messages.empty()
                              : !request.prompt_text.empty() || !request.prompt_token_ids.empty();
  return has_prompt ? "" : "accepted a request without a prompt";
}

Endpoint RandomEndpoint(std::mt19937& rng) {
  return rng() % 2 == 0 ? Endpoint::kCompletions : Endpoint::kChatCompletions;
}

TEST(ParserFuzzTest, SeedsAreValid) {
  EXPECT_TRUE(ParseCompletionRequest(kSeeds[0], Endpoint::kCompletions).has_value());
  EXPECT_TRUE(ParseCompletionRequest(kSeeds[1], Endpoint::kCompletions).has_value());
  EXPECT_TRUE(ParseCompletionRequest(kSeeds[2], Endpoint::kChatCompletions).has_value());
}

TEST(ParserFuzzTest, RandomBytesNeverThrowOrCrash) {
  std::mt19937 rng(20240601);
  int failures = 0;
  for (int i = 0; i < kRandomInputs && failures < 5; ++i) {
    const std::string body = RandomBytes(rng);
    const std::string problem = CheckOutcome(body, RandomEndpoint(rng));
    if (!problem.empty()) {
      ADD_FAILURE() << "input " << i << " (" << body.size() << " bytes): " << problem;
      ++failures;
    }
  }
}

TEST(ParserFuzzTest, MutatedValidBodiesNeverThrowOrCrash) {
  std::mt19937 rng(7);
  int failures = 0;
  int accepted = 0;
  for (int i = 0; i < kMutatedInputs && failures < 5; ++i) {
    const std::size_t seed = rng() % kSeeds.size();
    const Endpoint endpoint =
        seed == 2 ? Endpoint::kChatCompletions : RandomEndpoint(rng);  // mostly the matching one
    const std::string body = Mutate(kSeeds[seed], rng);
    const std::string problem = CheckOutcome(body, endpoint);
    if (!problem.empty()) {
      ADD_FAILURE() << "mutation " << i << ": " << problem << "\n" << body;
      ++failures;
    }
    accepted += ParseCompletionRequest(body, endpoint).has_value();
  }
  // Some mutations (inside string values, say) keep the body valid: both outcomes occur.
  EXPECT_GT(accepted, 0);
  EXPECT_LT(accepted, kMutatedInputs);
}

}  // namespace
}  // namespace spillway::api
