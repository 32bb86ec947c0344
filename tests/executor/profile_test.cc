// Profiles (profile.h): every YAML shipped under profiles/ loads, derived sizes are right, and
// a bad file is reported with its file, line, field path and offending value.

#include "config/profile.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "config/yaml_reader.h"
#include "executor/executor_test_util.h"

namespace spillway {
namespace {

using config::ConfigError;
using testing_util::TempDir;

namespace fs = std::filesystem;

const fs::path kProfilesDir = fs::path(SPILLWAY_SOURCE_DIR) / "profiles";

std::vector<fs::path> ShippedProfiles() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(kProfilesDir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

/// A complete, valid profile; tests swap single lines to break it.
const std::string kValidProfile = R"(name: test-profile
description: a test profile
hardware:
  gpu: Test GPU
  peak_flops: 312e12
  hbm_bandwidth_bytes_per_s: 2.039e12
  hbm_capacity_bytes: 80e9
model:
  name: test/model
  num_params: 6.74e9
  num_layers: 32
  hidden_size: 4096
  num_kv_heads: 32
  head_dim: 128
  dtype_bytes: 2
  max_model_len: 4096
efficiency:
  mfu: 0.5
  mbu: 0.6
  step_overhead_s: 0.002
  per_seq_overhead_s: 0.0001
memory:
  gpu_memory_utilization: 0.9
  activation_reserve_bytes: 2e9
  block_size: 16
)";

/// kValidProfile with the line containing `old_line` replaced by `new_line` ("" deletes it).
std::string Replace(const std::string& old_line, const std::string& new_line) {
  std::string text = kValidProfile;
  const std::size_t at = text.find(old_line);
  EXPECT_NE(at, std::string::npos) << old_line;
  text.replace(at, old_line.size() + 1, new_line.empty() ? "" : new_line + "\n");
  return text;
}

/// 1-based line of the first line of `text` that contains `needle`.
int LineOf(const std::string& text, const std::string& needle) {
  const std::size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
}

using executor_test::LoadError;

// --- shipped profiles ---

TEST(ProfileTest, EveryShippedProfileLoads) {
  const std::vector<fs::path> files = ShippedProfiles();
  ASSERT_FALSE(files.empty()) << kProfilesDir;
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.string());
    Profile p;
    ASSERT_NO_THROW(p = LoadProfile(file.string()));
    EXPECT_EQ(p.name, file.stem().string());  // LoadProfileByName finds it by this name
    EXPECT_GT(p.peak_flops, 0);
    EXPECT_GT(p.hbm_bandwidth_bytes_per_s, 0);
    EXPECT_GT(p.hbm_capacity_bytes, p.weight_bytes());
    EXPECT_GT(p.num_params, 0);
    EXPECT_GT(p.max_model_len, 0);
    EXPECT_GT(p.mfu, 0);
    EXPECT_LE(p.mfu, 1);
    EXPECT_GT(p.mbu, 0);
    EXPECT_LE(p.mbu, 1);
    EXPECT_GT(p.block_size, 0);
    // The KV cache holds at least one full-length sequence.
    EXPECT_GE(static_cast<double>(p.num_gpu_blocks()) * p.block_size, p.max_model_len);
  }
}

TEST(ProfileTest, EveryShippedProfileLoadsByName) {
  for (const fs::path& file : ShippedProfiles()) {
    const std::string name = file.stem().string();
    EXPECT_EQ(LoadProfileByName(name, kProfilesDir.string()).name, name);
  }
}

TEST(ProfileTest, Llama2_7bKvIs512KiBPerToken) {
  int found = 0;
  for (const fs::path& file : ShippedProfiles()) {
    const Profile p = LoadProfile(file.string());
    if (Lower(p.model).find("llama-2-7b") != std::string::npos) {
      ++found;
      // 2 (K, V) x 32 layers x 32 KV heads x 128 head dim x 2 bytes (lesson §7).
      EXPECT_EQ(p.kv_bytes_per_token(), 524288.0) << file;
    }
  }
  EXPECT_GE(found, 1) << "no Llama-2-7B profile under " << kProfilesDir;
}

TEST(ProfileTest, GqaModelsStoreFewerKvBytesPerToken) {
  for (const fs::path& file : ShippedProfiles()) {
    const Profile p = LoadProfile(file.string());
    if (Lower(p.model).find("llama-3-8b") != std::string::npos) {
      // 8 KV heads instead of 32: 2 x 32 x 8 x 128 x 2 = 128 KiB.
      EXPECT_EQ(p.kv_bytes_per_token(), 131072.0) << file;
    }
  }
}

// --- loading a file ---

