// The engine flags against the cost model (src/policy/engine_flags_check.h): the reference
// policy's budgets fit its TPOT SLO on its profile; a token budget or a batch that does not is
// an error naming the flag; a batch whose longest prompts overflow the KV cache a warning.

#include <string>

#include <gtest/gtest.h>

#include "common/text_file.h"
#include "config/profile.h"
#include "policy/engine_flags_check.h"
#include "policy/policy_reader.h"

namespace spillway::policy {
namespace {

const std::string kFlagsSource = SPILLWAY_SOURCE_DIR;

// The reference policy with `from` replaced by `to` (a line of it).
Policy ReferenceWith(const std::string& from, const std::string& to) {
  std::string text = testing_util::ReadTextFile(kFlagsSource + "/policies/reference.yaml");
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) {
    text.replace(at, from.size(), to);
  }
  return ReadPolicyString(text, "reference.yaml");
}

Profile Seed() { return LoadProfileByName("seed-a100-7b", kFlagsSource + "/profiles"); }

TEST(EngineFlagsCheckTest, TheReferenceBudgetsFitTheTpotSloOnTheirProfile) {
  EXPECT_TRUE(CheckEngineFlags(ReferenceWith("", ""), Seed()).empty());
}

TEST(EngineFlagsCheckTest, ABudgetPastTheTpotSloIsAnErrorNamingTheFlag) {
  const std::vector<Finding> tokens =
      CheckEngineFlags(ReferenceWith("max_num_batched_tokens:\n    value: 200",
                                     "max_num_batched_tokens:\n    value: 2048"),
                       Seed());
  ASSERT_EQ(tokens.size(), 1U);
  EXPECT_EQ(tokens[0].severity, Severity::kError);
  EXPECT_NE(tokens[0].Text().find("engine.max_num_batched_tokens: error: a step of 27 decodes "
                                  "and a 2021-token prefill chunk takes"),
            std::string::npos)
      << tokens[0].Text();
  const std::vector<Finding> seqs = CheckEngineFlags(
      ReferenceWith("max_num_seqs:\n    value: 27", "max_num_seqs:\n    value: 250"), Seed());
  ASSERT_FALSE(seqs.empty());
  EXPECT_NE(seqs[0].Text().find("engine.max_num_seqs: error: a step of 250 decodes"),
            std::string::npos)
      << seqs[0].Text();
  ASSERT_EQ(seqs.size(), 2U);  // and 250 prompts of 512 tokens overflow the KV cache
  EXPECT_EQ(seqs[1].severity, Severity::kWarning);
  EXPECT_NE(seqs[1].message.find("a full batch of long prompts preempts"), std::string::npos);
}

}  // namespace
}  // namespace spillway::policy
