#pragma once
// The verdict of a soak run (scripts/soak.sh, docs/soak.md): `spillway bench` replayed a long
// overload against `spillway serve` while the script sampled the server's resident memory and
// open descriptors. This checks, from the files the run left:
//
//   1. every reply is one the overload contract of docs/serve.md documents (ReplyIsDocumented),
//      or the client's own timeout;
//   2. memory is flat: the highest RSS in the last window of the load exceeds the highest RSS
//      in the window after warm-up by less than a bound (CheckMemory);
//   3. no descriptor leak: open descriptors once the run is over are back within a slack of
//      those before it;
//   4. the server survived: /health answered 200 after the run, and SIGTERM then ended it with
//      exit status 0;
//   5. when asked (AddPromises), admission kept its promise: at most a share of the admitted
//      requests dropped at the queue head, abandoned or completed outside an SLO (issue 14's
//      goal: 1% under the forecast policy), from bench's run summary.
//
// Pure: text in, verdict and text out; the command (`spillway soak-check`) reads the files.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/types.h"

namespace spillway {

struct RunSummary;

/// True when an attempt's end, as a --records line gives it (`status`, 0 for no response head;
/// `outcome` as AttemptOutcome's ToString; `reason`), is one docs/serve.md documents:
///   200 completed; 200 dropped at the queue head (queue_deadline_exceeded, also as a 429);
///   200 failed by an in-stream error request_timeout, draining or preemption_limit;
///   429 rejected: rate_limited, queue_delay_exceeded, kv_saturation,
///       queue_delay_and_kv_saturation, deadline_unreachable;
///   503 rejected: queue_full, queued_tokens_full, draining, too_many_connections,
///       preemption_limit;
///   504 failed: request_timeout;
///   abandoned by the client's own ttft_timeout or total_timeout (any status, 0 included).
/// Anything else is not: a 400 (the load generator sends valid requests), other statuses, a
/// broken stream, an unknown reason, a transport error.
bool ReplyIsDocumented(int status, std::string_view outcome, std::string_view reason);

/// How many attempts ended one way.
struct ReplyCount {
  int status = 0;
  std::string outcome;
  std::string reason;
  std::int64_t count = 0;
  bool documented = false;
};

/// Tallies --records JSONL text (one object per line with integer `status` and string
/// `outcome` and `reason`; blank lines skipped). Sorted by count, largest first (ties by
/// status, outcome, reason). Throws std::invalid_argument("line N: ...") on a malformed line.
std::vector<ReplyCount> TallyReplies(std::string_view records_jsonl);

/// One sample of the server process.
struct ProcessSampleRow {
  Seconds t_s = 0;       ///< since the load started
  double rss_bytes = 0;  ///< resident set size, bytes
  double open_fds = 0;   ///< open file descriptors
};

/// Parses rss.csv: the header `t_s,rss_bytes,open_fds`, then one row per sample with three
/// finite non-negative numbers, times non-decreasing. Throws std::invalid_argument("line N:
/// ...") otherwise, or when there is no sample.
std::vector<ProcessSampleRow> ParseProcessSamples(std::string_view csv);

/// The bounds of the check.
struct SoakBounds {
  Seconds duration_s = 600;  ///< length of the load (the arrivals), s
  /// Window length: min(kMaxWindowS, duration_s / 5). The warm-up window is [w, 2w) (the
  /// first window is warm-up), the end window [duration_s - w, duration_s].
  static constexpr Seconds kMaxWindowS = 60;
  /// Growth must stay below this. 4 MiB: about 50 bytes per attempt over the ~80,000
  /// attempts of the ten-minute soak, so a leak of any per-request heap object shows, and far
  /// above the growth of a flat run (+0.06 MiB in ten minutes, docs/soak.md).
  double rss_growth_bound_bytes = 4.0 * 1024 * 1024;
  double fd_slack = 8;  ///< open fds after the run may exceed those before by at most this
};

/// The memory part of the verdict.
struct MemoryVerdict {
  Seconds window_s = 0;
  int warm_samples = 0;          ///< samples in the warm-up window
  int end_samples = 0;           ///< samples in the end window
  double warm_rss_bytes = 0;     ///< highest RSS in the warm-up window
  double end_rss_bytes = 0;      ///< highest RSS in the end window
  double max_rss_bytes = 0;      ///< highest RSS of all samples
  double first_rss_bytes = 0;    ///< the first sample (before the load)
  double last_rss_bytes = 0;     ///< the last sample (after the run)
  double growth_bytes = 0;       ///< end_rss_bytes - warm_rss_bytes
  double fds_before = 0;         ///< open fds of the first sample
  double fds_after = 0;          ///< open fds of the last sample
  double max_fds = 0;            ///< highest open fds of all samples
  bool windows_covered = false;  ///< both windows hold at least one sample
  bool rss_flat = false;         ///< windows covered and growth < the bound
  bool fds_back = false;         ///< fds_after <= fds_before + fd_slack
};

/// Applies the memory and descriptor bounds to `samples` (non-empty, as ParseProcessSamples
/// returns them).
MemoryVerdict CheckMemory(const std::vector<ProcessSampleRow>& samples, const SoakBounds& bounds);

/// What the script observed about the server after the load.
struct ServerEnd {
  int health_status = 0;  ///< HTTP status of GET /health after the run; 0: no answer
  int exit_code = -1;     ///< exit status after SIGTERM (128 + N for signal N, as a shell says)
};

/// Optional figures from the server's last /metrics scrape (process_* families).
struct ProcessFigures {
  std::optional<double> cpu_seconds;
  std::optional<double> resident_memory_bytes;
  std::optional<double> open_fds;
  std::optional<double> max_fds;
};

/// Reads the process_* samples of a Prometheus exposition (absent ones stay nullopt).
ProcessFigures ReadProcessFigures(std::string_view exposition);

/// Admission's promise over a run: of the admitted requests, those whose promise was broken.
struct PromiseFigures {
  std::int64_t admitted = 0;
  std::int64_t dropped_at_queue_head = 0;
  std::int64_t abandoned = 0;  ///< by their client, after admission
  std::int64_t late = 0;       ///< completed outside an SLO (completed - good)
  /// The bound on broken / admitted, a share in [0, 1]; none: the figures are reported only.
  std::optional<double> max_share;
  std::int64_t broken() const { return dropped_at_queue_head + abandoned + late; }
};

/// The figures of `summary` (bench's --json run summary of the soak) with the bound.
PromiseFigures PromisesOf(const RunSummary& summary, std::optional<double> max_share);

/// Why `summary` cannot be the run whose --records held `record_attempts` attempts: its
/// `offered` is another count (a summary of another run, or the simulator's), or its counts
/// contradict each other (more admitted than offered, more broken than admitted). Empty when
/// they agree.
std::string SummaryMismatch(const RunSummary& summary, std::int64_t record_attempts);

struct SoakVerdict {
  std::vector<ReplyCount> replies;
  std::int64_t attempts = 0;
  std::int64_t undocumented = 0;  ///< attempts whose end is not ReplyIsDocumented
  MemoryVerdict memory;
  ServerEnd server;
  ProcessFigures figures;
  std::optional<PromiseFigures> promises;  ///< set by AddPromises
  std::vector<std::string> failures;       ///< one line per failed check; empty: the soak passed
  bool passed() const { return failures.empty(); }
};

/// Combines the parts into the verdict (fills `failures`).
SoakVerdict Judge(std::vector<ReplyCount> replies, const MemoryVerdict& memory,
                  const ServerEnd& server, const ProcessFigures& figures, const SoakBounds& bounds);

/// Adds the promise check to `verdict`: a failure when a bound is set and more than that share
/// of the admitted broke (none admitted: nothing broke).
void AddPromises(const PromiseFigures& promises, SoakVerdict* verdict);

/// The human-readable report: replies by status, outcome and reason; RSS and descriptors; the
/// server's end; then the verdict line "soak: PASS ..." or "soak: FAIL: ...".
std::string FormatSoakReport(const SoakVerdict& verdict, const SoakBounds& bounds);

/// A gnuplot script that draws `csv` (ParseProcessSamples's format) as `svg`: RSS in MiB over
/// time with the warm-up and end windows shaded and the bound (warm-up RSS + growth bound) as
/// a dashed line, and below it open descriptors on the same time axis. Paths are used as
/// given (gnuplot runs in their directory).
std::string RssChartScript(std::string_view csv, std::string_view svg, const MemoryVerdict& memory,
                           const SoakBounds& bounds);

}  // namespace spillway
