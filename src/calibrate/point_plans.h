#pragma once
// The engine steps behind each calibration point (calibration_points.h), planned by the engine
// itself (engine/engine.h, admission off) under the configuration the target is taken to run:
// its scheduler, token budget (fixed, or derived from the TPOT SLO as `spillway serve` does),
// long-prefill rule and batch cap. A fit then times the same plans under each candidate profile
// (CostModel::StepTime), so the predictions chunk and batch as the engine does, and the fit
// stays cheap (the plans do not depend on the efficiency terms).
//
//   prefill point L:        the steps from an idle engine until L's first token
//   decode point c:         the middle pure-decode step of c streams generating together
//   prefill under decode:   c streams decoding, the prompt arriving during one of their steps
//                           (half of it counted: it arrives on average halfway), then the
//                           steps until its first token
//   burst:                  every step from all requests offered at once to the last one's
//                           end, kept as the work each asks (StepWork), with the step each
//                           request got its first token in and the step it ended in

#include <cstddef>
#include <cstdint>
#include <vector>

#include "calibrate/calibration_points.h"
#include "engine/engine_config.h"
#include "executor/cost_model.h"
#include "executor/step_plan.h"

namespace spillway::calibrate {

/// A burst's steps and where each request's first token and end fall among them.
struct BurstPlan {
  std::vector<StepWork> steps;
  std::vector<std::size_t> first_token_step;  ///< per request, an index into steps
  std::vector<std::size_t> last_step;         ///< per request, an index into steps
  std::vector<std::int32_t> output_tokens;    ///< per request (BurstPoint's)
};

struct PointPlans {
  std::vector<std::vector<StepPlan>> prefill;  ///< per CalibrationPoints::prefill
  std::vector<StepPlan> decode;                ///< per CalibrationPoints::decode
  /// Per CalibrationPoints::loaded_prefill: the step the prompt arrives in, then its steps.
  std::vector<StepPlan> loaded_arrival;
  std::vector<std::vector<StepPlan>> loaded_prefill;
  std::vector<BurstPlan> bursts;  ///< per CalibrationPoints::bursts
};

/// Plans every point of `points` on an engine of `config` (its admission is turned off).
/// Throws std::invalid_argument when a point's requests do not fit the engine (longer than its
/// max_model_len or its KV pool).
PointPlans PlanPoints(const EngineConfig& config, const CalibrationPoints& points);

/// Seconds the steps take under `model`.
Seconds StepsTime(const CostModel& model, const std::vector<StepPlan>& steps);

/// A burst's figures under a model (BurstPoint's), without the transport.
struct BurstFigures {
  Seconds ttft_median_s = 0;
  Seconds tpot_median_s = 0;
  Seconds duration_s = 0;
};

/// The predictions of every point under `model`, in CalibrationPoints order.
struct Predictions {
  std::vector<Seconds> prefill;
  std::vector<Seconds> decode;
  std::vector<Seconds> loaded_prefill;
  std::vector<BurstFigures> bursts;
};
Predictions Predict(const CostModel& model, const PointPlans& plans);

}  // namespace spillway::calibrate
