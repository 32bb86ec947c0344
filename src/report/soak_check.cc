#include "report/soak_check.h"

#include "api/overload_contract.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

#include <boost/json.hpp>

#include "metrics/metrics_text.h"
#include "report/gnuplot_charts.h"
#include "report/run_summary.h"

namespace spillway {
namespace {

using metrics::SampleSum;

namespace json = boost::json;

constexpr double kMiB = 1024.0 * 1024.0;

bool OneOf(std::string_view value, std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), value) != set.end();
}

// The lines of `text` with their 1-based numbers (a final line without '\n' included).
template <typename Fn>
void ForEachLine(std::string_view text, Fn fn) {
  std::size_t begin = 0;
  for (int number = 1; begin < text.size(); ++number) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    std::string_view line = text.substr(begin, end - begin);
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    fn(number, line);
    begin = end + 1;
  }
}

[[noreturn]] void Fail(int line, const std::string& message) {
  throw std::invalid_argument(fmt::format("line {}: {}", line, message));
}

double ParseField(int line, std::string_view field, std::string_view name) {
  double v = 0;
  const char* end = field.data() + field.size();
  const auto [ptr, ec] = std::from_chars(field.data(), end, v);
  if (field.empty() || ec != std::errc() || ptr != end || !std::isfinite(v) || v < 0) {
    Fail(line, fmt::format("{} must be a finite number >= 0, got '{}'", name, field));
  }
  return v;
}

std::string MiB(double bytes) { return fmt::format("{:.1f} MiB", bytes / kMiB); }

// "5 (0.31%)": a count and its share of the admitted.
std::string OfAdmitted(std::int64_t n, std::int64_t admitted) {
  return admitted > 0 ? fmt::format("{} ({:.2f}%)", n,
                                    100.0 * static_cast<double>(n) / static_cast<double>(admitted))
                      : std::to_string(n);
}

}  // namespace

bool ReplyIsDocumented(int status, std::string_view outcome, std::string_view reason) {
  if (outcome == "abandoned") {
    return OneOf(reason, {"ttft_timeout", "total_timeout"});
  }
  if (outcome == "dropped") {
    return (status == 200 || status == 429) && reason == "queue_deadline_exceeded";
  }
  if (status == 200) {  // a stream that ended in an error event after its 200 head
    return outcome == "completed" ||
           (outcome == "failed" &&
            OneOf(reason, {"request_timeout", "draining", "preemption_limit"}));
  }
  // Every other reply is an overload row of the contract, with the contract's status (a 400
  // is a row too, but a soak's workload never asks for what cannot be served).
  const api::ContractRow* row = api::FindContractRow(reason);
  if (row == nullptr || row->http_status != status || status == 400) {
    return false;
  }
  return status == 504 ? outcome == "failed" : outcome == "rejected";
}

std::vector<ReplyCount> TallyReplies(std::string_view records_jsonl) {
  std::map<std::tuple<int, std::string, std::string>, std::int64_t> counts;
  ForEachLine(records_jsonl, [&](int number, std::string_view line) {
    if (line.find_first_not_of(" \t") == std::string_view::npos) {
      return;
    }
    boost::system::error_code ec;
    const json::value v = json::parse(line, ec);
    const json::object* o = ec ? nullptr : v.if_object();
    if (o == nullptr) {
      Fail(number, "not a JSON object");
    }
    const json::value* status = o->if_contains("status");
    const json::value* outcome = o->if_contains("outcome");
    const json::value* reason = o->if_contains("reason");
    if (status == nullptr || !status->is_int64() || outcome == nullptr || !outcome->is_string() ||
        reason == nullptr || !reason->is_string()) {
      Fail(number, "needs an integer 'status' and strings 'outcome' and 'reason'");
    }
    const std::int64_t s = status->as_int64();
    if (s < 0 || s > 999) {
      Fail(number, fmt::format("status must be 0 or an HTTP status, got {}", s));
    }
    ++counts[{static_cast<int>(s), std::string(outcome->as_string()),
              std::string(reason->as_string())}];
  });
  std::vector<ReplyCount> out;
  for (const auto& [key, n] : counts) {
    const auto& [status, outcome, reason] = key;
    out.push_back({status, outcome, reason, n, ReplyIsDocumented(status, outcome, reason)});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const ReplyCount& a, const ReplyCount& b) { return a.count > b.count; });
  return out;
}

