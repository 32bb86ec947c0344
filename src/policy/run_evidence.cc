#include "policy/run_evidence.h"

#include <algorithm>

#include "config/config_error.h"
#include "executor/emulated_executor.h"
#include "report/cost.h"

namespace spillway::policy {
namespace {

// `r` (of `file`) as a measurement's evidence; throws when it does not say how it was made.
Measurement EvidenceOf(const RunSummary& r, const std::string& file) {
  if (r.command.empty() || r.started_at.empty()) {
    throw config::ConfigError(file + ": run " + r.policy +
                              ": does not say its command and start (written before runs "
                              "recorded them): run it again");
  }
  Measurement m;
  m.run = file;
  m.command = r.command;
  m.at = r.started_at;
  // A simulated run names its profile; a run measured from outside knows neither.
  if (r.source == "sim") {
    m.engine = std::string(kEmulatedEngineName);
    m.profile = r.profile;
  }
  return m;
}

}  // namespace

WastedCost NaiveFifoWastedCost(const std::vector<RunSummary>& runs, const std::string& file,
                               std::optional<double> gpu_hour_usd) {
  const auto naive = std::find_if(runs.begin(), runs.end(), [](const RunSummary& r) {
    return r.policy == "unbounded" || r.policy.rfind("unbounded@", 0) == 0;
  });
  if (naive == runs.end()) {
    throw config::ConfigError(file +
                              ": holds no run of policy unbounded (the naive FIFO queue: "
                              "spillway sim or bench with --policy unbounded)");
  }
  const RunSummary& r = *naive;
  if (!r.not_completed_engine_s) {
    throw config::ConfigError(file + ": run " + r.policy +
                              ": its engine seconds on not-completed work were not measured "
                              "(bench reads them from the server's /metrics)");
  }
  const std::optional<double> price = gpu_hour_usd ? gpu_hour_usd : r.gpu_hour_usd;
  if (!price || *price <= 0) {
    throw config::ConfigError(file + ": run " + r.policy +
                              ": no GPU price (run it with --gpu-price-from or "
                              "--gpu-hour-usd, or give policy init --gpu-hour-usd)");
  }
  WastedCost out;
  out.evidence = EvidenceOf(r, file);
  out.engine_s = *r.not_completed_engine_s;
  out.usd = UsdOf(out.engine_s, *price);
  out.burst_s = r.duration_s;
  return out;
}

FallbackTtft CascadeFallbackTtft(const std::vector<RunSummary>& runs, const std::string& file) {
  for (const RunSummary& r : runs) {
    const ServedModelSummary* fallback = nullptr;
    std::string model;
    for (const auto& [name, m] : r.served_model) {
      if (name != r.profile && m.completed > 0 &&
          (fallback == nullptr || m.completed > fallback->completed)) {
        fallback = &m;
        model = name;
      }
    }
    if (fallback == nullptr) {
      continue;
    }
    if (fallback->ttft_s.count == 0) {
      throw config::ConfigError(file + ": run " + r.policy + ": the TTFT of the requests " + model +
                                " served was not recorded (written before served models had "
                                "it): run it again");
    }
    FallbackTtft out;
    out.evidence = EvidenceOf(r, file);
    out.model = model;
    out.ttft_p95_s = fallback->ttft_s.p95;
    out.completed = fallback->completed;
    return out;
  }
  throw config::ConfigError(file +
                            ": holds no run a fallback model served (a gateway's cascade: "
                            "spillway fleet with a pool's fallbacks, or bench through a "
                            "spillway gateway)");
}

}  // namespace spillway::policy
