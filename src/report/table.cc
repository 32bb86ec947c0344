#include "report/table.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <set>

#include "report/cost.h"

namespace spillway {
namespace {

using Cell = std::function<std::string(const RunSummary&)>;

std::string Count(std::int64_t v) { return fmt::format("{}", v); }
std::string Secs(double v) { return fmt::format("{:.3f}", v); }
std::string Rate(double v) { return fmt::format("{:.2f}", v); }
/// Engine seconds with one decimal; "n/a" when the run did not measure them.
std::string EngineSecs(const std::optional<double>& v) {
  return v.has_value() ? fmt::format("{:.1f}", *v) : std::string("n/a");
}

// Dollars to three significant figures ($0.00327, $0.768), whole above $1000; "n/a" when
// not priced or not measured.
std::string Usd(const std::optional<double>& v) {
  if (!v.has_value()) {
    return "n/a";
  }
  return *v < 1000 ? fmt::format("${:.3g}", *v) : fmt::format("${:.0f}", *v);
}

std::int64_t Status(const RunSummary& s, const char* status) {
  const auto it = s.rejected_by_status.find(status);
  return it == s.rejected_by_status.end() ? 0 : it->second;
}

}  // namespace

std::vector<TableRow> CompareRows(const std::vector<RunSummary>& runs) {
  std::vector<std::pair<std::string, Cell>> rows = {
      {"offered (attempts)", [](const RunSummary& s) { return Count(s.offered); }},
      {"admitted", [](const RunSummary& s) { return Count(s.admitted); }},
      {"shed 429 at the door", [](const RunSummary& s) { return Count(Status(s, "429")); }},
      {"shed 503 at the door", [](const RunSummary& s) { return Count(Status(s, "503")); }},
      {"refused 400 (too long)", [](const RunSummary& s) { return Count(Status(s, "400")); }},
      {"dropped at queue head (429)",
       [](const RunSummary& s) { return Count(s.dropped_at_queue_head); }},
      {"completed", [](const RunSummary& s) { return Count(s.completed); }},
      {"failed (error after admission)", [](const RunSummary& s) { return Count(s.failed); }},
      {"good (within every SLO)", [](const RunSummary& s) { return Count(s.good); }},
      {"goodput req/s (whole run)", [](const RunSummary& s) { return Rate(s.goodput_rps); }},
  };
  // Retries, when any run has them: the storm a fixed retry policy makes, as attempts per
  // first attempt (the failure suite's retry-amplification criterion).
  const bool any_retries =
      std::any_of(runs.begin(), runs.end(), [](const RunSummary& s) { return s.retries > 0; });
  if (any_retries) {
    rows.insert(rows.begin() + 1,
                {{"first attempts", [](const RunSummary& s) { return Count(s.first_attempts); }},
                 {"retries (offered / first attempts)", [](const RunSummary& s) {
                    return s.first_attempts > 0
                               ? fmt::format("{} ({:.2f}x)", s.retries,
                                             static_cast<double>(s.offered) / s.first_attempts)
                               : Count(s.retries);
                  }}});
  }
  // Degraded admissions (max_tokens clamped by the engine's admission or the gateway's
  // cascade), when any run has them, after "admitted".
  if (std::any_of(runs.begin(), runs.end(), [](const RunSummary& s) { return s.degraded > 0; })) {
    const auto admitted =
        std::find_if(rows.begin(), rows.end(), [](const auto& r) { return r.first == "admitted"; });
    rows.insert(admitted + 1, {"  with max_tokens clamped",
                               [](const RunSummary& s) { return Count(s.degraded); }});
  }
  // Answers from a gateway's exact-result cache, when any run has them, after "completed".
  if (std::any_of(runs.begin(), runs.end(), [](const RunSummary& s) { return s.cache_hits > 0; })) {
    const auto completed = std::find_if(rows.begin(), rows.end(),
                                        [](const auto& r) { return r.first == "completed"; });
    rows.insert(completed + 1, {"  from the gateway's cache",
                                [](const RunSummary& s) { return Count(s.cache_hits); }});
  }
  // The models that served (several only with the gateway's model cascade): each one's good.
  std::set<std::string> models;
  for (const RunSummary& s : runs) {
    for (const auto& [model, m] : s.served_model) {
      models.insert(model);
    }
  }
  if (models.size() < 2) {
    models.clear();  // one model served everything: nothing to tell apart
  }
  const auto served = [](const RunSummary& s, const std::string& model) {
    const auto it = s.served_model.find(model);
    return it == s.served_model.end() ? nullptr : &it->second;
  };
  for (const std::string& model : models) {
    rows.emplace_back("  good, served by " + model, [model, served](const RunSummary& s) {
      const ServedModelSummary* m = served(s, model);
      return Count(m == nullptr ? 0 : m->good);
    });
  }
  // Who was served, when a run has two classes or more: each class's share of the good
  // requests against its share of the offered ones (fair shedding bounds the gap).
  std::set<std::string> classes;
  for (const RunSummary& s : runs) {
    if (s.classes.size() >= 2) {
      for (const auto& [name, c] : s.classes) {
        classes.insert(name);
      }
    }
  }
  for (const std::string& name : classes) {
    rows.emplace_back("  " + name + " served/offered", [name](const RunSummary& s) {
      if (!s.classes.contains(name)) {
        return std::string("-");
      }
      const ClassShares shares = SharesOf(s.classes, name);
      return fmt::format("{:.1f}/{:.1f}%", 100 * shares.served, 100 * shares.offered);
    });
  }
  const std::size_t num_phases = runs.empty() ? 0 : runs.front().phases.size();
  for (std::size_t i = 0; i < num_phases; ++i) {
    const PhaseSummary& p = runs.front().phases[i];
    const std::string label = fmt::format("goodput req/s, {:.0f}-{:.0f} s @ {:g}/s", p.start_s,
                                          p.end_s, p.offered_rate_rps);
    rows.emplace_back(label, [i](const RunSummary& s) {
      return i < s.phases.size() ? Rate(s.phases[i].goodput_rps) : std::string("-");
    });
    for (const std::string& model : models) {
      rows.emplace_back("  served by " + model, [i, model, served](const RunSummary& s) {
        const ServedModelSummary* m = served(s, model);
        return m != nullptr && i < m->phase_goodput_rps.size() ? Rate(m->phase_goodput_rps[i])
                                                               : Rate(0);
      });
    }
  }
  const std::vector<std::pair<std::string, Cell>> tail = {
      {"TTFT p50 s (served)", [](const RunSummary& s) { return Secs(s.ttft_s.p50); }},
      {"TTFT p95 s (served)", [](const RunSummary& s) { return Secs(s.ttft_s.p95); }},
      {"TTFT p99 s (served)", [](const RunSummary& s) { return Secs(s.ttft_s.p99); }},
      {"TPOT p95 s", [](const RunSummary& s) { return Secs(s.tpot_s.p95); }},
      {"E2E p99 s", [](const RunSummary& s) { return Secs(s.e2e_s.p99); }},
      {"abandoned after admission",
       [](const RunSummary& s) { return Count(s.abandoned_after_admission); }},
      {"engine busy s", [](const RunSummary& s) { return EngineSecs(s.engine_busy_s); }},
      {"wasted engine s (client gone)",
       [](const RunSummary& s) { return EngineSecs(s.wasted_engine_s); }},
      {"engine s on not-completed",
       [](const RunSummary& s) { return EngineSecs(s.not_completed_engine_s); }},
      {"max waiting", [](const RunSummary& s) { return Count(s.max_waiting); }},
      {"preemptions", [](const RunSummary& s) { return Count(s.preemptions); }},
  };
  rows.insert(rows.end(), tail.begin(), tail.end());
  // Priced only when a run was given the GPU's price (report/cost.h).
  if (std::any_of(runs.begin(), runs.end(),
                  [](const RunSummary& s) { return s.gpu_hour_usd.has_value(); })) {
    rows.emplace_back("$ on wasted engine s",
                      [](const RunSummary& s) { return Usd(CostOf(s).wasted_usd); });
    rows.emplace_back("$ on not-completed",
                      [](const RunSummary& s) { return Usd(CostOf(s).not_completed_usd); });
  }
  // Only runs with prefix caching have hits to show.
  if (std::any_of(runs.begin(), runs.end(),
                  [](const RunSummary& s) { return s.prefix_cache_queries_tokens > 0; })) {
    rows.emplace_back("prefix cache hits (prompt tokens)", [](const RunSummary& s) {
      return s.prefix_cache_queries_tokens > 0
                 ? fmt::format("{:.1f}%", 100.0 * static_cast<double>(s.prefix_cache_hits_tokens) /
                                              static_cast<double>(s.prefix_cache_queries_tokens))
                 : std::string("-");
    });
  }
  const std::size_t num_objectives = runs.empty() ? 0 : runs.front().objectives.size();
  for (std::size_t i = 0; i < num_objectives; ++i) {
    const ObjectiveResult& o = runs.front().objectives[i];
    rows.emplace_back(fmt::format("objective {} {} {:g}", o.name,
                                  o.name == "goodput_fraction" ? ">=" : "<=", o.target),
                      [i](const RunSummary& s) {
                        return i < s.objectives.size()
                                   ? fmt::format("{} {:.3g}",
                                                 s.objectives[i].pass ? "pass" : "FAIL",
                                                 s.objectives[i].value)
                                   : std::string("-");
                      });
  }

  std::vector<TableRow> out;
  out.reserve(rows.size());
  for (const auto& [label, cell] : rows) {
    TableRow row{label, {}};
    for (const RunSummary& s : runs) {
      row.cells.push_back(cell(s));
    }
    out.push_back(std::move(row));
  }
  return out;
}

std::string CompareTable(const std::vector<RunSummary>& runs) {
  const std::vector<TableRow> rows = CompareRows(runs);
  std::size_t label_width = 6;
  for (const TableRow& row : rows) {
    label_width = std::max(label_width, row.label.size());
  }
  std::string out = fmt::format("{:<{}}", "policy", label_width);
  for (const RunSummary& s : runs) {
    out += fmt::format("  {:>12}", s.policy);
  }
  out += "\n";
  for (const TableRow& row : rows) {
    out += fmt::format("{:<{}}", row.label, label_width);
    for (const std::string& cell : row.cells) {
      out += fmt::format("  {:>12}", cell);
    }
    out += "\n";
  }
  return out;
}

}  // namespace spillway
