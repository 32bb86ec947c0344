// The /metrics exposition against the real Prometheus tools (Debian package `prometheus`):
// `promtool check metrics` finds nothing in it but the lint on the ':' that vLLM's own metric
// names carry, and a Prometheus server started on loopback scrapes it and answers a query for
// every series of every metric family. Skipped when the tools are not installed.

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/http_client.h"
#include "common/server_fixture.h"
#include "common/temp_dir.h"
#include "common/text_file.h"

namespace spillway {
namespace {

using server_test::HttpClient;
using server_test::HttpRequest;
using server_test::HttpResponse;
using server_test::MetricCount;
using server_test::MetricSum;
using server_test::ModelLabel;
using server_test::ParseJson;
using server_test::PendingRequest;
using server_test::StringAt;
using testing_util::TempDir;
namespace json = boost::json;
using Clock = std::chrono::steady_clock;

constexpr const char* kPromtool = "/usr/bin/promtool";
constexpr const char* kPrometheus = "/usr/bin/prometheus";
constexpr const char* kSkipMessage =
    " is not installed: `make deps` installs the Debian package `prometheus`";

// What promtool 2.42 prints, after the metric name, for a name that contains ':'. Recording
// rules use colons, so the lint flags them in exported names, but vLLM's names carry them and
// dashboards built for vLLM query them as they are.
constexpr std::string_view kColonLint = "metric names should not contain ':'";

// promtool's exit statuses: 0 no problem, 1 the input did not parse, 3 lint problems.
constexpr int kPromtoolLintProblems = 3;

Clock::time_point After(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

using testing_util::NonEmptyLines;
using testing_util::ReadTextFile;

// A child process running `argv` (argv[0] an absolute path) with stdin from `stdin_path` and
// stdout and stderr appended to `output_path`. Never left behind: the destructor sends
// SIGTERM, then SIGKILL after a grace period, and reaps it; the child also gets SIGKILL when
// the test process dies first (PR_SET_PDEATHSIG).
class ChildProcess {
 public:
  ChildProcess(std::vector<std::string> argv, const std::string& stdin_path,
               const std::string& output_path) {
    for (const std::string& w : argv) {
      command_line_ += (command_line_.empty() ? "" : " ") + w;
    }
    const int in_fd = ::open(stdin_path.c_str(), O_RDONLY | O_CLOEXEC);
    const int out_fd = ::open(output_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (in_fd < 0 || out_fd < 0) {
      error_ = "cannot open " + stdin_path + " or " + output_path + ": " + std::strerror(errno);
      if (in_fd >= 0) {
        ::close(in_fd);
      }
      if (out_fd >= 0) {
        ::close(out_fd);
      }
      return;
    }
    std::vector<char*> args;
    for (std::string& w : argv) {
      args.push_back(w.data());
    }
    args.push_back(nullptr);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) {
      server_test::ExecChild(parent, in_fd, out_fd, args.data());
    }
    ::close(in_fd);
    ::close(out_fd);
    if (pid < 0) {
      error_ = std::string("fork: ") + std::strerror(errno);
      return;
    }
    pid_ = pid;
  }

  ~ChildProcess() { Stop(); }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  bool started() const { return pid_ > 0; }
  const std::string& error() const { return error_; }
  const std::string& command_line() const { return command_line_; }
  bool running() const { return pid_ > 0 && !exit_status_.has_value(); }

  /// Waits up to `timeout_s` for the child to exit; its raw wait status, or nullopt while it
  /// still runs.
  std::optional<int> WaitForExit(double timeout_s) {
    if (exit_status_.has_value() || pid_ <= 0) {
      return exit_status_;
    }
    const auto give_up = After(timeout_s);
    for (;;) {
      int status = 0;
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        exit_status_ = status;
        return exit_status_;
      }
      if (r < 0 && errno != EINTR) {
        exit_status_ = -1;
        return exit_status_;
      }
      if (Clock::now() >= give_up) {
        return std::nullopt;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  /// SIGTERM, up to `grace_s` to exit, then SIGKILL; always reaps the child.
  void Stop(double grace_s = 5.0) {
    if (!running()) {
      return;
    }
    ::kill(pid_, SIGTERM);
    if (WaitForExit(grace_s).has_value()) {
      return;
    }
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    exit_status_ = status;
  }

 private:
  pid_t pid_ = -1;
  std::optional<int> exit_status_;
  std::string command_line_;
  std::string error_;
};

// A loopback port no one listened on a moment ago (the kernel's pick for port 0); 0 on error.
std::uint16_t PickFreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return 0;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  std::uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

// Percent-encodes everything but RFC 3986's unreserved characters.
std::string UrlEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 0xF];
    }
  }
  return out;
}

struct MetricFamily {
  std::string name;
  std::string type;
};

// The families an exposition declares with `# TYPE name type`, in order.
std::vector<MetricFamily> Families(const std::string& exposition) {
  std::vector<MetricFamily> out;
  for (const std::string& line : NonEmptyLines(exposition)) {
    if (!line.starts_with("# TYPE ")) {
      continue;
    }
    const std::string rest = line.substr(7);
    const std::size_t space = rest.find(' ');
    if (space != std::string::npos) {
      out.push_back({rest.substr(0, space), rest.substr(space + 1)});
    }
  }
  return out;
}

// The series names a family's samples carry: name_bucket, _sum and _count for a histogram,
// name, _sum and _count for a summary, the family name itself otherwise.
std::vector<std::string> SeriesNames(const MetricFamily& family) {
  if (family.type == "histogram") {
    return {family.name + "_bucket", family.name + "_sum", family.name + "_count"};
  }
  if (family.type == "summary") {
    return {family.name, family.name + "_sum", family.name + "_count"};
  }
  return {family.name};
}

// The number of sample lines of `family` in `exposition`.
int SampleCount(const std::string& exposition, const MetricFamily& family) {
  int n = 0;
  for (const std::string& series : SeriesNames(family)) {
    n += MetricCount(exposition, series);
  }
  return n;
}

class PrometheusTest : public server_test::ServerFixture {
 protected:
  // Requests that give every family of the exposition at least one sample: completions (token
  // counters, success by finish reason, every latency histogram, admission decisions, HTTP
  // statuses) and a stream its client leaves early (an abort). Returns the exposition once the
  // engine is idle again with the abort counted.
  std::string ExpositionAfterTraffic() {
    for (int i = 0; i < 3; ++i) {
      ExpectNormalCompletionSucceeds();
    }
    const HttpRequest long_stream =
        server_test::CompletionRequest(R"({"prompt":[1,2,3,4],"max_tokens":200,"stream":true})");
    {
      PendingRequest stream(client().port(), long_stream, 10);
      EXPECT_TRUE(stream.ok()) << stream.error();
      EXPECT_EQ(stream.ReadHead(10).status, 200) << stream.error();
      EXPECT_TRUE(stream.NextEvent(10).has_value()) << stream.error();
      stream.Close();  // leaves with most of its tokens still to come
    }
    bool settled = false;
    const std::string text = PollMetrics(
        [](const std::string& m) {
          return MetricSum(m, "spillway_aborts_total") >= 1 &&
                 MetricSum(m, "vllm:num_requests_running", ModelLabel()) == 0 &&
                 MetricSum(m, "vllm:num_requests_waiting", ModelLabel()) == 0;
        },
        10, &settled);
    EXPECT_TRUE(settled) << "no abort counted with the engine idle within 10 s:\n" << text;
    return text;
  }

