// `spillway calibrate --target URL --out PROFILE.yaml`: measures an OpenAI-compatible engine
// from outside (prefill against prompt length, decode step time against the batch), fits the
// executor profile's efficiency terms to the points (src/calibrate/), writes the profile with
// its points and fit error, then finds mu for a scenario's mix on it (sim --measure-capacity's
// search) and checks mu by a short live run at that rate: within the SLOs, as mu promises, the
// simulator's figures for the same arrivals beside it (docs/calibrate.md). With `--points
// FILE` instead of --target, the points are read from the file (public benchmark runs, say:
// calibrate/points_file.h) and nothing is measured; mu is found, not checked live.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "admission/admission.h"
#include "calibrate/calibrated_profile.h"
#include "calibrate/point_plans.h"
#include "calibrate/points_file.h"
#include "calibrate/profile_fit.h"
#include "cli_checks.h"
#include "commands.h"
#include "config/config_error.h"
#include "config/engine_settings.h"
#include "config/profile.h"
#include "engine/resolve.h"
#include "invocation.h"
#include "loadgen/bench_runner.h"
#include "loadgen/calibration_probe.h"
#include "output_file.h"
#include "sim/capacity.h"
#include "sim/run_config.h"
#include "sim/simulator.h"
#include "workload/scenario.h"

