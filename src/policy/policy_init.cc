#include "policy/policy_init.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include <boost/json.hpp>

#include "config/config_error.h"
#include "config/engine_settings.h"
#include "config/text_file.h"
#include "policy/policy.h"
#include "policy/policy_check.h"

namespace spillway::policy {
namespace {

namespace json = boost::json;

// `text` as a double-quoted YAML scalar.
std::string Q(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
    }
    out += c == '\n' ? ' ' : c;
  }
  return out + "\"";
}

std::string Figure(double v) { return fmt::format("{:.6g}", v); }

// "  key:\n    value: V\n    SOURCE: TEXT\n"
std::string Sourced(std::string_view key, const std::string& value, std::string_view source,
                    std::string_view text) {
  return fmt::format("  {}:\n    value: {}\n    {}: {}\n", key, value, source, Q(text));
}
std::string Decision(std::string_view key, const std::string& value, std::string_view why) {
  return Sourced(key, value, "decision", why);
}
std::string Bound(std::string_view key, const std::string& value, std::string_view arithmetic) {
  return Sourced(key, value, "bound", arithmetic);
}
std::string Measured(std::string_view key, const std::string& value, const Measurement& m) {
  return fmt::format(
      "  {}:\n    value: {}\n    measured:\n      run: {}\n      command: {}\n      at: {}\n"
      "      engine: {}\n      profile: {}\n",
      key, value, Q(m.run), Q(m.command), Q(m.at), Q(m.engine), Q(m.profile));
}
std::string Measured(std::string_view key, const std::string& value, const CapacityRun& run) {
  return Measured(key, value,
                  Measurement{run.file, run.command, run.measured_at, run.engine, run.profile});
}

std::int32_t DistMax(const TokenDist& d) {
  return d.kind == TokenDist::Kind::kFixed ? d.value : d.max;
}

// The workload's base and burst rates and the burst's length, and how they were read.
struct Rates {
  double base = 0;
  double burst = 0;
  Seconds burst_s = 0;
  std::string how;
};

Rates RatesOf(const Scenario& s) {
  Rates r;
  switch (s.arrival.kind) {
    case ArrivalProcess::Kind::kSteps: {
      r.base = s.arrival.steps.front().rate_rps;
      for (const RateStep& step : s.arrival.steps) {
        r.burst = std::max(r.burst, step.rate_rps);
      }
      bool in_burst = false;
      for (const RateStep& step : s.arrival.steps) {
        if (step.rate_rps == r.burst) {
          r.burst_s += step.duration_s;
          in_burst = true;
        } else if (in_burst) {
          break;  // the first burst's steps
        }
      }
      r.how = "the scenario's first step (base) and its highest (burst)";
      break;
    }
    case ArrivalProcess::Kind::kTrace: {
      // The records the replay window holds (after time scaling), as the arrivals do.
      const auto records = s.TraceRecords();
      const Seconds span = std::max(s.ArrivalSpan(), 1e-9);
      const Seconds from_s = s.arrival.trace_start_s;
      std::int64_t in_window = 0;
      for (const TraceRecord& rec : *records) {
        const Seconds t = rec.time_s * s.arrival.time_scale;
        in_window += t >= from_s && t < from_s + span ? 1 : 0;
      }
      r.base = r.burst = static_cast<double>(in_window) * s.arrival.rate_multiplier / span;
      r.burst_s = span;
      r.how = "the trace's mean rate over its replay window (a trace has no separate burst)";
      break;
    }
    case ArrivalProcess::Kind::kBurst:
      r.base = r.burst = static_cast<double>(s.arrival.burst_count);
      r.burst_s = 1;
      r.how = "the scenario's burst: its requests within one second";
      break;
    case ArrivalProcess::Kind::kPoisson:
      r.base = r.burst = s.arrival.rate_rps;
      r.burst_s = s.ArrivalSpan();
      r.how = "the scenario's one Poisson rate";
      break;
  }
  return r;
}

