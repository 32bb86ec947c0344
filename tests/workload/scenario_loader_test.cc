#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "config/yaml_reader.h"
#include "workload/scenario.h"
#include "workload/workload_test_util.h"

namespace spillway {
namespace {

using config::ConfigError;
using testing_util::TempDir;

using workload_test::kAzureTrace;
using workload_test::kSourceDir;

using workload_test::LoadError;

constexpr char kMinimal[] = R"(name: minimal
arrival: {process: poisson, rate: 10, duration_s: 5}
classes:
  - {name: only, prompt_tokens: 10, output_tokens: 20}
)";

TEST(ScenarioLoaderTest, LoadsSeedBurst) {
  const Scenario s = LoadScenario(kSourceDir + "/scenarios/seed-burst.yaml");
  EXPECT_EQ(s.name, "seed-burst");
  EXPECT_EQ(s.seed, 1u);
  EXPECT_EQ(s.arrival.kind, ArrivalProcess::Kind::kSteps);
  ASSERT_EQ(s.arrival.steps.size(), 3u);
  const double rates[] = {8, 30, 8};
  const double durations[] = {30, 60, 60};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(s.arrival.steps[i].rate_rps, rates[i]);
    EXPECT_DOUBLE_EQ(s.arrival.steps[i].duration_s, durations[i]);
  }
  EXPECT_DOUBLE_EQ(s.ArrivalSpan(), 150);

  ASSERT_EQ(s.classes.size(), 3u);
  const char* names[] = {"chat", "coding", "document"};
  const double shares[] = {0.7, 0.2, 0.1};
  const int prompts[] = {32, 128, 512};
  const int outputs[] = {64, 128, 128};
  for (std::size_t i = 0; i < 3; ++i) {
    const RequestClass& c = s.classes[i];
    EXPECT_EQ(c.name, names[i]);
    EXPECT_DOUBLE_EQ(c.share, shares[i]);
    EXPECT_EQ(c.prompt_tokens.kind, TokenDist::Kind::kFixed);
    EXPECT_EQ(c.prompt_tokens.value, prompts[i]);
    EXPECT_EQ(c.output_tokens.value, outputs[i]);
    EXPECT_DOUBLE_EQ(c.output_tokens.Mean(), outputs[i]);
    EXPECT_EQ(c.priority, 0);
    EXPECT_TRUE(c.priority_given) << "the file says priority: 0";
    EXPECT_EQ(c.tenant, "default");
  }

  EXPECT_DOUBLE_EQ(s.client.ttft_timeout_s, 2.0);
  EXPECT_DOUBLE_EQ(s.client.total_timeout_s, 10.0);
  EXPECT_EQ(s.client.retry, RetryPolicy::kNone);
  EXPECT_EQ(s.client.max_attempts, 1);
  EXPECT_EQ(s.slo.ttft_s, 1.0);
  EXPECT_EQ(s.slo.tpot_s, 0.035);
  EXPECT_FALSE(s.slo.e2e_s.has_value());
  EXPECT_EQ(s.objectives.e2e_p99_s, 5.0);
  EXPECT_FALSE(s.objectives.ttft_p95_s.has_value());
  EXPECT_EQ(s.settings.profile, "seed-a100-7b");
  EXPECT_EQ(s.settings.slo_budgets, true);
  EXPECT_FALSE(s.settings.max_num_seqs.has_value());
  EXPECT_FALSE(s.settings.max_num_queued_reqs.has_value());
  EXPECT_TRUE(s.admission.tenants.empty());
}

TEST(ScenarioLoaderTest, LoadsAzureConvFromTheSharedTrace) {
  if (!std::filesystem::exists(kAzureTrace)) {
    GTEST_SKIP() << "trace not present: " << kAzureTrace;
  }
  const Scenario s = LoadScenario(kSourceDir + "/scenarios/azure-conv.yaml");
  EXPECT_EQ(s.arrival.kind, ArrivalProcess::Kind::kTrace);
  EXPECT_EQ(s.arrival.trace_format, TraceFormat::kAzureCsv);
  EXPECT_TRUE(std::filesystem::equivalent(s.arrival.trace_file, kAzureTrace));
  EXPECT_DOUBLE_EQ(s.arrival.trace_start_s, 600);
  EXPECT_DOUBLE_EQ(s.arrival.duration_s, 120);
  EXPECT_DOUBLE_EQ(s.arrival.time_scale, 1.0);
  EXPECT_DOUBLE_EQ(s.arrival.rate_multiplier, 1.0);
  EXPECT_DOUBLE_EQ(s.ArrivalSpan(), 120);
  ASSERT_EQ(s.classes.size(), 1u);
  EXPECT_EQ(s.classes[0].tenant, "default");
  EXPECT_DOUBLE_EQ(s.client.ttft_timeout_s, 10);
  EXPECT_DOUBLE_EQ(s.client.total_timeout_s, 120);
  EXPECT_EQ(s.slo.ttft_s, 2.0);
  EXPECT_EQ(s.slo.tpot_s, 0.1);
  EXPECT_EQ(s.settings.profile, "h100-llama3-8b");
}

