// The standard process_* metrics (server/process_metrics.h): the procfs parsers on fixed text,
// and the families as the real `spillway serve` exports them on /metrics.

#include "server/process_metrics.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "common/http_client.h"
#include "common/server_fixture.h"

namespace spillway::server {
namespace {

using server_test::MetricCount;
using server_test::MetricSum;

// A /proc/<pid>/stat line of kernel 6.1 (52 fields), with a command name that holds a space
// and a ')' to show that fields are counted from the last ')'.
constexpr std::string_view kStat =
    "4242 (spill way) x) S 1 4242 4242 0 -1 4194560 2071 0 0 0 "
    "150 37 0 0 20 0 3 0 987654 1236152320 6789 18446744073709551615 1 1 0 0 0 0 0 4096 "
    "17664 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

TEST(ProcStatTest, ReadsTheFieldsAfterTheLastParenthesis) {
  const std::optional<ProcStat> s = ParseProcStat(kStat);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->utime_ticks, 150u);
  EXPECT_EQ(s->stime_ticks, 37u);
  EXPECT_EQ(s->starttime_ticks, 987654u);
  EXPECT_EQ(s->vsize_bytes, 1236152320u);
  EXPECT_EQ(s->rss_pages, 6789u);
}

TEST(ProcStatTest, RejectsWhatIsNotAStatLine) {
  EXPECT_FALSE(ParseProcStat("").has_value());
  EXPECT_FALSE(ParseProcStat("4242 spillway S 1 2 3").has_value());               // no ')'
  EXPECT_FALSE(ParseProcStat("4242 (spillway) S 1 4242 4242 0 -1").has_value());  // too short
  std::string bad_utime(kStat);
  bad_utime.replace(bad_utime.find(" 150 "), 5, " 1x0 ");
  EXPECT_FALSE(ParseProcStat(bad_utime).has_value());
  std::string negative_vsize(kStat);
  negative_vsize.replace(negative_vsize.find(" 1236152320 "), 12, " -1236152320 ");
  EXPECT_FALSE(ParseProcStat(negative_vsize).has_value());
}

TEST(ProcStatTest, NegativeRssCountsAsZero) {
  std::string text(kStat);
  text.replace(text.find(" 6789 "), 6, " -5 ");
  const std::optional<ProcStat> s = ParseProcStat(text);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->rss_pages, 0u);
}

TEST(ProcStatTest, BootTimeFromTheBtimeLine) {
  EXPECT_EQ(ParseBootTimeSeconds("cpu  1 2 3\nintr 5\nbtime 1700000000\nprocesses 9\n"),
            1700000000.0);
  EXPECT_EQ(ParseBootTimeSeconds("btime 12"), 12.0);  // no final newline
  EXPECT_FALSE(ParseBootTimeSeconds("cpu 1 2 3\n").has_value());
  EXPECT_FALSE(ParseBootTimeSeconds("btime soon\n").has_value());
  EXPECT_FALSE(ParseBootTimeSeconds("xbtime 12\n").has_value());
}

TEST(ProcStatTest, MaxOpenFilesIsTheSoftLimit) {
  const std::string limits =
      "Limit                     Soft Limit           Hard Limit           Units     \n"
      "Max cpu time              unlimited            unlimited            seconds   \n"
      "Max open files            1024                 1048576              files     \n";
  EXPECT_EQ(ParseMaxOpenFiles(limits), 1024.0);
  EXPECT_EQ(ParseMaxOpenFiles("Max open files unlimited unlimited files\n"),
            static_cast<double>(UINT64_MAX));
  EXPECT_FALSE(ParseMaxOpenFiles("Max processes 100 100 processes\n").has_value());
  EXPECT_FALSE(ParseMaxOpenFiles("Max open files            many\n").has_value());
  EXPECT_FALSE(ParseMaxOpenFiles("Max open files\n").has_value());
}

