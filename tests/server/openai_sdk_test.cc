// The official OpenAI Node SDK against the real server: tests/server/openai_node/sdk_test.mjs
// lists the models, runs a non-streaming and a streaming chat completion, and checks the SDK's
// own retry of a 429 after Retry-After (a tenant with a 1 request/s, burst 1 token bucket). The
// SDK is installed with `npm ci` from the committed lock into <build>/openai_node/, once.

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/http_client.h"
#include "common/server_fixture.h"
#include "common/temp_dir.h"

namespace spillway {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

/// The first executable `name` in a PATH directory, or nullopt.
std::optional<fs::path> FindOnPath(std::string_view name) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "";
  while (!dirs.empty()) {
    const std::size_t colon = dirs.find(':');
    const std::string_view dir = dirs.substr(0, colon);
    dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate)) {
      return candidate;
    }
  }
  return std::nullopt;
}

struct CommandResult {
  bool ran = false;         ///< false: fork failed or the deadline passed (the command was killed)
  int exit_code = -1;       ///< the exit code when it exited, else -1
  std::string output;       ///< stdout and stderr, interleaved
  std::string description;  ///< "exit code N", "killed by signal N", "timed out after N s", ...
};

/// Runs `argv` in `cwd` with stdin from /dev/null and stdout + stderr captured, in its own
/// process group, which is SIGKILLed when `timeout_s` passes.
CommandResult RunCommand(const std::vector<std::string>& argv, const fs::path& cwd,
                         double timeout_s) {
  CommandResult result;
  const fs::path log = fs::path(::testing::TempDir()) /
                       ("spillway_openai_sdk_" + std::to_string(::getpid()) + ".log");
  const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (log_fd < 0 || null_fd < 0) {
    result.description = "open: " + std::string(std::strerror(errno));
    return result;
  }
  std::vector<std::string> words = argv;
  std::vector<char*> args;
  for (std::string& w : words) {
    args.push_back(w.data());
  }
  args.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {  // only async-signal-safe calls until execv
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent || ::chdir(cwd.c_str()) != 0) {
      ::_exit(127);
    }
    ::dup2(null_fd, STDIN_FILENO);
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    ::close_range(3, ~0U, 0);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(log_fd);
  ::close(null_fd);
  if (pid < 0) {
    result.description = "fork: " + std::string(std::strerror(errno));
    return result;
  }
  ::setpgid(pid, pid);  // also here, so the kill below finds the group whoever runs first
  const auto give_up = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(static_cast<int>(timeout_s * 1000));
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      break;
    }
    if (r < 0 && errno != EINTR) {
      result.description = "waitpid: " + std::string(std::strerror(errno));
      return result;
    }
    if (std::chrono::steady_clock::now() > give_up) {
      ::kill(-pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      result.output = ReadFile(log);
      result.description = "timed out after " + std::to_string(timeout_s) + " s (killed)";
      fs::remove(log);
      return result;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(-pid, SIGKILL);  // leftovers of the group, if any
  result.output = ReadFile(log);
  fs::remove(log);
  result.ran = true;
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
    result.description = "exit code " + std::to_string(result.exit_code);
  } else {
    result.description = "killed by signal " + std::to_string(WTERMSIG(status));
  }
  return result;
}

