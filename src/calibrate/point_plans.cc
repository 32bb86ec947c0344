#include "calibrate/point_plans.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "engine/engine.h"

namespace spillway::calibrate {
namespace {

// An engine of `config` with admission off, at virtual time 0, and its driver.
class PlanDriver {
 public:
  explicit PlanDriver(EngineConfig config) : engine_(WithoutAdmission(std::move(config)), 0) {}

  void Offer(RequestId id, std::int32_t prompt_tokens, std::int32_t max_tokens) {
    EngineRequest r;
    r.prompt_tokens = prompt_tokens;
    r.max_tokens = max_tokens;
    r.ignore_eos = true;
    const AdmissionDecision d = engine_.Offer(id, r, now_);
    if (!d.admitted()) {
      throw std::invalid_argument(
          fmt::format("a request of {} prompt and {} output tokens does not fit the engine ({})",
                      prompt_tokens, max_tokens, ToString(d.reason)));
    }
  }

  // Runs one step; false when there was nothing to run.
  bool Step() {
    last_ = engine_.BeginStep(now_);
    if (last_.empty()) {
      return false;
    }
    now_ += engine_.step().duration_s;
    engine_.EndStep(now_);
    return true;
  }

  // Begins a step and leaves it in flight (an arrival may be offered meanwhile), then ends it.
  const StepPlan& Begin() {
    last_ = engine_.BeginStep(now_);
    return last_;
  }
  void End() {
    now_ += engine_.step().duration_s;
    engine_.EndStep(now_);
  }

  const StepPlan& last() const { return last_; }
  const StepEvents& events() const { return engine_.events(); }

  // True when the last step sampled a token for `id`.
  bool Sampled(RequestId id) const {
    return std::any_of(last_.seqs.begin(), last_.seqs.end(),
                       [id](const ScheduledSeq& s) { return s.id == id && s.samples_token; });
  }

 private:
  static EngineConfig WithoutAdmission(EngineConfig config) {
    config.admission.policy = AdmissionPolicy::kUnbounded;
    return config;
  }

