#include "loadgen/bench_runner.h"

#include <unistd.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>
#include <csignal>
#include <exception>
#include <iostream>
#include <optional>
#include <stdexcept>

#include "api/responses.h"
#include "core/rng.h"
#include "loadgen/bench_recorder.h"
#include "loadgen/classify.h"
#include "loadgen/http_attempt.h"
#include "loadgen/progress.h"
#include "loadgen/request_body.h"
#include "loadgen/request_labels.h"
#include "loadgen/schedule.h"
#include "metrics/metrics_text.h"
#include "net/clock.h"
#include "net/http_get.h"
#include "net/open_files.h"
#include "net/target.h"
#include "report/objectives.h"
#include "report/scenario_recording.h"
#include "workload/arrivals.h"
#include "workload/retry.h"

namespace spillway::loadgen {
namespace asio = boost::asio;
using metrics::SumSnapshots;
namespace {

constexpr auto kUse = asio::as_tuple(asio::use_awaitable);

/// Completion of a spawned coroutine: an exception escapes from io_context::run (and so from
/// RunBench) instead of vanishing with a request that would then never end.
void Rethrow(std::exception_ptr e) {
  if (e) {
    std::rethrow_exception(e);
  }
}

/// File descriptors kept for everything but request sockets (scrapes, output files, ...).
constexpr std::int64_t kReservedFds = 64;

/// Seconds allowed for GET /v1/models at the start and for each /metrics scrape.
constexpr Seconds kModelsTimeout_s = 10;
constexpr Seconds kScrapeTimeout_s = 0.9;

/// The --target URL, its errors naming the flag.
net::Target TargetOf(const std::string& url) {
  try {
    return net::ParseTarget(url);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("--target: ") + e.what());
  }
}

/// Whether a scrape holds any metric the recorder uses.
bool HasAny(const ServerSnapshot& s) {
  return s.waiting || s.running || s.kv_usage || s.preemptions || s.prompt_tokens ||
         s.recomputed_tokens || s.engine_busy_s || s.wasted_engine_s || s.not_completed_engine_s;
}

class Runner {
 public:
  Runner(const Scenario& sc, const BenchOptions& opt)
      : sc_(sc),
        opt_(opt),
        target_(TargetOf(opt.target_url)),
        endpoints_(net::Resolve(ioc_, target_)),
        schedule_(GenerateArrivals(sc, opt.seed), opt.duration_limit_s),
        span_s_(std::min(sc.ArrivalSpan(), opt.duration_limit_s)),
        recorder_(SloOf(sc), PhasesOf(sc, opt.duration_limit_s)),
        retry_(sc.client),
        rng_(opt.seed ^ 0xBE7C4B1DULL),
        dispatch_timer_(ioc_),
        idle_(ioc_),
        tick_timer_(ioc_),
        signals_(ioc_, SIGINT, SIGTERM) {
    if (opt.metrics_urls.empty()) {
      metrics_sources_.push_back({target_, endpoints_, std::nullopt});
    }
    for (const std::string& url : opt.metrics_urls) {
      const net::Target t = net::ParseTarget(url);
      metrics_sources_.push_back({t, net::Resolve(ioc_, t), std::nullopt});
    }
    context_.endpoints = &endpoints_;
    context_.target = &target_;
    context_.clock = &clock_;
    context_.path = "/v1/completions";
    context_.authorization = opt.api_key.empty() ? "" : "Bearer " + opt.api_key;
    context_.ttft_timeout_s = sc.client.ttft_timeout_s;
    context_.total_timeout_s = sc.client.total_timeout_s;
    context_.max_request_s = opt.max_request_s;
    context_.on_gap = [this](Seconds gap_s) { recorder_.OnInterTokenGap(gap_s); };
    CheckTenantKeys(sc, opt.api_keys_by_tenant);
    const std::int64_t open_files = net::RaiseOpenFileLimit();
    max_in_flight_ = opt.max_in_flight > 0 ? opt.max_in_flight
                                           : std::max<std::int64_t>(16, open_files - kReservedFds);
  }

  BenchResult Run() {
    asio::co_spawn(ioc_, Main(), Rethrow);
    ioc_.run();
    if (opt_.progress) {
      std::cerr << "\n";
    }
    if (!startup_error_.empty()) {
      throw std::runtime_error(startup_error_);
    }
    return Result();
  }

