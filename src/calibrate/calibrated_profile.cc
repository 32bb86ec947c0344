#include "calibrate/calibrated_profile.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

namespace spillway::calibrate {
namespace {

// Six significant digits, as a YAML float the reader takes back.
std::string G(double v) { return fmt::format("{:.6g}", v); }

void Figure(YAML::Emitter& out, const char* key, double value, const char* comment = nullptr) {
  out << YAML::Key << key << YAML::Value << G(value);
  if (comment != nullptr) {
    out << YAML::Comment(comment);
  }
}

void Hardware(YAML::Emitter& out, const Profile& p) {
  out << YAML::Key << "hardware" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "gpu" << YAML::Value << p.gpu;
  Figure(out, "peak_flops", p.peak_flops);
  Figure(out, "hbm_bandwidth_bytes_per_s", p.hbm_bandwidth_bytes_per_s);
  Figure(out, "hbm_capacity_bytes", p.hbm_capacity_bytes);
  out << YAML::EndMap;
}

void Model(YAML::Emitter& out, const Profile& p) {
  out << YAML::Key << "model" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << p.model;
  Figure(out, "num_params", p.num_params);
  out << YAML::Key << "num_layers" << YAML::Value << p.num_layers;
  out << YAML::Key << "hidden_size" << YAML::Value << p.hidden_size;
  out << YAML::Key << "num_kv_heads" << YAML::Value << p.num_kv_heads;
  out << YAML::Key << "head_dim" << YAML::Value << p.head_dim;
  out << YAML::Key << "dtype_bytes" << YAML::Value << p.dtype_bytes;
  out << YAML::Key << "max_model_len" << YAML::Value << p.max_model_len;
  out << YAML::EndMap;
}

void Efficiency(YAML::Emitter& out, const Profile& p) {
  out << YAML::Key << "efficiency" << YAML::Value << YAML::BeginMap;
  Figure(out, "mfu", p.mfu, "fitted");
  Figure(out, "mbu", p.mbu, "fitted");
  Figure(out, "step_overhead_s", p.step_overhead_s, "fitted");
  Figure(out, "per_seq_overhead_s", p.per_seq_overhead_s, "fitted");
  Figure(out, "first_token_overhead_s", p.first_token_overhead_s, "fitted");
  out << YAML::EndMap;
}

void Memory(YAML::Emitter& out, const Profile& p) {
  out << YAML::Key << "memory" << YAML::Value << YAML::BeginMap;
  Figure(out, "gpu_memory_utilization", p.gpu_memory_utilization);
  Figure(out, "activation_reserve_bytes", p.activation_reserve_bytes);
  out << YAML::Key << "block_size" << YAML::Value << p.block_size;
  out << YAML::EndMap;
}

// key: [{FIELDS..., samples, predicted_s, rel_error}, ...], one flow map a point.
template <typename Point, typename Fields>
void PointList(YAML::Emitter& out, const char* key, const char* comment,
               const std::vector<Point>& points, const std::vector<PointError>& errors,
               Fields fields) {
  out << YAML::Key << key << YAML::Comment(comment) << YAML::Value << YAML::BeginSeq;
  for (std::size_t i = 0; i < points.size(); ++i) {
    out << YAML::Flow << YAML::BeginMap;
    fields(points[i]);
    out << YAML::Key << "samples" << YAML::Value << points[i].samples;
    Figure(out, "predicted_s", errors.at(i).predicted_s);
    Figure(out, "rel_error", errors.at(i).rel_error);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

void Points(YAML::Emitter& out, const CalibrationRecord& r) {
  // What each list holds: the points calibrate measured, or the ones a points file says.
  const auto said = [&r](const char* measured, const char* read) {
    return r.from_points_file ? read : measured;
  };
  PointList(out, "prefill",
            said("one prompt at a time, max_tokens 1", "one prompt at a time (points file)"),
            r.points.prefill, r.fit.prefill, [&out](const PrefillPoint& p) {
              out << YAML::Key << "prompt_tokens" << YAML::Value << p.prompt_tokens;
              Figure(out, "ttft_s", p.ttft_s);
            });
  PointList(out, "decode",
            said("streams decoding together", "streams decoding together (points file)"),
            r.points.decode, r.fit.decode, [&out](const DecodePoint& p) {
              out << YAML::Key << "concurrency" << YAML::Value << p.concurrency;
              out << YAML::Key << "context_tokens" << YAML::Value << p.context_tokens;
              Figure(out, "itl_s", p.itl_s);
            });
  PointList(out, "prefill_under_decode",
            said("the longest prompt sent while streams decode",
                 "a prompt sent while streams decode (points file)"),
            r.points.loaded_prefill, r.fit.loaded_prefill, [&out](const LoadedPrefillPoint& p) {
              out << YAML::Key << "prompt_tokens" << YAML::Value << p.prompt_tokens;
              out << YAML::Key << "concurrency" << YAML::Value << p.concurrency;
              out << YAML::Key << "context_tokens" << YAML::Value << p.context_tokens;
              out << YAML::Key << "stream_output_tokens" << YAML::Value << p.stream_output_tokens;
              Figure(out, "ttft_s", p.ttft_s);
            });
  // A burst: its three figures measured, predicted and the error (the request lists stay in
  // the points file the source names).
  out << YAML::Key << "bursts" << YAML::Comment("requests sent at once (points file)")
      << YAML::Value << YAML::BeginSeq;
  for (std::size_t i = 0; i < r.points.bursts.size(); ++i) {
    const BurstPoint& b = r.points.bursts[i];
    const BurstErrors& e = r.fit.bursts.at(i);
    out << YAML::BeginMap;
    out << YAML::Key << "source" << YAML::Value << b.source;
    out << YAML::Key << "requests" << YAML::Value << b.prompt_tokens.size();
    for (const auto& [key, error] :
         {std::pair{"ttft_median_s", &e.ttft_median}, std::pair{"tpot_median_s", &e.tpot_median},
          std::pair{"duration_s", &e.duration}}) {
      out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap;
      Figure(out, "measured", error->measured_s);
      Figure(out, "predicted", error->predicted_s);
      Figure(out, "rel_error", error->rel_error);
      out << YAML::EndMap;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

void Calibration(YAML::Emitter& out, const CalibrationRecord& r) {
  out << YAML::Key << "calibration" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "target" << YAML::Value << r.target;
  out << YAML::Key << "model" << YAML::Value << r.model;
  out << YAML::Key << "measured_at" << YAML::Value << r.measured_at;
  out << YAML::Key << "command" << YAML::Value << r.command;
  out << YAML::Key << "base_profile" << YAML::Value << r.base_profile;
  Figure(out, "transport_s", r.points.transport_s,
         r.from_points_file
             ? "the points file's: in every TTFT, not in the engine's steps"
             : "median GET /v1/models on a new connection: in every TTFT, not in the engine's "
               "steps");
  out << YAML::Key << "engine_plans" << YAML::Comment("the scheduler the points are planned with")
      << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "max_num_batched_tokens" << YAML::Value << r.engine.max_num_batched_tokens;
  out << YAML::Key << "max_num_seqs" << YAML::Value << r.engine.max_num_seqs;
  out << YAML::Key << "long_prefill_token_threshold" << YAML::Value
      << r.engine.long_prefill_token_threshold;
  out << YAML::Key << "enable_chunked_prefill" << YAML::Value << r.engine.enable_chunked_prefill;
  out << YAML::Key << "max_model_len" << YAML::Value << r.engine.max_model_len;
  out << YAML::Key << "slo_budgets" << YAML::Value << r.engine.slo_budgets;
  out << YAML::Key << "from" << YAML::Value << r.engine.source;
  out << YAML::EndMap;
  out << YAML::Key << "fit" << YAML::Value << YAML::BeginMap;
  Figure(out, "max_abs_rel_error", r.fit.max_abs_rel_error);
  Figure(out, "rms_rel_error", r.fit.rms_rel_error);
  Figure(out, "base_profile_max_abs_rel_error", r.base_fit.max_abs_rel_error);
  Figure(out, "base_profile_rms_rel_error", r.base_fit.rms_rel_error);
  out << YAML::Key << "not_identifiable" << YAML::Value
      << "mbu against step_overhead_s from lone prompts and pure decode batches (both raise "
         "every step alike): the prefills under decode, or bursts' TPOT over batches of every "
         "size, tell them apart; without those, mbu stays near the base profile's";
  out << YAML::EndMap;
  Points(out, r);
  if (!r.from_points_file) {  // the batch ladder is calibrate's own measurement
    out << YAML::Key << "tpot_slo_s" << YAML::Value << G(r.tpot_slo_s);
    out << YAML::Key << "largest_batch_within_tpot_slo" << YAML::Value;
    if (r.largest_batch_within_slo) {
      out << *r.largest_batch_within_slo;
    } else {
      out << YAML::Null;
    }
    out << YAML::Key << "batch_ladder_stopped_at_slo" << YAML::Value << r.ladder_stopped_at_slo;
  }
  if (r.capacity) {
    const CapacityRecord& c = *r.capacity;
    out << YAML::Key << "capacity" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "scenario" << YAML::Value << c.scenario;
    Figure(out, "mu_rps", c.mu_rps, "sim --measure-capacity on this profile");
    out << YAML::Key << "at_search_ceiling" << YAML::Value << c.at_search_ceiling;
    out << YAML::Key << "binding_slo" << YAML::Value << c.binding_slo;
    if (c.live_check_verdict) {
      out << YAML::Key << "live_check" << YAML::Value << YAML::BeginMap;
      out << YAML::Key << "verdict" << YAML::Value << *c.live_check_verdict;
      out << YAML::Key << "evidence" << YAML::Value << c.live_check_evidence;
      out << YAML::EndMap;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

}  // namespace

std::string CalibratedProfileYaml(const CalibrationRecord& record, const std::string& name,
                                  const std::string& description, const std::string& engine) {
  const Profile& p = record.fit.profile;
  YAML::Emitter out;
  out << YAML::Comment(fmt::format(
      "{}: fitted by `spillway calibrate` to {}{}. Hardware, model and memory figures are "
      "the base profile's ({}); the efficiency terms are fitted to the points under "
      "`calibration`.",
      name, record.target,
      record.measured_at.empty() ? std::string() : " (measured " + record.measured_at + ")",
      record.base_profile));
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << name;
  out << YAML::Key << "description" << YAML::Value << description;
  out << YAML::Key << "engine" << YAML::Value << (engine.empty() ? record.model : engine);
  Hardware(out, p);
  Model(out, p);
  Efficiency(out, p);
  Memory(out, p);
  Calibration(out, record);
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace spillway::calibrate
