// `spillway policy verify FILE --target URL [--out DIR]`: runs the policy's validation
// checklist against a live deployment (docs/policy.md, "Verify") and writes each item's verdict
// and evidence into a copy of the policy (DIR/policy.yaml), rendered as the one page
// (DIR/policy.md, policy.html, serve.yaml); the runs it judged from go to DIR/verify/.
//
// The tests, in order, each on an idle deployment: the replica baseline (Poisson at the base
// rate), the burst (admission must refuse what it cannot serve in time; the cascade's steps
// are looked for in it), a retry storm (100 clients at once, retrying as the policy says), a
// disconnect test (streams closed mid-generation; the engines' gauges must drop back), and a
// replay of the policy's workload scenario against the simulator's prediction for it. The
// verdicts are src/policy/verify_verdicts.h's; this file only drives the runs.

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>

#include "admission/admission.h"
#include "cli_checks.h"
#include "commands.h"
#include "config/config_error.h"
#include "config/server_config.h"
#include "invocation.h"
#include "loadgen/bench_runner.h"
#include "net/http_get.h"
#include "net/target.h"
#include "output_file.h"
#include "policy/checklist_yaml.h"
#include "policy/policy_check.h"
#include "policy/policy_reader.h"
#include "policy/policy_render.h"
#include "policy/verify_plan.h"
#include "policy/verify_verdicts.h"
#include "policy_findings.h"
#include "report/summary_json.h"
#include "server_gauges.h"
#include "sim/run_config.h"
#include "sim/simulator.h"
#include "workload/scenario.h"

namespace spillway::app {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Output tokens of the streams that measure the disconnect test's pace.
constexpr std::int32_t kPaceTokens = 32;

struct VerifyArgs {
  std::string file;
  std::string target;
  std::string out = "out/policy";
  std::string scenario;  ///< "" for the policy's workload.scenario
  std::string model;
  std::string api_key;
  std::vector<std::string> metrics_urls;
  double baseline_s = 30;
  double burst_s = 30;
  double replay_s = 60;
  /// The tests to run (kTests); empty: all. Items of the others keep their verdicts.
  std::vector<std::string> only;
  bool no_progress = false;

  bool Runs(std::string_view test) const {
    return only.empty() || std::find(only.begin(), only.end(), test) != only.end();
  }
};

// The tests, in the order they run.
const std::vector<std::string> kTests = {"baseline", "burst", "storm", "disconnect", "replay"};

// Writes `text` to `path`; throws std::runtime_error.
void WriteOutput(const fs::path& path, const std::string& text) {
  OutputFile out(path.string(), "--out");
  *out.stream() << text;
  out.Commit();
}

class Verifier {
 public:
  /// What Preflight returns when Ctrl-C stopped it.
  static constexpr std::string_view kInterrupted = "interrupted";

  Verifier(const VerifyArgs& a, policy::Policy p, Scenario workload)
      : a_(a),
        policy_(std::move(p)),
        workload_(std::move(workload)),
        runs_(fs::path(a.out) / "verify"),
        gauges_(a.target, a.metrics_urls) {}

  // One request to the end before any test: the target must answer as an OpenAI-compatible
  // server. Empty when it did, else why not. Also warns when an emulated Spillway engine runs
  // another profile than the policy names (the replay would then disagree).
  std::string Preflight() {
    Scenario one = policy::DisconnectScenario(policy_, workload_, 1, kPaceTokens, kNever);
    one.name = workload_.name + "-verify-preflight";
    std::string why = "no answer";
    loadgen::BenchOptions o = Options("preflight");
    o.on_record = [&why](const AttemptRecord& rec) {
      why = fmt::format("status {}, {} {}", rec.status, ToString(rec.outcome), rec.reason);
    };
    o.progress = false;
    o.max_request_s = 60;  // a target that never answers is not waited on for long
    const loadgen::BenchResult r = loadgen::RunBench(one, o);
    if (r.interrupted) {
      return std::string(kInterrupted);
    }
    if (r.summary.completed == 1) {
      WarnOnProfile();
      return "";
    }
    return fmt::format("one request (POST {}/v1/completions, {} tokens) did not complete: {}",
                       a_.target, kPaceTokens, why);
  }

