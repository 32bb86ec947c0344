// LoadScenario: YAML -> Scenario, validated once. Every error comes from config::Field, so it
// names the file, line, field path and the offending value. Schema: docs/scenarios.md.

#include "workload/scenario.h"

#include <filesystem>
#include <iomanip>
#include <limits>
#include <set>
#include <sstream>

#include "config/yaml_reader.h"
#include "core/fairness_id.h"
#include "workload/field_checks.h"
#include "workload/trace_reader.h"

namespace spillway {
namespace {

using config::Field;
using field_checks::EnumOf;
using field_checks::IntIn;
using field_checks::NonEmptyString;
using field_checks::OptBool;
using field_checks::OptIntIn;
using field_checks::OptNonNegative;
using field_checks::OptPositive;
using field_checks::Required;
using field_checks::RequiredNonNegative;
using field_checks::RequiredPositive;

constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kInt64Max = 9'000'000'000'000'000;  // Field::AsInt's own limit
/// Bound on the arrivals a synthetic schedule may expect (rate x duration, summed), so that a
/// typo cannot ask for gigabytes of arrivals.
constexpr double kMaxExpectedArrivals = 1e7;
/// Arrival times are doubles: a step's mean gap (1 / rate) must exceed the spacing of doubles
/// at the step's end (about 2.2e-16 x end) by this factor (~4500x) for the generator's clock
/// to advance; below it, t + gap == t and the step would yield arrivals forever.
constexpr double kMinGapPerSecondOfSchedule = 1e-12;
/// Bound on a trace's rate_multiplier (copies per record on average).
constexpr std::int64_t kMaxRateMultiplier = 100;
/// Bound on client attempts per request, first included.
constexpr std::int64_t kMaxAttempts = 100;

// ---- Token distributions -----------------------------------------------------------------

std::int32_t TokenCount(const Field& f) {
  return static_cast<std::int32_t>(IntIn(f, 1, kInt32Max));
}

TokenDist ParseLognormal(const Field& f) {
  f.RequireKnownKeys({"dist", "mean", "cv", "min", "max"});
  TokenDist d;
  d.kind = TokenDist::Kind::kLognormal;
  d.mean = RequiredPositive(f, "mean");
  d.cv = RequiredNonNegative(f, "cv");
  d.min = f["min"].present() ? TokenCount(f["min"]) : 1;
  d.max = TokenCount(Required(f, "max"));
  if (d.min > d.max) {
    f["min"].Fail("must be <= max (" + std::to_string(d.max) + ")");
  }
  if (d.mean < d.min || d.mean > d.max) {
    f["mean"].Fail("must be within [min, max] = [" + std::to_string(d.min) + ", " +
                   std::to_string(d.max) + "]");
  }
  return d;
}

/// A number (fixed), or a map {dist: fixed|uniform|lognormal, ...}.
TokenDist ParseTokenDist(const Field& f) {
  TokenDist d;
  if (f.is_scalar()) {
    d.value = TokenCount(f);
    d.min = d.max = d.value;
    return d;
  }
  if (!f.is_map()) {
    f.Fail("must be a token count or a map {dist: fixed|uniform|lognormal, ...}");
  }
  const std::string kind = EnumOf(Required(f, "dist"), {"fixed", "uniform", "lognormal"});
  if (kind == "lognormal") {
    return ParseLognormal(f);
  }
  if (kind == "fixed") {
    f.RequireKnownKeys({"dist", "value"});
    d.value = TokenCount(Required(f, "value"));
    d.min = d.max = d.value;
    return d;
  }
  f.RequireKnownKeys({"dist", "min", "max"});
  d.kind = TokenDist::Kind::kUniform;
  d.min = TokenCount(Required(f, "min"));
  d.max = TokenCount(Required(f, "max"));
  if (d.min > d.max) {
    f["min"].Fail("must be <= max (" + std::to_string(d.max) + ")");
  }
  return d;
}

// ---- Arrival process ---------------------------------------------------------------------

/// A count for messages: an integer while it is exact in a double, else "4.44e+19" (converting
/// a double beyond int64 to an integer is undefined).
std::string FormatCount(double count) {
  if (count < 1e15) {
    return std::to_string(static_cast<std::int64_t>(count));
  }
  std::ostringstream out;
  out << std::setprecision(3) << count;
  return out.str();
}

void CheckExpectedArrivals(const Field& f, double expected) {
  if (expected > kMaxExpectedArrivals) {
    f.Fail("asks for about " + FormatCount(expected) +
           " arrivals (rate x duration), more than the limit of " +
           FormatCount(kMaxExpectedArrivals));
  }
}

void ParsePoisson(const Field& f, ArrivalProcess* a) {
  f.RequireKnownKeys({"process", "rate", "duration_s"});
  a->rate_rps = RequiredPositive(f, "rate");
  a->duration_s = RequiredPositive(f, "duration_s");
  CheckExpectedArrivals(f["rate"], a->rate_rps * a->duration_s);
}

void ParseSteps(const Field& f, ArrivalProcess* a) {
  f.RequireKnownKeys({"process", "steps"});
  const std::vector<Field> steps = Required(f, "steps").Items();
  if (steps.empty()) {
    f["steps"].Fail("must list at least one {rate, duration_s}");
  }
  double expected = 0;
  Seconds end_s = 0;
  for (const Field& s : steps) {
    if (!s.is_map()) {
      s.Fail("must be a map {rate, duration_s}");
    }
    s.RequireKnownKeys({"rate", "duration_s", "mix"});
    RateStep step;
    step.rate_rps = RequiredPositive(s, "rate");
    step.duration_s = RequiredPositive(s, "duration_s");
    expected += step.rate_rps * step.duration_s;
    end_s += step.duration_s;
    if (1.0 / step.rate_rps < end_s * kMinGapPerSecondOfSchedule) {
      std::ostringstream max_rate;
      max_rate << std::setprecision(3) << 1.0 / (end_s * kMinGapPerSecondOfSchedule);
      s["rate"].Fail("is too fast to time " + FormatCount(end_s) +
                     " s into the schedule: at most " + max_rate.str() + " req/s there");
    }
    a->steps.push_back(step);
  }
  CheckExpectedArrivals(f["steps"], expected);
}

void ParseBurst(const Field& f, ArrivalProcess* a) {
  f.RequireKnownKeys({"process", "count", "duration_s"});
  a->burst_count = IntIn(Required(f, "count"), 1, static_cast<std::int64_t>(kMaxExpectedArrivals));
  a->duration_s = RequiredPositive(f, "duration_s");
}

/// Resolves a relative trace path against `base_dir`, then the current directory.
std::string ResolveTracePath(const Field& f, const std::string& base_dir) {
  namespace fs = std::filesystem;
  const fs::path file = NonEmptyString(f);
  std::vector<fs::path> tried = {file};
  if (!file.is_absolute()) {
    const fs::path in_base_dir = (fs::path(base_dir) / file).lexically_normal();
    if (in_base_dir != file) {
      tried.insert(tried.begin(), in_base_dir);
    }
  }
  std::string list;
  for (const fs::path& p : tried) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) {
      return p.string();
    }
    list += (list.empty() ? "" : ", ") + p.string();
  }
  f.Fail("trace file not found (tried " + list + ")");
}

