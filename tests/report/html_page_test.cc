#include "report/html_page.h"

#include <gtest/gtest.h>

#include "report/gnuplot_charts.h"
#include "report/table.h"
#include "report_test_util.h"

namespace spillway {
namespace {

using report_test::Count;
using report_test::TinyRun;

TEST(ReportHtmlTest, EscapesTheFiveSpecialCharacters) {
  EXPECT_EQ(HtmlEscape(R"(<a href="x">Tom & Jerry's</a>)"),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;");
  EXPECT_EQ(HtmlEscape("plain"), "plain");
}

TEST(ReportHtmlTest, PageHasTheRunsTheTableRowsAndTheCharts) {
  const std::vector<RunSummary> runs = {TinyRun("unbounded"), TinyRun("predictive")};
  const std::vector<std::string> labels = {"unbounded", "predictive"};
  const GnuplotJob job = BuildGnuplotJob(runs, labels);
  const std::string html = BuildHtmlPage(runs, labels, {"a.json", "a.json"}, job);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<title>Spillway report: tiny</title>"), std::string::npos);
  for (const TableRow& row : CompareRows(runs)) {  // the CLI table's rows, in the same words
    EXPECT_NE(html.find("<th>" + HtmlEscape(row.label) + "</th>"), std::string::npos) << row.label;
  }
  ASSERT_FALSE(job.charts.empty());
  for (const ChartSpec& c : job.charts) {
    EXPECT_EQ(Count(html, "<img src=\"" + c.svg + "\""), 1) << c.svg;
  }
  EXPECT_NE(html.find("TTFT 1 s, TPOT 0.2 s"), std::string::npos);
  // Nothing fetched from elsewhere: no script, no stylesheet or image from a URL.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
}

TEST(ReportHtmlTest, TextFromTheRunsIsEscaped) {
  RunSummary evil = TinyRun("<script>alert('x')</script>", "a&b \"quoted\"");
  evil.profile = "<img src=x onerror=alert(1)>";
  evil.rejected_by_reason.clear();
  evil.rejected_by_reason["<b>reason</b>"] = 1;
  const std::vector<RunSummary> runs = {evil};
  const std::vector<std::string> labels = {evil.policy};
  const std::string html =
      BuildHtmlPage(runs, labels, {"<dir>/runs.json"}, BuildGnuplotJob(runs, labels));
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<img src=x"), std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_EQ(html.find("<dir>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("a&amp;b &quot;quoted&quot;"), std::string::npos);
  EXPECT_NE(html.find("&lt;dir&gt;/runs.json"), std::string::npos);
}

}  // namespace
}  // namespace spillway
