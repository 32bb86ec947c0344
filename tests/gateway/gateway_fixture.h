#pragma once
// Base fixture of the live gateway tests: SetUp starts `upstreams()` `spillway serve`
// processes (emulated engines) on loopback and `spillway gateway` in front of them, each on
// port 0; TearDown checks the gateway's conservation ledger (received == shed + completed +
// failed + cancelled, nothing in flight), stops everything and, when the test failed, prints
// what each process wrote.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/http_client.h"
#include "common/server_fixture.h"
#include "common/server_process.h"

namespace spillway::gateway_test {

using server_test::HttpClient;
using server_test::HttpResponse;
using server_test::MetricSum;
using server_test::ServerProcess;

class GatewayFixture : public ::testing::Test {
 protected:
  virtual int upstreams() const { return 3; }
  /// Flags of every `serve` after `--port 0`.
  virtual std::vector<std::string> UpstreamArgs(int /*index*/) const { return {}; }
  /// Flags of the gateway after `--port 0` and the --endpoint flags.
  virtual std::vector<std::string> GatewayArgs() const { return {}; }
  /// False: the gateway gets no --endpoint flags (GatewayArgs names a config file instead).
  virtual bool EndpointsAsFlags() const { return true; }
  /// Runs once the upstreams listen, before the gateway starts (to write its config file).
  virtual void BeforeGateway() {}
  /// The endpoints whose first scrape SetUp waits for (those with metrics).
  virtual int scraped_upstreams() const { return upstreams(); }

  void SetUp() override {
    std::vector<std::string> args;
    for (int i = 0; i < upstreams(); ++i) {
      upstreams_.push_back(std::make_unique<ServerProcess>(UpstreamArgs(i)));
    }
    for (const auto& up : upstreams_) {
      ASSERT_TRUE(up->WaitUntilListening(15)) << up->command_line() << ": " << up->error();
      if (EndpointsAsFlags()) {
        args.push_back("--endpoint");
        args.push_back(Url(*up));
      }
    }
    BeforeGateway();
    for (const std::string& a : GatewayArgs()) {
      args.push_back(a);
    }
    gateway_ = std::make_unique<ServerProcess>(args, "gateway");
    ASSERT_TRUE(gateway_->WaitUntilListening(15))
        << gateway_->command_line() << ": " << gateway_->error();
    client_.emplace(gateway_->port());
    WaitForFirstScrapes();
  }

  void TearDown() override {
    if (gateway_ != nullptr && gateway_->running() && client_.has_value()) {
      ExpectLedgerBalanced();
    }
    if (gateway_ != nullptr) {
      gateway_->Stop();
    }
    for (const auto& up : upstreams_) {
      up->Stop();
    }
    if (HasFailure()) {
      for (const ServerProcess* p : Processes()) {
        std::cerr << "--- " << p->command_line() << " output ---\n"
                  << p->Output() << "--- end ---\n";
      }
    }
  }

  static std::string Url(const ServerProcess& p) {
    return "http://127.0.0.1:" + std::to_string(p.port());
  }
  const HttpClient& gateway() const { return *client_; }
  ServerProcess& gateway_process() { return *gateway_; }
  ServerProcess& upstream(int i) { return *upstreams_[static_cast<std::size_t>(i)]; }
  const ServerProcess& upstream(int i) const { return *upstreams_[static_cast<std::size_t>(i)]; }
  HttpClient upstream_client(int i) const {
    return HttpClient(upstreams_[static_cast<std::size_t>(i)]->port());
  }

  std::string GatewayMetrics() const {
    const HttpResponse r = gateway().Get("/metrics");
    EXPECT_EQ(r.status, 200) << r.error;
    return r.body;
  }

  /// Polls `fetch()` every 50 ms until `done` holds on it or `timeout_s` passes.
  static bool Eventually(const std::function<bool()>& done, double timeout_s) {
    const auto give_up = std::chrono::steady_clock::now() +
                         std::chrono::milliseconds(static_cast<int>(timeout_s * 1000));
    while (!done()) {
      if (std::chrono::steady_clock::now() > give_up) {
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
  }

  /// The gateway's endpoint_state gauge of upstream `i` for `state`.
  double EndpointState(int i, const std::string& state) const {
    return MetricSum(
        GatewayMetrics(), "spillway_gateway_endpoint_state",
        {{"endpoint", Url(*upstreams_[static_cast<std::size_t>(i)])}, {"state", state}});
  }

  /// received == shed + completed + failed + cancelled, and nothing in flight.
  void ExpectLedgerBalanced() const {
    std::string m;
    const bool settled = Eventually(
        [&] {
          m = GatewayMetrics();
          return MetricSum(m, "spillway_gateway_in_flight") == 0;
        },
        10);
    EXPECT_TRUE(settled) << "requests still in flight at the gateway";
    const double received = MetricSum(m, "spillway_gateway_received_total");
    const double ended = MetricSum(m, "spillway_gateway_shed_total") +
                         MetricSum(m, "spillway_gateway_completed_total") +
                         MetricSum(m, "spillway_gateway_failed_total") +
                         MetricSum(m, "spillway_gateway_cancelled_total");
    EXPECT_EQ(received, ended) << m;
  }

 private:
  /// Every endpoint scraped once (the router has their load) before the test starts (with the
  /// endpoints in a config file, as many scrapes, of whichever endpoints it names).
  void WaitForFirstScrapes() {
    ASSERT_TRUE(Eventually(
        [&] {
          return MetricSum(GatewayMetrics(), "spillway_gateway_scrapes_total",
                           {{"result", "ok"}}) >= scraped_upstreams();
        },
        10))
        << GatewayMetrics();
  }
  std::vector<const ServerProcess*> Processes() const {
    std::vector<const ServerProcess*> out;
    for (const auto& up : upstreams_) {
      out.push_back(up.get());
    }
    if (gateway_ != nullptr) {
      out.push_back(gateway_.get());
    }
    return out;
  }

  std::vector<std::unique_ptr<ServerProcess>> upstreams_;
  std::unique_ptr<ServerProcess> gateway_;
  std::optional<HttpClient> client_;
};

}  // namespace spillway::gateway_test
