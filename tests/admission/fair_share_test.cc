// Fair shedding across flows (admission/fair_share.h): a flow admitted above r x its offered share
// yields while another flow, refused for load, is admitted below min_share_ratio x its offered
// share; the shares decay with the window; the flows kept are bounded.

#include "admission/fair_share.h"

#include <gtest/gtest.h>

#include "admission/admission.h"

#include <string>

namespace spillway {
namespace {

FairShareConfig FairConfig(double ratio) {
  FairShareConfig c;
  c.min_share_ratio = ratio;
  c.window_s = 10;
  c.contention_s = 2;
  return c;
}

// `offered` requests of `flow` at `t`, the first `admitted` of them admitted.
void OfferFlow(FairShare* fair, const std::string& flow, int offered, int admitted, Seconds t) {
  for (int i = 0; i < offered; ++i) {
    fair->OnOffered(flow, t);
    if (i < admitted) {
      fair->OnAdmitted(flow, t);
    }
  }
}

TEST(FairShareTest, OffNeverYields) {
  FairShare fair(FairConfig(0));
  OfferFlow(&fair, "chat", 80, 80, 0);
  OfferFlow(&fair, "document", 20, 0, 0);
  fair.OnRefusedForLoad("document", 0);
  EXPECT_FALSE(fair.enabled());
  EXPECT_FALSE(fair.ShouldYield("chat", 0));
  EXPECT_TRUE(fair.Shares(0).empty()) << "nothing is counted while off";
}

TEST(FairShareTest, AFlowAboveItsShareYieldsToAStarvedOne) {
  FairShare fair(FairConfig(0.5));
  OfferFlow(&fair, "chat", 80, 80, 0);
  OfferFlow(&fair, "document", 20, 2, 0);
  // Documents: 20% of the offered, 2 / 82 = 2.4% of the admitted, below 0.5 x 20%.
  fair.OnRefusedForLoad("document", 0);
  EXPECT_TRUE(fair.ShouldYield("chat", 0.5));
  EXPECT_FALSE(fair.ShouldYield("document", 0.5)) << "the starved flow never yields";
  const std::vector<FlowShare> shares = fair.Shares(0.5);
  ASSERT_EQ(shares.size(), 2U);
  EXPECT_EQ(shares[1].flow, "document");
  EXPECT_NEAR(shares[1].offered_share, 0.2, 1e-9);
  EXPECT_NEAR(shares[1].admitted_share, 2.0 / 82, 1e-9);
  EXPECT_TRUE(shares[1].starved);
  EXPECT_FALSE(shares[0].starved);
}

// A flow admitted a little below its offered share still yields while it is above the bound
// (many small flows sit around parity by chance: with only those above it yielding, documents
// stayed starved); one at or below the bound never does, so yielding keeps every flow above it.
TEST(FairShareTest, AFlowAboveTheBoundYieldsEvenBelowParityAndOneAtTheBoundDoesNot) {
  FairShare fair(FairConfig(0.5));
  OfferFlow(&fair, "chat-a", 40, 40, 0);
  OfferFlow(&fair, "chat-b", 20, 14, 0);  // 30% offered, 14 / 56 = 25% admitted: 0.83 of it
  OfferFlow(&fair, "chat-c", 20, 0, 0);   // refused, not contending
  OfferFlow(&fair, "document", 20, 2, 0);
  fair.OnRefusedForLoad("document", 0);
  EXPECT_TRUE(fair.ShouldYield("chat-a", 0.5));
  EXPECT_TRUE(fair.ShouldYield("chat-b", 0.5)) << "above 0.5 x its share, below parity";
  EXPECT_FALSE(fair.ShouldYield("chat-c", 0.5)) << "at 0, below the bound itself";
  EXPECT_FALSE(fair.ShouldYield("document", 0.5));
}

TEST(FairShareTest, AFlowNoLongerRefusedDoesNotContend) {
  FairShare fair(FairConfig(0.5));
  OfferFlow(&fair, "chat", 80, 80, 0);
  OfferFlow(&fair, "document", 20, 2, 0);
  fair.OnRefusedForLoad("document", 0);
  EXPECT_TRUE(fair.ShouldYield("chat", 2.0));
  EXPECT_FALSE(fair.ShouldYield("chat", 2.1)) << "its last refusal is older than contention_s";
}

TEST(FairShareTest, AFlowWhoseAdmissionsMostlyFailIsNotStarved) {
  FairShare fair(FairConfig(0.5));
  OfferFlow(&fair, "chat", 80, 80, 0);
  OfferFlow(&fair, "huge", 20, 2, 0);
  fair.OnRefusedForLoad("huge", 0);
  fair.OnFailed("huge", 0);
  EXPECT_TRUE(fair.ShouldYield("chat", 0)) << "one of its two admitted failed: still starved";
  fair.OnFailed("huge", 0);
  EXPECT_FALSE(fair.ShouldYield("chat", 0))
      << "both failed at the deadline: room in the queue would not have served it";
}

TEST(FairShareTest, AFlowAtItsFloorIsNotStarved) {
  FairShare fair(FairConfig(0.5));
  OfferFlow(&fair, "chat", 80, 40, 0);
  OfferFlow(&fair, "document", 20, 6, 0);
  // Documents: 6 / 46 = 13% of the admitted, above 0.5 x 20%.
  fair.OnRefusedForLoad("document", 0);
  EXPECT_FALSE(fair.ShouldYield("chat", 0));
}

TEST(FairShareTest, AFlowBelowItsOwnShareNeverYields) {
  FairShare fair(FairConfig(1.0));
  OfferFlow(&fair, "chat", 50, 40, 0);    // 40 / 60 admitted = 67% < its 71% offered share
  OfferFlow(&fair, "coding", 10, 10, 0);  // 17% admitted, 14% offered
  OfferFlow(&fair, "document", 10, 10, 0);
  fair.OnRefusedForLoad("chat", 0);
  fair.OnRefusedForLoad("document", 0);
  EXPECT_FALSE(fair.ShouldYield("chat", 0));
  EXPECT_FALSE(fair.ShouldYield("unknown", 0)) << "a flow never seen has nothing to give up";
}

TEST(FairShareTest, SharesAreRecentOnes) {
  FairShare fair(FairConfig(0.5));
  OfferFlow(&fair, "document", 20, 0, 0);
  OfferFlow(&fair, "chat", 20, 20, 0);
  // Later the documents are served as offered: the old refusals fade with the window.
  for (int s = 1; s <= 60; ++s) {
    OfferFlow(&fair, "chat", 1, 1, s);
    OfferFlow(&fair, "document", 1, 1, s);
  }
  for (const FlowShare& f : fair.Shares(60)) {
    EXPECT_NEAR(f.admitted_share, 0.5, 0.01) << f.flow;
    EXPECT_NEAR(f.offered_share, 0.5, 0.01) << f.flow;
  }
}

TEST(FairShareTest, FlowsBeyondTheBoundShareOne) {
  FairShare fair(FairConfig(0.5));
  for (std::size_t i = 0; i < 3 * FairShare::kMaxFlows; ++i) {
    OfferFlow(&fair, "flow-" + std::to_string(i), 1, 1, 0);
  }
  const std::vector<FlowShare> shares = fair.Shares(0);
  EXPECT_EQ(shares.size(), FairShare::kMaxFlows + 1);
  double offered = 0;
  for (const FlowShare& f : shares) {
    offered += f.offered_share;
  }
  EXPECT_NEAR(offered, 1.0, 1e-9);
}

// The controller: with fair shedding on, a request its policy admits is refused with 429
// fair_share while its flow must yield; the refusals for load make the other flow contend.
TEST(FairShareTest, TheControllerRefusesTheFlowThatMustYield) {
  AdmissionConfig config;
  config.policy = AdmissionPolicy::kPredictive;
  config.ttft_slo_s = 1.0;
  config.estimator.service_rate_prior_rps = 10;
  config.estimator.prefill_tokens_per_s_prior = 2000;
  config.estimator.step_time_prior_s = 0.01;
  config.fair_share = FairConfig(0.5);
  AdmissionController admission(config, 0);
  EngineStats idle;
  idle.max_num_seqs = 32;
  EngineStats queued = idle;  // 20 waiting behind a full batch: W_est 2 s
  queued.num_running = 32;
  queued.num_waiting = 20;
  queued.waiting_prompt_tokens = 20 * 32;
  queued.prefill_backlog_tokens = queued.waiting_prompt_tokens;
  const auto request = [](std::string_view flow) {
    return AdmissionRequest{.tenant = "t",
                            .prompt_tokens = 32,
                            .max_output_tokens = 16,
                            .ignore_eos = true,
                            .flow = flow};
  };
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(admission.Decide(request("chat"), idle, 0.1 * i).admitted());
  }
  for (int i = 0; i < 2; ++i) {
    const AdmissionDecision d = admission.Decide(request("document"), queued, 1.0);
    ASSERT_EQ(d.reason, OverloadReason::kQueueDelayExceeded);
  }
  const AdmissionDecision d = admission.Decide(request("chat"), idle, 1.1);
  EXPECT_EQ(d.reason, OverloadReason::kFairShare);
  EXPECT_EQ(d.verdict, Verdict::kShed);
  EXPECT_EQ(d.retry_after_s, 1);
  // The document finds the shorter queue and is admitted; chats stay refused while its flow
  // is below half its offered share: 1 of the 9 admitted (11%) against 3 of 13 offered (23%).
  EXPECT_TRUE(admission.Decide(request("document"), idle, 1.2).admitted());
  EXPECT_EQ(admission.Decide(request("chat"), idle, 1.3).reason, OverloadReason::kFairShare);
  // Without a fairness ID the tenant is the flow: not starved, and above its share.
  EXPECT_TRUE(admission
                  .Decide(AdmissionRequest{.tenant = "other",
                                           .prompt_tokens = 32,
                                           .max_output_tokens = 16,
                                           .ignore_eos = true},
                          idle, 1.4)
                  .admitted());
}

}  // namespace
}  // namespace spillway
