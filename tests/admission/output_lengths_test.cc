// What admission expects a request to generate, learned from completions (output_lengths.h).

#include "admission/output_lengths.h"

#include <gtest/gtest.h>

#include <set>

namespace spillway {
namespace {

/// A request with a 32-token prompt (unless given) that does not ignore EOS.
OutputQuery Cap(std::int32_t max_tokens, std::int32_t prompt_tokens = 32) {
  return {max_tokens, prompt_tokens, false};
}

TEST(OutputLengthsTest, TheCapIsTheEstimateUntilEnoughCompletionsWereSeen) {
  OutputLengths lengths({.window = 64, .min_samples = 4});
  EXPECT_FALSE(lengths.Known(Cap(256)));
  EXPECT_DOUBLE_EQ(lengths.Mean(Cap(256)), 256);
  for (int i = 0; i < 3; ++i) {
    lengths.OnFinished(Cap(256), 64);
  }
  EXPECT_DOUBLE_EQ(lengths.Mean(Cap(256)), 256);  // 3 < min_samples
  lengths.OnFinished(Cap(256), 64);
  EXPECT_TRUE(lengths.Known(Cap(256)));
  EXPECT_DOUBLE_EQ(lengths.Mean(Cap(256)), 64);
  EXPECT_EQ(lengths.Quantile(Cap(256), 0.9), 64);
}

TEST(OutputLengthsTest, ADrawForARunningRequestIsOneOfTheLongerLengths) {
  // Learned 16 of each of 32, 64, 128 and 512 (cap 256): a request that has generated 100
  // stops at 128 or at its cap, never earlier; one past every learned length goes as far again
  // (at most its cap): the lengths learned no longer describe it.
  OutputLengths lengths;
  for (int i = 0; i < 16; ++i) {
    for (const std::int32_t n : {32, 64, 128, 512}) {
      lengths.OnFinished(Cap(1024), n);
    }
  }
  std::set<std::int32_t> drawn;
  for (int k = 0; k < 100; ++k) {
    drawn.insert(lengths.SampleBeyond(Cap(256), 100, k / 100.0));
  }
  EXPECT_EQ(drawn, (std::set<std::int32_t>{128, 256}));
  EXPECT_EQ(lengths.SampleBeyond(Cap(2048), 600, 0.5), 1200);
  EXPECT_EQ(lengths.SampleBeyond(Cap(1024), 600, 0.5), 1024);
  EXPECT_EQ(lengths.SampleBeyond(Cap(1024), 0, 0.0), 32);
  // Exact and unknown lengths are the cap.
  EXPECT_EQ(lengths.SampleBeyond({256, 32, true}, 100, 0.5), 256);
  EXPECT_EQ(OutputLengths().SampleBeyond(Cap(256), 10, 0.5), 256);
}

TEST(OutputLengthsTest, IgnoreEosIsExactAndTeachesNothing) {
  OutputLengths lengths({.window = 64, .min_samples = 1});
  lengths.OnFinished({256, 32, true}, 256);
  EXPECT_EQ(lengths.samples(), 0);
  lengths.OnFinished(Cap(256), 32);
  EXPECT_TRUE(lengths.Known({256, 32, true}));
  EXPECT_DOUBLE_EQ(lengths.Mean({256, 32, true}), 256);
  EXPECT_EQ(lengths.Quantile({256, 32, true}, 0.5), 256);
  EXPECT_DOUBLE_EQ(lengths.Mean(Cap(256)), 32);
}

TEST(OutputLengthsTest, ARequestThatRanToItsCapCountsAsLongerThanAnyCap) {
  // Every request ran to its cap (the emulated engine without hidden lengths): each cap is
  // predicted to run to its end, whatever caps share the bucket.
  OutputLengths lengths({.window = 64, .min_samples = 2});
  lengths.OnFinished(Cap(64), 64);
  lengths.OnFinished(Cap(100), 100);
  EXPECT_DOUBLE_EQ(lengths.Mean(Cap(100)), 100);
  EXPECT_DOUBLE_EQ(lengths.Mean(Cap(64)), 64);
  EXPECT_EQ(lengths.Quantile(Cap(127), 0.5), 127);
}

TEST(OutputLengthsTest, TheMeanAndQuantileAreOfTheLengthsCappedAtTheRequestsMaxTokens) {
  OutputLengths lengths({.window = 64, .min_samples = 10});
  for (int i = 1; i <= 10; ++i) {
    lengths.OnFinished(Cap(512), 40 * i);  // 40, 80, ..., 400 under a 512 cap
  }
  EXPECT_DOUBLE_EQ(lengths.Mean(Cap(512)), 220);
  EXPECT_EQ(lengths.Quantile(Cap(512), 0.9), 360);
  EXPECT_EQ(lengths.Quantile(Cap(512), 1.0), 400);
  // A 300 cap (bucket 256-511: the same clients) cuts the longer ones at 300.
  EXPECT_DOUBLE_EQ(lengths.Mean(Cap(300)),
                   (40 + 80 + 120 + 160 + 200 + 240 + 280 + 3 * 300) / 10.0);
  EXPECT_EQ(lengths.Quantile(Cap(300), 0.9), 300);
}

TEST(OutputLengthsTest, PromptsOfDifferentLengthsUnderTheSameCapAreToldApart) {
  OutputLengths lengths({.window = 64, .min_samples = 4});
  for (int i = 0; i < 4; ++i) {
    lengths.OnFinished(Cap(256, 32), 64);    // chat turns
    lengths.OnFinished(Cap(256, 512), 128);  // documents
  }
  EXPECT_DOUBLE_EQ(lengths.Mean(Cap(256, 40)), 64);
  EXPECT_DOUBLE_EQ(lengths.Mean(Cap(256, 600)), 128);
  // A prompt length not seen yet under this cap: the cap's completions, all of them.
  EXPECT_DOUBLE_EQ(lengths.Mean(Cap(256, 4000)), 96);
}

TEST(OutputLengthsTest, ACapNotSeenFallsBackToAllCompletions) {
  OutputLengths lengths({.window = 64, .min_samples = 4});
  for (int i = 0; i < 4; ++i) {
    lengths.OnFinished(Cap(256), 50);  // cap bucket 256-511
  }
  EXPECT_DOUBLE_EQ(lengths.Mean(Cap(1024)), 50);  // bucket 1024-2047 is empty: all of them
  for (int i = 0; i < 4; ++i) {
    lengths.OnFinished(Cap(1024), 700);
  }
  EXPECT_DOUBLE_EQ(lengths.Mean(Cap(1024)), 700);  // its own group now
  EXPECT_DOUBLE_EQ(lengths.Mean(Cap(256)), 50);
}

TEST(OutputLengthsTest, OnlyTheNewestWindowOfCompletionsCounts) {
  OutputLengths lengths({.window = 8, .min_samples = 8});
  for (int i = 0; i < 8; ++i) {
    lengths.OnFinished(Cap(256), 200);
  }
  for (int i = 0; i < 8; ++i) {
    lengths.OnFinished(Cap(256), 20);
  }
  EXPECT_DOUBLE_EQ(lengths.Mean(Cap(256)), 20);
  EXPECT_EQ(lengths.samples(), 16);
}

}  // namespace
}  // namespace spillway