 private:
  asio::awaitable<void> Main();
  asio::awaitable<void> Dispatch();
  asio::awaitable<void> Request(std::size_t index);
  asio::awaitable<void> Ticker();
  asio::awaitable<void> WatchSignals();
  /// One scrape of every metrics source, summed; a source that does not answer counts as last
  /// seen (its gauges unknown). `silent`, when given, receives the URLs that did not answer.
  asio::awaitable<std::optional<ServerSnapshot>> Scrape(std::vector<std::string>* silent = nullptr);
  asio::awaitable<void> ScrapeSecond(std::int64_t second);
  AttemptRecord NotSent(const AttemptRecord& base) const;
  void Finished(const AttemptRecord& r);
  void PrintProgress();
  BenchResult Result();

  const Scenario& sc_;
  const BenchOptions& opt_;
  asio::io_context ioc_{1};
  net::Target target_;
  net::Endpoints endpoints_;
  OpenLoopSchedule schedule_;
  Seconds span_s_;
  BenchRecorder recorder_;
  RetryPlanner retry_;
  Rng rng_;
  net::SteadyClock clock_;
  AttemptContext context_;
  std::string model_;
  asio::steady_timer dispatch_timer_;
  asio::steady_timer idle_;  // woken when the last request ends
  asio::steady_timer tick_timer_;
  asio::signal_set signals_;
  /// Where /metrics is scraped: the target, or BenchOptions::metrics_urls, each with its last
  /// snapshot that had any metric.
  struct MetricsSource {
    net::Target target;
    net::Endpoints endpoints;
    std::optional<ServerSnapshot> last;
  };
  std::vector<MetricsSource> metrics_sources_;
  std::optional<ServerSnapshot> first_scrape_;
  std::optional<ServerSnapshot> last_scrape_;
  std::string startup_error_;
  std::int64_t live_requests_ = 0;  // logical requests not yet finished (retries included)
  std::int64_t max_in_flight_ = 0;
  std::int64_t peak_in_flight_ = 0;
  Seconds makespan_s_ = 0;
  // How late each first attempt started (sent_s) against its arrival: the dispatcher takes a
  // burst's arrivals at once, their sends start one after another.
  LogHistogram send_lag_;
  Seconds stopped_at_s_ = kNever;
  bool scraping_ = false;
  bool scrape_busy_ = false;
  bool finished_ = false;
};

asio::awaitable<void> Runner::Main() {
  const net::GetResult models = co_await net::HttpGet(endpoints_, target_, "/v1/models",
                                                      context_.authorization, kModelsTimeout_s);
  if (models.status == 0) {
    startup_error_ = "cannot reach " + opt_.target_url + ": GET /v1/models: " + models.error;
    signals_.cancel();
    co_return;
  }
  model_ = opt_.model;
  if (!model_.empty() && models.status == 200) {
    const std::vector<std::string> ids = api::ModelIds(models.body);
    if (!ids.empty() && std::find(ids.begin(), ids.end(), model_) == ids.end()) {
      std::string list;
      for (const std::string& id : ids) {
        list += (list.empty() ? "" : ", ") + id;
      }
      std::cerr << "spillway bench: warning: --model " << model_
                << " is not among the target's models (" << list
                << "): expect 404 model_not_found\n";
    }
  }
  if (model_.empty()) {
    const std::optional<std::string> id =
        models.status == 200 ? api::FirstModelId(models.body) : std::nullopt;
    if (!id.has_value()) {
      std::cerr << "spillway bench: GET /v1/models answered " << models.status
                << " without a model id; requests name the model 'default' (see --model)\n";
    }
    model_ = id.value_or("default");
  }
  if (opt_.scrape_metrics) {
    first_scrape_ = co_await Scrape();
    scraping_ = first_scrape_.has_value();
    last_scrape_ = first_scrape_;
  }
  clock_ = net::SteadyClock();
  asio::co_spawn(ioc_, WatchSignals(), Rethrow);
  asio::co_spawn(ioc_, Ticker(), Rethrow);
  co_await Dispatch();
  while (live_requests_ > 0) {
    idle_.expires_at(asio::steady_timer::time_point::max());
    co_await idle_.async_wait(kUse);
  }
  finished_ = true;
  tick_timer_.cancel();
  signals_.cancel();
  if (scraping_) {
    asio::steady_timer pause(ioc_);
    while (scrape_busy_) {  // let the last per-second scrape finish first
      pause.expires_after(std::chrono::milliseconds(20));
      co_await pause.async_wait(kUse);
    }
    std::vector<std::string> silent;
    const std::optional<ServerSnapshot> s = co_await Scrape(&silent);
    if (silent.size() == metrics_sources_.size()) {
      // The server died or hung mid-run: its counters at the end are unknown, and an earlier
      // scrape would report part of the run as the whole. Not measured.
      last_scrape_.reset();
      std::cerr << "spillway bench: /metrics did not answer after the run: the engine's "
                   "figures (engine s, preemptions, prefill tokens) are not measured\n";
    } else {
      last_scrape_ = s;
      for (const std::string& url : silent) {
        std::cerr << "spillway bench: " << url
                  << " did not answer after the run: its engine figures count as last seen "
                     "(a lower bound)\n";
      }
    }
  }
}

asio::awaitable<void> Runner::Dispatch() {
  while (!schedule_.finished()) {
    const Seconds t = schedule_.next_time_s();
    if (t > clock_.Now()) {
      dispatch_timer_.expires_at(clock_.At(t));
      co_await dispatch_timer_.async_wait(kUse);
    }
    const auto [first, last] = schedule_.TakeDue(clock_.Now());
    for (std::size_t i = first; i < last; ++i) {
      ++live_requests_;
      asio::co_spawn(ioc_, Request(i), Rethrow);
    }
  }
}

AttemptRecord Runner::NotSent(const AttemptRecord& base) const {
  AttemptRecord r = base;
  r.sent_s = r.finished_s = clock_.Now();
  r.outcome = AttemptOutcome::kTransportError;
  r.reason = "client_in_flight_limit";
  return r;
}

asio::awaitable<void> Runner::Request(std::size_t index) {
  const Arrival& a = schedule_.arrival(index);
  retry_.OnFirstAttempt();
  // A prompt asked again (RequestClass::distinct_prompts) is the same body every time; shared
  // segments (a system prompt, a trace's hash_ids) are the same tokens in every body. Built
  // once: a retry resends it.
  const std::uint64_t prompt_seed = a.prompt_id != 0 ? a.prompt_id * 0xBF58476D1CE4E5B9ULL
                                                     : opt_.seed * 0x9E3779B97F4A7C15ULL + index;
  const std::string body = CompletionBody(model_, a.prompt_tokens, a.max_tokens, prompt_seed,
                                          a.ignore_eos, a.prompt_segments.get());
  // Every attempt carries the same class, priority and key: a retry keeps its class.
  const RequestLabels labels = LabelsFor(sc_, a, opt_.api_key, opt_.api_keys_by_tenant);
  const std::string authorization =
      labels.api_key.empty() ? std::string() : "Bearer " + std::string(labels.api_key);
  AttemptRecord base;
  base.request = static_cast<std::int64_t>(index);
  base.scheduled_s = a.time_s;
  base.prompt_tokens = a.prompt_tokens;
  base.max_tokens = a.max_tokens;
  base.emulated_output_tokens = a.ignore_eos ? 0 : a.output_tokens;
  base.class_name = labels.class_name;
  base.priority_requested = labels.priority;
  base.fairness_id = labels.fairness_id;
  asio::steady_timer backoff(ioc_);
  for (;; ++base.attempt) {
    recorder_.OnAttemptStarted();
    peak_in_flight_ = std::max(peak_in_flight_, recorder_.in_flight());
    // (An if, not ?: around co_await: GCC 12 miscompiles co_await inside a conditional
    // expression that yields a class type.)
    AttemptRecord r;
    if (recorder_.in_flight() > max_in_flight_) {
      r = NotSent(base);
    } else {
      r = co_await RunAttempt(context_, base, body, authorization);
    }
    Finished(r);
    if (!IsRetryable(r, sc_.client.retry_on_timeout) || stopped_at_s_ != kNever) {
      break;
    }
    const std::optional<Seconds> delay = retry_.Next(base.attempt, r.retry_after_s, rng_);
    if (!delay.has_value()) {
      break;
    }
    base.scheduled_s = r.finished_s + *delay;
    backoff.expires_at(clock_.At(base.scheduled_s));
    co_await backoff.async_wait(kUse);
    if (stopped_at_s_ != kNever) {
      break;
    }
  }
  if (--live_requests_ == 0) {
    idle_.cancel();
  }
}

void Runner::Finished(const AttemptRecord& r) {
  recorder_.OnAttemptDone(r);
  makespan_s_ = std::max(makespan_s_, r.finished_s);
  if (r.attempt == 1) {
    send_lag_.Add(std::max(0.0, r.sent_s - r.scheduled_s));
  }
  if (opt_.records != nullptr) {
    *opt_.records << RecordJson(r) << '\n';
  }
  if (opt_.on_record) {
    opt_.on_record(r);
  }
}

asio::awaitable<void> Runner::Ticker() {
  for (std::int64_t k = 1; !finished_; ++k) {
    tick_timer_.expires_at(clock_.At(static_cast<double>(k)));
    co_await tick_timer_.async_wait(kUse);
    if (finished_) {
      break;
    }
    recorder_.SampleInFlight(k - 1);
    if (scraping_ && !scrape_busy_) {
      asio::co_spawn(ioc_, ScrapeSecond(k - 1), Rethrow);
    }
    PrintProgress();
  }
}

asio::awaitable<void> Runner::ScrapeSecond(std::int64_t second) {
  scrape_busy_ = true;
  if (std::optional<ServerSnapshot> s = co_await Scrape()) {
    recorder_.OnServerGauges(second, *s);
    last_scrape_ = s;
  }
  scrape_busy_ = false;
}

asio::awaitable<std::optional<ServerSnapshot>> Runner::Scrape(std::vector<std::string>* silent) {
  // One after another, the whole scrape within kScrapeTimeout_s (a hung server costs its
  // share, not the tick).
  const Seconds timeout_s = kScrapeTimeout_s / static_cast<double>(metrics_sources_.size());
  std::vector<ServerSnapshot> parts;
  for (MetricsSource& m : metrics_sources_) {
    const net::GetResult r =
        co_await net::HttpGet(m.endpoints, m.target, "/metrics", context_.authorization, timeout_s);
    std::optional<ServerSnapshot> s;
    if (r.status == 200) {
      s = ReadServerSnapshot(r.body);
    }
    if (s.has_value() && HasAny(*s)) {
      m.last = s;
    } else if (m.last.has_value()) {
      if (silent != nullptr) {
        silent->push_back(m.target.Key());
      }
      s = m.last;  // no answer: its counters as last seen, its gauges unknown
      s->waiting.reset();
      s->running.reset();
      s->kv_usage.reset();
    } else {
      continue;
    }
    parts.push_back(*s);
  }
  if (parts.empty()) {
    co_return std::nullopt;
  }
  co_return parts.size() == 1 ? parts.front() : SumSnapshots(parts);
}

asio::awaitable<void> Runner::WatchSignals() {
  auto [ec, signal] = co_await signals_.async_wait(kUse);
  if (ec) {
    co_return;
  }
  stopped_at_s_ = clock_.Now();
  schedule_.Stop();
  dispatch_timer_.cancel();
  std::cerr << "\nspillway bench: stopping: no new requests; waiting for " << recorder_.in_flight()
            << " in flight (again to quit now)\n";
  auto [ec2, signal2] = co_await signals_.async_wait(kUse);
  if (!ec2) {
    ioc_.stop();
  }
}

void Runner::PrintProgress() {
  if (!opt_.progress) {
    return;
  }
  Progress p;
  p.elapsed_s = clock_.Now();
  p.span_s = span_s_;
  p.offered = recorder_.offered();
  p.in_flight = recorder_.in_flight();
  p.shed = recorder_.shed();
  p.good = recorder_.good();
  std::cerr << "\r" << ProgressLine(p) << "\x1b[K" << std::flush;
}

BenchResult Runner::Result() {
  if (first_scrape_.has_value() && last_scrape_.has_value()) {
    recorder_.SetServerTotals(*first_scrape_, *last_scrape_);
  }
  BenchResult out;
  const Seconds duration_s = std::min(span_s_, stopped_at_s_);
  out.summary = recorder_.Finish(duration_s, makespan_s_);
  RunSummary& s = out.summary;
  EvaluateObjectives(sc_.objectives, &s);
  s.source = "bench";
  s.scenario = sc_.name;
  s.policy = opt_.policy_label;
  s.profile = model_;
  s.seed = opt_.seed;
  s.replicas = 1;
  out.model = model_;
  out.transport_errors = recorder_.transport_errors();
  out.send_lag_s = send_lag_.Summary();
  out.max_in_flight = peak_in_flight_;
  out.metrics_scraped = scraping_;
  out.interrupted = stopped_at_s_ != kNever;
  if (opt_.timeseries != nullptr) {
    *opt_.timeseries << TimeseriesJsonl(s, recorder_.in_flight_series());
  }
  return out;
}

}  // namespace

BenchResult RunBench(const Scenario& scenario, const BenchOptions& options) {
  Runner runner(scenario, options);
  return runner.Run();
}

}  // namespace spillway::loadgen