void ParseTrace(const Field& f, const std::string& base_dir, ArrivalProcess* a) {
  f.RequireKnownKeys({"process", "file", "format", "start_s", "duration_s", "time_scale",
                      "rate_multiplier", "max_tokens"});
  a->trace_file = ResolveTracePath(Required(f, "file"), base_dir);
  a->trace_format = GuessTraceFormat(a->trace_file);
  if (f["format"].present()) {
    a->trace_format = EnumOf(f["format"], {"azure", "mooncake"}) == "mooncake"
                          ? TraceFormat::kMooncakeJsonl
                          : TraceFormat::kAzureCsv;
  }
  a->trace_start_s = OptNonNegative(f["start_s"]).value_or(0);
  a->duration_s = OptNonNegative(f["duration_s"]).value_or(0);
  a->time_scale = OptPositive(f["time_scale"]).value_or(1.0);
  a->rate_multiplier = OptPositive(f["rate_multiplier"]).value_or(1.0);
  if (a->rate_multiplier > static_cast<double>(kMaxRateMultiplier)) {
    f["rate_multiplier"].Fail("must be <= " + std::to_string(kMaxRateMultiplier));
  }
  a->trace_max_tokens =
      static_cast<std::int32_t>(OptIntIn(f["max_tokens"], 1, 1 << 24).value_or(0));
  // Read once, here: the span, the arrivals and every --compare run use these records.
  a->trace_records =
      std::make_shared<const std::vector<TraceRecord>>(ReadTrace(a->trace_file, a->trace_format));
}

