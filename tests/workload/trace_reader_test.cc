#include "workload/trace_reader.h"

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "config/yaml_reader.h"
#include "workload/arrivals.h"
#include "workload/workload_test_util.h"

namespace spillway {
namespace {

using config::ConfigError;
using testing_util::TempDir;

using workload_test::kAzureTrace;
const std::string kHeader = "TIMESTAMP,ContextTokens,GeneratedTokens\n";

/// The message of the ConfigError ReadTrace throws ("" when it reads).
std::string ReadError(const std::string& path, TraceFormat format) {
  try {
    ReadTrace(path, format);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(TraceReaderTest, AzureCsvAcrossDayMonthYearAndLeapDay) {
  const TempDir dir;
  const std::string path = dir.Write("t.csv", kHeader +
                                                  "2023-12-31 23:59:59.5000000,100,10\r\n"
                                                  "2024-01-01 00:00:00.2500000,200,20\r\n"
                                                  "\r\n"
                                                  "2024-01-01 00:00:01,300,30\r\n"
                                                  "2024-02-28 23:59:59.5,400,40\n"
                                                  "2024-03-01 00:00:00.5,500,50");
  const std::vector<TraceRecord> r = ReadTrace(path, TraceFormat::kAzureCsv);
  ASSERT_EQ(r.size(), 5u);
  EXPECT_DOUBLE_EQ(r[0].time_s, 0);
  EXPECT_NEAR(r[1].time_s, 0.75, 1e-9);  // across midnight, month and year
  EXPECT_NEAR(r[2].time_s, 1.5, 1e-9);   // no fraction
  // 2024-01-01 00:00:00 + 58 days 23:59:59 (Feb has 29 days in 2024: +1 day to Mar 1).
  const double feb28 = 0.5 + 58 * 86400.0 + 86399.5;
  EXPECT_NEAR(r[3].time_s, feb28, 1e-6);
  EXPECT_NEAR(r[4].time_s, feb28 + 86401, 1e-6);  // Feb 29 exists in 2024
  EXPECT_EQ(r[0].prompt_tokens, 100);
  EXPECT_EQ(r[4].output_tokens, 50);
  EXPECT_TRUE(r[0].hash_ids.empty());  // Azure traces name no blocks
}

TEST(TraceReaderTest, SortsStablyAndRebasesToTheEarliestRecord) {
  const TempDir dir;
  const std::string path = dir.Write("t.csv", kHeader +
                                                  "2024-01-01 10:00:02.0,1,1\n"
                                                  "2024-01-01 10:00:01.0,2,1\n"
                                                  "2024-01-01 10:00:02.0,3,1\n"
                                                  "2024-01-01 10:00:00.9999999,4,1\n");
  const std::vector<TraceRecord> r = ReadTrace(path, TraceFormat::kAzureCsv);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].prompt_tokens, 4);
  EXPECT_DOUBLE_EQ(r[0].time_s, 0);
  EXPECT_EQ(r[1].prompt_tokens, 2);
  EXPECT_NEAR(r[1].time_s, 1e-7, 1e-12);
  EXPECT_EQ(r[2].prompt_tokens, 1);  // equal times keep file order
  EXPECT_EQ(r[3].prompt_tokens, 3);
}

TEST(TraceReaderTest, RealAzureConversationTrace) {
  if (!std::filesystem::exists(kAzureTrace)) {
    GTEST_SKIP() << "trace not present: " << kAzureTrace;
  }
  const std::vector<TraceRecord> r = ReadTrace(kAzureTrace, TraceFormat::kAzureCsv);
  // ../shared/traces/README.md: 19,366 rows from 18:15:46.68 to 19:14:08.40 (about 3,500 s),
  // mean rate 5.53 req/s, mean prompt 1155 and output 211 tokens.
  ASSERT_EQ(r.size(), 19'366u);
  EXPECT_EQ(r.front().prompt_tokens, 374);
  EXPECT_EQ(r.front().output_tokens, 44);
  EXPECT_NEAR(r.back().time_s, 3501.721937, 1e-6);
  EXPECT_NEAR(static_cast<double>(r.size()) / r.back().time_s, 5.53, 0.005);
  double prompt = 0, output = 0;
  for (const TraceRecord& rec : r) {
    prompt += rec.prompt_tokens;
    output += rec.output_tokens;
  }
  EXPECT_NEAR(prompt / static_cast<double>(r.size()), 1155, 1);
  EXPECT_NEAR(output / static_cast<double>(r.size()), 211, 1);
}

struct MalformedCase {
  const char* label;
  std::string text;
  std::string expected;  ///< after "FILE:"
};

void PrintTo(const MalformedCase& c, std::ostream* os) { *os << c.label; }

class MalformedAzureTest : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(MalformedAzureTest, NamesFileAndLine) {
  const TempDir dir;
  const std::string path = dir.Write("bad.csv", GetParam().text);
  const std::string message = ReadError(path, TraceFormat::kAzureCsv);
  EXPECT_NE(message.find(path + ":" + GetParam().expected), std::string::npos) << message;
}

const std::string kGood = "2024-01-01 00:00:00.0,1,1\n";

INSTANTIATE_TEST_SUITE_P(
    Errors, MalformedAzureTest,
    ::testing::Values(
        MalformedCase{"BadHeader", "time,prompt,output\n" + kGood, "1: expected the header"},
        MalformedCase{"BadTimestamp", kHeader + kGood + "2024-13-01 00:00:00.0,1,1\n",
                      "3: TIMESTAMP: expected 'YYYY-MM-DD HH:MM:SS.fffffff', got "
                      "'2024-13-01 00:00:00.0'"},
        MalformedCase{"NoSuchDay", kHeader + kGood + "2023-02-29 00:00:00.0,1,1\n", "3: TIMESTAMP"},
        MalformedCase{"NegativeField", kHeader + kGood + "2024-01-01 00:-1:00.0,1,1\n",
                      "3: TIMESTAMP"},
        MalformedCase{"MissingColumn", kHeader + kGood + "\n" + "2024-01-01 00:00:01.0,5\n",
                      "4: missing column"},
        MalformedCase{"ExtraColumn", kHeader + "2024-01-01 00:00:01.0,5,6,7\n",
                      "2: expected 3 columns"},
        MalformedCase{"ZeroTokens", kHeader + "2024-01-01 00:00:01.0,0,6\n",
                      "2: ContextTokens: must be a positive integer, got '0'"},
        MalformedCase{"NonIntegerTokens", kHeader + "2024-01-01 00:00:01.0,5,6.5\n",
                      "2: GeneratedTokens: must be a positive integer, got '6.5'"},
        MalformedCase{"NegativeTokens", kHeader + "2024-01-01 00:00:01.0,-5,6\n",
                      "2: ContextTokens: must be a positive integer, got '-5'"}),
    [](const ::testing::TestParamInfo<MalformedCase>& info) { return info.param.label; });

TEST(TraceReaderTest, EmptyOrMissingFile) {
  const TempDir dir;
  const std::string empty = dir.Write("empty.csv", kHeader);
  EXPECT_NE(ReadError(empty, TraceFormat::kAzureCsv).find(empty + ": trace has no records"),
            std::string::npos);
  const std::string missing = (dir.path() / "missing.csv").string();
  EXPECT_NE(ReadError(missing, TraceFormat::kAzureCsv).find(missing + ": cannot open"),
            std::string::npos);
}

TEST(TraceReaderTest, MooncakeJsonl) {
  const TempDir dir;
  const std::string path = dir.Write(
      "t.jsonl",
      R"({"timestamp": 0, "input_length": 1200, "output_length": 500, "hash_ids": [0, 1, 2]}
{"timestamp": 1500.5, "input_length": 12, "output_length": 3}

{"timestamp": 1000, "input_length": 7, "output_length": 2.0, "hash_ids": []}
)");
  const std::vector<TraceRecord> r = ReadTrace(path, TraceFormat::kMooncakeJsonl);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_DOUBLE_EQ(r[0].time_s, 0);
  EXPECT_EQ(r[0].prompt_tokens, 1200);
  EXPECT_EQ(r[0].output_tokens, 500);
  EXPECT_DOUBLE_EQ(r[1].time_s, 1.0);
  EXPECT_EQ(r[1].output_tokens, 2);
  EXPECT_NEAR(r[2].time_s, 1.5005, 1e-12);
  EXPECT_EQ(r[0].hash_ids, (std::vector<std::uint64_t>{0, 1, 2}));
  EXPECT_TRUE(r[1].hash_ids.empty());  // "hash_ids": []
  EXPECT_TRUE(r[2].hash_ids.empty());  // none given
}

class MalformedMooncakeTest : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(MalformedMooncakeTest, NamesFileAndLine) {
  const TempDir dir;
  const std::string path = dir.Write("bad.jsonl", GetParam().text);
  const std::string message = ReadError(path, TraceFormat::kMooncakeJsonl);
  EXPECT_NE(message.find(path + ":" + GetParam().expected), std::string::npos) << message;
}

const std::string kGoodJson = R"({"timestamp": 0, "input_length": 1, "output_length": 1})"
                              "\n";

INSTANTIATE_TEST_SUITE_P(
    Errors, MalformedMooncakeTest,
    ::testing::Values(
        MalformedCase{"InvalidJson", kGoodJson + kGoodJson + "{\"timestamp\": 1,\n",
                      "3: invalid JSON"},
        MalformedCase{"NotAnObject", kGoodJson + "[1, 2]\n", "2: expected a JSON object"},
        MalformedCase{"MissingTimestamp", R"({"input_length": 1, "output_length": 1})",
                      "1: missing \"timestamp\""},
        MalformedCase{"NegativeTimestamp",
                      R"({"timestamp": -5, "input_length": 1, "output_length": 1})",
                      "1: \"timestamp\": must be a number of milliseconds >= 0, got -5"},
        MalformedCase{"MissingLength", kGoodJson + R"({"timestamp": 1, "input_length": 1})",
                      "2: missing \"output_length\""},
        MalformedCase{"FractionalLength",
                      R"({"timestamp": 1, "input_length": 12.5, "output_length": 1})",
                      "1: \"input_length\": must be a positive integer, got 1.25E1"},
        MalformedCase{"StringLength",
                      R"({"timestamp": 1, "input_length": "12", "output_length": 1})",
                      "1: \"input_length\": must be a positive integer, got \"12\""},
        MalformedCase{"HashIdsNotAnArray",
                      R"({"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": 7})",
                      "1: \"hash_ids\": must be an array of non-negative integers, got 7"},
        MalformedCase{
            "NegativeHashId",
            kGoodJson +
                R"({"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [0, -1]})",
            "2: \"hash_ids\": must be an array of non-negative integers, got element -1"},
        MalformedCase{
            "FractionalHashId",
            R"({"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [1.5]})",
            "1: \"hash_ids\": must be an array of non-negative integers, got element 1.5E0"},
        MalformedCase{
            "HashIdsNotCoveringThePrompt",
            R"({"timestamp": 1, "input_length": 100, "output_length": 1, "hash_ids": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]})",
            "1: \"hash_ids\": 10 ids for 100 input tokens; expected 1, one per block of 512 "
            "tokens"},
        MalformedCase{
            "StringHashId",
            R"({"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": ["3"]})",
            "1: \"hash_ids\": must be an array of non-negative integers, got element \"3\""}),
    [](const ::testing::TestParamInfo<MalformedCase>& info) { return info.param.label; });

