#pragma once
// A seeded, portable random number generator. Every draw is computed here from the 64-bit
// Mersenne Twister's raw output (whose sequence the C++ standard fixes), not through the
// <random> distributions (whose algorithms are implementation-defined), so a seed gives the
// same run with any standard library.

#include <cmath>
#include <cstdint>
#include <random>

namespace spillway {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}

  /// Uniform in [0, 1), 53 bits of precision.
  double Uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

  /// Uniform in [lo, hi).
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Uniform(); }

  /// Uniform integer in [lo, hi] (inclusive); requires lo <= hi.
  std::int64_t UniformInt(std::int64_t lo, std::int64_t hi) {
    const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
    return lo + static_cast<std::int64_t>(engine_() % span);
  }

  /// Exponential with the given rate (events per second); mean 1/rate. Inverse-CDF method.
  double Exponential(double rate) { return -std::log1p(-Uniform()) / rate; }

  /// Standard normal by the Box-Muller transform.
  double Normal() {
    const double u1 = 1.0 - Uniform();  // (0, 1]
    const double u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
  }

  /// Raw 64 bits, e.g. to seed a child generator.
  std::uint64_t Next() { return engine_(); }

 private:
  std::mt19937_64 engine_;
};

}  // namespace spillway
