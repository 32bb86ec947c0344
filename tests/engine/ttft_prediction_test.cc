// Engine::PredictFirstToken: the engine's own scheduler stepped forward on a copy predicts
// when a waiting request gets its first token (issue 14, "A per-request prediction").

#include <gtest/gtest.h>

#include <vector>

#include "engine/engine_driver.h"

namespace spillway {
namespace {

using enginetest::EngineDriver;

EngineRequest Exact(std::int32_t prompt_tokens, std::int32_t max_tokens) {
  return enginetest::Ask(prompt_tokens, max_tokens, /*ignore_eos=*/true);
}

TEST(TtftPredictionTest, WithKnownLengthsThePredictionIsWhatHappens) {
  // 60 requests of mixed shapes on 27 slots: the last ones wait for completions, for prefill
  // budget and behind each other. Nothing else arrives, and every length is known (ignore_eos):
  // the forward run is the run.
  EngineDriver driver(enginetest::Resolve(enginetest::Seed("unbounded")));
  std::vector<RequestId> ids;
  for (int i = 0; i < 60; ++i) {
    ids.push_back(driver.Offer(Exact(i % 3 == 0 ? 512 : 32, i % 2 == 0 ? 64 : 128)));
  }
  driver.RunUntil(0.05);  // a step in flight or just done, some requests running
  std::vector<Seconds> predicted;
  for (const RequestId id : ids) {
    predicted.push_back(driver.engine().PredictFirstToken(id, driver.now(), 60));
  }
  const EngineStats before = driver.engine().stats();
  driver.RunToIdle(120);
  EXPECT_EQ(before.num_waiting + before.num_running, 60);  // PredictFirstToken left it alone
  int waiting = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (predicted[i] == kNever) {
      continue;  // running already
    }
    ++waiting;
    const Seconds actual = driver.outcome(ids[i]).first_token_s - 0.05;
    EXPECT_NEAR(predicted[i], actual, 0.02) << "request " << ids[i];
  }
  EXPECT_GT(waiting, 30);
}

TEST(TtftPredictionTest, ARequestNotWaitingHasNoPrediction) {
  EngineDriver driver(enginetest::Resolve(enginetest::Seed("unbounded")));
  const RequestId id = driver.Offer(Exact(32, 64));
  driver.RunUntil(0.2);  // it has its first token
  EXPECT_EQ(driver.engine().PredictFirstToken(id, driver.now(), 10), kNever);
  EXPECT_EQ(driver.engine().PredictFirstToken(999, driver.now(), 10), kNever);
}

TEST(TtftPredictionTest, PastTheRequestDeadlineIsNever) {
  // The server aborts a request at its deadline (4.5 s here): in the forward run too, so a
  // request that would still wait then never gets its first token.
  EngineDriver driver(enginetest::Resolve(enginetest::Seed("unbounded")));
  std::vector<RequestId> ids;
  for (int i = 0; i < 200; ++i) {
    ids.push_back(driver.Offer(Exact(32, 256)));
  }
  EXPECT_EQ(driver.engine().PredictFirstToken(ids.back(), 0, 120), kNever);
  EXPECT_NE(driver.engine().PredictFirstToken(ids[20], 0, 120), kNever);  // in the first batch
}

TEST(TtftPredictionTest, BeyondTheHorizonIsNever) {
  EngineDriver driver(enginetest::Resolve(enginetest::Seed("unbounded")));
  std::vector<RequestId> ids;
  for (int i = 0; i < 200; ++i) {  // 8 waves of 27, short enough to start before the deadline
    ids.push_back(driver.Offer(Exact(32, 8)));
  }
  EXPECT_EQ(driver.engine().PredictFirstToken(ids.back(), 0, 1.0), kNever);
  EXPECT_NE(driver.engine().PredictFirstToken(ids.back(), 0, 120), kNever);
}

}  // namespace
}  // namespace spillway
