#include "workload/arrivals.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "workload/trace_reader.h"

namespace spillway {
namespace {

/// Tenant of trace records when the scenario has no classes.
constexpr std::string_view kDefaultTenant = "default";
/// A prompt asked again whose class has a system prompt is named in segments of the system
/// prompt's length while that takes at most this many; past it, by one segment of its own
/// length (a bound on the ids a distinct prompt holds).
constexpr std::int64_t kMaxSegmentsPerPrompt = 16;

/// 64-bit FNV-1a over `text`, continuing from `h`.
std::uint64_t Fnv1a(std::string_view text, std::uint64_t h = 0xCBF29CE484222325ULL) {
  for (const char c : text) {
    h = (h ^ static_cast<unsigned char>(c)) * 0x100000001B3ULL;
  }
  return h;
}

/// The segment id of class `name`'s system prompt: the same in every run and seed.
std::uint64_t SystemPromptId(std::string_view name) { return Fnv1a(name, Fnv1a("class:")); }

/// The id of segment `k` of the prompt `prompt_id` of class `name` (Arrival::prompt_id).
std::uint64_t PromptSegmentId(std::string_view name, std::uint64_t prompt_id, std::int64_t k) {
  return Fnv1a(std::to_string(prompt_id) + ":" + std::to_string(k), Fnv1a(name, Fnv1a("prompt:")));
}

/// The PromptSegments of a synthetic schedule's arrivals, built once and shared: one per class
/// system prompt, one per distinct prompt asked (Arrival::prompt_id).
class SharedPrompts {
 public:
  explicit SharedPrompts(const std::vector<RequestClass>& classes) : classes_(classes) {
    for (const RequestClass& c : classes) {
      system_.push_back(c.shared_prefix_tokens > 0
                            ? std::make_shared<const PromptSegments>(
                                  PromptSegments{c.shared_prefix_tokens, {SystemPromptId(c.name)}})
                            : nullptr);
    }
  }

  /// The segments of arrival `a` of class `a.class_index` (null when it shares nothing).
  std::shared_ptr<const PromptSegments> For(const Arrival& a) {
    const auto index = static_cast<std::size_t>(a.class_index);
    if (a.prompt_id == 0) {
      return system_[index];
    }
    std::shared_ptr<const PromptSegments>& known = distinct_[a.prompt_id];
    if (known == nullptr) {
      known = DistinctPrompt(classes_[index], system_[index], a);
    }
    return known;
  }

 private:
  /// A prompt asked again (each ask has the same prompt_tokens) shares all of it with every
  /// ask: its class's system prompt first, the rest in segments of the system prompt's length
  /// named by the prompt. When that would take more than kMaxSegmentsPerPrompt segments, or
  /// the class has no system prompt, one segment covers the whole prompt: the system prompt is
  /// then shared only among asks of the same prompt (an underestimate of what caching finds).
  static std::shared_ptr<const PromptSegments> DistinctPrompt(
      const RequestClass& c, const std::shared_ptr<const PromptSegments>& system,
      const Arrival& a) {
    const std::int64_t n = c.shared_prefix_tokens;
    if (n > 0 && a.prompt_tokens <= n) {
      return system;  // the first prompt_tokens of the system prompt
    }
    const std::int64_t count = n > 0 ? (a.prompt_tokens + n - 1) / n : 0;
    if (count == 0 || count > kMaxSegmentsPerPrompt) {
      return std::make_shared<const PromptSegments>(
          PromptSegments{a.prompt_tokens, {PromptSegmentId(c.name, a.prompt_id, 0)}});
    }
    PromptSegments segments{static_cast<std::int32_t>(n), {SystemPromptId(c.name)}};
    for (std::int64_t k = 1; k < count; ++k) {
      segments.ids.push_back(PromptSegmentId(c.name, a.prompt_id, k));
    }
    return std::make_shared<const PromptSegments>(std::move(segments));
  }