ArrivalProcess ParseArrival(const Field& f, const std::string& base_dir) {
  if (!f.is_map()) {
    f.Fail("must be a map with a 'process' field");
  }
  ArrivalProcess a;
  const std::string process =
      EnumOf(Required(f, "process"), {"poisson", "steps", "burst", "trace"});
  if (process == "poisson") {
    a.kind = ArrivalProcess::Kind::kPoisson;
    ParsePoisson(f, &a);
  } else if (process == "burst") {
    a.kind = ArrivalProcess::Kind::kBurst;
    ParseBurst(f, &a);
  } else if (process == "steps") {
    a.kind = ArrivalProcess::Kind::kSteps;
    ParseSteps(f, &a);
  } else {
    a.kind = ArrivalProcess::Kind::kTrace;
    ParseTrace(f, base_dir, &a);
  }
  return a;
}

// ---- Request classes ---------------------------------------------------------------------

/// One class. Token distributions are required unless the scenario replays a trace (whose
/// records carry their own token counts).
RequestClass ParseClass(const Field& f, bool tokens_required) {
  if (!f.is_map()) {
    f.Fail("must be a map {name, share, prompt_tokens, output_tokens, ...}");
  }
  f.RequireKnownKeys({"name", "share", "prompt_tokens", "output_tokens", "max_tokens", "priority",
                      "tenant", "distinct_prompts", "shared_prefix_tokens", "fairness_id"});
  RequestClass c;
  c.name = NonEmptyString(Required(f, "name"));
  c.share = OptPositive(f["share"]).value_or(1.0);
  if (tokens_required || f["prompt_tokens"].present()) {
    c.prompt_tokens = ParseTokenDist(Required(f, "prompt_tokens"));
  }
  if (tokens_required || f["output_tokens"].present()) {
    c.output_tokens = ParseTokenDist(Required(f, "output_tokens"));
  }
  if (!tokens_required && f["max_tokens"].present()) {
    f["max_tokens"].Fail("a trace's requests take the cap from arrival.max_tokens");
  }
  if (!tokens_required && f["shared_prefix_tokens"].present()) {
    f["shared_prefix_tokens"].Fail(
        "a trace's requests take their shared prefixes from its hash_ids");
  }
  c.max_tokens = static_cast<std::int32_t>(OptIntIn(f["max_tokens"], 1, 1 << 24).value_or(0));
  c.priority = static_cast<std::int32_t>(OptIntIn(f["priority"], 0, 1 << 20).value_or(0));
  c.priority_given = f["priority"].present();
  if (f["tenant"].present()) {
    c.tenant = NonEmptyString(f["tenant"]);
  }
  c.distinct_prompts =
      static_cast<std::int32_t>(OptIntIn(f["distinct_prompts"], 0, 1 << 30).value_or(0));
  c.shared_prefix_tokens =
      static_cast<std::int32_t>(OptIntIn(f["shared_prefix_tokens"], 0, kInt32Max).value_or(0));
  if (const Field id = f["fairness_id"]; id.present()) {
    // Sent as the x-gateway-inference-fairness-id header: what the server accepts.
    c.fairness_id = NonEmptyString(id);
    if (!ValidFairnessId(c.fairness_id)) {
      id.Fail("must be 1 to 256 printable ASCII characters (the fairness ID header)");
    }
  }
  return c;
}

