#include "calibrate/profile_fit.h"

#include <nlopt.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>

namespace spillway::calibrate {
namespace {

// The optimiser's variables, each scaled to be of order one: mfu, mbu, and the overheads in
// milliseconds (step, first token) and in tens of microseconds (per sequence).
constexpr std::size_t kVars = 5;
using Vars = std::array<double, kVars>;
constexpr Vars kScale = {1, 1, 1e-3, 1e-5, 1e-3};
constexpr Vars kLower = {1e-3, 1e-3, 0, 0, 0};
constexpr Vars kUpper = {1, 1, 100, 1000, 1000};  // 100 ms, 10 ms, 1 s
constexpr Vars kStep = {0.05, 0.05, 0.5, 1, 0.5};

Profile WithVars(const Profile& base, const double* x) {
  Profile p = base;
  p.mfu = x[0] * kScale[0];
  p.mbu = x[1] * kScale[1];
  p.step_overhead_s = x[2] * kScale[2];
  p.per_seq_overhead_s = x[3] * kScale[3];
  p.first_token_overhead_s = x[4] * kScale[4];
  return p;
}

Vars VarsOf(const Profile& p) {
  Vars x = {p.mfu, p.mbu, p.step_overhead_s / kScale[2], p.per_seq_overhead_s / kScale[3],
            p.first_token_overhead_s / kScale[4]};
  for (std::size_t i = 0; i < kVars; ++i) {
    x[i] = std::clamp(x[i], kLower[i], kUpper[i]);
  }
  return x;
}

struct Problem {
  const Profile* base;
  const CalibrationPoints* points;
  const PointPlans* plans;
};

// What the fit minimises (before the prior): ProfileFit::sum_squared_rel_error.
double SquaredErrors(const Profile& p, const CalibrationPoints& points, const PointPlans& plans) {
  return Evaluate(p, points, plans).sum_squared_rel_error;
}

double Objective(unsigned /*n*/, const double* x, double* /*grad*/, void* data) {
  const auto* problem = static_cast<const Problem*>(data);
  const Profile p = WithVars(*problem->base, x);
  const double mfu_pull = std::log(p.mfu / problem->base->mfu);
  const double mbu_pull = std::log(p.mbu / problem->base->mbu);
  return SquaredErrors(p, *problem->points, *problem->plans) +
         kPriorWeight * (mfu_pull * mfu_pull + mbu_pull * mbu_pull);
}

// One local minimisation from `start`; returns the end point and its objective.
std::pair<Vars, double> Minimise(const Problem& problem, const Vars& start) {
  std::unique_ptr<nlopt_opt_s, decltype(&nlopt_destroy)> opt(nlopt_create(NLOPT_LN_SBPLX, kVars),
                                                             &nlopt_destroy);
  if (!opt) {
    throw std::runtime_error("NLopt could not create its optimiser");
  }
  nlopt_set_lower_bounds(opt.get(), kLower.data());
  nlopt_set_upper_bounds(opt.get(), kUpper.data());
  nlopt_set_initial_step(opt.get(), kStep.data());
  nlopt_set_min_objective(opt.get(), &Objective, const_cast<Problem*>(&problem));
  nlopt_set_ftol_rel(opt.get(), 1e-10);
  nlopt_set_xtol_rel(opt.get(), 1e-8);
  nlopt_set_maxeval(opt.get(), 4000);
  Vars x = start;
  double value = std::numeric_limits<double>::infinity();
  // A failure code (a roundoff-limited stop, say) still leaves the best point found in x.
  nlopt_optimize(opt.get(), x.data(), &value);
  return {x, value};
}

void CheckPoints(const CalibrationPoints& points) {
  if (points.prefill.size() + points.decode.size() + points.loaded_prefill.size() +
          3 * points.bursts.size() <
      3) {
    throw std::invalid_argument("a fit needs at least three measured points");
  }
  for (const PrefillPoint& p : points.prefill) {
    if (!(p.ttft_s > 0) || p.prompt_tokens < 1) {
      throw std::invalid_argument("a prefill point has no positive TTFT or prompt length");
    }
  }
  for (const DecodePoint& p : points.decode) {
    if (!(p.itl_s > 0) || p.concurrency < 1) {
      throw std::invalid_argument("a decode point has no positive ITL or batch size");
    }
  }
  for (const LoadedPrefillPoint& p : points.loaded_prefill) {
    if (!(p.ttft_s > 0) || p.prompt_tokens < 1 || p.concurrency < 1) {
      throw std::invalid_argument("a prefill under decode has no positive TTFT or streams");
    }
  }
  for (const BurstPoint& b : points.bursts) {
    if (!(b.ttft_median_s > 0) || !(b.tpot_median_s > 0) || !(b.duration_s > 0)) {
      throw std::invalid_argument("burst " + b.source +
                                  ": its median TTFT, median TPOT and duration must be positive");
    }
  }
}

}  // namespace

ProfileFit Evaluate(const Profile& profile, const CalibrationPoints& points,
                    const PointPlans& plans) {
  const Predictions predicted = Predict(CostModel(profile), plans);
  ProfileFit fit;
  fit.profile = profile;
  double sum = 0;
  auto add = [&](std::vector<PointError>& to, Seconds measured, Seconds prediction) {
    const PointError e{measured, prediction, measured > 0 ? prediction / measured - 1 : 0};
    to.push_back(e);
    fit.max_abs_rel_error = std::max(fit.max_abs_rel_error, std::abs(e.rel_error));
    sum += e.rel_error * e.rel_error;
  };
  for (std::size_t i = 0; i < points.prefill.size(); ++i) {
    add(fit.prefill, points.prefill[i].ttft_s, predicted.prefill[i] + points.transport_s);
  }
  for (std::size_t i = 0; i < points.decode.size(); ++i) {
    add(fit.decode, points.decode[i].itl_s, predicted.decode[i]);
  }
  for (std::size_t i = 0; i < points.loaded_prefill.size(); ++i) {
    add(fit.loaded_prefill, points.loaded_prefill[i].ttft_s,
        predicted.loaded_prefill[i] + points.transport_s);
  }
  for (std::size_t i = 0; i < points.bursts.size(); ++i) {
    const BurstPoint& b = points.bursts[i];
    const BurstFigures& f = predicted.bursts[i];
    std::vector<PointError> three;
    add(three, b.ttft_median_s, f.ttft_median_s + points.transport_s);
    add(three, b.tpot_median_s, f.tpot_median_s);
    add(three, b.duration_s, f.duration_s + points.transport_s);
    fit.bursts.push_back({three[0], three[1], three[2]});
  }
  const std::size_t n =
      fit.prefill.size() + fit.decode.size() + fit.loaded_prefill.size() + 3 * fit.bursts.size();
  fit.sum_squared_rel_error = sum;
  fit.rms_rel_error = n > 0 ? std::sqrt(sum / static_cast<double>(n)) : 0;
  return fit;
}

ProfileFit FitProfile(const Profile& base, const CalibrationPoints& points,
                      const PointPlans& plans) {
  CheckPoints(points);
  if (plans.prefill.size() != points.prefill.size() ||
      plans.decode.size() != points.decode.size() ||
      plans.loaded_prefill.size() != points.loaded_prefill.size() ||
      plans.bursts.size() != points.bursts.size()) {
    throw std::invalid_argument("the plans are not the points'");
  }
  const Problem problem{&base, &points, &plans};
  // The base profile, then a grid over the two utilisations with the overheads at 1 ms, 10 us
  // and 0: the roofline's max() makes the objective rough, so one start may stop in a kink.
  std::vector<Vars> starts = {VarsOf(base)};
  for (const double mfu : {0.2, 0.5, 0.8}) {
    for (const double mbu : {0.3, 0.6, 0.9}) {
      starts.push_back({mfu, mbu, 1, 1, 0});
    }
  }
  Vars best = starts.front();
  double best_value = std::numeric_limits<double>::infinity();
  for (const Vars& start : starts) {
    auto [x, value] = Minimise(problem, start);
    // Polish the end with a restart there (Subplex's simplex may have collapsed).
    auto [x2, value2] = Minimise(problem, x);
    if (value2 < value) {
      x = x2;
      value = value2;
    }
    if (value < best_value) {
      best = x;
      best_value = value;
    }
  }
  return Evaluate(WithVars(base, best.data()), points, plans);
}

}  // namespace spillway::calibrate
