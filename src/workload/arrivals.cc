#include "workload/arrivals.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

#include "workload/trace_reader.h"

namespace spillway {
namespace {

/// Tenant of trace records when the scenario has no classes.
constexpr std::string_view kDefaultTenant = "default";

/// Picks a class index with one uniform draw over the cumulative normalised shares.
class ClassPicker {
 public:
  /// Picks by the classes' shares, or by `mix` (one share per class) when it is not empty.
  explicit ClassPicker(const std::vector<RequestClass>& classes,
                       const std::vector<double>& mix = {}) {
    double total = 0;
    for (std::size_t i = 0; i < classes.size(); ++i) {
      total += std::max(mix.empty() ? classes[i].share : mix[i], 0.0);
      cumulative_.push_back(total);
    }
    for (double& c : cumulative_) {
      c /= total;
    }
  }

  std::int32_t Pick(Rng& rng) const {
    const double u = rng.Uniform();
    const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
    const auto index = std::min<std::ptrdiff_t>(
        it - cumulative_.begin(), static_cast<std::ptrdiff_t>(cumulative_.size()) - 1);
    return static_cast<std::int32_t>(index);
  }

 private:
  std::vector<double> cumulative_;  ///< non-decreasing, last element 1
};

/// The process as a list of Poisson segments (a kPoisson process is one step, a kBurst one
/// step of rate 0 after its burst).
std::vector<RateStep> Segments(const ArrivalProcess& arrival) {
  if (arrival.kind == ArrivalProcess::Kind::kPoisson) {
    return {RateStep{arrival.rate_rps, arrival.duration_s, {}}};
  }
  if (arrival.kind == ArrivalProcess::Kind::kBurst) {
    return {RateStep{0, arrival.duration_s, {}}};
  }
  return arrival.steps;
}

/// Arrival times of consecutive Poisson segments: exponential inter-arrival gaps at each
/// segment's rate. Restarting the clock at a segment boundary is exact (memorylessness).
std::vector<Seconds> PoissonTimes(const std::vector<RateStep>& segments, Rng& rng) {
  double expected = 0;
  for (const RateStep& s : segments) {
    expected += s.rate_rps * s.duration_s;
  }
  std::vector<Seconds> times;
  times.reserve(static_cast<std::size_t>(expected + 5 * std::sqrt(expected) + 16));
  Seconds segment_start_s = 0;
  for (const RateStep& s : segments) {
    const Seconds segment_end_s = segment_start_s + s.duration_s;
    if (s.rate_rps > 0) {
      for (Seconds t = segment_start_s + rng.Exponential(s.rate_rps); t < segment_end_s;
           t += rng.Exponential(s.rate_rps)) {
        times.push_back(t);
      }
    }
    segment_start_s = segment_end_s;
  }
  return times;
}

std::vector<Arrival> GenerateSynthetic(const Scenario& scenario, Rng& time_rng, Rng& shape_rng) {
  const std::vector<RateStep> segments = Segments(scenario.arrival);
  const std::vector<Seconds> times =
      scenario.arrival.kind == ArrivalProcess::Kind::kBurst
          ? std::vector<Seconds>(static_cast<std::size_t>(scenario.arrival.burst_count), 0.0)
          : PoissonTimes(segments, time_rng);
  // One picker per segment (a step's `mix` overrides the class shares while it lasts).
  std::vector<ClassPicker> pickers;
  std::vector<Seconds> segment_end_s;
  Seconds end_s = 0;
  for (const RateStep& step : segments) {
    pickers.emplace_back(scenario.classes, step.mix);
    end_s += step.duration_s;
    segment_end_s.push_back(end_s);
  }
  std::vector<Arrival> arrivals;
  arrivals.reserve(times.size());
  std::size_t segment = 0;
  for (const Seconds t : times) {
    while (segment + 1 < segment_end_s.size() && t >= segment_end_s[segment]) {
      ++segment;
    }
    const std::int32_t index = pickers[segment].Pick(shape_rng);
    const RequestClass& c = scenario.classes[static_cast<std::size_t>(index)];
    Arrival a;
    a.time_s = t;
    if (c.distinct_prompts > 0) {
      // One of the class's prompts, with the shape that prompt always has.
      const auto k = static_cast<std::uint64_t>(shape_rng.UniformInt(0, c.distinct_prompts - 1));
      a.prompt_id = (static_cast<std::uint64_t>(index + 1) << 32) | (k + 1);
      Rng prompt_rng(a.prompt_id * 0x9E3779B97F4A7C15ULL);
      a.prompt_tokens = Draw(c.prompt_tokens, prompt_rng);
      a.output_tokens = Draw(c.output_tokens, prompt_rng);
    } else {
      a.prompt_tokens = Draw(c.prompt_tokens, shape_rng);
      a.output_tokens = Draw(c.output_tokens, shape_rng);
    }
    a.max_tokens = c.max_tokens > 0 ? c.max_tokens : a.output_tokens;
    a.ignore_eos = c.max_tokens == 0;
    a.class_index = index;
    a.priority = c.priority;
    a.tenant = c.tenant;
    arrivals.push_back(a);
  }
  return arrivals;
}

/// Trace records inside the replay window, with times scaled by time_scale and re-based to
/// the window's start: [start_s, start_s + duration_s) -> [0, duration_s).
std::vector<TraceRecord> Window(const std::vector<TraceRecord>& records,
                                const ArrivalProcess& arrival) {
  const Seconds end_s =
      arrival.duration_s > 0 ? arrival.trace_start_s + arrival.duration_s : kNever;
  std::vector<TraceRecord> kept;
  for (const TraceRecord& r : records) {
    const Seconds t = r.time_s * arrival.time_scale;
    if (t >= arrival.trace_start_s && t < end_s) {
      kept.push_back({t - arrival.trace_start_s, r.prompt_tokens, r.output_tokens});
    }
  }
  return kept;
}

/// Replays windowed records at `rate_multiplier` m: each record floor(m) or floor(m) + 1 times
/// (Bernoulli on the fractional part); the first copy keeps the record's time, each extra copy
/// is offset by a uniform fraction of the gap to the next record (to the window's end for the
/// last record, 0 for the last record of an open-ended replay). Output sorted by time.
std::vector<Arrival> Replicate(const std::vector<TraceRecord>& records, const Scenario& scenario,
                               Rng& rng) {
  const ArrivalProcess& arrival = scenario.arrival;
  const double whole = std::floor(arrival.rate_multiplier);
  const double fraction = arrival.rate_multiplier - whole;
  const bool has_class = !scenario.classes.empty();
  Arrival base;
  base.class_index = -1;
  base.priority = has_class ? scenario.classes.front().priority : 0;
  base.tenant = has_class ? std::string_view(scenario.classes.front().tenant) : kDefaultTenant;

  std::vector<Arrival> arrivals;
  arrivals.reserve(static_cast<std::size_t>(records.size() * (whole + 1)));
  for (std::size_t i = 0; i < records.size(); ++i) {
    const TraceRecord& r = records[i];
    const Seconds next_s = i + 1 < records.size()   ? records[i + 1].time_s
                           : arrival.duration_s > 0 ? arrival.duration_s
                                                    : r.time_s;
    const auto copies =
        static_cast<std::int64_t>(whole) + (fraction > 0 && rng.Uniform() < fraction ? 1 : 0);
    for (std::int64_t k = 0; k < copies; ++k) {
      Arrival a = base;
      a.time_s = k == 0 ? r.time_s : r.time_s + rng.Uniform() * (next_s - r.time_s);
      a.prompt_tokens = r.prompt_tokens;
      a.output_tokens = r.output_tokens;
      a.max_tokens = arrival.trace_max_tokens > 0 ? arrival.trace_max_tokens : r.output_tokens;
      a.ignore_eos = arrival.trace_max_tokens == 0;
      arrivals.push_back(a);
    }
  }
  std::stable_sort(arrivals.begin(), arrivals.end(),
                   [](const Arrival& a, const Arrival& b) { return a.time_s < b.time_s; });
  return arrivals;
}

}  // namespace

std::vector<Arrival> GenerateArrivals(const Scenario& scenario, std::uint64_t seed) {
  // Independent streams for times and for request shapes, so that changing a class's token
  // distribution does not move the arrival times.
  Rng root(seed);
  Rng time_rng(root.Next());
  Rng shape_rng(root.Next());
  if (scenario.arrival.kind == ArrivalProcess::Kind::kTrace) {
    return Replicate(Window(*scenario.TraceRecords(), scenario.arrival), scenario, time_rng);
  }
  if (scenario.classes.empty()) {
    return {};
  }
  return GenerateSynthetic(scenario, time_rng, shape_rng);
}

std::int32_t Draw(const TokenDist& dist, Rng& rng) {
  double value = 1;
  switch (dist.kind) {
    case TokenDist::Kind::kFixed:
      value = dist.value;
      break;
    case TokenDist::Kind::kUniform:
      value = static_cast<double>(
          rng.UniformInt(std::min(dist.min, dist.max), std::max(dist.min, dist.max)));
      break;
    case TokenDist::Kind::kLognormal: {
      // For X = exp(N(mu, sigma^2)): E[X] = exp(mu + sigma^2 / 2), CV^2 = exp(sigma^2) - 1, so
      // sigma^2 = ln(1 + cv^2) and mu = ln(mean) - sigma^2 / 2.
      const double sigma2 = std::log1p(dist.cv * dist.cv);
      const double mu = std::log(dist.mean) - sigma2 / 2;
      double exponent = mu + std::sqrt(sigma2) * rng.Normal();
      if (std::isnan(exponent)) {
        // cv so large that sigma^2 is infinite: -inf + inf. As sigma^2 grows, mu + sigma * z
        // goes to -inf for every z (the mass piles up near 0), so take that limit.
        exponent = -std::numeric_limits<double>::infinity();
      }
      const double x = std::exp(exponent);
      value = std::round(std::clamp(x, static_cast<double>(std::min(dist.min, dist.max)),
                                    static_cast<double>(std::max(dist.min, dist.max))));
      break;
    }
  }
  return value >= 1 ? static_cast<std::int32_t>(value) : 1;
}

}  // namespace spillway