std::vector<RequestClass> ParseClasses(const Field& root, bool is_trace) {
  const Field f = root["classes"];
  std::vector<RequestClass> classes;
  if (!f.present()) {
    if (!is_trace) {
      root.Fail("missing required field 'classes' (optional only when arrival.process is trace)");
    }
    return classes;
  }
  const std::vector<Field> items = f.Items();
  if (items.empty() && !is_trace) {
    f.Fail("must list at least one request class");
  }
  std::set<std::string> names;
  for (const Field& item : items) {
    classes.push_back(ParseClass(item, !is_trace));
    if (!names.insert(classes.back().name).second) {
      item["name"].Fail("duplicate class name");
    }
  }
  return classes;
}

// ---- Client behaviour --------------------------------------------------------------------

void ParseRetry(const Field& f, ClientBehaviour* c) {
  if (!f.present()) {
    return;
  }
  if (!f.is_map()) {
    f.Fail("must be a map {policy, ...}");
  }
  const std::string policy = EnumOf(Required(f, "policy"), {"none", "fixed", "backoff-jitter"});
  if (policy == "none") {
    f.RequireKnownKeys({"policy"});
    return;
  }
  if (policy == "fixed") {
    f.RequireKnownKeys({"policy", "max_attempts", "interval_s", "budget", "on_timeout"});
    c->retry = RetryPolicy::kFixed;
    c->retry_interval_s = OptNonNegative(f["interval_s"]).value_or(c->retry_interval_s);
  } else {
    f.RequireKnownKeys({"policy", "max_attempts", "base_s", "max_backoff_s", "jitter_s", "budget",
                        "use_retry_after", "on_timeout"});
    c->retry = RetryPolicy::kBackoffJitter;
    c->backoff_base_s = OptPositive(f["base_s"]).value_or(c->backoff_base_s);
    c->backoff_max_s = OptPositive(f["max_backoff_s"]).value_or(c->backoff_max_s);
    c->jitter_s = OptNonNegative(f["jitter_s"]).value_or(c->jitter_s);
    c->use_retry_after = OptBool(f["use_retry_after"]).value_or(c->use_retry_after);
    if (c->backoff_max_s < c->backoff_base_s) {
      (f["max_backoff_s"].present() ? f["max_backoff_s"] : f["base_s"])
          .Fail("max_backoff_s must be >= base_s");
    }
  }
  c->max_attempts = static_cast<std::int32_t>(IntIn(Required(f, "max_attempts"), 1, kMaxAttempts));
  c->retry_budget = OptNonNegative(f["budget"]).value_or(0);
  c->retry_on_timeout = OptBool(f["on_timeout"]).value_or(false);
}

ClientBehaviour ParseClient(const Field& f) {
  ClientBehaviour c;
  f.RequireKnownKeys({"ttft_timeout_s", "total_timeout_s", "retry"});
  c.ttft_timeout_s = OptPositive(f["ttft_timeout_s"]).value_or(kNever);
  c.total_timeout_s = OptPositive(f["total_timeout_s"]).value_or(kNever);
  if (c.ttft_timeout_s != kNever && c.total_timeout_s != kNever &&
      c.ttft_timeout_s > c.total_timeout_s) {
    f["ttft_timeout_s"].Fail("must be <= total_timeout_s (" + f["total_timeout_s"].AsString() +
                             ")");
  }
  ParseRetry(f["retry"], &c);
  return c;
}

// ---- SLOs, objectives, engine, admission -------------------------------------------------

Slo ParseSlo(const Field& f) {
  f.RequireKnownKeys({"ttft_s", "tpot_s", "e2e_s"});
  return Slo{OptPositive(f["ttft_s"]), OptPositive(f["tpot_s"]), OptPositive(f["e2e_s"])};
}

Objectives ParseObjectives(const Field& f) {
  f.RequireKnownKeys({"ttft_p95_s", "tpot_p95_s", "e2e_p99_s", "goodput_fraction"});
  Objectives o{OptPositive(f["ttft_p95_s"]), OptPositive(f["tpot_p95_s"]),
               OptPositive(f["e2e_p99_s"]), std::nullopt};
  if (f["goodput_fraction"].present()) {
    o.goodput_fraction =
        config::InRange(f["goodput_fraction"], f["goodput_fraction"].AsDouble(), 0, 1);
  }
  return o;
}