  // Runs every test; false when interrupted.
  bool Run() {
    if (a_.Runs("baseline") &&
        !Attempt({"replica_baseline", "chunked_prefill_baseline"}, &Verifier::Baseline)) {
      return false;
    }
    if (a_.Runs("burst") && !Attempt({"admission_rejects", "cascade_tested"}, &Verifier::Burst)) {
      return false;
    }
    if (a_.Runs("storm") && !Attempt({"retry_storm"}, &Verifier::Storm)) {
      return false;
    }
    if (a_.Runs("disconnect") && !Attempt({"disconnect_seen", "disconnect_polled",
                                           "abort_at_iteration", "kv_freed", "disconnect_frees_kv"},
                                          &Verifier::Disconnect)) {
      return false;
    }
    return !a_.Runs("replay") || Attempt({"trace_replay"}, &Verifier::Replay);
  }

  const policy::Policy& verified() const { return policy_; }

  /// Runs one test. A target that stops answering during it fails the test's items (their
  /// evidence says why) and the next test runs: the verdicts already taken are kept. False
  /// when interrupted.
  bool Attempt(std::initializer_list<std::string_view> items, bool (Verifier::*test)()) {
    try {
      return (this->*test)();
    } catch (const config::ConfigError&) {
      throw;  // the policy or the scenario, not the target: a usage error
    } catch (const std::runtime_error& e) {
      std::cout << "      the target stopped answering: " << e.what() << "\n" << std::flush;
      for (const std::string_view id : items) {
        Record({std::string(id), policy::Verdict::kFail,
                std::string("the target stopped answering during the test: ") + e.what(), "", ""});
      }
      return true;
    }
  }

  /// The metrics sources that answer without the gauges the disconnect test reads.
  std::vector<std::string> SilentMetrics() const { return gauges_.Silent(); }

 private:
  bool Baseline() {
    const double base = policy_.Number("workload.base_rate_rps").value_or(0);
    Step(1, fmt::format("replica baseline: {:g} req/s for {:g} s", base, a_.baseline_s));
    const auto baseline =
        Bench(policy::BaselineScenario(policy_, workload_, a_.baseline_s), "baseline");
    if (!baseline) {
      return false;
    }
    const policy::ChecklistItem base_item =
        policy::JudgeBaseline(policy_, baseline->summary, File("baseline.json"));
    Record(base_item);
    Record(policy::JudgeChunkedPrefill(policy_, base_item));
    return true;
  }

  bool Burst() {
    const double burst = policy_.Number("workload.burst_rate_rps").value_or(0);
    Step(2,
         fmt::format("admission under the burst: {:g} req/s for {:g} s", burst,
                     std::min(a_.burst_s,
                              policy_.Number("workload.burst_duration_s").value_or(a_.burst_s))));
    const auto burst_run = Bench(policy::BurstScenario(policy_, workload_, a_.burst_s), "burst");
    if (!burst_run) {
      return false;
    }
    Record(policy::JudgeAdmission(policy_, burst_run->summary, File("burst.json")));
    Record(policy::JudgeCascade(policy_, burst_run->summary, burst_run->model, File("burst.json")));
    return true;
  }

  bool Storm() {
    Step(3,
         fmt::format("retry storm: {} clients at once, {:g} retries each with jitter",
                     policy::kRetryStormClients, policy_.Number("retry.max_retries").value_or(0)));
    std::vector<policy::AttemptSend> sends;
    const auto storm = Bench(policy::RetryStormScenario(policy_, workload_), "retry-storm",
                             [&sends](const AttemptRecord& r) {
                               sends.push_back({r.attempt, r.sent_s});
                             });
    if (!storm) {
      return false;
    }
    Record(policy::JudgeRetryStorm(policy::MeasureRetryStorm(sends), File("retry-storm.jsonl")));
    return true;
  }

  void Step(int n, const std::string& what) const {
    std::cout << fmt::format("[{}/5] {}\n", n, what) << std::flush;
  }

  std::string File(const std::string& name) const { return (runs_ / name).string(); }