TEST(ProfileTest, LoadsEveryField) {
  const TempDir dir;
  const Profile p = LoadProfile(dir.Write("p.yaml", kValidProfile));
  EXPECT_EQ(p.name, "test-profile");
  EXPECT_EQ(p.description, "a test profile");
  EXPECT_EQ(p.gpu, "Test GPU");
  EXPECT_EQ(p.peak_flops, 312e12);
  EXPECT_EQ(p.hbm_bandwidth_bytes_per_s, 2.039e12);
  EXPECT_EQ(p.hbm_capacity_bytes, 80e9);
  EXPECT_EQ(p.model, "test/model");
  EXPECT_EQ(p.num_params, 6.74e9);
  EXPECT_EQ(p.num_layers, 32);
  EXPECT_EQ(p.hidden_size, 4096);
  EXPECT_EQ(p.num_kv_heads, 32);
  EXPECT_EQ(p.head_dim, 128);
  EXPECT_EQ(p.dtype_bytes, 2);
  EXPECT_EQ(p.max_model_len, 4096);
  EXPECT_EQ(p.mfu, 0.5);
  EXPECT_EQ(p.mbu, 0.6);
  EXPECT_EQ(p.step_overhead_s, 0.002);
  EXPECT_EQ(p.per_seq_overhead_s, 0.0001);
  EXPECT_EQ(p.gpu_memory_utilization, 0.9);
  EXPECT_EQ(p.activation_reserve_bytes, 2e9);
  EXPECT_EQ(p.block_size, 16);
  EXPECT_EQ(p.weight_bytes(), 13.48e9);
  // (80e9 x 0.9 - 13.48e9 - 2e9) / (512 KiB x 16) blocks.
  EXPECT_EQ(p.num_gpu_blocks(), 6737);
}

TEST(ProfileTest, OptionalFieldsTakeTheirDefaults) {
  const TempDir dir;
  std::string text = kValidProfile;
  text = text.substr(0, text.find("efficiency:"));  // no efficiency or memory sections
  text.erase(text.find("  dtype_bytes: 2\n"), std::string("  dtype_bytes: 2\n").size());
  const Profile p = LoadProfile(dir.Write("p.yaml", text));
  EXPECT_EQ(p.dtype_bytes, 2);
  EXPECT_EQ(p.mfu, 0.5);
  EXPECT_EQ(p.mbu, 0.7);
  EXPECT_EQ(p.step_overhead_s, 0);
  EXPECT_EQ(p.per_seq_overhead_s, 0);
  EXPECT_EQ(p.first_token_overhead_s, 0);
  EXPECT_EQ(p.engine, "");
  EXPECT_EQ(p.gpu_memory_utilization, 0.9);
  EXPECT_EQ(p.activation_reserve_bytes, 0);
  EXPECT_EQ(p.block_size, 16);
}

TEST(ProfileTest, LoadProfileByNameAcceptsAPath) {
  const TempDir dir;
  const std::string path = dir.Write("custom.yaml", kValidProfile);
  EXPECT_EQ(LoadProfileByName(path, kProfilesDir.string()).name, "test-profile");
}

TEST(ProfileTest, LoadProfileByNameReportsAnUnknownName) {
  try {
    LoadProfileByName("no-such-profile", kProfilesDir.string());
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("no-such-profile"), std::string::npos) << what;
    EXPECT_NE(what.find("not found"), std::string::npos) << what;
  }
}

// --- errors name file, line, field and value ---

TEST(ProfileErrorTest, OutOfRangeValueNamesFileLineFieldAndValue) {
  const TempDir dir;
  const std::string text = Replace("  mfu: 0.5", "  mfu: 1.5");
  const std::string path = dir.Write("bad_mfu.yaml", text);
  EXPECT_EQ(LoadError(path), path + ":" + std::to_string(LineOf(text, "mfu: 1.5")) +
                                 ": efficiency.mfu: must be in (0, 1], got '1.5'");
}

TEST(ProfileErrorTest, NonIntegerLayerCountIsRejected) {
  const TempDir dir;
  const std::string text = Replace("  num_layers: 32", "  num_layers: 32.5");
  const std::string path = dir.Write("bad_layers.yaml", text);
  EXPECT_EQ(LoadError(path), path + ":" + std::to_string(LineOf(text, "num_layers")) +
                                 ": model.num_layers: must be an integer, got '32.5'");
}

TEST(ProfileErrorTest, NonPositiveHardwareNumberIsRejected) {
  const TempDir dir;
  const std::string text = Replace("  peak_flops: 312e12", "  peak_flops: 0");
  const std::string path = dir.Write("zero_flops.yaml", text);
  EXPECT_EQ(LoadError(path), path + ":" + std::to_string(LineOf(text, "peak_flops")) +
                                 ": hardware.peak_flops: must be > 0, got '0'");
}

