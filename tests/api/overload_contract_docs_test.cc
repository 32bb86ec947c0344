// The overload contract's table in docs/serve.md and the one in the code
// (api/overload_contract.h) are the same table: same rows, in the same order, with the same
// status, error type, retry verdict, meaning and x-llm-d-request-dropped-reason.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "api/overload_contract.h"

namespace spillway::api {
namespace {

/// The cells of a Markdown table row "| a | b |" (trimmed, backticks removed).
std::vector<std::string> Cells(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream in(line.substr(1));
  std::string cell;
  while (std::getline(in, cell, '|')) {
    std::string clean;
    for (char c : cell) {
      if (c != '`') {
        clean += c;
      }
    }
    const auto first = clean.find_first_not_of(' ');
    const auto last = clean.find_last_not_of(' ');
    cells.push_back(first == std::string::npos ? "" : clean.substr(first, last - first + 1));
  }
  return cells;
}

/// The rows of the contract table in docs/serve.md's "The overload contract" section.
std::vector<std::vector<std::string>> DocumentedRows() {
  std::ifstream in(std::string(SPILLWAY_SOURCE_DIR) + "/docs/serve.md");
  std::vector<std::vector<std::string>> rows;
  std::string line;
  bool in_section = false;
  bool in_table = false;
  while (std::getline(in, line)) {
    if (line.starts_with("## ")) {
      in_section = line == "## The overload contract";
      continue;
    }
    if (!in_section) {
      continue;
    }
    if (line.starts_with("| reason")) {  // the header row
      in_table = true;
      continue;
    }
    if (in_table && line.starts_with("| `")) {
      rows.push_back(Cells(line));
    } else if (in_table && !line.starts_with("|---")) {
      break;
    }
  }
  return rows;
}

TEST(OverloadContractDocsTest, DocsTableIsTheCodesTable) {
  const std::vector<std::vector<std::string>> documented = DocumentedRows();
  const std::vector<ContractRow>& rows = OverloadContract();
  ASSERT_EQ(documented.size(), rows.size()) << "docs/serve.md has a different number of rows";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ContractRow& row = rows[i];
    const std::vector<std::string>& doc = documented[i];
    ASSERT_GE(doc.size(), 6u) << "row " << i;
    EXPECT_EQ(doc[0], row.reason);
    EXPECT_EQ(doc[1], std::to_string(row.http_status)) << row.reason;
    EXPECT_EQ(doc[2], row.error_type) << row.reason;
    EXPECT_EQ(doc[3], row.retryable ? "yes" : "no") << row.reason;
    EXPECT_EQ(doc[4], row.meaning) << row.reason;
    EXPECT_EQ(doc[5], row.dropped_reason) << row.reason;
  }
}

TEST(OverloadContractTest, StatusesFollowTheContractsRules) {
  for (const ContractRow& row : OverloadContract()) {
    EXPECT_TRUE(row.http_status == 429 || row.http_status == 503 || row.http_status == 504 ||
                row.http_status == 400)
        << row.reason;
    // A 400 can never be served as asked: no retry helps. Every 429 and 503 may be retried.
    if (row.http_status == 400) {
      EXPECT_FALSE(row.retryable) << row.reason;
      EXPECT_EQ(row.error_type, "invalid_request_error") << row.reason;
    }
    if (row.http_status == 429 || row.http_status == 503) {
      EXPECT_TRUE(row.retryable) << row.reason;
    }
    EXPECT_EQ(FindContractRow(row.reason), &row);
    EXPECT_EQ(StatusOf(row.reason), row.http_status);
  }
  EXPECT_EQ(FindContractRow("something_new"), nullptr);
  EXPECT_EQ(StatusOf("something_new"), 503);  // never a 500 for load
}

TEST(OverloadContractTest, RefusalsForLoadAreWhatFairSheddingCountsAsContention) {
  for (const char* load : {"queue_delay_exceeded", "kv_saturation", "deadline_unreachable",
                           "queue_deadline_exceeded", "queue_full", "queued_tokens_full"}) {
    EXPECT_TRUE(IsRefusalForLoad(StatusOf(load), load)) << load;
  }
  for (const char* other : {"fair_share", "rate_limited", "token_rate_limited", "draining",
                            "request_timeout", "context_length_exceeded"}) {
    EXPECT_FALSE(IsRefusalForLoad(StatusOf(other), other)) << other;
  }
  // An engine that does not say why (vLLM's 429 or 503): load.
  EXPECT_TRUE(IsRefusalForLoad(429, ""));
  EXPECT_TRUE(IsRefusalForLoad(503, "something_new"));
  EXPECT_FALSE(IsRefusalForLoad(400, ""));
}

}  // namespace
}  // namespace spillway::api