  Engine engine_;
  Seconds now_ = 0;
  StepPlan last_;
};

// The steps until request `id`'s first token, recorded; throws when it never comes.
std::vector<StepPlan> UntilFirstToken(PlanDriver& driver, RequestId id) {
  std::vector<StepPlan> steps;
  while (driver.Step()) {
    steps.push_back(driver.last());
    if (driver.Sampled(id)) {
      return steps;
    }
  }
  throw std::invalid_argument("the engine never gave the prompt its first token");
}

bool PureDecode(const StepPlan& p) { return !p.empty() && p.num_prefill_tokens == 0; }

// Runs `plan`; its std::invalid_argument comes back prefixed with `point` (which one failed).
template <typename Plan>
void Named(const std::string& point, Plan plan) {
  try {
    plan();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(point + ": " + e.what());
  }
}

// The prompt of a decode point's streams: the one that puts the middle of their decode at the
// point's context_tokens when it says one, else the points' decode_prompt_tokens.
std::int32_t DecodePromptTokens(const CalibrationPoints& points, const DecodePoint& p) {
  if (p.context_tokens <= 0) {
    return points.decode_prompt_tokens;
  }
  return static_cast<std::int32_t>(
      std::max<std::int64_t>(1, p.context_tokens - points.decode_output_tokens / 2));
}

BurstPlan PlanBurst(const EngineConfig& config, const BurstPoint& burst) {
  if (burst.prompt_tokens.empty() || burst.prompt_tokens.size() != burst.output_tokens.size()) {
    throw std::invalid_argument(
        fmt::format("burst {}: {} prompt lengths and {} output lengths (one of each a request)",
                    burst.source, burst.prompt_tokens.size(), burst.output_tokens.size()));
  }
  const CostModel model(config.profile);
  const std::size_t n = burst.prompt_tokens.size();
  PlanDriver driver(config);
  for (std::size_t i = 0; i < n; ++i) {
    if (burst.prompt_tokens[i] < 1 || burst.output_tokens[i] < 0) {
      throw std::invalid_argument(
          fmt::format("burst {}: request {} has {} prompt and {} output tokens", burst.source, i,
                      burst.prompt_tokens[i], burst.output_tokens[i]));
    }
    try {
      driver.Offer(static_cast<RequestId>(i + 1), burst.prompt_tokens[i],
                   std::max(1, burst.output_tokens[i]));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(
          fmt::format("burst {}: request {}: {}", burst.source, i, e.what()));
    }
  }
  BurstPlan plan;
  plan.output_tokens = burst.output_tokens;
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  plan.first_token_step.assign(n, kNone);
  plan.last_step.assign(n, kNone);
  while (driver.Step()) {
    const std::size_t k = plan.steps.size();
    plan.steps.push_back(model.Work(driver.last()));
    for (const ScheduledSeq& s : driver.last().seqs) {
      const auto i = static_cast<std::size_t>(s.id - 1);
      if (s.samples_token && plan.first_token_step[i] == kNone) {
        plan.first_token_step[i] = k;
      }
    }
    for (const Request& r : driver.events().finished) {
      plan.last_step[static_cast<std::size_t>(r.spec.id - 1)] = k;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (plan.first_token_step[i] == kNone || plan.last_step[i] == kNone) {
      throw std::invalid_argument(
          fmt::format("burst {}: the engine did not serve request {} ({} prompt tokens)",
                      burst.source, i, burst.prompt_tokens[i]));
    }
  }
  return plan;
}

BurstFigures PredictBurst(const CostModel& model, const BurstPlan& plan) {
  const std::vector<std::int32_t>& output_tokens = plan.output_tokens;
  std::vector<Seconds> end;  // end[k]: when step k ended
  end.reserve(plan.steps.size());
  Seconds t = 0;
  for (const StepWork& w : plan.steps) {
    t += model.StepTime(w);
    end.push_back(t);
  }
  std::vector<Seconds> ttfts;
  std::vector<Seconds> tpots;
  ttfts.reserve(output_tokens.size());
  for (std::size_t i = 0; i < output_tokens.size(); ++i) {
    const Seconds first = end[plan.first_token_step[i]];
    ttfts.push_back(output_tokens[i] == 0 ? 0 : first);  // BurstPoint::output_tokens says why
    if (output_tokens[i] > 1) {
      tpots.push_back((end[plan.last_step[i]] - first) / (output_tokens[i] - 1));
    }
  }
  return {Median(std::move(ttfts)), Median(std::move(tpots)), t};
}

}  // namespace

PointPlans PlanPoints(const EngineConfig& config, const CalibrationPoints& points) {
  PointPlans plans;
  for (std::size_t k = 0; k < points.prefill.size(); ++k) {
    const PrefillPoint& p = points.prefill[k];
    Named(fmt::format("prefill[{}] ({} prompt tokens)", k, p.prompt_tokens), [&] {
      PlanDriver driver(config);
      driver.Offer(1, p.prompt_tokens, 1);
      plans.prefill.push_back(UntilFirstToken(driver, 1));
    });
  }
  for (std::size_t k = 0; k < points.decode.size(); ++k) {
    const DecodePoint& p = points.decode[k];
    Named(fmt::format("decode[{}] ({} stream{})", k, p.concurrency, p.concurrency == 1 ? "" : "s"),
          [&] {
            PlanDriver driver(config);
            const std::int32_t prompt = DecodePromptTokens(points, p);
            for (std::int32_t i = 0; i < p.concurrency; ++i) {
              driver.Offer(static_cast<RequestId>(i + 1), prompt, points.decode_output_tokens);
            }
            std::vector<StepPlan> decodes;
            while (driver.Step()) {
              if (PureDecode(driver.last())) {
                decodes.push_back(driver.last());
              }
            }
            if (decodes.empty()) {
              throw std::invalid_argument("the engine ran no decode step for the batch");
            }
            plans.decode.push_back(decodes[decodes.size() / 2]);
          });
  }
  for (std::size_t k = 0; k < points.loaded_prefill.size(); ++k) {
    const LoadedPrefillPoint& p = points.loaded_prefill[k];
    Named(fmt::format("prefill_under_decode[{}] ({} prompt tokens beside {} streams)", k,
                      p.prompt_tokens, p.concurrency),
          [&] {
            PlanDriver driver(config);
            for (std::int32_t i = 0; i < p.concurrency; ++i) {
              driver.Offer(static_cast<RequestId>(i + 2), points.decode_prompt_tokens,
                           p.stream_output_tokens);
            }
            // Until every stream has two tokens: a pure-decode step of them all.
            while (!(PureDecode(driver.last()) &&
                     static_cast<std::int32_t>(driver.last().seqs.size()) >= p.concurrency)) {
              if (!driver.Step()) {
                throw std::invalid_argument("the streams ended before they all decoded");
              }
            }
            // The steps until their context is the point's (the prompt came after the
            // streams had generated that much).
            while (driver.last().seqs.front().num_context_tokens < p.context_tokens &&
                   driver.Step()) {
            }
            plans.loaded_arrival.push_back(driver.Begin());
            driver.Offer(1, p.prompt_tokens, 1);
            driver.End();
            plans.loaded_prefill.push_back(UntilFirstToken(driver, 1));
          });
  }
  for (const BurstPoint& b : points.bursts) {
    plans.bursts.push_back(PlanBurst(config, b));
  }
  return plans;
}

Seconds StepsTime(const CostModel& model, const std::vector<StepPlan>& steps) {
  Seconds total = 0;
  for (const StepPlan& p : steps) {
    total += model.StepTime(p);
  }
  return total;
}

Predictions Predict(const CostModel& model, const PointPlans& plans) {
  Predictions out;
  for (const auto& steps : plans.prefill) {
    out.prefill.push_back(StepsTime(model, steps));
  }
  for (const StepPlan& p : plans.decode) {
    out.decode.push_back(model.StepTime(p));
  }
  for (std::size_t i = 0; i < plans.loaded_prefill.size(); ++i) {
    out.loaded_prefill.push_back(model.StepTime(plans.loaded_arrival[i]) / 2 +
                                 StepsTime(model, plans.loaded_prefill[i]));
  }
  for (std::size_t i = 0; i < plans.bursts.size(); ++i) {
    out.bursts.push_back(PredictBurst(model, plans.bursts[i]));
  }
  return out;
}

}  // namespace spillway::calibrate
