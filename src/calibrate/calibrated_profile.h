#pragma once
// The profile YAML `spillway calibrate` writes: the base profile's hardware, model and memory
// figures (specifications), the fitted efficiency terms, and a `calibration` section recording
// where they came from (the target, when, the command, every point with its prediction and
// error, the fit's error, the largest batch within the TPOT SLO, and mu on the fitted profile
// with its live check). config/profile.h reads it back (it skips `calibration`). Written with
// yaml-cpp's emitter.

#include <cstdint>
#include <optional>
#include <string>

#include "calibrate/calibration_points.h"
#include "calibrate/profile_fit.h"

namespace spillway::calibrate {

/// mu of a scenario's mix on the fitted profile (sim/capacity.h) and the live run at it.
struct CapacityRecord {
  std::string scenario;  ///< the scenario file
  double mu_rps = 0;
  bool at_search_ceiling = false;
  std::string binding_slo;  ///< "ttft", "tpot" or "neither"
  /// mu's promise checked live: "pass" when a live run at mu completes 95% of its requests
  /// with p95 TTFT and TPOT within the SLOs (the capacity probe's criterion); empty when not
  /// run.
  std::optional<std::string> live_check_verdict;
  /// The live figures, and the simulator's on the same arrivals beside them.
  std::string live_check_evidence;
};

/// The engine configuration the points' steps were planned with (point_plans.h).
struct PlannedEngine {
  std::int32_t max_num_batched_tokens = 0;
  std::int32_t max_num_seqs = 0;
  std::int32_t long_prefill_token_threshold = 0;  ///< 0: none
  bool enable_chunked_prefill = true;
  std::int32_t max_model_len = 0;
  bool slo_budgets = false;  ///< the budgets were derived from the TPOT SLO (as serve does)
  std::string source;        ///< where the settings came from (a scenario file, flags)
};

struct CalibrationRecord {
  std::string target;             ///< the URL measured, or the points file read
  bool from_points_file = false;  ///< the points were read (calibrate --points), not measured
  std::string engine_name;        ///< the engine the points file names (engine.name), else empty
  std::string model;              ///< the model the requests named
  std::string measured_at;        ///< UTC, "YYYY-MM-DDThh:mm:ssZ"
  std::string command;            ///< the command line
  std::string base_profile;       ///< the profile the fit started from
  CalibrationPoints points;
  PlannedEngine engine;
  ProfileFit fit;
  ProfileFit base_fit;  ///< the base profile's errors on the same points
  Seconds tpot_slo_s = 0;
  /// The largest batch measured whose ITL stayed within tpot_slo_s; nullopt when even one
  /// stream's did not.
  std::optional<std::int32_t> largest_batch_within_slo;
  bool ladder_stopped_at_slo = false;  ///< the batch ladder ended on the SLO, not the cap
  std::optional<CapacityRecord> capacity;
};

/// The profile file, named `name`, with `description` and `engine` (the engine the profile
/// models; empty: the target's model). Figures to six significant digits.
std::string CalibratedProfileYaml(const CalibrationRecord& record, const std::string& name,
                                  const std::string& description, const std::string& engine);

}  // namespace spillway::calibrate
