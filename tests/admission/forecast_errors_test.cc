// ForecastErrors (admission/forecast_errors.h): the forecast policy's margin is a high quantile
// of its measured errors, kept per priority class.

#include <gtest/gtest.h>

#include "admission/forecast_errors.h"

namespace spillway {
namespace {

TEST(ForecastErrorsTest, EachClassGetsTheQuantileOfItsOwnErrors) {
  ForecastErrors e({.quantile = 0.9, .window = 100, .every = 10, .min_samples = 20});
  for (int i = 1; i <= 100; ++i) {
    e.Observe(0, 0.5, 0.5 + 0.001 * i);  // errors 1 to 100 ms
    e.Observe(1, 0.5, 0.5 + 0.01 * i);   // 10 ms to 1 s: overtaken by class 0
  }
  EXPECT_NEAR(e.Margin(0), 0.090, 1e-9);
  EXPECT_NEAR(e.Margin(1), 0.90, 1e-9);
  EXPECT_EQ(e.Margin(2), 0.0);  // nothing measured for it
}

TEST(ForecastErrorsTest, ThePriorBeforeTheWarmUpAndNoMarginForPessimism) {
  ForecastErrors e({.quantile = 0.5, .window = 10, .every = 1, .min_samples = 5}, 0.1);
  EXPECT_EQ(e.Margin(0), 0.1);
  for (int i = 0; i < 4; ++i) {
    e.Observe(0, 0.1, 0.9);
  }
  EXPECT_EQ(e.Margin(0), 0.1);
  for (int i = 0; i < 10; ++i) {
    e.Observe(0, 0.9, 0.1);  // forecasts that were too late loosen nothing
  }
  EXPECT_EQ(e.Margin(0), 0.0);
}

TEST(ForecastErrorsTest, ADropAtTheQueueHeadCountsItsWaitAndNonFiniteIsIgnored) {
  ForecastErrors e({.quantile = 1.0, .window = 10, .every = 1, .min_samples = 1});
  e.Observe(0, 0.2, 0.97);  // dropped at 0.97 s: its TTFT was at least that
  EXPECT_NEAR(e.Margin(0), 0.77, 1e-9);
  e.Observe(0, kNever, 0.5);
  e.Observe(0, 0.2, kNever);
  EXPECT_NEAR(e.Margin(0), 0.77, 1e-9);
}

TEST(ForecastErrorsTest, ClassesAreBounded) {
  // Classes are client-chosen integers: past kMaxClasses, new ones share the last one's.
  ForecastErrors e({.quantile = 1.0, .window = 4, .every = 1, .min_samples = 1});
  for (std::int32_t c = 0; c < 1000; ++c) {
    e.Observe(c, 0, 0.001 * static_cast<double>(c % 100));
  }
  EXPECT_EQ(e.Margin(0), 0.0);
  EXPECT_GT(e.Margin(999), 0.0);  // shares the last tracked class's errors
}

}  // namespace
}  // namespace spillway
