// Verdicts written back into a policy's text (src/policy/checklist_yaml.h): the two checklist
// sections replaced, every other line and comment kept, the result read back as written.

#include <string>

#include <gtest/gtest.h>

#include "common/text_file.h"
#include "policy/checklist_yaml.h"
#include "policy/policy_reader.h"

namespace spillway::policy {
namespace {

const std::string kYamlPolicy = std::string(SPILLWAY_SOURCE_DIR) + "/policies/reference.yaml";

TEST(ChecklistYamlTest, VerdictsReplaceTheSectionsAndReadBackWithEverythingElseKept) {
  const std::string text = testing_util::ReadTextFile(kYamlPolicy);
  Policy p = ReadPolicyString(text, "reference.yaml");
  p.validation[0].verdict = Verdict::kPass;
  p.validation[0].evidence = "p95 TTFT 95 ms: \"quoted\", #not a comment";
  p.validation[0].checked_at = "2026-12-05T04:11:10Z";
  p.cancellation[3].verdict = Verdict::kFail;
  p.cancellation[3].evidence = "KV usage 0.2 after 5 s";
  p.cancellation[3].checked_at = "2026-12-05";
  const std::string out = WithChecklists(text, p);
  const Policy back = ReadPolicyString(out, "verified.yaml");
  EXPECT_EQ(back.validation[0].verdict, Verdict::kPass);
  EXPECT_EQ(back.validation[0].evidence, p.validation[0].evidence);
  EXPECT_EQ(back.validation[0].checked_at, "2026-12-05T04:11:10Z");
  EXPECT_EQ(back.cancellation[3].verdict, Verdict::kFail);
  EXPECT_EQ(back.validation[1].verdict, Verdict::kUnchecked);
  EXPECT_EQ(back.values.size(), p.values.size());
  // The file's comments and the sections after the checklists are where they were.
  EXPECT_EQ(out.substr(0, 300), text.substr(0, 300));
  EXPECT_NE(out.find("\ntimeouts:\n  client_s:"), std::string::npos);
  EXPECT_LT(out.find("\ncancellation:"), out.find("\ntimeouts:"));
  // Verified again: the same text.
  EXPECT_EQ(WithChecklists(out, back), out);
}

TEST(ChecklistYamlTest, AMissingSectionIsAppendedAndAFlowStyleOneReplaced) {
  const std::string text = testing_util::ReadTextFile(kYamlPolicy);
  const std::size_t at = text.find("\nvalidation:");
  ASSERT_NE(at, std::string::npos);
  const std::string without = text.substr(0, at + 1) + "# the end\n";
  Policy p = ReadPolicyString(without, "without.yaml");
  p.validation[6].verdict = Verdict::kPass;
  p.validation[6].evidence = "within 15%";
  p.validation[6].checked_at = "2026-12-05";
  const std::string out = WithChecklists(without, p);
  EXPECT_NE(out.find("# the end\n\nvalidation:\n"), std::string::npos) << out;
  EXPECT_EQ(ReadPolicyString(out, "out.yaml").validation[6].verdict, Verdict::kPass);

  const std::string flow = without + "validation: {trace_replay: {verdict: unchecked}}\n";
  const std::string replaced = WithChecklists(flow, p);
  EXPECT_EQ(replaced.find("validation: {"), std::string::npos) << replaced;
  EXPECT_EQ(ReadPolicyString(replaced, "flow.yaml").validation[6].evidence, "within 15%");
}

}  // namespace
}  // namespace spillway::policy