std::vector<ProcessSampleRow> ParseProcessSamples(std::string_view csv) {
  std::vector<ProcessSampleRow> rows;
  bool header = false;
  ForEachLine(csv, [&](int number, std::string_view line) {
    if (!header) {
      if (line != "t_s,rss_bytes,open_fds") {
        Fail(number, fmt::format("want the header 't_s,rss_bytes,open_fds', got '{}'", line));
      }
      header = true;
      return;
    }
    if (line.empty()) {
      return;
    }
    std::array<std::string_view, 3> fields;
    std::size_t begin = 0;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      const std::size_t comma = line.find(',', begin);
      const bool last = i + 1 == fields.size();
      if (last != (comma == std::string_view::npos)) {
        Fail(number, fmt::format("want 3 comma-separated fields, got '{}'", line));
      }
      fields[i] = line.substr(begin, last ? std::string_view::npos : comma - begin);
      begin = comma + 1;
    }
    ProcessSampleRow r;
    r.t_s = ParseField(number, fields[0], "t_s");
    r.rss_bytes = ParseField(number, fields[1], "rss_bytes");
    r.open_fds = ParseField(number, fields[2], "open_fds");
    if (!rows.empty() && r.t_s < rows.back().t_s) {
      Fail(number, fmt::format("t_s goes back from {} to {}", rows.back().t_s, r.t_s));
    }
    rows.push_back(r);
  });
  if (rows.empty()) {
    throw std::invalid_argument("no sample (only a header, or nothing)");
  }
  return rows;
}

MemoryVerdict CheckMemory(const std::vector<ProcessSampleRow>& samples, const SoakBounds& bounds) {
  MemoryVerdict m;
  m.window_s = std::min(SoakBounds::kMaxWindowS, bounds.duration_s / 5);
  const Seconds warm_begin = m.window_s, warm_end = 2 * m.window_s;
  const Seconds end_begin = bounds.duration_s - m.window_s, end_end = bounds.duration_s;
  for (const ProcessSampleRow& r : samples) {
    m.max_rss_bytes = std::max(m.max_rss_bytes, r.rss_bytes);
    m.max_fds = std::max(m.max_fds, r.open_fds);
    if (r.t_s >= warm_begin && r.t_s < warm_end) {
      ++m.warm_samples;
      m.warm_rss_bytes = std::max(m.warm_rss_bytes, r.rss_bytes);
    }
    if (r.t_s >= end_begin && r.t_s <= end_end) {
      ++m.end_samples;
      m.end_rss_bytes = std::max(m.end_rss_bytes, r.rss_bytes);
    }
  }
  if (!samples.empty()) {
    m.first_rss_bytes = samples.front().rss_bytes;
    m.last_rss_bytes = samples.back().rss_bytes;
    m.fds_before = samples.front().open_fds;
    m.fds_after = samples.back().open_fds;
  }
  m.growth_bytes = m.end_rss_bytes - m.warm_rss_bytes;
  m.windows_covered = m.warm_samples > 0 && m.end_samples > 0;
  m.rss_flat = m.windows_covered && m.growth_bytes < bounds.rss_growth_bound_bytes;
  m.fds_back = !samples.empty() && m.fds_after <= m.fds_before + bounds.fd_slack;
  return m;
}

ProcessFigures ReadProcessFigures(std::string_view exposition) {
  ProcessFigures f;
  f.cpu_seconds = SampleSum(exposition, "process_cpu_seconds_total");
  f.resident_memory_bytes = SampleSum(exposition, "process_resident_memory_bytes");
  f.open_fds = SampleSum(exposition, "process_open_fds");
  f.max_fds = SampleSum(exposition, "process_max_fds");
  return f;
}