TEST(ProfileErrorTest, NegativeOverheadIsRejected) {
  const TempDir dir;
  const std::string text = Replace("  step_overhead_s: 0.002", "  step_overhead_s: -0.002");
  const std::string path = dir.Write("negative.yaml", text);
  const std::string error = LoadError(path);
  EXPECT_NE(error.find("efficiency.step_overhead_s: must be >= 0, got '-0.002'"), std::string::npos)
      << error;
}

TEST(ProfileErrorTest, MissingRequiredFieldIsNamed) {
  const TempDir dir;
  const std::string path =
      dir.Write("missing.yaml", Replace("  hbm_bandwidth_bytes_per_s: 2.039e12", ""));
  const std::string error = LoadError(path);
  EXPECT_EQ(error.rfind(path + ":", 0), 0u) << error;
  EXPECT_NE(error.find("hardware.hbm_bandwidth_bytes_per_s: must be a number, got nothing"),
            std::string::npos)
      << error;
}

TEST(ProfileErrorTest, MisspelledFieldIsRejectedWithTheKnownNames) {
  const TempDir dir;
  const std::string text = Replace("  head_dim: 128", "  head_dims: 128");
  const std::string path = dir.Write("typo.yaml", text);
  const std::string error = LoadError(path);
  EXPECT_EQ(error.rfind(path + ":" + std::to_string(LineOf(text, "head_dims")) + ": ", 0), 0u)
      << error;
  EXPECT_NE(error.find("model.head_dims: unknown field (known: "), std::string::npos) << error;
  EXPECT_NE(error.find("head_dim,"), std::string::npos) << error;
}

TEST(ProfileErrorTest, NonNumericValueIsQuoted) {
  const TempDir dir;
  const std::string text = Replace("  hidden_size: 4096", "  hidden_size: big");
  const std::string path = dir.Write("word.yaml", text);
  EXPECT_EQ(LoadError(path), path + ":" + std::to_string(LineOf(text, "hidden_size")) +
                                 ": model.hidden_size: must be a number, got 'big'");
}

TEST(ProfileErrorTest, IntegerBeyondTheFieldsRangeIsRejected) {
  // max_model_len is an int32: 3e9 must be an error, not a wrapped or undefined value.
  const TempDir dir;
  const std::string text = Replace("  max_model_len: 4096", "  max_model_len: 3000000000");
  const std::string path = dir.Write("too_long.yaml", text);
  const std::string error = LoadError(path);
  EXPECT_NE(error.find(path + ":" + std::to_string(LineOf(text, "max_model_len")) +
                       ": model.max_model_len: "),
            std::string::npos)
      << "loaded without an error: " << error;
  EXPECT_NE(error.find("got '3000000000'"), std::string::npos) << error;
}

TEST(ProfileErrorTest, WeightsThatDoNotFitLeaveNoKvCache) {
  const TempDir dir;
  const std::string path =
      dir.Write("huge.yaml", Replace("  num_params: 6.74e9", "  num_params: 70e9"));
  const std::string error = LoadError(path);
  EXPECT_NE(error.find("memory: leaves no memory for the KV cache"), std::string::npos) << error;
}

TEST(ProfileErrorTest, UnreadableFileIsNamed) {
  const TempDir dir;
  const std::string path = (dir.path() / "absent.yaml").string();
  EXPECT_EQ(LoadError(path), path + ": cannot open file");
}

TEST(ProfileErrorTest, YamlSyntaxErrorNamesFileAndLine) {
  const TempDir dir;
  const std::string path = dir.Write("syntax.yaml", "name: x\nhardware: [1, 2\n");
  const std::string error = LoadError(path);
  EXPECT_EQ(error.rfind(path + ":", 0), 0u) << error;
  EXPECT_NE(error.find("invalid YAML"), std::string::npos) << error;
}

}  // namespace
}  // namespace spillway

namespace spillway {
namespace {

TEST(ProfileTest, ReadsTheFirstTokenOverheadTheEngineAndSkipsACalibrationRecord) {
  const TempDir dir;
  std::string text = kValidProfile;
  text.insert(text.find("  per_seq_overhead_s"), "  first_token_overhead_s: 0.004\n");
  text += "engine: vLLM 0.6, single-step scheduling\ncalibration:\n  points: [1, 2]\n";
  const Profile p = LoadProfile(dir.Write("p.yaml", text));
  EXPECT_EQ(p.first_token_overhead_s, 0.004);
  EXPECT_EQ(p.engine, "vLLM 0.6, single-step scheduling");
}

TEST(ProfileTest, ANegativeFirstTokenOverheadNamesTheField) {
  const TempDir dir;
  std::string text = kValidProfile;
  text.insert(text.find("  per_seq_overhead_s"), "  first_token_overhead_s: -1\n");
  try {
    LoadProfile(dir.Write("p.yaml", text));
    FAIL() << "a negative overhead was accepted";
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("efficiency.first_token_overhead_s"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace spillway
