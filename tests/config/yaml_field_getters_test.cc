// config::Field typed getters (yaml_reader.h): numbers, integers, booleans, strings, and the
// fallback forms for absent fields.

#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "common/config_error_of.h"
#include "config/yaml_reader.h"

namespace spillway::config {
namespace {

Field Load(const std::string& text) { return Field::LoadString(text, "test.yaml"); }

using testing_util::ErrorOf;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(YamlFieldGettersTest, ReadsDecimalAndScientificNumbers) {
  const Field root = Load("a: 1.5\nb: 312e12\nc: -0.25\nd: 7\ne: 2.039e+12\n");
  EXPECT_EQ(root["a"].AsDouble(), 1.5);
  EXPECT_EQ(root["b"].AsDouble(), 312e12);
  EXPECT_EQ(root["c"].AsDouble(), -0.25);
  EXPECT_EQ(root["d"].AsDouble(), 7.0);
  EXPECT_EQ(root["e"].AsDouble(), 2.039e12);
}

TEST(YamlFieldGettersTest, ReadsIntegersIncludingIntegralScientificNotation) {
  const Field root = Load("a: 42\nb: -3\nc: 1e3\nd: 4096.0\ne: 0\n");
  EXPECT_EQ(root["a"].AsInt(), 42);
  EXPECT_EQ(root["b"].AsInt(), -3);
  EXPECT_EQ(root["c"].AsInt(), 1000);
  EXPECT_EQ(root["d"].AsInt(), 4096);
  EXPECT_EQ(root["e"].AsInt(), 0);
}

TEST(YamlFieldGettersTest, ReadsLargeIntegersExactly) {
  const Field root = Load("a: 9000000000000000\n");
  EXPECT_EQ(root["a"].AsInt(), std::int64_t{9'000'000'000'000'000});
}

TEST(YamlFieldGettersTest, RejectsNonIntegersAsIntegersQuotingTheValue) {
  const Field root = Load("a: 1.5\nb: 1e-3\nc: 1e17\n");
  EXPECT_EQ(ErrorOf([&] { root["a"].AsInt(); }), "test.yaml:1: a: must be an integer, got '1.5'");
  EXPECT_TRUE(Contains(ErrorOf([&] { root["b"].AsInt(); }), "must be an integer, got '1e-3'"));
  // Beyond 9e15 a double no longer holds every integer: refused rather than rounded.
  EXPECT_TRUE(Contains(ErrorOf([&] { root["c"].AsInt(); }), "must be an integer, got '1e17'"));
}

TEST(YamlFieldGettersTest, RejectsNonFiniteNumbers) {
  const Field root = Load("a: inf\nb: nan\nc: -inf\nd: .inf\ne: .nan\nf: 1e999\ng: infinity\n");
  for (const char* key : {"a", "b", "c", "d", "e", "f", "g"}) {
    double value = 0;
    const std::string error = ErrorOf([&] { value = root[key].AsDouble(); });
    EXPECT_FALSE(error.empty()) << key << " read as " << value;
    EXPECT_TRUE(Contains(error, std::string(key) + ": must be a")) << error;
    EXPECT_TRUE(Contains(error, "got '")) << error;  // quotes the offending value
  }
  EXPECT_EQ(ErrorOf([&] { root["a"].AsDouble(); }),
            "test.yaml:1: a: must be a finite number, got 'inf'");
  EXPECT_EQ(ErrorOf([&] { root["b"].AsDouble(); }),
            "test.yaml:2: b: must be a finite number, got 'nan'");
  // YAML's own spellings too (they said "must be a number").
  EXPECT_EQ(ErrorOf([&] { root["d"].AsDouble(); }),
            "test.yaml:4: d: must be a finite number, got '.inf'");
  EXPECT_EQ(ErrorOf([&] { root["e"].AsDouble(); }),
            "test.yaml:5: e: must be a finite number, got '.nan'");
}

TEST(YamlFieldGettersTest, RejectsNonFiniteNumbersAsIntegers) {
  const Field root = Load("a: inf\nb: nan\n");
  EXPECT_FALSE(ErrorOf([&] { root["a"].AsInt(); }).empty());
  EXPECT_FALSE(ErrorOf([&] { root["b"].AsInt(); }).empty());
}

TEST(YamlFieldGettersTest, RejectsNumbersWithTrailingText) {
  const Field root = Load("a: 12abc\nb: 1.5 s\nc: ''\n");
  EXPECT_EQ(ErrorOf([&] { root["a"].AsDouble(); }),
            "test.yaml:1: a: must be a finite number, got '12abc'");
  EXPECT_TRUE(Contains(ErrorOf([&] { root["b"].AsDouble(); }), "got '1.5 s'"));
  EXPECT_TRUE(Contains(ErrorOf([&] { root["c"].AsDouble(); }), "c: must be a number, got ''"));
}

TEST(YamlFieldGettersTest, RejectsMapsAndListsWhereANumberIsExpected) {
  const Field root = Load("a:\n  x: 1\nb: [1, 2]\n");
  EXPECT_TRUE(Contains(ErrorOf([&] { root["a"].AsDouble(); }), "a: must be a number, got a map"));
  EXPECT_TRUE(Contains(ErrorOf([&] { root["b"].AsDouble(); }), "b: must be a number, got a list"));
}

TEST(YamlFieldGettersTest, ReadsBooleansInTheirYamlSpellings) {
  const Field root = Load("a: true\nb: yes\nc: on\nd: false\ne: no\nf: off\n");
  EXPECT_TRUE(root["a"].AsBool());
  EXPECT_TRUE(root["b"].AsBool());
  EXPECT_TRUE(root["c"].AsBool());
  EXPECT_FALSE(root["d"].AsBool());
  EXPECT_FALSE(root["e"].AsBool());
  EXPECT_FALSE(root["f"].AsBool());
}

TEST(YamlFieldGettersTest, RejectsOtherBooleanValues) {
  const Field root = Load("a: maybe\nb: 1\n");
  EXPECT_EQ(ErrorOf([&] { root["a"].AsBool(); }),
            "test.yaml:1: a: must be true or false, got 'maybe'");
  EXPECT_TRUE(Contains(ErrorOf([&] { root["b"].AsBool(); }), "got '1'"));
}

TEST(YamlFieldGettersTest, ReadsStringsButNotMapsOrLists) {
  const Field root = Load("a: hello world\nb: '42'\nc: {x: 1}\n");
  EXPECT_EQ(root["a"].AsString(), "hello world");
  EXPECT_EQ(root["b"].AsString(), "42");
  EXPECT_TRUE(Contains(ErrorOf([&] { root["c"].AsString(); }), "c: must be a string, got a map"));
}

TEST(YamlFieldGettersTest, QuotedNumbersStillReadAsNumbers) {
  const Field root = Load("a: '2.5'\n");
  EXPECT_EQ(root["a"].AsDouble(), 2.5);
}

TEST(YamlFieldGettersTest, FallbacksApplyOnlyToAbsentFields) {
  const Field root = Load("a: 1.5\nb: 7\nc: false\nd: text\n");
  EXPECT_EQ(root["a"].Double(9.0), 1.5);
  EXPECT_EQ(root["b"].Int(9), 7);
  EXPECT_FALSE(root["c"].Bool(true));
  EXPECT_EQ(root["d"].String("fallback"), "text");
  EXPECT_EQ(root["missing"].Double(9.0), 9.0);
  EXPECT_EQ(root["missing"].Int(9), 9);
  EXPECT_TRUE(root["missing"].Bool(true));
  EXPECT_EQ(root["missing"].String("fallback"), "fallback");
}

TEST(YamlFieldGettersTest, ExplicitNullTakesTheFallback) {
  const Field root = Load("a: ~\nb: null\nc:\n");
  for (const char* key : {"a", "b", "c"}) {
    EXPECT_FALSE(root[key].present()) << key;
    EXPECT_EQ(root[key].Double(3.0), 3.0) << key;
  }
}

TEST(YamlFieldGettersTest, FallbackFormsStillValidatePresentValues) {
  const Field root = Load("a: lots\nb: 1.5\n");
  EXPECT_TRUE(Contains(ErrorOf([&] { root["a"].Double(1); }), "a: must be a number, got 'lots'"));
  EXPECT_TRUE(Contains(ErrorOf([&] { root["b"].Int(1); }), "b: must be an integer, got '1.5'"));
}

TEST(YamlFieldGettersTest, AbsentRequiredFieldSaysGotNothing) {
  const Field root = Load("a: 1\n");
  // (At the line of the map it is missing from; nested: "b:\n  c: {}\n" names line 2 for b.c.x.)
  EXPECT_EQ(ErrorOf([] { Load("b:\n  c: {d: 1}\n")["b"]["c"]["x"].AsString(); }),
            "test.yaml:2: b.c.x: must be a string, got nothing");
  EXPECT_EQ(ErrorOf([&] { root["missing"].AsDouble(); }),
            "test.yaml:1: missing: must be a number, got nothing");
  EXPECT_EQ(ErrorOf([&] { root["missing"].AsString(); }),
            "test.yaml:1: missing: must be a string, got nothing");
}

}  // namespace
}  // namespace spillway::config
