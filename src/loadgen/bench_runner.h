#pragma once
// `spillway bench`'s driver: runs a scenario's arrivals open loop against an OpenAI-compatible
// server and returns the same RunSummary the simulator does (docs/bench.md).
//
// Concurrency: one io_context on the calling thread; every request is a coroutine (Asio +
// Beast), so the recorder and the retry planner are touched from that thread only and need no
// locks. A dispatcher coroutine sleeps until each arrival's time and starts its request
// whatever the server does (open loop); a request's retries run in its own coroutine. A
// ticker samples in-flight requests and scrapes GET /metrics once a second.

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "core/types.h"
#include "loadgen/request_labels.h"
#include "report/attempt_record.h"
#include "report/percentiles.h"
#include "report/run_summary.h"
#include "workload/scenario.h"

namespace spillway::loadgen {

struct BenchOptions {
  std::string target_url;  ///< e.g. http://127.0.0.1:8000
  std::string model;       ///< empty: the first id of GET /v1/models, else "default"
  std::string api_key;     ///< sent as "Authorization: Bearer KEY" when non-empty
  /// Per-tenant keys (--api-key-for): a request of a class whose tenant is listed is sent with
  /// that key instead of `api_key`. Every tenant listed must be one of the scenario's.
  TenantKeys api_keys_by_tenant;
  std::string policy_label = "bench";  ///< the summary's `policy`
  std::uint64_t seed = 1;              ///< arrivals, prompts and retry jitter
  Seconds duration_limit_s = kNever;   ///< send only arrivals before this time
  Seconds max_request_s = 600;         ///< cap on one attempt when the scenario sets none
  /// Attempts in flight at most; an arrival or retry over it is not sent and counts as a
  /// transport error ("client_in_flight_limit"). 0: the open-file limit minus a reserve.
  std::int64_t max_in_flight = 0;
  bool scrape_metrics = true;  ///< GET /metrics once a second when the server has it
  /// Servers whose /metrics to scrape instead of the target's, their snapshots summed
  /// (metrics::SumSnapshots): the engines behind a gateway (`spillway fleet`), whose queues,
  /// preemptions and engine time the gateway does not export. A server that stops answering
  /// (killed) keeps its last counters; its gauges leave the sum.
  std::vector<std::string> metrics_urls;
  bool progress = false;            ///< rewrite a progress line on stderr once a second
  std::ostream* records = nullptr;  ///< one JSON line per attempt, when non-null
  /// Called once per attempt when it ends, on the run's thread (as SimOptions::on_record):
  /// the same record the `records` line is made of. Unset: not called.
  std::function<void(const AttemptRecord&)> on_record;
  std::ostream* timeseries = nullptr;  ///< one JSON line per second, when non-null
};

struct BenchResult {
  RunSummary summary;                 ///< source "bench"
  std::string model;                  ///< the model the requests named
  std::int64_t transport_errors = 0;  ///< attempts without a response head
  Percentiles send_lag_s;             ///< how late first attempts started vs the schedule
  std::int64_t max_in_flight = 0;     ///< the most attempts in flight at once
  bool metrics_scraped = false;       ///< the server exported vLLM / Spillway metrics
  bool interrupted = false;           ///< stopped early by Ctrl-C
};

/// Runs `scenario` against `options.target_url`; blocks until every request ended. Raises the
/// open-file limit first (net::RaiseOpenFileLimit: a socket per request in flight). Throws
/// std::invalid_argument for a bad URL or a tenant key for no class's tenant, and
/// std::runtime_error when the target cannot be
/// resolved or reached (GET /v1/models gets no HTTP answer).
BenchResult RunBench(const Scenario& scenario, const BenchOptions& options);

}  // namespace spillway::loadgen
