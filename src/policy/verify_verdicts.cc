#include "policy/verify_verdicts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace spillway::policy {
namespace {

ChecklistItem Item(std::string_view id, Verdict verdict, std::string evidence) {
  ChecklistItem item;
  item.id = std::string(id);
  item.verdict = verdict;
  item.evidence = std::move(evidence);
  return item;
}

std::string Ms(Seconds s) { return fmt::format("{:.0f} ms", s * 1e3); }

double Share(std::int64_t part, std::int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// "429 x 12 (deadline_unreachable x 10, ...), 503 x 2" or "none".
std::string Refusals(const RunSummary& run) {
  std::string out;
  for (const auto& [status, count] : run.rejected_by_status) {
    out += fmt::format("{}{} x {}", out.empty() ? "" : ", ", status, count);
  }
  std::string reasons;
  for (const auto& [reason, count] : run.rejected_by_reason) {
    reasons += fmt::format("{}{} x {}", reasons.empty() ? "" : ", ", reason, count);
  }
  if (out.empty()) {
    return "none";
  }
  return reasons.empty() ? out : out + " (" + reasons + ")";
}

// Requests the target broke: failed after admission, or sent and never answered (connection
// refused or reset: a crash mid-run); "" when none.
std::string Broken(const RunSummary& run) {
  const std::int64_t unanswered =
      std::max<std::int64_t>(0, run.offered - run.admitted - run.rejected_total);
  if (run.failed == 0 && unanswered == 0) {
    return "";
  }
  return fmt::format(
      "the target failed {} admitted requests and left {} unanswered (no "
      "response: refused or reset, a crash?)",
      run.failed, unanswered);
}

bool Within(double live, double sim, double floor) {
  return std::abs(live - sim) <= std::max(kReplayTolerance * std::abs(sim), floor);
}

}  // namespace

ChecklistItem JudgeBaseline(const Policy& policy, const RunSummary& baseline,
                            std::string_view run_file) {
  const double ttft_slo = policy.Number("slo.ttft_p95_s").value_or(kNever);
  const double tpot_slo = policy.Number("slo.tpot_p95_s").value_or(kNever);
  const double share_slo = policy.Number("slo.goodput_share").value_or(0);
  if (baseline.first_attempts == 0) {
    return Item("replica_baseline", Verdict::kUnchecked,
                fmt::format("no request was sent ({})", run_file));
  }
  const double share = Share(baseline.good, baseline.first_attempts);
  const bool ttft_ok = baseline.ttft_s.count > 0 && baseline.ttft_s.p95 <= ttft_slo;
  const bool tpot_ok = baseline.tpot_s.count == 0 || baseline.tpot_s.p95 <= tpot_slo;
  const bool share_ok = share >= share_slo;
  std::string evidence = fmt::format(
      "{} requests at {:.1f} req/s for {:g} s: p95 TTFT {} (SLO {}), p95 TPOT {:.1f} ms (SLO "
      "{:.1f} ms), goodput {:.2f} req/s = {:.2f}% of requests (objective {:g}%); refused: {} "
      "({})",
      baseline.first_attempts, baseline.first_attempts / std::max(baseline.duration_s, 1e-9),
      baseline.duration_s, Ms(baseline.ttft_s.p95), Ms(ttft_slo), baseline.tpot_s.p95 * 1e3,
      tpot_slo * 1e3, baseline.goodput_rps, share * 100, share_slo * 100, Refusals(baseline),
      run_file);
  if (const std::string broken = Broken(baseline); !broken.empty()) {
    return Item("replica_baseline", Verdict::kFail, broken + ": " + evidence);
  }
  return Item("replica_baseline", ttft_ok && tpot_ok && share_ok ? Verdict::kPass : Verdict::kFail,
              std::move(evidence));
}

ChecklistItem JudgeChunkedPrefill(const Policy& policy, const ChecklistItem& baseline) {
  const Value* chunked = policy.Find("engine.enable_chunked_prefill");
  if (chunked == nullptr || !chunked->flag) {
    return Item("chunked_prefill_baseline", Verdict::kUnchecked,
                "the policy does not enable chunked prefill (engine.enable_chunked_prefill); "
                "enable it on the engine and verify again");
  }
  const Value* budget = policy.Find("engine.max_num_batched_tokens");
  return Item(
      "chunked_prefill_baseline", baseline.verdict,
      fmt::format("the policy enables chunked prefill (max_num_batched_tokens {}); verify "
                  "cannot read the engine's flags, so this is the replica baseline of the engine "
                  "as deployed (render's serve.yaml, or the flags the policy lists): "
                  "{}",
                  budget != nullptr ? budget->text : "unset", baseline.evidence));
}

ChecklistItem JudgeAdmission(const Policy& policy, const RunSummary& burst,
                             std::string_view run_file) {
  const double ttft_slo = policy.Number("slo.ttft_p95_s").value_or(kNever);
  const std::int64_t refused = burst.rejected_total + burst.dropped_at_queue_head;
  const auto status_500 = burst.rejected_by_status.find("500");
  const std::int64_t errors_500 =
      status_500 == burst.rejected_by_status.end() ? 0 : status_500->second;
  const bool ttft_ok = burst.ttft_s.count == 0 || burst.ttft_s.p95 <= ttft_slo;
  std::string evidence = fmt::format(
      "{} requests at {:.1f} req/s for {:g} s: admitted {}, refused at the door {} ({}), dropped "
      "at the queue head {}, {} of the refusals with a Retry-After; p95 TTFT of those served "
      "{} (SLO {}), goodput {:.2f} req/s ({})",
      burst.first_attempts, burst.first_attempts / std::max(burst.duration_s, 1e-9),
      burst.duration_s, burst.admitted, burst.rejected_total, Refusals(burst),
      burst.dropped_at_queue_head, burst.retry_after.checked, Ms(burst.ttft_s.p95), Ms(ttft_slo),
      burst.goodput_rps, run_file);
  if (const std::string broken = Broken(burst); !broken.empty()) {
    return Item("admission_rejects", Verdict::kFail, broken + ": " + evidence);
  }
  if (errors_500 > 0) {
    return Item("admission_rejects", Verdict::kFail,
                fmt::format("{} answers were 500 under load; {}", errors_500, evidence));
  }
  if (!ttft_ok) {
    return Item("admission_rejects", Verdict::kFail,
                "admitted more than it served within the TTFT SLO: " + evidence);
  }
  if (refused == 0) {
    return Item("admission_rejects", Verdict::kUnchecked,
                "the burst did not overload the target (nothing refused, the SLO held; raise "
                "workload.burst_rate_rps or --burst-s): " +
                    evidence);
  }
  return Item("admission_rejects", Verdict::kPass, std::move(evidence));
}

ChecklistItem JudgeCascade(const Policy& policy, const RunSummary& burst,
                           std::string_view asked_model, std::string_view run_file) {
  const bool configured = policy.Find("cascade.fallback_model") != nullptr ||
                          policy.Find("cascade.clamp_max_tokens") != nullptr ||
                          policy.Find("cascade.exact_cache") != nullptr;
  if (!configured) {
    return Item("cascade_tested", Verdict::kUnchecked, "the policy configures no cascade");
  }
  std::int64_t fallback = 0;
  std::string models;
  for (const auto& [model, served] : burst.served_model) {
    if (model != asked_model) {
      fallback += served.completed;
      models += fmt::format("{}{} ({})", models.empty() ? "" : ", ", model, served.completed);
    }
  }
  const std::string seen = fmt::format(
      "during the burst: served by a fallback model {}{}, max_tokens clamped (X-Degraded) {}, "
      "exact-result cache hits {} ({})",
      fallback, models.empty() ? "" : " [" + models + "]", burst.degraded, burst.cache_hits,
      run_file);
  if (fallback + burst.degraded + burst.cache_hits == 0) {
    return Item("cascade_tested", Verdict::kUnchecked,
                "no step of the cascade answered " + seen +
                    "; a bare engine has none: verify through the gateway that runs it");
  }
  return Item("cascade_tested", Verdict::kPass, "429 -> cascade " + seen);
}

RetryStormFigures MeasureRetryStorm(const std::vector<AttemptSend>& sends) {
  RetryStormFigures f;
  if (sends.empty()) {
    return f;
  }
  const auto [lo, hi] = std::minmax_element(
      sends.begin(), sends.end(),
      [](const AttemptSend& a, const AttemptSend& b) { return a.sent_s < b.sent_s; });
  const Seconds start_s = lo->sent_s;
  f.span_s = hi->sent_s - start_s;
  const auto window = [&](Seconds t) {
    return static_cast<std::int64_t>(std::floor((t - start_s) / 0.1));
  };
  std::map<std::int64_t, std::int64_t> all;
  std::map<std::int64_t, std::int64_t> retries;
  std::map<std::int32_t, std::map<std::int64_t, std::int64_t>> by_round;
  for (const AttemptSend& s : sends) {
    ++f.attempts;
    f.clients += s.attempt == 1 ? 1 : 0;
    const std::int64_t w = window(s.sent_s);
    ++all[w];
    if (s.attempt > 1) {
      ++f.retries;
      ++retries[w];
      ++by_round[s.attempt][w];
    }
  }
  const auto peak = [](const std::map<std::int64_t, std::int64_t>& windows) {
    std::int64_t most = 0;
    for (const auto& [w, n] : windows) {
      most = std::max(most, n);
    }
    return most;
  };
  f.peak_per_100ms = peak(all);
  f.mean_per_100ms = static_cast<double>(f.attempts) / static_cast<double>(window(hi->sent_s) + 1);
  f.peak_retries_per_100ms = peak(retries);
  for (const auto& [attempt, windows] : by_round) {
    std::int64_t n = 0;
    for (const auto& [w, count] : windows) {
      n += count;
    }
    f.rounds.push_back({attempt, n, peak(windows)});
  }
  return f;
}

ChecklistItem JudgeRetryStorm(const RetryStormFigures& storm, std::string_view run_file) {
  std::string rounds;
  bool judged = false;
  bool spike = false;
  for (const RetryRound& r : storm.rounds) {
    const double share = Share(r.peak_per_100ms, r.retries);
    rounds += fmt::format("{}retry {}: {} sent, at most {} ({:.0f}%) in one 100 ms",
                          rounds.empty() ? "" : "; ", r.attempt - 1, r.retries, r.peak_per_100ms,
                          share * 100);
    if (r.retries >= kRetryRoundMinRetries) {
      judged = true;
      spike = spike || share > kRetryRoundPeakShare;
    }
  }
  const std::string evidence = fmt::format(
      "{} clients at once, {} attempts ({} retries) over {:.1f} s: peak {} arrivals per 100 ms "
      "(the clients' own first wave) against a mean of {:.2f}; peak of retries {} per 100 ms; "
      "{} ({})",
      storm.clients, storm.attempts, storm.retries, storm.span_s, storm.peak_per_100ms,
      storm.mean_per_100ms, storm.peak_retries_per_100ms, rounds.empty() ? "no retries" : rounds,
      run_file);
  if (!judged) {
    return Item("retry_storm", Verdict::kUnchecked,
                fmt::format("no retry round of {} or more (the target refused too little to "
                            "storm): {}",
                            kRetryRoundMinRetries, evidence));
  }
  return Item("retry_storm", spike ? Verdict::kFail : Verdict::kPass,
              (spike ? fmt::format("a retry round put more than {:.0f}% of its retries into "
                                   "one 100 ms window (synchronised): ",
                                   kRetryRoundPeakShare * 100)
                     : std::string()) +
                  evidence);
}

Seconds DisconnectFreedBoundS(const DisconnectObservation& seen) {
  return std::min(kDisconnectFreedBoundS, 0.5 * seen.remaining_s);
}

std::vector<ChecklistItem> JudgeDisconnect(const DisconnectObservation& seen,
                                           std::string_view run_file) {
  const std::string figures = fmt::format(
      "{} streams, {} closed by their client mid-stream; running {:g} idle, {:g} while "
      "streaming, {:g} after; KV usage {:.3f} idle, {:.3f} while streaming, {:.3f} after ({})",
      seen.streams, seen.left_mid_stream, seen.running_idle, seen.running_peak, seen.running_after,
      seen.kv_idle, seen.kv_peak, seen.kv_after, run_file);
  std::vector<ChecklistItem> items;
  const auto all = [&](Verdict v, const std::string& why) {
    for (const auto id : {"disconnect_seen", "disconnect_polled", "abort_at_iteration", "kv_freed",
                          "disconnect_frees_kv"}) {
      items.push_back(Item(id, v, why));
    }
    return items;
  };
  if (!seen.metrics) {
    return all(Verdict::kUnchecked,
               "the target exports no vllm:num_requests_running and vllm:kv_cache_usage_perc "
               "(give the engines' /metrics with --metrics-url)");
  }
  if (seen.left_mid_stream == 0) {
    return all(Verdict::kUnchecked,
               "no client left mid-stream (the streams ended first): " + figures);
  }
  if (seen.running_peak <= seen.running_idle) {
    return all(Verdict::kUnchecked,
               "the streams never showed as running in the target's metrics: " + figures);
  }
  if (seen.running_peak - seen.running_idle < seen.streams) {
    return all(Verdict::kUnchecked,
               fmt::format("the metrics read saw {:g} of the {} streams running: behind a "
                           "gateway, name every engine with --metrics-url: ",
                           seen.running_peak - seen.running_idle, seen.streams) +
                   figures);
  }
  const bool running_back = seen.running_after <= seen.running_idle;
  const bool kv_back = seen.kv_after <= seen.kv_idle + kKvUsageSlack;
  const Seconds bound_s = DisconnectFreedBoundS(seen);
  const bool in_time = seen.freed_after_s && *seen.freed_after_s <= bound_s;
  const std::string when =
      seen.freed_after_s
          ? fmt::format(
                "back at the idle levels within {} of the last client leaving (bound {}; "
                "the streams had {:.1f} s left to generate)",
                Ms(*seen.freed_after_s), Ms(bound_s), seen.remaining_s)
          : fmt::format("not back at the idle levels {:.1f} s after the last client left",
                        seen.waited_s);
  // From outside, a disconnect nobody acted on looks like one never seen: the requests ran
  // on. Seen and polled pass with the abort.
  const Verdict seen_verdict = running_back && in_time ? Verdict::kPass : Verdict::kFail;
  items.push_back(Item("disconnect_seen", seen_verdict, when + "; " + figures));
  items.push_back(Item("disconnect_polled", seen_verdict,
                       (seen_verdict == Verdict::kPass
                            ? "the requests stopped while generating, before their last token: "
                              "the streaming loop noticed the disconnect: "
                            : "the requests went on generating after their clients left: ") +
                           when + "; " + figures));
  items.push_back(Item("abort_at_iteration",
                       running_back && in_time ? Verdict::kPass : Verdict::kFail,
                       when + "; " + figures));
  items.push_back(Item("kv_freed", kv_back && in_time ? Verdict::kPass : Verdict::kFail,
                       when + "; " + figures));
  const bool all_pass = running_back && kv_back && in_time;
  items.push_back(Item("disconnect_frees_kv", all_pass ? Verdict::kPass : Verdict::kFail,
                       when + "; " + figures));
  return items;
}

ChecklistItem JudgeReplay(const RunSummary& live, const RunSummary& sim, std::string_view live_file,
                          std::string_view sim_file) {
  const double live_admitted = Share(live.admitted, live.offered);
  const double sim_admitted = Share(sim.admitted, sim.offered);
  const bool goodput_ok = Within(live.goodput_rps, sim.goodput_rps, kReplayGoodputFloorRps);
  const bool admitted_ok = Within(live_admitted, sim_admitted, kReplayAdmittedFloor);
  const bool ttft_ok = Within(live.ttft_s.p95, sim.ttft_s.p95, kReplayTtftFloorS);
  std::string evidence = fmt::format(
      "{} over {:g} s, live against the simulator (profile {}): goodput {:.2f} vs {:.2f} req/s, "
      "admitted {:.1f}% vs {:.1f}%, p95 TTFT {} vs {} (tolerance {:.0f}%; {} and {})",
      live.scenario, live.duration_s, sim.profile, live.goodput_rps, sim.goodput_rps,
      live_admitted * 100, sim_admitted * 100, Ms(live.ttft_s.p95), Ms(sim.ttft_s.p95),
      kReplayTolerance * 100, live_file, sim_file);
  if (live.first_attempts == 0) {
    return Item("trace_replay", Verdict::kUnchecked, "no request was sent: " + evidence);
  }
  if (const std::string broken = Broken(live); !broken.empty()) {
    return Item("trace_replay", Verdict::kFail, broken + ": " + evidence);
  }
  return Item("trace_replay",
              goodput_ok && admitted_ok && ttft_ok ? Verdict::kPass : Verdict::kFail,
              std::move(evidence));
}

}  // namespace spillway::policy