/// Holds an exclusive flock on a file while alive: ctest may run other tests of this binary
/// (and other build trees' binaries have their own directory) at the same time.
class FileLock {
 public:
  explicit FileLock(const fs::path& path)
      : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    while (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  ~FileLock() {
    if (fd_ >= 0) {
      ::close(fd_);
    }
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

constexpr char kKey[] = "sdk-test-key";
constexpr char kLimitedKey[] = "sdk-test-limited-key";

class OpenAiSdkTest : public server_test::ServerFixture {
 protected:
  void SetUp() override {
    node_ = FindOnPath("node");
    npm_ = FindOnPath("npm");
    if (!node_.has_value() || !npm_.has_value()) {
      GTEST_SKIP() << "needs node and npm on PATH for the OpenAI Node SDK (`make deps` installs "
                      "them)";
    }
    ServerFixture::SetUp();
  }

  std::vector<std::string> ServerArgs() override {
    // An unlimited tenant for the completions, and one whose bucket holds a single request.
    const std::string yaml = std::string("api_keys:\n") + "  - {key: " + kKey + ", tenant: sdk}\n" +
                             "  - {key: " + kLimitedKey +
                             ", tenant: sdk-limited, rate_rps: 1, burst: 1}\n";
    const std::string config = dir_.Write("openai_sdk.yaml", yaml);
    return {"--config", config};
  }

  /// <build>/openai_node with the SDK installed by `npm ci` from the committed lock, and the
  /// current sdk_test.mjs. Installs only when node_modules is missing or came from another lock
  /// (the marker file holds the lock it was installed from; a killed install leaves none).
  /// `*unreachable` is set when npm could not reach the registry at all (DNS, connection, or
  /// TLS: a proxy whose CA this machine lacks); the test then skips, saying so.
  fs::path InstallSdk(bool* unreachable) {
    *unreachable = false;
    const fs::path source = fs::path(SPILLWAY_SOURCE_DIR) / "tests/server/openai_node";
    const fs::path build = fs::path(SPILLWAY_BINARY).parent_path();
    const fs::path dir = build / "openai_node";
    const fs::path marker = dir / "node_modules/.spillway-installed-lock";
    FileLock lock(build / "openai_node.lock");
    fs::create_directories(dir);
    const std::string want_lock = ReadFile(source / "package-lock.json");
    EXPECT_FALSE(want_lock.empty()) << source / "package-lock.json";
    const auto copy = fs::copy_options::overwrite_existing;
    fs::copy_file(source / "sdk_test.mjs", dir / "sdk_test.mjs", copy);
    if (fs::exists(marker) && ReadFile(marker) == want_lock) {
      return dir;
    }
    fs::copy_file(source / "package.json", dir / "package.json", copy);
    fs::copy_file(source / "package-lock.json", dir / "package-lock.json", copy);
    // Debian's node ignores the system CA store unless told; use it, as curl and git do (a
    // machine behind a TLS-inspecting proxy has the proxy's CA there).
    if (std::getenv("NODE_EXTRA_CA_CERTS") == nullptr &&
        fs::exists("/etc/ssl/certs/ca-certificates.crt")) {
      ::setenv("NODE_EXTRA_CA_CERTS", "/etc/ssl/certs/ca-certificates.crt", 0);
    }
    const auto start = std::chrono::steady_clock::now();
    const CommandResult npm = RunCommand({npm_->string(), "ci", "--no-audit", "--no-fund",
                                          "--no-update-notifier", "--fetch-timeout=60000"},
                                         dir, 180);
    const double took_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (const char* code : {"SELF_SIGNED_CERT_IN_CHAIN", "UNABLE_TO_GET_ISSUER_CERT",
                             "UNABLE_TO_VERIFY_LEAF_SIGNATURE", "ENOTFOUND", "EAI_AGAIN",
                             "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENETUNREACH"}) {
      if (npm.exit_code != 0 && npm.output.find(code) != std::string::npos) {
        *unreachable = true;
        std::cout << "npm could not reach the registry (" << code << "):\n" << npm.output;
        return dir;
      }
    }
    EXPECT_TRUE(npm.ran && npm.exit_code == 0)
        << "`npm ci` in " << dir
        << " (installs the openai package; needs the npm registry): " << npm.description << "\n"
        << npm.output;
    if (npm.ran && npm.exit_code == 0) {
      std::ofstream(marker, std::ios::binary) << want_lock;
      std::cout << "npm ci installed the OpenAI Node SDK in " << dir << " (" << took_s << " s)\n";
    }
    return dir;
  }

  testing_util::TempDir dir_;
  std::optional<fs::path> node_;
  std::optional<fs::path> npm_;
};

TEST_F(OpenAiSdkTest, ChatCompletionsStreamingAndRetryOn429) {
  bool unreachable = false;
  const fs::path dir = InstallSdk(&unreachable);
  if (unreachable) {
    GTEST_SKIP() << "the npm registry is unreachable from this machine (see npm's output above); "
                    "the OpenAI Node SDK test needs it to install the `openai` package";
  }
  ASSERT_FALSE(HasFailure()) << "no OpenAI Node SDK to run";

  const std::string base_url = "http://127.0.0.1:" + std::to_string(server().port()) + "/v1";
  const auto start = std::chrono::steady_clock::now();
  const CommandResult node =
      RunCommand({node_->string(), "sdk_test.mjs", base_url, kKey, kLimitedKey}, dir, 120);
  const double took_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(node.ran && node.exit_code == 0) << "node sdk_test.mjs " << base_url << ": "
                                               << node.description << " after " << took_s << " s\n"
                                               << node.output;
  if (node.ran && node.exit_code == 0) {
    std::cout << node.output << "(" << took_s << " s)\n";
  }

  // The server's side of the retry: one rate_limited rejection of the limited tenant, and none
  // of the unlimited one.
  const std::string metrics = Metrics();
  EXPECT_EQ(server_test::MetricSum(
                metrics, "spillway_admission_decisions_total",
                {{"decision", "reject"}, {"reason", "rate_limited"}, {"tenant", "sdk-limited"}}),
            1)
      << metrics;
  EXPECT_EQ(server_test::MetricSum(metrics, "spillway_admission_decisions_total",
                                   {{"decision", "reject"}, {"tenant", "sdk"}}),
            0)
      << metrics;
  EXPECT_EQ(server_test::MetricSum(metrics, "spillway_http_requests_total", {{"status", "429"}}), 1)
      << metrics;
}

// The same script through `spillway gateway` in front of the server: the gateway relays the
// completions and the stream, and passes the server's 429 rate_limited on with its Retry-After,
// which the SDK honours before its retry succeeds.
TEST_F(OpenAiSdkTest, TheSameThroughTheGateway) {
  bool unreachable = false;
  const fs::path dir = InstallSdk(&unreachable);
  if (unreachable) {
    GTEST_SKIP() << "the npm registry is unreachable from this machine (see npm's output above)";
  }
  ASSERT_FALSE(HasFailure()) << "no OpenAI Node SDK to run";
  // The server wants a key for GET /v1/models too: the gateway is told the model.
  server_test::ServerProcess gateway(
      {"--endpoint", "http://127.0.0.1:" + std::to_string(server().port()), "--model",
       "spillway-emulated"},
      "gateway");
  ASSERT_TRUE(gateway.WaitUntilListening(15)) << gateway.error();
  const std::string base_url = "http://127.0.0.1:" + std::to_string(gateway.port()) + "/v1";
  const CommandResult node = RunCommand({node_->string(), "sdk_test.mjs", base_url, kKey,
                                         kLimitedKey, "spillway_gateway_requests_total"},
                                        dir, 120);
  EXPECT_TRUE(node.ran && node.exit_code == 0)
      << "node sdk_test.mjs " << base_url << ": " << node.description << "\n"
      << node.output << "\ngateway:\n"
      << gateway.Output();
  const std::string gateway_metrics = server_test::HttpClient(gateway.port()).Get("/metrics").body;
  EXPECT_EQ(
      server_test::MetricSum(gateway_metrics, "spillway_gateway_requests_total",
                             {{"status", "429"}, {"reason", "rate_limited"}, {"by", "endpoint"}}),
      1)
      << gateway_metrics;
  EXPECT_EQ(server_test::MetricSum(Metrics(), "spillway_http_requests_total", {{"status", "429"}}),
            1);
}

}  // namespace
}  // namespace spillway
