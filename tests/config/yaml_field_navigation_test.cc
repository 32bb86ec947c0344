// config::Field navigation (yaml_reader.h): child paths, absent fields chaining safely, lists,
// keys in file order, and RequireKnownKeys catching misspelled field names.

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/config_error_of.h"
#include "config/yaml_reader.h"

namespace spillway::config {
namespace {

Field LoadNav(const std::string& text) { return Field::LoadString(text, "nav.yaml"); }

using testing_util::ErrorOf;

TEST(YamlFieldNavigationTest, ChildPathsJoinKeysWithDots) {
  const Field root = LoadNav("admission:\n  tenants:\n    gold:\n      rate_rps: 5\n");
  const Field rate = root["admission"]["tenants"]["gold"]["rate_rps"];
  EXPECT_EQ(rate.path(), "admission.tenants.gold.rate_rps");
  EXPECT_EQ(rate.file(), "nav.yaml");
  EXPECT_TRUE(rate.present());
  EXPECT_EQ(rate.AsInt(), 5);
  EXPECT_EQ(root.path(), "");
}

TEST(YamlFieldNavigationTest, AbsentNestedFieldsChainWithoutThrowing) {
  const Field root = LoadNav("x: 1\n");
  Field c = root;
  ASSERT_NO_THROW(c = root["a"]["b"]["c"]);
  EXPECT_FALSE(c.present());
  EXPECT_FALSE(c.is_map());
  EXPECT_FALSE(c.is_sequence());
  EXPECT_FALSE(c.is_scalar());
  EXPECT_EQ(c.path(), "a.b.c");
  EXPECT_EQ(c.Double(2.5), 2.5);
  EXPECT_NO_THROW(c.RequireKnownKeys({"anything"}));
}

TEST(YamlFieldNavigationTest, IndexingIntoAScalarOrListGivesAnAbsentField) {
  const Field root = LoadNav("a: 5\nb: [1, 2]\n");
  EXPECT_FALSE(root["a"]["b"].present());
  EXPECT_FALSE(root["a"]["b"]["c"].present());
  EXPECT_FALSE(root["b"]["x"].present());
  EXPECT_EQ(root["a"]["b"].path(), "a.b");
}

TEST(YamlFieldNavigationTest, EmptyDocumentHasNoFields) {
  const Field root = LoadNav("");
  EXPECT_FALSE(root.present());
  EXPECT_FALSE(root["a"]["b"].present());
}

TEST(YamlFieldNavigationTest, ItemsCarryIndexedPathsInOrder) {
  const Field root = LoadNav("classes:\n  - name: chat\n  - name: code\n  - name: batch\n");
  const std::vector<Field> items = root["classes"].Items();
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0]["name"].AsString(), "chat");
  EXPECT_EQ(items[2]["name"].AsString(), "batch");
  EXPECT_EQ(items[1]["name"].path(), "classes[1].name");
}

TEST(YamlFieldNavigationTest, ItemsOfANonListFails) {
  const Field root = LoadNav("classes: chat\n");
  EXPECT_EQ(ErrorOf([&] { root["classes"].Items(); }),
            "nav.yaml:1: classes: must be a list, got 'chat'");
  EXPECT_EQ(ErrorOf([&] { root["absent"].Items(); }),
            "nav.yaml:1: absent: must be a list, got nothing")
      << "an absent field names the line of the map it is missing from";
}

TEST(YamlFieldNavigationTest, KeysAreInFileOrder) {
  const Field root = LoadNav("zeta: 1\nalpha: 2\nmid: 3\n");
  EXPECT_EQ(root.Keys(), (std::vector<std::string>{"zeta", "alpha", "mid"}));
  EXPECT_EQ(ErrorOf([&] { root["zeta"].Keys(); }), "nav.yaml:1: zeta: must be a map, got '1'");
}

TEST(YamlFieldNavigationTest, RequireKnownKeysAcceptsKnownKeys) {
  const Field root = LoadNav("hardware:\n  gpu: A100\n  peak_flops: 1\n");
  EXPECT_NO_THROW(root.RequireKnownKeys({"hardware", "model"}));
  EXPECT_NO_THROW(root["hardware"].RequireKnownKeys({"gpu", "peak_flops", "hbm"}));
}

TEST(YamlFieldNavigationTest, RequireKnownKeysNamesTheMisspelledFieldItsLineAndTheKnownOnes) {
  const Field root = LoadNav("hardware:\n  gpu: A100\n  peak_flop: 312e12\n");
  EXPECT_EQ(ErrorOf([&] {
              root["hardware"].RequireKnownKeys({"gpu", "peak_flops"});
            }),
            "nav.yaml:3: hardware.peak_flop: unknown field (known: gpu, peak_flops), "
            "got '312e12'");
}

TEST(YamlFieldNavigationTest, RequireKnownKeysOnAScalarFails) {
  const Field root = LoadNav("hardware: A100\n");
  EXPECT_EQ(ErrorOf([&] { root["hardware"].RequireKnownKeys({"gpu"}); }),
            "nav.yaml:1: hardware: must be a map, got 'A100'");
}

}  // namespace
}  // namespace spillway::config
