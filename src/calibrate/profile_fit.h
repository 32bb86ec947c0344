#pragma once
// Fits an executor profile's efficiency terms to measured points (calibration_points.h), each
// predicted as the time of the engine steps behind it (point_plans.h), a TTFT plus the
// transport's round trip measured beside it (CalibrationPoints::transport_s).
//
// Fitted: mfu, mbu, step_overhead_s, per_seq_overhead_s and first_token_overhead_s; the
// hardware and model figures (FLOP/s, bandwidth, parameters, layers, KV shape) stay the base
// profile's, since they are specifications, not behaviour. The objective is the sum of squared
// relative errors of every point (a 2 ms step and a 2 s prefill weigh the same), plus a weak
// pull of mfu and mbu towards the base profile's (weight kPriorWeight on the squared log
// ratio), which only decides between fits the points cannot tell apart. Minimised with NLopt's
// Subplex (LN_SBPLX: derivative-free, robust to the roofline's max()) within bounds, from the
// base profile and a grid of starts; the best end wins.
//
// What the points can tell apart: the long prompts' slope gives mfu; the single stream's ITL is
// step_overhead + per_seq_overhead + weights / (bandwidth x mbu); a short prompt's TTFT adds the
// first-token overhead; the ITL's growth with the batch is per_seq_overhead plus the KV read.
// Alone, those leave mbu against step_overhead_s (and so mfu, in a compute-bound chunk) to the
// prior: fits as good as each other that disagree on the mixed steps a workload runs. The long
// prompt sent while streams decode (LoadedPrefillPoint) is such mixed steps, and pins them; so
// do a burst's (BurstPoint) median TPOT and duration, over batches from one to its size.

#include <vector>

#include "calibrate/calibration_points.h"
#include "calibrate/point_plans.h"
#include "config/profile.h"

namespace spillway::calibrate {

inline constexpr double kPriorWeight = 1e-4;

struct PointError {
  Seconds measured_s = 0;
  Seconds predicted_s = 0;
  double rel_error = 0;  ///< (predicted - measured) / measured
};

/// A burst's three figures, each a point of the fit.
struct BurstErrors {
  PointError ttft_median;
  PointError tpot_median;
  PointError duration;
};

struct ProfileFit {
  Profile profile;                         ///< the base profile with the fitted efficiency terms
  std::vector<PointError> prefill;         ///< one per CalibrationPoints::prefill, in order
  std::vector<PointError> decode;          ///< one per CalibrationPoints::decode, in order
  std::vector<PointError> loaded_prefill;  ///< one per CalibrationPoints::loaded_prefill
  std::vector<BurstErrors> bursts;         ///< one per CalibrationPoints::bursts
  double max_abs_rel_error = 0;            ///< over every point
  double rms_rel_error = 0;                ///< root mean square over every point
  double sum_squared_rel_error = 0;        ///< what the fit minimises (before its prior)
};

/// How well `profile` predicts `points`, whose engine steps are `plans` (no fitting).
ProfileFit Evaluate(const Profile& profile, const CalibrationPoints& points,
                    const PointPlans& plans);

/// The best fit of the efficiency terms to `points` (their steps `plans`), starting from
/// `base`. Throws std::invalid_argument when there are fewer than three points (a burst counts
/// three) or one is not positive.
ProfileFit FitProfile(const Profile& base, const CalibrationPoints& points,
                      const PointPlans& plans);

}  // namespace spillway::calibrate
