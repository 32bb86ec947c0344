// Inputs the fuzzers found (fuzz/, docs/fuzzing.md) that broke the YAML reader's contract:
// every failure is a ConfigError, and loading always ends. Each input is the minimised one.

#include <string>

#include <gtest/gtest.h>

#include "common/config_error_of.h"
#include "config/yaml_reader.h"

namespace spillway::config {
namespace {

using testing_util::ErrorOf;

// server_config_fuzz, timeout: yaml-cpp 0.7's LoadAll looped forever (allocating) on a ','
// that cannot start a node.
TEST(YamlFuzzRegressionsTest, StrayCommaIsASyntaxErrorNotAHang) {
  EXPECT_EQ(ErrorOf([] { Field::LoadString(", >\n\n", "<fuzz>"); }),
            "<fuzz>:1: invalid YAML: unexpected ','");
  EXPECT_EQ(ErrorOf([] { Field::LoadString("# comment\n, x\n", "c.yaml"); }),
            "c.yaml:2: invalid YAML: unexpected ','");
}

TEST(YamlFuzzRegressionsTest, DocumentsAreStillCounted) {
  EXPECT_EQ(ErrorOf([] { Field::LoadString("a: 1\n---\nb: 2\n---\nc: 3\n", "m.yaml"); }),
            "m.yaml: holds 3 YAML documents; expected one");
  EXPECT_EQ(Field::LoadString("---\na: 1\n...\n", "one.yaml")["a"].AsInt(), 1);
  EXPECT_FALSE(Field::LoadString("# only a comment\n", "empty.yaml").present());
}

// profile_fuzz, crash: a complex key ("? hardware: {...}" makes the map {hardware: ...} a key)
// escaped Keys() as YAML::TypedBadConversion instead of a ConfigError.
TEST(YamlFuzzRegressionsTest, MapOrListKeyIsAConfigError) {
  const Field root = Field::LoadString("name: m\n? hardware: {peak_flops: 1}\n", "p.yaml");
  EXPECT_EQ(ErrorOf([&] {
              root.RequireKnownKeys({"name", "hardware"});
            }),
            "p.yaml:2: (top level): keys must be field names, not a map or a list, got a map");
  const Field list_key = Field::LoadString("? [a, b]\n: 1\n", "l.yaml");
  EXPECT_EQ(ErrorOf([&] { list_key.Keys(); }),
            "l.yaml:1: (top level): keys must be field names, not a map or a list, got a list");
}

TEST(YamlFuzzRegressionsTest, NullKeyReadsAsTheWordNull) {
  const Field root = Field::LoadString("~: 1\n", "n.yaml");
  EXPECT_EQ(root.Keys(), std::vector<std::string>{"null"});
}

}  // namespace
}  // namespace spillway::config
