#include "policy/policy_check.h"

#include <fmt/format.h>
#include <algorithm>

namespace spillway::policy {
namespace {

using std::chrono::sys_days;

class Checker {
 public:
  Checker(const Policy& p, sys_days today) : p_(p), today_(today) {}

  std::vector<Finding> Run() {
    for (const FieldSpec& spec : PolicyFields()) {
      if (const Value* v = p_.Find(spec.path)) {
        CheckSource(*v);
      }
    }
    CheckChecklist(p_.cancellation, "cancellation");
    CheckChecklist(p_.validation, "validation");
    CheckApproval();
    CheckConsistency();
    CheckTimeouts();
    CheckGates();
    CheckCapacity();
    std::stable_sort(out_.begin(), out_.end(), [](const Finding& a, const Finding& b) {
      return a.severity == Severity::kError && b.severity != Severity::kError;
    });
    return std::move(out_);
  }

 private:
  void Add(Severity s, const std::string& where, std::string message) {
    out_.push_back({s, where, std::move(message)});
  }
  void Error(const std::string& where, std::string message) {
    Add(Severity::kError, where, std::move(message));
  }
  void Warn(const std::string& where, std::string message) {
    Add(Severity::kWarning, where, std::move(message));
  }
  std::string Where(std::string_view path) const {
    const Value* v = p_.Find(path);
    return v != nullptr ? v->where : p_.file + ": " + std::string(path) + ": ";
  }

  // A date the policy states: not after today, not older than policy.max_age_days.
  void CheckDate(const std::string& where, std::string_view what, const std::string& text,
                 const std::string& redo) {
    const auto day = ParseDay(text);
    if (!day) {
      Error(where,
            fmt::format("{} '{}' is not a date (YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ)", what, text));
      return;
    }
    const auto age = (today_ - *day).count();
    if (age < 0) {
      Error(where, fmt::format("{} {} is after today ({})", what, text, FormatDay(today_)));
      return;
    }
    const auto max_age = p_.Number("policy.max_age_days");
    if (max_age && static_cast<double>(age) > *max_age) {
      Error(where, fmt::format("{} {} is {} days old, older than policy.max_age_days ({}): "
                               "re-measure{}",
                               what, text, age, *max_age, redo.empty() ? "" : " with " + redo));
    }
  }

  void CheckSource(const Value& v) {
    const FieldSpec& spec = *v.spec;
    const Source& s = v.source;
    if (spec.descriptive) {
      return;
    }
    if (s.kind == SourceKind::kNone) {
      Error(v.where, fmt::format("{} has no source: write {{value: {}, measured|bound|decision: "
                                 "...}} (each field must reference a measurement, a physical "
                                 "bound or a decision)",
                                 spec.label, v.text));
      return;
    }
    if (spec.must_measure && s.kind != SourceKind::kMeasured) {
      Error(v.where, fmt::format("{} must be measured, not a {}", spec.label,
                                 s.kind == SourceKind::kBound ? "bound" : "decision"));
      return;
    }
    if (s.kind != SourceKind::kMeasured) {
      return;
    }
    const Measurement& m = s.measured;
    CheckDate(v.where, "measured.at", m.at, "`" + m.command + "`");
    const Value* profile = p_.Find("model.profile");
    if (!m.profile.empty() && profile != nullptr && m.profile != profile->text) {
      Error(v.where, fmt::format("measured on profile {}, but model.profile is {}: re-measure "
                                 "after a change of model, GPU or profile",
                                 m.profile, profile->text));
    }
    const Value* engine = p_.Find("engine.version");
    if (!m.engine.empty() && engine != nullptr && m.engine != engine->text) {
      Error(v.where, fmt::format("measured on engine {}, but engine.version is {}: re-measure "
                                 "after a change of engine version",
                                 m.engine, engine->text));
    }
  }

