// The engine settings table (config/engine_settings.h): reading, ranges, overlays, defaults,
// flag names, and that every key is documented where users read about it.

#include "config/engine_settings.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "config/yaml_reader.h"

namespace spillway::config {
namespace {

std::string ReadError(const std::string& yaml, const std::string& section) {
  try {
    EngineSettings s;
    ReadEngineSettings(Field::LoadString(yaml, "s.yaml")[section], section, {}, &s);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(EngineSettingsTest, ReadsEverySectionsKeysWithTheirTypes) {
  const Field root = Field::LoadString(
      "engine: {max_num_seqs: 27, scheduling: priority, enable_chunked_prefill: false}\n"
      "admission: {policy: tail-drop, kv_headroom: 0.5}\n"
      "timeouts: {request_timeout_s: 60}\n",
      "s.yaml");
  EngineSettings s;
  ReadEngineSettings(root["engine"], "engine", {}, &s);
  ReadEngineSettings(root["admission"], "admission", {}, &s);
  ReadEngineSettings(root["timeouts"], "timeouts", {}, &s);
  EXPECT_EQ(s.max_num_seqs, 27);
  EXPECT_EQ(s.scheduling, "priority");
  EXPECT_EQ(s.enable_chunked_prefill, false);
  EXPECT_EQ(s.policy, "tail-drop");
  EXPECT_EQ(s.kv_headroom, 0.5);
  EXPECT_EQ(s.request_timeout_s, 60);
  EXPECT_FALSE(s.profile.has_value());
}

TEST(EngineSettingsTest, ErrorsNameFileLineFieldAndValue) {
  EXPECT_EQ(ReadError("engine:\n  max_num_seqs: 0\n", "engine"),
            "s.yaml:2: engine.max_num_seqs: must be an integer in [1, 1048576], got '0'");
  EXPECT_EQ(ReadError("admission:\n  policy: fifo\n", "admission"),
            "s.yaml:2: admission.policy: must be one of: unbounded, tail-drop, predictive, "
            "forecast, got 'fifo'");
  EXPECT_NE(ReadError("engine:\n  max_num_sequences: 4\n", "engine").find("max_num_sequences"),
            std::string::npos);
  EXPECT_NE(ReadError("timeouts:\n  request_timeout_s: 2e6\n", "timeouts"), "");
}

TEST(EngineSettingsTest, FlagValuesAreCheckedAgainstTheSameRows) {
  EngineSettings s;
  s.kv_headroom = 1.5;
  try {
    ValidateEngineSettings(s, "flags");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "flags: --kv-headroom (admission.kv_headroom): must be a number in (0, 1], got "
                 "1.5");
  }
  s.kv_headroom = 0.5;
  EXPECT_NO_THROW(ValidateEngineSettings(s, "flags"));
}

TEST(EngineSettingsTest, OverlayKeepsWhatTheTopLeavesUnset) {
  EngineSettings base = EngineDefaults();
  EngineSettings top;
  top.max_num_seqs = 8;
  top.policy = "unbounded";
  const EngineSettings s = Overlay(base, top);
  EXPECT_EQ(s.max_num_seqs, 8);
  EXPECT_EQ(s.policy, "unbounded");
  EXPECT_EQ(s.ttft_slo_s, 1.0);
  EXPECT_EQ(s.request_timeout_s, 4.5);
}

TEST(EngineSettingsTest, FlagNamesAreTheKeysWithDashesOrTheNegatingFlag) {
  EXPECT_EQ(FlagName(*FindSetting("engine", "max_num_seqs")), "--max-num-seqs");
  EXPECT_EQ(FlagName(*FindSetting("engine", "enable_chunked_prefill")), "--no-chunked-prefill");
  EXPECT_EQ(FlagName(*FindSetting("timeouts", "request_timeout_s")), "--request-timeout-s");
  EXPECT_EQ(FindSetting("engine", "nope"), nullptr);
}

TEST(EngineSettingsTest, EveryKeyIsDocumentedInScenariosMd) {
  std::ifstream in(std::string(SPILLWAY_SOURCE_DIR) + "/docs/scenarios.md");
  std::stringstream text;
  text << in.rdbuf();
  for (const SettingSpec& spec : EngineSettingSpecs()) {
    const std::string key = "| `" + std::string(spec.section) + "." + std::string(spec.key) + "` |";
    EXPECT_NE(text.str().find(key), std::string::npos) << key << " missing in docs/scenarios.md";
  }
}

}  // namespace
}  // namespace spillway::config
