#include "policy/policy.h"

#include <algorithm>
#include <limits>

namespace spillway::policy {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

FieldSpec Number(std::string_view path, std::string_view label, std::string_view unit,
                 double lo = 0, double hi = kInf, bool lo_open = true) {
  return {path, label, unit, ValueKind::kNumber, lo, hi, lo_open, {}, true, false, false};
}
FieldSpec Integer(std::string_view path, std::string_view label, double lo, double hi) {
  return {path, label, "", ValueKind::kInteger, lo, hi, false, {}, true, false, false};
}
FieldSpec Measured(FieldSpec spec) {
  spec.must_measure = true;
  return spec;
}
FieldSpec Optional(FieldSpec spec) {
  spec.required = false;
  return spec;
}
FieldSpec Text(std::string_view path, std::string_view label) {
  return {path, label, "", ValueKind::kText, 0, 0, false, {}, true, true, false};
}
FieldSpec Choice(std::string_view path, std::string_view label,
                 std::vector<std::string_view> choices) {
  return {path, label, "", ValueKind::kChoice, 0, 0, false, std::move(choices), true, false, false};
}
FieldSpec Bool(std::string_view path, std::string_view label) {
  return {path, label, "", ValueKind::kBool, 0, 0, false, {}, true, false, false};
}

std::vector<FieldSpec> BuildFields() {
  constexpr double kMaxCount = 1 << 24;
  return {
      Text("policy.name", "Policy"),
      Integer("policy.max_age_days", "Measurements expire after (days)", 1, 3650),

      Text("model.name", "Model"),
      Text("model.profile", "Engine profile"),
      Number("model.weight_bytes", "Weight footprint", "bytes"),
      Number("model.gpu_memory_bytes", "GPU memory", "bytes"),
      Number("model.kv_bytes_per_token", "KV bytes/token", "bytes"),
      Integer("model.max_prompt_tokens", "Max prompt P (tokens)", 1, kMaxCount),

      Text("workload.scenario", "Scenario"),
      Number("workload.base_rate_rps", "lambda_base", "req/s"),
      Number("workload.burst_rate_rps", "lambda_burst", "req/s"),
      Number("workload.burst_duration_s", "Burst length", "s"),

      Number("slo.ttft_p95_s", "p95 TTFT", "s"),
      Number("slo.tpot_p95_s", "p95 TPOT", "s"),
      Number("slo.e2e_p99_s", "p99 E2E", "s"),
      Number("slo.goodput_share", "Goodput", "", 0, 1),

      Integer("capacity.replicas", "Replicas R", 1, 1 << 16),
      Measured(Number("capacity.single_replica_mu_rps", "Single-replica mu", "req/s")),
      Measured(Choice("capacity.binding_slo", "Binding SLO", {"ttft", "tpot", "neither"})),

      Choice("topology.selected", "Topology", {"replicas", "tensor_parallel", "pd_disaggregation"}),
      Optional(Text("topology.interconnect", "Interconnect")),

      Text("engine.version", "Engine (pinned version)"),
      Integer("engine.max_num_seqs", "--max-num-seqs", 1, kMaxCount),
      Optional(Integer("engine.max_num_active_seqs", "--max-num-active-seqs", 1, kMaxCount)),
      Integer("engine.max_num_batched_tokens", "--max-num-batched-tokens", 1, kMaxCount),
      Bool("engine.enable_chunked_prefill", "--enable-chunked-prefill"),
      Integer("engine.max_num_queued_reqs", "--max-num-queued-reqs", 1, kMaxCount),
      Optional(Integer("engine.max_num_queued_tokens", "--max-num-queued-tokens", 1, 1e12)),

      Number("admission.tenant_rate_rps", "Token bucket rate (per tenant)", "req/s"),
      Integer("admission.tenant_burst", "Token bucket burst (requests)", 1, kMaxCount),
      Choice("admission.ttft_policy", "Predictive TTFT admission",
             {"forecast", "predictive", "tail-drop", "unbounded"}),
      Number("admission.kv_headroom", "KV headroom gate (gpu_cache_usage_perc)", "", 0, 1),

      Number("timeouts.client_s", "Client timeout", "s"),
      Number("timeouts.gateway_s", "Gateway timeout (504)", "s"),
      Number("timeouts.queue_ingress_s", "Queue ingress deadline", "s"),

      Optional(Text("cascade.fallback_model", "Model cascade: fallback model")),
      Optional(Measured(Number("cascade.fallback_ttft_p95_s", "Measured fallback TTFT", "s"))),
      Optional(Measured(
          Number("cascade.quality_delta", "Quality delta on the eval set", "", -1e9, 1e9, false))),
      Optional(Integer("cascade.clamp_max_tokens", "Clamp max_tokens to", 1, kMaxCount)),
      Optional(Bool("cascade.exact_cache", "Exact-result cache")),

      Integer("retry.max_retries", "Max retries", 0, 100),
      Choice("retry.backoff", "Backoff", {"exponential_jitter"}),
      Number("retry.per_client_rate_rps", "Per-client token bucket at the gateway", "req/s"),

      Number("observability.waiting_requests", "num_requests_waiting above", "", 0, kInf, false),
      Number("observability.waiting_for_s", "... for", "s"),
      Number("observability.kv_cache_usage", "gpu_cache_usage_perc above", "", 0, 1),
      Number("observability.kv_cache_usage_for_s", "... for", "s"),
      Number("observability.preemptions_per_min", "num_preemptions_total rate above", "1/min", 0,
             kInf, false),
      Number("observability.rejections_429_per_s", "429 rate above", "1/s", 0, kInf, false),
      Number("observability.goodput_share_of_mu", "Goodput below (share of aggregate mu)", "", 0,
             1),
      Number("observability.goodput_for_s", "... for", "s"),

      Number("cost.gpu_hour_usd", "GPU cost", "$/h/GPU", 0, 1e6, false),
      Optional(Measured(Number("cost.wasted_usd_naive_fifo", "Wasted cost under naive FIFO", "$", 0,
                               kInf, false))),
      Optional(Number("cost.spillover_usd_per_1k_tokens", "Cloud spillover", "$/1k tokens", 0, kInf,
                      false)),
      Optional(Number("cost.burst_budget_usd_per_day", "Burst absorption budget", "$/day", 0, kInf,
                      false)),

      Optional(Text("approval.signed_by", "Approval sign-off")),
      Optional(Text("approval.date", "Date")),
  };
}

}  // namespace