namespace spillway::app {
namespace {

namespace fs = std::filesystem;
using calibrate::CalibrationRecord;

struct CalibrateArgs {
  std::string target;
  std::string points;  // a points file instead of a target
  std::string out;
  std::string profile = "seed-a100-7b";
  std::string scenario;
  std::string name;
  std::string engine;
  std::string model;
  std::string api_key;
  std::string profile_dir;
  std::string policy;  // empty: the scenario's admission.policy, else the engine default
  std::optional<std::int32_t> max_num_batched_tokens;
  std::optional<std::int32_t> max_num_seqs;
  std::optional<std::int32_t> max_prompt_tokens;
  std::optional<std::int32_t> max_batch;
  std::optional<double> tpot_slo_s;
  std::int32_t samples = 3;
  std::int32_t decode_prompt_tokens = 32;
  std::int32_t decode_output_tokens = 64;
  double check_s = 20;
  double request_timeout_s = 120;
};

/// A fit that misses a point by more than this is reported as suspect.
constexpr double kFitWarning = 0.10;

std::string Ms(Seconds s) { return fmt::format("{:.2f} ms", s * 1e3); }

// Writes `record` as the profile at --out (replacing it only once written whole).
void WriteProfile(const CalibrateArgs& a, const CalibrationRecord& record) {
  const std::string name = a.name.empty() ? fs::path(a.out).stem().string() : a.name;
  const std::string description =
      fmt::format("{} on {}, efficiency fitted to {} by spillway calibrate",
                  record.fit.profile.model, record.fit.profile.gpu, record.target);
  const std::string engine = !a.engine.empty() ? a.engine : record.engine_name;
  const fs::path parent = fs::path(a.out).parent_path();
  if (!parent.empty()) {
    fs::create_directories(parent);
  }
  OutputFile out(a.out, "--out");
  *out.stream() << calibrate::CalibratedProfileYaml(record, name, description, engine);
  out.Commit();
}

// The longest prompt beside 1, 4, 16, ... streams up to the largest batch the ladder served
// (and it, below the batch cap), `samples` times each (the median counts): the mixed steps a
// workload runs. The streams generate for three times the prompt's chunks and more, so they
// decode throughout its prefill.
void MeasureMixedSteps(const CalibrateArgs& a, loadgen::CalibrationProbe& probe,
                       const EngineConfig& engine, std::int32_t longest,
                       CalibrationRecord* record) {
  // The prompt must join the streams' batch: at most max_num_seqs - 1 of them.
  const std::int32_t largest =
      std::min(record->points.decode.back().concurrency, engine.scheduler.max_num_seqs - 1);
  if (largest < 1) {
    return;
  }
  std::vector<std::int32_t> batches;
  for (std::int32_t c = 1; c < largest; c *= 4) {
    batches.push_back(c);
  }
  batches.push_back(largest);
  for (const std::int32_t c : batches) {
    const std::int32_t chunk = engine.scheduler.max_num_batched_tokens - c;
    if (chunk < 1) {
      break;
    }
    const std::int32_t output = 3 * ((longest + chunk - 1) / chunk) + 64;
    std::vector<calibrate::LoadedPrefillPoint> runs;
    for (std::int32_t i = 0; i < a.samples; ++i) {
      runs.push_back(probe.PrefillUnderDecode(longest, c, a.decode_prompt_tokens, output));
    }
    std::sort(runs.begin(), runs.end(),
              [](const auto& x, const auto& y) { return x.ttft_s < y.ttft_s; });
    calibrate::LoadedPrefillPoint p = runs[runs.size() / 2];
    p.samples = a.samples;
    std::cerr << fmt::format(
        "  prefill {:6} tokens beside {} decoding: TTFT {:>10} (median of {})\n", longest, c,
        Ms(p.ttft_s), p.samples);
    record->points.loaded_prefill.push_back(p);
  }
}

// The points: prompts one at a time up to the longest, then batches until the ITL leaves the
// TPOT SLO or the batch cap. Progress on stderr, a line a point.
void Measure(const CalibrateArgs& a, loadgen::CalibrationProbe& probe, const EngineConfig& engine,
             CalibrationRecord* record) {
  const std::int32_t longest = a.max_prompt_tokens.value_or(engine.max_model_len / 2);
  record->points.transport_s = probe.RoundTrip(9);
  std::cerr << fmt::format("  transport: {} a request (median GET /v1/models)\n",
                           Ms(record->points.transport_s));
  record->points.decode_prompt_tokens = a.decode_prompt_tokens;
  record->points.decode_output_tokens = a.decode_output_tokens;
  for (const std::int32_t tokens : calibrate::PromptLadder(longest)) {
    const calibrate::PrefillPoint p = probe.Prefill(tokens, a.samples);
    std::cerr << fmt::format("  prefill {:6} tokens: TTFT {:>10} (median of {})\n", tokens,
                             Ms(p.ttft_s), p.samples);
    record->points.prefill.push_back(p);
  }
  for (const std::int32_t batch :
       calibrate::ConcurrencyLadder(a.max_batch.value_or(engine.scheduler.max_num_seqs))) {
    calibrate::DecodePoint p;
    try {
      p = probe.Decode(batch, a.decode_prompt_tokens, a.decode_output_tokens);
    } catch (const loadgen::ProbeError& e) {
      if (record->points.decode.empty()) {
        throw;
      }
      // A target whose admission refuses a batch this large: the ladder ends here.
      std::cerr << "  decode x" << batch << ": " << e.what() << ": the batch ladder ends\n";
      break;
    }
    std::cerr << fmt::format("  decode  x{:<5} streams: ITL {:>10} (median of {} gaps)\n", batch,
                             Ms(p.itl_s), p.samples);
    record->points.decode.push_back(p);
    if (p.itl_s <= record->tpot_slo_s) {
      record->largest_batch_within_slo = batch;
    } else {
      record->ladder_stopped_at_slo = true;
      break;
    }
  }
  MeasureMixedSteps(a, probe, engine, longest, record);
}

// How the live run at mu went, in words: refusals by status, requests without an answer.
std::string Refusals(const loadgen::BenchResult& live) {
  std::string out;
  for (const auto& [status, count] : live.summary.rejected_by_status) {
    out += fmt::format(", refused {} ({})", count, status);
  }
  if (live.transport_errors > 0) {
    out += fmt::format(", {} without an answer", live.transport_errors);
  }
  return out;
}

// mu of the scenario's mix on the written profile, on the scheduler the points were planned
// with (the target's budgets, not ones derived again from the fitted profile), and the live
// run at it beside the simulator on the same arrivals. False when the live run was
// interrupted (Ctrl-C): nothing is recorded then.
bool Capacity(const CalibrateArgs& a, const Scenario& scenario, const calibrate::PointsFile* file,
              const std::string& profile_dir, CalibrationRecord* record) {
  AdmissionPolicy policy{};
  ParseAdmissionPolicy(!a.policy.empty()
                           ? a.policy
                           : scenario.settings.policy.value_or(*config::EngineDefaults().policy),
                       &policy);
  // A points file's engine is what the profile was fitted on: its chunking and context too.
  RunOverrides overrides = file != nullptr ? file->settings : RunOverrides{};
  overrides.profile = a.out;
  overrides.slo_budgets = false;
  overrides.max_num_batched_tokens = record->engine.max_num_batched_tokens;
  overrides.max_num_seqs = record->engine.max_num_seqs;
  const RunConfig rc = ResolveRunConfig(scenario, policy, profile_dir, overrides);
  const CapacityResult mu = MeasureCapacity(scenario, rc, CapacityOptions{});
  calibrate::CapacityRecord c;
  c.scenario = a.scenario;
  c.mu_rps = mu.mu_rps;
  c.at_search_ceiling = mu.at_search_ceiling;
  c.binding_slo = BindingSlo(mu, *scenario.slo.ttft_s, *scenario.slo.tpot_s);
  std::cerr << fmt::format("  mu {}{:.2f} req/s for {} on the fitted profile ({} bound)\n",
                           mu.at_search_ceiling ? ">= " : "", mu.mu_rps, a.scenario, c.binding_slo);
  if (!a.target.empty() && a.check_s > 0 && mu.mu_rps > 0) {
    const Scenario at_mu = CapacityProbeScenario(scenario, mu.mu_rps, a.check_s, scenario.seed);
    std::cerr << fmt::format("  live check: {:g} s at {:.2f} req/s against the simulator\n",
                             a.check_s, mu.mu_rps);
    loadgen::BenchOptions o;
    o.target_url = a.target;
    o.model = a.model;
    o.api_key = a.api_key;
    o.policy_label = "calibrate-check";
    o.seed = scenario.seed;
    const loadgen::BenchResult live = loadgen::RunBench(at_mu, o);
    if (live.interrupted) {
      return false;
    }
    SimOptions so;
    so.seed = scenario.seed;
    const RunSummary sim = Simulate(at_mu, rc, so);
    // mu's promise, live: the probe's criterion (sim/capacity.h) on the same arrivals.
    const CapacityProbe live_run = JudgeCapacityRun(live.summary, scenario, mu.mu_rps);
    const CapacityProbe sim_run = JudgeCapacityRun(sim, scenario, mu.mu_rps);
    c.live_check_verdict = live_run.within_slo ? "pass" : "fail";
    c.live_check_evidence = fmt::format(
        "live at {:.2f} req/s for {:g} s: completed {:.1f}%{}, p95 TTFT {} (SLO {}), p95 TPOT {} "
        "(SLO {}); the simulator on this profile, same arrivals: completed {:.1f}%, p95 TTFT {}, "
        "p95 TPOT {}{}",
        mu.mu_rps, a.check_s, live_run.completed_fraction * 100, Refusals(live),
        Ms(live_run.ttft_p95_s), Ms(*scenario.slo.ttft_s), Ms(live_run.tpot_p95_s),
        Ms(*scenario.slo.tpot_s), sim_run.completed_fraction * 100, Ms(sim_run.ttft_p95_s),
        Ms(sim_run.tpot_p95_s),
        sim_run.within_slo ? "" : " (over the SLOs: a short run near mu is noisy)");
    std::cerr << "  live check " << *c.live_check_verdict << ": " << c.live_check_evidence << "\n";
  }
  record->capacity = c;
  return true;
}

// The engine the points are planned on: the points file's engine (what its figures were
// measured on), else the scenario's settings (or the defaults), the base profile, admission
// off; --max-num-batched-tokens and --max-num-seqs are the target's own fixed budgets
// (SLO-derived budgets off).
EngineConfig PlannedEngineConfig(const CalibrateArgs& a, const Scenario* scenario,
                                 const calibrate::PointsFile* file, const std::string& profile_dir,
                                 calibrate::PlannedEngine* planned) {
  config::EngineSettings settings = file       ? file->settings
                                    : scenario ? ScenarioSettings(*scenario)
                                               : config::EngineSettings{};
  settings.profile = a.profile;
  settings.policy = "unbounded";
  planned->source = file ? a.points : scenario ? a.scenario : "the engine defaults";
  EngineConfig engine = ResolveEngine(settings, profile_dir, {}, planned->source);
  if (a.max_num_batched_tokens || a.max_num_seqs) {
    // The target's fixed budgets; a flag not given keeps the value resolved above.
    settings.slo_budgets = false;
    settings.max_num_batched_tokens =
        a.max_num_batched_tokens.value_or(engine.scheduler.max_num_batched_tokens);
    settings.max_num_seqs = a.max_num_seqs.value_or(engine.scheduler.max_num_seqs);
    planned->source += " with --max-num-batched-tokens/--max-num-seqs";
    engine = ResolveEngine(settings, profile_dir, {}, planned->source);
  }
  planned->max_num_batched_tokens = engine.scheduler.max_num_batched_tokens;
  planned->max_num_seqs = engine.scheduler.max_num_seqs;
  planned->long_prefill_token_threshold = engine.scheduler.long_prefill_token_threshold;
  planned->enable_chunked_prefill = engine.scheduler.enable_chunked_prefill;
  planned->max_model_len = engine.max_model_len;
  planned->slo_budgets = engine.slo_budgets.has_value();
  return engine;
}

// Why the requests cannot fit a context of `max_model_len` tokens ("" when they do).
std::string ContextError(const CalibrateArgs& a, std::int32_t max_model_len) {
  const std::int32_t longest = a.max_prompt_tokens.value_or(max_model_len / 2);
  if (longest + 1 > max_model_len || longest < 16) {
    return fmt::format(
        "--max-prompt-tokens: {} tokens and one to generate do not fit the context of {} "
        "(the base profile's, or the target's when it says)",
        longest, max_model_len);
  }
  if (static_cast<std::int64_t>(a.decode_prompt_tokens) + a.decode_output_tokens > max_model_len) {
    return fmt::format(
        "--decode-prompt-tokens {} and --decode-output-tokens {} do not fit the context of {}",
        a.decode_prompt_tokens, a.decode_output_tokens, max_model_len);
  }
  return "";
}

// Points of the fit: a burst counts three (its median TTFT, median TPOT and duration).
std::size_t PointCount(const calibrate::CalibrationPoints& p) {
  return p.prefill.size() + p.decode.size() + p.loaded_prefill.size() + 3 * p.bursts.size();
}

// Why --out cannot be written ("" when it can): its directory is made and PATH.partial opened
// and removed, before anything is measured.
std::string OutError(const std::string& out) {
  if (out.empty()) {
    return "--out: a file path is required";
  }
  try {
    const fs::path parent = fs::path(out).parent_path();
    if (!parent.empty()) {
      fs::create_directories(parent);
    }
    OutputFile probe(out, "--out");
  } catch (const fs::filesystem_error& e) {
    return "--out: " + out + ": " + e.code().message();
  } catch (const std::exception& e) {
    return e.what();  // "cannot write --out PATH: why"
  }
  return "";
}

// The points of a --points file, planned on `engine`: 0, or the exit status (its message
// written).
int PointsFromFile(const CalibrateArgs& a, const calibrate::PointsFile& file, const Profile& base,
                   const EngineConfig& engine, CalibrationRecord* record,
                   calibrate::PointPlans* plans) {
  for (std::size_t k = 0; k < file.points.decode.size(); ++k) {
    if (file.points.decode[k].concurrency > record->engine.max_num_seqs) {
      std::cerr << fmt::format(
          "{}: decode[{}]: {} streams, more than the planned engine's max_num_seqs ({}, from "
          "{}): its gaps are not one batch's step\n",
          a.points, k, file.points.decode[k].concurrency, record->engine.max_num_seqs,
          record->engine.source);
      return 2;
    }
  }
  record->points = file.points;
  record->from_points_file = true;
  record->engine_name = file.engine;
  record->model = base.model;
  record->measured_at = file.measured_at;
  const std::size_t bursts = record->points.bursts.size();
  std::cerr << fmt::format(
      "fitting {} ({} points{}) from profile {}, planned on a token budget of {} and at most {} "
      "sequences ({})\n",
      a.points, PointCount(record->points),
      bursts == 0
          ? std::string()
          : fmt::format(", {} of them in {} burst{}", 3 * bursts, bursts, bursts == 1 ? "" : "s"),
      base.name, record->engine.max_num_batched_tokens, record->engine.max_num_seqs,
      record->engine.source);
  try {
    *plans = calibrate::PlanPoints(engine, record->points);
  } catch (const std::invalid_argument& e) {
    std::cerr << a.points << ": the points do not fit the planned engine: " << e.what() << "\n";
    return 2;
  }
  return 0;
}

// The points measured on --target, planned on `engine` (its context cut to the target's when
// /v1/models says it is shorter): 0, or the exit status (its message written).
int PointsFromTarget(const CalibrateArgs& a, const Profile& base, EngineConfig* engine,
                     CalibrationRecord* record, calibrate::PointPlans* plans) {
  std::unique_ptr<loadgen::CalibrationProbe> probe;
  try {
    probe = std::make_unique<loadgen::CalibrationProbe>(
        loadgen::ProbeOptions{a.target, a.model, a.api_key, a.request_timeout_s});
  } catch (const std::exception& e) {
    std::cerr << "--target: " << e.what() << "\n";
    return 2;
  }
  if (const auto target_len = probe->max_model_len();
      target_len && *target_len < engine->max_model_len) {
    engine->max_model_len = *target_len;
  }
  if (const std::string error = ContextError(a, engine->max_model_len); !error.empty()) {
    std::cerr << error << "\n";
    return 2;
  }
  record->model = probe->model();
  if (record->model != base.model) {
    std::cerr << "note: the target serves " << record->model << ", the base profile " << base.name
              << " describes " << base.model
              << ": its hardware and model figures are kept (--profile names another)\n";
  }
  record->measured_at = UtcNow();
  std::cerr << fmt::format(
      "calibrating {} ({}) from profile {}: prompts to {} tokens, batches to {} or a TPOT over "
      "{}; planned on a token budget of {} and at most {} sequences ({})\n",
      a.target, record->model, base.name, a.max_prompt_tokens.value_or(engine->max_model_len / 2),
      a.max_batch.value_or(engine->scheduler.max_num_seqs), Ms(record->tpot_slo_s),
      record->engine.max_num_batched_tokens, record->engine.max_num_seqs, record->engine.source);
  try {
    Measure(a, *probe, *engine, record);
    *plans = calibrate::PlanPoints(*engine, record->points);
  } catch (const loadgen::ProbeError& e) {
    std::cerr << "the target did not serve a calibration request: " << e.what() << "\n";
    return 1;
  } catch (const std::invalid_argument& e) {
    std::cerr << "the points do not fit the planned engine: " << e.what() << "\n";
    return 2;
  }
  return 0;
}

int RunCalibrate(const CalibrateArgs& a) {
  if ((a.tpot_slo_s && !(std::isfinite(*a.tpot_slo_s) && *a.tpot_slo_s > 0)) ||
      !std::isfinite(a.check_s) || !std::isfinite(a.request_timeout_s)) {
    std::cerr << "--tpot-slo-s, --check-s and --request-timeout-s take finite numbers\n";
    return 2;
  }
  const std::string profile_dir = a.profile_dir.empty() ? DefaultProfileDir() : a.profile_dir;
  Profile base;
  std::optional<Scenario> scenario;
  std::error_code ec;
  try {
    if (!a.scenario.empty()) {
      scenario = LoadScenario(a.scenario);
      if (!scenario->slo.ttft_s || !scenario->slo.tpot_s) {
        std::cerr << a.scenario << ": slo: calibrate needs slo.ttft_s and slo.tpot_s for mu\n";
        return 2;
      }
    }
    base = LoadProfileByName(a.profile, profile_dir);
    if (fs::equivalent(a.out, a.profile, ec) ||
        fs::equivalent(a.out, fs::path(profile_dir) / (a.profile + ".yaml"), ec)) {
      std::cerr << "--out: " << a.out << " is the base profile: write the fit elsewhere\n";
      return 2;
    }
    for (const std::string* input : {&a.points, &a.scenario}) {
      if (!input->empty() && fs::equivalent(a.out, *input, ec)) {
        std::cerr << "--out: " << a.out << " is an input (" << *input
                  << "): write the fit elsewhere\n";
        return 2;
      }
    }
  } catch (const config::ConfigError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  std::optional<calibrate::PointsFile> file;
  try {
    if (!a.points.empty()) {
      file = calibrate::LoadPointsFile(a.points);
    }
  } catch (const config::ConfigError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  CalibrationRecord record;
  record.target = !file ? a.target
                  : file->source == a.points
                      ? "points file " + a.points
                      : fmt::format("points file {} ({})", a.points, file->source);
  record.command = Invocation();
  record.base_profile = base.name;
  EngineConfig engine;
  try {
    engine = PlannedEngineConfig(a, scenario ? &*scenario : nullptr, file ? &*file : nullptr,
                                 profile_dir, &record.engine);
  } catch (const config::ConfigError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  record.tpot_slo_s = a.tpot_slo_s.value_or(scenario ? *scenario->slo.tpot_s : 0.1);
  if (const std::string error = OutError(a.out); !error.empty()) {
    std::cerr << error << "\n";
    return 2;
  }
  calibrate::PointPlans plans;
  if (const int status = file ? PointsFromFile(a, *file, base, engine, &record, &plans)
                              : PointsFromTarget(a, base, &engine, &record, &plans);
      status != 0) {
    return status;
  }
  record.base_fit = calibrate::Evaluate(base, record.points, plans);
  record.fit = calibrate::FitProfile(base, record.points, plans);
  if (!std::isfinite(record.fit.rms_rel_error)) {
    std::cerr << "the fit failed: a point's prediction is not a finite multiple of its "
                 "measurement (a figure near 0, or a transport_s as long as a TTFT)\n";
    return 1;
  }
  const Profile& f = record.fit.profile;
  std::cerr << fmt::format(
      "fit: mfu {:.3g}, mbu {:.3g}, step overhead {}, per sequence {:.3g} ms, first token {}; "
      "error max {:.1f}%, rms {:.1f}% (the base profile's: max {:.1f}%)\n",
      f.mfu, f.mbu, Ms(f.step_overhead_s), f.per_seq_overhead_s * 1e3, Ms(f.first_token_overhead_s),
      record.fit.max_abs_rel_error * 100, record.fit.rms_rel_error * 100,
      record.base_fit.max_abs_rel_error * 100);
  if (record.fit.max_abs_rel_error > kFitWarning) {
    std::cerr << fmt::format(
        "warning: the fit misses a point by {:.1f}%: the planned engine ({}) may not be the "
        "{}; or the engine does what the cost model has no term for (docs/calibrate.md, Not "
        "modelled)\n",
        record.fit.max_abs_rel_error * 100, record.engine.source,
        file ? "one the points were measured on: the file's engine section says it"
             : "target's scheduler: give its --max-num-seqs and --max-num-batched-tokens, or "
               "the --scenario it serves");
  }
  try {
    WriteProfile(a, record);
    if (scenario) {
      if (!Capacity(a, *scenario, file ? &*file : nullptr, profile_dir, &record)) {
        std::cerr << "interrupted: " << a.out << " holds the fit, without mu\n";
        return 130;
      }
      WriteProfile(a, record);
    }
  } catch (const config::ConfigError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  if (record.capacity && record.capacity->mu_rps <= 0) {
    std::cerr << "mu is 0: even " << CapacityOptions{}.lo_rps << " req/s of " << a.scenario
              << "'s mix misses its SLOs on the fitted profile (or its requests do not fit the "
                 "engine)\n";
    return 1;
  }
  std::cout << fmt::format(
      "wrote {}: {} points, fit error max {:.1f}%{}\n", a.out, PointCount(record.points),
      record.fit.max_abs_rel_error * 100,
      record.capacity ? fmt::format(", mu {:.2f} req/s for {}", record.capacity->mu_rps, a.scenario)
                      : std::string(", mu not measured (no --scenario)"));
  const bool check_failed = record.capacity && record.capacity->live_check_verdict &&
                            *record.capacity->live_check_verdict == "fail";
  return check_failed ? 1 : 0;
}

}  // namespace

void AddCalibrateCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<CalibrateArgs>();
  CLI::App* cmd = app.add_subcommand("calibrate",
                                     "Measure an OpenAI-compatible engine and fit a profile to it");
  // What the fit is made from: exactly one of the two.
  CLI::Option_group* source =
      cmd->add_option_group("points", "What to fit (exactly one of the two)");
  source->add_option("--target", a->target,
                     "The engine's URL to measure, e.g. http://127.0.0.1:8000");
  CLI::Option* points =
      source->add_option("--points", a->points,
                         "A file of points measured elsewhere (public benchmark runs, say; "
                         "profiles/points/), fitted without measuring: its engine section is what "
                         "they were measured on");
  points->check(CLI::ExistingFile);
  source->require_option(1);
  cmd->add_option("--out", a->out, "The profile YAML to write")->required()->check(kNonEmptyPath);
  cmd->add_option("--profile", a->profile,
                  "The base profile (name or path): its hardware and model figures are kept")
      ->capture_default_str();
  cmd->add_option("--scenario", a->scenario,
                  "Find mu for this scenario's mix on the fitted profile and check it live; its "
                  "engine gives the chunk size and its TPOT SLO ends the batch ladder")
      ->check(CLI::ExistingFile);
  cmd->add_option("--name", a->name, "The profile's name (default: --out's file name)");
  cmd->add_option("--engine", a->engine,
                  "The engine and version the target runs, written into the profile");
  cmd->add_option("--max-num-batched-tokens", a->max_num_batched_tokens,
                  "The target's token budget per step (vLLM's flag; default: the scenario "
                  "engine's, as spillway serve --scenario runs it)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--max-num-seqs", a->max_num_seqs,
                  "The target's batch cap (vLLM's flag; default: the scenario engine's)")
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--max-prompt-tokens", a->max_prompt_tokens,
                  "The longest prompt measured (default: half the context: the base profile's "
                  "max_model_len, or the target's when /v1/models says and it is shorter)")
      ->check(CLI::Range(16, 1 << 24));
  cmd->add_option("--max-batch", a->max_batch,
                  "The largest batch tried (default: the planned engine's max_num_seqs; past it, "
                  "streams queue and the ITL is no longer one batch's step)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--tpot-slo-s", a->tpot_slo_s,
                  "The batch ladder stops past this ITL (default: the scenario's, else 0.1)")
      ->check(CLI::Range(1e-6, 3600.0));
  cmd->add_option("--samples", a->samples, "Requests per prompt length (their median counts)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  cmd->add_option("--decode-prompt-tokens", a->decode_prompt_tokens,
                  "Prompt of each decoding stream")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--decode-output-tokens", a->decode_output_tokens,
                  "Tokens each decoding stream generates")
      ->capture_default_str()
      ->check(CLI::Range(4, 1 << 20));
  cmd->add_option("--request-timeout-s", a->request_timeout_s,
                  "Cap on one calibration request, seconds (a target that stops answering)")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 3600.0));
  cmd->add_option("--check-s", a->check_s, "Seconds of the live run at mu (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
  cmd->add_option("--policy", a->policy,
                  "The admission the simulator runs the live check's arrivals with, as the "
                  "target's (default: the scenario's admission.policy, else forecast)")
      ->check(CLI::IsMember({"unbounded", "tail-drop", "predictive", "forecast"}));
  cmd->add_option("--model", a->model, "The model to request (default: the target's first)");
  cmd->add_option("--api-key", a->api_key, "Sent as Authorization: Bearer KEY");
  cmd->add_option("--profile-dir", a->profile_dir, "Directory of profile YAML files");
  // A live measurement's flags mean nothing for points read from a file: refused, not ignored.
  for (const char* live :
       {"--max-prompt-tokens", "--max-batch", "--tpot-slo-s", "--samples", "--decode-prompt-tokens",
        "--decode-output-tokens", "--request-timeout-s", "--check-s", "--model", "--api-key",
        "--policy"}) {
    cmd->get_option(live)->excludes(points);
  }
  cmd->callback([a, exit_code] { *exit_code = RunCalibrate(*a); });
}

}  // namespace spillway::app