SoakVerdict Judge(std::vector<ReplyCount> replies, const MemoryVerdict& memory,
                  const ServerEnd& server, const ProcessFigures& figures,
                  const SoakBounds& bounds) {
  SoakVerdict v;
  v.replies = std::move(replies);
  v.memory = memory;
  v.server = server;
  v.figures = figures;
  for (const ReplyCount& r : v.replies) {
    v.attempts += r.count;
    v.undocumented += r.documented ? 0 : r.count;
  }
  if (v.attempts == 0) {
    v.failures.push_back("no attempt in the records");
  }
  if (v.undocumented > 0) {
    v.failures.push_back(fmt::format("{} of {} replies undocumented", v.undocumented, v.attempts));
  }
  if (!memory.windows_covered) {
    v.failures.push_back(fmt::format(
        "RSS samples do not cover both windows ({} in the warm-up window, {} in the end window)",
        memory.warm_samples, memory.end_samples));
  } else if (!memory.rss_flat) {
    v.failures.push_back(fmt::format("RSS grew by {} after warm-up (bound {})",
                                     MiB(memory.growth_bytes), MiB(bounds.rss_growth_bound_bytes)));
  }
  if (!memory.fds_back) {
    v.failures.push_back(fmt::format("open fds {:.0f} after the run, {:.0f} before (slack {:.0f})",
                                     memory.fds_after, memory.fds_before, bounds.fd_slack));
  }
  if (server.health_status != 200) {
    v.failures.push_back(server.health_status == 0
                             ? std::string("/health did not answer after the run")
                             : fmt::format("/health answered {}", server.health_status));
  }
  if (server.exit_code != 0) {
    v.failures.push_back(fmt::format("the server's exit status after SIGTERM was {}{}",
                                     server.exit_code,
                                     server.exit_code > 128 ? " (killed by a signal)" : ""));
  }
  return v;
}

PromiseFigures PromisesOf(const RunSummary& summary, std::optional<double> max_share) {
  PromiseFigures p;
  p.admitted = summary.admitted;
  p.dropped_at_queue_head = summary.dropped_at_queue_head;
  p.abandoned = summary.abandoned_after_admission;
  p.late = std::max<std::int64_t>(0, summary.completed - summary.good);
  p.max_share = max_share;
  return p;
}

std::string SummaryMismatch(const RunSummary& summary, std::int64_t record_attempts) {
  if (summary.offered != record_attempts) {
    return fmt::format("offered {} attempts, but the records hold {}: not the same run",
                       summary.offered, record_attempts);
  }
  if (summary.admitted < 0 || summary.admitted > summary.offered) {
    return fmt::format("admitted {} of {} offered", summary.admitted, summary.offered);
  }
  const PromiseFigures p = PromisesOf(summary, std::nullopt);
  if (p.dropped_at_queue_head < 0 || p.abandoned < 0 || p.broken() > p.admitted) {
    return fmt::format(
        "dropped at the queue head {} + abandoned {} + late {} exceed the {} admitted",
        p.dropped_at_queue_head, p.abandoned, p.late, p.admitted);
  }
  return "";
}

void AddPromises(const PromiseFigures& promises, SoakVerdict* verdict) {
  verdict->promises = promises;
  const std::int64_t broken = promises.broken();
  if (promises.max_share.has_value() && promises.admitted > 0 &&
      static_cast<double>(broken) > *promises.max_share * static_cast<double>(promises.admitted)) {
    verdict->failures.push_back(fmt::format("{} of {} admitted broke their promise (bound {:g}%)",
                                            OfAdmitted(broken, promises.admitted),
                                            promises.admitted, 100 * *promises.max_share));
  }
}

std::string FormatSoakReport(const SoakVerdict& v, const SoakBounds& bounds) {
  std::string out = fmt::format("replies ({} attempts):\n", v.attempts);
  out += fmt::format("  {:>8}  {:>6}  {:<16} {}\n", "count", "status", "outcome", "reason");
  for (const ReplyCount& r : v.replies) {
    out += fmt::format("  {:>8}  {:>6}  {:<16} {}{}\n", r.count, r.status, r.outcome,
                       r.reason.empty() ? "-" : r.reason, r.documented ? "" : "  UNDOCUMENTED");
  }
  const MemoryVerdict& m = v.memory;
  out += fmt::format(
      "RSS: before the load {}, warm-up max {} ({} samples in [{:g}, {:g}) s), end max {} ({} "
      "samples in [{:g}, {:g}] s), max {}, after the run {}\n",
      MiB(m.first_rss_bytes), MiB(m.warm_rss_bytes), m.warm_samples, m.window_s, 2 * m.window_s,
      MiB(m.end_rss_bytes), m.end_samples, bounds.duration_s - m.window_s, bounds.duration_s,
      MiB(m.max_rss_bytes), MiB(m.last_rss_bytes));
  out += fmt::format("RSS growth after warm-up: {:+.2f} MiB (bound {})\n", m.growth_bytes / kMiB,
                     MiB(bounds.rss_growth_bound_bytes));
  out +=
      fmt::format("descriptors: {:.0f} before the load, max {:.0f}, {:.0f} after (slack {:.0f})\n",
                  m.fds_before, m.max_fds, m.fds_after, bounds.fd_slack);
  const ProcessFigures& f = v.figures;
  if (f.cpu_seconds.has_value()) {
    out += fmt::format(
        "server /metrics after the run: process_cpu_seconds_total {:.2f}, "
        "process_resident_memory_bytes {}, process_open_fds {:.0f}, process_max_fds {:.0f}\n",
        *f.cpu_seconds, MiB(f.resident_memory_bytes.value_or(0)), f.open_fds.value_or(0),
        f.max_fds.value_or(0));
  }
  out += fmt::format("server: /health {} after the run, exit status {} after SIGTERM\n",
                     v.server.health_status, v.server.exit_code);
  if (const std::optional<PromiseFigures>& p = v.promises; p.has_value()) {
    out += fmt::format(
        "admitted {}: broken {} = {} dropped at the queue head + {} abandoned + {} completed "
        "outside an SLO{}\n",
        p->admitted, OfAdmitted(p->broken(), p->admitted), p->dropped_at_queue_head, p->abandoned,
        p->late,
        p->max_share.has_value() ? fmt::format(" (bound {:g}%)", 100 * *p->max_share) : "");
  }
  if (v.passed()) {
    out += fmt::format(
        "soak: PASS ({} attempts over {:g} s, every reply documented; RSS {:+.2f} MiB after "
        "warm-up, bound {}; server alive)\n",
        v.attempts, bounds.duration_s, m.growth_bytes / kMiB, MiB(bounds.rss_growth_bound_bytes));
  } else {
    std::string reasons;
    for (const std::string& failure : v.failures) {
      reasons += (reasons.empty() ? "" : "; ") + failure;
    }
    out += "soak: FAIL: " + reasons + "\n";
  }
  return out;
}