  const std::vector<RequestClass>& classes_;
  std::vector<std::shared_ptr<const PromptSegments>> system_;  ///< per class; null: none
  std::unordered_map<std::uint64_t, std::shared_ptr<const PromptSegments>> distinct_;
};

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

/// An arrival of class `c` (at index `index`), its shape drawn from `shape_rng`; for a class
/// with distinct prompts, one of its prompts with the shape that prompt always has. No time
/// and no segments yet.
Arrival ClassArrival(const RequestClass& c, std::int32_t index, Rng& shape_rng) {
  Arrival a;
  if (c.distinct_prompts > 0) {
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
  return a;
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
  SharedPrompts shared(scenario.classes);
  std::vector<Arrival> arrivals;
  arrivals.reserve(times.size());
  std::size_t segment = 0;
  for (const Seconds t : times) {
    while (segment + 1 < segment_end_s.size() && t >= segment_end_s[segment]) {
      ++segment;
    }
    const std::int32_t index = pickers[segment].Pick(shape_rng);
    Arrival a = ClassArrival(scenario.classes[static_cast<std::size_t>(index)], index, shape_rng);
    a.time_s = t;
    a.prompt_segments = shared.For(a);
    arrivals.push_back(std::move(a));
  }
  return arrivals;
}

/// A trace record inside the replay window: its time there and the record (which outlives it).
struct Windowed {
  Seconds time_s = 0;
  const TraceRecord* record = nullptr;
};

/// Trace records inside the replay window, with times scaled by time_scale and re-based to
/// the window's start: [start_s, start_s + duration_s) -> [0, duration_s).
std::vector<Windowed> Window(const std::vector<TraceRecord>& records,
                             const ArrivalProcess& arrival) {
  const Seconds end_s =
      arrival.duration_s > 0 ? arrival.trace_start_s + arrival.duration_s : kNever;
  std::vector<Windowed> kept;
  for (const TraceRecord& r : records) {
    const Seconds t = r.time_s * arrival.time_scale;
    if (t >= arrival.trace_start_s && t < end_s) {
      kept.push_back({t - arrival.trace_start_s, &r});
    }
  }
  return kept;
}

/// The segments a record's hash_ids name (null when it has none), for all its copies.
std::shared_ptr<const PromptSegments> RecordSegments(const TraceRecord& r) {
  return r.hash_ids.empty() ? nullptr
                            : std::make_shared<const PromptSegments>(
                                  PromptSegments{kMooncakeBlockTokens, r.hash_ids});
}

/// Replays windowed records at `rate_multiplier` m: each record floor(m) or floor(m) + 1 times
/// (Bernoulli on the fractional part); the first copy keeps the record's time, each extra copy
/// is offset by a uniform fraction of the gap to the next record (to the window's end for the
/// last record, 0 for the last record of an open-ended replay). Output sorted by time.
std::vector<Arrival> Replicate(const std::vector<Windowed>& records, const Scenario& scenario,
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
    const Seconds t = records[i].time_s;
    const TraceRecord& r = *records[i].record;
    const Seconds next_s = i + 1 < records.size()   ? records[i + 1].time_s
                           : arrival.duration_s > 0 ? arrival.duration_s
                                                    : t;
    const auto copies =
        static_cast<std::int64_t>(whole) + (fraction > 0 && rng.Uniform() < fraction ? 1 : 0);
    const std::shared_ptr<const PromptSegments> segments = copies > 0 ? RecordSegments(r) : nullptr;
    for (std::int64_t k = 0; k < copies; ++k) {
      Arrival a = base;
      a.time_s = k == 0 ? t : t + rng.Uniform() * (next_s - t);
      a.prompt_tokens = r.prompt_tokens;
      a.output_tokens = r.output_tokens;
      a.max_tokens = arrival.trace_max_tokens > 0 ? arrival.trace_max_tokens : r.output_tokens;
      a.ignore_eos = arrival.trace_max_tokens == 0;
      a.prompt_segments = segments;
      arrivals.push_back(std::move(a));
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
    // The records outlive the windowed pointers into them.
    const std::shared_ptr<const std::vector<TraceRecord>> records = scenario.TraceRecords();
    return Replicate(Window(*records, scenario.arrival), scenario, time_rng);
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