  void CheckChecklist(const std::vector<ChecklistItem>& items, std::string_view name) {
    int unchecked = 0;
    for (const ChecklistItem& item : items) {
      if (item.verdict == Verdict::kFail) {
        Error(item.where, "failed: " + item.evidence);
      }
      if (!item.checked_at.empty()) {
        CheckDate(item.where, "checked_at", item.checked_at, "");
      }
      unchecked += item.verdict == Verdict::kUnchecked ? 1 : 0;
    }
    if (unchecked > 0) {
      Warn(p_.file + ": " + std::string(name) + ": ",
           fmt::format("{} of {} items unchecked (the lesson: checked before production traffic)",
                       unchecked, items.size()));
    }
  }

  void CheckApproval() {
    if (const Value* date = p_.Find("approval.date"); date != nullptr) {
      CheckDate(date->where, "approval.date", date->text, "");
    }
  }

  // Numbers that contradict each other.
  void CheckConsistency() {
    const auto weights = p_.Number("model.weight_bytes");
    const auto memory = p_.Number("model.gpu_memory_bytes");
    if (weights && memory && *weights >= *memory) {
      Error(Where("model.weight_bytes"),
            fmt::format("the weights ({:.4g} bytes) do not fit the GPU's memory ({:.4g} bytes), "
                        "with no room for KV cache",
                        *weights, *memory));
    }
    const auto base = p_.Number("workload.base_rate_rps");
    const auto burst = p_.Number("workload.burst_rate_rps");
    if (base && burst && *burst < *base) {
      Warn(Where("workload.burst_rate_rps"),
           fmt::format("lambda_burst ({} req/s) is below lambda_base ({} req/s)", *burst, *base));
    }
    if (const auto price = p_.Number("cost.gpu_hour_usd"); price && *price == 0) {
      Warn(Where("cost.gpu_hour_usd"),
           "is 0: the cost of wasted engine time comes out as $0 (give the price you pay)");
    }
    const auto waiting = p_.Number("observability.waiting_requests");
    const auto queued = p_.Number("engine.max_num_queued_reqs");
    if (waiting && queued && *waiting >= *queued) {
      Warn(Where("observability.waiting_requests"),
           fmt::format("the waiting-requests page ({}) is not below the queue bound "
                       "max_num_queued_reqs ({}): it can never fire",
                       *waiting, *queued));
    }
    const auto gateway = p_.Number("timeouts.gateway_s");
    const auto e2e = p_.Number("slo.e2e_p99_s");
    if (gateway && e2e && *e2e > *gateway) {
      Warn(Where("slo.e2e_p99_s"),
           fmt::format("the gateway answers 504 at {} s, before the p99 E2E objective ({} s): "
                       "requests between the two are failures, not slow successes",
                       *gateway, *e2e));
    }
  }

  // Lesson §7: client > gateway > queue ingress, strictly; and the deadlines against the SLOs.
  void CheckTimeouts() {
    const auto client = p_.Number("timeouts.client_s");
    const auto gateway = p_.Number("timeouts.gateway_s");
    const auto ingress = p_.Number("timeouts.queue_ingress_s");
    if (client && gateway && !(*gateway < *client)) {
      Error(Where("timeouts.gateway_s"),
            fmt::format("the gateway timeout ({} s) must be below the client's ({} s): the "
                        "gateway must answer 504 before the client gives up",
                        *gateway, *client));
    }
    if (gateway && ingress && !(*ingress < *gateway)) {
      Error(Where("timeouts.queue_ingress_s"),
            fmt::format("the queue ingress deadline ({} s) must be below the gateway timeout "
                        "({} s): a request must leave the queue before the gateway stops "
                        "waiting for it",
                        *ingress, *gateway));
    }
    const auto ttft = p_.Number("slo.ttft_p95_s");
    if (ingress && ttft && *ingress > *ttft) {
      Error(Where("timeouts.queue_ingress_s"),
            fmt::format("the queue ingress deadline ({} s) is past the TTFT SLO ({} s): a "
                        "request that waited that long has already missed its SLO",
                        *ingress, *ttft));
    }
    const auto e2e = p_.Number("slo.e2e_p99_s");
    if (client && e2e && *e2e > *client) {
      Error(Where("slo.e2e_p99_s"),
            fmt::format("the E2E objective ({} s) is past the client timeout ({} s): the "
                        "client is gone before the objective is met",
                        *e2e, *client));
    }
  }