std::string RssChartScript(std::string_view csv, std::string_view svg, const MemoryVerdict& m,
                           const SoakBounds& bounds) {
  const double w = m.window_s;
  const double bound_mib = (m.warm_rss_bytes + bounds.rss_growth_bound_bytes) / kMiB;
  const std::string data = GnuplotQuote(csv);
  std::string s =
      "set terminal svg size 900,560 fixed noenhanced font 'sans-serif,12' background rgb "
      "'white'\n";
  s += "set output " + GnuplotQuote(svg) + "\n";
  s += "set datafile separator ','\nset grid\nset key bottom center\n";
  s += "set multiplot\nset lmargin 10\nset rmargin 4\n";
  // Top: RSS with the two windows shaded and the bound.
  s += "set origin 0,0.36\nset size 1,0.64\n";
  s += "set title 'spillway serve during the soak: resident memory and open descriptors'\n";
  s += "set format x ''\nset ylabel 'RSS (MiB)'\n";
  // Room above the bound line and the highest sample.
  s += fmt::format("set yrange [0:{:.1f}]\n", 1.15 * std::max(bound_mib, m.max_rss_bytes / kMiB));
  s += fmt::format(
      "set object 1 rect from {:g}, graph 0 to {:g}, graph 1 fillcolor rgb '#dde8f5' "
      "fillstyle solid 0.6 noborder behind\n",
      w, 2 * w);
  s += fmt::format(
      "set object 2 rect from {:g}, graph 0 to {:g}, graph 1 fillcolor rgb '#f5e6d0' "
      "fillstyle solid 0.6 noborder behind\n",
      bounds.duration_s - w, bounds.duration_s);
  s += fmt::format("set label 1 'warm-up' at {:g}, graph 0.94 center\n", 1.5 * w);
  s += fmt::format("set label 2 'end' at {:g}, graph 0.94 center\n", bounds.duration_s - w / 2);
  s += "plot " + data +
       " using 1:($2/1048576) skip 1 with lines lw 2 lc rgb '#1f5fa8' title 'RSS', \\\n";
  s += fmt::format(
      "     {:g} with lines dt 2 lw 1.5 lc rgb '#b22222' title 'warm-up max + growth bound "
      "({:g} MiB)'\n",
      bound_mib, bounds.rss_growth_bound_bytes / kMiB);
  // Bottom: open descriptors on the same time axis.
  s += "unset label 1\nunset label 2\nunset title\n";
  s += "set origin 0,0\nset size 1,0.38\nset format x '%g'\n";
  s += "set xlabel 'seconds since the load started'\nset ylabel 'open fds'\nset yrange [0:*]\n";
  s += "plot " + data +
       " using 1:3 skip 1 with lines lw 1.5 lc rgb '#4d7f2a' title 'open file descriptors'\n";
  s += "unset multiplot\n";
  return s;
}

}  // namespace spillway
