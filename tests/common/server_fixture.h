#pragma once
// Base fixture of the server integration tests: SetUp starts `spillway serve --port 0` with the
// subclass's flags and waits for it to listen; TearDown stops it (SIGTERM, then SIGKILL) and,
// when the test failed, prints what the server wrote to stderr. Plus helpers for the OpenAI
// error contract and for polling /metrics.

#include <chrono>
#include <cstdint>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "common/http_client.h"
#include "common/server_process.h"

namespace spillway::server_test {

namespace json = boost::json;

/// A completion request with a token-id prompt, small enough to finish in well under a second.
inline std::string SmallCompletionBody(int max_tokens = 4) {
  return R"({"prompt":[1,2,3],"max_tokens":)" + std::to_string(max_tokens) + "}";
}

/// A completion request with a `prompt_tokens`-token id prompt (ids 100, 101, ...) and
/// `max_tokens` output tokens, streamed or not.
inline std::string CompletionBody(int prompt_tokens, int max_tokens, bool stream = false) {
  std::string prompt;
  for (int i = 0; i < prompt_tokens; ++i) {
    prompt += (i == 0 ? "" : ",") + std::to_string(100 + i % 1000);
  }
  return R"({"prompt":[)" + prompt + R"(],"max_tokens":)" + std::to_string(max_tokens) +
         R"(,"ignore_eos":true,"stream":)" + (stream ? "true" : "false") + "}";
}

/// POST /v1/completions with `body`, for a PendingRequest (a stream read piece by piece or left).
inline HttpRequest CompletionRequest(std::string body) {
  HttpRequest r;
  r.method = "POST";
  r.target = "/v1/completions";
  r.body = std::move(body);
  return r;
}

/// Parses `text` as JSON; nullopt when it is not.
inline std::optional<json::value> ParseJson(const std::string& text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec) {
    return std::nullopt;
  }
  return v;
}

/// The value at JSON pointer `pointer` (RFC 6901) in `v`, or nullptr.
inline const json::value* At(const json::value& v, std::string_view pointer) {
  boost::system::error_code ec;
  const json::value* found = v.find_pointer(pointer, ec);
  return ec ? nullptr : found;
}

/// The string at `pointer`, or nullopt when absent or not a string.
inline std::optional<std::string> StringAt(const json::value& v, std::string_view pointer) {
  const json::value* found = At(v, pointer);
  if (found == nullptr || !found->is_string()) {
    return std::nullopt;
  }
  return std::string(found->as_string());
}

/// The integer at `pointer`, or nullopt when absent or not an integer.
inline std::optional<std::int64_t> IntAt(const json::value& v, std::string_view pointer) {
  const json::value* found = At(v, pointer);
  if (found == nullptr || !(found->is_int64() || found->is_uint64())) {
    return std::nullopt;
  }
  return found->to_number<std::int64_t>();
}

/// Checks the OpenAI error contract: `status`, a JSON body {"error": {"message": non-empty
/// string, "type": string, "param": string or null, "code": `code`}}.
inline ::testing::AssertionResult IsOpenAiError(const HttpResponse& r, int status,
                                                const std::string& code) {
  if (r.status != status) {
    return ::testing::AssertionFailure() << "status " << r.status << " (want " << status
                                         << "), error '" << r.error << "', body: " << r.body;
  }
  const std::optional<json::value> v = ParseJson(r.body);
  const json::object* root = v.has_value() ? v->if_object() : nullptr;
  const json::value* error = root != nullptr ? root->if_contains("error") : nullptr;
  const json::object* e = error != nullptr ? error->if_object() : nullptr;
  if (e == nullptr) {
    return ::testing::AssertionFailure() << "body is not {\"error\": {...}}: " << r.body;
  }
  const json::value* message = e->if_contains("message");
  const json::value* type = e->if_contains("type");
  const json::value* param = e->if_contains("param");
  const json::value* got_code = e->if_contains("code");
  if (message == nullptr || !message->is_string() || message->as_string().empty() ||
      type == nullptr || !type->is_string() || param == nullptr ||
      !(param->is_string() || param->is_null()) || got_code == nullptr ||
      !(got_code->is_string() || got_code->is_null())) {
    return ::testing::AssertionFailure()
           << "error object lacks message/type/param/code of the right types: " << r.body;
  }
  if (!got_code->is_string() || got_code->as_string() != code) {
    return ::testing::AssertionFailure() << "error code " << json::serialize(*got_code)
                                         << " (want \"" << code << "\"): " << r.body;
  }
  return ::testing::AssertionSuccess();
}

class ServerFixture : public ::testing::Test {
 protected:
  /// Flags after `serve --port 0`.
  virtual std::vector<std::string> ServerArgs() { return {}; }

  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(ServerArgs());
    ASSERT_TRUE(server_->WaitUntilListening(15))
        << server_->command_line() << ": " << server_->error();
    client_.emplace(server_->port());
  }

  void TearDown() override {
    if (server_ == nullptr) {
      return;
    }
    server_->Stop();
    if (HasFailure()) {
      std::cerr << "--- " << server_->command_line() << " output ---\n"
                << server_->Output() << "--- end of server output ---\n";
    }
    server_.reset();
  }

  const HttpClient& client() const { return *client_; }
  ServerProcess& server() { return *server_; }

  /// The /metrics exposition (empty when the scrape failed, with a test failure).
  std::string Metrics() const {
    const HttpResponse r = client().Get("/metrics");
    EXPECT_EQ(r.status, 200) << r.error;
    return r.status == 200 ? r.body : std::string();
  }

  /// Scrapes /metrics every 50 ms until `done` holds, for at most `timeout_s`. Returns the last
  /// exposition read; `*held` says whether `done` held on it.
  std::string PollMetrics(const std::function<bool(const std::string&)>& done, double timeout_s,
                          bool* held) const {
    const auto give_up = std::chrono::steady_clock::now() +
                         std::chrono::milliseconds(static_cast<int>(timeout_s * 1000));
    std::string text;
    for (;;) {
      text = Metrics();
      *held = done(text);
      if (*held || std::chrono::steady_clock::now() > give_up) {
        return text;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  /// A small completion succeeds (200, finish_reason length): the server still serves.
  void ExpectNormalCompletionSucceeds() const {
    const HttpResponse r = client().Post("/v1/completions", SmallCompletionBody());
    ASSERT_EQ(r.status, 200) << r.error << " " << r.body;
    const std::optional<json::value> v = ParseJson(r.body);
    ASSERT_TRUE(v.has_value()) << r.body;
    EXPECT_EQ(StringAt(*v, "/choices/0/finish_reason"), "length") << r.body;
  }

  std::unique_ptr<ServerProcess> server_;
  std::optional<HttpClient> client_;
};

/// The model label every vLLM-named metric carries.
inline const std::map<std::string, std::string>& ModelLabel() {
  static const std::map<std::string, std::string> kLabel = {{"model_name", "spillway-emulated"}};
  return kLabel;
}

}  // namespace spillway::server_test
