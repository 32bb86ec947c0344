#pragma once
// Helpers shared by the admission tests (one unity batch: names at file scope are unique).

#include <cstdint>

#include "admission/admission.h"

namespace spillway::admission_test {

/// Tolerance for estimates computed from exact inputs.
inline constexpr double kTol = 1e-9;

/// A request of tenant "t" that generates exactly `max_output` tokens (ignore_eos).
inline AdmissionRequest Request(std::int32_t prompt = 32, std::int32_t max_output = 64) {
  return {
      .tenant = "t", .prompt_tokens = prompt, .max_output_tokens = max_output, .ignore_eos = true};
}

}  // namespace spillway::admission_test
