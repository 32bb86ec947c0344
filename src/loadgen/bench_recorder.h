#pragma once
// Turns the load generator's attempts into the run summary the simulator produces (the same
// RunRecorder, so the same keys and arithmetic), plus the live counters of the progress line
// and the per-second in-flight count. Pure: times are seconds from the run's start, given by
// the caller. Not thread-safe.
//
// Accounting (docs/bench.md): each attempt is offered at its send time; then
//   rejected  -> RunRecorder::OnRejected (status, reason) at the head's time;
//   dropped   -> admitted at the head, OnDroppedAtQueueHead at the error event;
//   completed / failed / abandoned -> admitted at the head (at the attempt's end when no head
//                came: a server that holds a request without answering has taken it in), then
//                OnRequestDone;
//   transport error -> counted apart (transport_errors): neither admitted nor rejected.
// So offered = admitted + rejected + transport errors.
//
// Retry-After check (RunSummary::retry_after, report/retry_after_check.h): every admitted
// attempt adds its estimated queue span (QueueSpanOf), every 429/503 with a Retry-After a
// sample at its head's time; the check runs in Finish.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "metrics/metrics_text.h"
#include "report/attempt_record.h"
#include "report/run_recorder.h"
#include "report/run_summary.h"

namespace spillway::loadgen {

using metrics::ReadServerSnapshot;
using metrics::ServerSnapshot;

class BenchRecorder {
 public:
  BenchRecorder(GoodputSlo slo, std::vector<RunRecorder::Phase> phases);

  /// An attempt was sent (counts it in flight).
  void OnAttemptStarted() { ++in_flight_; }
  /// A gap between two content events of one stream, seconds.
  void OnInterTokenGap(Seconds gap_s) { recorder_.OnInterTokenGap(gap_s); }
  /// An attempt ended (of one started with OnAttemptStarted).
  void OnAttemptDone(const AttemptRecord& r);

  /// The end of second `second` (from 0): samples the in-flight count.
  void SampleInFlight(std::int64_t second);
  /// The server's waiting / running / KV usage gauges scraped at the end of second `second`.
  void OnServerGauges(std::int64_t second, const ServerSnapshot& server);
  /// Server counters at the start and the end of the run: their differences fill
  /// preemptions, prefill_tokens, recomputed_tokens (0 when the server does not export them),
  /// and engine_busy_s, wasted_engine_s and not_completed_engine_s (nullopt, not measured, when
  /// it does not, or without this call); the end's estimates fill the summary's `estimates`.
  void SetServerTotals(const ServerSnapshot& first, const ServerSnapshot& last);

  /// Builds the summary; `duration_s` is the schedule's span (rate denominator),
  /// `makespan_s` until the last attempt ended.
  RunSummary Finish(double duration_s, double makespan_s);

  std::int64_t offered() const { return offered_; }
  std::int64_t in_flight() const { return in_flight_; }
  std::int64_t shed() const { return shed_; }  ///< rejected + dropped at the queue head
  std::int64_t good() const { return good_; }
  std::int64_t completed() const { return completed_; }
  std::int64_t abandoned() const { return abandoned_; }
  std::int64_t transport_errors() const { return transport_errors_; }
  /// In-flight attempts at the end of each second, indexed by second.
  const std::vector<std::int64_t>& in_flight_series() const { return in_flight_series_; }

 private:
  RunRecorder recorder_;
  std::optional<ServerSnapshot> first_;
  std::optional<ServerSnapshot> last_;
  std::vector<std::int64_t> in_flight_series_;
  std::int64_t offered_ = 0;
  std::int64_t in_flight_ = 0;
  std::int64_t shed_ = 0;
  std::int64_t good_ = 0;
  std::int64_t completed_ = 0;
  std::int64_t abandoned_ = 0;
  std::int64_t transport_errors_ = 0;
};

/// An admitted attempt's stay in the server's waiting queue as the client can estimate it;
/// nullopt for attempts that were not admitted (refused at the door, transport errors).
///   entered_s  the response head (a streaming server sends it once it admitted the request),
///              else the attempt's end;
///   left_s     the first content event, else the attempt's end (the drop at the queue head,
///              the client's disconnect or the error).
/// Error against the server's own times: left_s is late by the request's prefill (first
/// scheduled to first token, one engine step or more for a chunked long prompt) plus the
/// token's delivery, so drain times come out long (a conservative check); a request the
/// client abandoned leaves the server's queue at its next engine step after the disconnect,
/// up to one step after left_s. Both ends carry the loopback delivery delay (milliseconds).
std::optional<QueueSpan> QueueSpanOf(const AttemptRecord& r);

/// The per-second time series as JSON Lines, one object a second: t, offered, admitted, shed
/// (rejected + dropped), completed, good, in_flight, and the server's waiting, running and
/// kv_usage (0 when not scraped).
std::string TimeseriesJsonl(const RunSummary& summary, const std::vector<std::int64_t>& in_flight);

}  // namespace spillway::loadgen
