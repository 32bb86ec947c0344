// config error reporting (yaml_reader.h): every ConfigError reads "file:line: path: message,
// got VALUE" (style.md rule 6), for files, inline text, range checks and syntax errors.

#include <limits>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "common/config_error_of.h"
#include "common/temp_dir.h"
#include "config/yaml_reader.h"

namespace spillway::config {
namespace {

using testing_util::TempDir;

using testing_util::ErrorOf;

TEST(YamlErrorsTest, StyleGuideExampleMessage) {
  const Field root = Field::LoadString(
      "# policy\nrun:\n  seed: 1\n\nadmission:\n  policy: predictive\n"
      "  kv_headroom: 1.5\n",
      "policy.yaml");
  const Field f = root["admission"]["kv_headroom"];
  EXPECT_EQ(ErrorOf([&] { InRange(f, f.AsDouble(), 0, 1); }),
            "policy.yaml:7: admission.kv_headroom: must be in (0, 1], got '1.5'");
}

TEST(YamlErrorsTest, ErrorsFromAFileNameTheFileAndLine) {
  const TempDir dir;
  const std::string path = dir.Write("scenario.yaml", "name: x\nrate:\n  rps: fast\n");
  const Field root = Field::LoadFile(path);
  EXPECT_EQ(root.file(), path);
  EXPECT_EQ(ErrorOf([&] { root["rate"]["rps"].AsDouble(); }),
            path + ":3: rate.rps: must be a number, got 'fast'");
}

TEST(YamlErrorsTest, ListItemErrorsNameTheIndex) {
  const Field root = Field::LoadString("classes:\n  - share: 0.5\n  - share: half\n", "mix.yaml");
  const Field share = root["classes"].Items()[1]["share"];
  EXPECT_EQ(ErrorOf([&] { share.AsDouble(); }),
            "mix.yaml:3: classes[1].share: must be a number, got 'half'");
}

TEST(YamlErrorsTest, FailOnTheRootSaysTopLevel) {
  const Field root = Field::LoadString("- 1\n- 2\n", "list.yaml");
  EXPECT_EQ(ErrorOf([&] { root.Keys(); }), "list.yaml:1: (top level): must be a map, got a list");
}

TEST(YamlErrorsTest, FailCarriesACustomMessage) {
  const Field root = Field::LoadString("memory:\n  block_size: 16\n", "p.yaml");
  EXPECT_EQ(ErrorOf([&] { root["memory"].Fail("leaves no room"); }),
            "p.yaml:2: memory: leaves no room, got a map");
}

TEST(YamlErrorsTest, MissingFileIsNamed) {
  const TempDir dir;
  const std::string path = (dir.path() / "nope.yaml").string();
  EXPECT_EQ(ErrorOf([&] { Field::LoadFile(path); }), path + ": cannot open file");
}

TEST(YamlErrorsTest, ADirectoryOrAFileWithoutEndIsRefusedNotRead) {
  const TempDir dir;
  EXPECT_EQ(ErrorOf([&] { Field::LoadFile(dir.path().string()); }),
            dir.path().string() + ": is a directory, not a file");
  // /dev/zero never ends: read past the cap and refused, not read until memory runs out.
  EXPECT_EQ(ErrorOf([] { Field::LoadFile("/dev/zero"); }),
            "/dev/zero: longer than 64 MiB: not an input of Spillway's");
}

TEST(YamlErrorsTest, SyntaxErrorNamesFileAndLine) {
  const TempDir dir;
  const std::string path = dir.Write("broken.yaml", "a: 1\nb: 2\nc: [1, 2\n");
  const std::string error = ErrorOf([&] { Field::LoadFile(path); });
  EXPECT_EQ(error.rfind(path + ":", 0), 0u) << error;
  EXPECT_NE(error.find("invalid YAML"), std::string::npos) << error;
  const std::string inline_error =
      ErrorOf([] { Field::LoadString("a: 1\nb: : :\n  - x\n", "<inline>"); });
  EXPECT_EQ(inline_error.rfind("<inline>:", 0), 0u) << inline_error;
}

TEST(YamlErrorsTest, PositiveRejectsZeroAndNegative) {
  const Field root = Field::LoadString("a: 0\nb: -1\nc: 0.001\n", "r.yaml");
  EXPECT_EQ(ErrorOf([&] { Positive(root["a"], root["a"].AsDouble()); }),
            "r.yaml:1: a: must be > 0, got '0'");
  EXPECT_EQ(ErrorOf([&] { Positive(root["b"], root["b"].AsDouble()); }),
            "r.yaml:2: b: must be > 0, got '-1'");
  EXPECT_EQ(Positive(root["c"], root["c"].AsDouble()), 0.001);
}

TEST(YamlErrorsTest, NonNegativeAcceptsZeroRejectsNegative) {
  const Field root = Field::LoadString("a: 0\nb: -0.5\n", "r.yaml");
  EXPECT_EQ(NonNegative(root["a"], root["a"].AsDouble()), 0);
  EXPECT_EQ(ErrorOf([&] { NonNegative(root["b"], root["b"].AsDouble()); }),
            "r.yaml:2: b: must be >= 0, got '-0.5'");
}

TEST(YamlErrorsTest, InRangeIsExclusiveBelowInclusiveAbove) {
  const Field root = Field::LoadString("lo: 0\nhi: 1\nmid: 0.5\n", "r.yaml");
  EXPECT_EQ(ErrorOf([&] { InRange(root["lo"], root["lo"].AsDouble(), 0, 1); }),
            "r.yaml:1: lo: must be in (0, 1], got '0'");
  EXPECT_EQ(InRange(root["hi"], root["hi"].AsDouble(), 0, 1), 1);
  EXPECT_EQ(InRange(root["mid"], root["mid"].AsDouble(), 0, 1), 0.5);
}

TEST(YamlErrorsTest, RangeChecksRejectNaN) {
  const Field root = Field::LoadString("a: 1\n", "r.yaml");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(ErrorOf([&] { Positive(root["a"], nan); }).empty());
  EXPECT_FALSE(ErrorOf([&] { NonNegative(root["a"], nan); }).empty());
  EXPECT_FALSE(ErrorOf([&] { InRange(root["a"], nan, 0, 1); }).empty());
}

TEST(YamlErrorsTest, ConfigErrorIsARuntimeError) {
  const Field root = Field::LoadString("a: x\n", "r.yaml");
  EXPECT_THROW(root["a"].AsDouble(), std::runtime_error);
}

}  // namespace
}  // namespace spillway::config
