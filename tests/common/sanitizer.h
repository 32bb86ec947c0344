#pragma once
// Whether this test binary runs under AddressSanitizer. The long simulations whose figures the
// release suite (`make test`) checks skip themselves there: a run takes 5 to 15 times as long
// under ASan and goes through the code that the shorter tests of the same suites already run
// under it (the ASan job's CPU is what keeps CI under 30 minutes on two cores).

namespace spillway::testing_util {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kUnderAddressSanitizer = true;
#else
inline constexpr bool kUnderAddressSanitizer = false;
#endif

/// GTEST_SKIP()'s message for such a simulation.
inline constexpr const char* kReleaseSuiteOnly =
    "a long simulation: its figures are checked by the release suite (make test)";

}  // namespace spillway::testing_util
