// `spillway gateway` behind Debian's nginx (`proxy_pass`, `proxy_buffering off`, HTTP/1.1 to the
// upstream, `proxy_read_timeout 1s`), in front of one `spillway serve`: streams pass through
// unbuffered; nginx's timeout gives the client a 504 and its closed upstream connection reaches
// the engine (the request is aborted there); a client that leaves mid-stream reaches the engine
// through both proxies. Skipped when nginx is not installed (`make deps` installs it).

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>
#include <csignal>
#include <filesystem>

#include "common/run_command.h"
#include "common/temp_dir.h"
#include "common/text_file.h"
#include "gateway/gateway_fixture.h"

namespace spillway::gateway_test {
namespace {

using server_test::PendingRequest;
using server_test::SseDataPayloads;

/// A TCP port free right now on 127.0.0.1 (nginx cannot be told to pick one).
std::uint16_t FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

class LiveGatewayNginxTest : public GatewayFixture {
 protected:
  int upstreams() const override { return 1; }

  void SetUp() override {
    GatewayFixture::SetUp();
    if (HasFatalFailure()) {
      return;
    }
    nginx_ = testing_util::FindOnPath("nginx");
    if (!nginx_.has_value() && std::filesystem::exists("/usr/sbin/nginx")) {
      nginx_ = "/usr/sbin/nginx";
    }
    if (!nginx_.has_value()) {
      GTEST_SKIP() << "nginx is not installed: `make deps` installs the Debian package nginx";
    }
    port_ = FreePort();
    const std::string d = dir_.path().string();
    const std::string conf =
        dir_.Write("nginx.conf",
                   "daemon off;\nmaster_process off;\nworker_processes 1;\npid " + d +
                       "/nginx.pid;\n"
                       "error_log " +
                       d +
                       "/error.log info;\nevents { worker_connections 256; }\n"
                       "http {\n  access_log off;\n  client_body_temp_path " +
                       d +
                       "/body;\n"
                       "  proxy_temp_path " +
                       d + "/proxy;\n  fastcgi_temp_path " + d +
                       "/fastcgi;\n"
                       "  uwsgi_temp_path " +
                       d + "/uwsgi;\n  scgi_temp_path " + d +
                       "/scgi;\n"
                       "  server {\n    listen 127.0.0.1:" +
                       std::to_string(port_) +
                       ";\n"
                       "    location / {\n      proxy_pass http://127.0.0.1:" +
                       std::to_string(gateway().port()) +
                       ";\n      proxy_http_version 1.1;\n      proxy_set_header Connection \"\";\n"
                       "      proxy_buffering off;\n      proxy_read_timeout 1s;\n    }\n  }\n}\n");
    const int out = ::open((d + "/nginx.out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int in = ::open("/dev/null", O_RDONLY);
    std::vector<std::string> words = {*nginx_, "-c", conf, "-p", d};
    std::vector<char*> argv;
    for (std::string& w : words) {
      argv.push_back(w.data());
    }
    argv.push_back(nullptr);
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ == 0) {
      server_test::ExecChild(parent, in, out, argv.data());
    }
    ::close(out);
    ::close(in);
    nginx_client_.emplace(port_);
    ASSERT_TRUE(Eventually([&] { return nginx_client_->Get("/health", 1).status == 200; }, 5))
        << "nginx did not start; its log:\n"
        << testing_util::ReadTextFile(d + "/error.log");
  }

  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    GatewayFixture::TearDown();
  }

  double Running() {
    return MetricSum(upstream_client(0).Get("/metrics").body, "vllm:num_requests_running");
  }

  testing_util::TempDir dir_;
  std::optional<std::string> nginx_;
  std::uint16_t port_ = 0;
  pid_t pid_ = -1;
  std::optional<HttpClient> nginx_client_;
};

TEST_F(LiveGatewayNginxTest, StreamsAndAnswersPassThroughNginx) {
  const HttpResponse plain =
      nginx_client_->Post("/v1/completions", R"({"prompt":[1,2,3],"max_tokens":4})");
  EXPECT_EQ(plain.status, 200) << plain.body;
  const HttpResponse stream =
      nginx_client_->Post("/v1/completions", R"({"prompt":[1,2,3],"max_tokens":4,"stream":true})");
  ASSERT_EQ(stream.status, 200) << stream.body;
  const std::vector<std::string> events = SseDataPayloads(stream.body);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back(), "[DONE]");
}

TEST_F(LiveGatewayNginxTest, NginxsTimeoutIs504AndTheEngineAbortsTheRequest) {
  const HttpResponse r =
      nginx_client_->Post("/v1/completions", R"({"prompt":[1,2,3],"max_tokens":150})", {}, 10);
  EXPECT_EQ(r.status, 504) << "nginx's proxy_read_timeout (1 s) passed first: " << r.body;
  EXPECT_TRUE(Eventually([&] { return Running() == 0; }, 1.0))
      << "nginx closed its connection to the gateway, the gateway its connection to serve";
  EXPECT_EQ(MetricSum(upstream_client(0).Get("/metrics").body, "spillway_aborts_total",
                      {{"cause", "client_disconnect"}}),
            1);
}

TEST_F(LiveGatewayNginxTest, AClientLeavingMidStreamReachesTheEngineThroughBothProxies) {
  server_test::HttpRequest req;
  req.method = "POST";
  req.target = "/v1/completions";
  req.body = R"({"prompt":[1,2,3],"max_tokens":150,"stream":true})";
  PendingRequest stream(port_, req, 10);
  ASSERT_EQ(stream.ReadHead(5).status, 200);
  ASSERT_TRUE(stream.NextEvent(5).has_value());
  EXPECT_EQ(Running(), 1);
  stream.Close();
  EXPECT_TRUE(Eventually([&] { return Running() == 0; }, 1.0));
}

}  // namespace
}  // namespace spillway::gateway_test