  // Waits for an idle deployment, runs `scenario`, writes its summary to DIR/verify/NAME.json
  // and, when `on_record` is given (called with each attempt's record), the records to
  // NAME.jsonl. nullopt when interrupted.
  std::optional<loadgen::BenchResult> Bench(
      const Scenario& scenario, const std::string& name,
      std::function<void(const AttemptRecord&)> on_record = {}) {
    if (!gauges_.WaitIdle(120, 5)) {
      std::cerr << "warning: requests were still in the engines after 120 s; testing anyway\n";
    }
    std::ostringstream records_text;
    loadgen::BenchOptions o = Options(name);
    const bool records = static_cast<bool>(on_record);
    o.records = records ? &records_text : nullptr;
    o.on_record = std::move(on_record);
    loadgen::BenchResult r = loadgen::RunBench(scenario, o);
    if (r.interrupted) {
      return std::nullopt;
    }
    r.summary.gpu_hour_usd = GpuHourUsd();
    WriteOutput(runs_ / (name + ".json"), SummaryToJson(r.summary));
    if (records) {
      WriteOutput(runs_ / (name + ".jsonl"), records_text.str());
    }
    return r;
  }

  loadgen::BenchOptions Options(const std::string& name) const {
    loadgen::BenchOptions o;
    o.target_url = a_.target;
    o.model = a_.model;
    o.api_key = a_.api_key;
    o.metrics_urls = a_.metrics_urls;
    o.policy_label = "verify " + name;
    o.seed = workload_.seed;
    o.progress = !a_.no_progress && ::isatty(STDERR_FILENO) == 1;
    return o;
  }

  // A Spillway serve says which profile its emulated engine runs (GET /v1/models,
  // data[0].spillway.executor "emulated:NAME"): another than model.profile is worth a warning.
  void WarnOnProfile() const {
    const policy::Value* profile = policy_.Find("model.profile");
    if (profile == nullptr) {
      return;
    }
    boost::asio::io_context ioc;
    const net::Target t = net::ParseTarget(a_.target);
    const net::GetResult got = net::HttpGetNow(net::Resolve(ioc, t), t, "/v1/models", 5);
    boost::system::error_code ec;
    const boost::json::value v = boost::json::parse(got.body, ec);
    const boost::json::value* executor =
        ec ? nullptr : v.find_pointer("/data/0/spillway/executor", ec);
    if (ec || executor == nullptr || !executor->is_string()) {
      return;
    }
    const std::string running(executor->as_string());
    if (running != "emulated:" + profile->text) {
      std::cout << fmt::format(
          "warning: the target runs {}, the policy names profile {}: the replay is predicted on "
          "the policy's\n",
          running, profile->text);
    }
  }

  // The policy's price of a GPU hour: the runs' engine seconds in dollars (report/cost.h).
  std::optional<double> GpuHourUsd() const {
    const auto price = policy_.Number("cost.gpu_hour_usd");
    return price && *price > 0 ? price : std::nullopt;
  }

  void Record(policy::ChecklistItem item) {
    item.checked_at = UtcNow();
    for (std::vector<policy::ChecklistItem>* list : {&policy_.cancellation, &policy_.validation}) {
      for (policy::ChecklistItem& slot : *list) {
        if (slot.id == item.id) {
          item.where = slot.where;
          slot = item;
        }
      }
    }
    std::cout << fmt::format("      {:<9} {}\n", policy::VerdictName(item.verdict), item.id)
              << std::flush;
  }