TEST(ScenarioLoaderTest, TheDocumentedExampleLoads) {
  std::ifstream in(kSourceDir + "/docs/scenarios.md");
  ASSERT_TRUE(in) << "docs/scenarios.md missing";
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t section = doc.find("## A complete example");
  ASSERT_NE(section, std::string::npos);
  const std::size_t begin = doc.find("```yaml\n", section) + 8;
  const std::size_t end = doc.find("```", begin);
  const Scenario s = LoadScenarioFromString(doc.substr(begin, end - begin), "scenarios.md");
  ASSERT_EQ(s.classes.size(), 3u);
  EXPECT_EQ(s.classes[2].prompt_tokens.kind, TokenDist::Kind::kLognormal);
  EXPECT_EQ(s.client.retry, RetryPolicy::kBackoffJitter);
  EXPECT_EQ(s.admission.tenants.size(), 1u);
}

TEST(ScenarioLoaderTest, AppliesDefaults) {
  const Scenario s = LoadScenarioFromString(kMinimal, "test.yaml");
  EXPECT_EQ(s.file, "test.yaml");
  EXPECT_EQ(s.seed, 1u);
  EXPECT_EQ(s.arrival.kind, ArrivalProcess::Kind::kPoisson);
  EXPECT_DOUBLE_EQ(s.arrival.rate_rps, 10);
  EXPECT_DOUBLE_EQ(s.ArrivalSpan(), 5);
  EXPECT_DOUBLE_EQ(s.classes[0].share, 1.0);
  EXPECT_EQ(s.classes[0].priority, 0);
  EXPECT_FALSE(s.classes[0].priority_given);
  EXPECT_EQ(s.classes[0].tenant, "default");
  EXPECT_EQ(s.client.ttft_timeout_s, kNever);
  EXPECT_EQ(s.client.total_timeout_s, kNever);
  EXPECT_EQ(s.client.retry, RetryPolicy::kNone);
  EXPECT_FALSE(s.slo.ttft_s || s.slo.tpot_s || s.slo.e2e_s);
  EXPECT_FALSE(s.settings.profile.has_value());
}

TEST(ScenarioLoaderTest, ParsesTokenDistributions) {
  const Scenario s = LoadScenarioFromString(R"(name: dists
seed: 42
arrival: {process: poisson, rate: 1, duration_s: 1}
classes:
  - name: a
    prompt_tokens: {dist: uniform, min: 10, max: 30}
    output_tokens: {dist: lognormal, mean: 200, cv: 0.5, max: 2000}
  - name: b
    prompt_tokens: {dist: fixed, value: 7}
    output_tokens: {dist: lognormal, mean: 50, cv: 1, min: 5, max: 500}
)",
                                            "test.yaml");
  EXPECT_EQ(s.seed, 42u);
  const TokenDist& u = s.classes[0].prompt_tokens;
  EXPECT_EQ(u.kind, TokenDist::Kind::kUniform);
  EXPECT_EQ(u.min, 10);
  EXPECT_EQ(u.max, 30);
  EXPECT_DOUBLE_EQ(u.Mean(), 20);
  const TokenDist& ln = s.classes[0].output_tokens;
  EXPECT_EQ(ln.kind, TokenDist::Kind::kLognormal);
  EXPECT_DOUBLE_EQ(ln.mean, 200);
  EXPECT_DOUBLE_EQ(ln.cv, 0.5);
  EXPECT_EQ(ln.min, 1);
  EXPECT_EQ(ln.max, 2000);
  EXPECT_DOUBLE_EQ(ln.Mean(), 200);
  EXPECT_EQ(s.classes[1].prompt_tokens.kind, TokenDist::Kind::kFixed);
  EXPECT_EQ(s.classes[1].prompt_tokens.value, 7);
  EXPECT_EQ(s.classes[1].output_tokens.min, 5);
}