  void CheckGates() {
    const auto gate = p_.Number("admission.kv_headroom");
    const auto alert = p_.Number("observability.kv_cache_usage");
    if (gate && alert && *alert <= *gate) {
      Warn(Where("observability.kv_cache_usage"),
           fmt::format("the KV usage alert ({}) is not above the admission's KV headroom gate "
                       "({}): it pages while admission is still admitting",
                       *alert, *gate));
    }
  }

  void CheckCapacity() {
    const auto replicas = p_.Number("capacity.replicas");
    const auto mu = p_.Number("capacity.single_replica_mu_rps");
    if (!replicas || !mu) {
      return;
    }
    const double aggregate = *replicas * *mu;
    const auto base = p_.Number("workload.base_rate_rps");
    const auto burst = p_.Number("workload.burst_rate_rps");
    if (base && aggregate < *base) {
      Error(Where("capacity.replicas"),
            fmt::format("R x mu = {:.3g} req/s is below lambda_base ({} req/s): the queue "
                        "grows without a burst",
                        aggregate, *base));
    } else if (burst && aggregate < *burst) {
      Warn(Where("capacity.replicas"),
           fmt::format("R x mu = {:.3g} req/s is below lambda_burst ({} req/s): admission "
                       "sheds about {:.3g} req/s during a burst",
                       aggregate, *burst, *burst - aggregate));
    }
  }

  const Policy& p_;
  sys_days today_;
  std::vector<Finding> out_;
};

}  // namespace

std::string FormatDay(sys_days day) {
  const std::chrono::year_month_day ymd(day);
  return fmt::format("{:04}-{:02}-{:02}", static_cast<int>(ymd.year()),
                     static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
}

std::string Finding::Text() const {
  return where + (severity == Severity::kError ? "error: " : "warning: ") + message;
}

std::optional<sys_days> ParseDay(std::string_view text) {
  if (text.size() < 10 || text[4] != '-' || text[7] != '-') {
    return std::nullopt;
  }
  for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (text[i] < '0' || text[i] > '9') {
      return std::nullopt;
    }
  }
  const int y =
      (text[0] - '0') * 1000 + (text[1] - '0') * 100 + (text[2] - '0') * 10 + (text[3] - '0');
  const auto m = static_cast<unsigned>((text[5] - '0') * 10 + (text[6] - '0'));
  const auto d = static_cast<unsigned>((text[8] - '0') * 10 + (text[9] - '0'));
  const std::chrono::year_month_day ymd{std::chrono::year(y), std::chrono::month(m),
                                        std::chrono::day(d)};
  if (!ymd.ok()) {
    return std::nullopt;
  }
  const std::string_view rest = text.substr(10);
  if (!rest.empty()) {
    // "Thh:mm:ss" then optional fraction, then Z.
    if (rest.size() < 10 || rest[0] != 'T' || rest[3] != ':' || rest[6] != ':' ||
        rest.back() != 'Z') {
      return std::nullopt;
    }
    for (std::size_t i : {1, 2, 4, 5, 7, 8}) {
      if (rest[i] < '0' || rest[i] > '9') {
        return std::nullopt;
      }
    }
    const int hh = (rest[1] - '0') * 10 + (rest[2] - '0');
    const int mm = (rest[4] - '0') * 10 + (rest[5] - '0');
    const int ss = (rest[7] - '0') * 10 + (rest[8] - '0');
    if (hh > 23 || mm > 59 || ss > 60) {  // 60: a leap second
      return std::nullopt;
    }
    const std::string_view fraction = rest.substr(9, rest.size() - 10);
    if (!fraction.empty() &&
        (fraction[0] != '.' || fraction.size() < 2 ||
         fraction.find_first_not_of("0123456789", 1) != std::string_view::npos)) {
      return std::nullopt;
    }
  }
  return sys_days(ymd);
}

std::vector<Finding> CheckPolicy(const Policy& policy, sys_days today) {
  return Checker(policy, today).Run();
}

bool HasError(const std::vector<Finding>& findings) {
  return std::any_of(findings.begin(), findings.end(),
                     [](const Finding& f) { return f.severity == Severity::kError; });
}

}  // namespace spillway::policy
