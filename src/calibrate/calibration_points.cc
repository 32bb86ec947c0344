#include "calibrate/calibration_points.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace spillway::calibrate {
namespace {

// first, 2 first, 4 first, ... below last, then last; `what` names last in the error when it
// is below first.
std::vector<std::int32_t> Doubling(std::int32_t first, std::int32_t last, const char* what) {
  if (last < first) {
    throw std::invalid_argument(std::string(what) + " must be at least " + std::to_string(first) +
                                ", not " + std::to_string(last));
  }
  std::vector<std::int32_t> out;
  for (std::int64_t n = first; n < last; n *= 2) {
    out.push_back(static_cast<std::int32_t>(n));
  }
  out.push_back(last);
  return out;
}

}  // namespace

std::vector<std::int32_t> PromptLadder(std::int32_t max_prompt_tokens) {
  return Doubling(16, max_prompt_tokens, "the longest prompt, tokens,");
}

std::vector<std::int32_t> ConcurrencyLadder(std::int32_t max_concurrency) {
  return Doubling(1, max_concurrency, "the largest batch");
}

double Median(std::vector<double> samples) {
  if (samples.empty()) {
    return 0;
  }
  const auto mid = samples.begin() + static_cast<std::ptrdiff_t>(samples.size() / 2);
  std::nth_element(samples.begin(), mid, samples.end());
  if (samples.size() % 2 == 1) {
    return *mid;
  }
  return (*mid + *std::max_element(samples.begin(), mid)) / 2;
}

}  // namespace spillway::calibrate