TEST(ProcStatTest, SampleInTheUnitsOfTheNames) {
  const ProcessSample s =
      MakeProcessSample(*ParseProcStat(kStat), 1700000000.0, 100.0, 4096.0, 12.0, 1024.0);
  EXPECT_DOUBLE_EQ(s.cpu_seconds, 1.87);  // (150 + 37) ticks at 100 per second
  EXPECT_EQ(s.virtual_memory_bytes, 1236152320.0);
  EXPECT_EQ(s.resident_memory_bytes, 6789.0 * 4096.0);
  EXPECT_DOUBLE_EQ(s.start_time_seconds, 1700000000.0 + 9876.54);
  EXPECT_EQ(s.open_fds, 12.0);
  EXPECT_EQ(s.max_fds, 1024.0);
}

TEST(ProcStatTest, ThisProcessReadsSaneValues) {
  std::string error;
  const std::optional<ProcessSample> s = ReadSelfProcessSample(&error);
  ASSERT_TRUE(s.has_value()) << error;
  EXPECT_GT(s->resident_memory_bytes, 0);
  EXPECT_GE(s->virtual_memory_bytes, s->resident_memory_bytes);
  EXPECT_GT(s->open_fds, 0);  // stdin, stdout, stderr at least
  EXPECT_GE(s->max_fds, s->open_fds);
  EXPECT_GE(s->cpu_seconds, 0);
  const double now_s =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_LE(s->start_time_seconds, now_s + 1);  // started before now (ticks are 10 ms)
}

// VmRSS of /proc/PID/status in bytes; 0 when it cannot be read.
double StatusRssBytes(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("VmRSS:")) {
      return std::stod(line.substr(6)) * 1024;  // "VmRSS:   12345 kB"
    }
  }
  return 0;
}

class ProcessMetricsExpositionTest : public server_test::ServerFixture {};

TEST_F(ProcessMetricsExpositionTest, ServeExportsTheStandardProcessFamilies) {
  const double now_s =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  ExpectNormalCompletionSucceeds();
  const std::string m = Metrics();
  ASSERT_FALSE(m.empty());
  for (const char* type_line :
       {"# TYPE process_cpu_seconds_total counter\n", "# TYPE process_virtual_memory_bytes gauge\n",
        "# TYPE process_resident_memory_bytes gauge\n", "# TYPE process_start_time_seconds gauge\n",
        "# TYPE process_open_fds gauge\n", "# TYPE process_max_fds gauge\n"}) {
    EXPECT_NE(m.find(type_line), std::string::npos) << type_line << "missing in:\n" << m;
  }
  for (const char* name : {"process_cpu_seconds_total", "process_virtual_memory_bytes",
                           "process_resident_memory_bytes", "process_start_time_seconds",
                           "process_open_fds", "process_max_fds"}) {
    EXPECT_EQ(MetricCount(m, name), 1) << name;
  }
  const double rss = MetricSum(m, "process_resident_memory_bytes");
  EXPECT_GT(rss, 1 << 20) << "a running server holds more than 1 MiB";
  EXPECT_GE(MetricSum(m, "process_virtual_memory_bytes"), rss);
  // The same process as /proc/PID/status sees it: within a factor of two (the two readings are
  // moments apart).
  const double status_rss = StatusRssBytes(server().pid());
  EXPECT_GT(rss, status_rss / 2);
  EXPECT_LT(rss, status_rss * 2);
  // Started by this test moments ago (the fixture waited at most 15 s for it to listen).
  EXPECT_NEAR(MetricSum(m, "process_start_time_seconds"), now_s, 30);
  const double open_fds = MetricSum(m, "process_open_fds");
  EXPECT_GT(open_fds, 3);  // the standard three, the listening socket, epoll, ...
  EXPECT_GE(MetricSum(m, "process_max_fds"), open_fds);
  EXPECT_GE(MetricSum(m, "process_cpu_seconds_total"), 0);
}

TEST_F(ProcessMetricsExpositionTest, CpuSecondsNeverGoDown) {
  double last = 0;
  for (int i = 0; i < 20; ++i) {
    ExpectNormalCompletionSucceeds();
    const double cpu = MetricSum(Metrics(), "process_cpu_seconds_total");
    EXPECT_GE(cpu, last);
    last = cpu;
  }
}

}  // namespace
}  // namespace spillway::server