std::vector<ScenarioAdmission::Tenant> ParseTenants(const Field& f) {
  std::vector<ScenarioAdmission::Tenant> tenants;
  if (!f.present()) {
    return tenants;
  }
  std::set<std::string> names;
  for (const Field& t : f.Items()) {
    if (!t.is_map()) {
      t.Fail("must be a map {name, rate_rps, burst}");
    }
    t.RequireKnownKeys({"name", "rate_rps", "burst"});
    ScenarioAdmission::Tenant tenant;
    tenant.name = NonEmptyString(Required(t, "name"));
    tenant.rate_rps = RequiredPositive(t, "rate_rps");
    tenant.burst = t["burst"].present() ? t["burst"].AsDouble() : 1.0;
    if (!(tenant.burst >= 1)) {
      t["burst"].Fail("must be >= 1 (requests)");
    }
    if (!names.insert(tenant.name).second) {
      t["name"].Fail("duplicate tenant name");
    }
    tenants.push_back(tenant);
  }
  return tenants;
}

/// The engine:, admission: and timeouts: sections: the settings table's keys, and tenants.
void ParseSettings(const Field& root, Scenario* s) {
  config::ReadEngineSettings(root["engine"], "engine", {}, &s->settings);
  config::ReadEngineSettings(root["admission"], "admission", {"tenants"}, &s->settings);
  config::ReadEngineSettings(root["timeouts"], "timeouts", {}, &s->settings);
  s->admission.tenants = ParseTenants(root["admission"]["tenants"]);
}

// ---- The whole file ----------------------------------------------------------------------

/// Reads each step's optional `mix: {class name: share}` once the classes are known: every
/// name must be a class, shares >= 0, and at least one positive. Classes not named get 0.
void ParseStepMixes(const Field& arrival, const std::vector<RequestClass>& classes,
                    ArrivalProcess* a) {
  if (a->kind != ArrivalProcess::Kind::kSteps) {
    return;
  }
  const std::vector<Field> steps = arrival["steps"].Items();
  for (std::size_t i = 0; i < steps.size() && i < a->steps.size(); ++i) {
    const Field mix = steps[i]["mix"];
    if (!mix.present()) {
      continue;
    }
    if (!mix.is_map()) {
      mix.Fail("must be a map {class name: share}");
    }
    std::vector<std::string> names;
    for (const RequestClass& c : classes) {
      names.push_back(c.name);
    }
    mix.RequireKnownKeys(names);
    std::vector<double> shares(classes.size(), 0.0);
    double total = 0;
    for (std::size_t c = 0; c < classes.size(); ++c) {
      if (const std::optional<double> share = OptNonNegative(mix[classes[c].name])) {
        shares[c] = *share;
        total += *share;
      }
    }
    if (total <= 0) {
      mix.Fail("needs at least one class with a share > 0");
    }
    a->steps[i].mix = std::move(shares);
  }
}

Scenario ParseScenario(const Field& root, const std::string& file, const std::string& base_dir) {
  if (!root.is_map()) {
    root.Fail("a scenario must be a YAML map");
  }
  root.RequireKnownKeys({"name", "seed", "arrival", "classes", "client", "slo", "objectives",
                         "engine", "admission", "timeouts", "fleet"});
  Scenario s;
  s.file = file;
  s.name = NonEmptyString(Required(root, "name"));
  s.seed = static_cast<std::uint64_t>(OptIntIn(root["seed"], 0, kInt64Max).value_or(1));
  s.arrival = ParseArrival(Required(root, "arrival"), base_dir);
  s.classes = ParseClasses(root, s.arrival.kind == ArrivalProcess::Kind::kTrace);
  ParseStepMixes(root["arrival"], s.classes, &s.arrival);
  s.client = ParseClient(root["client"]);
  s.slo = ParseSlo(root["slo"]);
  s.objectives = ParseObjectives(root["objectives"]);
  ParseSettings(root, &s);
  s.fleet = ParseFleet(root["fleet"]);
  return s;
}

}  // namespace

Scenario LoadScenario(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return ParseScenario(Field::LoadFile(path), path, parent.empty() ? "." : parent.string());
}

Scenario LoadScenarioFromString(const std::string& yaml, const std::string& origin,
                                const std::string& base_dir) {
  return ParseScenario(Field::LoadString(yaml, origin), origin, base_dir);
}

}  // namespace spillway