TEST(TraceReaderTest, GuessesFormatFromTheExtension) {
  EXPECT_EQ(GuessTraceFormat("a/b/trace.jsonl"), TraceFormat::kMooncakeJsonl);
  EXPECT_EQ(GuessTraceFormat("trace.csv"), TraceFormat::kAzureCsv);
  EXPECT_EQ(GuessTraceFormat("trace"), TraceFormat::kAzureCsv);
}

}  // namespace
}  // namespace spillway

namespace spillway {
namespace {

// A trace is read once, when its scenario is loaded: the span, the arrivals and a copy of the
// scenario (each --compare run) use the records read then, not the file.
TEST(TraceReplayTest, TheTraceIsReadOnceWhenTheScenarioIsLoaded) {
  const testing_util::TempDir dir;
  dir.Write("t.csv", std::string("TIMESTAMP,ContextTokens,GeneratedTokens\n") +
                         "2023-11-16 18:15:46.6805900,100,10\n"
                         "2023-11-16 18:15:47.6805900,200,20\n"
                         "2023-11-16 18:15:49.6805900,300,30\n");
  const std::string scenario = dir.Write("s.yaml",
                                         "name: t\n"
                                         "arrival: {process: trace, file: t.csv}\n"
                                         "classes: [{name: c}]\n");
  const Scenario loaded = LoadScenario(scenario);
  std::filesystem::remove(dir.path() / "t.csv");  // no later read could succeed
  const Scenario copy = loaded;
  EXPECT_DOUBLE_EQ(copy.ArrivalSpan(), 3.0);
  const std::vector<Arrival> arrivals = GenerateArrivals(copy, 1);
  ASSERT_EQ(arrivals.size(), 3u);
  EXPECT_EQ(arrivals[2].prompt_tokens, 300);
}

}  // namespace
}  // namespace spillway