const std::vector<FieldSpec>& PolicyFields() {
  static const std::vector<FieldSpec> fields = BuildFields();
  return fields;
}

const FieldSpec* FindField(std::string_view path) {
  const auto& fields = PolicyFields();
  const auto it = std::find_if(fields.begin(), fields.end(),
                               [&](const FieldSpec& f) { return f.path == path; });
  return it == fields.end() ? nullptr : &*it;
}

const std::vector<std::string_view>& PolicySections() {
  static const std::vector<std::string_view> sections = {
      "policy",        "model",     "workload",     "slo",      "capacity", "topology",
      "engine",        "admission", "cancellation", "timeouts", "cascade",  "retry",
      "observability", "cost",      "validation",   "approval"};
  return sections;
}

const std::vector<std::pair<std::string_view, std::string_view>>& ChecklistItems(
    std::string_view section) {
  static const std::vector<std::pair<std::string_view, std::string_view>> cancellation = {
      {"disconnect_seen", "The server sees the client's disconnect (no buffering in between)"},
      {"disconnect_polled", "The streaming loop checks for the disconnect"},
      {"abort_at_iteration", "On a disconnect the engine aborts the request at the next step"},
      {"kv_freed", "Its KV blocks are back in the pool at the next step boundary"},
  };
  static const std::vector<std::pair<std::string_view, std::string_view>> validation = {
      {"replica_baseline", "Replica baseline measured: p95 TTFT, p95 TPOT, goodput"},
      {"chunked_prefill_baseline",
       "Chunked-prefill tuned baseline measured: does it satisfy the SLO without more GPUs?"},
      {"admission_rejects", "Admission rejects at W_est > the TTFT SLO in a load test"},
      {"disconnect_frees_kv", "Client disconnect -> abort -> KV blocks freed, in a load test"},
      {"cascade_tested", "Fallback cascade tested: 429 -> model cascade -> degradation -> cache"},
      {"retry_storm", "Retry storm of 100 clients x 3 retries with jitter: no synchronised spike"},
      {"trace_replay",
       "Cost model validated against a traffic replay (a trace replay checked against the "
       "simulator's prediction)"},
  };
  static const std::vector<std::pair<std::string_view, std::string_view>> none;
  if (section == "cancellation") {
    return cancellation;
  }
  if (section == "validation") {
    return validation;
  }
  return none;
}

const Value* Policy::Find(std::string_view path) const {
  const auto it = values.find(path);
  return it == values.end() ? nullptr : &it->second;
}

std::optional<double> Policy::Number(std::string_view path) const {
  const Value* v = Find(path);
  if (v == nullptr) {
    return std::nullopt;
  }
  return v->number;
}

std::string_view VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kFail:
      return "fail";
    case Verdict::kUnchecked:
      break;
  }
  return "unchecked";
}

}  // namespace spillway::policy
