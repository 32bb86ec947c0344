#include "config/engine_settings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "config/yaml_reader.h"

namespace spillway::config {
namespace {

using S = EngineSettings;
constexpr double kMaxTimeoutS = 1e6;  // Asio deadlines are std::chrono nanoseconds

// Row makers, one per kind of value.
SettingSpec Int(std::string_view section, std::string_view key,
                std::optional<std::int64_t> S::*member, double lo, double hi,
                std::string_view default_text, std::string_view help) {
  return {section, key, member, SettingCheck::kInt, lo, hi, {}, default_text, help, ""};
}
SettingSpec Seconds(std::string_view section, std::string_view key,
                    std::optional<double> S::*member, std::string_view default_text,
                    std::string_view help) {
  return {section, key, member, SettingCheck::kPositive, 0, 0, {}, default_text, help, ""};
}
SettingSpec Fraction(std::string_view section, std::string_view key,
                     std::optional<double> S::*member, std::string_view help) {
  return {section, key, member, SettingCheck::kRange, 0, 1, {}, "", help, ""};
}
SettingSpec Bool(std::string_view section, std::string_view key, std::optional<bool> S::*member,
                 std::string_view default_text, std::string_view help, std::string_view flag) {
  return {section, key, member, SettingCheck::kBool, 0, 0, {}, default_text, help, flag};
}
SettingSpec Choice(std::string_view section, std::string_view key,
                   std::optional<std::string> S::*member, std::vector<std::string_view> choices,
                   std::string_view help) {
  return {section, key, member, SettingCheck::kChoice, 0, 0, std::move(choices), "", help, ""};
}

std::vector<SettingSpec> BuildSpecs() {
  const double k2e20 = 1 << 20;
  const double k2e24 = 1 << 24;
  SettingSpec profile{"engine",
                      "profile",
                      &S::profile,
                      SettingCheck::kString,
                      0,
                      0,
                      {},
                      "",
                      "Engine profile (name in profiles/ or a YAML path)",
                      ""};
  SettingSpec request_timeout{"timeouts",
                              "request_timeout_s",
                              &S::request_timeout_s,
                              SettingCheck::kRange,
                              0,
                              kMaxTimeoutS,
                              {},
                              "",
                              "Server request deadline: 504 and abort after it, seconds",
                              ""};
  return {
      profile,
      Int("engine", "max_num_seqs", &S::max_num_seqs, 1, k2e20,
          "derived from the TPOT SLO, else 256", "Running batch limit"),
      Int("engine", "max_num_batched_tokens", &S::max_num_batched_tokens, 1, k2e24,
          "derived from the TPOT SLO, else 2048", "Token budget per step"),
      Bool("engine", "slo_budgets", &S::slo_budgets, "",
           "Derive the batch budgets from the TPOT SLO (explicit limits win)", "--no-slo-budgets"),
      Int("engine", "slo_budget_context_tokens", &S::slo_budget_context_tokens, 1, k2e24, "",
          "Context a sequence is costed at when budgets and priors are derived, tokens"),
      Bool("engine", "enable_chunked_prefill", &S::enable_chunked_prefill, "",
           "Prefill long prompts in chunks within the token budget", "--no-chunked-prefill"),
      Choice("engine", "scheduling", &S::scheduling, {"fcfs", "priority"},
             "Queue order: fcfs, or priority with aging"),
      Seconds("engine", "priority_aging_s", &S::priority_aging_s, "",
              "Seconds of waiting worth one priority class (the starvation bound: class p "
              "waits at most p x this longer than class 0)"),
      Int("engine", "max_preemptions", &S::max_preemptions, 0, k2e20, "",
          "Preemptions per request before it fails (0 = no cap)"),
      Int("engine", "long_prefill_token_threshold", &S::long_prefill_token_threshold, 0, k2e20,
          "derived: what an idle engine prefills in a tenth of the TTFT SLO, at least the "
          "token budget (long prompts then take at most half of each step)",
          "Prompts longer than this are long: one at a time, at most this many tokens per "
          "step while others wait (0 = no cap)"),
      Int("engine", "num_gpu_blocks", &S::num_gpu_blocks, 1, k2e24, "from the profile's memory",
          "KV cache blocks"),
      Bool("engine", "enable_prefix_caching", &S::enable_prefix_caching, "",
           "Automatic prefix caching (vLLM's): a prompt reuses the KV blocks of an earlier "
           "prompt's identical prefix instead of computing them",
           ""),
      Int("engine", "max_model_len", &S::max_model_len, 1, k2e24, "the profile's",
          "Context length: longer requests get 400 context_length_exceeded"),
      Bool("engine", "propagate_cancellation", &S::propagate_cancellation, "",
           "Abort a request at the next iteration when its client leaves",
           "--no-cancel-propagation"),
      Choice("admission", "policy", &S::policy,
             {"unbounded", "tail-drop", "predictive", "forecast"},  // kAdmissionPolicyNames
             "Admission policy"),
      Seconds("admission", "ttft_slo_s", &S::ttft_slo_s, "the scenario's slo.ttft_s, else 1",
              "TTFT SLO admission keeps (and serve's goodput counter), seconds"),
      Seconds("admission", "tpot_slo_s", &S::tpot_slo_s, "the scenario's slo.tpot_s, else 0.035",
              "TPOT SLO the batch budgets keep (and serve's goodput counter), seconds"),
      Fraction("admission", "kv_headroom", &S::kv_headroom,
               "Refuse new requests above this KV usage (predictive)"),
      Int("admission", "max_num_queued_reqs", &S::max_num_queued_reqs, 0, k2e24,
          "0: tail-drop 32, predictive 4096, unbounded none", "Hard queue limit (503 queue_full)"),
      Int("admission", "max_num_queued_tokens", &S::max_num_queued_tokens, 0,
          static_cast<double>(std::int64_t{1} << 40), "",
          "Hard limit on waiting prompt tokens (503 queued_tokens_full; 0 = none); a longer "
          "prompt alone still enters an empty queue"),
      Bool("admission", "queue_deadline", &S::queue_deadline, "on under predictive only",
           "Queue-ingress deadlines for admitted requests", ""),
      Int("admission", "degrade_max_tokens", &S::degrade_max_tokens, 0, k2e24, "",
          "Clamp max_tokens to this under load (0 = no degradation)"),
      {"admission",
       "fair_share_min_ratio",
       &S::fair_share_min_ratio,
       SettingCheck::kClosedRange,
       0,
       1,
       {},
       "",
       "Fair shedding: a flow (x-gateway-inference-fairness-id, else the tenant) refused for "
       "load may fall to this fraction of its offered share of admissions before flows served "
       "above theirs get 429 fair_share (0 = off)",
       ""},
      Seconds("admission", "fair_share_window_s", &S::fair_share_window_s, "",
              "Fair shedding: the time constant of the offered and admitted shares, seconds"),
      {"admission",
       "forecast_margin_quantile",
       &S::forecast_margin_quantile,
       SettingCheck::kRange,
       0,
       1,
       {},
       "",
       "Forecast policy: the quantile of its measured TTFT errors (per priority class) added to "
       "each forecast as its safety margin",
       ""},
      request_timeout,
  };
}

EngineSettings BuildDefaults() {
  EngineSettings d;
  d.profile = "seed-a100-7b";
  d.slo_budgets = true;
  d.slo_budget_context_tokens = 256;
  d.enable_chunked_prefill = true;
  d.scheduling = "fcfs";
  d.priority_aging_s = 0.25;
  d.max_preemptions = 0;
  d.propagate_cancellation = true;
  d.enable_prefix_caching = false;
  d.policy = "forecast";
  d.ttft_slo_s = 1.0;
  d.tpot_slo_s = 0.035;
  d.kv_headroom = 0.85;
  d.max_num_queued_reqs = 0;
  d.max_num_queued_tokens = 0;
  d.degrade_max_tokens = 0;
  d.fair_share_min_ratio = 0;
  d.fair_share_window_s = 10;
  d.forecast_margin_quantile = 0.95;
  d.request_timeout_s = 4.5;
  return d;
}

std::string Format(double v) { return fmt::format("{:g}", v); }

/// The range part of a message: "an integer in [1, 1048576]", "a number > 0", ...
std::string Expected(const SettingSpec& s) {
  switch (s.check) {
    case SettingCheck::kInt:
      return fmt::format("an integer in [{}, {}]", static_cast<std::int64_t>(s.lo),
                         static_cast<std::int64_t>(s.hi));
    case SettingCheck::kPositive:
      return "a finite number > 0";
    case SettingCheck::kRange:
      return fmt::format("a number in ({}, {}]", Format(s.lo), Format(s.hi));
    case SettingCheck::kClosedRange:
      return fmt::format("a number in [{}, {}]", Format(s.lo), Format(s.hi));
    case SettingCheck::kBool:
      return "true or false";
    case SettingCheck::kString:
      return "a non-empty string";
    case SettingCheck::kChoice: {
      std::string list;
      for (std::string_view c : s.choices) {
        list += (list.empty() ? "" : ", ") + std::string(c);
      }
      return "one of: " + list;
    }
  }
  return "valid";
}

/// Empty when `v` is fine for `s`, else what it must be.
std::string CheckNumber(const SettingSpec& s, double v) {
  const bool ok = s.check == SettingCheck::kInt           ? v >= s.lo && v <= s.hi
                  : s.check == SettingCheck::kPositive    ? std::isfinite(v) && v > 0
                  : s.check == SettingCheck::kClosedRange ? v >= s.lo && v <= s.hi
                                                          : v > s.lo && v <= s.hi;
  return ok ? std::string() : "must be " + Expected(s);
}

std::string CheckString(const SettingSpec& s, const std::string& v) {
  if (s.check == SettingCheck::kChoice) {
    const bool ok = std::find(s.choices.begin(), s.choices.end(), v) != s.choices.end();
    return ok ? std::string() : "must be " + Expected(s);
  }
  return v.empty() ? "must not be empty" : std::string();
}

void ReadOne(const Field& f, const SettingSpec& spec, EngineSettings* out) {
  std::visit(
      [&](auto member) {
        using T = typename std::remove_reference_t<decltype(out->*member)>::value_type;
        if constexpr (std::is_same_v<T, std::int64_t>) {
          const std::int64_t v = f.AsInt();
          if (const std::string e = CheckNumber(spec, static_cast<double>(v)); !e.empty()) {
            f.Fail(e);
          }
          out->*member = v;
        } else if constexpr (std::is_same_v<T, double>) {
          const double v = f.AsDouble();
          if (const std::string e = CheckNumber(spec, v); !e.empty()) {
            f.Fail(e);
          }
          out->*member = v;
        } else if constexpr (std::is_same_v<T, bool>) {
          out->*member = f.AsBool();
        } else {
          std::string v = f.AsString();
          if (const std::string e = CheckString(spec, v); !e.empty()) {
            f.Fail(e);
          }
          out->*member = std::move(v);
        }
      },
      spec.member);
}

}  // namespace

const std::vector<SettingSpec>& EngineSettingSpecs() {
  static const std::vector<SettingSpec> specs = BuildSpecs();
  return specs;
}

const SettingSpec* FindSetting(std::string_view section, std::string_view key) {
  for (const SettingSpec& s : EngineSettingSpecs()) {
    if (s.section == section && s.key == key) {
      return &s;
    }
  }
  return nullptr;
}

std::vector<std::string> SettingKeys(std::string_view section) {
  std::vector<std::string> keys;
  for (const SettingSpec& s : EngineSettingSpecs()) {
    if (s.section == section) {
      keys.emplace_back(s.key);
    }
  }
  return keys;
}

std::string FlagName(const SettingSpec& spec) {
  if (!spec.flag.empty()) {
    return std::string(spec.flag);
  }
  std::string name = "--" + std::string(spec.key);
  std::replace(name.begin(), name.end(), '_', '-');
  return name;
}

const EngineSettings& EngineDefaults() {
  static const EngineSettings defaults = BuildDefaults();
  return defaults;
}

EngineSettings Overlay(EngineSettings base, const EngineSettings& top) {
  for (const SettingSpec& spec : EngineSettingSpecs()) {
    std::visit(
        [&](auto member) {
          if ((top.*member).has_value()) {
            base.*member = top.*member;
          }
        },
        spec.member);
  }
  if (top.profile.has_value()) {
    base.profile_where = top.profile_where;
  }
  return base;
}

std::string SettingText(const EngineSettings& settings, const SettingSpec& spec) {
  return std::visit(
      [&](auto member) -> std::string {
        const auto& v = settings.*member;
        if (!v.has_value()) {
          return "";
        }
        using T = std::decay_t<decltype(*v)>;
        if constexpr (std::is_same_v<T, bool>) {
          return *v ? "true" : "false";
        } else if constexpr (std::is_same_v<T, double>) {
          return Format(*v);
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          return std::to_string(*v);
        } else {
          return *v;
        }
      },
      spec.member);
}

std::string DefaultText(const SettingSpec& spec) {
  const std::string plain = SettingText(EngineDefaults(), spec);
  return spec.default_text.empty() ? plain : std::string(spec.default_text);
}

void ReadEngineSettings(const Field& f, std::string_view section,
                        const std::vector<std::string>& extra_keys, EngineSettings* out) {
  if (!f.present()) {
    return;
  }
  if (!f.is_map()) {
    f.Fail("must be a map of settings");
  }
  std::vector<std::string> known = SettingKeys(section);
  known.insert(known.end(), extra_keys.begin(), extra_keys.end());
  f.RequireKnownKeys(known);
  for (const SettingSpec& spec : EngineSettingSpecs()) {
    if (spec.section == section) {
      if (const Field child = f[std::string(spec.key)]; child.present()) {
        ReadOne(child, spec, out);
        if (spec.key == "profile") {
          out->profile_where = child.Where();
        }
      }
    }
  }
}

void ValidateEngineSettings(const EngineSettings& settings, const std::string& origin) {
  for (const SettingSpec& spec : EngineSettingSpecs()) {
    std::string error;
    std::visit(
        [&](auto member) {
          const auto& v = settings.*member;
          if (!v.has_value()) {
            return;
          }
          using T = std::decay_t<decltype(*v)>;
          if constexpr (std::is_same_v<T, std::string>) {
            error = CheckString(spec, *v);
          } else if constexpr (!std::is_same_v<T, bool>) {
            error = CheckNumber(spec, static_cast<double>(*v));
          }
        },
        spec.member);
    if (!error.empty()) {
      throw ConfigError(fmt::format("{}: {} ({}.{}): {}, got {}", origin, FlagName(spec),
                                    spec.section, spec.key, error, SettingText(settings, spec)));
    }
  }
}

}  // namespace spillway::config