const json::value& Key(const json::object& o, std::string_view key, const std::string& file) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr) {
    throw config::ConfigError(fmt::format(
        "{}: no \"{}\": not a capacity run of spillway sim --measure-capacity --json (one "
        "written before its provenance was recorded: measure again)",
        file, key));
  }
  return *v;
}

std::string StringKey(const json::object& o, std::string_view key, const std::string& file) {
  const json::value& v = Key(o, key, file);
  if (!v.is_string()) {
    throw config::ConfigError(fmt::format("{}: \"{}\" must be a string", file, key));
  }
  return std::string(v.as_string());
}

}  // namespace

CapacityRun ReadCapacityRun(const std::string& path) {
  const std::string text = config::ReadInputFile(path);
  boost::system::error_code ec;
  const json::value doc = json::parse(text, ec);
  if (ec) {
    throw config::ConfigError(path + ": not JSON (" + ec.message() + ")");
  }
  if (!doc.is_object()) {
    throw config::ConfigError(path + ": not a JSON object (a capacity run is one)");
  }
  const json::object& o = doc.as_object();
  CapacityRun run;
  run.file = path;
  const json::value& mu = Key(o, "mu_rps", path);
  if (!mu.is_number()) {
    throw config::ConfigError(path + ": \"mu_rps\" must be a number");
  }
  if (!(mu.to_number<double>() > 0)) {
    throw config::ConfigError(path + ": \"mu_rps\" must be > 0 (0: no probed rate met the SLOs)");
  }
  run.mu_rps = mu.to_number<double>();
  const json::value& ceiling = Key(o, "at_search_ceiling", path);
  run.at_search_ceiling = ceiling.is_bool() && ceiling.as_bool();
  run.binding_slo = StringKey(o, "binding_slo", path);
  if (run.binding_slo != "ttft" && run.binding_slo != "tpot" && run.binding_slo != "neither") {
    throw config::ConfigError(path + ": \"binding_slo\" must be ttft, tpot or neither, got \"" +
                              run.binding_slo + "\"");
  }
  run.scenario = StringKey(o, "scenario", path);
  run.profile = StringKey(o, "profile", path);
  run.engine = StringKey(o, "engine", path);
  run.command = StringKey(o, "command", path);
  run.measured_at = StringKey(o, "measured_at", path);
  if (!ParseDay(run.measured_at)) {
    throw config::ConfigError(path +
                              ": \"measured_at\" must be a UTC time YYYY-MM-DDThh:mm:ssZ, "
                              "got \"" +
                              run.measured_at + "\"");
  }
  return run;
}

std::int32_t MaxPromptTokens(const Scenario& s) {
  std::int32_t longest = 0;
  if (s.arrival.kind == ArrivalProcess::Kind::kTrace) {
    for (const TraceRecord& r : *s.TraceRecords()) {
      longest = std::max(longest, r.prompt_tokens);
    }
    return longest;
  }
  for (const RequestClass& c : s.classes) {
    longest = std::max(longest, DistMax(c.prompt_tokens));
  }
  return longest;
}

