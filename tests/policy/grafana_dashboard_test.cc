// The Grafana dashboard `policy render` writes (src/policy/grafana_dashboard.h): the lesson's
// seven metric signatures, each panel with the policy's threshold; and (live) every metric its
// queries name is one a running `spillway serve` exports.

#include <regex>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "common/http_client.h"
#include "common/server_process.h"
#include "policy/grafana_dashboard.h"
#include "policy/policy_reader.h"

namespace spillway::policy {
namespace {

namespace json = boost::json;

const std::string kDashboardPolicy = std::string(SPILLWAY_SOURCE_DIR) + "/policies/reference.yaml";

json::object Dashboard() {
  return json::parse(GrafanaDashboardJson(ReadPolicyFile(kDashboardPolicy))).as_object();
}

// The threshold values drawn on the panel titled `title`, in order (the base step has none).
std::vector<double> ThresholdsOf(const json::object& dashboard, const std::string& title) {
  std::vector<double> out;
  for (const json::value& p : dashboard.at("panels").as_array()) {
    if (p.at("title").as_string() == title) {
      for (const json::value& step :
           p.at("fieldConfig").at("defaults").at("thresholds").at("steps").as_array()) {
        if (!step.at("value").is_null()) {
          out.push_back(step.at("value").to_number<double>());
        }
      }
    }
  }
  return out;
}

TEST(GrafanaDashboardTest, EachSignatureHasAPanelWithThePolicysThreshold) {
  const json::object d = Dashboard();
  EXPECT_EQ(d.at("schemaVersion").as_int64(), 39);
  EXPECT_EQ(d.at("panels").as_array().size(), 7U);
  EXPECT_EQ(ThresholdsOf(d, "Requests waiting"), std::vector<double>{10});
  EXPECT_EQ(ThresholdsOf(d, "KV cache usage"), (std::vector<double>{0.85, 0.9}));
  EXPECT_EQ(ThresholdsOf(d, "Preemptions per minute"), std::vector<double>{1});
  EXPECT_EQ(ThresholdsOf(d, "429 per second"), std::vector<double>{5});
  EXPECT_EQ(ThresholdsOf(d, "Queue time p95"), std::vector<double>{1.0});
  ASSERT_EQ(ThresholdsOf(d, "Goodput").size(), 1U);
  EXPECT_NEAR(ThresholdsOf(d, "Goodput")[0], 0.9 * 10.34, 1e-9);  // the alert's floor
}

TEST(LiveGrafanaDashboardTest, EveryMetricItQueriesIsOneServeExports) {
  server_test::ServerProcess server({});
  ASSERT_TRUE(server.WaitUntilListening(15)) << server.error();
  const server_test::HttpResponse metrics = server_test::HttpClient(server.port()).Get("/metrics");
  ASSERT_EQ(metrics.status, 200);
  const std::regex name(R"((vllm:[a-z_]+|spillway_[a-z_]+))");
  std::set<std::string> names;
  const json::object dashboard = Dashboard();
  for (const json::value& p : dashboard.at("panels").as_array()) {
    for (const json::value& t : p.at("targets").as_array()) {
      const std::string expr(t.at("expr").as_string());
      for (auto it = std::sregex_iterator(expr.begin(), expr.end(), name);
           it != std::sregex_iterator(); ++it) {
        names.insert(it->str());
      }
    }
  }
  EXPECT_GE(names.size(), 7U);
  for (const std::string& n : names) {
    // A sample, or its TYPE line (a labelled counter has no sample before its first request).
    const std::string base = n.ends_with("_bucket") ? n.substr(0, n.size() - 7) : n;
    EXPECT_TRUE(metrics.body.find("\n" + n) != std::string::npos ||
                metrics.body.find("# TYPE " + base + " ") != std::string::npos)
        << n << " not in serve's /metrics";
  }
}

}  // namespace
}  // namespace spillway::policy
