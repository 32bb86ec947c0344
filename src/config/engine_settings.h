#pragma once
// The engine and admission settings, declared once. Every key a scenario's `engine:`,
// `admission:` and `timeouts:` sections and `spillway serve`'s config file accept for the
// engine is a row of one table (EngineSettingSpecs): its section, key, type, range, default and
// help. The scenario loader and serve's config loader read them with ReadEngineSettings;
// `spillway serve` and `spillway sim` generate their flags from the same rows; ResolveEngine
// (engine/resolve.h) turns the values into an EngineConfig. Unset values mean "the default":
// EngineDefaults() for plain values, derived in ResolveEngine for the rest (batch budgets from
// the TPOT SLO, KV blocks and max_model_len from the profile).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace spillway::config {

class Field;

/// Values as given (file, then flags on top). Integers are read as 64-bit and range-checked.
struct EngineSettings {
  // engine:
  std::optional<std::string> profile;
  /// Where `profile` was read ("file:line: engine.profile: "), for the error when no profile
  /// of that name exists; empty when it came from a flag or the defaults. Not a setting.
  std::string profile_where;
  std::optional<std::int64_t> max_num_seqs;
  std::optional<std::int64_t> max_num_batched_tokens;
  std::optional<bool> slo_budgets;
  std::optional<std::int64_t> slo_budget_context_tokens;
  std::optional<bool> enable_chunked_prefill;
  std::optional<std::string> scheduling;  ///< "fcfs" or "priority"
  std::optional<double> priority_aging_s;
  std::optional<std::int64_t> max_preemptions;
  std::optional<std::int64_t> long_prefill_token_threshold;
  std::optional<std::int64_t> num_gpu_blocks;
  std::optional<std::int64_t> max_model_len;
  std::optional<bool> propagate_cancellation;
  std::optional<bool> enable_prefix_caching;
  // admission:
  std::optional<std::string> policy;  ///< "unbounded", "tail-drop", "predictive", "forecast"
  std::optional<double> ttft_slo_s;
  std::optional<double> tpot_slo_s;
  std::optional<double> kv_headroom;
  std::optional<std::int64_t> max_num_queued_reqs;
  std::optional<std::int64_t> max_num_queued_tokens;
  std::optional<bool> queue_deadline;
  std::optional<std::int64_t> degrade_max_tokens;
  std::optional<double> fair_share_min_ratio;  ///< 0: no fair shedding
  std::optional<double> fair_share_window_s;
  std::optional<double> forecast_margin_quantile;
  // timeouts:
  std::optional<double> request_timeout_s;
};

/// The member of EngineSettings a row reads and writes.
using SettingMember =
    std::variant<std::optional<std::int64_t> EngineSettings::*,
                 std::optional<double> EngineSettings::*, std::optional<bool> EngineSettings::*,
                 std::optional<std::string> EngineSettings::*>;

/// How a value is checked: integers in [lo, hi]; numbers > 0 (kPositive) or in (lo, hi]
/// (kRange) or in [lo, hi] (kClosedRange); strings non-empty or one of `choices`.
enum class SettingCheck : std::uint8_t {
  kInt,
  kPositive,
  kRange,
  kClosedRange,
  kBool,
  kString,
  kChoice
};

struct SettingSpec {
  std::string_view section;  ///< "engine", "admission" or "timeouts"
  std::string_view key;      ///< the YAML key; the flag is --key-with-dashes unless `flag` is set
  SettingMember member;
  SettingCheck check;
  double lo = 0;                          ///< kInt: inclusive; kRange: exclusive
  double hi = 0;                          ///< inclusive
  std::vector<std::string_view> choices;  ///< kChoice
  std::string_view default_text;  ///< for a default that is derived, else empty (EngineDefaults)
  std::string_view help;
  /// A boolean's command-line form: "--no-..." flags set it to false; empty: --key VALUE.
  std::string_view flag;
};

/// Every row, in documentation order.
const std::vector<SettingSpec>& EngineSettingSpecs();
/// The row for section.key, or nullptr.
const SettingSpec* FindSetting(std::string_view section, std::string_view key);
/// The table's keys in `section` (for RequireKnownKeys beside a driver's own keys).
std::vector<std::string> SettingKeys(std::string_view section);
/// The command-line flag of a row: `flag` when set, else "--" + key with '_' as '-'.
std::string FlagName(const SettingSpec& spec);

/// The plain defaults (profile seed-a100-7b, policy predictive, TTFT SLO 1 s, TPOT SLO 35 ms,
/// request deadline 4.5 s, ...); values that are derived stay unset.
const EngineSettings& EngineDefaults();
/// `base` with every value `top` sets replacing it.
EngineSettings Overlay(EngineSettings base, const EngineSettings& top);
/// A value as text ("256", "0.035", "true", "predictive"); empty when unset.
std::string SettingText(const EngineSettings& settings, const SettingSpec& spec);
/// The default shown in help and docs: the EngineDefaults() value, else default_text.
std::string DefaultText(const SettingSpec& spec);

/// Reads the table's keys of `section` (the YAML map `f`, may be absent) into `out`. Keys not
/// in the table must be in `extra_keys` (the driver reads those itself). Throws ConfigError
/// with file, line, field path and value.
void ReadEngineSettings(const Field& f, std::string_view section,
                        const std::vector<std::string>& extra_keys, EngineSettings* out);

/// Checks every set value against its row (for values from flags); `origin` names them in
/// the message ("flags: --kv-headroom: must be in (0, 1], got 1.5"). Throws ConfigError.
void ValidateEngineSettings(const EngineSettings& settings, const std::string& origin);

}  // namespace spillway::config