TEST(ScenarioLoaderTest, ParsesRetryPolicies) {
  const std::string base = R"(name: r
arrival: {process: poisson, rate: 1, duration_s: 1}
classes: [{name: a, prompt_tokens: 1, output_tokens: 1}]
)";
  const Scenario fixed = LoadScenarioFromString(
      base + "client: {retry: {policy: fixed, max_attempts: 3, interval_s: 0}}\n", "t.yaml");
  EXPECT_EQ(fixed.client.retry, RetryPolicy::kFixed);
  EXPECT_EQ(fixed.client.max_attempts, 3);
  EXPECT_DOUBLE_EQ(fixed.client.retry_interval_s, 0);

  const Scenario backoff = LoadScenarioFromString(base + R"(client:
  ttft_timeout_s: 2
  total_timeout_s: 10
  retry:
    policy: backoff-jitter
    max_attempts: 4
    base_s: 0.5
    max_backoff_s: 8
    jitter_s: 0.25
    budget: 0.2
    use_retry_after: false
)",
                                                  "t.yaml");
  const ClientBehaviour& c = backoff.client;
  EXPECT_EQ(c.retry, RetryPolicy::kBackoffJitter);
  EXPECT_EQ(c.max_attempts, 4);
  EXPECT_DOUBLE_EQ(c.backoff_base_s, 0.5);
  EXPECT_DOUBLE_EQ(c.backoff_max_s, 8);
  EXPECT_DOUBLE_EQ(c.jitter_s, 0.25);
  EXPECT_DOUBLE_EQ(c.retry_budget, 0.2);
  EXPECT_FALSE(c.use_retry_after);
}

TEST(ScenarioLoaderTest, ParsesEngineAndAdmission) {
  const Scenario s = LoadScenarioFromString(R"(name: e
arrival: {process: poisson, rate: 1, duration_s: 1}
classes: [{name: a, prompt_tokens: 1, output_tokens: 1, priority: 2, tenant: acme}]
slo: {ttft_s: 1, tpot_s: 0.05, e2e_s: 4}
objectives: {ttft_p95_s: 1, tpot_p95_s: 0.05, e2e_p99_s: 5, goodput_fraction: 0.99}
engine:
  profile: p
  max_num_seqs: 64
  max_num_batched_tokens: 2048
  slo_budgets: true
  slo_budget_context_tokens: 1024
  enable_chunked_prefill: true
  scheduling: priority
  priority_aging_s: 5
  max_preemptions: 0
  num_gpu_blocks: 1000
  propagate_cancellation: false
admission:
  max_num_queued_reqs: 32
  max_num_queued_tokens: 100000
  kv_headroom: 0.85
  queue_deadline: true
  degrade_max_tokens: 64
  tenants:
    - {name: acme, rate_rps: 5, burst: 10}
    - {name: other, rate_rps: 1}
)",
                                            "t.yaml");
  EXPECT_EQ(s.classes[0].priority, 2);
  EXPECT_TRUE(s.classes[0].priority_given);
  EXPECT_EQ(s.classes[0].tenant, "acme");
  EXPECT_EQ(s.slo.e2e_s, 4.0);
  EXPECT_EQ(s.objectives.goodput_fraction, 0.99);
  EXPECT_EQ(s.settings.max_num_seqs, 64);
  EXPECT_EQ(s.settings.max_num_batched_tokens, 2048);
  EXPECT_EQ(s.settings.slo_budget_context_tokens, 1024);
  EXPECT_EQ(s.settings.enable_chunked_prefill, true);
  EXPECT_EQ(s.settings.scheduling, "priority");
  EXPECT_EQ(s.settings.priority_aging_s, 5.0);
  EXPECT_EQ(s.settings.max_preemptions, 0);
  EXPECT_EQ(s.settings.num_gpu_blocks, 1000);
  EXPECT_EQ(s.settings.propagate_cancellation, false);
  EXPECT_EQ(s.settings.max_num_queued_reqs, 32);
  EXPECT_EQ(s.settings.max_num_queued_tokens, 100000);
  EXPECT_EQ(s.settings.kv_headroom, 0.85);
  EXPECT_EQ(s.settings.queue_deadline, true);
  EXPECT_EQ(s.settings.degrade_max_tokens, 64);
  ASSERT_EQ(s.admission.tenants.size(), 2u);
  EXPECT_EQ(s.admission.tenants[0].name, "acme");
  EXPECT_DOUBLE_EQ(s.admission.tenants[0].rate_rps, 5);
  EXPECT_DOUBLE_EQ(s.admission.tenants[0].burst, 10);
  EXPECT_DOUBLE_EQ(s.admission.tenants[1].burst, 1);
}

