// CheckPolicy: the lesson's rules on a policy that reads. Each test breaks one rule in the
// shipped reference policy and expects the finding that names it.

#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "common/text_file.h"
#include "policy/policy_check.h"
#include "policy/policy_reader.h"

namespace spillway::policy {
namespace {

using std::chrono::sys_days;

const std::string kReference = std::string(SPILLWAY_SOURCE_DIR) + "/policies/reference.yaml";

std::string ReferenceText() { return testing_util::ReadTextFile(kReference); }

sys_days Day(const char* text) { return *ParseDay(text); }

// The findings for the reference policy with `from` replaced by `to` (once), as of `today`.
std::vector<Finding> FindingsWith(const std::string& from, const std::string& to,
                                  const char* today = "2026-12-05") {
  std::string yaml = ReferenceText();
  const auto at = yaml.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) {
    yaml.replace(at, from.size(), to);
  }
  return CheckPolicy(ReadPolicyString(yaml, "reference.yaml"), Day(today));
}

// The error findings' texts, one per line.
std::string Errors(const std::vector<Finding>& findings) {
  std::string out;
  for (const Finding& f : findings) {
    if (f.severity == Severity::kError) {
      out += f.Text() + "\n";
    }
  }
  return out;
}

TEST(PolicyCheckTest, TheShippedReferencePolicyHasNoErrorOnTheDayItWasMeasured) {
  const Policy p = ReadPolicyFile(kReference);
  const std::vector<Finding> findings = CheckPolicy(p, Day("2026-12-05"));
  EXPECT_FALSE(HasError(findings)) << Errors(findings);
}

TEST(PolicyCheckTest, AMeasurementOlderThanMaxAgeIsAnErrorThatSaysHowToRedoIt) {
  // max_age_days is 90; the measurements are from 2026-12-05.
  const Policy p = ReadPolicyFile(kReference);
  EXPECT_FALSE(HasError(CheckPolicy(p, Day("2027-03-05"))));  // 90 days: still fresh
  const std::string errors = Errors(CheckPolicy(p, Day("2027-03-06")));
  EXPECT_NE(errors.find("capacity.single_replica_mu_rps: error: measured.at "
                        "2026-12-05T01:01:00Z is 91 days old, older than policy.max_age_days "
                        "(90): re-measure with `spillway sim --scenario"),
            std::string::npos)
      << errors;
}

TEST(PolicyCheckTest, AMeasurementDatedAfterTodayOrNotADateIsAnError) {
  EXPECT_NE(Errors(FindingsWith("at: 2026-12-05T01:01:00Z", "at: 2026-12-06"))
                .find("measured.at 2026-12-06 is after today (2026-12-05)"),
            std::string::npos);
  EXPECT_NE(Errors(FindingsWith("at: 2026-12-05T01:01:00Z", "at: yesterday"))
                .find("measured.at 'yesterday' is not a date"),
            std::string::npos);
  EXPECT_NE(
      Errors(FindingsWith("at: 2026-12-05T01:01:00Z", "at: 2026-02-30")).find("is not a date"),
      std::string::npos);
}

TEST(PolicyCheckTest, AValueWithoutASourceIsAnError) {
  const std::string bare =
      Errors(FindingsWith("replicas:\n    value: 1\n    decision: the reference deployment is "
                          "one engine, overloaded on purpose (make demo's gateway part runs "
                          "three)",
                          "replicas: 1"));
  EXPECT_NE(bare.find("capacity.replicas: error: Replicas R has no source"), std::string::npos)
      << bare;
}

TEST(PolicyCheckTest, AMeasuredFieldMustBeMeasured) {
  std::string yaml = ReferenceText();
  const auto from = yaml.find("  binding_slo:");
  const auto to = yaml.find("topology:");
  yaml.replace(from, to - from, "  binding_slo:\n    value: ttft\n    decision: we think so\n\n");
  const std::string errors =
      Errors(CheckPolicy(ReadPolicyString(yaml, "reference.yaml"), Day("2026-12-05")));
  EXPECT_NE(errors.find("capacity.binding_slo: error: Binding SLO must be measured, not a "
                        "decision"),
            std::string::npos)
      << errors;
}

TEST(PolicyCheckTest, AMeasurementOnAnotherProfileOrEngineIsAnError) {
  const std::string profile =
      Errors(FindingsWith("      profile: seed-a100-7b", "      profile: h100-llama2-7b"));
  EXPECT_NE(profile.find("measured on profile h100-llama2-7b, but model.profile is "
                         "seed-a100-7b: re-measure"),
            std::string::npos)
      << profile;
  const std::string engine =
      Errors(FindingsWith("      engine: spillway emulated executor", "      engine: vLLM 0.6.3"));
  EXPECT_NE(engine.find("measured on engine vLLM 0.6.3, but engine.version is spillway "
                        "emulated executor"),
            std::string::npos)
      << engine;
}

TEST(PolicyCheckTest, TheTimeoutHierarchyIsStrictlyOrdered) {
  const std::string gateway = Errors(FindingsWith("    value: 4.5\n", "    value: 5.0\n"));
  EXPECT_NE(gateway.find("timeouts.gateway_s: error: the gateway timeout (5 s) must be below "
                         "the client's (5 s)"),
            std::string::npos)
      << gateway;
  const std::string ingress = Errors(
      FindingsWith("  queue_ingress_s:\n    value: 1.0", "  queue_ingress_s:\n    value: 4.5"));
  EXPECT_NE(ingress.find("timeouts.queue_ingress_s: error: the queue ingress deadline (4.5 s) "
                         "must be below the gateway timeout (4.5 s)"),
            std::string::npos)
      << ingress;
  EXPECT_NE(ingress.find("is past the TTFT SLO (1 s)"), std::string::npos) << ingress;
}

TEST(PolicyCheckTest, CapacityBelowTheBaseLoadIsAnErrorAndBelowTheBurstAWarning) {
  const std::vector<Finding> reference = CheckPolicy(ReadPolicyFile(kReference), Day("2026-12-05"));
  const auto warning = std::find_if(reference.begin(), reference.end(), [](const Finding& f) {
    return f.severity == Severity::kWarning &&
           f.message.find("below lambda_burst") != std::string::npos;
  });
  EXPECT_NE(warning, reference.end());
  const std::string errors =
      Errors(FindingsWith("  base_rate_rps:\n    value: 8", "  base_rate_rps:\n    value: 12"));
  EXPECT_NE(errors.find("capacity.replicas: error: R x mu = 10.3 req/s is below lambda_base "
                        "(12 req/s)"),
            std::string::npos)
      << errors;
}

TEST(PolicyCheckTest, AFailedChecklistItemIsAnErrorWithItsEvidence) {
  const std::string errors =
      Errors(FindingsWith("  retry_storm:\n    verdict: unchecked",
                          "  retry_storm:\n    verdict: fail\n    evidence: peak 6.1x the mean\n"
                          "    checked_at: 2026-12-05"));
  EXPECT_NE(errors.find("validation.retry_storm: error: failed: peak 6.1x the mean"),
            std::string::npos)
      << errors;
}

TEST(PolicyCheckTest, ParseDayTakesADateOrAUtcTimestampAndNothingElse) {
  EXPECT_EQ(ParseDay("2026-12-05"), ParseDay("2026-12-05T23:59:59Z"));
  EXPECT_EQ(ParseDay("2026-12-05T01:02:03.250Z"), ParseDay("2026-12-05"));
  EXPECT_FALSE(ParseDay("2026-12-05T01:02:03+01:00"));
  EXPECT_FALSE(ParseDay("2026-13-01"));
  EXPECT_FALSE(ParseDay("2026-12-5"));
  EXPECT_FALSE(ParseDay(""));
  // A time of day that is not one (a new user's 25:61 passed).
  EXPECT_FALSE(ParseDay("2026-12-05T25:61:00Z"));
  EXPECT_FALSE(ParseDay("2026-12-05T99:99:99Z"));
  EXPECT_FALSE(ParseDay("2026-12-05T01:02:03.Z"));
  EXPECT_FALSE(ParseDay("2026-12-05T01:02:03.2xZ"));
  EXPECT_TRUE(ParseDay("2026-12-31T23:59:60Z"));  // a leap second
}

TEST(PolicyCheckTest, NumbersThatContradictEachOtherAreFound) {
  const std::string weights = Errors(
      FindingsWith("  weight_bytes:\n    value: 13.48e9", "  weight_bytes:\n    value: 130e9"));
  EXPECT_NE(weights.find("model.weight_bytes: error: the weights (1.3e+11 bytes) do not fit"),
            std::string::npos)
      << weights;
  const std::vector<Finding> waiting =
      FindingsWith("  waiting_requests:\n    value: 10", "  waiting_requests:\n    value: 1000");
  EXPECT_TRUE(std::any_of(waiting.begin(), waiting.end(), [](const Finding& f) {
    return f.message.find("it can never fire") != std::string::npos;
  }));
  EXPECT_NE(Errors(FindingsWith("cost:\n", "approval: {date: not a date}\ncost:\n"))
                .find("approval.date 'not a date' is not a date"),
            std::string::npos);
}

}  // namespace
}  // namespace spillway::policy