  // Streams as long as the request deadline allows, closed by their clients a quarter through;
  // then the gauges polled until running and KV usage are back at their idle levels.
  // The streams' pace is measured first, at the same concurrency: as many short streams to
  // the end (disconnect-pace.json). Their length then is what the request deadline allows.
  bool Disconnect() {
    const auto streams = static_cast<std::int32_t>(
        std::clamp(policy_.Number("engine.max_num_seqs").value_or(8), 1.0, 8.0));
    Step(4, fmt::format("disconnect: {} streams closed mid-generation by their clients", streams));
    const auto pace =
        Bench(policy::DisconnectScenario(policy_, workload_, streams, kPaceTokens, kNever),
              "disconnect-pace");
    if (!pace) {
      return false;
    }
    const RunSummary& p = pace->summary;
    const double tpot =
        p.tpot_s.count > 0 ? p.tpot_s.p50 : policy_.Number("slo.tpot_p95_s").value_or(0.05);
    const double ttft =
        p.ttft_s.count > 0 ? p.ttft_s.max : policy_.Number("slo.ttft_p95_s").value_or(1.0);
    const double deadline = policy_.Number("timeouts.gateway_s").value_or(10);
    const auto tokens = static_cast<std::int32_t>(std::clamp(
        std::floor(0.6 * std::max(deadline - ttft, 0.0) / std::max(tpot, 1e-4)), 16.0, 4096.0));
    // A quarter of the way into the generation: three quarters left to save.
    const Seconds leave_s = ttft + 0.25 * tokens * tpot;
    std::cout << fmt::format(
                     "      {} tokens each (at {:.1f} ms per token, first after {:.0f} ms), "
                     "closed after {:.2f} s\n",
                     tokens, tpot * 1e3, ttft * 1e3, leave_s)
              << std::flush;
    policy::DisconnectObservation seen;
    seen.streams = streams;
    seen.remaining_s = 0.75 * tokens * tpot;
    gauges_.WaitIdle(120, 5);
    const std::optional<metrics::ServerSnapshot> idle = gauges_.Read();
    // The gauges' peak while the streams run, polled beside the load (the bench's own scrape
    // is once a second, longer than the streams may last).
    std::atomic<bool> streaming{true};
    double running_peak = 0;
    double kv_peak = 0;
    std::thread poller([&] {
      while (streaming.load()) {
        if (const std::optional<metrics::ServerSnapshot> now = gauges_.Read()) {
          running_peak = std::max(running_peak, now->running.value_or(0));
          kv_peak = std::max(kv_peak, now->kv_usage.value_or(0));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
    const auto start = Clock::now();
    std::optional<loadgen::BenchResult> run;
    try {
      run =
          Bench(policy::DisconnectScenario(policy_, workload_, streams, tokens, leave_s),
                "disconnect", [&seen](const AttemptRecord& r) {
                  seen.left_mid_stream +=
                      r.outcome == AttemptOutcome::kAbandoned && r.first_token_s != kNever ? 1 : 0;
                });
    } catch (...) {
      streaming = false;
      poller.join();
      throw;
    }
    streaming = false;
    poller.join();
    if (!run) {
      return false;
    }
    const auto left = start + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(run->summary.makespan_s));
    if (idle) {
      seen.metrics = true;
      seen.running_idle = idle->running.value_or(0);
      seen.kv_idle = idle->kv_usage.value_or(0);
      seen.running_peak = running_peak;
      seen.kv_peak = kv_peak;
      constexpr Seconds kWaitS = 5;
      while (true) {
        const std::optional<metrics::ServerSnapshot> now = gauges_.Read();
        const Seconds since = std::chrono::duration<double>(Clock::now() - left).count();
        if (now) {
          seen.running_after = now->running.value_or(0);
          seen.kv_after = now->kv_usage.value_or(0);
          if (seen.running_after <= seen.running_idle &&
              seen.kv_after <= seen.kv_idle + policy::kKvUsageSlack) {
            seen.freed_after_s = std::max(since, 0.0);
            break;
          }
        }
        if (since >= kWaitS) {
          seen.waited_s = since;
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
    WriteOutput(runs_ / "disconnect-gauges.json",
                boost::json::serialize(boost::json::object{
                    {"streams", seen.streams},
                    {"left_mid_stream", seen.left_mid_stream},
                    {"metrics", seen.metrics},
                    {"running",
                     {{"idle", seen.running_idle},
                      {"peak", seen.running_peak},
                      {"after", seen.running_after}}},
                    {"kv_usage",
                     {{"idle", seen.kv_idle}, {"peak", seen.kv_peak}, {"after", seen.kv_after}}},
                    {"freed_after_s", seen.freed_after_s ? boost::json::value(*seen.freed_after_s)
                                                         : boost::json::value(nullptr)},
                    {"waited_s", seen.waited_s},
                    {"remaining_s", seen.remaining_s},
                    {"bound_s", policy::DisconnectFreedBoundS(seen)}}) +
                    "\n");
    for (policy::ChecklistItem& item : policy::JudgeDisconnect(
             seen, File("disconnect.json") + ", " + File("disconnect-gauges.json"))) {
      Record(std::move(item));
    }
    return true;
  }

  // The workload scenario (cut at --replay-s) live and in the simulator, on the engine the
  // policy configures (its serve config over the scenario's settings).
  bool Replay() {
    const Scenario replay = policy::ReplayScenario(workload_, a_.replay_s);
    Step(5, fmt::format("trace replay: {} for {:g} s, live and in the simulator", workload_.file,
                        replay.ArrivalSpan()));
    const auto live = Bench(replay, "replay-live");
    if (!live) {
      return false;
    }
    const server::ServerConfig serve = server::LoadServerConfigFromString(
        policy::ServeConfigYaml(policy_), policy_.file + " (rendered)");
    AdmissionPolicy admission = AdmissionPolicy::kPredictive;
    if (const policy::Value* v = policy_.Find("admission.ttft_policy")) {
      ParseAdmissionPolicy(v->text, &admission);
    }
    const RunConfig rc = ResolveRunConfig(replay, admission, DefaultProfileDir(), serve.engine);
    SimOptions options;
    options.seed = replay.seed;
    options.replicas = static_cast<std::int32_t>(policy_.Number("capacity.replicas").value_or(1));
    if (options.replicas > 1) {
      options.gateway = SimGateway{};
    }
    RunSummary sim = Simulate(replay, rc, options);
    sim.gpu_hour_usd = GpuHourUsd();
    WriteOutput(runs_ / "replay-sim.json", SummaryToJson(sim));
    Record(
        policy::JudgeReplay(live->summary, sim, File("replay-live.json"), File("replay-sim.json")));
    return true;
  }

  const VerifyArgs& a_;
  policy::Policy policy_;
  Scenario workload_;
  fs::path runs_;
  ServerGauges gauges_;
};

// A --metrics-url as a base URL: the engines' /metrics is what is read, so a URL that names
// it ("http://h:8000/metrics") means the same engine.
std::string MetricsBase(std::string url) {
  while (!url.empty() && url.back() == '/') {
    url.pop_back();
  }
  constexpr std::string_view kSuffix = "/metrics";
  if (url.size() > kSuffix.size() && url.ends_with(kSuffix)) {
    url.resize(url.size() - kSuffix.size());
  }
  return url;
}

int RunPolicyVerify(VerifyArgs a) {  // a copy: the metrics URLs are normalised
  for (std::string& url : a.metrics_urls) {
    url = MetricsBase(url);
  }
  policy::Policy read;
  std::string text;
  try {
    // Read once: the verdicts are written back into this text.
    std::ifstream in(a.file, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    read = policy::ReadPolicyString(text, a.file);
  } catch (const config::ConfigError& e) {
    std::cerr << e.what() << "\n" << a.file << ": does not read; fix it first (policy check)\n";
    return 2;
  }
  const policy::Value* named = read.Find("workload.scenario");
  const std::string given = !a.scenario.empty() ? a.scenario : named ? named->text : "";
  const std::string scenario_file =
      a.scenario.empty() ? FindPolicyScenario(given, a.file) : a.scenario;
  if (scenario_file.empty()) {
    std::cerr << a.file << ": workload.scenario: no file " << given
              << " (as given, nor beside the policy); name it with --scenario\n";
    return 2;
  }
  Scenario workload;
  try {
    workload = LoadScenario(scenario_file);
  } catch (const config::ConfigError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  std::optional<policy::Policy> verified;
  try {
    Verifier v(a, read, workload);
    std::cout << fmt::format("verifying {} against {} (workload {}); runs go to {}/verify\n",
                             a.file, a.target, scenario_file, a.out);
    const std::string wrong = v.Preflight();
    if (wrong == Verifier::kInterrupted) {
      std::cerr << "interrupted: the policy was not written\n";
      return 130;
    }
    if (!wrong.empty()) {
      std::cerr << "verify: " << a.target
                << " does not answer as an OpenAI-compatible server: " << wrong << "\n";
      return 2;
    }
    for (const std::string& silent : v.SilentMetrics()) {
      std::cout << "warning: " << silent
                << "/metrics answers with no vllm:num_requests_running and KV usage gauges: the "
                   "disconnect items need them\n";
    }
    std::error_code ec;
    fs::create_directories(fs::path(a.out) / "verify", ec);
    if (ec) {
      std::cerr << "--out: cannot create " << a.out << "/verify: " << ec.message() << "\n";
      return 2;
    }
    if (!v.Run()) {
      std::cerr << "interrupted: the policy was not written\n";
      return 130;
    }
    verified = v.verified();
  } catch (const std::invalid_argument& e) {
    std::cerr << "verify: " << e.what() << "\n";
    return 2;
  } catch (const config::ConfigError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::runtime_error& e) {
    std::cerr << "verify: " << e.what() << "\n";
    return 2;
  }
  // The verdicts go into the policy's own text; what is rendered is that file as read back.
  const fs::path out_file = fs::path(a.out) / "policy.yaml";
  const std::string with = policy::WithChecklists(text, *verified);
  const policy::Policy reread = policy::ReadPolicyString(with, out_file.string());
  const auto today = std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now());
  const policy::RenderContext context{policy::FormatDay(today), PolicyFindings(reread, today),
                                      "spillway policy verify"};
  try {
    WriteOutput(out_file, with);
    for (const auto& [name, text] : policy::RenderFiles(reread, context)) {
      WriteOutput(fs::path(a.out) / name, text);
    }
  } catch (const std::runtime_error& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  int pass = 0;
  int fail = 0;
  int unchecked = 0;
  for (const auto* list : {&reread.cancellation, &reread.validation}) {
    for (const policy::ChecklistItem& item : *list) {
      pass += item.verdict == policy::Verdict::kPass ? 1 : 0;
      fail += item.verdict == policy::Verdict::kFail ? 1 : 0;
      unchecked += item.verdict == policy::Verdict::kUnchecked ? 1 : 0;
    }
  }
  std::cout << fmt::format(
      "\nwrote {} with the verdicts ({} pass, {} fail, {} unchecked) and its page {}/policy.md, "
      "policy.html\n",
      out_file.string(), pass, fail, unchecked, a.out);
  for (const auto* list : {&reread.cancellation, &reread.validation}) {
    for (const policy::ChecklistItem& item : *list) {
      if (item.verdict != policy::Verdict::kPass) {
        std::cout << fmt::format("  {} {}: {}\n", policy::VerdictName(item.verdict), item.id,
                                 item.evidence.empty() ? "not tested" : item.evidence);
      }
    }
  }
  return fail > 0 ? 1 : 0;
}

}  // namespace

void AddPolicyVerifyCommand(CLI::App& policy, int* exit_code) {
  auto a = std::make_shared<VerifyArgs>();
  CLI::App* cmd = policy.add_subcommand(
      "verify",
      "Run the policy's validation checklist against a live deployment and write the verdicts "
      "into DIR/policy.yaml and its page");
  cmd->add_option("FILE", a->file, "The policy YAML")->required()->check(CLI::ExistingFile);
  cmd->add_option("--target", a->target,
                  "The deployment's OpenAI-compatible base URL (an engine or a gateway)")
      ->required();
  cmd->add_option("--out", a->out, "Directory for policy.yaml, its page and the runs")
      ->capture_default_str()
      ->check(kNonEmptyPath);
  cmd->add_option("--scenario", a->scenario,
                  "The workload scenario (default: the policy's workload.scenario)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--model", a->model, "The model to ask for (default: the first of /v1/models)");
  cmd->add_option("--api-key", a->api_key, "Sent as Authorization: Bearer KEY");
  cmd->add_option("--metrics-url", a->metrics_urls,
                  "The engines' base URLs whose /metrics to read (behind a gateway); repeatable");
  cmd->add_option("--baseline-s", a->baseline_s, "Length of the replica baseline, seconds")
      ->check(FiniteIn(1.0, 3600.0, /*lo_open=*/false))
      ->capture_default_str();
  cmd->add_option("--burst-s", a->burst_s,
                  "Length of the burst, seconds (at most workload.burst_duration_s)")
      ->check(FiniteIn(1.0, 3600.0, /*lo_open=*/false))
      ->capture_default_str();
  cmd->add_option("--replay-s", a->replay_s, "The replay's arrival span at most, seconds")
      ->check(FiniteIn(1.0, 86400.0, /*lo_open=*/false))
      ->capture_default_str();
  cmd->add_option("--only", a->only,
                  "Run only these tests (baseline, burst, storm, disconnect, replay; "
                  "comma-separated); the other items keep their verdicts")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->check(CLI::IsMember(kTests));
  cmd->add_flag("--no-progress", a->no_progress, "No progress line, even on a terminal");
  cmd->callback([a, exit_code] { *exit_code = RunPolicyVerify(*a); });
}

}  // namespace spillway::app