TEST(ScenarioLoaderTest, ResolvesTracePathAgainstTheScenarioDirectory) {
  const TempDir dir;
  std::filesystem::create_directories(dir.path() / "traces");
  dir.Write("traces/t.jsonl", R"({"timestamp": 0, "input_length": 5, "output_length": 6})");
  const std::string scenario = dir.Write("s.yaml", R"(name: t
arrival: {process: trace, file: traces/t.jsonl}
)");
  const Scenario s = LoadScenario(scenario);
  EXPECT_TRUE(std::filesystem::equivalent(s.arrival.trace_file, dir.path() / "traces/t.jsonl"));
  EXPECT_EQ(s.arrival.trace_format, TraceFormat::kMooncakeJsonl);  // guessed from .jsonl
  EXPECT_TRUE(s.classes.empty());
  EXPECT_DOUBLE_EQ(s.arrival.duration_s, 0);
  EXPECT_DOUBLE_EQ(s.ArrivalSpan(), 0);  // one record: the whole trace spans 0 s
}

// ---- Errors: each names the file, the line, the field path and the bad value ------------

struct ErrorCase {
  const char* label;
  std::string yaml;
  std::vector<std::string> expected;  ///< substrings of the message
};

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.label; }

class ScenarioErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ScenarioErrorTest, NamesFileLineFieldAndValue) {
  const std::string message = LoadError(GetParam().yaml);
  ASSERT_FALSE(message.empty()) << "expected an error";
  for (const std::string& part : GetParam().expected) {
    EXPECT_NE(message.find(part), std::string::npos) << "missing '" << part << "' in: " << message;
  }
}

const std::string kHead = "name: x\narrival: {process: poisson, rate: 1, duration_s: 1}\n";
const std::string kClasses = "classes: [{name: a, prompt_tokens: 1, output_tokens: 1}]\n";