std::string InitPolicyYaml(const InitInputs& in) {
  const Scenario& sc = *in.scenario;
  const EngineConfig& e = *in.engine;
  const Profile& p = e.profile;
  const CapacityRun& run = in.run;
  const std::string profile_file = fmt::format("profiles/{}.yaml", p.name);
  const Rates rates = RatesOf(sc);
  const Seconds ttft = sc.slo.ttft_s.value_or(1.0);
  const Seconds tpot = sc.slo.tpot_s.value_or(0.035);
  const Seconds deadline = std::isfinite(e.admission.request_deadline_s)
                               ? e.admission.request_deadline_s
                               : config::EngineDefaults().request_timeout_s.value_or(4.5);
  const Seconds client = sc.objectives.e2e_p99_s.value_or(deadline + 0.5);
  std::string y = fmt::format(
      "# A draft Overload and Failure Policy (../shared/seeds/overload-and-failure-handling.txt "
      "§7),\n# written by `spillway policy init` from {} and {}.\n# Measured values cite the "
      "run; the others say their bound or why they were chosen. Review\n# every decision, then "
      "`spillway policy check` it. Format: docs/policy.md.\n",
      run.file, in.scenario_path);
  y += "policy:\n";
  y += fmt::format(
      "  name: {}\n",
      Q(in.name.empty() ? fmt::format("draft for {} ({})", p.name, run.engine) : in.name));
  y += Decision("max_age_days", "90",
                "re-measure each quarter, and after any change of model, engine, GPU or "
                "scheduler");

  y += "\nmodel:\n";
  y += fmt::format("  name: {}\n  profile: {}\n", Q(p.model), Q(p.name));
  y += Bound(
      "weight_bytes", Figure(p.weight_bytes()),
      fmt::format("{:.4g} parameters x {} bytes ({})", p.num_params, p.dtype_bytes, profile_file));
  y += Bound("gpu_memory_bytes", Figure(p.hbm_capacity_bytes),
             fmt::format("{} ({} hardware.hbm_capacity_bytes)", p.gpu, profile_file));
  y += Bound("kv_bytes_per_token", Figure(p.kv_bytes_per_token()),
             fmt::format("2 (K and V) x {} layers x {} KV heads x {} head dim x {} bytes ({})",
                         p.num_layers, p.num_kv_heads, p.head_dim, p.dtype_bytes, profile_file));
  y += Decision("max_prompt_tokens", std::to_string(MaxPromptTokens(sc)),
                fmt::format("the longest prompt of {}", in.scenario_path));

  y += "\nworkload:\n";
  y += fmt::format("  scenario: {}\n", Q(in.scenario_path));
  y += Decision("base_rate_rps", Figure(rates.base), rates.how);
  y += Decision("burst_rate_rps", Figure(rates.burst), rates.how);
  y += Decision("burst_duration_s", Figure(rates.burst_s), rates.how);

  y += "\nslo:\n";
  y += Decision("ttft_p95_s", Figure(ttft), fmt::format("{} slo.ttft_s", in.scenario_path));
  y += Decision("tpot_p95_s", Figure(tpot), fmt::format("{} slo.tpot_s", in.scenario_path));
  y += Decision("e2e_p99_s", Figure(client),
                sc.objectives.e2e_p99_s
                    ? fmt::format("{} objectives.e2e_p99_s", in.scenario_path)
                    : std::string("the request deadline + 0.5 s (the scenario gives none)"));
  y += Decision("goodput_share", "0.999", "the lesson's goodput objective (§7); set your own");

  y += "\ncapacity:\n";
  y += Decision("replicas", "1", "one replica: raise it to what the burst needs (check warns)");
  y += Measured("single_replica_mu_rps", Figure(run.mu_rps), run);
  y += Measured("binding_slo", run.binding_slo, run);

  const bool fits = p.weight_bytes() < p.gpu_memory_utilization * p.hbm_capacity_bytes;
  y += "\ntopology:\n";
  y += Decision("selected", fits ? "replicas" : "tensor_parallel",
                fits ? fmt::format("the weights ({:.3g} GB) fit one {}: replicas",
                                   p.weight_bytes() / 1e9, p.gpu)
                     : fmt::format("the weights ({:.3g} GB) do not fit one {}",
                                   p.weight_bytes() / 1e9, p.gpu));

  const SchedulerConfig& s = e.scheduler;
  const std::string budget_source =
      e.slo_budgets ? "the largest batch whose modelled step stays within 0.9 x the TPOT SLO on "
                      "the profile, with room for a prefill chunk (sched/slo_budget.h)"
                    : "the engine's setting for the scenario";
  y += "\nengine:\n";
  y += fmt::format("  version: {}\n", Q(run.engine));
  y += (e.slo_budgets ? Bound : Decision)("max_num_seqs", std::to_string(s.max_num_seqs),
                                          budget_source);
  y += (e.slo_budgets ? Bound : Decision)(
      "max_num_batched_tokens", std::to_string(s.max_num_batched_tokens),
      e.slo_budgets ? "the batch plus the largest prefill chunk within the same step time"
                    : budget_source);
  y += Decision("enable_chunked_prefill", s.enable_chunked_prefill ? "true" : "false",
                s.enable_chunked_prefill
                    ? "long prompts are prefilled in chunks within the token budget, so decodes "
                      "keep their TPOT"
                    : "the scenario turns it off");
  const std::int32_t queued =
      e.admission.max_num_queued_reqs > 0 ? e.admission.max_num_queued_reqs : 256;
  y += Decision("max_num_queued_reqs", std::to_string(queued),
                "a backstop for floods (503); admission by forecast and the ingress deadline "
                "shed first");

  y += "\nadmission:\n";
  y += Decision("tenant_rate_rps", Figure(rates.burst),
                "one tenant may offer the whole burst; the bucket stops a runaway client");
  y += Decision("tenant_burst", std::to_string(std::max(1, static_cast<int>(2 * rates.burst))),
                "two seconds of a tenant's rate");
  y += Decision("ttft_policy", "forecast",
                "admits when the per-request TTFT forecast meets the SLO (docs/serve.md)");
  y += Decision("kv_headroom", Figure(e.admission.kv_headroom),
                "the lesson's gate (gpu_cache_usage_perc > 0.85 defers prefill admission)");

  y += "\ncancellation:\n";
  for (const auto& [id, wording] : ChecklistItems("cancellation")) {
    y += fmt::format("  {}:\n    verdict: unchecked\n", id);
  }

  y += "\ntimeouts:\n";
  y += Decision("client_s", Figure(client), "the p99 E2E objective: clients give up then");
  y += Decision("gateway_s", Figure(deadline),
                "the request deadline (504) before the client gives up");
  y += Decision("queue_ingress_s", Figure(ttft),
                "the TTFT SLO; a request still waiting then is dropped at the queue head");

  y += "\ncascade:\n";
  if (in.cascade) {
    y += "  fallback_model: " + Q(in.cascade->model) + "\n";
    y += Measured("fallback_ttft_p95_s", Figure(in.cascade->ttft_p95_s), in.cascade->evidence);
  }
  y +=
      Decision("clamp_max_tokens", "64", "the lesson's quality degradation (max_tokens 256 -> 64)");

  y += "\nretry:\n";
  y += Decision("max_retries", "3", "the lesson's retry guidance");
  y += Decision("backoff", "exponential_jitter",
                "Retry-After x 2^attempt + up to 0.5 s of jitter (the lesson's exercise 3)");
  y += Decision("per_client_rate_rps", "5", "a client retrying within the guidance stays under it");

  y += "\nobservability:\n";
  y += Decision("waiting_requests", "10", "the lesson's page (num_requests_waiting > 10 for 30 s)");
  y += Decision("waiting_for_s", "30", "the lesson's page");
  y += Decision("kv_cache_usage", "0.9",
                "the lesson's page (gpu_cache_usage_perc > 0.90 for 60 s), above the 0.85 gate");
  y += Decision("kv_cache_usage_for_s", "60", "the lesson's page");
  y += Decision("preemptions_per_min", "1",
                "the lesson's page (num_preemptions_total rate > 1/min)");
  y += Decision("rejections_429_per_s", "5", "the lesson's page (429 rate > 5/s)");
  y += Decision("goodput_share_of_mu", "0.9", "the lesson's page (goodput < 90% of mu for 60 s)");
  y += Decision("goodput_for_s", "60", "the lesson's page");

  y += "\ncost:\n";
  if (in.gpu_hour_usd) {
    y +=
        Bound("gpu_hour_usd", Figure(*in.gpu_hour_usd),
              in.gpu_price_source.empty() ? "the price given to policy init" : in.gpu_price_source);
  } else {
    y += Decision("gpu_hour_usd", "0",
                  fmt::format("not set: the price you pay per {} hour (policy init "
                              "--gpu-hour-usd)",
                              p.gpu));
  }
  if (in.naive_fifo) {
    y += Measured("wasted_usd_naive_fifo", Figure(in.naive_fifo->usd), in.naive_fifo->evidence);
  }

  y += "\nvalidation:\n";
  for (const auto& [id, wording] : ChecklistItems("validation")) {
    y += fmt::format("  {}:\n    verdict: unchecked\n", id);
  }
  return y;
}

}  // namespace spillway::policy
