// Shared prompt prefixes on the workload side: a class's `shared_prefix_tokens`, prompts asked
// again (distinct_prompts), a Mooncake trace's hash_ids, and the PromptSegments arrivals carry
// to the engine's prefix caching.

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "sched/request.h"
#include "workload/arrivals.h"
#include "workload/scenario.h"
#include "workload/trace_reader.h"
#include "workload/workload_test_util.h"

namespace spillway {
namespace {

using testing_util::TempDir;
using workload_test::LoadError;

const std::string kMooncakeSynthetic =
    std::string(SPILLWAY_SHARED_DIR) + "/traces/mooncake_synthetic_trace.jsonl";

/// A Poisson scenario (50 req/s for 20 s) with the given `classes:` list.
Scenario PrefixScenario(const std::string& classes) {
  return LoadScenarioFromString(
      "name: p\narrival: {process: poisson, rate: 50, duration_s: 20}\nclasses:\n" + classes,
      "p.yaml");
}

std::int64_t CeilDiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

TEST(SharedPrefixLoaderTest, ParsesTheKeyWithADefaultOfZero) {
  const Scenario s = PrefixScenario(
      "  - {name: a, prompt_tokens: 10, output_tokens: 5, shared_prefix_tokens: 2048}\n"
      "  - {name: b, prompt_tokens: 10, output_tokens: 5, shared_prefix_tokens: 0}\n"
      "  - {name: c, prompt_tokens: 10, output_tokens: 5}\n");
  EXPECT_EQ(s.classes[0].shared_prefix_tokens, 2048);
  EXPECT_EQ(s.classes[1].shared_prefix_tokens, 0);
  EXPECT_EQ(s.classes[2].shared_prefix_tokens, 0);
}

TEST(SharedPrefixLoaderTest, RefusedInATraceClass) {
  const TempDir dir;
  dir.Write("t.jsonl", R"({"timestamp": 0, "input_length": 5, "output_length": 1})"
                       "\n");
  const std::string message = LoadError(
      "name: t\narrival: {process: trace, file: t.jsonl}\n"
      "classes: [{name: c, shared_prefix_tokens: 64}]\n",
      dir.path().string());
  EXPECT_NE(message.find("test.yaml:3: classes[0].shared_prefix_tokens: a trace's requests take "
                         "their shared prefixes from its hash_ids"),
            std::string::npos)
      << message;
}

TEST(SharedPrefixArrivalsTest, AClassSharesOneSystemPromptObject) {
  const Scenario s = PrefixScenario(
      "  - name: chat\n"
      "    prompt_tokens: {dist: uniform, min: 1, max: 3000}\n"
      "    output_tokens: 5\n"
      "    shared_prefix_tokens: 1000\n"
      "  - {name: plain, prompt_tokens: 10, output_tokens: 5}\n");
  const std::vector<Arrival> arrivals = GenerateArrivals(s, 7);
  const PromptSegments* system = nullptr;
  std::int64_t chats = 0;
  for (const Arrival& a : arrivals) {
    if (a.class_index == 1) {
      EXPECT_EQ(a.prompt_segments, nullptr) << "a class without a system prompt shares nothing";
      continue;
    }
    ++chats;
    ASSERT_NE(a.prompt_segments, nullptr);
    if (system == nullptr) {
      system = a.prompt_segments.get();
    }
    // One object for the class, whatever the prompt's length (shorter prompts have its start).
    EXPECT_EQ(a.prompt_segments.get(), system);
  }
  EXPECT_GT(chats, 300);
  ASSERT_NE(system, nullptr);
  EXPECT_EQ(system->segment_tokens, 1000);
  ASSERT_EQ(system->ids.size(), 1u);

  // The id depends on the class's name only: the same in another run and seed, another for
  // another name.
  const std::vector<Arrival> again = GenerateArrivals(s, 8);
  EXPECT_EQ(again.front().prompt_segments->ids, system->ids);
  const Scenario renamed = PrefixScenario(
      "  - {name: chat2, prompt_tokens: 10, output_tokens: 5, shared_prefix_tokens: 1000}\n");
  EXPECT_NE(GenerateArrivals(renamed, 7).front().prompt_segments->ids, system->ids);
}

/// The segments of each prompt asked (by prompt id) in `arrivals`, checking that every ask of
/// the same prompt carries the same object.
std::map<std::uint64_t, const PromptSegments*> SegmentsByPrompt(
    const std::vector<Arrival>& arrivals) {
  std::map<std::uint64_t, const PromptSegments*> by_prompt;
  for (const Arrival& a : arrivals) {
    EXPECT_NE(a.prompt_id, 0u);
    EXPECT_NE(a.prompt_segments, nullptr);
    const auto [it, first] = by_prompt.emplace(a.prompt_id, a.prompt_segments.get());
    EXPECT_EQ(it->second, a.prompt_segments.get()) << "one object per prompt asked again";
  }
  return by_prompt;
}

TEST(SharedPrefixArrivalsTest, APromptAskedAgainSharesAllOfIt) {
  const Scenario s = PrefixScenario(
      "  - name: faq\n"
      "    prompt_tokens: {dist: uniform, min: 1, max: 3000}\n"
      "    output_tokens: 5\n"
      "    distinct_prompts: 6\n");
  const std::vector<Arrival> arrivals = GenerateArrivals(s, 3);
  const auto by_prompt = SegmentsByPrompt(arrivals);
  EXPECT_EQ(by_prompt.size(), 6u);
  std::set<std::uint64_t> ids;
  for (const Arrival& a : arrivals) {
    // One segment, the whole prompt.
    ASSERT_EQ(a.prompt_segments->segment_tokens, a.prompt_tokens);
    ASSERT_EQ(a.prompt_segments->ids.size(), 1u);
    ids.insert(a.prompt_segments->ids.front());
  }
  EXPECT_EQ(ids.size(), 6u) << "each prompt its own id";
}

TEST(SharedPrefixArrivalsTest, APromptAskedAgainBeginsWithItsClassSystemPrompt) {
  const Scenario s = PrefixScenario(
      "  - name: faq\n"
      "    prompt_tokens: {dist: uniform, min: 50, max: 1000}\n"
      "    output_tokens: 5\n"
      "    distinct_prompts: 40\n"
      "    shared_prefix_tokens: 100\n"
      "  - {name: chat, prompt_tokens: 10, output_tokens: 5, shared_prefix_tokens: 100}\n");
  std::vector<Arrival> faq;
  const PromptSegments* chat = nullptr;  // the same-length system prompt of another class
  const std::vector<Arrival> arrivals = GenerateArrivals(s, 5);
  for (const Arrival& a : arrivals) {
    if (a.class_index == 0) {
      faq.push_back(a);
    } else {
      chat = a.prompt_segments.get();  // outlives the loop: `arrivals` holds it
    }
  }
  const auto by_prompt = SegmentsByPrompt(faq);
  EXPECT_GT(by_prompt.size(), 30u);
  const std::uint64_t system_id = faq.front().prompt_segments->ids.front();
  ASSERT_NE(chat, nullptr);
  EXPECT_NE(chat->ids.front(), system_id) << "each class its own system prompt";
  bool saw_short = false;
  for (const Arrival& a : faq) {
    const PromptSegments& p = *a.prompt_segments;
    ASSERT_EQ(p.segment_tokens, 100);
    ASSERT_EQ(p.ids.front(), system_id) << "the class's system prompt first";
    // The rest of the prompt in segments of the system prompt's length, named by the prompt.
    ASSERT_EQ(static_cast<std::int64_t>(p.ids.size()), CeilDiv(a.prompt_tokens, 100));
    saw_short |= p.ids.size() == 1;
  }
  EXPECT_TRUE(saw_short) << "prompts within the system prompt are just its start";
}

TEST(SharedPrefixArrivalsTest, APromptOfTooManySystemPromptLengthsIsOneSegment) {
  const Scenario s = PrefixScenario(
      "  - {name: faq, prompt_tokens: 1000, output_tokens: 5, distinct_prompts: 3, "
      "shared_prefix_tokens: 10}\n");
  for (const Arrival& a : GenerateArrivals(s, 2)) {
    ASSERT_EQ(a.prompt_segments->segment_tokens, 1000);  // not 100 segments of 10
    ASSERT_EQ(a.prompt_segments->ids.size(), 1u);
  }
}

// ---- Traces ------------------------------------------------------------------------------

TEST(SharedPrefixTraceTest, ReplayedCopiesShareTheRecordsSegments) {
  const TempDir dir;
  const std::string file =
      dir.Write("t.jsonl",
                R"({"timestamp": 0, "input_length": 1500, "output_length": 4, "hash_ids": [0, 1, 2]}
{"timestamp": 1000, "input_length": 700, "output_length": 4, "hash_ids": [0, 9]}
{"timestamp": 2000, "input_length": 30, "output_length": 4}
)");
  const Scenario s = LoadScenarioFromString(
      "name: t\narrival: {process: trace, file: " + file + ", rate_multiplier: 3}\n", "t.yaml");
  const std::vector<Arrival> arrivals = GenerateArrivals(s, 4);
  ASSERT_EQ(arrivals.size(), 9u);
  std::map<std::int32_t, std::set<const PromptSegments*>> objects;  // by prompt_tokens
  for (const Arrival& a : arrivals) {
    objects[a.prompt_tokens].insert(a.prompt_segments.get());
  }
  ASSERT_EQ(objects[1500].size(), 1u);
  ASSERT_EQ(objects[700].size(), 1u);
  const PromptSegments* first = *objects[1500].begin();
  const PromptSegments* second = *objects[700].begin();
  EXPECT_EQ(first->segment_tokens, kMooncakeBlockTokens);
  EXPECT_EQ(first->ids, (std::vector<std::uint64_t>{0, 1, 2}));
  EXPECT_EQ(second->segment_tokens, 512);
  EXPECT_EQ(second->ids, (std::vector<std::uint64_t>{0, 9}));
  EXPECT_EQ(objects[30], (std::set<const PromptSegments*>{nullptr}));  // no hash_ids
}

TEST(SharedPrefixTraceTest, MooncakeSyntheticTraceFirstRecord) {
  if (!std::filesystem::exists(kMooncakeSynthetic)) {
    GTEST_SKIP() << "trace not present: " << kMooncakeSynthetic;
  }
  const std::vector<TraceRecord> records =
      ReadTrace(kMooncakeSynthetic, TraceFormat::kMooncakeJsonl);
  ASSERT_EQ(records.size(), 3993u);  // ../shared/traces/README.md
  const TraceRecord& r = records.front();
  EXPECT_EQ(r.prompt_tokens, 40160);
  ASSERT_EQ(r.hash_ids.size(), 79u);  // ceil(40160 / 512)
  for (std::size_t i = 0; i < r.hash_ids.size(); ++i) {
    ASSERT_EQ(r.hash_ids[i], i);
  }
}

}  // namespace
}  // namespace spillway