INSTANTIATE_TEST_SUITE_P(
    Errors, ScenarioErrorTest,
    ::testing::Values(
        ErrorCase{"NegativeStepRate",
                  "name: x\narrival:\n  process: steps\n  steps:\n    - {rate: 8, duration_s: 30}\n"
                  "    - rate: -3\n      duration_s: 5\n" +
                      kClasses,
                  {"test.yaml:6: arrival.steps[1].rate: must be > 0, got '-3'"}},
        ErrorCase{
            "NegativePriority",
            kHead + "classes: [{name: a, prompt_tokens: 1, output_tokens: 1, priority: -5}]\n",
            {"test.yaml:3: classes[0].priority", "'-5'"}},
        ErrorCase{"NegativeSharedPrefix",
                  kHead + "classes: [{name: a, prompt_tokens: 1, output_tokens: 1, "
                          "shared_prefix_tokens: -1}]\n",
                  {"test.yaml:3: classes[0].shared_prefix_tokens: must be >= 0", "'-1'"}},
        ErrorCase{"FractionalSharedPrefix",
                  kHead + "classes: [{name: a, prompt_tokens: 1, output_tokens: 1, "
                          "shared_prefix_tokens: 10.5}]\n",
                  {"test.yaml:3: classes[0].shared_prefix_tokens: must be an integer", "'10.5'"}},
        ErrorCase{"TextSharedPrefix",
                  kHead + "classes: [{name: a, prompt_tokens: 1, output_tokens: 1, "
                          "shared_prefix_tokens: long}]\n",
                  {"test.yaml:3: classes[0].shared_prefix_tokens", "'long'"}},
        ErrorCase{
            "EmptyFairnessId",
            kHead + "classes: [{name: a, prompt_tokens: 1, output_tokens: 1, fairness_id: ''}]\n",
            {"test.yaml:3: classes[0].fairness_id"}},
        ErrorCase{"LongFairnessId",
                  kHead + "classes: [{name: a, prompt_tokens: 1, output_tokens: 1, fairness_id: " +
                      std::string(257, 'x') + "}]\n",
                  {"test.yaml:3: classes[0].fairness_id: must be 1 to 256 printable ASCII"}},
        ErrorCase{"UnknownTopLevelKey",
                  kHead + kClasses + "clients: {}\n",
                  {"test.yaml:4: clients: unknown field", "got a map"}},
        ErrorCase{"UnknownClassKey",
                  kHead + "classes:\n  - name: a\n    prompt_tokens: 1\n    output_tokens: 1\n"
                          "    sahre: 0.5\n",
                  {"test.yaml:7: classes[0].sahre: unknown field", "got '0.5'"}},
        ErrorCase{
            "KeyOfAnotherProcess",
            "name: x\narrival: {process: steps, rate: 3, steps: [{rate: 1, duration_s: 1}]}\n" +
                kClasses,
            {"test.yaml:2: arrival.rate: unknown field (known: process, steps)", "'3'"}},
        ErrorCase{"BadProcess",
                  "name: x\narrival:\n  process: flood\n" + kClasses,
                  {"test.yaml:3: arrival.process: must be one of: poisson, steps, burst, trace",
                   "got 'flood'"}},
        ErrorCase{"BurstWithoutCount",
                  "name: x\narrival:\n  process: burst\n  duration_s: 5\n" + kClasses,
                  {"test.yaml:3: arrival: missing required field 'count'"}},
        ErrorCase{"BurstCountZero",
                  "name: x\narrival: {process: burst, count: 0, duration_s: 5}\n" + kClasses,
                  {"test.yaml:2: arrival.count: must be >= 1, got '0'"}},
        ErrorCase{"BadRetryPolicy",
                  kHead + kClasses + "client:\n  retry:\n    policy: exponential\n",
                  {"test.yaml:6: client.retry.policy: must be one of: none, fixed, "
                   "backoff-jitter, got 'exponential'"}},
        ErrorCase{"BadScheduling",
                  kHead + kClasses + "engine:\n  scheduling: lifo\n",
                  {"test.yaml:5: engine.scheduling: must be one of: fcfs, priority, got 'lifo'"}},
        ErrorCase{"NonIntegerAttempts",
                  kHead + kClasses + "client:\n  retry: {policy: fixed, max_attempts: 2.5}\n",
                  {"test.yaml:5: client.retry.max_attempts: must be an integer, got '2.5'"}},
        ErrorCase{"ZeroAttempts",
                  kHead + kClasses + "client:\n  retry: {policy: fixed, max_attempts: 0}\n",
                  {"test.yaml:5: client.retry.max_attempts: must be >= 1, got '0'"}},
        ErrorCase{"NonIntegerEngineInt",
                  kHead + kClasses + "engine: {max_num_seqs: 8.5}\n",
                  {"test.yaml:4: engine.max_num_seqs: must be an integer, got '8.5'"}},
        ErrorCase{"UniformMinAboveMax",
                  kHead + "classes:\n  - name: a\n    prompt_tokens: {dist: uniform, min: 50, "
                          "max: 10}\n    output_tokens: 1\n",
                  {"test.yaml:5: classes[0].prompt_tokens.min: must be <= max (10), got '50'"}},
        ErrorCase{"LognormalMeanOutsideBounds",
                  kHead + "classes:\n  - name: a\n    prompt_tokens: 1\n    output_tokens:\n"
                          "      {dist: lognormal, mean: 900, cv: 1, max: 500}\n",
                  {"test.yaml:7: classes[0].output_tokens.mean: must be within [min, max] = "
                   "[1, 500], got '900'"}},
        ErrorCase{"ZeroTokens",
                  kHead + "classes:\n  - {name: a, prompt_tokens: 0, output_tokens: 1}\n",
                  {"test.yaml:4: classes[0].prompt_tokens: must be >= 1, got '0'"}},
        ErrorCase{"ZeroShare",
                  kHead + "classes:\n  - {name: a, share: 0, prompt_tokens: 1, output_tokens: 1}\n",
                  {"test.yaml:4: classes[0].share: must be > 0, got '0'"}},
        ErrorCase{"DuplicateClass",
                  kHead + "classes:\n  - {name: a, prompt_tokens: 1, output_tokens: 1}\n"
                          "  - {name: a, prompt_tokens: 1, output_tokens: 1}\n",
                  {"test.yaml:5: classes[1].name: duplicate class name, got 'a'"}},
        ErrorCase{"MissingClasses",
                  kHead,
                  {"test.yaml:1: (top level): missing required field 'classes'", "got a map"}},
        ErrorCase{"MissingRate",
                  "name: x\narrival:\n  process: poisson\n  duration_s: 5\n" + kClasses,
                  {"test.yaml:3: arrival: missing required field 'rate', got a map"}},
        ErrorCase{"TtftTimeoutAboveTotal",
                  kHead + kClasses + "client:\n  total_timeout_s: 1\n  ttft_timeout_s: 2\n",
                  {"test.yaml:6: client.ttft_timeout_s: must be <= total_timeout_s (1), got '2'"}},
        ErrorCase{"NegativeTimeout",
                  kHead + kClasses + "client: {total_timeout_s: -1}\n",
                  {"test.yaml:4: client.total_timeout_s: must be > 0, got '-1'"}},
        ErrorCase{"NotANumber",
                  "name: x\narrival: {process: poisson, rate: fast, duration_s: 1}\n" + kClasses,
                  {"test.yaml:2: arrival.rate: must be a number, got 'fast'"}},
        ErrorCase{"NotABool",
                  kHead + kClasses + "engine:\n  slo_budgets: maybe\n",
                  {"test.yaml:5: engine.slo_budgets: must be true or false, got 'maybe'"}},
        ErrorCase{
            "RequestTimeoutOutOfRange",
            kHead + kClasses + "timeouts:\n  request_timeout_s: 0\n",
            {"test.yaml:5: timeouts.request_timeout_s: must be a number in (0, 1e+06]", "got '0'"}},
        ErrorCase{"KvHeadroomOutOfRange",
                  kHead + kClasses + "admission:\n  kv_headroom: 1.5\n",
                  {"test.yaml:5: admission.kv_headroom: must be a number in (0, 1], got '1.5'"}},
        ErrorCase{"TenantBurstBelowOne",
                  kHead + kClasses +
                      "admission:\n  tenants:\n    - {name: t, rate_rps: 1, "
                      "burst: 0.5}\n",
                  {"test.yaml:6: admission.tenants[0].burst: must be >= 1", "got '0.5'"}},
        ErrorCase{"TooManyArrivals",
                  "name: x\narrival: {process: poisson, rate: 1e6, duration_s: 3600}\n" + kClasses,
                  {"test.yaml:2: arrival.rate: asks for about 3600000000 arrivals", "'1e6'"}},
        ErrorCase{"MissingTraceFile",
                  "name: x\narrival:\n  process: trace\n  file: no/such/trace.csv\n",
                  {"test.yaml:4: arrival.file: trace file not found (tried no/such/trace.csv",
                   "got 'no/such/trace.csv'"}},
        ErrorCase{
            "InvalidYaml", "name: x\narrival: {process: poisson\n", {"test.yaml:", "invalid YAML"}},
        ErrorCase{"NotAMap", "- just\n- a list\n", {"test.yaml:1: (top level): ", "a list"}}),
    [](const ::testing::TestParamInfo<ErrorCase>& info) { return info.param.label; });

TEST(ScenarioLoaderTest, MissingTraceErrorNamesTheResolvedPathTried) {
  const TempDir dir;
  const std::string message =
      LoadError("name: x\narrival: {process: trace, file: gone.csv}\n", dir.path().string());
  EXPECT_NE(message.find("arrival.file"), std::string::npos) << message;
  EXPECT_NE(message.find((dir.path() / "gone.csv").string()), std::string::npos) << message;
}

TEST(ScenarioLoaderTest, MissingFileNamesIt) {
  try {
    LoadScenario("/nonexistent/dir/x.yaml");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/x.yaml"), std::string::npos);
  }
}

TEST(ScenarioLoaderTest, LoadScenarioErrorsNameThePath) {
  const TempDir dir;
  const std::string path = dir.Write("bad.yaml", kHead + kClasses + "seed: -4\n");
  try {
    LoadScenario(path);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":4: seed: must be >= 0, got '-4'"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace spillway