  TempDir dir_;
};

TEST_F(PrometheusTest, PromtoolReportsOnlyTheColonInVllmNames) {
  if (::access(kPromtool, X_OK) != 0) {
    GTEST_SKIP() << kPromtool << kSkipMessage;
  }
  const std::string exposition = ExpositionAfterTraffic();
  ASSERT_FALSE(HasFailure());
  const std::vector<MetricFamily> families = Families(exposition);
  ASSERT_FALSE(families.empty()) << exposition;
  for (const MetricFamily& family : families) {
    // promtool lints the families as they look in service: every one has samples.
    EXPECT_GT(SampleCount(exposition, family), 0) << family.name << " has no sample";
  }

  const std::string input = dir_.Write("metrics.txt", exposition);
  const std::string output = (dir_.path() / "promtool.out").string();
  ChildProcess promtool({kPromtool, "check", "metrics"}, input, output);
  ASSERT_TRUE(promtool.started()) << promtool.error();
  const std::optional<int> status = promtool.WaitForExit(30);
  ASSERT_TRUE(status.has_value()) << "promtool still runs after 30 s";
  const std::string printed = ReadTextFile(output);
  SCOPED_TRACE("promtool check metrics printed:\n" + printed);
  ASSERT_TRUE(WIFEXITED(*status)) << "wait status " << *status;

  // Every line promtool prints is "<metric name> <problem>"; the only problem allowed is the
  // colon lint, and it must name exactly the families whose names carry a colon (which shows
  // promtool read the whole exposition).
  std::set<std::string> colon_lints;
  for (const std::string& line : NonEmptyLines(printed)) {
    const std::size_t space = line.find(' ');
    const std::string name = line.substr(0, space);
    const bool colon_lint = space != std::string::npos &&
                            std::string_view(line).substr(space + 1) == kColonLint &&
                            name.find(':') != std::string::npos;
    EXPECT_TRUE(colon_lint) << "promtool reports a problem other than the colon lint: " << line;
    if (colon_lint) {
      colon_lints.insert(name);
    }
  }
  std::set<std::string> colon_families;
  for (const MetricFamily& family : families) {
    if (family.name.find(':') != std::string::npos) {
      colon_families.insert(family.name);
    }
  }
  EXPECT_EQ(colon_lints, colon_families);
  EXPECT_EQ(WEXITSTATUS(*status), colon_families.empty() ? 0 : kPromtoolLintProblems);
}

TEST_F(PrometheusTest, PrometheusScrapesAndAnswersAQueryForEverySeriesOfEveryFamily) {
  if (::access(kPrometheus, X_OK) != 0) {
    GTEST_SKIP() << kPrometheus << kSkipMessage;
  }
  const std::string exposition = ExpositionAfterTraffic();
  ASSERT_FALSE(HasFailure());
  const std::vector<MetricFamily> families = Families(exposition);
  ASSERT_FALSE(families.empty()) << exposition;
  for (const MetricFamily& family : families) {
    // A family without samples has no series to query.
    ASSERT_GT(SampleCount(exposition, family), 0) << family.name << " has no sample";
  }

  const std::string config = dir_.Write("prometheus.yml",
                                        "global:\n"
                                        "  scrape_interval: 1s\n"
                                        "  scrape_timeout: 1s\n"
                                        "  evaluation_interval: 1s\n"
                                        "scrape_configs:\n"
                                        "  - job_name: spillway\n"
                                        "    static_configs:\n"
                                        "      - targets: ['127.0.0.1:" +
                                            std::to_string(client().port()) + "']\n");
  const std::string log = (dir_.path() / "prometheus.log").string();
  const std::string no_input = dir_.Write("empty", "");

  // Another process may take the picked port before Prometheus binds it: then Prometheus
  // exits, and the next attempt picks another one.
  std::unique_ptr<ChildProcess> prometheus;
  std::optional<HttpClient> api;
  const auto give_up = After(30);
  for (int attempt = 0; attempt < 3 && !api.has_value() && Clock::now() < give_up; ++attempt) {
    const std::uint16_t port = PickFreePort();
    ASSERT_NE(port, 0) << "no free loopback port";
    const std::string data = (dir_.path() / ("tsdb" + std::to_string(attempt))).string();
    prometheus = std::make_unique<ChildProcess>(
        std::vector<std::string>{kPrometheus, "--config.file=" + config,
                                 "--storage.tsdb.path=" + data,
                                 "--web.listen-address=127.0.0.1:" + std::to_string(port)},
        no_input, log);
    ASSERT_TRUE(prometheus->started()) << prometheus->error();
    const HttpClient candidate(port);
    while (Clock::now() < give_up && !prometheus->WaitForExit(0).has_value()) {
      if (candidate.Get("/-/ready", 2).status == 200) {
        api.emplace(port);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  ASSERT_TRUE(api.has_value()) << "Prometheus not ready within 30 s: " << prometheus->command_line()
                               << "\n--- its log ---\n"
                               << ReadTextFile(log);

  // Runs the instant query `promql`; the number of series in its result (nullopt when the
  // query failed, with `*error` saying why).
  const auto query = [&](const std::string& promql,
                         std::string* error) -> std::optional<std::size_t> {
    const HttpResponse r = api->Get("/api/v1/query?query=" + UrlEncode(promql), 5);
    const std::optional<json::value> v = ParseJson(r.body);
    const json::value* result = v.has_value() ? server_test::At(*v, "/data/result") : nullptr;
    if (r.status != 200 || result == nullptr || !result->is_array() ||
        StringAt(*v, "/status") != "success") {
      *error = "status " + std::to_string(r.status) + " " + r.error + ": " + r.body;
      return std::nullopt;
    }
    return result->as_array().size();
  };
  const auto wait_for_series = [&](const std::string& promql, std::string* error) {
    for (;;) {
      const std::optional<std::size_t> n = query(promql, error);
      if (n.value_or(0) > 0) {
        return true;
      }
      if (n.has_value()) {
        *error = "empty result";
      }
      if (Clock::now() > give_up) {
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  };

  std::string error;
  ASSERT_TRUE(wait_for_series(R"(up{job="spillway"} == 1)", &error))
      << "the server's target is not up within 30 s (" << error
      << "); targets: " << api->Get("/api/v1/targets").body << "\n--- Prometheus log ---\n"
      << ReadTextFile(log);
  int queried = 0;
  for (const MetricFamily& family : families) {
    for (const std::string& series : SeriesNames(family)) {
      const std::string promql = R"({__name__=")" + series + R"(",job="spillway"})";
      EXPECT_TRUE(wait_for_series(promql, &error))
          << family.type << " family " << family.name << ": " << promql << ": " << error;
      ++queried;
    }
  }
  RecordProperty("series_queried", queried);
  if (HasFailure()) {
    std::cerr << "--- Prometheus log ---\n"
              << ReadTextFile(log) << "--- end of Prometheus log ---\n";
  }
}

}  // namespace
}  // namespace spillway
